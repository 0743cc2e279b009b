"""Tests of jaxmatch.io: adapters (scipy, networkx, igraph) and file readers."""
import doctest
import gzip
import io as pyio
from pathlib import Path

import igraph as ig
import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import jaxmatch.io as jio
from jaxmatch import datasets
from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError, stack
from jaxmatch.io import from_igraph, from_networkx, from_scipy, read, to_scipy

# The bundled data files (jaxmatch/datasets, gzip-compressed), by dataset name.
DATA = Path(datasets.__file__).resolve().parent

# Sizes and optimum values from jaxmatch/datasets/SOURCES.md. KONECT edge counts:
# every data line of the four files is a distinct pair (no duplicates to merge), so
# the stored edge count equals the raw line count (minus the Brunson header line).
BIPARTITE = {  # dataset: (n_rows, n_cols, n_edges, maximum matching)
    "corporate_leadership": (20, 24, 99, 20),   # out.brunson_corporate-leadership_corporate-leadership
    "revolution": (136, 5, 160, 5),             # out.brunson_revolution_revolution
    "unicodelang": (254, 614, 1255, 188),       # out.unicodelang
    "marvel": (6486, 12942, 96662, 5058),       # out.marvel
}
GRAPHS = {  # dataset: (n, undirected simple edges, weighted)
    "karate": (34, 78, True),                   # karate.gml
    "dolphins": (62, 159, False),               # dolphins.gml
    "lesmis": (77, 254, True),                  # lesmis.gml
    "netscience": (1589, 2742, True),           # netscience.gml
    "celegans": (297, 2148, False),             # celegans.g
    # celegansneural.gml: directed multigraph, 2359 arcs: as undirected simple edges, 2148
    "celegansneural": (297, 2148, True),
    # AdamicBlog.gml: directed multigraph, 19090 arcs; 16718 undirected edges, 3 of them self-loops
    "adamic_blogs": (1490, 16718, True),        # reciprocal arcs sum to weight 2
    "facebook": (4039, 88234, False),           # Facebook_4039.csv
}
FLOWS = {  # dataset: (n, arcs, max flow)
    "dimacs_example": (7, 9, 6),                # example.max
    "dimacs_test": (4, 5, 25),                  # test_DIMACS.txt
    "genrmf_small": (48, 176, 228),             # network.dimacs
    "mesh10": (102, 290, 9_860_177),            # m10.max
    "mesh30": (902, 2670, 28_258_807),          # m30.max
}
MODULARITY = {  # dataset: best known modularity of the unweighted simple graph, where published
    "karate": 0.4198, "dolphins": 0.5285, "lesmis": 0.5600, "netscience": 0.9599, "celegans": 0.406,
}


def same(a, b):
    """Same type, capacities, sizes and stored arrays."""
    assert type(a) is type(b)
    assert a.capacities() == b.capacities()
    for x, y in zip(a.edges(), b.edges()):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_array_equal(x, y)
    if isinstance(a, Graph):
        assert a.weighted == b.weighted
        np.testing.assert_array_equal(a.adj.weights, b.adj.weights)
    if isinstance(a, FlowNetwork):
        assert a.layout == b.layout


def dense(g):
    return to_scipy(g).toarray()


def flow_value(net, s, t):
    A = sp.csr_array(to_scipy(net))
    A.setdiag(0)  # scipy's maximum_flow rejects self-loops; they never carry flow
    A.eliminate_zeros()
    return maximum_flow(sp.csr_array(A.astype(np.int32)), s, t).flow_value


def write(tmp_path, name, text, compress=False):
    p = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    p.write_bytes(gzip.compress(data) if compress else data)
    return p


# --------------------------------------------------------------------------
# the bundled data files (jaxmatch.datasets)


def test_data_directory_is_present():
    assert DATA.is_dir(), f"test data missing: {DATA}"
    assert (DATA / "SOURCES.md").is_file()


def test_every_data_file_is_known():
    files = sorted(p.name for p in DATA.iterdir() if p.is_file() and p.suffix == ".gz")
    assert files
    known = set(BIPARTITE) | set(GRAPHS) | set(FLOWS)
    assert set(datasets.names()) == known, "classify new datasets in tests/test_io.py"
    assert sorted(datasets.path(name).name for name in known) == files


@pytest.mark.parametrize("name", datasets.names())
def test_every_dataset_has_published_sizes_and_answers(name):
    d = datasets.load(name)
    assert d.name == name and name in datasets.names(d.kind)
    raw = read(datasets.path(name))  # the file's own default kind gives the same graph
    if d.kind == "flow":
        assert raw[1:] == (d.source, d.sink)
        raw = raw[0]
    else:
        assert d.source is None and d.sink is None
    same(raw, d.graph)
    g = d.graph
    if d.kind == "bipartite":
        nr, nc, m, matching = BIPARTITE[name]
        assert isinstance(g, BipartiteGraph)
        assert (int(g.n_rows), int(g.n_cols), int(g.n_edges)) == (nr, nc, m)
        found = int((maximum_bipartite_matching(to_scipy(g), perm_type="column") >= 0).sum())
        assert d.answer == {"cardinality": matching} and found == matching
    elif d.kind == "flow":
        n, arcs, value = FLOWS[name]
        assert isinstance(g, FlowNetwork)
        assert (int(g.n), int(g.n_arcs)) == (n, arcs)
        assert d.answer == {"flow_value": value} and flow_value(g, d.source, d.sink) == value
    else:
        n, m, weighted = GRAPHS[name]
        assert isinstance(g, Graph)
        assert (int(g.n), int(g.n_edges), g.weighted) == (n, m, weighted)
        assert d.answer == ({"modularity": MODULARITY[name]} if name in MODULARITY else {})
    assert d.description and "\n" not in d.description


@pytest.mark.parametrize("name", sorted(BIPARTITE))
def test_konect_bipartite(name):
    nr, nc, m, matching = BIPARTITE[name]
    g = read(datasets.path(name))
    assert isinstance(g, BipartiteGraph)
    assert (int(g.n_rows), int(g.n_cols), int(g.n_edges)) == (nr, nc, m)
    A = to_scipy(g)
    assert A.shape == (nr, nc) and A.nnz == m
    assert int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum()) == matching


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_newman_graphs(name):
    n, m, weighted = GRAPHS[name]
    g = read(datasets.path(name))
    assert isinstance(g, Graph)
    assert (int(g.n), int(g.n_edges), g.weighted) == (n, m, weighted)
    A = to_scipy(g)
    assert (A != A.T).nnz == 0


@pytest.mark.parametrize("name", sorted(r for r in GRAPHS if datasets.path(r).name.endswith(".gml.gz")))
def test_gml_matches_networkx(name):
    H = nx.read_gml(datasets.path(name), label="id")  # networkx reads .gz files
    g = read(datasets.path(name))
    # independent reference: networkx's own undirected adjacency; repeated arcs add their
    # values (their counts in an unweighted file: the Graph rule stores the multiplicity)
    U = nx.Graph()
    U.add_nodes_from(H)
    for a, b, d in H.edges(data=True):
        w = d.get("value", 1) if g.weighted else 1
        U.add_edge(a, b, value=U.edges[a, b]["value"] + w if U.has_edge(a, b) else w)
    ref = nx.to_scipy_sparse_array(U, nodelist=list(H.nodes), weight="value")
    np.testing.assert_allclose(dense(g), ref.toarray(), rtol=1e-6)


def test_celegans_edge_list_has_no_repeats():
    raw = np.loadtxt(datasets.path("celegans"), dtype=np.int64)  # numpy reads .gz files
    assert raw.shape == (2148, 2)
    g = read(datasets.path("celegans"))
    assert int(g.n_edges) == len({(min(a, b), max(a, b)) for a, b in raw})


@pytest.mark.parametrize("name", sorted(FLOWS))
def test_dimacs_files(name):
    n, arcs, value = FLOWS[name]
    net, s, t = read(datasets.path(name))
    assert isinstance(net, FlowNetwork)
    assert (int(net.n), int(net.n_arcs)) == (n, arcs)
    assert (s, t) == (0, n - 1)
    assert flow_value(net, s, t) == value


def test_read_gz_copies(tmp_path):
    # the bundled files are gzip-compressed: their plain copies read the same
    for name in ["karate", "mesh10", "dimacs_test", "revolution", "celegans", "unicodelang"]:
        gz = datasets.path(name)
        src = tmp_path / gz.name.removesuffix(".gz")
        src.write_bytes(gzip.decompress(gz.read_bytes()))
        a, b = read(src), read(gz)
        if isinstance(a, tuple):
            assert a[1:] == b[1:]
            a, b = a[0], b[0]
        same(a, b)


# --------------------------------------------------------------------------
# scipy


def test_from_scipy_formats_agree():
    A = sp.random_array((7, 9), density=0.3, format="csr", rng=1)
    ref = from_scipy(A)
    for fmt in ["csc", "coo", "lil", "dok", "bsr", "dia"]:
        same(from_scipy(A.asformat(fmt)), ref)
    same(from_scipy(sp.csr_matrix(A)), ref)  # spmatrix as well as sparray
    assert BipartiteGraph.from_scipy(A).n_edges == A.nnz


def test_dense_input_is_rejected():
    with pytest.raises(GraphInputError, match=r"csr_array\(A\)"):
        from_scipy(np.eye(3))
    with pytest.raises(GraphInputError, match="sparse"):
        from_scipy([[1, 0], [0, 1]], "graph")


def test_bad_kind_and_shape():
    with pytest.raises(GraphInputError, match="kind must be"):
        from_scipy(sp.eye_array(2), "digraph")
    for kind in ["graph", "flow"]:
        with pytest.raises(GraphInputError, match="square"):
            from_scipy(sp.csr_array(np.ones((2, 3), np.int64)), kind)
    with pytest.raises(GraphInputError, match="kind='graph' only"):
        from_scipy(sp.eye_array(2), "bipartite", symmetrize=True)


def test_bipartite_drops_explicit_zeros_and_merges_duplicates():
    A = sp.coo_array((np.array([1.0, 0.0, 2.0, 3.0]), (np.array([0, 1, 1, 1]), np.array([0, 1, 2, 2]))),
                     shape=(2, 4))
    g = from_scipy(A)
    r, c, nr, nc = g.edges()
    assert (nr, nc) == (2, 4)
    assert list(zip(r.tolist(), c.tolist())) == [(0, 0), (1, 2)]
    with pytest.raises(GraphInputError, match="duplicate"):
        from_scipy(A, duplicates="error")


def test_graph_from_scipy_weights_loops_and_duplicates():
    A = sp.coo_array((np.array([2.0, 1.0, 1.0, 5.0, 0.0, 0.0]),
                      (np.array([0, 1, 1, 2, 2, 3]), np.array([1, 0, 0, 2, 3, 2]))), shape=(4, 4))
    g = from_scipy(A, "graph")
    assert (int(g.n), int(g.n_edges), g.weighted) == (4, 3, True)
    np.testing.assert_array_equal(dense(g), A.toarray())  # duplicates sum, loop on the diagonal
    u, v, w, _ = g.edges()
    assert (2, 3) in set(zip(u.tolist(), v.tolist()))  # explicit zero: an edge of weight 0
    h = from_scipy(A, "graph", weighted=False)
    assert not h.weighted and int(h.n_edges) == 3
    with pytest.raises(GraphInputError, match="duplicate"):
        from_scipy(A, "graph", duplicates="error")
    assert from_scipy(sp.csr_array(A.toarray() > 0), "graph").weighted is False  # bool: pattern


def test_asymmetric_matrix():
    A = sp.csr_array(np.array([[0, 1.0, 0], [2.0, 0, 0], [0, 0, 0]]))
    with pytest.raises(GraphInputError, match=r"A\[0, 1\] = 1.0 but A\[1, 0\] = 2.0"):
        from_scipy(A, "graph")
    g = from_scipy(A, "graph", weighted=False)  # same pattern: only the pattern is checked
    assert int(g.n_edges) == 1 and not g.weighted
    B = sp.csr_array(np.array([[0, 0, 0], [0, 0, 3.0], [0, 0, 0]]))
    with pytest.raises(GraphInputError, match=r"A\[1, 2\] = 3.0 but A\[2, 1\] is not stored"):
        from_scipy(B, "graph", weighted=False)
    s = from_scipy(A, "graph", symmetrize=True)
    np.testing.assert_array_equal(dense(s), np.maximum(A.toarray(), A.toarray().T))
    s = from_scipy(B, "graph", symmetrize=True)
    np.testing.assert_array_equal(dense(s), np.maximum(B.toarray(), B.toarray().T))


def test_flow_needs_integer_capacities():
    A = sp.csr_array(np.array([[0, 1.5], [0, 0]]))
    with pytest.raises(GraphInputError, match="integer capacities.*float64"):
        from_scipy(A, "flow")
    with pytest.raises(GraphInputError, match="integer capacities.*bool"):
        from_scipy(A > 0, "flow")
    with pytest.raises(GraphInputError, match="negative"):
        from_scipy(sp.csr_array(np.array([[0, -1], [0, 0]])), "flow")


def test_flow_keeps_coo_duplicates_as_parallel_arcs():
    A = sp.coo_array((np.array([3, 4, 5]), (np.array([0, 0, 1]), np.array([1, 1, 2]))), shape=(3, 3))
    net = from_scipy(A, "flow", layout="rcsr")
    assert int(net.n_arcs) == 3 and net.layout == "rcsr"
    t, h, c, n = net.edges()
    assert (t.tolist(), h.tolist(), c.tolist(), n) == ([0, 0, 1], [1, 1, 2], [3, 4, 5], 3)
    np.testing.assert_array_equal(dense(net), A.toarray())  # to_scipy sums parallel arcs
    assert int(from_scipy(to_scipy(net), "flow").n_arcs) == 2


def test_to_scipy_types_and_batches():
    g = BipartiteGraph.from_edges([0, 1], [2, 0], 3, 4)
    A = to_scipy(g)
    assert isinstance(A, sp.csr_array) and A.dtype == np.int8 and A.shape == (3, 4)
    assert to_scipy(Graph.from_edges([0], [1], n=3)).dtype == np.float64
    with pytest.raises(GraphInputError, match="batch"):
        to_scipy(stack([g, g]))
    with pytest.raises(GraphInputError, match="jaxmatch graph"):
        to_scipy(A)


def test_to_scipy_empty_graphs():
    assert to_scipy(BipartiteGraph.from_edges([], [], 0, 0)).shape == (0, 0)
    same(from_scipy(to_scipy(Graph.from_edges([], [], n=3)), "graph", weighted=False),
         Graph.from_edges(np.zeros(0, int), np.zeros(0, int), n=3))
    net = from_scipy(sp.csr_array((2, 2), dtype=np.int32), "flow")
    assert int(net.n_arcs) == 0 and to_scipy(net).shape == (2, 2)


def sparse_matrices(square=False, integer=False):
    @st.composite
    def build(draw):
        nr = draw(st.integers(0, 9))
        nc = nr if square else draw(st.integers(0, 9))
        m = draw(st.integers(0, 3 * max(nr * nc, 1))) if nr * nc else 0
        rows = draw(st.lists(st.integers(0, max(nr - 1, 0)), min_size=m, max_size=m))
        cols = draw(st.lists(st.integers(0, max(nc - 1, 0)), min_size=m, max_size=m))
        vals = draw(st.lists(st.integers(1, 9), min_size=m, max_size=m))
        A = sp.coo_array((np.array(vals, np.int64 if integer else np.float64),
                          (np.array(rows, np.int64), np.array(cols, np.int64))), shape=(nr, nc))
        return A
    return build()


@settings(max_examples=25, deadline=None)
@given(sparse_matrices())
def test_roundtrip_bipartite(A):
    g = from_scipy(A)
    np.testing.assert_array_equal(dense(g), (A.toarray() != 0).astype(np.int8))
    same(from_scipy(to_scipy(g)), g)


@settings(max_examples=25, deadline=None)
@given(sparse_matrices(square=True))
def test_roundtrip_graph(A):
    S = (A + A.T).tocsr()
    g = from_scipy(S, "graph")
    np.testing.assert_allclose(dense(g), S.toarray(), rtol=1e-6)
    same(from_scipy(to_scipy(g), "graph"), g)
    h = from_scipy(S, "graph", weighted=False)
    same(from_scipy(to_scipy(h), "graph", weighted=False), h)


@settings(max_examples=25, deadline=None)
@given(sparse_matrices(square=True, integer=True))
def test_roundtrip_flow(A):
    C = A.tocsr()  # canonical: no parallel arcs, row-major order
    net = from_scipy(C, "flow")
    np.testing.assert_array_equal(dense(net), C.toarray())
    same(from_scipy(to_scipy(net), "flow"), net)


# --------------------------------------------------------------------------
# networkx and igraph


def test_networkx_graph_against_to_scipy_sparse_array():
    G = nx.les_miserables_graph()
    g = from_networkx(G)
    assert g.weighted and int(g.n) == G.number_of_nodes()
    ref = nx.to_scipy_sparse_array(G, nodelist=list(G.nodes), weight="weight")
    np.testing.assert_allclose(dense(g), ref.toarray())
    h = from_networkx(G, weight=None)
    assert not h.weighted
    np.testing.assert_array_equal(dense(h), nx.to_scipy_sparse_array(G, weight=None).toarray())


def test_networkx_multigraph_sums_and_loops():
    G = nx.MultiGraph()
    G.add_nodes_from(["a", "b", "c", "d"])
    G.add_edge("a", "b", weight=1.5)
    G.add_edge("b", "a", weight=2.0)
    G.add_edge("c", "c", weight=4.0)
    G.add_edge("c", "d")  # no weight: counts 1
    g = from_networkx(G)
    ref = nx.to_scipy_sparse_array(G, nodelist=list(G.nodes))
    np.testing.assert_allclose(dense(g), ref.toarray())
    assert int(g.n_edges) == 3


def test_networkx_flow():
    G = nx.MultiDiGraph()
    G.add_edge("s", "x", capacity=3)
    G.add_edge("s", "x", capacity=2)
    G.add_edge("x", "t", capacity=4)
    net = from_networkx(G, "flow")
    assert int(net.n_arcs) == 3
    ref = nx.to_scipy_sparse_array(G, nodelist=list(G.nodes), weight="capacity")
    np.testing.assert_array_equal(dense(net), ref.toarray())
    nodes = list(G.nodes)
    assert flow_value(net, nodes.index("s"), nodes.index("t")) == \
        nx.maximum_flow_value(nx.DiGraph(nx.to_scipy_sparse_array(G, weight="capacity")), 0, 2,
                              capacity="weight")


def test_networkx_errors():
    D = nx.DiGraph([(0, 1)])
    with pytest.raises(GraphInputError, match="to_undirected"):
        from_networkx(D)
    with pytest.raises(GraphInputError, match="'capacity' attribute"):
        from_networkx(D, "flow")
    D[0][1]["capacity"] = 1.5
    with pytest.raises(GraphInputError, match="integer"):
        from_networkx(D, "flow")
    with pytest.raises(GraphInputError, match="directed graph"):
        from_networkx(nx.path_graph(3), "flow")
    with pytest.raises(GraphInputError, match="graph is not bipartite"):
        from_networkx(nx.cycle_graph(5), "bipartite")
    G = nx.path_graph(3)
    nx.set_node_attributes(G, {0: 0, 1: 0, 2: 1}, "bipartite")
    with pytest.raises(GraphInputError, match="joins two vertices of side 0"):
        from_networkx(G, "bipartite")
    nx.set_node_attributes(G, {0: 0, 1: 2, 2: 0}, "bipartite")
    with pytest.raises(GraphInputError, match="must be 0"):
        from_networkx(G, "bipartite")


def test_networkx_bipartite():
    G = nx.algorithms.bipartite.random_graph(6, 8, 0.4, seed=3)
    rows = [x for x in G if G.nodes[x]["bipartite"] == 0]
    cols = [x for x in G if G.nodes[x]["bipartite"] == 1]
    ref = nx.algorithms.bipartite.biadjacency_matrix(G, rows, cols)
    g = from_networkx(G, "bipartite")
    np.testing.assert_array_equal(dense(g), ref.toarray())
    # no attribute: 2-colouring, numbered in node order within each side
    H = nx.Graph([("a", "x"), ("b", "x"), ("b", "y")])
    assert nx.algorithms.bipartite.color(H) == {"a": 1, "x": 0, "b": 1, "y": 0}
    h = from_networkx(H, "bipartite")  # rows x, y; columns a, b
    assert (int(h.n_rows), int(h.n_cols)) == (2, 2)
    np.testing.assert_array_equal(dense(h), [[1, 1], [0, 1]])


def test_igraph_adapters():
    rng = np.random.default_rng(0)
    pairs = {tuple(sorted(p)) for p in rng.integers(0, 12, (40, 2)).tolist() if p[0] != p[1]}
    G = ig.Graph(n=12, edges=sorted(pairs))
    assert not from_igraph(G, weight=None).weighted  # a simple graph without weights
    G.add_edges([(0, 0), (1, 2), (1, 2)])  # a loop and a parallel edge
    G.es["weight"] = np.arange(1, G.ecount() + 1).tolist()
    g = from_igraph(G)
    np.testing.assert_allclose(dense(g), G.get_adjacency_sparse(attribute="weight").toarray())
    assert from_igraph(G, weight=None).weighted  # the repeated edge sums to weight 2

    D = ig.Graph([(0, 1), (0, 1), (1, 2), (2, 0)], directed=True)
    D.es["capacity"] = [1, 2, 3, 4]
    net = from_igraph(D, "flow")
    assert int(net.n_arcs) == 4
    np.testing.assert_array_equal(dense(net), D.get_adjacency_sparse(attribute="capacity").toarray())

    B = ig.Graph.Random_Bipartite(5, 7, p=0.5)
    b = from_igraph(B, "bipartite")
    rows = [v.index for v in B.vs if not v["type"]]
    cols = [v.index for v in B.vs if v["type"]]
    adj = B.get_adjacency_sparse().toarray()
    np.testing.assert_array_equal(dense(b), adj[np.ix_(rows, cols)] > 0)
    P = ig.Graph([(0, 1), (1, 2), (2, 3)])  # no "type": is_bipartite colouring
    assert int(from_igraph(P, "bipartite").n_rows) == 2


def test_igraph_errors():
    with pytest.raises(GraphInputError, match="graph is not bipartite"):
        from_igraph(ig.Graph([(0, 1), (1, 2), (2, 0)]), "bipartite")
    with pytest.raises(GraphInputError, match="as_undirected"):
        from_igraph(ig.Graph([(0, 1)], directed=True))
    with pytest.raises(GraphInputError, match="'capacity' attribute"):
        from_igraph(ig.Graph([(0, 1)], directed=True), "flow")
    with pytest.raises(GraphInputError, match="directed"):
        from_igraph(ig.Graph([(0, 1)]), "flow")
    B = ig.Graph([(0, 1), (1, 2)])
    B.vs["type"] = [False, True, True]
    with pytest.raises(GraphInputError, match="joins two vertices of side 1"):
        from_igraph(B, "bipartite")


# --------------------------------------------------------------------------
# file formats and their errors


def test_dimacs_malformed_arc_line_number(tmp_path):
    lines = gzip.decompress(datasets.path("mesh10").read_bytes()).decode().splitlines()
    assert lines[6].startswith("a ")
    lines[6] = "a 1 2"
    p = write(tmp_path, "m10.max", "\n".join(lines) + "\n")
    with pytest.raises(GraphInputError, match=r"m10\.max:7: arc line needs 3 integers"):
        read(p)


DIMACS_HEAD = "c test\np max 3 2\nn 1 s\nn 3 t\n"


@pytest.mark.parametrize("text, message", [
    (DIMACS_HEAD + "a 1 2 5\na 2 3 x\n", r":6: arc line needs 3 integers"),
    (DIMACS_HEAD + "a 1 2 5\na 2 3 1.5\n", r":6: arc line needs 3 integers"),
    (DIMACS_HEAD + "a 1 2 5\na 2 4 1\n", r":6: arc end out of range 1..3"),
    (DIMACS_HEAD + "a 1 2 5\na 2 3 -1\n", r":6: negative capacity"),
    (DIMACS_HEAD + "a 1 2 5\n", r":2: problem line says 2 arcs, the file has 1"),
    (DIMACS_HEAD + "a 1 2 5\nx 2 3\n", r":6: unknown line type"),
    (DIMACS_HEAD + "a 1 2 5\nn 2 s\na 2 3 1\n", r":6: second source line"),
    ("p max 3 1\nn 1 s\na 1 2 5\n", r": no sink line"),
    ("p max 3 1\nn 1 s\nn 1 t\na 1 2 5\n", r":3: source and sink are the same"),
    ("p min 3 1\nn 1 s\nn 3 t\na 1 2 5\n", r":1: problem line must be"),
    ("c no problem line\nn 1 s\nn 3 t\na 1 2 5\n", r": no problem line"),
    (DIMACS_HEAD + "n 9 t\n", r":5: node id out of range"),
])
def test_dimacs_errors(tmp_path, text, message):
    p = write(tmp_path, "bad.max", text)
    with pytest.raises(GraphInputError, match=str(p).replace(".", r"\.") + message):
        read(p)


def test_dimacs_detected_by_content_and_kind(tmp_path):
    p = write(tmp_path, "net.txt", "c x\r\np max 2 1\r\nn 1 s\r\nn 2 t\r\na 1 2 7\r\n")
    net, s, t = read(p, layout="rcsr")
    assert (s, t, int(net.n_arcs), net.layout) == (0, 1, 1, "rcsr")
    with pytest.raises(GraphInputError, match="kind must be 'flow'"):
        read(p, "graph")


@pytest.mark.parametrize("text, message", [
    ("0 1\n1 2 3\n", r":2: expected 2 columns like line 1, found 3"),
    ("# c\n0 1 2 3\n", r":2: .* needs 2 or 3 columns, found 4"),
    ("0 1\n1 x\n", r":2: vertex ids must be integers"),
    ("0 1\n1 2.5\n", r":2: vertex ids must be integers"),
    ("0 1\n-1 2\n", r":2: vertex id below 0"),
    ("0 1 1\n1 2 abc\n", r":2: weight must be a number"),
    ("0 1 1\n1 2 -3\n", r":2: weight must be finite and >= 0"),
])
def test_edge_list_errors(tmp_path, text, message):
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(GraphInputError, match=str(p).replace(".", r"\.") + message):
        read(p)


def test_edge_list_kinds_and_options(tmp_path):
    p = write(tmp_path, "g.csv", "\ufeff% comment\n1,2,3\n\n2,3,4\n3,1,5\n1,2,1\n")
    g = read(p, one_based=True)
    assert (int(g.n), int(g.n_edges), g.weighted) == (3, 3, True)
    np.testing.assert_allclose(dense(g), [[0, 4, 5], [4, 0, 4], [5, 4, 0]])  # 1-2 repeats: 3 + 1
    b = read(p, "bipartite")
    assert (int(b.n_rows), int(b.n_cols), int(b.n_edges)) == (4, 4, 3)
    net = read(p, "flow", one_based=True, layout="rcsr")
    assert int(net.n_arcs) == 4 and net.layout == "rcsr"
    np.testing.assert_array_equal(dense(net), [[0, 4, 0], [0, 0, 4], [5, 0, 0]])
    with pytest.raises(GraphInputError, match="third column of integer capacities"):
        read(write(tmp_path, "two.el", "0 1\n"), "flow")
    with pytest.raises(GraphInputError, match=r"two\.el:1: capacity must be an integer"):
        read(write(tmp_path, "two.el", "0 1 2.5\n"), "flow")
    with pytest.raises(GraphInputError, match="right_offset= does not apply"):
        read(p, right_offset=3)
    e = read(write(tmp_path, "empty.txt", "# nothing\n"))
    assert int(e.n) == 0 and int(e.n_edges) == 0
    same(read(write(tmp_path, "x.dat", "0 1\n"), fmt="snap"), Graph.from_edges([0], [1]))


def test_large_edge_list(tmp_path):
    rng = np.random.default_rng(0)
    e = rng.integers(0, 5000, (200_000, 2))
    p = tmp_path / "big.txt"
    p.write_text("# big\n" + "\n".join(f"{a}\t{b}" for a, b in e) + "\n")
    g = read(p)
    ref = sp.coo_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(5000, 5000)).tocsr()
    ref = ref + ref.T - sp.diags_array(ref.diagonal())  # repeats add up; a loop once
    assert abs(to_scipy(g) - ref).max() == 0


def test_konect_variants(tmp_path):
    sym = write(tmp_path, "out.tiny", "% sym unweighted\n% 3 5 5\n1 2\n2 3\n3 1\n1 2\n")
    g = read(sym)
    assert (int(g.n), int(g.n_edges)) == (5, 3)  # n from the size line
    assert dense(g)[0, 1] == 2  # the repeated edge adds up
    asym = write(tmp_path, "out.arcs", "% asym posweighted\n1 2 0.5\n2 1 0.25\n")
    np.testing.assert_allclose(dense(read(asym)), [[0, 0.75], [0.75, 0]])
    bip = write(tmp_path, "out.bip", "% bip posweighted\n1 3 2\n2 4 3\n2 5 1\n")
    b = read(bip)
    assert (int(b.n_rows), int(b.n_cols)) == (2, 3)  # right ids 4..6 above the largest left id 2
    b0 = read(bip, right_offset=0)
    assert (int(b0.n_rows), int(b0.n_cols)) == (2, 5)
    as_graph = read(bip, "graph")  # rows first, then columns
    assert int(as_graph.n) == 5 and as_graph.weighted
    assert dense(as_graph)[1, 3] == 3
    with pytest.raises(GraphInputError, match=r"out\.bip:2: right id not above right_offset = 3"):
        read(bip, right_offset=3)
    bad = write(tmp_path, "out.bad", "% bip unweighted\n1 2\n0 3\n")
    with pytest.raises(GraphInputError, match=r"out\.bad:3: vertex id below 1"):
        read(bad)
    head = write(tmp_path, "out.head", "2 3 4\n1 1\n3 4\n")  # Brunson-style header
    h = read(head)
    assert (int(h.n_rows), int(h.n_cols), int(h.n_edges)) == (3, 4, 2)
    nohead = write(tmp_path, "out.nohead", "3 3 4\n1 1 1\n3 4 2\n")  # 3 columns, not a header
    assert int(read(nohead).n_edges) == 3


def test_matrix_market(tmp_path):
    S = sp.csr_array(np.array([[0, 2.0, 0], [2.0, 1.0, 3.0], [0, 3.0, 0]]))
    buf = pyio.BytesIO()
    scipy.io.mmwrite(buf, S, symmetry="symmetric")
    p = write(tmp_path, "s.mtx.gz", buf.getvalue(), compress=True)
    g = read(p)
    assert isinstance(g, Graph) and g.weighted
    np.testing.assert_array_equal(dense(g), S.toarray())
    buf = pyio.BytesIO()
    scipy.io.mmwrite(buf, (S > 0).astype(np.int8), field="pattern")
    pat = read(write(tmp_path, "p.mtx", buf.getvalue()))
    assert isinstance(pat, Graph) and not pat.weighted
    assert isinstance(read(write(tmp_path, "p.mtx", buf.getvalue()), "flow"), FlowNetwork)
    R = sp.csr_array(np.array([[0, 5, 0, 1], [7, 0, 0, 0]], np.int64))
    buf = pyio.BytesIO()
    scipy.io.mmwrite(buf, R)
    q = write(tmp_path, "r.mtx", buf.getvalue())
    b = read(q)
    assert isinstance(b, BipartiteGraph) and (int(b.n_rows), int(b.n_cols)) == (2, 4)
    with pytest.raises(GraphInputError, match=r"r\.mtx: kind='flow' needs a square matrix"):
        read(q, "flow")
    with pytest.raises(GraphInputError, match=r"junk\.mtx: not a readable Matrix Market"):
        read(write(tmp_path, "junk.mtx", "%%MatrixMarket nonsense\n"))


def test_gml_duplicates_without_multigraph_header(tmp_path):
    text = ("graph [\n  node [ id 0 ]\n  node [ id 1 ]\n  node [ id 2 ]\n"
            "  edge [ source 0 target 1 value 2 ]\n  edge [ source 1 target 0 value 3 ]\n"
            "  edge [ source 1 target 2 ]\n]\n")
    g = read(write(tmp_path, "dup.gml", text))
    np.testing.assert_allclose(dense(g), [[0, 5, 0], [5, 0, 1], [0, 1, 0]])
    # without weights the repeated edge sums to 2, so the graph counts as weighted
    np.testing.assert_allclose(dense(read(write(tmp_path, "dup.gml", text), weight=None)),
                               [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
    with pytest.raises(GraphInputError, match=r"bad\.gml: cannot read GML"):
        read(write(tmp_path, "bad.gml", "graph [ node [ id 0 ] edge [ source 0 ]\n"))


def test_unreadable_files(tmp_path):
    with pytest.raises(GraphInputError, match=r"nope\.txt: cannot read"):
        read(tmp_path / "nope.txt")
    with pytest.raises(GraphInputError, match=r"broken\.txt: cannot read"):
        read(write(tmp_path, "broken.txt", b"\x1f\x8b\x08garbage"))
    with pytest.raises(GraphInputError, match="fmt must be one of"):
        read(write(tmp_path, "ok.txt", "0 1\n"), fmt="xml")


def test_doctests():
    result = doctest.testmod(jio)
    assert result.attempted >= 5 and result.failed == 0
