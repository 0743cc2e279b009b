"""Empty and edgeless inputs: every solver, every method, every shape, eagerly, under jit and vmap.

Shapes 0x0, 0xN, Nx0 and graphs with vertices but no edges; flow networks
with no arcs; weighted graphs with no vertices or no edges; stable marriage
with 0 people on either side. Answers are checked against scipy (or the
obvious answer: nothing matched, zero flow) and against the certificates of
:mod:`jaxmatch.certify`. Eager runs execute the jitted solvers at the padded
capacities, so the traced code sees these inputs too; the jit/vmap option
matrix of ``tests/test_options.py`` adds an empty graph to every batch.

Cheap by design: a few shared capacities, so each solver compiles once or
twice per capacity (CI runs the whole suite on 2 cores).
"""
import jax
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import jaxmatch
from jaxmatch import (FlowNetwork, Graph, Preferences, b_suitor, certify, greedy_b_matching,
                      greedy_matching, initial_matching, locally_dominant, max_flow, maximum_matching, min_cut,
                      stable_marriage, suitor)

SHAPES = [(0, 0), (0, 5), (5, 0), (4, 3)]   # the last: vertices on both sides, no edge
CAPS = dict(row_capacity=8, col_capacity=8, edge_capacity=1)   # edge capacity 1: the smallest there is
METHODS = ["pr", "apfb", "apsb", "graft", "flow", "auto"]
INITS = [None, "cheap", "karp_sipser"]


def _bipartite(shape, caps=CAPS):
    g = jaxmatch.from_scipy(sp.csr_array(shape))
    return g.with_capacity(**caps) if caps else g


def _scipy_matching(shape):
    rm = maximum_bipartite_matching(sp.csr_array(shape), perm_type="column")
    cm = maximum_bipartite_matching(sp.csr_array(shape), perm_type="row")
    return rm, cm


# --------------------------------------------------------------------------
# maximum cardinality matching


@pytest.mark.parametrize("method", METHODS)
def test_maximum_matching_empty_shapes_against_scipy(method):
    """Every shape at one padding, and 0x0 at its own capacities (1, 1, 1), every init."""
    cases = [(shape, _bipartite(shape)) for shape in SHAPES] + [((0, 0), _bipartite((0, 0), None))]
    for shape, g in cases:
        rm_ref, cm_ref = _scipy_matching(shape)
        for init in INITS:
            res = maximum_matching(g, method=method, init=init)
            assert int(res.status) == 0, (shape, init, res.status_name)
            assert int(res.cardinality) == 0
            np.testing.assert_array_equal(res.row_mate, rm_ref)
            np.testing.assert_array_equal(res.col_mate, cm_ref)
            certify.check_maximum_matching(g, res.row_mate, res.col_mate)


def test_maximum_matching_empty_under_vmap():
    """The batch of all empty shapes; the option matrix in test_options.py covers every method."""
    graphs = [_bipartite(s) for s in SHAPES]
    out = jax.vmap(lambda h: maximum_matching(h, init=None))(jaxmatch.stack(graphs))
    assert out.cardinality.tolist() == [0] * len(graphs) and out.status.tolist() == [0] * len(graphs)
    assert np.all(np.asarray(out.row_mate) == -1) and np.all(np.asarray(out.col_mate) == -1)
    for i, (g, (nr, nc)) in enumerate(zip(graphs, SHAPES)):
        certify.check_maximum_matching(g, out.row_mate[i][:nr], out.col_mate[i][:nc])


@pytest.mark.parametrize("method", ["cheap", "karp_sipser"])
def test_initial_matching_empty_shapes(method):
    for shape in SHAPES:
        g = _bipartite(shape)
        res = initial_matching(g, method)
        assert int(res.status) == 0 and int(res.cardinality) == 0
        assert res.row_mate.shape == (shape[0],) and res.col_mate.shape == (shape[1],)
        certify.check_maximum_matching(g, res.row_mate, res.col_mate)


def test_matching_network_of_an_empty_graph():
    g = _bipartite((0, 0), None)
    net, s, t = jaxmatch.matching_network(g)
    res = max_flow(net, s, t)
    assert int(res.flow_value) == 0 and res.flow.shape == (0,)
    rm, cm = jaxmatch.matching_from_flow(g, res.flow)
    assert rm.shape == (0,) and cm.shape == (0,)


# --------------------------------------------------------------------------
# max flow and min cut on networks without arcs


def _arcless(n, layout):
    none = np.zeros(0, int)
    return FlowNetwork.from_edges(none, none, none, n=n, layout=layout, vertex_capacity=8, arc_capacity=1)


def _scipy_flow(n, s, t):
    return int(maximum_flow(sp.csr_array((n, n), dtype=np.int32), s, t).flow_value)


@pytest.mark.parametrize("layout,reverse,kernel", [("bcsr", "index", False), ("rcsr", "index", False),
                                                   ("bcsr", "search", False), ("bcsr", "index", True)])
def test_max_flow_and_min_cut_without_arcs(layout, reverse, kernel):
    several = layout == "bcsr" and reverse == "index" and not kernel   # terminal arrays: a compilation of their own
    cases = [(2, 0, 1), (5, 3, 1)] + ([(5, [0, 2], [4])] if several else [])
    for n, source, sink in cases:
        net = _arcless(n, layout)
        res = max_flow(net, source, sink, reverse=reverse, kernel=kernel)
        assert int(res.status) == 0 and int(res.flow_value) == 0
        if np.ndim(source) == 0:
            assert int(res.flow_value) == _scipy_flow(n, source, sink)
        assert res.flow.shape == (0,) and res.source_side.shape == (n,)
        certify.check_flow(net, source, sink, res.flow, res.flow_value)
        certify.check_min_cut(net, source, sink, np.asarray(res.source_side), res.flow_value)
        cut = min_cut(net, source, sink, reverse=reverse, kernel=kernel)
        assert int(cut.value) == 0 and cut.cut_arcs.shape == (0,) and int(cut.status) == 0
        certify.check_min_cut(net, source, sink, np.asarray(cut.source_side), cut.value)


def test_max_flow_without_arcs_under_vmap():
    nets = [_arcless(n, "bcsr") for n in (2, 3, 6)]   # the capacities of the eager runs above
    batch = jaxmatch.stack(nets)
    s, t = np.array([0, 2, 5]), np.array([1, 0, 3])
    out = jax.vmap(lambda net, a, b: max_flow(net, a, b, kernel=False))(batch, s, t)
    assert out.flow_value.tolist() == [0, 0, 0] and out.status.tolist() == [0, 0, 0]
    for i, net in enumerate(nets):
        certify.check_min_cut(net, s[i], t[i], np.asarray(out.source_side[i][:int(net.n)]), 0)


# --------------------------------------------------------------------------
# weighted matching on graphs without edges


def _edgeless_graphs():
    """Graphs with nothing to match, at one padding (entry capacity 4) but the first two at entry
    capacity 1, the smallest there is (the default for no edges)."""
    none = np.zeros(0, int)
    caps = dict(vertex_capacity=4, entry_capacity=4)
    return [
        Graph.from_edges(none, none, n=0),
        Graph.from_edges(none, none, n=4),
        Graph.from_edges(none, none, np.zeros(0), n=3, **caps),                 # weighted, no edges
        Graph.from_edges([0, 1, 2], [0, 1, 2], [1.0, 2.0, 3.0], n=4, **caps),   # self-loops only
        Graph.from_edges([0, 1], [1, 2], [0.0, 0.0], n=3, **caps),              # zero weights (dropped)
    ]


def _check_unmatched(g, res):
    n = int(g.n)
    assert int(res.status) == 0 and int(res.cardinality) == 0 and float(res.weight) == 0
    assert res.mate.shape == (n,) and np.all(np.asarray(res.mate) == -1)
    np.testing.assert_array_equal(res.mate, greedy_matching(g))
    certify.check_greedy_dominance(g, res.mate)


@pytest.mark.parametrize("sorted_adjacency", [True, False])
def test_suitor_and_locally_dominant_without_edges(sorted_adjacency):
    for g in _edgeless_graphs():
        _check_unmatched(g, suitor(g, sorted_adjacency=sorted_adjacency))
        _check_unmatched(g, locally_dominant(g, sorted_adjacency=sorted_adjacency))


def test_b_suitor_without_edges():
    for g in _edgeless_graphs():
        n = int(g.n)
        for b in (0, 2, np.arange(n) % 3):
            res = b_suitor(g, b, max_b=2)   # one compilation per capacity
            assert int(res.status) == 0 and int(res.cardinality) == 0 and float(res.weight) == 0
            assert res.matched.shape == (int(g.n_entries),) and not np.any(np.asarray(res.matched))
            assert res.partners.shape[0] == n and np.all(np.asarray(res.partners) == -1)
            np.testing.assert_array_equal(res.matched, greedy_b_matching(g, b))
            certify.check_greedy_b_dominance(g, b, res.matched)


def test_weighted_without_edges_under_vmap():
    graphs = _edgeless_graphs()
    out = jax.vmap(lambda h: suitor(h))(jaxmatch.stack(graphs))
    assert np.all(np.asarray(out.mate) == -1) and out.cardinality.tolist() == [0] * len(graphs)
    assert out.status.tolist() == [0] * len(graphs)


# --------------------------------------------------------------------------
# stable marriage with nobody on a side


def _empty_instances():
    """Raw lists at their own capacities (1 person, 1 entry), the rest at one padding."""
    caps = dict(n_capacity=4, entry_capacity=1)
    return [
        ([], []),                                                           # 0 men, 0 women
        (Preferences.from_padded(np.zeros((0, 0), int), 3, **caps),         # 0 men, 3 women (padded arrays)
         Preferences.from_lists([[], [], []], 0, **caps)),
        (Preferences.from_lists([[], []], 0, **caps),                       # 2 men with empty lists, 0 women
         Preferences.from_padded(np.zeros((0, 0), int), 2, **caps)),
        (Preferences.shared_list([], 0, 0), Preferences.shared_list([], 0, 0)),
    ]


@pytest.mark.parametrize("method,kernel", [("gale_shapley", False), ("mcvitie_wilson", False),
                                           ("mcvitie_wilson", True)])
def test_stable_marriage_with_nobody(method, kernel):
    for men, women in _empty_instances()[:1] if kernel else _empty_instances():
        res = stable_marriage(men, women, method=method, kernel=kernel)
        n_men = men.n if isinstance(men, Preferences) else len(men)
        n_women = women.n if isinstance(women, Preferences) else len(women)
        assert int(res.status) == 0 and int(res.stats["proposals"]) == 0
        assert res.wife.tolist() == [-1] * int(n_men) and res.husband.tolist() == [-1] * int(n_women)
        certify.check_stable(men, women, res.wife)

