"""Adversarial families for maximum matching, and the real KONECT graphs. The families up to 2,048 rows
and columns are padded to one capacity (FAMILY_CAPS), so the solver compiles once per start for them."""
import numpy as np
import pytest

from jaxmatch import BipartiteGraph, certify, datasets, read
from jaxmatch.bipartite import maximum_matching
from tests.matching_cases import FAMILY_CAPS


def solve(g, expected, **kw):
    res = maximum_matching(g, **kw)
    assert res.status_name == "converged"
    assert int(res.cardinality) == expected
    certify.check_maximum_matching(g, res.row_mate, res.col_mate)
    return res


@pytest.mark.parametrize("init", [None, "cheap", "karp_sipser"])
def test_long_chain(init):
    """Rows i ~ columns i and i-1: with row i on column i-1 the only augmenting path spans the chain."""
    n = 3000
    rows = np.concatenate([np.arange(n), np.arange(1, n)])
    cols = np.concatenate([np.arange(n), np.arange(n - 1)])
    res = solve(BipartiteGraph.from_edges(rows, cols), n, init=init)
    assert int(res.stats["iterations"]) < 16 * 8192


def test_chain_with_a_bad_start_has_one_long_augmenting_path():
    """Rows 0..n, columns 0..n-1, row i ~ columns i-1 and i: a zig-zag path with one row left
    over, so a greedy start can leave augmenting paths as long as the chain."""
    n = 2000
    rows = np.concatenate([np.arange(n), np.arange(1, n + 1)])
    cols = np.concatenate([np.arange(n), np.arange(n)])
    solve(BipartiteGraph.from_edges(rows, cols, n + 1, n, **FAMILY_CAPS), n, init="cheap")


@pytest.mark.parametrize("nr, nc", [(40, 40), (25, 60), (60, 25)])
def test_complete_bipartite(nr, nc):
    r, c = np.divmod(np.arange(nr * nc), nc)
    solve(BipartiteGraph.from_edges(r, c, nr, nc, **FAMILY_CAPS), min(nr, nc))


def test_stars():
    n = 500
    solve(BipartiteGraph.from_edges(np.zeros(n, int), np.arange(n), **FAMILY_CAPS), 1)      # one row, all columns
    solve(BipartiteGraph.from_edges(np.arange(n), np.zeros(n, int), **FAMILY_CAPS), 1)      # one column, all rows
    # many stars sharing nothing: each gives one edge
    k = 50
    solve(BipartiteGraph.from_edges(np.repeat(np.arange(k), 10), np.arange(10 * k), **FAMILY_CAPS), k)


def test_hopcroft_karp_slow_layered_family():
    """Disjoint paths of lengths 1, 3, 5, ...: after a greedy start each has one augmenting path,
    of a different length, so shortest-path phases need one phase per path (sqrt(n) phases)."""
    rows, cols, r0, c0 = [], [], 0, 0
    k = 40
    for length in range(1, k + 1):
        # path r0 - c0 - r1 - c1 - ... with `length` rows and `length` columns
        idx = np.arange(length)
        rows += [r0 + idx, r0 + idx[1:]]
        cols += [c0 + idx, c0 + idx[:-1]]
        r0 += length
        c0 += length
    g = BipartiteGraph.from_edges(np.concatenate(rows), np.concatenate(cols), r0, c0, **FAMILY_CAPS)
    for init in (None, "cheap", "karp_sipser"):
        solve(g, r0, init=init)


@pytest.mark.parametrize("nr, nc", [(0, 0), (5, 0), (0, 5), (7, 9)])
def test_no_edges(nr, nc):
    res = solve(BipartiteGraph.from_edges([], [], nr, nc, **FAMILY_CAPS), 0)
    assert res.row_mate.shape == (nr,) and np.all(np.asarray(res.row_mate) == -1)


@pytest.mark.parametrize("n", [1, 2, 37])
def test_one_by_n_and_n_by_one(n):
    solve(BipartiteGraph.from_edges(np.zeros(n, int), np.arange(n), 1, n, **FAMILY_CAPS), 1)
    solve(BipartiteGraph.from_edges(np.arange(n), np.zeros(n, int), n, 1, **FAMILY_CAPS), 1)


@pytest.mark.parametrize("name, size", [
    ("corporate_leadership", 20),
    ("revolution", 5),
    ("unicodelang", 188),
    ("marvel", 5058),
])
@pytest.mark.parametrize("init", [None, "karp_sipser"])
def test_konect_published_sizes(name, size, init):
    g = read(datasets.path(name))
    if g.row_cap <= 2048 and g.col_cap <= 2048 and g.edge_cap <= 4096:     # all but marvel: one compilation
        g = g.with_capacity(**FAMILY_CAPS)
    solve(g, size, init=init)
