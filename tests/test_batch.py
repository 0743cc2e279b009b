"""solve_many: many graphs of mixed sizes, one jitted vmap per capacity bucket, answers in order."""
import subprocess
import sys

import jax
import numpy as np
import pytest
from scipy.sparse.csgraph import maximum_bipartite_matching

import jaxmatch
from jaxmatch import BipartiteGraph, Graph, GraphInputError, solve_many
from jaxmatch.io import to_scipy


def test_solve_many_equals_solo_answers_in_order():
    """Bipartite graphs of mixed sizes in three capacity buckets, interleaved: each answer has scipy's
    cardinality and passes the matching certificate, in the caller's order; per-vertex arrays come
    back padded to the bucket's capacity (-1 past the true vertices); weighted and unweighted Graphs
    (one bucket) with Suitor equal their eager answers."""
    rng = np.random.default_rng(7)
    gs = []
    for i in range(14):
        cap = (8, 16, 32)[i % 3]
        nr, nc = (int(x) for x in rng.integers(1, cap + 1, 2))
        m = int(rng.integers(0, 2 * max(nr, nc)))
        gs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc,
                                            row_capacity=cap, col_capacity=cap, edge_capacity=4 * cap))
    assert len({(g.row_cap, g.col_cap, g.edge_cap) for g in gs}) == 3
    got = solve_many(lambda g: jaxmatch.maximum_matching(g), gs)
    for g, r in zip(gs, got):
        nr, nc = int(g.n_rows), int(g.n_cols)
        want = maximum_bipartite_matching(to_scipy(g), perm_type="column")
        assert int(r.cardinality) == int(np.sum(want >= 0))
        assert r.row_mate.shape == (g.row_cap,) and np.all(r.row_mate[nr:] == -1)
        jaxmatch.certify.check_maximum_matching(g, r.row_mate[:nr], r.col_mate[:nc])
    ws = [Graph.from_edges([0, 1, 2], [1, 2, 3], [3.0, 1.0, 3.0]), Graph.from_edges([0, 1], [1, 2], None, 4)]
    weights = [float(r) for r in solve_many(lambda g: jaxmatch.suitor(g).weight, ws)]
    assert weights == [float(jaxmatch.suitor(g).weight) for g in ws] == [6.0, 1.0]
    assert solve_many(lambda g: g.n_rows, []) == []
    with pytest.raises(GraphInputError, match="jaxmatch graphs"):
        solve_many(lambda g: g, [gs[0], np.zeros(3)])
    with pytest.raises(GraphInputError, match="at least one device"):
        solve_many(lambda g: g.n_rows, gs, devices=[])
    with pytest.raises(GraphInputError, match="batch of jaxmatch graphs"):
        jaxmatch.solve_batch(lambda g: g.n_rows, gs[0])          # a single graph, not a batch


MULTI_DEVICE = r"""
import os
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
import jax
import jax
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
import jaxmatch

assert len(jax.local_devices()) == 4, jax.local_devices()
rng = np.random.default_rng(0)
sizes = [3, 5, 7, 12, 30, 31, 9, 2, 17, 40, 6, 20, 11]
gs, want = [], []
for k, n in enumerate(sizes):     # a bucket of 11 at shared capacities (3 per device after padding), 2 alone
    r, c = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    caps = dict(row_capacity=64, col_capacity=64, edge_capacity=128) if k < 11 else {}
    gs.append(jaxmatch.BipartiteGraph.from_edges(r, c, n, n, **caps))
    a = csr_matrix((np.ones(r.size), (r, c)), shape=(n, n))
    want.append(int(np.sum(maximum_bipartite_matching(a, perm_type="column") >= 0)))
fn = lambda g: (jaxmatch.maximum_matching(g).cardinality, jax.lax.axis_index("graphs"))
got = jaxmatch.solve_many(fn, gs)
assert [int(x[0]) for x in got] == want, ([int(x[0]) for x in got], want)
assert [int(x[1]) for x in got[:11]] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3], [int(x[1]) for x in got]  # split in order
one = jaxmatch.solve_many(lambda g: jaxmatch.maximum_matching(g).cardinality, gs, devices=jax.local_devices()[:1])
assert [int(x) for x in one] == want
card = lambda g: jaxmatch.maximum_matching(g).cardinality
for k in (3, 4):   # a stacked batch of 11 over 3 and 4 devices (padded to 12), in order, twice (cached program)
    for _ in range(2):
        got = jaxmatch.solve_batch(card, jaxmatch.stack(gs[:11]), devices=jax.local_devices()[:k])
        assert got.tolist() == want[:11], (k, got.tolist())
print("ok")
"""


def test_solve_many_splits_buckets_over_devices(subprocess_env):
    """With 4 (host) devices, solve_many splits each bucket over all of them (padded to a multiple
    of 4), and every answer equals scipy's; one device gives the same. A subprocess, as the device
    count is fixed when JAX starts."""
    out = subprocess.run([sys.executable, "-c", MULTI_DEVICE], capture_output=True, text=True, timeout=600,
                         env=subprocess_env)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


@pytest.mark.parametrize("route", ["union", "vmap"])
def test_a_batch_given_eagerly_is_solved_graph_by_graph(route, monkeypatch):
    """maximum_matching and max_flow take a stacked batch outside jit and solve the disjoint unions of
    runs of its graphs on threads (the CPU's route; here several runs, each union at the capacities of
    the largest) or vmap it (the GPU's): each graph's answer has its solo cardinality / value and passes its certificates, the arrays are
    padded as under vmap; the union's edges are the graphs' edges at their offsets; under jit a batch
    still asks for vmap, and a batch's sources must be one id per network in range."""
    monkeypatch.setattr(jaxmatch.graph, "batch_route", lambda: route)
    monkeypatch.setattr(jaxmatch.graph, "UNION_PART", 40)
    unions, whole = [], jaxmatch.graph.disjoint_union
    monkeypatch.setattr(jaxmatch.graph, "disjoint_union", lambda b, **kw: unions.append(whole(b, **kw)) or unions[-1])
    rng = np.random.default_rng(3)
    gs = []
    for _ in range(6):
        nr, nc = (int(x) for x in rng.integers(1, 17, 2))
        m = int(rng.integers(0, 3 * max(nr, nc)))
        gs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc,
                                            row_capacity=16, col_capacity=16, edge_capacity=64))
    batch = jaxmatch.stack(gs)
    union, off = jaxmatch.disjoint_union(batch)
    assert int(union.n_edges) == sum(int(g.n_edges) for g in gs) == off["n_edges"][-1]
    r, c, _, _ = union.edges()
    b = 4
    lo = slice(off["n_edges"][b], off["n_edges"][b + 1])
    np.testing.assert_array_equal(r[lo] - off["n_rows"][b], gs[b].edges()[0])
    np.testing.assert_array_equal(c[lo] - off["n_cols"][b], gs[b].edges()[1])
    # past 2^16 slots the union is padded to its size class, not to a power of two (built only)
    from jaxmatch._validate import size_class
    gid = np.repeat(np.arange(300), 256)
    big = BipartiteGraph.from_edges(rng.integers(0, 64, gid.size), rng.integers(0, 64, gid.size),
                                    np.full(300, 64), np.full(300, 64), graph_index=gid)
    u, _ = jaxmatch.disjoint_union(big)
    assert (u.row_cap, u.col_cap) == (size_class(19200), size_class(19200)) == (32768, 32768)
    assert u.edge_cap == size_class(int(np.sum(big.n_edges))) < 1 << 17 and int(u.n_edges) == int(np.sum(big.n_edges))
    res = jaxmatch.maximum_matching(batch)
    assert res.row_mate.shape == (6, 16) and res.status.shape == (6,)
    if route == "union":   # runs of consecutive graphs (solved on threads, so seen in any order), one set of capacities
        assert len(unions) > 1 and len({(u.row_cap, u.col_cap, u.edge_cap) for u, _ in unions}) == 1
        cuts = np.linspace(0, 6, len(unions) + 1).astype(int)
        edges = np.cumsum([0] + [int(g.n_edges) for g in gs])
        assert sorted((len(o["n_edges"]) - 1, int(o["n_edges"][-1])) for _, o in unions) == sorted(
            (int(b - a), int(edges[b] - edges[a])) for a, b in zip(cuts[:-1], cuts[1:]))
        assert max(int(o["n_edges"][-1]) for _, o in unions) <= unions[0][0].edge_cap
        for part, runs in ((int(edges[-1]) + 1, 2), (2 * int(edges[-1]), 1)):   # two runs past half a part
            monkeypatch.setattr(jaxmatch.graph, "UNION_PART", part)
            unions.clear()
            assert np.array_equal(jaxmatch.maximum_matching(batch).cardinality, res.cardinality)
            assert len(unions) == runs
        monkeypatch.setattr(jaxmatch.graph, "UNION_PART", 40)
    unions.clear()
    for g, rm, cm, card in zip(gs, np.asarray(res.row_mate), np.asarray(res.col_mate), np.asarray(res.cardinality)):
        nr, nc = int(g.n_rows), int(g.n_cols)
        assert card == int(np.sum(maximum_bipartite_matching(to_scipy(g), perm_type="column") >= 0))
        assert np.all(rm[nr:] == -1) and np.all(cm[nc:] == -1)
        jaxmatch.certify.check_maximum_matching(g, rm[:nr], cm[:nc])

    nets, ends = [], []
    for _ in range(5):
        n = int(rng.integers(2, 17))
        t, h = rng.integers(0, n, 40), rng.integers(0, n, 40)
        keep = t != h
        nets.append(jaxmatch.FlowNetwork.from_edges(t[keep], h[keep], rng.integers(1, 9, keep.sum()), n,
                                                    vertex_capacity=16, arc_capacity=64))
        ends.append(rng.choice(n, 2, replace=False))
    s, t = np.array(ends).T
    fb = jaxmatch.stack(nets)
    res = jaxmatch.max_flow(fb, s, t)
    assert res.flow.shape == (5, 64) and res.source_side.shape == (5, 16)
    if route == "union":
        assert len(unions) > 1 and len({(u.vertex_cap, u.arc_cap) for u, _ in unions}) == 1
        assert sum(len(o["n"]) - 1 for _, o in unions) == 5
        pr = jaxmatch.flow.push_relabel   # the unions' own global relabel frequency by default
        for k, same in ((pr.UNION_K, True), (pr.DEFAULT_K, False)):
            other = jaxmatch.max_flow(fb, s, t, k=k)
            assert np.array_equal(other.flow_value, res.flow_value)
            assert same == all(np.array_equal(other.stats[x], res.stats[x]) for x in res.stats)
    for i, net in enumerate(nets):
        n, m = int(net.n), int(net.n_arcs)
        assert int(res.flow_value[i]) == int(jaxmatch.max_flow(net, int(s[i]), int(t[i])).flow_value)
        assert np.all(np.asarray(res.flow)[i, m:] == 0) and not np.any(np.asarray(res.source_side)[i, n:])
        jaxmatch.certify.check_flow(net, int(s[i]), int(t[i]), np.asarray(res.flow)[i, :m], int(res.flow_value[i]))
        jaxmatch.certify.check_min_cut(net, int(s[i]), int(t[i]), np.asarray(res.source_side)[i, :n],
                                       int(res.flow_value[i]))
    cut = jaxmatch.min_cut(fb, s, t)   # phase one only: its value is the preflow's, not the source's outflow
    caps = np.asarray(fb.cap)
    np.testing.assert_array_equal(np.where(np.asarray(cut.cut_arcs), caps, 0).sum(1), np.asarray(res.flow_value))
    np.testing.assert_array_equal(np.asarray(cut.value), np.asarray(res.flow_value))
    # a large batch's cut arcs are found on the device: the same arcs
    np.testing.assert_array_equal(jaxmatch.flow.residual.cut_arcs_jit(cut.source_side, fb.tail, fb.head), cut.cut_arcs)
    assert not np.any(np.asarray(cut.stats["return_iterations"])) and np.any(np.asarray(res.stats["stranded_excess"]))
    with pytest.raises(GraphInputError, match="vmap"):
        jax.jit(lambda g: jaxmatch.maximum_matching(g).cardinality)(batch)
    with pytest.raises(GraphInputError, match="one source id per network"):
        jaxmatch.max_flow(fb, s[:3], t)
    with pytest.raises(GraphInputError, match="of network 2 is out of range"):
        jaxmatch.max_flow(fb, np.where(np.arange(5) == 2, 99, s), t)
    with pytest.raises(GraphInputError, match="source and sink of network 0"):
        jaxmatch.max_flow(fb, s, np.where(np.arange(5) == 0, s, t))
    with pytest.raises(GraphInputError, match="disjoint_union needs a batch"):
        jaxmatch.disjoint_union(gs[0])


def _same_fields(a, b):
    """Two containers hold equal arrays (values and dtypes) and equal capacities."""
    assert type(a) is type(b) and jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_disjoint_union_equals_the_graph_of_the_shifted_edges():
    """The union (assembled from the batch's own sorted arrays) equals from_edges of every graph's
    edges shifted to its offsets, at the union's size classes: bipartite graphs and graphs, weighted
    or not, and flow networks in both layouts, from batches of mixed sizes with empty graphs, and of
    one size, and edges given out of graph order."""
    from jaxmatch._validate import size_class
    rng = np.random.default_rng(7)
    for trial in range(12):
        B = int(rng.integers(1, 6))
        (n, n_cols), m = rng.integers(1, 9, (2, B)), rng.integers(0, 15, B)
        if trial < 2:   # graphs of one size: every row of the stacked arrays full
            m = np.full(B, (4, 8)[trial])   # (capacities are powers of two)
        gid = rng.permutation(np.repeat(np.arange(B), m))
        u, v = (np.array([rng.integers(0, n[i]) for i in gid], np.int64).reshape(-1) for _ in range(2))
        w = rng.uniform(0.5, 2.0, gid.size) if trial % 2 else None
        shift = np.concatenate([[0], np.cumsum(n)])[gid]

        batch = BipartiteGraph.from_edges(u, v % n_cols[gid], n, n_cols, weights=w, graph_index=gid)
        union, off = jaxmatch.disjoint_union(batch)
        parts = jaxmatch.unstack(batch)
        r = np.concatenate([p.edges()[0] + off["n_rows"][i] for i, p in enumerate(parts)])
        c = np.concatenate([p.edges()[1] + off["n_cols"][i] for i, p in enumerate(parts)])
        ws = np.concatenate([p.edge_weights() for p in parts]) if w is not None else None
        nr, nc, ne = int(off["n_rows"][-1]), int(off["n_cols"][-1]), int(off["n_edges"][-1])
        _same_fields(union, BipartiteGraph.from_edges(r, c, nr, nc, weights=ws, row_capacity=size_class(nr),
                                                      col_capacity=size_class(nc), edge_capacity=size_class(ne)))

        batch = Graph.from_edges(u, v, w, n, graph_index=gid)
        union, off = jaxmatch.disjoint_union(batch)
        total = int(off["n"][-1])
        _same_fields(union, Graph.from_edges(u + shift, v + shift, w, total, vertex_capacity=size_class(total),
                                             entry_capacity=size_class(int(off["n_entries"][-1]))))

        cap = rng.integers(0, 50, gid.size)
        layout = ("bcsr", "rcsr")[trial % 2]
        batch = jaxmatch.FlowNetwork.from_edges(u, v, cap, n, graph_index=gid, layout=layout)
        union, off = jaxmatch.disjoint_union(batch)
        order = np.argsort(gid, kind="stable")   # a network's arcs keep their input order, network by network
        _same_fields(union, jaxmatch.FlowNetwork.from_edges(
            (u + shift)[order], (v + shift)[order], cap[order], total, layout=layout,
            vertex_capacity=size_class(total), arc_capacity=size_class(int(off["n_arcs"][-1]))))
