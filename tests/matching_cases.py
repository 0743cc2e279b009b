"""Shared cases for the maximum matching tests: random instances, scipy's size, the certificate check."""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from jaxmatch import certify

CAPS = dict(row_capacity=64, col_capacity=64, edge_capacity=512)  # one compilation for all cases


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
    out = jax.tree_util.tree_map(np.asarray, out)    # indexed on the host: no compilation per graph
    for i, g in enumerate(graphs):
        single = maximum_matching(g.with_capacity(**caps), **options)
        pad = [-1] * (batch.row_cap - int(g.n_rows))
        np.testing.assert_array_equal(out.row_mate[i], single.row_mate.tolist() + pad)
        assert int(out.cardinality[i]) == int(single.cardinality) and int(out.status[i]) == 0
        nr, nc = int(g.n_rows), int(g.n_cols)
        certify.check_maximum_matching(g, out.row_mate[i][:nr], out.col_mate[i][:nc])


def adversarial_families():
    """Hard or degenerate shapes as ``(name, rows, cols, n_rows, n_cols, expected size, init)``, all
    small enough for one padding (:data:`FAMILY_CAPS`) so a solver compiles once for all of them."""
    out = []
    n = 1500  # rows i ~ columns i, i-1: with row i on column i-1, one path spans the chain
    chain_r = np.concatenate([np.arange(n), np.arange(1, n)])
    chain_c = np.concatenate([np.arange(n), np.arange(n - 1)])
    out += [("long_chain", chain_r, chain_c, n, n, n, init) for init in (None, "cheap", "karp_sipser")]
    # a zig-zag with one row left over: a greedy start leaves a path as long as the chain
    zr = np.concatenate([np.arange(n), np.arange(1, n + 1)])
    zc = np.concatenate([np.arange(n), np.arange(n)])
    out.append(("zigzag_bad_start", zr, zc, n + 1, n, n, "cheap"))
    for nr, nc in [(40, 40), (25, 60), (60, 25)]:
        r, c = np.divmod(np.arange(nr * nc), nc)
        out.append((f"complete_{nr}x{nc}", r, c, nr, nc, min(nr, nc), "karp_sipser"))
    k = 500
    out.append(("star_one_row", np.zeros(k, int), np.arange(k), 1, k, 1, "karp_sipser"))
    out.append(("star_one_col", np.arange(k), np.zeros(k, int), k, 1, 1, "karp_sipser"))
    out.append(("disjoint_stars", np.repeat(np.arange(50), 10), np.arange(500), 50, 500, 50, "karp_sipser"))
    # disjoint paths of 1, 3, 5, ... edges: after a greedy start each has an augmenting path of its own length
    rows, cols, r0, c0 = [], [], 0, 0
    for length in range(1, 41):
        idx = np.arange(length)
        rows += [r0 + idx, r0 + idx[1:]]
        cols += [c0 + idx, c0 + idx[:-1]]
        r0, c0 = r0 + length, c0 + length
    hr, hc = np.concatenate(rows), np.concatenate(cols)
    out += [("hopcroft_karp_layers", hr, hc, r0, c0, r0, init) for init in (None, "cheap", "karp_sipser")]
    for nr, nc in [(0, 0), (5, 0), (0, 5), (7, 9)]:
        out.append((f"no_edges_{nr}x{nc}", np.zeros(0, int), np.zeros(0, int), nr, nc, 0, "karp_sipser"))
    return out


FAMILY_CAPS = dict(row_capacity=2048, col_capacity=2048, edge_capacity=4096)
