"""Shared cases for the maximum matching tests: random instances, scipy's size, the certificate check."""
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from jaxmatch import certify

CAPS = dict(row_capacity=64, col_capacity=64, edge_capacity=512)  # one compilation for all cases
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def scipy_size(rows, cols, nr, nc):
    a = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(nr, nc))
    a.sum_duplicates()
    return int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum())


def random_instance(rng):
    """Square or rectangular, sparse or dense, often with isolated vertices."""
    nr, nc = (int(x) for x in rng.integers(1, 64, 2))
    density = rng.choice([0.02, 0.05, 0.1, 0.3])
    m = min(int(density * nr * nc) + int(rng.integers(0, 4)), 512)
    # leave some vertices isolated by drawing from a sub-range
    r = rng.integers(0, max(1, int(nr * rng.uniform(0.6, 1.0))), m)
    c = rng.integers(0, max(1, int(nc * rng.uniform(0.6, 1.0))), m)
    return r, c, nr, nc


def check(g, res, expected):
    """Converged, the expected size, and a Koenig cover of that size."""
    assert int(res.status) == 0, res.status_name
    assert int(res.cardinality) == expected
    certify.check_maximum_matching(g, res.row_mate, res.col_mate)


def check_vmap_equals_single_runs(count, **options):
    """``count`` small random graphs through ``jax.vmap``: each answer equals the graph's own run
    at the batch's capacities, converges, and is certified maximum."""
    import jax

    import jaxmatch
    from jaxmatch import BipartiteGraph, maximum_matching

    rng = np.random.default_rng(3)
    graphs = []
    for _ in range(count):
        nr, nc = (int(x) for x in rng.integers(1, 30, 2))
        m = int(rng.integers(0, 90))
        graphs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc))
    batch = jaxmatch.stack(graphs)
    caps = dict(row_capacity=batch.row_cap, col_capacity=batch.col_cap, edge_capacity=batch.edge_cap)
    out = jax.vmap(lambda h: maximum_matching(h, **options))(batch)
    for i, g in enumerate(graphs):
        single = maximum_matching(g.with_capacity(**caps), **options)
        pad = [-1] * (batch.row_cap - int(g.n_rows))
        np.testing.assert_array_equal(out.row_mate[i], single.row_mate.tolist() + pad)
        assert int(out.cardinality[i]) == int(single.cardinality) and int(out.status[i]) == 0
        nr, nc = int(g.n_rows), int(g.n_cols)
        certify.check_maximum_matching(g, out.row_mate[i][:nr], out.col_mate[i][:nc])
