"""Louvain and modularity on the inputs of networkx's own community tests, and on the graphs where
every simultaneous move cancels (cliques, complete bipartite graphs, stars, regular graphs).

The inputs are networkx's public test inputs (test_louvain.py, test_quality.py), rebuilt here;
answers are compared with networkx run live, the numpy certificate, and the local-optimum check
``certify.check_local_optimum`` (no single vertex move raises Q). Graphs are padded to two
capacities so the solver compiles twice for the file.
"""
import networkx as nx
import numpy as np
import pytest

import jaxmatch
from jaxmatch import Graph, certify, louvain, modularity

SMALL = dict(vertex_capacity=64, entry_capacity=512)
LARGE = dict(vertex_capacity=256, entry_capacity=4096)


def to_graph(G, weight="weight", caps=SMALL):
    """A networkx graph (any kind: directed and multi-edges become undirected weights, as the
    library's Graph sums repeated edges) as a padded jaxmatch Graph."""
    nodes = list(G.nodes)
    index = {x: i for i, x in enumerate(nodes)}
    u, v, w = [], [], []
    for a, b, data in G.edges(data=True):
        u.append(index[a])
        v.append(index[b])
        w.append(1.0 if weight is None else float(data.get(weight, 1.0)))
    g = Graph.from_edges(np.array(u, np.int64), np.array(v, np.int64), np.array(w), n=len(nodes))
    return g.with_capacity(**caps)


def solve(g, **kw):
    res = louvain(g, **kw)
    labels = np.asarray(res.labels)
    assert res.status_name == "converged"
    certify.check_partition(g, labels)
    certify.check_modularity(g, labels, res.modularity, resolution=kw.get("resolution", 1.0))
    if kw.get("threshold", 1e-6) <= 1e-6:     # a coarse threshold stops before the optimum
        certify.check_local_optimum(g, labels, resolution=kw.get("resolution", 1.0))
    return res, labels


def nx_q(G, weight="weight", seeds=10):
    """The lowest and highest modularity networkx's (randomised) Louvain finds over ``seeds``
    seeds, on G as an undirected graph."""
    H = nx.Graph(G) if not G.is_multigraph() else G
    qs = [nx.community.modularity(H, nx.community.louvain_communities(H, weight=weight, seed=s),
                                  weight=weight) for s in range(seeds)]
    return min(qs), max(qs)


# --------------------------------------------------------------------------
# every simultaneous move cancels: the bound alone would leave these at singletons


SYMMETRIC = {
    **{f"K{n}": nx.complete_graph(n) for n in range(3, 8)},
    "K3,3": nx.complete_bipartite_graph(3, 3),
    "K2,5": nx.complete_bipartite_graph(2, 5),
    "K4,4": nx.complete_bipartite_graph(4, 4),
    "star5": nx.star_graph(5),
    "star12": nx.star_graph(12),
    "C12": nx.cycle_graph(12),
    "petersen": nx.petersen_graph(),
    "cube4": nx.hypercube_graph(4),
    "torus4x5": nx.grid_2d_graph(4, 5, periodic=True),
    "two_triangles": nx.barbell_graph(3, 0),
}


@pytest.mark.parametrize("name", list(SYMMETRIC))
def test_symmetric_graphs_reach_a_local_optimum(name):
    """Complete, complete bipartite, star and regular graphs (every vertex one degree): the answer
    is a local optimum, at least the single community's Q (0) and in networkx's range over seeds."""
    G = SYMMETRIC[name]
    g = to_graph(G)
    res, labels = solve(g)
    q = float(res.modularity)
    assert q >= -1e-6                                   # never below the one-community partition
    assert q >= nx_q(G)[0] - 1e-6


@pytest.mark.parametrize("n", range(3, 8))
def test_cliques_are_one_community(n):
    """networkx returns K_n as one community (Q = 0); so does jaxmatch."""
    res, labels = solve(to_graph(nx.complete_graph(n)))
    assert np.all(labels == 0)
    assert abs(float(res.modularity)) < 1e-6


def test_triangle_with_unit_self_loops():
    """networkx's directed self-loop test graph (test_directed_selfloops) made undirected, with the
    unit self-loops of weight=None: the triangle, two pairs and isolated vertices."""
    G = nx.DiGraph()
    G.add_nodes_from(range(11))
    G.add_edges_from([(0, 2), (0, 1), (1, 0), (2, 1), (2, 0), (3, 4), (4, 3), (7, 8), (8, 7), (9, 10), (10, 9)])
    G.add_edges_from([(i, i) for i in range(3)])
    H = nx.Graph(G)                                     # each undirected edge once, unit weights
    res, labels = solve(to_graph(H, weight=None))
    assert float(res.modularity) == pytest.approx(nx_q(H, weight=None)[1], abs=1e-6)
    assert len({labels[0], labels[1], labels[2]}) == 1


# --------------------------------------------------------------------------
# networkx's test_louvain inputs


def test_karate_club_and_self_loops():
    """test_undirected_selfloops: karate unweighted; heavy self-loops (i * 1000 on 0..8) change
    the partition, unit ones do not."""
    G = nx.karate_club_graph()
    plain, _ = solve(to_graph(G, weight=None))
    assert float(plain.modularity) >= nx_q(G, weight=None)[0] - 1e-6
    loops = G.copy()
    loops.add_weighted_edges_from([(i, i, i * 1000) for i in range(9)])
    heavy, heavy_labels = solve(to_graph(loops))
    assert not np.array_equal(heavy_labels, np.asarray(plain.labels))
    assert float(heavy.modularity) >= nx_q(loops)[0] - 1e-6
    unit, unit_labels = solve(to_graph(loops, weight=None))
    assert float(unit.modularity) >= nx_q(loops, weight=None)[0] - 1e-6


def test_multigraph_weights():
    """test_multigraph: a repeated edge adds its weight, as networkx's MultiGraph counts it."""
    G = nx.karate_club_graph()
    H = nx.MultiGraph(G)
    H.add_edge(0, 1, weight=9)
    res, _ = solve(to_graph(H))
    assert float(res.modularity) >= nx_q(H)[0] - 1e-6


def lfr():
    return nx.LFR_benchmark_graph(250, 3, 1.5, 0.009, average_degree=5, min_community=20, seed=10)


def test_lfr_quality_resolution_threshold():
    """test_modularity_increase, test_valid_partition, test_quality, test_resolution and
    test_threshold on the LFR graph of 250 vertices."""
    G = lfr()
    g = to_graph(G, weight=None, caps=LARGE)
    res, labels = solve(g)
    single = certify.modularity_numpy(g, np.arange(250))[0]
    assert float(res.modularity) > single
    parts = [set(np.flatnonzero(labels == c).tolist()) for c in range(labels.max() + 1)]
    assert nx.community.is_partition(G, parts)
    assert nx.community.partition_quality(G, parts)[0] >= 0.65          # coverage, as networkx asks
    assert float(res.modularity) >= nx_q(G, weight=None)[0] - 1e-6
    counts = [solve(g, resolution=r)[1].max() + 1 for r in (0.5, 1.0, 2.0)]
    assert counts[0] <= counts[1] <= counts[2]
    coarse, _ = solve(g, threshold=0.3)
    assert float(coarse.modularity) <= float(res.modularity) + 1e-6


def test_empty_graph_is_singletons():
    """test_empty_graph: five vertices, no edge: five communities."""
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=5).with_capacity(**SMALL)
    res = louvain(g)
    np.testing.assert_array_equal(np.asarray(res.labels), np.arange(5))


# --------------------------------------------------------------------------
# networkx's test_quality inputs: modularity of given partitions


def labels_of(G, C):
    nodes = list(G.nodes)
    lab = np.empty(len(nodes), np.int64)
    for c, members in enumerate(C):
        for x in members:
            lab[nodes.index(x)] = c
    return lab


QUALITY = [
    (nx.barbell_graph(3, 0), [{0, 1, 4}, {2, 3, 5}], [1, 2, 0.2]),
    (nx.barbell_graph(3, 0), [{0, 1, 2}, {3, 4, 5}], [1, 2, 0.2]),
    (nx.barbell_graph(5, 3), [set(range(5)), set(range(8, 13)), set(range(5, 8))], [1, 2, 0.2]),
    (nx.barbell_graph(5, 3), [{0, 1, 2, 3}, {9, 10, 11, 12}, {5, 6, 7}, {4}, {8}], [1, 2.5, 0.2]),
    (nx.barbell_graph(5, 3), [set(range(8)), set(range(8, 13))], [1, 2, 0.3]),
    (nx.margulis_gabber_galil_graph(4), None, [1]),
]


@pytest.mark.parametrize("case", range(len(QUALITY)))
def test_modularity_of_networkx_partitions(case):
    G, C, gammas = QUALITY[case]
    if C is None:
        nodes = list(G.nodes)
        C = [set(nodes[:len(nodes) // 2]), set(nodes[len(nodes) // 2:])]
    H = nx.Graph(G)
    g = to_graph(H, weight=None)
    lab = labels_of(H, C)
    padded = np.full(SMALL["vertex_capacity"], -1)
    padded[:lab.size] = lab
    for gamma in gammas:
        want = nx.community.modularity(H, C, resolution=gamma)
        assert float(modularity(g, padded, resolution=gamma)) == pytest.approx(want, abs=1e-6)
        assert certify.modularity_numpy(g, lab, resolution=gamma)[0] == pytest.approx(want, abs=1e-12)


def test_local_optimum_check_catches_a_split_clique():
    """The checker itself: the singleton partition of a triangle is not a local optimum."""
    g = Graph.from_edges([0, 1, 0], [1, 2, 2])
    with pytest.raises(certify.CertificateError, match="local optimum"):
        certify.check_local_optimum(g, [0, 1, 2])
    certify.check_local_optimum(g, [0, 0, 0])
    gain, unit, comm = certify.best_move(g, [0, 1, 2])
    assert gain == pytest.approx(1 / 9) and unit in (0, 1, 2) and comm in (0, 1, 2) and comm != unit
    # groups move whole: two triangles joined by one edge, split as {0,1,2}, {3,4,5} is optimal
    # for whole groups; merging the groups loses
    b = jaxmatch.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
    certify.check_local_optimum(b, [0, 0, 0, 1, 1, 1], groups=[0, 0, 0, 1, 1, 1])
    with pytest.raises(certify.CertificateError, match="refine"):
        certify.check_local_optimum(b, [0, 0, 0, 1, 1, 1], groups=[0, 0, 1, 1, 1, 1])
