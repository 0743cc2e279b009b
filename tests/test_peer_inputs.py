"""The peers' own test inputs, run through jaxmatch (issue 28).

Bipartite matching: the inputs of scipy's ``maximum_bipartite_matching``
tests (0x0, 2x0, 0x3 and edgeless matrices, the augmentation case,
rectangular matrices, explicit zeros, the gh-11458 feasibility matrix,
duplicate CSR entries (gh-26160, scaled down), a permuted identity) and of
networkx's bipartite ``hopcroft_karp_matching`` / ``eppstein_matching`` tests
(complete bipartite graphs, the 12-vertex graph with its vertex cover, the
disconnected graph of issue 2127, its transitive-closure DAG, the vertex cover
graphs of issues 2384 and 3306, mixed node types of issue 1927, unorderable
nodes).

Maximum flow and minimum cut: the inputs of scipy's ``maximum_flow`` tests
(simple, bottleneck, backwards flow, CLRS 26.1, disconnected with a
self-loop, the 100,000-vertex path of gh-14385 scaled down to 100) and of
networkx's ``maximum_flow`` tests (undirected graphs, the classic digraph,
zero-flow arcs, Cormen's example, the topcoder graph, Wikipedia's Dinitz
example, a custom capacity attribute, infinite-capacity arcs and digon,
ticket 429, the disconnected graph, ticket 1542, the two-phase and cutoff
path bundles and the complete graph, scaled down, and the pyramid of the
large-graph tests with its fractional capacities scaled to integers). Inputs
that the peers reject (source = sink, out-of-range terminals, float
capacities, non-square or dense matrices, terminals not in the graph) must be
rejected by jaxmatch too.

The tests are written here from the public inputs; every answer is compared
with the peer run live in the test and checked by :mod:`jaxmatch.certify`.
Graphs are padded to one capacity per container (``BCAPS``, ``FCAPS``), so
the file compiles one shape per solver option set.
"""
import math
from fractions import Fraction
from functools import reduce

import jax
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from networkx.algorithms import bipartite as nxb
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import jaxmatch
from jaxmatch import BipartiteGraph, GraphInputError, certify, max_flow, maximum_matching, min_cut

BCAPS = dict(row_capacity=32, col_capacity=32, edge_capacity=128)
FCAPS = dict(vertex_capacity=128, arc_capacity=256)
METHODS = [("pr", "karp_sipser"), ("pr", None), ("apfb", "karp_sipser"), ("apsb", "cheap"),
           ("graft", "karp_sipser"), ("auto", "karp_sipser"), ("flow", None)]


# --------------------------------------------------------------------------
# bipartite matching: scipy's inputs


def _feasibility_gh11458():
    """scipy's regression input for gh-11458: 20 x 25, 50 entries, maximum matching 13."""
    indices = [11, 12, 19, 22, 23, 5, 22, 3, 8, 10, 5, 6, 11, 12, 13, 5, 13, 14, 20, 22, 3, 15, 3, 13, 14,
               11, 12, 19, 22, 23, 5, 22, 3, 8, 10, 5, 6, 11, 12, 13, 5, 13, 14, 20, 22, 3, 15, 3, 13, 14]
    indptr = [0, 5, 7, 10, 10, 15, 20, 22, 22, 23, 25, 30, 32, 35, 35, 40, 45, 47, 47, 48, 50]
    return sp.csr_array((np.ones(50, int), indices, indptr), shape=(20, 25))


def _duplicates_gh26160(k=1000):
    """scipy's gh-26160 input (rows {0, 1} and {0}, column 0 stored k extra times), k scaled down."""
    indices = [0, 1] + [0] * k
    A = sp.csr_array((np.ones(2 + k), indices, [0, 2, 2 + k]), shape=(2, 2))
    assert not A.has_canonical_format
    return A


def _permuted_identity(n=25, seed=42):
    """A randomly row- and column-permuted identity (one edge per vertex), as in scipy's test."""
    rng = np.random.default_rng(seed)
    return sp.csr_array((np.ones(n, int), (rng.permutation(n), rng.permutation(n))), shape=(n, n))


SCIPY_MATRICES = {
    "empty_0x0": (sp.csr_array((0, 0)), True),
    "empty_left_2x0": (sp.csr_array((2, 0)), True),
    "empty_right_0x3": (sp.csr_array((0, 3)), True),
    "no_edges_2x2": (sp.csr_array((2, 2)), True),
    "augmentation": (sp.csr_array([[1, 1], [1, 0]]), True),       # the one maximum matching: [1, 0]
    "more_rows": (sp.csr_array([[1, 1], [1, 0], [0, 1]]), False),
    "more_columns": (sp.csr_array([[1, 1, 0], [0, 0, 1]]), False),
    "feasibility_gh11458": (_feasibility_gh11458(), False),
    "duplicates_gh26160": (_duplicates_gh26160(), True),
    "permuted_identity": (_permuted_identity(), True),
}  # name -> (matrix, whether its maximum matching is unique)


def _scipy_mates(A):
    # scipy releases before the gh-26160 fix corrupt memory on a non-canonical CSR (repeated entries):
    # scipy gets the canonical copy, jaxmatch the input as it is
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return (maximum_bipartite_matching(A, perm_type="column"),   # row -> column
            maximum_bipartite_matching(A, perm_type="row"))      # column -> row


def _check_against(g, res, rm_ref, cm_ref, unique):
    assert int(res.status) == 0, res.status_name
    assert int(res.cardinality) == int((rm_ref >= 0).sum())
    certify.check_maximum_matching(g, res.row_mate, res.col_mate)
    certify.check_maximum_matching(g, rm_ref, cm_ref)   # the peer's answer is maximum too
    if unique:
        np.testing.assert_array_equal(res.row_mate, rm_ref)
        np.testing.assert_array_equal(res.col_mate, cm_ref)


@pytest.mark.parametrize("method, init", METHODS)
@pytest.mark.parametrize("name", sorted(SCIPY_MATRICES))
def test_scipy_matching_inputs(name, method, init):
    A, unique = SCIPY_MATRICES[name]
    g = jaxmatch.from_scipy(A, **BCAPS)
    assert (int(g.n_rows), int(g.n_cols)) == A.shape
    rm_ref, cm_ref = _scipy_mates(A)
    _check_against(g, maximum_matching(g, method=method, init=init), rm_ref, cm_ref, unique)


def test_scipy_permuted_identity_is_restored():
    """scipy's check: permuting the rows by the matching puts a nonzero on every diagonal entry."""
    A, _ = SCIPY_MATRICES["permuted_identity"]
    res = maximum_matching(jaxmatch.from_scipy(A, **BCAPS))
    rm, cm = np.asarray(res.row_mate), np.asarray(res.col_mate)
    assert (rm >= 0).all() and (A.toarray()[np.arange(25), rm] != 0).all()
    assert (A.toarray()[cm, np.arange(25)] != 0).all()


def test_scipy_explicit_zeros():
    """scipy counts stored zeros as edges; jaxmatch.from_scipy drops them (documented), the edges
    built from the stored entries give scipy's answer."""
    A = sp.csr_array(([0, 0], [1, 0], [0, 1, 2]), shape=(2, 2))
    rm_ref, cm_ref = _scipy_mates(A)
    coo = A.tocoo()
    g = BipartiteGraph.from_edges(coo.row, coo.col, *A.shape, **BCAPS)
    _check_against(g, maximum_matching(g), rm_ref, cm_ref, unique=True)
    dropped = jaxmatch.from_scipy(A, **BCAPS)
    assert int(dropped.n_edges) == 0 and int(maximum_matching(dropped).cardinality) == 0


def test_scipy_rejects_dense_and_so_does_jaxmatch():
    dense = np.array([[0, 1], [0, 0]])
    with pytest.raises(TypeError):
        maximum_bipartite_matching(dense)
    with pytest.raises(GraphInputError, match="scipy sparse array"):
        jaxmatch.from_scipy(dense)


def test_scipy_inputs_under_vmap():
    """All of scipy's matrices in one batch: the same cardinalities as eagerly."""
    graphs = [jaxmatch.from_scipy(A, **BCAPS) for A, _ in SCIPY_MATRICES.values()]
    batch = jaxmatch.stack(graphs)
    assert batch.row_cap == BCAPS["row_capacity"] and batch.edge_cap == BCAPS["edge_capacity"]
    out = jax.vmap(lambda h: maximum_matching(h))(batch)
    expected = [int((_scipy_mates(A)[0] >= 0).sum()) for A, _ in SCIPY_MATRICES.values()]
    assert out.cardinality.tolist() == expected and not np.asarray(out.status).any()
    for i, g in enumerate(graphs):
        nr, nc = int(g.n_rows), int(g.n_cols)
        certify.check_maximum_matching(g, out.row_mate[i][:nr], out.col_mate[i][:nc])


# --------------------------------------------------------------------------
# bipartite matching: networkx's inputs


def _twelve_vertex_graph():
    """networkx's matching fixture: top nodes 0-5, bottom 6-11; a maximum matching leaves 1 and 10 free."""
    G = nx.Graph()
    G.add_nodes_from(range(12))
    G.add_edges_from([(0, 7), (0, 8), (2, 6), (2, 9), (3, 8), (4, 8), (4, 9), (5, 11)])
    return G, set(range(6))


def _issue_2127_disconnected():
    """networkx's 'disconnected_graph' fixture (issue 2127): nodes (side, letter)."""
    G = nx.Graph()
    G.add_nodes_from((s, x) for x in "ABCDEFGHI" for s in (0, 1))
    edges = [((1, "C"), (0, "A")), ((1, "B"), (0, "A")), ((0, "G"), (1, "I")), ((0, "G"), (1, "H")),
             ((1, "F"), (0, "A")), ((1, "F"), (0, "C")), ((1, "F"), (0, "E")), ((1, "E"), (0, "A")),
             ((1, "E"), (0, "C")), ((0, "C"), (1, "D")), ((0, "C"), (1, "I")), ((0, "C"), (1, "G")),
             ((0, "C"), (1, "H")), ((1, "D"), (0, "A")), ((1, "I"), (0, "A")), ((1, "I"), (0, "E")),
             ((0, "A"), (1, "G")), ((0, "A"), (1, "H")), ((0, "E"), (1, "G")), ((0, "E"), (1, "H"))]
    G.add_edges_from(edges)
    return G, {n for n in G if n[0] == 0}


def _issue_2127_closure():
    """networkx's issue-2127 DAG: its transitive closure as a bipartite graph (0, u) - (1, v)."""
    D = nx.DiGraph([("A", "C"), ("A", "B"), ("C", "E"), ("C", "D"), ("E", "G"), ("E", "F"), ("G", "I"),
                    ("G", "H")])
    tc = nx.transitive_closure(D)
    G = nx.Graph()
    G.add_nodes_from((s, v) for v in tc for s in (0, 1))
    G.add_edges_from(((0, u), (1, v)) for u, v in tc.edges())
    return G, {n for n in G if n[0] == 0}


def _issue_3306():
    G = nx.Graph()
    G.add_edges_from(((i, "L"), (j, "R")) for i, j in [(0, 2), (1, 0), (1, 1), (1, 2), (2, 2)])
    return G, {n for n in G if n[1] == "L"}


def _issue_1927():
    G = nx.Graph()
    G.add_nodes_from(["a", 2, 3, 4], bipartite=0)
    G.add_nodes_from([1, "b", "c"], bipartite=1)
    G.add_edges_from([("a", 1), ("a", "b"), (2, "b"), (2, "c"), (3, "c"), (4, 1)])
    return G, {"a", 2, 3, 4}


def _unorderable():
    a, b, c, d, e = (object() for _ in range(5))
    G = nx.Graph([(a, d), (b, d), (b, e), (c, d)])
    color = nxb.color(G)
    return G, {n for n in G if color[n] == 0}


def _complete(n1, n2):
    G = nx.complete_bipartite_graph(n1, n2)   # nodes carry bipartite = 0 / 1
    return G, set(range(n1))


NX_BIPARTITE = {
    "complete_2_3": _complete(2, 3),
    "complete_5_7": _complete(5, 7),
    "complete_9_4": _complete(9, 4),
    "twelve_vertex": _twelve_vertex_graph(),
    "issue_2127_disconnected": _issue_2127_disconnected(),
    "issue_2127_closure": _issue_2127_closure(),
    "vertex_cover_issue_2384": (nx.Graph([(0, 3), (1, 3), (1, 4), (2, 3)]), {0, 1, 2}),
    "vertex_cover_issue_3306": _issue_3306(),
    "eppstein_issue_1927": _issue_1927(),
    "unorderable_nodes": _unorderable(),
}


def _with_sides(G, top):
    """(graph with node attribute bipartite = 0 for top nodes, rows, columns) in jaxmatch's numbering."""
    H = G.copy()
    nx.set_node_attributes(H, {v: int(v not in top) for v in H}, "bipartite")
    rows = [v for v in H if v in top]
    return H, rows, [v for v in H if v not in top]


def _nx_mates(M, rows, cols):
    at = {v: i for i, v in enumerate(cols)}
    rm = np.array([at[M[r]] if r in M else -1 for r in rows], np.int64)
    at_r = {v: i for i, v in enumerate(rows)}
    cm = np.array([at_r[M[c]] if c in M else -1 for c in cols], np.int64)
    return rm, cm


@pytest.mark.parametrize("method, init", METHODS)
@pytest.mark.parametrize("name", sorted(NX_BIPARTITE))
def test_networkx_matching_inputs(name, method, init):
    G, top = NX_BIPARTITE[name]
    H, rows, cols = _with_sides(G, top)
    g = jaxmatch.from_networkx(H, kind="bipartite", **BCAPS)
    assert (int(g.n_rows), int(g.n_cols), int(g.n_edges)) == (len(rows), len(cols), G.number_of_edges())
    hk = nxb.hopcroft_karp_matching(G, top_nodes=top)
    ep = nxb.eppstein_matching(G, top_nodes=top)
    assert len(hk) == len(ep)
    res = maximum_matching(g, method=method, init=init)
    _check_against(g, res, *_nx_mates(hk, rows, cols), unique=False)
    certify.check_maximum_matching(g, *_nx_mates(ep, rows, cols))


def test_networkx_twelve_vertex_graph_leaves_1_and_10_free():
    G, top = NX_BIPARTITE["twelve_vertex"]
    H, rows, cols = _with_sides(G, top)
    g = jaxmatch.from_networkx(H, kind="bipartite", **BCAPS)
    res = maximum_matching(g)
    free = {rows[i] for i in np.flatnonzero(np.asarray(res.row_mate) < 0)}
    free |= {cols[i] for i in np.flatnonzero(np.asarray(res.col_mate) < 0)}
    assert free == {1, 10}
    # networkx's vertex cover check: a cover of every edge, as large as the matching (Koenig)
    rows_c, cols_c = certify.koenig_cover(g, res.row_mate, res.col_mate)
    cover = {rows[i] for i in np.flatnonzero(rows_c)} | {cols[i] for i in np.flatnonzero(cols_c)}
    assert len(cover) == int(res.cardinality) == len(nxb.to_vertex_cover(G, nxb.maximum_matching(G, top), top))
    assert all(u in cover or v in cover for u, v in G.edges())


def test_networkx_issue_2127_antichain():
    """networkx's issue-2127 test: the Koenig cover of the closure's matching leaves the
    maximum antichain {B, D, F, H, I} of the DAG (Dilworth)."""
    G, top = NX_BIPARTITE["issue_2127_closure"]
    H, rows, cols = _with_sides(G, top)
    g = jaxmatch.from_networkx(H, kind="bipartite", **BCAPS)
    res = maximum_matching(g)
    rows_c, cols_c = certify.koenig_cover(g, res.row_mate, res.col_mate)
    covered = {rows[i][1] for i in np.flatnonzero(rows_c)} | {cols[i][1] for i in np.flatnonzero(cols_c)}
    assert set("ABCDEFGHI") - covered == set("BDFIH")
    nx_cover = nxb.to_vertex_cover(G, nxb.hopcroft_karp_matching(G, top), top)
    assert set("ABCDEFGHI") - {v for _, v in nx_cover} == set("BDFIH")


def test_networkx_disconnected_needs_sides():
    """networkx raises AmbiguousSolution on the disconnected graph without top nodes; jaxmatch
    2-colours it (colour 0 = rows) and finds a matching of the same size either way."""
    G, top = NX_BIPARTITE["issue_2127_disconnected"]
    with pytest.raises(nx.AmbiguousSolution):
        nxb.hopcroft_karp_matching(G)
    g = jaxmatch.from_networkx(G, kind="bipartite", **BCAPS)
    res = maximum_matching(g)
    assert int(res.cardinality) == len(nxb.hopcroft_karp_matching(G, top)) // 2
    certify.check_maximum_matching(g, res.row_mate, res.col_mate)


# --------------------------------------------------------------------------
# maximum flow: scipy's inputs


def _scipy_path(n=100):
    """scipy's gh-14385 input (a path 0 -> 1 -> ... -> n-1 of unit arcs), n scaled down from 100,000."""
    return sp.csr_array((np.ones(n - 1, np.int32), np.arange(1, n), np.r_[np.arange(n), n - 1]), shape=(n, n))


SCIPY_NETWORKS = {
    "simple": (sp.csr_array([[0, 5], [0, 0]]), 0, 1),
    "bottleneck": (sp.csr_array([[0, 5, 0], [0, 0, 3], [0, 0, 0]]), 0, 2),
    "backwards_flow": (sp.csr_array([[0, 10, 0, 0, 10, 0, 0, 0], [0, 0, 10, 0, 0, 0, 0, 0],
                                     [0, 0, 0, 10, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 10],
                                     [0, 0, 0, 10, 0, 10, 0, 0], [0, 0, 0, 0, 0, 0, 10, 0],
                                     [0, 0, 0, 0, 0, 0, 0, 10], [0, 0, 0, 0, 0, 0, 0, 0]]), 0, 7),
    "clrs_26_1": (sp.csr_array([[0, 16, 13, 0, 0, 0], [0, 0, 10, 12, 0, 0], [0, 4, 0, 0, 14, 0],
                                [0, 0, 9, 0, 0, 20], [0, 0, 0, 7, 0, 4], [0, 0, 0, 0, 0, 0]]), 0, 5),
    "disconnected_self_loop": (sp.csr_array([[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, 9, 3], [0, 0, 0, 0]]), 0, 3),
    "path_gh14385": (_scipy_path(), 0, 99),
}
SCIPY_VALUES = {"simple": 5, "bottleneck": 3, "backwards_flow": 20, "clrs_26_1": 23, "disconnected_self_loop": 0,
                "path_gh14385": 1}   # the values scipy's tests assert


def _check_flow(net, s, t, res, expected):
    assert int(res.status) == 0, res.status_name
    assert int(res.flow_value) == expected
    certify.check_flow(net, s, t, res.flow, res.flow_value)
    certify.check_min_cut(net, s, t, np.asarray(res.source_side), res.flow_value)


@pytest.mark.parametrize("options", [{}, {"layout": "rcsr"}, {"reverse": "search"}], ids=["bcsr", "rcsr", "search"])
@pytest.mark.parametrize("name", sorted(SCIPY_NETWORKS))
def test_scipy_flow_inputs(name, options):
    A, s, t = SCIPY_NETWORKS[name]
    peer = int(maximum_flow(A, s, t).flow_value)
    assert peer == SCIPY_VALUES[name]
    D = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph, edge_attribute="capacity")
    assert nx.maximum_flow_value(D, s, t) == peer   # the two peers agree
    net = jaxmatch.from_scipy(A, kind="flow", **FCAPS)
    _check_flow(net, s, t, max_flow(net, s, t, **options), peer)
    cut = min_cut(net, s, t, **options)
    assert int(cut.value) == peer == int(np.asarray(net.edges()[2])[np.asarray(cut.cut_arcs)].sum())


def test_scipy_flow_of_the_path_is_the_path():
    """scipy's gh-14385 check: the unit path carries one unit on every arc."""
    A, s, t = SCIPY_NETWORKS["path_gh14385"]
    res = max_flow(jaxmatch.from_scipy(A, kind="flow", **FCAPS), s, t)
    assert np.asarray(res.flow).tolist() == [1] * 99


def test_scipy_csc_input():
    """scipy's maximum_flow rejects CSC input; jaxmatch takes any format and gives the CSR answer."""
    A, s, t = SCIPY_NETWORKS["clrs_26_1"]
    with pytest.raises(TypeError):
        maximum_flow(sp.csc_array(A), s, t)
    net = jaxmatch.from_scipy(sp.csc_array(A), kind="flow", **FCAPS)
    _check_flow(net, s, t, max_flow(net, s, t), 23)


@pytest.mark.parametrize("make, source, sink, match", [
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 0, 0, "share vertex 0"),           # source is sink
    (lambda: sp.csr_array([[0, 1], [0, 0]]), -1, 1, "source -1 is out of range"),
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 2, 1, "source 2 is out of range"),
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 3, 1, "source 3 is out of range"),
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 0, -1, "sink -1 is out of range"),
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 0, 2, "sink 2 is out of range"),
    (lambda: sp.csr_array([[0, 1], [0, 0]]), 0, 3, "sink 3 is out of range"),
    (lambda: sp.csr_array([[0, 1.5], [0, 0]], dtype=np.float64), 0, 1, "integer capacities"),
    (lambda: sp.csr_array([[0, 1, 2], [2, 1, 0]]), 0, 1, "square"),
    (lambda: np.array([[0, 1], [0, 0]]), 0, 1, "scipy sparse array"),
])
def test_scipy_flow_rejections(make, source, sink, match):
    """Every input scipy's tests expect maximum_flow to reject, jaxmatch rejects before tracing."""
    A = make()
    with pytest.raises((ValueError, TypeError)):
        maximum_flow(A, source, sink)
    with pytest.raises(GraphInputError, match=match):
        max_flow(jaxmatch.from_scipy(A, kind="flow", **FCAPS), source, sink)


# --------------------------------------------------------------------------
# maximum flow: networkx's inputs


def _digraph(edges, cls=nx.DiGraph, attr="capacity"):
    G = cls()
    for e in edges:
        u, v, *c = e
        G.add_edge(u, v, **({attr: c[0]} if c else {}))   # no capacity: infinite, as in networkx
    return G


def _bundle(k, p, cap):
    """networkx's two-phase / cutoff input: k disjoint paths of p arcs from s to t, p scaled down."""
    G = nx.DiGraph()
    for i in range(k):
        G.add_edge("s", (i, 0), capacity=cap)
        nx.add_path(G, ((i, j) for j in range(p)), capacity=cap)
        G.add_edge((i, p - 1), "t", capacity=cap)
    return G


def _pyramid(n):
    """networkx's large-graph pyramid: every arc at capacity in a flow of value 1 (the arcs into
    't' unbounded). Its fractional capacities are scaled by lcm(1..n) to integers."""
    scale = reduce(math.lcm, range(1, n + 1))
    G = nx.DiGraph()
    for i in range(n - 1):
        cap = Fraction(1, i + 2)
        for j in range(i + 1):
            G.add_edge((i, j), (i + 1, j), capacity=int(cap * scale))
            cap = Fraction(1, i + 1) - cap
            G.add_edge((i, j), (i + 1, j + 1), capacity=int(cap * scale))
            cap = Fraction(1, i + 2) - cap
    for j in range(n):
        G.add_edge((n - 1, j), "t")
    return G, scale


_pyr, _pyr_value = _pyramid(6)
_complete = nx.complete_graph(12)
nx.set_edge_attributes(_complete, 5, "capacity")
_k5 = nx.complete_graph(5)
nx.set_edge_attributes(_k5, 1, "capacity")
_disconnected = nx.Graph()
_disconnected.add_weighted_edges_from([(0, 1, 1), (1, 2, 1), (2, 3, 1)], weight="capacity")
_disconnected.remove_node(1)
_enough_space = nx.DiGraph()
nx.add_path(_enough_space, [0, 1, 3], capacity=1)
nx.add_path(_enough_space, [1, 2, 3], capacity=1)

NX_NETWORKS = {  # name -> (graph, source, sink, capacity attribute, the value networkx's test asserts)
    "graph1_undirected": (_digraph([(1, 2, 1.0)], nx.Graph), 1, 2, "capacity", 1),
    "graph2_undirected": (_digraph([("x", "a", 3.0), ("x", "b", 1.0), ("a", "c", 3.0), ("b", "c", 5.0),
                                    ("b", "d", 4.0), ("d", "e", 2.0), ("c", "y", 2.0), ("e", "y", 3.0)], nx.Graph),
                          "x", "y", "capacity", 4),
    "digraph1_classic": (_digraph([("a", "b", 1000.0), ("a", "c", 1000.0), ("b", "c", 1.0), ("b", "d", 1000.0),
                                   ("c", "d", 1000.0)]), "a", "d", "capacity", 2000),
    "digraph2_zero_flow_arcs": (_digraph([("s", "b", 2), ("s", "c", 1), ("c", "d", 1), ("d", "a", 1), ("b", "a", 2),
                                          ("a", "t", 2)]), "s", "t", "capacity", 2),
    "digraph3_cormen": (_digraph([("s", "v1", 16.0), ("s", "v2", 13.0), ("v1", "v2", 10.0), ("v2", "v1", 4.0),
                                  ("v1", "v3", 12.0), ("v3", "v2", 9.0), ("v2", "v4", 14.0), ("v4", "v3", 7.0),
                                  ("v3", "t", 20.0), ("v4", "t", 4.0)]), "s", "t", "capacity", 23),
    "digraph4_topcoder": (_digraph([("x", "a", 3.0), ("x", "b", 1.0), ("a", "c", 3.0), ("b", "c", 5.0),
                                    ("b", "d", 4.0), ("d", "e", 2.0), ("c", "y", 2.0), ("e", "y", 3.0)]),
                          "x", "y", "capacity", 3),
    "wikipedia_dinitz": (_digraph([("s", 1, 10), ("s", 2, 10), (1, 3, 4), (1, 4, 8), (1, 2, 2), (2, 4, 9),
                                   (3, "t", 10), (4, 3, 6), (4, "t", 10)]), "s", "t", "capacity", 19),
    "optional_capacity_spam": (_digraph([("x", "a", 3.0), ("x", "b", 1.0), ("a", "c", 3.0), ("b", "c", 5.0),
                                         ("b", "d", 4.0), ("d", "e", 2.0), ("c", "y", 2.0), ("e", "y", 3.0)],
                                        attr="spam"), "x", "y", "spam", 3),
    "digraph_infcap_edges": (_digraph([("s", "a"), ("s", "b", 30), ("a", "c", 25), ("b", "c", 12), ("a", "t", 60),
                                       ("c", "t")]), "s", "t", "capacity", 97),
    "digraph_infcap_digon": (_digraph([("s", "a", 85), ("s", "b", 30), ("a", "c"), ("c", "a"), ("b", "c", 12),
                                       ("a", "t", 60), ("c", "t", 37)]), "s", "t", "capacity", 97),
    "graph_infcap_edges": (_digraph([("s", "a"), ("s", "b", 30), ("a", "c", 25), ("b", "c", 12), ("a", "t", 60),
                                     ("c", "t")], nx.Graph), "s", "t", "capacity", 97),
    "digraph5_ticket_429": (_digraph([("s", "a", 2), ("s", "b", 2), ("a", "b", 5), ("a", "t", 1), ("b", "a", 1),
                                      ("b", "t", 3)]), "s", "t", "capacity", 4),
    "disconnected": (_disconnected, 0, 3, "capacity", 0),
    "enough_space_ticket_1542": (_enough_space, 0, 3, "capacity", 1),
    "two_phase_bundle": (_bundle(5, 20, 1), "s", "t", "capacity", 5),
    "cutoff_bundle": (_bundle(5, 20, 2), "s", "t", "capacity", 10),
    "complete_graph_k5": (_k5, 0, 4, "capacity", 4),
    "complete_graph_scaled": (_complete, 1, 2, "capacity", 5 * 11),
    "pyramid_6": (_pyr, (0, 0), "t", "capacity", _pyr_value),
}


def _as_network(G, attr):
    """FlowNetwork of a networkx graph: an undirected edge is two arcs (as networkx's residual network
    has), capacities made integers, a missing (infinite) one replaced by more than all the others."""
    D = G.to_directed() if not G.is_directed() else G
    caps = [c for _, _, c in D.edges(data=attr) if c is not None]
    big = int(sum(caps)) + 1
    H = nx.DiGraph()
    H.add_nodes_from(D)
    H.add_edges_from((u, v, {attr: big if c is None else int(c)}) for u, v, c in D.edges(data=attr))
    return jaxmatch.from_networkx(H, kind="flow", capacity=attr, **FCAPS), list(H.nodes)


@pytest.mark.parametrize("options", [{}, {"layout": "rcsr"}, {"reverse": "search"}], ids=["bcsr", "rcsr", "search"])
@pytest.mark.parametrize("name", sorted(NX_NETWORKS))
def test_networkx_flow_inputs(name, options):
    G, s, t, attr, value = NX_NETWORKS[name]
    peer = nx.maximum_flow_value(G, s, t, capacity=attr)
    assert peer == value
    cut_value, (reach, _) = nx.minimum_cut(G, s, t, capacity=attr)
    assert cut_value == value
    net, nodes = _as_network(G, attr)
    si, ti = nodes.index(s), nodes.index(t)
    _check_flow(net, si, ti, max_flow(net, si, ti, **options), value)
    cut = min_cut(net, si, ti, **options)
    assert int(cut.value) == value
    side = np.asarray(cut.source_side)
    assert side[si] and not side[ti]


def test_networkx_multigraph_keeps_parallel_arcs():
    """networkx's max flow rejects multigraphs; jaxmatch keeps parallel arcs, so the value is that of
    the simple graph with their capacities added."""
    M = nx.MultiDiGraph()
    M.add_edges_from([(0, 1, {"capacity": 2}), (0, 1, {"capacity": 3}), (1, 2, {"capacity": 4}),
                      (1, 2, {"capacity": 4})])
    with pytest.raises(nx.NetworkXError):
        nx.maximum_flow_value(M, 0, 2)
    S = nx.DiGraph()
    for u, v, c in M.edges(data="capacity"):
        S.add_edge(u, v, capacity=S.get_edge_data(u, v, {"capacity": 0})["capacity"] + c)
    net = jaxmatch.from_networkx(M, kind="flow", **FCAPS)
    assert int(net.n_arcs) == 4
    _check_flow(net, 0, 2, max_flow(net, 0, 2), nx.maximum_flow_value(S, 0, 2))


def test_networkx_flow_rejections():
    """networkx's rejected inputs: terminals not in the graph, source = sink."""
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 1), (1, 2, 1), (2, 3, 1)], weight="capacity")
    G.remove_node(0)                        # the source is gone: networkx raises; 3 vertices remain
    with pytest.raises(nx.NetworkXError):
        nx.maximum_flow_value(G, 0, 3)
    net = jaxmatch.from_networkx(G, kind="flow", **FCAPS)
    with pytest.raises(GraphInputError, match="sink 3 is out of range"):
        max_flow(net, 0, 3)                 # node 3 of networkx is vertex 2; id 3 does not exist
    H = nx.DiGraph()
    H.add_node(0)
    with pytest.raises(nx.NetworkXError):
        nx.maximum_flow_value(H, 0, 0)
    with pytest.raises(GraphInputError, match="share vertex 0"):
        max_flow(jaxmatch.from_networkx(H, kind="flow", **FCAPS), 0, 0)
    with pytest.raises(GraphInputError, match="no 'capacity' attribute"):
        jaxmatch.from_networkx(_digraph([("s", "a"), ("a", "t", 1)]), kind="flow")   # infinite: give a number


def test_peer_networks_under_vmap():
    """Every network above in one batch (one source and sink each): the values of the peers."""
    nets, sources, sinks, values = [], [], [], []
    for A, s, t in SCIPY_NETWORKS.values():
        nets.append(jaxmatch.from_scipy(A, kind="flow", **FCAPS))
        sources.append(s), sinks.append(t), values.append(int(maximum_flow(A, s, t).flow_value))
    for G, s, t, attr, value in NX_NETWORKS.values():
        net, nodes = _as_network(G, attr)
        nets.append(net)
        sources.append(nodes.index(s)), sinks.append(nodes.index(t)), values.append(value)
    batch = jaxmatch.stack(nets)
    assert batch.vertex_cap == FCAPS["vertex_capacity"] and batch.arc_cap == FCAPS["arc_capacity"]
    out = jax.vmap(lambda n, s, t: max_flow(n, s, t))(batch, np.array(sources), np.array(sinks))
    assert out.flow_value.tolist() == values and not np.asarray(out.status).any()
    for i, net in enumerate(nets):
        certify.check_flow(net, sources[i], sinks[i], out.flow[i][:int(net.n_arcs)], values[i])
