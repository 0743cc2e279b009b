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
