"""MS-BFS-Graft maximum matching (method="graft"): against scipy and networkx, Koenig certificates,
and phase by phase (forest invariants, vertex-disjoint augmenting paths, a matching that never shrinks)."""
import functools

import jax
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxmatch import BipartiteGraph, GraphInputError, certify, datasets, read
from jaxmatch.bipartite import graft as G
from jaxmatch.bipartite import _start, initial_matching, maximum_matching
from tests.matching_cases import (CAPS, FAMILY_CAPS, adversarial_families, check,
                                  check_vmap_equals_single_runs, random_instance, scipy_size)

COMBOS = [dict(graft=a, direction_optimizing=b) for a in (True, False) for b in (True, False)]
INITS = (None, "cheap", "karp_sipser")
IDS = [f"graft={c['graft']}-dir={c['direction_optimizing']}" for c in COMBOS]


def networkx_size(rows, cols, nr, nc):
    """Hopcroft-Karp by networkx, an independent second reference."""
    h = nx.Graph()
    h.add_nodes_from(range(nr))
    h.add_nodes_from(range(nr, nr + nc))
    h.add_edges_from(zip((int(r) for r in rows), (nr + int(c) for c in cols)))
    return len(nx.bipartite.hopcroft_karp_matching(h, top_nodes=range(nr))) // 2


@pytest.mark.parametrize("opts", COMBOS, ids=IDS)
def test_random_graphs_against_scipy(opts):
    """80 random graphs per option combination (320 in all), every init, one compilation each."""
    rng = np.random.default_rng(2024 + 2 * opts["graft"] + opts["direction_optimizing"])
    for i in range(80):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        res = maximum_matching(g, method="graft", init=INITS[i % 3], **opts)
        expected = scipy_size(r, c, nr, nc)
        check(g, res, expected)
        if i % 8 == 0:
            assert networkx_size(r, c, nr, nc) == expected
        assert res.row_mate.shape == (nr,) and res.col_mate.shape == (nc,)
        stats = {k: int(v) for k, v in res.stats.items()}
        assert stats["phases"] >= 1 and stats["augmentations"] == expected - _start_size(g, INITS[i % 3])
        assert stats["edges_traversed"] == stats["edges_top_down"] + stats["edges_bottom_up"] + stats["edges_graft"]
        if not opts["graft"]:
            assert stats["grafts"] == 0 and stats["edges_graft"] == 0
        if not opts["direction_optimizing"]:
            assert stats["bottom_up_levels"] == 0 and stats["edges_bottom_up"] == 0


def _start_size(g, init):
    if init is None:
        return 0
    return int(initial_matching(g, init).cardinality)


def test_direction_changes_the_work_not_the_forest():
    """Top-down and bottom-up pick the same parent (the smallest active frontier column), so the
    matchings are bit-identical with and without direction optimisation; only the counters move."""
    rng = np.random.default_rng(5)
    bottom_up_used = 0
    for i in range(40):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        for graft in (True, False):
            a = maximum_matching(g, method="graft", init=INITS[i % 3], graft=graft, direction_optimizing=True)
            b = maximum_matching(g, method="graft", init=INITS[i % 3], graft=graft, direction_optimizing=False)
            np.testing.assert_array_equal(a.row_mate, b.row_mate)
            np.testing.assert_array_equal(a.col_mate, b.col_mate)
            for key in ("phases", "bfs_levels", "augmentations", "grafts", "edges_graft"):
                assert int(a.stats[key]) == int(b.stats[key]), key
            bottom_up_used += int(a.stats["bottom_up_levels"])
    assert bottom_up_used > 0


@pytest.mark.parametrize("alpha", [0.25, 100.0])
def test_other_alphas(alpha):
    """Extreme alphas (almost always top-down and rebuilding / bottom-up and grafting) stay exact."""
    rng = np.random.default_rng(int(alpha * 4))
    for i in range(30):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        check(g, maximum_matching(g, method="graft", init=INITS[i % 3], alpha=alpha), scipy_size(r, c, nr, nc))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=200),
       st.sampled_from(COMBOS), st.sampled_from(INITS))
def test_property_matches_scipy(nr, nc, edges, opts, init):
    r = np.array([e[0] % nr for e in edges], dtype=np.int64)
    c = np.array([e[1] % nc for e in edges], dtype=np.int64)
    g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
    check(g, maximum_matching(g, method="graft", init=init, **opts), scipy_size(r, c, nr, nc))


# --------------------------------------------------------------------------
# phase by phase, through the module's step functions


@functools.lru_cache(maxsize=None)
def _steps(graft, direction_optimizing):
    return (jax.jit(G.initial_state),
            jax.jit(functools.partial(G.grow, direction_optimizing=direction_optimizing)),
            jax.jit(G.augment),
            jax.jit(functools.partial(G.regrow, graft=graft)))


def _np(s):
    return {k: np.asarray(v) for k, v in s._asdict().items()}


def check_forest(g, s):
    """Vertex-disjoint alternating trees, and the invariant that makes both directions agree:
    an unvisited row's neighbours in active trees are all frontier columns."""
    rc, cc = g.row_cap, g.col_cap
    rows, cols, nr, nc = g.edges()
    rm, cm, parent, root_r, root_c, leaf, front = (s[k] for k in (
        "row_mate", "col_mate", "parent", "root_r", "root_c", "leaf", "front"))
    edge_set = set(zip(rows.tolist(), cols.tolist()))
    for y in np.flatnonzero(root_r < cc):
        p = int(parent[y])
        assert (int(y), p) in edge_set and root_c[p] == root_r[y], "row's parent is a neighbour in its tree"
        if rm[y] >= 0:
            assert root_c[rm[y]] == root_r[y], "a visited row's mate is in its tree"
    for c in np.flatnonzero(root_c < cc):
        if cm[c] == -1:
            assert root_c[c] == c, "a free column in a tree is its root"
        else:
            assert root_r[cm[c]] == root_c[c], "a matched column entered its tree through its mate"
    free_cols = np.flatnonzero(cm[:nc] == -1)
    assert np.all(root_c[free_cols] == free_cols), "every free column roots a tree"
    active = (root_c < cc) & (leaf[np.minimum(root_c, cc - 1)] == rc)
    assert np.all(active[np.flatnonzero(front)]), "the frontier holds active columns only"
    bad = (root_r[rows] == cc) & active[cols] & ~front[cols]
    assert not np.any(bad), "an unvisited row is next to an expanded active column"
    for x in np.flatnonzero(leaf < rc):
        y = int(leaf[x])
        assert rm[y] == -1 and root_r[y] == x and cm[x] == -1, "a leaf is a free row of a free root's tree"


def augmenting_paths(g, s):
    """The paths the forest's leaves define: lists of (row, column) edges to flip, checked alternating."""
    rc, cc = g.row_cap, g.col_cap
    paths = []
    for x in np.flatnonzero(s["leaf"] < rc):
        y, path = int(s["leaf"][x]), []
        while True:
            c = int(s["parent"][y])
            assert c < cc and len(path) <= cc
            path.append((y, c))
            y = int(s["col_mate"][c])
            if y == -1:
                assert c == x, "the path ends at its tree's root"
                break
            assert s["row_mate"][y] == c
        paths.append(path)
    return paths


@pytest.mark.parametrize("opts", COMBOS, ids=IDS)
def test_phases_augment_vertex_disjoint_paths(opts):
    """Run the phases one step at a time: after every grow the forest is sound, its leaves give
    alternating paths that share no vertex, and augment flips exactly those paths (the matching
    grows by their number); the steps reproduce the solver's answer bit for bit."""
    init_state, grow, augment, regrow = _steps(opts["graft"], opts["direction_optimizing"])
    rng = np.random.default_rng(99)
    grafts = 0
    for trial in range(5):
        nr, nc = int(rng.integers(30, 64)), int(rng.integers(30, 64))
        m = int(rng.integers(nr, 3 * nr))
        r, c = rng.integers(0, nr, m), rng.integers(0, nc, m)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        init = INITS[trial % 3]
        row_mate, col_mate, _ = _start(g, init=init, init_rounds=64)
        s = init_state(g, row_mate, col_mate)
        sizes, phases = [], 0
        while True:
            s = grow(g, s)
            phases += 1
            before = _np(s)
            assert not before["front"].any()
            check_forest(g, before)
            paths = augmenting_paths(g, before)
            used_r = [y for p in paths for y, _ in p]
            used_c = [x for p in paths for _, x in p]
            assert len(set(used_r)) == len(used_r) and len(set(used_c)) == len(used_c), "paths share a vertex"
            s = augment(g, s)
            after = _np(s)
            expect_r, expect_c = before["row_mate"].copy(), before["col_mate"].copy()
            for p in paths:
                for y, x in p:
                    expect_r[y], expect_c[x] = x, y
            np.testing.assert_array_equal(after["row_mate"], expect_r)
            np.testing.assert_array_equal(after["col_mate"], expect_c)
            certify.check_matching(g, after["row_mate"][:nr], after["col_mate"][:nc])
            size = int((after["row_mate"] >= 0).sum())
            assert size == int((before["row_mate"] >= 0).sum()) + len(paths)
            assert not sizes or size >= sizes[-1]
            sizes.append(size)
            if not paths:
                break
            s = regrow(g, s)
            check_forest(g, _np(s))
        grafts += int(s.grafts)
        assert size == scipy_size(r, c, nr, nc)
        certify.check_maximum_matching(g, after["row_mate"][:nr], after["col_mate"][:nc])
        res = maximum_matching(g, method="graft", init=init, **opts)
        np.testing.assert_array_equal(res.row_mate, after["row_mate"][:nr])
        assert int(res.stats["phases"]) == phases
    if opts["graft"]:
        assert grafts > 0, "no phase grafted: the graft step went untested"


def test_matching_never_shrinks_between_phases():
    """Stopping after 1, 2, 3, ... phases (max_iters traced, so one compilation): valid matchings
    of non-decreasing size, status "hit max_iters" while the last phase still augmented, then
    converged. The public option gives the same at two values."""
    solve = jax.jit(lambda g, rm, cm, k: G.ms_bfs_graft(g, rm, cm, max_iters=k))
    rng = np.random.default_rng(17)
    for _ in range(3):
        r, c = rng.integers(0, 60, 150), rng.integers(0, 60, 150)
        g = BipartiteGraph.from_edges(r, c, 60, 60, **CAPS)
        expected, last, done = scipy_size(r, c, 60, 60), 0, False
        empty = np.full(64, -1, np.int32)
        for phases in range(1, 40):
            row_mate, col_mate, status, stats = solve(g, empty, empty, phases)
            certify.check_matching(g, row_mate[:60], col_mate[:60])
            size = int((row_mate >= 0).sum())
            assert size >= last
            if int(status) == 1:
                assert size > last and int(stats["phases"]) == phases
            else:
                assert size == expected
                certify.check_maximum_matching(g, row_mate[:60], col_mate[:60])
                done = True
                break
            last = size
        assert done and phases > 2
    for phases in (1,):
        res = maximum_matching(g, method="graft", init=None, max_iters=phases, throw=False)
        assert res.status_name == "hit max_iters" and int(res.stats["phases"]) == phases
        certify.check_matching(g, res.row_mate, res.col_mate)


# --------------------------------------------------------------------------
# hard shapes, real graphs, jit, vmap, degenerate and bad input


@pytest.mark.parametrize("opts", COMBOS, ids=IDS)
def test_adversarial_families(opts):
    """Long chains, a zig-zag with a bad start, complete graphs, stars, Hopcroft-Karp's layered
    paths, no edges: one padding, so one compilation per option combination."""
    for name, r, c, nr, nc, expected, init in adversarial_families():
        g = BipartiteGraph.from_edges(r, c, nr, nc, **FAMILY_CAPS)
        res = maximum_matching(g, method="graft", init=init, **opts)
        check(g, res, expected)
        assert res.row_mate.shape == (nr,), name
        assert int(res.stats["phases"]) <= min(nr, nc) + 1, name


@pytest.mark.parametrize("name, size", [
    ("corporate_leadership", 20),
    ("revolution", 5),
    ("unicodelang", 188),
    ("marvel", 5058),
])
def test_konect_published_sizes(name, size):
    g = read(datasets.path(name))
    if g.row_cap <= 256 and g.col_cap <= 1024:  # the three small ones share one padding
        g = g.with_capacity(row_capacity=256, col_capacity=1024, edge_capacity=2048)
    check(g, maximum_matching(g, method="graft", init=None), size)
    if name == "marvel":  # the ablation on the largest one: same size, grafting saves edges
        plain = maximum_matching(g, method="graft", init=None, graft=False)
        check(g, plain, size)
        grafted = maximum_matching(g, method="graft", init=None)
        assert int(grafted.stats["grafts"]) > 0
        assert int(grafted.stats["edges_traversed"]) < int(plain.stats["edges_traversed"])


def test_jit_and_stats():
    g = BipartiteGraph.from_edges([0, 1, 1, 2, 2], [0, 0, 1, 1, 2])
    out = jax.jit(lambda h: maximum_matching(h, method="graft", init=None))(g)
    assert int(out.cardinality) == 3 and int(out.status) == 0
    assert out.row_mate.shape == (g.row_cap,)  # padded under jit
    for key in ("phases", "bfs_levels", "edges_traversed", "augmentations", "grafts", "init_rounds",
                "bottom_up_levels", "edges_top_down", "edges_bottom_up", "edges_graft"):
        assert key in out.stats
    assert int(out.stats["augmentations"]) == 3 and int(out.stats["edges_traversed"]) >= 3
    certify.check_maximum_matching(g, out.row_mate[:3], out.col_mate[:3])
    eager = maximum_matching(g, method="graft", init=None)
    np.testing.assert_array_equal(out.row_mate[:3], eager.row_mate)


@pytest.mark.parametrize("levels", [None, 0.3])
def test_vmap_batch_equals_single_runs(levels):
    """Both branches of the direction and graft switches run under vmap (lax.cond becomes a select);
    so does ``method="auto"`` with a level budget (0.3 * sqrt(n): 1-2 levels) that hands some
    graphs of the batch to G-PR."""
    if levels is None:
        check_vmap_equals_single_runs(16, method="graft")
    else:
        check_vmap_equals_single_runs(16, method="auto", auto_levels=levels)


def test_degenerate_inputs():
    """No edges, one vertex, one row or one column: at their own tiny capacities once, then
    padded to the shared capacities for every init."""
    g = BipartiteGraph.from_edges([], [], 3, 2)
    res = maximum_matching(g, method="graft", init=None)
    assert int(res.cardinality) == 0 and int(res.status) == 0 and res.row_mate.shape == (3,)
    assert int(res.stats["phases"]) == 1 and int(res.stats["edges_traversed"]) == 0
    check(BipartiteGraph.from_edges([0], [0]), maximum_matching(BipartiteGraph.from_edges([0], [0]),
                                                                method="graft", init=None), 1)
    for n in (1, 7):
        for h in (BipartiteGraph.from_edges(np.zeros(n, int), np.arange(n), 1, n, **CAPS),
                  BipartiteGraph.from_edges(np.arange(n), np.zeros(n, int), n, 1, **CAPS)):
            for init in INITS:
                res = maximum_matching(h, method="graft", init=init)
                check(h, res, 1)
                assert res.row_mate.shape == (int(h.n_rows),)


def test_deterministic():
    rng = np.random.default_rng(11)
    r, c = rng.integers(0, 50, 300), rng.integers(0, 40, 300)
    g = BipartiteGraph.from_edges(r, c, 50, 40, **CAPS)
    a = maximum_matching(g, method="graft", init=None)
    b = maximum_matching(g, method="graft", init=None)
    np.testing.assert_array_equal(a.row_mate, b.row_mate)
    np.testing.assert_array_equal(a.col_mate, b.col_mate)
    assert {k: int(v) for k, v in a.stats.items()} == {k: int(v) for k, v in b.stats.items()}


@pytest.mark.parametrize("kw, match", [
    (dict(graft="yes"), "graft must be True or False"),
    (dict(graft=1), "graft must be True or False"),
    (dict(direction_optimizing=None), "direction_optimizing must be True or False"),
    (dict(alpha=0), "alpha must be a positive float"),
    (dict(alpha=-5.0), "alpha must be a positive float"),
    (dict(alpha=float("nan")), "alpha must be a positive float"),
    (dict(alpha=float("inf")), "alpha must be finite"),
    (dict(alpha="5"), "alpha must be a positive float"),
    (dict(max_iters=0), "max_iters must be a positive int"),
    (dict(init="greedy"), "init must be one of"),
])
def test_bad_options(kw, match):
    with pytest.raises(GraphInputError, match=match):
        maximum_matching(BipartiteGraph.from_edges([0], [0]), method="graft", **kw)
