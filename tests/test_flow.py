"""Maximum flow and minimum cut (WBPR push-relabel): against scipy, with flow and cut certificates."""
from functools import partial

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import jaxmatch
from experiments import generators as gen
from jaxmatch import BipartiteGraph, FlowNetwork, GraphInputError, certify
from jaxmatch.flow import matching_from_flow, matching_network, max_flow, min_cut

# one padded size for every network below (the DIMACS m30.max has 902 vertices and 2670 arcs), so that
# the solver compiles once per option set
CAPS = dict(vertex_capacity=1024, arc_capacity=4096)
K = 4  # terminal arrays are padded (by repetition) to this length: one compilation


def terminals(ids):
    return np.resize(np.asarray(ids, np.int64), K)


def scipy_value(tail, head, cap, n, sources, sinks):
    """scipy's Dinic on a copy with self-loops dropped and a super source / sink (capacity = total)."""
    sources, sinks = np.unique(np.atleast_1d(sources)), np.unique(np.atleast_1d(sinks))
    keep = tail != head
    t, h, c = tail[keep], head[keep], cap[keep].astype(np.int64)
    big = int(c.sum()) + 1
    S, T = n, n + 1
    t = np.concatenate([t, np.full(sources.size, S), sinks])
    h = np.concatenate([h, sources, np.full(sinks.size, T)])
    c = np.concatenate([c, np.full(sources.size + sinks.size, big)])
    A = sp.csr_array((c.astype(np.int32), (t, h)), shape=(n + 2, n + 2))
    A.sum_duplicates()
    return int(maximum_flow(A, S, T).flow_value)


def check(net, sources, sinks, res, expected):
    """Converged, the expected value, a feasible flow and a cut of the same capacity."""
    assert int(res.status) == 0, res.status_name
    assert int(res.flow_value) == expected
    certify.check_flow(net, sources, sinks, res.flow, res.flow_value)
    certify.check_min_cut(net, sources, sinks, np.asarray(res.source_side), res.flow_value)
    assert res.flow.shape == (int(net.n_arcs),) and res.source_side.shape == (int(net.n),)


def random_network(rng, kind):
    n = int(rng.integers(2, 60))
    if kind == "dense":
        m = int(min(250, n * n * rng.uniform(0.2, 0.6)))
    else:
        m = int(rng.integers(0, min(250, 4 * n) + 1))
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    if kind == "antiparallel":  # every other arc also reversed
        extra = min(m // 2, 256 - m)
        tail, head = np.concatenate([tail, head[:extra]]), np.concatenate([head, tail[:extra]])
    cap = rng.integers(0, rng.choice([2, 10, 1000]), tail.size)
    k_s, k_t = (int(x) for x in rng.integers(1, 4, 2)) if kind == "terminals" else (1, 1)
    ends = rng.permutation(n)
    k_s, k_t = min(k_s, n - 1), min(k_t, max(1, n - k_s))
    return tail, head, cap, n, ends[:k_s], ends[k_s:k_s + k_t]


KINDS = ("sparse", "dense", "antiparallel", "terminals")


@pytest.mark.parametrize("block", range(6))
def test_random_networks_against_scipy(block):
    """300 random networks (6 blocks of 50), both layouts, the BCSR binary search too."""
    rng = np.random.default_rng(block)
    for i in range(50):
        tail, head, cap, n, s, t = random_network(rng, KINDS[i % 4])
        layout = ("bcsr", "rcsr")[i % 2]
        net = FlowNetwork.from_edges(tail, head, cap, n, layout=layout, **CAPS)
        reverse = "search" if layout == "bcsr" and i % 4 == 0 else "index"
        res = max_flow(net, terminals(s), terminals(t), reverse=reverse)
        check(net, s, t, res, scipy_value(tail, head, cap, n, s, t))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30),
       st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29), st.integers(0, 50)), max_size=120),
       st.integers(0, 2**16), st.sampled_from(["bcsr", "rcsr"]))
def test_property_value_and_certificates(n, arcs, seed, layout):
    tail = np.array([a[0] % n for a in arcs], np.int64)
    head = np.array([a[1] % n for a in arcs], np.int64)
    cap = np.array([a[2] for a in arcs], np.int64)
    ends = np.random.default_rng(seed).permutation(n)
    k = 1 + seed % min(3, n - 1)
    s, t = ends[:k], ends[k:k + 1 + seed % 2]
    net = FlowNetwork.from_edges(tail, head, cap, n, layout=layout, **CAPS)
    check(net, s, t, max_flow(net, terminals(s), terminals(t)), scipy_value(tail, head, cap, n, s, t))


def test_layouts_and_reverse_lookups_agree():
    rng = np.random.default_rng(11)
    for _ in range(10):
        tail, head, cap, n, s, t = random_network(rng, "antiparallel")
        net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
        values = {int(max_flow(net, terminals(s), terminals(t), layout=lay, reverse=rev).flow_value)
                  for lay, rev in (("bcsr", "index"), ("rcsr", "index"), ("bcsr", "search"))}
        assert values == {scipy_value(tail, head, cap, n, s, t)}


def test_bcsr_binary_search_finds_the_stored_reverse():
    from jaxmatch.flow.residual import reverse_position
    rng = np.random.default_rng(3)
    tail, head = rng.integers(0, 20, 200), rng.integers(0, 20, 200)  # many parallel / antiparallel arcs
    net = FlowNetwork.from_edges(tail, head, rng.integers(0, 5, 200), 20, layout="bcsr", vertex_capacity=32,
                                 arc_capacity=256)
    pos = jnp.arange(512, dtype=jnp.int32)
    found = jax.jit(reverse_position, static_argnums=2)(net, pos, True)
    np.testing.assert_array_equal(found[:400], net.res_rev[:400])
    assert np.all(np.asarray(found[400:]) >= 400)  # padding finds padding


# the bundled DIMACS files example.max, test_DIMACS.txt, network.dimacs, m10.max and m30.max
@pytest.mark.parametrize("name, value", [("dimacs_example", 6), ("dimacs_test", 25), ("genrmf_small", 228),
                                         ("mesh10", 9860177), ("mesh30", 28258807)])
def test_dimacs_files(name, value):
    net, s, t = jaxmatch.read(jaxmatch.datasets.path(name))
    tail, head, cap, n = net.edges()
    assert scipy_value(tail, head, cap, n, s, t) == value
    for layout in ("bcsr", "rcsr"):
        padded = FlowNetwork.from_edges(tail, head, cap, n, layout=layout, **CAPS)
        check(padded, s, t, max_flow(padded, terminals(s), terminals(t)), value)


@pytest.mark.parametrize("family, args", [("rlg", (8, 12)), ("rlg", (20, 6)), ("rlg", (3, 30)),
                                          ("genrmf", (4, 6)), ("genrmf", (6, 4)), ("genrmf", (3, 10))])
def test_generated_dimacs_families(family, args):
    make = gen.washington_rlg if family == "rlg" else gen.genrmf
    for seed in range(2):
        tail, head, cap, s, t, n = make(*args, seed=seed)
        net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
        check(net, s, t, max_flow(net, terminals(s), terminals(t)), scipy_value(tail, head, cap, n, s, t))


def test_matching_as_unit_flow():
    rng = np.random.default_rng(5)
    for _ in range(20):
        nr, nc = (int(x) for x in rng.integers(1, 40, 2))
        m = int(rng.integers(0, 200))
        g = BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc,
                                      row_capacity=64, col_capacity=64, edge_capacity=256)
        net, s, t = matching_network(g)
        res = max_flow(net, s, t)
        rows, cols, _, _ = g.edges()
        a = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(nr, nc))
        expected = int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum())
        check(net, s, t, res, expected)
        rm, cm = matching_from_flow(g, res.flow)
        assert rm.shape == (nr,) and cm.shape == (nc,)
        certify.check_maximum_matching(g, rm, cm)


@pytest.mark.parametrize("layout", ["bcsr", "rcsr"])
def test_matching_network_equals_host_construction(layout):
    """The device build (traced: under jit) and the eager build of small graphs (on the host) give the
    same network, both equal to FlowNetwork.from_edges of its arcs."""
    g = BipartiteGraph.from_edges([0, 0, 1, 2, 2], [1, 2, 0, 0, 2], 4, 3, row_capacity=8, col_capacity=4,
                                  edge_capacity=8)
    device = jax.jit(matching_network, static_argnames="layout")(g, layout=layout)
    eager = matching_network(g, layout=layout)
    for net, s, t in (device, eager):
        host = FlowNetwork.from_edges(*net.edges(), layout=layout, **net.capacities())
        assert (int(s), int(t), int(net.n), int(net.n_arcs)) == (7, 8, 9, 12)
        assert net.capacities() == eager[0].capacities() and net.cap.dtype == eager[0].cap.dtype
        m = 2 * int(net.n_arcs)
        for a, b in ((net.res.indptr, host.res.indptr), (net.res.indices[:m], host.res.indices[:m]),
                     (net.res.src[:m], host.res.src[:m]), (net.res_arc[:m], host.res_arc[:m]),
                     (net.res_forward, host.res_forward), (net.res_rev[:m], host.res_rev[:m]),
                     (net.tail[:12], eager[0].tail[:12]), (net.head[:12], eager[0].head[:12]),
                     (net.cap[:12], eager[0].cap[:12])):
            np.testing.assert_array_equal(a, b)


def solve_small(tail, head, cap, n, s, t, expected):
    net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
    res = max_flow(net, terminals(s), terminals(t))
    check(net, s, t, res, expected)
    assert scipy_value(np.asarray(tail), np.asarray(head), np.asarray(cap), n, s, t) == expected
    return res


def test_several_sources_and_sinks():
    # 0 -> 2 -> 4 and 1 -> 3 -> 5; sources {0, 1}, sinks {4, 5}; arcs between terminals too
    res = solve_small([0, 2, 1, 3, 0, 4, 2], [2, 4, 3, 5, 1, 5, 3], [5, 3, 4, 7, 9, 9, 1], 6, [0, 1], [4, 5],
                      3 + 4 + 1)
    assert int(res.flow[4]) == 0 and int(res.flow[5]) == 0  # source -> source, sink -> sink arcs stay empty
    # eagerly any length of terminal array works, and repeated ids are one terminal
    net = FlowNetwork.from_edges([0, 2, 1, 3, 0, 4, 2], [2, 4, 3, 5, 1, 5, 3], [5, 3, 4, 7, 9, 9, 1], **CAPS)
    assert int(max_flow(net, [0, 1, 1, 0], [4, 5, 5, 5]).flow_value) == 8


def test_degenerate_networks():
    # unreachable sink: flow 0, the cut is everything that cannot reach the sink
    res = solve_small([0, 2], [1, 3], [5, 5], 4, 0, 3, 0)
    assert res.source_side.tolist() == [True, True, False, False]
    # no arcs at all
    solve_small(np.zeros(0, int), np.zeros(0, int), np.zeros(0, int), 3, 2, 0, 0)
    # zero capacities, self-loops, parallel and antiparallel arcs
    tail = np.array([0, 0, 0, 1, 1, 2, 1, 2, 3])
    head = np.array([1, 1, 0, 2, 1, 1, 3, 3, 0])
    cap = np.array([2, 3, 9, 4, 9, 6, 0, 7, 5])
    res = solve_small(tail, head, cap, 4, 0, 3, 4)
    assert int(res.flow[2]) == 0 and int(res.flow[4]) == 0 and int(res.flow[6]) == 0
    assert int(res.flow[0] + res.flow[1]) == 4
    # one arc, and the same arc used backwards carries nothing
    assert solve_small([0], [1], [7], 2, 0, 1, 7).source_side.tolist() == [True, False]
    assert solve_small([0], [1], [7], 2, 1, 0, 0).source_side.tolist() == [False, True]


def test_min_cut(monkeypatch):
    rng = np.random.default_rng(9)
    for i in range(10):
        tail, head, cap, n, s, t = random_network(rng, "sparse")
        net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
        # the cut arcs are found on the host for small networks, on the device past HOST_TRIM_MAX
        monkeypatch.setattr(jaxmatch.flow, "HOST_TRIM_MAX", 0 if i % 2 else jaxmatch._ops.HOST_TRIM_MAX)
        cut = min_cut(net, terminals(s), terminals(t))
        side = np.asarray(cut.source_side)
        assert int(cut.value) == scipy_value(tail, head, cap, n, s, t)
        certify.check_min_cut(net, s, t, side, cut.value)
        assert cut.cut_arcs.shape == tail.shape
        np.testing.assert_array_equal(np.asarray(cut.cut_arcs), side[tail] & ~side[head])
        assert int(cap[np.asarray(cut.cut_arcs)].sum()) == int(cut.value)
    # against networkx's minimum cut value on a classic example
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 3), (0, 2, 2), (1, 2, 1), (1, 3, 2), (2, 3, 3)], weight="capacity")
    net = FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [3, 2, 1, 2, 3], **CAPS)
    assert int(min_cut(net, terminals(0), terminals(3)).value) == nx.minimum_cut_value(G, 0, 3) == 5


def test_jit_and_vmap():
    rng = np.random.default_rng(21)
    nets, ends, expected = [], [], []
    for _ in range(6):
        tail, head, cap, n, s, t = random_network(rng, "antiparallel")
        nets.append(FlowNetwork.from_edges(tail, head, cap, n, **CAPS))
        ends.append((int(s[0]), int(t[0])))
        expected.append(scipy_value(tail, head, cap, n, s[:1], t[:1]))
    solve = jax.jit(lambda net, s, t: max_flow(net, s, t))
    eager = max_flow(nets[0], terminals(ends[0][0]), terminals(ends[0][1]))
    jitted = solve(nets[0], jnp.int32(ends[0][0]), jnp.int32(ends[0][1]))
    assert int(jitted.flow_value) == int(eager.flow_value) == expected[0]
    assert jitted.flow.shape == (CAPS["arc_capacity"],) and jitted.source_side.shape == (CAPS["vertex_capacity"],)
    np.testing.assert_array_equal(jitted.flow[:int(nets[0].n_arcs)], eager.flow)
    np.testing.assert_array_equal(jitted.source_side[:int(nets[0].n)], eager.source_side)
    batch = jaxmatch.stack(nets)
    s, t = (jnp.array(x, jnp.int32) for x in zip(*ends))
    out = jax.vmap(lambda net, s, t: max_flow(net, s, t))(batch, s, t)
    assert out.flow_value.tolist() == expected
    assert np.all(out.status == 0)
    for i, net in enumerate(nets):
        m = int(net.n_arcs)
        own = max_flow(net, terminals(ends[i][0]), terminals(ends[i][1]))  # each answer is the network's own
        np.testing.assert_array_equal(out.flow[i][:m], own.flow)
        np.testing.assert_array_equal(out.source_side[i][:int(net.n)], own.source_side)
        certify.check_flow(net, ends[i][0], ends[i][1], out.flow[i][:m], expected[i])
        certify.check_min_cut(net, ends[i][0], ends[i][1], np.asarray(out.source_side[i][:int(net.n)]),
                              expected[i])
    cut = jax.vmap(lambda net, s, t: min_cut(net, s, t).value)(batch, s, t)
    assert cut.tolist() == expected


def test_step_ladder_and_unrolled_steps():
    """Several step sizes (tiled; load-balanced, where the rows that do not fit the lanes wait for the next
    step) and two steps per loop iteration, as large capacities use them: maximum flows with certificates."""
    from jaxmatch.flow import push_relabel as pr
    from jaxmatch.flow.lanes import Rung
    # rows have at most 6 entries (out- and in-degree <= 3), so the last rung's 16 lanes hold any row but
    # rarely the whole queue
    rungs = (Rung(8, 8 * 4, 4), Rung(16, 32, 0), Rung(1024, 16, 0))
    solve = jax.jit(partial(pr.max_flow_arrays, max_iters=jnp.int32(20000), rungs=rungs, unroll=2))
    rng = np.random.default_rng(17)
    used = np.zeros(len(rungs), np.int64)
    for _ in range(16):
        n = int(rng.integers(4, 40))
        tail = np.repeat(np.arange(n), 3)
        head = (tail + np.tile([1, 2, 5], n)) % n
        keep = rng.random(tail.size) < 0.8
        tail, head = tail[keep], head[keep]
        cap = rng.integers(0, 20, tail.size)
        ends = rng.permutation(n)
        s, t = ends[:int(rng.integers(1, 3))], ends[2:2 + int(rng.integers(1, 3))]
        net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
        flow, value, side, status, stats = solve(net, jnp.asarray(terminals(s)), jnp.asarray(terminals(t)))
        res = jaxmatch.FlowResult(value, flow[:int(net.n_arcs)], side[:n], status, stats)
        check(net, s, t, res, scipy_value(tail, head, cap, n, s, t))
        used += np.asarray(stats["rung_steps"])
    assert np.all(used > 0), used  # every rung ran


def test_matching_network_under_jit_and_vmap():
    edges = ([[0, 1, 1], [0, 0, 1]], [[0, 1, 2], [0, 0, 0]], [[0, 0, 1, 2], [0, 1, 1, 2]])
    graphs = [BipartiteGraph.from_edges(*e, row_capacity=64, col_capacity=64, edge_capacity=256) for e in edges]
    batch = jaxmatch.stack(graphs)

    def size(g):
        net, s, t = matching_network(g)
        rm, _ = matching_from_flow(g, max_flow(net, s, t).flow)
        return jnp.sum(rm >= 0)

    assert jax.vmap(size)(batch).tolist() == [2, 1, 3]


def test_int64_capacities_under_x64():
    with jax.enable_x64(True):
        net = FlowNetwork.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [2**40, 3 * 2**40, 2**41, 2**42])
        res = max_flow(net, 0, 3)
        assert res.flow.dtype == jnp.int64
        assert int(res.flow_value) == 2**40 + 3 * 2**40
        certify.check_flow(net, 0, 3, res.flow, res.flow_value)
        certify.check_min_cut(net, 0, 3, np.asarray(res.source_side), res.flow_value)


def test_max_iters_reports_status():
    tail, head, cap, s, t, n = gen.washington_rlg(6, 8, seed=1)
    net = FlowNetwork.from_edges(tail, head, cap, n, **CAPS)
    with pytest.raises(jaxmatch.SolverError, match="max_flow: stopped at max_iters") as err:
        max_flow(net, terminals(s), terminals(t), max_iters=2)       # throw=True, the default
    res = max_flow(net, terminals(s), terminals(t), max_iters=2, throw=False)
    assert err.value.status is jaxmatch.Status.MAX_ITERS and int(err.value.result.status) == 1
    assert int(err.value.result.flow_value) == int(res.flow_value)
    assert int(res.status) == 1 and res.status_name == "hit max_iters"
    assert int(res.flow_value) < scipy_value(tail, head, cap, n, s, t)


def test_bad_input():
    net = FlowNetwork.from_edges([0, 1], [1, 2], [1, 1])
    with pytest.raises(GraphInputError, match="share vertex 1"):
        max_flow(net, 1, 1)
    with pytest.raises(GraphInputError, match="share vertex"):
        max_flow(net, [0, 2], [2])
    with pytest.raises(GraphInputError, match="out of range"):
        max_flow(net, 0, 3)
    with pytest.raises(GraphInputError, match="out of range"):
        max_flow(net, -1, 2)
    with pytest.raises(GraphInputError, match="integer id"):
        max_flow(net, 0.0, 2)
    with pytest.raises(GraphInputError, match="integer id"):
        max_flow(net, True, 2)
    with pytest.raises(GraphInputError, match="integer id"):
        max_flow(net, [[0]], 2)
    with pytest.raises(GraphInputError, match="empty"):
        max_flow(net, [], 2)
    with pytest.raises(GraphInputError, match="FlowNetwork"):
        max_flow(BipartiteGraph.from_edges([0], [0]), 0, 1)
    with pytest.raises(GraphInputError, match="layout"):
        max_flow(net, 0, 2, layout="csr")
    with pytest.raises(GraphInputError, match="binary search"):
        max_flow(net, 0, 2, layout="rcsr", reverse="search")
    with pytest.raises(GraphInputError, match="reverse"):
        max_flow(net, 0, 2, reverse="some")
    with pytest.raises(GraphInputError, match="lanes"):
        max_flow(net, 0, 2, lanes=0)
    with pytest.raises(GraphInputError, match="max_iters"):
        max_flow(net, 0, 2, max_iters=0)
    with pytest.raises(GraphInputError, match="vmap"):   # eagerly a batch is solved (test_batch.py); not under jit
        jax.jit(lambda b: max_flow(b, 0, 2))(jaxmatch.stack([net, net]))
    with pytest.raises(GraphInputError, match="integer"):  # capacities must be integers, as in scipy
        FlowNetwork.from_edges([0], [1], [1.5])
    with pytest.raises(GraphInputError, match="BipartiteGraph"):
        matching_network(net)
    big = FlowNetwork.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [2**30, 2**30, 1, 1])
    with pytest.raises(GraphInputError, match="does not fit int32"):
        max_flow(big, 0, 3)
    ok = FlowNetwork.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [2**30, 2**30 - 1, 5, 2**31 - 1], **CAPS)
    assert int(max_flow(ok, terminals(0), terminals(3)).flow_value) == 2**30 + 4
    with pytest.raises(GraphInputError, match="traced"):
        jax.jit(lambda n: max_flow(n, 0, 2, layout="rcsr"))(net)


def test_cpu_lanes_grow_with_the_arc_capacity():
    """Off the GPU the default step width is an eighth of the arc capacity, between 2**16 and 2**20: a
    batch's union of 20,000 networks (2**22.3 arcs) ran 3.6x faster at 2**20 than at 2**16 (RESULTS.md,
    session 38), networks up to 2**19 arcs keep 2**16."""
    from jaxmatch.flow.push_relabel import cpu_lanes
    assert [cpu_lanes(x) for x in (1, 1 << 19, 5_242_880, 1 << 30)] == [1 << 16, 1 << 16, 655_360, 1 << 20]


def test_one_and_several_terminals_share_a_compilation():
    """Terminal ids are padded before the jitted solver: 1, 2 and 5 sources at one capacity compile once."""
    from jaxmatch.flow import _solve_jit
    net = FlowNetwork.from_edges([0, 1, 2, 3, 4, 5], [6, 6, 6, 7, 7, 7], [1, 2, 3, 4, 5, 6], 8, **CAPS)
    before = None
    for s, want in ((0, 1), ([0, 1], 3), ([0, 1, 2, 3, 4], 15)):
        assert int(max_flow(net, s, [6, 7], kernel=False).flow_value) == want
        before = _solve_jit._cache_size() if before is None else before
        assert _solve_jit._cache_size() == before
