"""Graph pytrees: construction, padding, validation, batching."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxmatch
from jaxmatch import BipartiteGraph, FlowNetwork, Graph, GraphInputError, maximum_matching, stack, unstack


def dense_bip(g):
    r, c, nr, nc = g.edges()
    a = np.zeros((nr, nc), int)
    a[r, c] = 1
    return a


def test_bipartite_both_orders_and_padding():
    g = BipartiteGraph.from_edges([2, 0, 1, 0], [0, 1, 1, 0], n_rows=3, n_cols=3)
    assert (g.row_cap, g.col_cap, g.edge_cap) == (4, 4, 4)
    assert int(g.n_edges) == 4
    # column-major: col 0 -> rows 0, 2 ; col 1 -> rows 0, 1 ; col 2 -> none
    np.testing.assert_array_equal(g.by_col.indptr, [0, 2, 4, 4, 4])
    np.testing.assert_array_equal(g.by_col.indices, [0, 2, 0, 1])
    np.testing.assert_array_equal(g.by_col.src, [0, 0, 1, 1])
    np.testing.assert_array_equal(g.by_row.indptr, [0, 2, 3, 4, 4])
    np.testing.assert_array_equal(g.by_row.indices, [0, 1, 1, 0])
    # padding entries point at the sentinel (the capacity)
    h = g.with_capacity(edge_capacity=8)
    np.testing.assert_array_equal(h.by_col.indices[4:], [4] * 4)
    np.testing.assert_array_equal(h.by_col.src[4:], [4] * 4)
    np.testing.assert_array_equal(dense_bip(h), dense_bip(g))
    assert all(x.dtype == jnp.int32 for x in jax.tree_util.tree_leaves(g))


def test_packed_argsort_is_the_stable_argsort():
    """The builders' argsort (each key sorted with its position in its low bits) gives NumPy's stable
    argsort: repeated keys, keys in order and in reverse, and the fallbacks (a negative key, keys too
    wide to share 63 bits with their positions)."""
    from jaxmatch._csr import _argsort
    rng = np.random.default_rng(3)
    cases = [rng.integers(0, 5, 1000), rng.integers(0, 2**40, 1000), np.arange(1000), np.arange(1000)[::-1],
             np.repeat(np.arange(50), 20), rng.integers(-5, 5, 1000), rng.integers(0, 2**62, 1000),
             np.array([], np.int64), np.array([7])]
    for keys in cases:
        np.testing.assert_array_equal(_argsort(keys), np.argsort(keys, kind="stable"))


def test_sentinel_is_ignored_by_segment_ops():
    g = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1], edge_capacity=16)
    deg = jax.ops.segment_sum(jnp.ones(g.edge_cap, jnp.int32), g.by_col.src, g.col_cap)
    np.testing.assert_array_equal(deg, [1, 2])
    hit = jnp.zeros(g.row_cap, jnp.int32).at[g.by_col.indices].add(1, mode="drop")
    np.testing.assert_array_equal(hit, [1, 2])


def test_duplicates_rules():
    g = BipartiteGraph.from_edges([0, 0, 1], [1, 1, 0])
    assert int(g.n_edges) == 2
    with pytest.raises(GraphInputError, match="duplicate"):
        BipartiteGraph.from_edges([0, 0], [1, 1], duplicates="error")
    u = Graph.from_edges([0, 1, 2], [1, 0, 2], [1.0, 2.5, 4.0])  # {0,1} twice, loop at 2
    assert int(u.n_edges) == 2 and int(u.n_entries) == 3
    a = jaxmatch.to_scipy(u).toarray()
    np.testing.assert_allclose(a, [[0, 3.5, 0], [3.5, 0, 0], [0, 0, 4.0]])
    with pytest.raises(GraphInputError, match="duplicate"):
        Graph.from_edges([0, 1], [1, 0], duplicates="error")


def test_graph_symmetric_csr_and_edges_round_trip():
    rng = np.random.default_rng(0)
    u, v = rng.integers(0, 30, 100), rng.integers(0, 30, 100)
    w = rng.random(100) + 0.1
    g = Graph.from_edges(u, v, w, n=35)
    m = int(g.n_entries)
    s, d = np.asarray(g.adj.src[:m]), np.asarray(g.adj.indices[:m])
    ww = np.asarray(g.adj.weights[:m])
    a = sp.coo_array((ww, (s, d)), shape=(35, 35)).toarray()
    np.testing.assert_allclose(a, a.T)
    h = Graph.from_edges(*g.edges())
    np.testing.assert_array_equal(h.adj.indices, g.adj.indices)
    np.testing.assert_array_equal(h.adj.weights, g.adj.weights)
    assert not Graph.from_edges([0], [1]).weighted


@pytest.mark.parametrize("layout", ["bcsr", "rcsr"])
def test_flow_residual_layout(layout):
    tail = np.array([0, 0, 1, 2, 1, 0])
    head = np.array([1, 2, 2, 1, 3, 1])  # antiparallel 1<->2, parallel 0->1
    cap = np.array([3, 2, 1, 4, 5, 7])
    net = FlowNetwork.from_edges(tail, head, cap, layout=layout)
    k = 2 * int(net.n_arcs)
    src = np.asarray(net.res.src[:k])
    dst = np.asarray(net.res.indices[:k])
    arc = np.asarray(net.res_arc[:k])
    fwd = np.asarray(net.res_forward[:k])
    rev = np.asarray(net.res_rev[:k])
    assert np.all(np.diff(src) >= 0)  # grouped by tail
    np.testing.assert_array_equal(rev[rev], np.arange(k))
    np.testing.assert_array_equal(arc[rev], arc)
    np.testing.assert_array_equal(fwd[rev], ~fwd)
    np.testing.assert_array_equal(np.where(fwd, tail[arc], head[arc]), src)
    np.testing.assert_array_equal(np.where(fwd, head[arc], tail[arc]), dst)
    indptr = np.asarray(net.res.indptr)
    for v in range(int(net.n)):
        row_fwd, row_dst = fwd[indptr[v]:indptr[v + 1]], dst[indptr[v]:indptr[v + 1]]
        if layout == "bcsr":
            assert np.all(np.diff(row_dst) >= 0)
        else:
            assert np.all(np.diff(row_fwd.astype(int)) <= 0)  # forward arcs first
    other = net.with_layout("rcsr" if layout == "bcsr" else "bcsr")
    assert other.layout != layout
    np.testing.assert_array_equal(other.edges()[2], cap)


def test_empty_graphs():
    g = BipartiteGraph.from_edges([], [], n_rows=0, n_cols=0)
    assert (int(g.n_rows), int(g.n_edges), g.row_cap, g.edge_cap) == (0, 0, 1, 1)
    g = BipartiteGraph.from_edges(np.array([], int), np.array([], int), n_rows=3, n_cols=2)
    assert dense_bip(g).shape == (3, 2) and dense_bip(g).sum() == 0
    h = Graph.from_edges([], [], n=4)
    assert int(h.n_edges) == 0 and jaxmatch.to_scipy(h).shape == (4, 4)
    f = FlowNetwork.from_edges([], [], np.array([], np.int32), n=2)
    assert int(f.n_arcs) == 0


@pytest.mark.parametrize("call, match", [
    (lambda: BipartiteGraph.from_edges([0.0, 1.0], [0, 1]), "integer array"),
    (lambda: BipartiteGraph.from_edges([True], [0]), "integer array"),
    (lambda: BipartiteGraph.from_edges([[0, 1]], [[0, 1]]), "1-D"),
    (lambda: BipartiteGraph.from_edges([0, 1], [0]), "same length"),
    (lambda: BipartiteGraph.from_edges([0, 5], [0, 1], n_rows=3), r"rows\[1\] = 5 is out of range"),
    (lambda: BipartiteGraph.from_edges([0, -1], [0, 1]), r"rows\[1\] = -1 is out of range"),
    (lambda: BipartiteGraph.from_edges([0], [0], n_cols=-2), "n_cols must be >= 0"),
    (lambda: BipartiteGraph.from_edges([0], [0], n_rows=2 ** 31), "does not fit int32"),
    (lambda: BipartiteGraph.from_edges([0], [0], n_rows=1.5), "must be an integer"),
    (lambda: BipartiteGraph.from_edges([0, 1], [0, 1], edge_capacity=1), "smaller than the size"),
    (lambda: BipartiteGraph.from_edges([0], [0], duplicates="sum"), "duplicates must be one of"),
    (lambda: Graph.from_edges([0], [1], [np.nan]), "not finite"),
    (lambda: Graph.from_edges([0], [1], [np.inf]), "not finite"),
    (lambda: Graph.from_edges([0], [1], [-1.0]), "negative"),
    (lambda: Graph.from_edges([0], [1], [1.0, 2.0]), "shape"),
    (lambda: Graph.from_edges([0], [1], ["a"]), "numeric"),
    (lambda: Graph.from_edges([0], [3], n=3), r"v\[0\] = 3 is out of range"),
    (lambda: FlowNetwork.from_edges([0], [1], [1.5]), "integer"),
    (lambda: FlowNetwork.from_edges([0], [1], [-3]), "negative"),
    (lambda: FlowNetwork.from_edges([0], [1], [2 ** 40]), "does not fit"),
    (lambda: FlowNetwork.from_edges([0], [1], [1], layout="csr"), "layout"),
    (lambda: FlowNetwork.from_edges([0], [1], [1], arc_capacity=2 ** 30 + 1), "residual arcs"),
])
def test_validation_errors(call, match):
    with pytest.raises(GraphInputError, match=match):
        call()


def test_repr_is_short():
    assert repr(BipartiteGraph.from_edges([0], [0])) == "BipartiteGraph(n_rows=1, n_cols=1, n_edges=1, capacities=(1, 1, 1))"


def test_stack_unstack_vmap():
    rng = np.random.default_rng(1)
    gs = []
    for k in range(5):
        nr, nc, m = rng.integers(1, 20), rng.integers(1, 20), rng.integers(0, 40)
        gs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc))
    batch = stack(gs)
    assert batch.n_rows.shape == (5,)
    assert batch.row_cap == max(g.row_cap for g in gs)

    def degree_sum(g):  # a trivial function of one graph
        deg = jax.ops.segment_sum(jnp.ones(g.edge_cap, jnp.int32), g.by_row.src, g.row_cap)
        return deg.sum(), jnp.sum(g.by_row.src < g.n_rows)

    out = jax.jit(jax.vmap(degree_sum))(batch)
    for k, g in enumerate(gs):
        np.testing.assert_array_equal([o[k] for o in out], [int(g.n_edges)] * 2)
    back = unstack(batch, trim=True)
    for g, h in zip(gs, back):
        np.testing.assert_array_equal(dense_bip(g), dense_bip(h))
        assert h.capacities() == g.capacities()
    for g, h in zip(gs, unstack(batch)):   # host views at the batch's capacities: the same graphs
        np.testing.assert_array_equal(dense_bip(g), dense_bip(h))
        assert h.capacities() == batch.capacities() and int(maximum_matching(h).cardinality) == \
            int(maximum_matching(g).cardinality)
    with pytest.raises(GraphInputError, match="one jaxmatch type"):
        stack([gs[0], Graph.from_edges([0], [1])])
    with pytest.raises(GraphInputError, match="single graphs"):
        stack([batch])
    with pytest.raises(GraphInputError, match="leading axis"):
        unstack(gs[0])


def test_stack_at_shared_capacities_equals_the_batch_constructor():
    """Graphs of one structure at power-of-two capacities stack by their padded arrays; the batch
    equals the one-pass ``graph_index=`` build (every type), and ``unstack`` (host views at the
    batch's capacities) then ``stack`` gives it back."""
    rng = np.random.default_rng(4)
    sizes = [(5, 7, 12), (8, 3, 9), (1, 1, 1), (8, 8, 0)]
    edges = [(rng.integers(0, a, m), rng.integers(0, b, m), rng.random(m), rng.integers(0, 9, m))
             for a, b, m in sizes]
    gid = np.repeat(np.arange(len(sizes)), [m for _, _, m in sizes])
    cat = [np.concatenate([e[i] for e in edges]) for i in range(4)]
    builds = [
        (lambda e, a, b: BipartiteGraph.from_edges(e[0], e[1], a, b, row_capacity=8, col_capacity=8,
                                                    edge_capacity=16),
         BipartiteGraph.from_edges(cat[0], cat[1], [a for a, _, _ in sizes], [b for _, b, _ in sizes],
                                   graph_index=gid, row_capacity=8, col_capacity=8, edge_capacity=16)),
        (lambda e, a, b: Graph.from_edges(e[0], e[1], e[2], 8, vertex_capacity=8, entry_capacity=32),
         Graph.from_edges(cat[0], cat[1], cat[2], [8] * len(sizes), graph_index=gid, vertex_capacity=8,
                          entry_capacity=32)),
        # a batch's default layout is RCSR, one network's BCSR (FlowNetwork.from_edges)
        (lambda e, a, b: FlowNetwork.from_edges(e[0], e[1], e[3], 8, vertex_capacity=8, arc_capacity=16,
                                                layout="rcsr"),
         FlowNetwork.from_edges(cat[0], cat[1], cat[3], [8] * len(sizes), graph_index=gid, vertex_capacity=8,
                                arc_capacity=16)),
    ]
    assert builds[2][1].layout == "rcsr" and FlowNetwork.from_edges([0], [1], [1]).layout == "bcsr"
    for build, want in builds:
        gs = [build(e, a, b) for e, (a, b, _) in zip(edges, sizes)]
        for got in (stack(gs), stack(unstack(want))):
            assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
            for x, y in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        back = unstack(want)
        assert all(isinstance(x, (np.ndarray, np.generic)) for x in jax.tree_util.tree_leaves(back[0]))
        assert [h.capacities() for h in back] == [want.capacities()] * len(sizes)
        for g, h, t in zip(gs, back, unstack(want, trim=True)):
            assert g.edges()[0].tolist() == h.edges()[0].tolist() == t.edges()[0].tolist()


def test_stack_graphs_and_networks():
    b = stack([Graph.from_edges([0], [1], [2.0]), Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 1.0, 1.0])])
    assert b.adj.weights.shape == (2, 8)
    mixed = stack([Graph.from_edges([0], [1], [2.5]), Graph.from_edges([0, 1], [1, 2])])  # weighted + unweighted
    assert mixed.weighted
    np.testing.assert_allclose(jaxmatch.to_scipy(unstack(mixed)[1]).toarray(),
                               [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    with pytest.raises(GraphInputError, match="one residual layout"):
        stack([FlowNetwork.from_edges([0], [1], [1]), FlowNetwork.from_edges([0], [1], [1], layout="rcsr")])
    f = stack([FlowNetwork.from_edges([0], [1], [4]), FlowNetwork.from_edges([0, 1], [1, 2], [1, 1])])
    assert f.res_rev.shape == (2, 4)
    assert [int(n.n_arcs) for n in unstack(f)] == [1, 2]


def test_same_capacity_compiles_once():
    traces = []

    @jax.jit
    def f(g):
        traces.append(1)
        return jnp.sum(g.by_col.indices < g.n_rows)

    for m in (3, 4):
        g = BipartiteGraph.from_edges(np.arange(m) % 3, np.arange(m) % 2, 3, 2, edge_capacity=8)
        assert int(f(g)) == m
    assert len(traces) == 1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 6)), max_size=40))
def test_bipartite_round_trip_property(edges):
    r = np.array([e[0] for e in edges], dtype=np.int64)
    c = np.array([e[1] for e in edges], dtype=np.int64)
    g = BipartiteGraph.from_edges(r, c, 10, 7)
    a = np.zeros((10, 7), int)
    a[r, c] = 1
    np.testing.assert_array_equal(dense_bip(g), a)
    # column-major and row-major views hold the same edges
    m = int(g.n_edges)
    by_col = set(zip(np.asarray(g.by_col.indices[:m]), np.asarray(g.by_col.src[:m])))
    by_row = set(zip(np.asarray(g.by_row.src[:m]), np.asarray(g.by_row.indices[:m])))
    assert by_col == by_row


def _same_batch(a, b):
    la, lb = jax.tree_util.tree_flatten(a), jax.tree_util.tree_flatten(b)
    assert la[1] == lb[1]
    for x, y in zip(la[0], lb[0]):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_batch_runs_grow_with_the_cores(monkeypatch):
    """A batch is built in runs of 2^16 edges per 4 cores, at most a core's share of the batch
    (but 2^16): on 2 cores always 2^16, on 16 cores 2^18 for 10^5 graphs and 2^16 for 10^3."""
    first = np.arange(100_001) * 256   # where each of 10^5 graphs of 256 edges starts, and the end
    for threads, small, big in ((2, 2**16, 2**16), (16, 2**16, 2**18)):
        monkeypatch.setattr(jaxmatch._build, "cores", lambda: threads)
        for f, size in ((first[:1001], small), (first, big)):
            runs = list(jaxmatch._build._runs(f))
            assert runs[0][0] == 0 and runs[-1][1] == f.size - 1 and all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
            assert max(int(f[b1] - f[b0]) for b0, b1 in runs) == size


@pytest.mark.parametrize("layout", ["bcsr", "rcsr"])
def test_flow_batch_built_in_runs_equals_one_run(monkeypatch, layout):
    """The flow batch's residual rows built in runs of a few arcs (several networks a run, a network
    longer than a run alone, empty networks; on threads) equal the build in one run, and that equals
    stacking the networks built one by one."""
    rng = np.random.default_rng(11)
    n, m = rng.integers(2, 9, 12), rng.integers(0, 14, 12)
    m[[3, 7]] = 0
    gid = np.repeat(np.arange(12), m)
    t = np.array([rng.integers(0, n[i]) for i in gid], np.int64)
    h = (t + np.array([rng.integers(1, n[i]) for i in gid], np.int64)) % n[gid]
    cap = rng.integers(0, 20, gid.size)
    whole = FlowNetwork.from_edges(t, h, cap, n, graph_index=gid, layout=layout)
    monkeypatch.setattr(jaxmatch._build, "BUILD_RUN", 5)
    _same_batch(FlowNetwork.from_edges(t, h, cap, n, graph_index=gid, layout=layout), whole)
    solo = [FlowNetwork.from_edges(t[gid == i], h[gid == i], cap[gid == i], int(n[i]), layout=layout,
                                   vertex_capacity=whole.vertex_cap, arc_capacity=whole.arc_cap) for i in range(12)]
    _same_batch(stack(solo), whole)


@pytest.mark.parametrize("run", [None, 7])
def test_bipartite_batch_from_edges_equals_stack(monkeypatch, run):
    """from_edges(graph_index=...) in one pass equals stacking the graphs built one by one, padded
    with jnp.stack (random sizes, empty graphs, repeated edges merged, edges in any order, explicit
    capacities, weights summed over repeats); stack itself takes the one-pass route and gives the
    same. Also with the batch's graphs built in runs of a few edges (``run``), where a repeated edge
    under duplicates='error' is still named by its position in the input."""
    if run is not None:
        monkeypatch.setattr(jaxmatch._build, "BUILD_RUN", run)
    rng = np.random.default_rng(3)
    sizes = [(int(a), int(b)) for a, b in rng.integers(0, 12, (25, 2))] + [(0, 0), (3, 0), (1, 1)]
    rows, cols, gid, solo = [], [], [], []
    for i, (nr, nc) in enumerate(sizes):
        m = int(rng.integers(0, 30)) if nr and nc else 0
        r, c = rng.integers(0, max(nr, 1), m), rng.integers(0, max(nc, 1), m)
        rows.append(r), cols.append(c), gid.append(np.full(m, i))
        solo.append(BipartiteGraph.from_edges(r, c, nr, nc))
    perm = rng.permutation(sum(len(r) for r in rows))
    rows, cols, gid = (np.concatenate(x)[perm] for x in (rows, cols, gid))
    n_rows, n_cols = np.array(sizes).T
    for caps in ({}, dict(row_capacity=32, col_capacity=16, edge_capacity=64)):
        batch = BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, graph_index=gid, **caps)
        want = {k: jaxmatch.graph.next_pow2(max(g.capacities()[k] for g in solo)) for k in solo[0].capacities()}
        want.update(caps)
        _same_batch(batch, jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *[g.with_capacity(**want) for g in solo]))
    _same_batch(stack(solo), BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, graph_index=gid))
    w = rng.integers(1, 5, rows.size).astype(float)
    heavy = [BipartiteGraph.from_edges(rows[gid == i], cols[gid == i], nr, nc, weights=w[gid == i])
             for i, (nr, nc) in enumerate(sizes)]
    _same_batch(stack(heavy), BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, weights=w, graph_index=gid))
    edges = list(zip(gid.tolist(), rows.tolist(), cols.tolist()))
    first = min(i for i, e in enumerate(edges) if edges.count(e) > 1)   # the first edge that has a repeat
    with pytest.raises(GraphInputError, match=f"duplicate .* at position {first} "):
        BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, graph_index=gid, duplicates="error")


@pytest.mark.parametrize("kw, match", [
    (dict(rows=[0, 2], cols=[0, 0], n_rows=[2, 2], n_cols=[1, 1], graph_index=[0, 0]), r"rows\[1\] = 2 .* graph 0"),
    (dict(rows=[0, 0], cols=[0, 1], n_rows=[2, 2], n_cols=[1, 1], graph_index=[0, 1]), r"cols\[1\] = 1 .* graph 1"),
    (dict(rows=[0], cols=[0], n_rows=[1, 1], n_cols=[1, 1], graph_index=[2]), r"graph_index\[0\] = 2"),
    (dict(rows=[0], cols=[0], n_rows=[1, 1], n_cols=[1], graph_index=[0]), "one per graph"),
    (dict(rows=[0], cols=[0], n_rows=None, n_cols=[1], graph_index=[0]), "per graph"),
    (dict(rows=[0], cols=[0], n_rows=[-1], n_cols=[1], graph_index=[0]), "negative"),
    (dict(rows=[0], cols=[0], n_rows=[1], n_cols=[1], graph_index=[0.0]), "integer"),
    (dict(rows=[0, 0], cols=[0], n_rows=[1], n_cols=[1], graph_index=[0, 0]), "same length"),
    (dict(rows=[0, 0], cols=[0, 0], n_rows=[1], n_cols=[1], graph_index=[0, 0], duplicates="error"),
     "duplicate .* position 0"),
])
def test_bipartite_batch_errors(kw, match):
    """Bad batches are named before anything is built: ids out of their own graph's range, graph
    ids past the sizes, size arrays of different lengths or missing, negative sizes, float ids,
    ragged edge arrays, repeated edges under duplicates='error'."""
    with pytest.raises(GraphInputError, match=match):
        BipartiteGraph.from_edges(**kw)


@pytest.mark.parametrize("run", [None, 9])
def test_graph_batch_from_edges_equals_stack(monkeypatch, run):
    """Graph.from_edges(graph_index=...) equals the padded jnp.stack of the graphs built one by one:
    weighted and unweighted graphs (an unweighted one joins a weighted batch with unit weights),
    loops, repeated edges in both orientations summed, empty graphs; stack takes this route. Also
    with the batch's graphs built in runs of a few edges (``run``), edges given out of graph order,
    and a repeat under duplicates='error' named by its position in the input."""
    if run is not None:
        monkeypatch.setattr(jaxmatch._build, "BUILD_RUN", run)
    rng = np.random.default_rng(4)
    u, v, w, gid, solo = [], [], [], [], []
    sizes = [int(x) for x in rng.integers(1, 15, 20)] + [1, 2]
    for i, n in enumerate(sizes):
        m = int(rng.integers(0, 25))
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        wt = rng.integers(1, 5, m).astype(float)
        u.append(a), v.append(b), w.append(wt), gid.append(np.full(m, i))
        solo.append(Graph.from_edges(a, b, wt if i % 3 else None, n))
    weights = np.concatenate([wt if i % 3 else np.ones(wt.size) for i, wt in enumerate(w)])
    u, v, gid = (np.concatenate(x) for x in (u, v, gid))
    batch = Graph.from_edges(u, v, weights, np.array(sizes), graph_index=gid)
    caps = {k: jaxmatch.graph.next_pow2(max(g.capacities()[k] for g in solo)) for k in solo[0].capacities()}
    padded = [dataclasses.replace(g.with_capacity(**caps), weighted=True) for g in solo]
    _same_batch(batch, jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *padded))
    _same_batch(stack(solo), batch)
    plain = [Graph.from_edges([0, 1], [1, 1], None, 3), Graph.from_edges([0], [0], None, 1)]
    assert not stack(plain).weighted and stack(plain).n_entries.tolist() == [3, 1]
    with pytest.raises(GraphInputError, match=r"v\[0\] = 3 .* graph 0"):
        Graph.from_edges([0], [3], None, [3], graph_index=[0])
    perm = rng.permutation(u.size)
    _same_batch(Graph.from_edges(u[perm], v[perm], weights[perm], np.array(sizes), graph_index=gid[perm]), batch)
    edges = [(i, min(a, b), max(a, b)) for i, a, b in zip(gid.tolist(), u.tolist(), v.tolist())]
    first = min(i for i, e in enumerate(edges) if edges.count(e) > 1)   # the first edge that has a repeat
    with pytest.raises(GraphInputError, match=f"duplicate .* at position {first} "):
        Graph.from_edges(u, v, weights, np.array(sizes), graph_index=gid, duplicates="error")


@pytest.mark.parametrize("layout", ["bcsr", "rcsr"])
def test_flow_batch_from_edges_equals_stack(layout):
    """FlowNetwork.from_edges(graph_index=...) equals the padded jnp.stack of the networks built one by
    one (both layouts, parallel and antiparallel arcs, self-loops, networks without arcs, arcs of the
    networks interleaved in the input); stack takes this route."""
    rng = np.random.default_rng(5)
    sizes = [int(x) for x in rng.integers(1, 12, 12)] + [1, 3]
    tails, heads, caps, gid, solo = [], [], [], [], []
    for i, n in enumerate(sizes):
        m = int(rng.integers(0, 20)) if i < 12 else 0
        t, h, c = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 9, m)
        tails.append(t), heads.append(h), caps.append(c), gid.append(np.full(m, i))
        solo.append(FlowNetwork.from_edges(t, h, c, n, layout=layout))
    key = np.concatenate(gid)
    order = np.argsort(rng.random(key.size))   # a random interleaving of the networks ...
    for i in range(len(sizes)):                 # ... keeping each network's own arc order
        order[np.flatnonzero(key[order] == i)] = np.flatnonzero(key == i)
    t, h, c, gg = (np.concatenate(x)[order] for x in (tails, heads, caps, gid))
    batch = FlowNetwork.from_edges(t, h, c, np.array(sizes), layout=layout, graph_index=gg)
    cap = {k: jaxmatch.graph.next_pow2(max(g.capacities()[k] for g in solo)) for k in solo[0].capacities()}
    _same_batch(batch, jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *[g.with_capacity(**cap) for g in solo]))
    _same_batch(stack(solo), batch)


@pytest.mark.parametrize("layout", ["bcsr", "rcsr"])
def test_residual_sort_equals_lexsort(layout):
    """The residual entries' packed-key sort (both flow constructors) orders like np.lexsort of the
    fields, on the packed path and on the lexsort fallback (bounds past 63 bits), and reads every
    field back right."""
    from jaxmatch._build import _residual_sorted
    rng = np.random.default_rng(4)
    g = np.sort(rng.integers(0, 3, 400))
    t, h = rng.integers(0, 6, 400), rng.integers(0, 6, 400)   # repeated arcs and self-loops too
    arc = np.arange(400) - np.searchsorted(g, g)   # ids local to each network
    src, dst = np.concatenate([t, h]), np.concatenate([h, t])
    gg, aa = np.concatenate([g, g]), np.concatenate([arc, arc])
    back = np.arange(800) >= 400
    want = np.lexsort((aa, back, dst, src, gg) if layout == "bcsr" else (aa, dst, back, src, gg))
    for vc in (6, 2**40):
        order, *fields = _residual_sorted(t, h, arc, g, np.searchsorted(g, np.arange(4)), vc, 400, layout)
        np.testing.assert_array_equal(order, want)
        for got, full in zip(fields, (gg, src, dst, ~back, aa)):
            np.testing.assert_array_equal(got, full[want])


# ---- weighted bipartite graphs (assignment costs) ----

def _check_against_scipy(g, r, c, w, shape):
    """Both CSR directions of ``g`` hold the entries and summed weights of scipy's csr / csc of the same data."""
    A = sp.coo_array((np.asarray(w, float), (np.asarray(r), np.asarray(c))), shape=shape)
    csr, csc = A.tocsr(), A.tocsc()
    csr.sum_duplicates(), csc.sum_duplicates()
    m = int(g.n_edges)
    assert m == csr.nnz
    for view, ref, n in ((g.by_row, csr, shape[0]), (g.by_col, csc, shape[1])):
        np.testing.assert_array_equal(np.asarray(view.indptr)[:n + 1], ref.indptr)
        np.testing.assert_array_equal(np.asarray(view.indices)[:m], ref.indices)
        np.testing.assert_allclose(np.asarray(view.weights)[:m], ref.data, rtol=1e-6)
        assert np.all(np.asarray(view.weights)[m:] == 0)   # 0 in padding
        assert view.weights.dtype == jnp.zeros(0, float).dtype   # float32, float64 in 64-bit mode


def test_bipartite_weights_in_both_directions_match_scipy():
    """Weights of any sign land in by_row and by_col in each direction's entry order, repeats summed
    (as scipy sums duplicates), equal to scipy's csr / csc of the same data; edge_weights follows edges()."""
    rng = np.random.default_rng(7)
    r, c = rng.integers(0, 5, 30), rng.integers(0, 6, 30)   # many repeats
    w = rng.normal(size=30) * 10
    g = BipartiteGraph.from_edges(r, c, 5, 6, weights=w)
    assert g.weighted and "weighted=True" in repr(g)
    _check_against_scipy(g, r, c, w, (5, 6))
    rows, cols, _, _ = g.edges()
    ref = sp.coo_array((w, (r, c)), shape=(5, 6)).toarray()
    np.testing.assert_allclose(g.edge_weights(), ref[rows, cols], rtol=1e-6)
    g2 = BipartiteGraph.from_edges([0, 1, 0], [1, 0, 1], weights=[-2, 3, -0.5])   # integers and negatives
    assert g2.edges()[0].tolist() == [0, 1] and g2.edge_weights().tolist() == [-2.5, 3.0]
    assert g2.by_col.weights.tolist()[:2] == [3.0, -2.5]


def from_scipy_bip(A, **kw):
    return jaxmatch.from_scipy(A, "bipartite", **kw)


def test_bipartite_unweighted_unchanged():
    """Without weights the graph is as before: weights None in both CSRs, the same pytree structure,
    no 'weighted' in its repr, and edge_weights refuses."""
    g = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1])
    assert not g.weighted and g.by_row.weights is None and g.by_col.weights is None
    assert len(jax.tree_util.tree_leaves(g)) == 9 and "weighted" not in repr(g)
    w = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1], weights=[1.0, 1.0, 1.0])
    assert len(jax.tree_util.tree_leaves(w)) == 11
    with pytest.raises(GraphInputError, match="weighted"):
        g.edge_weights()
    for flag in (None, False):
        assert not from_scipy_bip(sp.csr_array([[0, 2.0], [3.0, 0]]), weighted=flag).weighted


@pytest.mark.parametrize("bad, match", [
    ([1.0, np.nan], r"weights\[1\] = nan is not finite"),
    ([np.inf, 1.0], r"weights\[0\] = inf is not finite"),
    ([1.0], "shape"),
    ([True, False], "real numeric"),
    ([1 + 1j, 2], "real numeric"),
])
def test_bipartite_bad_weights(bad, match):
    """Weights must be real and finite, one per edge; named on both the single and the batch path."""
    for kw in ({}, dict(n_rows=[2], n_cols=[2], graph_index=[0, 0])):
        with pytest.raises(GraphInputError, match=match):
            BipartiteGraph.from_edges([0, 1], [1, 0], weights=bad, **kw)


def test_bipartite_weights_overflow_and_duplicates_error():
    """A summed weight beyond float32 is named; duplicates='error' still refuses a weighted repeat."""
    if not jax.config.jax_enable_x64:
        with pytest.raises(GraphInputError, match="does not fit float32"):
            BipartiteGraph.from_edges([0, 0], [0, 0], weights=[3e38, 3e38])
    with pytest.raises(GraphInputError, match="duplicate"):
        BipartiteGraph.from_edges([0, 0], [0, 0], weights=[1.0, 2.0], duplicates="error")


def test_bipartite_from_scipy_weighted_equals_from_edges():
    """from_scipy(weighted=True): the values are the weights; duplicates summed first and a zero entry
    or a zero sum is no edge; equal (leaf by leaf) to from_edges of the canonical entries."""
    A = sp.coo_array((np.array([1.5, 0.0, -2.0, 4.0, 1.0, -1.0, 7.0]),
                      (np.array([0, 1, 1, 1, 2, 2, 2]), np.array([0, 1, 2, 2, 0, 0, 3]))), shape=(3, 4))
    g = from_scipy_bip(A, weighted=True)
    want = BipartiteGraph.from_edges([0, 1, 2], [0, 2, 3], 3, 4, weights=[1.5, 2.0, 7.0])
    _same_batch(g, want)
    _same_batch(BipartiteGraph.from_scipy(A.tocsc(), weighted=True), want)
    _check_against_scipy(g, [0, 1, 2], [0, 2, 3], [1.5, 2.0, 7.0], (3, 4))
    # unweighted default: the pattern of the nonzero entries, as before
    assert not from_scipy_bip(A).weighted and int(from_scipy_bip(A).n_edges) == 4
    with pytest.raises(GraphInputError, match="not finite"):
        from_scipy_bip(sp.csr_array([[np.nan, 1.0]]), weighted=True)
    with pytest.raises(GraphInputError, match="duplicate"):
        from_scipy_bip(A, weighted=True, duplicates="error")
    with pytest.raises(GraphInputError, match="kind='graph' only"):
        from_scipy_bip(A, weighted=True, symmetrize=True)
    with pytest.raises(GraphInputError, match="weighted="):
        jaxmatch.from_scipy(sp.csr_array(np.eye(2, dtype=int)), "flow", weighted=True)
    b = from_scipy_bip(sp.csr_array(np.array([[True, False], [True, True]])), weighted=True)
    assert b.edge_weights().tolist() == [1.0, 1.0, 1.0]


def test_bipartite_weighted_stack_unstack_with_capacity():
    """stack / unstack keep the weights (both stacking routes, and the graph_index batch equals the
    stack); with_capacity keeps them; a mix of weighted and unweighted graphs is refused."""
    gs = [BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1], weights=[-1.0, 2.0, 3.5]),
          BipartiteGraph.from_edges([0, 0], [0, 2], 1, 3, weights=[4.0, -5.0])]
    b = stack(gs)
    assert b.weighted and b.by_row.weights.shape == (2, 4)
    _same_batch(b, BipartiteGraph.from_edges([0, 1, 1, 0, 0], [1, 0, 1, 0, 2], [2, 1], [2, 3],
                                             weights=[-1.0, 2.0, 3.5, 4.0, -5.0], graph_index=[0, 0, 0, 1, 1]))
    for views in (unstack(b), unstack(b, trim=True)):
        for g, v in zip(gs, views):
            assert [x.tolist() for x in v.edges()[:2]] == [x.tolist() for x in g.edges()[:2]]
            np.testing.assert_array_equal(v.edge_weights(), g.edge_weights())
    _same_batch(stack(unstack(b)), b)   # the array-by-array route
    _same_batch(unstack(b, trim=True)[0], gs[0])
    big = gs[1].with_capacity(row_capacity=4, edge_capacity=8)
    assert big.edge_cap == 8 and big.by_row.weights.shape == (8,)
    np.testing.assert_array_equal(big.edge_weights(), gs[1].edge_weights())
    np.testing.assert_array_equal(np.asarray(big.by_col.weights)[:2], [4.0, -5.0])
    with pytest.raises(GraphInputError, match="all weighted or all unweighted"):
        stack([gs[0], BipartiteGraph.from_edges([0], [0])])
