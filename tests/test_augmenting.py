"""APFB / APsB maximum matching (method="apfb"/"apsb", bfs="gpubfs"/"gpubfs_wr"): against scipy,
a sequential augmenting-path reference, and Koenig certificates."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxmatch import BipartiteGraph, GraphInputError, certify, datasets, read
from jaxmatch.bipartite import maximum_matching
from tests.matching_cases import CAPS, check, check_vmap_equals_single_runs, random_instance, scipy_size

COMBOS = [(m, b) for m in ("apfb", "apsb") for b in ("gpubfs", "gpubfs_wr")]




def sequential_size(rows, cols, nr, nc):
    """Plain DFS augmenting paths (Kuhn), one free column at a time."""
    adj = [[] for _ in range(nc)]
    for r, c in zip(rows, cols):
        adj[int(c)].append(int(r))
    row_mate = [-1] * nr

    def dfs(c, seen):
        for r in adj[c]:
            if not seen[r]:
                seen[r] = True
                if row_mate[r] == -1 or dfs(row_mate[r], seen):
                    row_mate[r] = c
                    return True
        return False

    return sum(dfs(c, [False] * nr) for c in range(nc))






@pytest.mark.parametrize("method, bfs", COMBOS)
def test_random_graphs_against_scipy(method, bfs):
    """80 random graphs per combination (320 in all), every init option, one compilation each."""
    rng = np.random.default_rng(hash((method, bfs)) % 2**32)
    for i in range(80):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        res = maximum_matching(g, method=method, bfs=bfs, init=(None, "cheap", "karp_sipser")[i % 3])
        expected = scipy_size(r, c, nr, nc)
        check(g, res, expected)
        if i % 10 == 0:
            assert sequential_size(r, c, nr, nc) == expected
        assert res.row_mate.shape == (nr,) and res.col_mate.shape == (nc,)
        assert int(res.stats["phases"]) >= 1


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=200),
       st.sampled_from(COMBOS), st.sampled_from([None, "karp_sipser"]))
def test_property_matches_scipy(nr, nc, edges, combo, init):
    r = np.array([e[0] % nr for e in edges], dtype=np.int64)
    c = np.array([e[1] % nc for e in edges], dtype=np.int64)
    g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
    check(g, maximum_matching(g, method=combo[0], bfs=combo[1], init=init), scipy_size(r, c, nr, nc))


@pytest.mark.parametrize("method, bfs", COMBOS)
def test_matching_never_shrinks_between_phases(method, bfs):
    """Stopping after 1, 2, 3, ... phases: valid matchings of non-decreasing size, then converged."""
    rng = np.random.default_rng(17)
    for _ in range(3):
        r, c = rng.integers(0, 60, 240), rng.integers(0, 60, 240)
        g = BipartiteGraph.from_edges(r, c, 60, 60, **CAPS)
        expected, last, done = scipy_size(r, c, 60, 60), 0, False
        for phases in range(1, 40):
            res = maximum_matching(g, method=method, bfs=bfs, init=None, max_iters=phases, throw=False)
            certify.check_matching(g, res.row_mate, res.col_mate)
            size = int(res.cardinality)
            assert size >= last
            if int(res.status) == 1:  # a phase that found paths augments at least once
                assert size > last and int(res.stats["phases"]) == phases
            else:
                check(g, res, expected)
                done = True
                break
            last = size
        assert done


@pytest.mark.parametrize("method, bfs", COMBOS)
def test_long_chain(method, bfs):
    """Rows i ~ columns i and i-1: with row i on column i-1 the only augmenting path spans the chain."""
    n = 1500
    rows = np.concatenate([np.arange(n), np.arange(1, n)])
    cols = np.concatenate([np.arange(n), np.arange(n - 1)])
    g = BipartiteGraph.from_edges(rows, cols)
    res = maximum_matching(g, method=method, bfs=bfs, init="cheap")
    check(g, res, n)


@pytest.mark.parametrize("method, bfs", COMBOS)
@pytest.mark.parametrize("name, size", [
    ("corporate_leadership", 20),
    ("revolution", 5),
    ("unicodelang", 188),
])
def test_konect_published_sizes(name, size, method, bfs):
    g = read(datasets.path(name))
    check(g, maximum_matching(g, method=method, bfs=bfs, init=None), size)


def test_jit_and_stats():
    g = BipartiteGraph.from_edges([0, 1, 1, 2, 2], [0, 0, 1, 1, 2])
    for method, bfs in COMBOS:
        out = jax.jit(lambda h: maximum_matching(h, method=method, bfs=bfs, init=None))(g)
        assert int(out.cardinality) == 3 and int(out.status) == 0
        assert out.row_mate.shape == (g.row_cap,)  # padded under jit
        for key in ("phases", "bfs_levels", "edges_traversed", "augmentations", "init_rounds"):
            assert key in out.stats
        assert int(out.stats["augmentations"]) == 3 and int(out.stats["edges_traversed"]) >= 3


@pytest.mark.parametrize("method, bfs", [("apfb", "gpubfs_wr"), ("apsb", "gpubfs")])
def test_vmap_batch_equals_single_runs(method, bfs):
    check_vmap_equals_single_runs(16, method=method, bfs=bfs)


def test_degenerate_inputs():
    """No edges, one row or one column: at CAPS, one compilation per method (the other tests' own)."""
    for method, bfs in COMBOS:
        g = BipartiteGraph.from_edges([], [], 3, 2, **CAPS)
        res = maximum_matching(g, method=method, bfs=bfs)
        assert int(res.cardinality) == 0 and int(res.status) == 0 and res.row_mate.shape == (3,)
        for n in (1, 7):
            for h in (BipartiteGraph.from_edges(np.zeros(n, int), np.arange(n), 1, n, **CAPS),
                      BipartiteGraph.from_edges(np.arange(n), np.zeros(n, int), n, 1, **CAPS)):
                check(h, maximum_matching(h, method=method, bfs=bfs), 1)


def test_deterministic():
    rng = np.random.default_rng(11)
    r, c = rng.integers(0, 50, 300), rng.integers(0, 40, 300)
    g = BipartiteGraph.from_edges(r, c, 50, 40, **CAPS)
    for method, bfs in COMBOS:
        a = maximum_matching(g, method=method, bfs=bfs, init=None)
        b = maximum_matching(g, method=method, bfs=bfs, init=None)
        np.testing.assert_array_equal(a.row_mate, b.row_mate)
        np.testing.assert_array_equal(a.col_mate, b.col_mate)


@pytest.mark.parametrize("kw, match", [
    (dict(method="apfb", bfs="topdown"), "bfs must be one of"),
    (dict(method="apsb", bfs=None), "bfs must be one of"),
    (dict(method="apfb", max_iters=0), "max_iters must be a positive int"),
    (dict(method="apsb", max_iters=1.5), "max_iters must be a positive int"),
])
def test_bad_options(kw, match):
    with pytest.raises(GraphInputError, match=match):
        maximum_matching(BipartiteGraph.from_edges([0], [0]), **kw)


def test_a_new_max_iters_does_not_recompile():
    """The loop bound is a traced argument: stepping through phases (max_iters = 1, 2, 3, ...) runs one
    compiled solver per method, and every bound still stops where it says."""
    from jaxmatch.bipartite import _solve
    rng = np.random.default_rng(3)
    r, c = rng.integers(0, 40, 160), rng.integers(0, 40, 160)
    g = BipartiteGraph.from_edges(r, c, 40, 40, **CAPS)
    for method in ("apfb", "graft", "pr"):
        maximum_matching(g, method=method, init=None, max_iters=1, throw=False)
        before = _solve._cache_size()
        for bound in (2, 3, 5):
            res = maximum_matching(g, method=method, init=None, max_iters=bound, throw=False)
            assert int(res.stats["iterations"]) <= bound
        assert _solve._cache_size() == before, method
