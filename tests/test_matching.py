"""Maximum cardinality bipartite matching: against scipy, with Koenig certificates."""
import jax
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxmatch
from jaxmatch import BipartiteGraph, GraphInputError, certify
from jaxmatch.bipartite import initial_matching, maximum_matching
from tests.matching_cases import CAPS, check, check_vmap_equals_single_runs, random_instance, scipy_size


@pytest.mark.parametrize("block", range(6))
def test_random_graphs_against_scipy(block):
    """300 random graphs (6 blocks of 50), every init option, one compilation each."""
    rng = np.random.default_rng(block)
    for i in range(50):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        init = (None, "cheap", "karp_sipser")[i % 3]
        res = maximum_matching(g, init=init)
        check(g, res, scipy_size(r, c, nr, nc))
        assert res.row_mate.shape == (nr,) and res.col_mate.shape == (nc,)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=200),
       st.sampled_from([None, "cheap", "karp_sipser"]))
def test_property_matches_scipy(nr, nc, edges, init):
    r = np.array([e[0] % nr for e in edges], dtype=np.int64)
    c = np.array([e[1] % nc for e in edges], dtype=np.int64)
    g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
    check(g, maximum_matching(g, init=init), scipy_size(r, c, nr, nc))


@pytest.mark.parametrize("method", ["cheap", "karp_sipser"])
def test_initial_matching_is_maximal(method):
    rng = np.random.default_rng(7)
    for _ in range(20):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        res = initial_matching(g, method)
        certify.check_matching(g, res.row_mate, res.col_mate)
        assert int(res.status) == 0
        rm, cm = np.asarray(res.row_mate), np.asarray(res.col_mate)
        rr, cc, _, _ = g.edges()
        assert not np.any((rm[rr] < 0) & (cm[cc] < 0)), "an edge has both ends free: not maximal"


def test_karp_sipser_takes_degree_one_edges():
    # column 0 has the single neighbour row 1; greedy by id would give row 0 to column 0
    g = BipartiteGraph.from_edges([1, 0, 1], [0, 1, 1])
    res = initial_matching(g, "karp_sipser")
    assert int(res.row_mate[1]) == 0 and int(res.cardinality) == 2


def test_jit_and_stats():
    g = BipartiteGraph.from_edges([0, 1, 1, 2, 2], [0, 0, 1, 1, 2])
    out = jax.jit(lambda h: maximum_matching(h, init=None))(g)
    assert int(out.cardinality) == 3
    assert out.row_mate.shape == (g.row_cap,)  # padded under jit
    for key in ("iterations", "global_relabels", "pushes", "bfs_levels", "init_rounds"):
        assert key in out.stats
    assert int(out.stats["global_relabels"]) >= 1 and int(out.stats["pushes"]) >= 3


def test_vmap_batch_of_64_equals_single_runs():
    check_vmap_equals_single_runs(64)


def test_max_iters_reports_status_and_stays_valid():
    n = 30  # complete bipartite from an empty matching: every column wants row 0 first
    r, c = np.divmod(np.arange(n * n), n)
    g = BipartiteGraph.from_edges(r, c)
    with pytest.raises(jaxmatch.SolverError, match="maximum_matching: stopped at max_iters") as err:
        maximum_matching(g, init=None, max_iters=2)
    res = maximum_matching(g, init=None, max_iters=2, throw=False)
    assert int(res.status) == 1 and res.status_name == "hit max_iters"
    assert np.array_equal(np.asarray(err.value.result.row_mate), np.asarray(res.row_mate))
    certify.check_matching(g, res.row_mate, res.col_mate)


def test_deterministic():
    rng = np.random.default_rng(11)
    r, c = rng.integers(0, 50, 300), rng.integers(0, 40, 300)
    g = BipartiteGraph.from_edges(r, c, 50, 40, **CAPS)
    a, b = maximum_matching(g), maximum_matching(g)
    np.testing.assert_array_equal(a.row_mate, b.row_mate)
    np.testing.assert_array_equal(a.col_mate, b.col_mate)


def test_lanes_smaller_than_the_active_edges():
    rng = np.random.default_rng(5)
    r, c = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    g = BipartiteGraph.from_edges(r, c, 60, 60, **CAPS)
    res = maximum_matching(g, init=None, lanes=8)  # many chunks per push step
    check(g, res, scipy_size(r, c, 60, 60))
    # the default off the GPU (the edge capacity / 128, within [2^10, 2^18]; here all 512 edge slots in
    # one window) runs the same steps as the 8 lanes above
    from jaxmatch.bipartite.push_relabel import cpu_lanes
    assert [cpu_lanes(x) for x in (1, 1 << 17, 1 << 19, 1 << 30)] == [1 << 10, 1 << 10, 1 << 12, 1 << 18]
    default = maximum_matching(g, init=None)
    assert default.row_mate.tolist() == res.row_mate.tolist()
    assert {k: int(v) for k, v in default.stats.items()} == {k: int(v) for k, v in res.stats.items()}


def test_auto_runs_graft_then_push_relabel_past_its_level_budget():
    import jaxmatch.bipartite as bip
    side = 24  # a grid (mesh): from the empty matching graft needs dozens of BFS levels
    ids = np.arange(side * side).reshape(side, side)
    u = np.r_[ids[:, :-1].ravel(), ids[:-1, :].ravel()]   # the symmetric 4-neighbour grid
    v = np.r_[ids[:, 1:].ravel(), ids[1:, :].ravel()]
    u, v = np.r_[u, v], np.r_[v, u]
    grid = BipartiteGraph.from_edges(u, v, side * side, side * side)
    rng = np.random.default_rng(3)
    r, c = rng.integers(0, 30, 400), rng.integers(0, 30, 400)
    dense = BipartiteGraph.from_edges(r, c, 30, 30, **grid.capacities())   # one capacity: one compile per option set
    size = scipy_size(u, v, side * side, side * side)
    for budget, switched in ((bip.AUTO_LEVELS, False), (0.05, True)):  # sqrt(576) * 0.05: 2 levels
        solve = jax.jit(lambda g: maximum_matching(g, method="auto", init=None, auto_levels=budget))
        for g, n in ((grid, size), (dense, scipy_size(r, c, 30, 30))):
            res = maximum_matching(g, method="auto", init=None, auto_levels=budget)
            check(g, res, n)
            graft = maximum_matching(g, method="graft", init=None)
            if not switched or g is grid:   # default budget: graft alone; 2 levels: G-PR finishes the grid
                assert (int(res.stats["pr_iterations"]) > 0) == switched
            if int(res.stats["pr_iterations"]) == 0:  # graft alone: its answer, bit for bit
                assert np.array_equal(res.row_mate, graft.row_mate)
            jitted = solve(g)      # traced once per budget: both graphs have one capacity
            assert int(jitted.cardinality) == n and int(jitted.status) == 0
            assert int(jitted.stats["pr_iterations"]) == int(res.stats["pr_iterations"])


@pytest.mark.parametrize("kw, match", [
    (dict(method="hk"), "method must be one of"),
    (dict(init="random"), "init must be one of"),
    (dict(max_iters=0), "max_iters must be a positive int"),
    (dict(max_iters=True), "max_iters must be a positive int"),
    (dict(max_iters=2.5), "max_iters must be a positive int"),
    (dict(k=-1.0), "k must be a positive float"),
    (dict(lanes=0), "lanes must be a positive int"),
])
def test_bad_options(kw, match):
    g = BipartiteGraph.from_edges([0], [0])
    with pytest.raises(GraphInputError, match=match):
        maximum_matching(g, **kw)


def test_bad_graph_type():
    with pytest.raises(GraphInputError, match="expected a jaxmatch.BipartiteGraph"):
        maximum_matching(sp.eye(3, format="csr"))
    with pytest.raises(GraphInputError, match="expected a jaxmatch.BipartiteGraph"):
        initial_matching(jaxmatch.Graph.from_edges([0], [1]))
    with pytest.raises(GraphInputError, match="method must be one of"):
        initial_matching(BipartiteGraph.from_edges([0], [0]), "greedy")


def test_cli_match_and_info(tmp_path, capsys):
    from jaxmatch.cli import main
    path = tmp_path / "g.mtx"
    import scipy.io
    scipy.io.mmwrite(str(path), sp.coo_array((np.ones(4), ([0, 1, 1, 2], [0, 0, 1, 1])), shape=(3, 2)))
    out = tmp_path / "mates.txt"
    assert main(["match", str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cardinality 2 of 3 x 2 (converged)" in text
    mates = np.loadtxt(out, dtype=int)
    assert mates.shape == (3,) and (mates >= 0).sum() == 2
    assert main(["info", str(path)]) == 0
    assert "bipartite graph: 3 rows x 2 columns, 4 edges" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "missing.mtx")]) == 2


def test_flow_method_matches_scipy():
    """method="flow": unit-capacity WBPR max flow gives a maximum matching too."""
    rng = np.random.default_rng(21)
    for _ in range(25):
        r, c, nr, nc = random_instance(rng)
        g = BipartiteGraph.from_edges(r, c, nr, nc, **CAPS)
        res = maximum_matching(g, method="flow")
        check(g, res, scipy_size(r, c, nr, nc))
        assert res.row_mate.shape == (nr,)
