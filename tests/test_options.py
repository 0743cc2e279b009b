"""Solver options: what ``None`` means, bad values, and the jit/vmap/option matrix (issue 18, item 4).

Part 1: every keyword option of every public solver given ``None`` either
takes a documented meaning (the default, the network's own layout, an empty
start ...) and gives the default's answer, or is rejected before tracing
with a :class:`jaxmatch.GraphInputError` that names the option.

Part 2: every value of every option that changes the algorithm, run
eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch of tiny
instances of different sizes (one of them empty) padded to ONE capacity per
family: each instance's answer equals its solo (eager) answer and an
independent reference (scipy, the numpy greedy matchings, a sequential
Gale-Shapley), and passes its certificate from :mod:`jaxmatch.certify`.
Each combination is one test; the eager runs of a family share one
compilation per option set.
"""
import functools

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import jaxmatch
from jaxmatch import (BipartiteGraph, FlowNetwork, Graph, GraphInputError, Preferences, b_suitor, certify,
                      greedy_b_matching, greedy_matching, initial_matching, locally_dominant, louvain, max_flow,
                      maximum_matching, min_cut, stable_marriage, stack_preferences, suitor)
from jaxmatch.community import config as CF
from tests.test_stable import gs_reference

MODES = ["eager", "jit", "vmap"]


# --------------------------------------------------------------------------
# the instances: tiny, of different sizes, one of them empty, one capacity per family

BIP_CAPS = dict(row_capacity=16, col_capacity=16, edge_capacity=64)
NET_CAPS = dict(vertex_capacity=16, arc_capacity=64)
GRAPH_CAPS = dict(vertex_capacity=16, entry_capacity=64)
PREF_CAPS = dict(n_capacity=16, entry_capacity=64)


def _rng(seed):
    return np.random.default_rng(seed)


@functools.cache
def bipartite_graphs():
    rng = _rng(1)
    out = []
    for nr, nc, m in [(3, 4, 6), (7, 5, 14), (12, 11, 40), (0, 0, 0)]:
        r, c = rng.integers(0, max(nr, 1), m), rng.integers(0, max(nc, 1), m)
        out.append(BipartiteGraph.from_edges(r, c, nr, nc, **BIP_CAPS))
    return out


def scipy_matching_size(g):
    r, c, nr, nc = g.edges()
    a = sp.csr_array((np.ones(r.size), (r, c)), shape=(nr, nc))
    return int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum())


@functools.cache
def flow_networks(layout):
    """Networks with terminals 0 -> n-1, and the arcless one of 2 vertices."""
    rng = _rng(2)
    out = []
    for n, m in [(4, 6), (7, 16), (12, 40), (2, 0)]:
        t, h = rng.integers(0, n, m), rng.integers(0, n, m)
        out.append(FlowNetwork.from_edges(t, h, rng.integers(0, 6, m), n=n, layout=layout, **NET_CAPS))
    return out


def scipy_flow_value(net):
    t, h, c, n = net.edges()
    keep = t != h
    a = sp.csr_array((c[keep].astype(np.int32), (t[keep], h[keep])), shape=(n, n))
    a.sum_duplicates()
    return int(maximum_flow(a, 0, n - 1).flow_value)


@functools.cache
def weighted_graphs():
    """Small integer weights, so ties are common (broken by the (min id, max id) pair)."""
    rng = _rng(3)
    out = []
    for n, m in [(5, 6), (9, 16), (14, 28), (0, 0)]:
        u, v = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)
        out.append(Graph.from_edges(u, v, rng.integers(1, 4, m).astype(float), n=n, **GRAPH_CAPS))
    return out


@functools.cache
def stable_instances():
    """(men lists, women lists) with incomplete lists, unequal sides, and one with nobody."""
    rng = _rng(4)
    out = []
    for n_men, n_women in [(3, 4), (6, 5), (9, 9)]:
        men = [[int(w) for w in rng.permutation(n_women) if rng.random() < 0.7] for _ in range(n_men)]
        women = [[int(m) for m in rng.permutation(n_men) if rng.random() < 0.7] for _ in range(n_women)]
        out.append((men, women))
    out.append(([], []))
    return out


@functools.cache
def stable_prefs():
    return [(Preferences.from_lists(m, len(w)).with_capacity(**PREF_CAPS),
             Preferences.from_lists(w, len(m)).with_capacity(**PREF_CAPS)) for m, w in stable_instances()]


@functools.cache
def batch(kind, *args):
    if kind == "stable":
        prefs = stable_prefs()
        return stack_preferences([p[0] for p in prefs]), stack_preferences([p[1] for p in prefs])
    items = {"bipartite": bipartite_graphs, "flow": flow_networks, "graph": weighted_graphs}[kind](*args)
    return jaxmatch.stack(items)


def run(mode, f, items, batched):
    """f over every instance in ``items`` (tuples of arguments): eagerly, under jit, or vmapped over
    ``batched`` (the same instances stacked). Returns one result per instance, padded under jit/vmap."""
    if mode == "eager":
        return [f(*x) for x in items]
    if mode == "jit":
        jf = jax.jit(f)
        return [jf(*x) for x in items]
    out = jax.vmap(f)(*batched)
    return [jax.tree_util.tree_map(lambda a: a[i], out) for i in range(len(items))]


# --------------------------------------------------------------------------
# Part 1: None and other option values, before tracing

# at the capacities of part 2, so both parts share compilations
BG = BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1], **BIP_CAPS)
WBG = BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1], weights=[3.0, 1.0, 2.0, 5.0], **BIP_CAPS)
NET = FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [3, 2, 1, 2, 3], **NET_CAPS)
WG = Graph.from_edges([0, 1, 2, 0], [1, 2, 3, 3], [1.0, 2.0, 1.0, 2.0], **GRAPH_CAPS)
MEN = Preferences.from_lists([[0, 1], [0, 1], [1]], 2).with_capacity(**PREF_CAPS)
WOMEN = Preferences.from_lists([[1, 0, 2], [0, 1]], 3).with_capacity(**PREF_CAPS)


def _answer(res):
    """The part of a result that two runs of one algorithm must agree on."""
    if isinstance(res, jaxmatch.MatchingResult):
        return int(res.cardinality), res.row_mate.tolist(), int(res.status)
    if isinstance(res, jaxmatch.FlowResult):
        return int(res.flow_value), res.flow.tolist(), res.source_side.tolist(), int(res.status)
    if isinstance(res, jaxmatch.CutResult):
        return int(res.value), res.source_side.tolist(), res.cut_arcs.tolist()
    if isinstance(res, jaxmatch.WeightedMatchingResult):
        return res.mate.tolist(), float(res.weight), int(res.status)
    if isinstance(res, jaxmatch.BMatchingResult):
        return res.matched.tolist(), res.partners.tolist(), int(res.status)
    if isinstance(res, jaxmatch.StableMarriageResult):
        return res.wife.tolist(), res.husband.tolist(), int(res.status)
    if isinstance(res, (jaxmatch.LouvainResult, jaxmatch.LeidenResult)):
        return res.labels.tolist(), int(res.status)
    if isinstance(res, jaxmatch.AssignmentResult):
        return res.row_mate.tolist(), float(res.weight), int(res.status)
    if isinstance(res, jaxmatch.DMResult):
        return res.row_perm.tolist(), res.col_perm.tolist(), res.row_blocks.tolist(), int(res.status)
    raise TypeError(type(res))


SOLVERS = {
    "maximum_matching": lambda **kw: maximum_matching(BG, **kw),
    "maximum_matching/graft": lambda **kw: maximum_matching(BG, method="graft", **kw),
    "maximum_matching/auto": lambda **kw: maximum_matching(BG, method="auto", **kw),
    "initial_matching": lambda **kw: initial_matching(BG, **kw),
    "max_flow": lambda **kw: max_flow(NET, 0, 3, **kw),
    "min_cut": lambda **kw: min_cut(NET, 0, 3, **kw),
    "suitor": lambda **kw: suitor(WG, **kw),
    "locally_dominant": lambda **kw: locally_dominant(WG, **kw),
    "b_suitor": lambda **kw: b_suitor(WG, 2, **kw),
    "stable_marriage": lambda **kw: stable_marriage(MEN, WOMEN, **kw),
    "louvain": lambda **kw: louvain(WG, **kw),
    "leiden": lambda **kw: jaxmatch.leiden(WG, **kw),
    "min_weight_matching": lambda **kw: jaxmatch.min_weight_matching(WBG, **kw),
    "dulmage_mendelsohn": lambda **kw: jaxmatch.dulmage_mendelsohn(BG, **kw),
}

# options whose None means the default (the answer of the call without the option)
NONE_IS_DEFAULT = [
    ("maximum_matching", o) for o in ("max_iters", "k", "init_rounds", "lanes", "alpha")] + [
    ("maximum_matching/graft", o) for o in ("max_iters", "init_rounds", "alpha")] + [
    ("maximum_matching/auto", o) for o in ("max_iters", "k", "init_rounds", "lanes", "alpha")] + [
    ("initial_matching", "max_rounds")] + [
    ("max_flow", o) for o in ("layout", "max_iters", "k", "lanes", "kernel")] + [
    ("min_cut", o) for o in ("layout", "max_iters", "k", "lanes", "kernel")] + [
    ("suitor", o) for o in ("max_iters", "batch", "lanes")] + [
    ("locally_dominant", o) for o in ("max_iters", "lanes")] + [
    ("b_suitor", o) for o in ("max_b", "sorted_adjacency", "max_iters", "batch", "lanes")] + [
    ("stable_marriage", o) for o in ("max_iters", "unroll", "window", "kernel")] + [
    ("louvain", o) for o in ("max_levels", "max_iters", "axis_name")] + [
    ("leiden", o) for o in ("max_levels", "max_iters", "passes", "axis_name")] + [
    ("min_weight_matching", "max_iters"), ("dulmage_mendelsohn", "max_iters")]

# options that have no None meaning: rejected before tracing, by name
NONE_IS_REJECTED = [
    ("maximum_matching", o) for o in ("method", "bfs", "graft", "direction_optimizing")] + [
    ("initial_matching", "method"), ("max_flow", "reverse"), ("min_cut", "reverse"),
    ("suitor", "sorted_adjacency"), ("locally_dominant", "sorted_adjacency"),
    ("stable_marriage", "method")] + [
    ("louvain", o) for o in ("resolution", "threshold", "threshold_large", "large_graph", "refine")] + [
    ("leiden", o) for o in ("resolution", "threshold", "threshold_large", "large_graph")] + [
    ("min_weight_matching", o) for o in ("full", "maximize")] + [("dulmage_mendelsohn", "method")]


@functools.cache
def default_answer(solver):
    return _answer(SOLVERS[solver]())


@pytest.mark.parametrize("solver,option", NONE_IS_DEFAULT, ids=lambda x: x)
def test_none_means_the_default(solver, option):
    assert _answer(SOLVERS[solver](**{option: None})) == default_answer(solver)


def test_init_none_is_the_empty_start():
    res = maximum_matching(BG, init=None)
    assert int(res.stats["init_rounds"]) == 0 and int(res.cardinality) == default_answer("maximum_matching")[0]


@pytest.mark.parametrize("solver,option", NONE_IS_REJECTED, ids=lambda x: x)
def test_none_is_rejected_by_name(solver, option):
    with pytest.raises(GraphInputError, match=option):
        SOLVERS[solver](**{option: None})


@pytest.mark.parametrize("call,name", [
    (lambda: max_flow(NET, None, 3), "source"), (lambda: max_flow(NET, 0, None), "sink"),
    (lambda: b_suitor(WG, None), "b"), (lambda: greedy_b_matching(WG, None), "b"),
    (lambda: maximum_matching(BG, k=float("inf")), "k"), (lambda: max_flow(NET, 0, 3, k=float("nan")), "k"),
    (lambda: maximum_matching(BG, method="graft", alpha=float("inf")), "alpha"),
    (lambda: maximum_matching(BG, lanes=0), "lanes"), (lambda: maximum_matching(BG, init_rounds=1.5), "init_rounds"),
    (lambda: b_suitor(WG, 2**40), "b"), (lambda: b_suitor(WG, 1, max_b=2**40), "max_b"),
    (lambda: stable_marriage(MEN, WOMEN, unroll=2**40), "unroll"),
    (lambda: stable_marriage(MEN, WOMEN, window=2**40), "window"),
    (lambda: stable_marriage(MEN, WOMEN, window=0), "window"),
], ids=lambda x: x if isinstance(x, str) else None)
def test_bad_values_are_rejected_by_name(call, name):
    with pytest.raises(GraphInputError, match=rf"\b{name}\b"):
        call()


@pytest.mark.parametrize("solver", ["maximum_matching", "max_flow", "suitor"])
def test_huge_iteration_bounds_are_clipped_not_overflowed(solver):
    assert _answer(SOLVERS[solver](max_iters=2**40)) == default_answer(solver)


def test_huge_init_rounds_are_clipped():
    assert _answer(SOLVERS["maximum_matching"](init_rounds=2**40)) == default_answer("maximum_matching")
    assert _answer(SOLVERS["initial_matching"](max_rounds=2**40)) == default_answer("initial_matching")


# --------------------------------------------------------------------------
# Part 2: the jit / vmap / option matrix

# every value of every option, and every method from the empty start (init=None: a start that does not
# depend on the graph, concrete under vmap) and from a greedy one; not the full product (compile time)
MATCHING_CONFIGS = [
    dict(method="pr", init=None), dict(method="pr", init="karp_sipser"),
    dict(method="apfb", init=None), dict(method="apfb", init="cheap", bfs="gpubfs"),
    dict(method="apsb", init=None, bfs="gpubfs"), dict(method="apsb", init="karp_sipser"),
    dict(method="graft", init=None, direction_optimizing=False), dict(method="graft", init="karp_sipser"),
    dict(method="graft", init="cheap", graft=False),
    dict(method="auto", init=None), dict(method="auto", init="cheap", graft=False, direction_optimizing=False),
    dict(method="flow"),   # init does not apply to "flow"
]


def _ids(config):
    return ",".join(f"{k}={v}" for k, v in config.items()) or "default"


@functools.cache
def solo_matching(key, i):
    return maximum_matching(bipartite_graphs()[i], **dict(key))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", MATCHING_CONFIGS, ids=_ids)
def test_maximum_matching_matrix(config, mode):
    graphs = bipartite_graphs()
    out = run(mode, lambda g: maximum_matching(g, **config), [(g,) for g in graphs], (batch("bipartite"),))
    for i, (g, res) in enumerate(zip(graphs, out)):
        nr, nc = int(g.n_rows), int(g.n_cols)
        rm, cm = np.asarray(res.row_mate)[:nr], np.asarray(res.col_mate)[:nc]
        assert int(res.status) == 0, res.status_name
        assert int(res.cardinality) == scipy_matching_size(g)
        assert int(res.cardinality) == int(solo_matching(tuple(config.items()), i).cardinality)
        certify.check_maximum_matching(g, rm, cm)
        if mode != "eager":   # padding past the true sizes stays unmatched
            assert np.all(np.asarray(res.row_mate)[nr:] == -1) and np.all(np.asarray(res.col_mate)[nc:] == -1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["cheap", "karp_sipser"])
def test_initial_matching_matrix(method, mode):
    graphs = bipartite_graphs()
    out = run(mode, lambda g: initial_matching(g, method), [(g,) for g in graphs], (batch("bipartite"),))
    for g, res in zip(graphs, out):
        nr, nc = int(g.n_rows), int(g.n_cols)
        rm, cm = np.asarray(res.row_mate)[:nr], np.asarray(res.col_mate)[:nc]
        certify.check_matching(g, rm, cm)
        solo = initial_matching(g, method)
        np.testing.assert_array_equal(rm, solo.row_mate)
        r, c, _, _ = g.edges()
        assert int(res.status) == 0 and not np.any((rm[r] < 0) & (cm[c] < 0))   # maximal


FLOW_CONFIGS = [dict(layout="bcsr", kernel=False), dict(layout="rcsr", kernel=False),
                dict(layout="bcsr", reverse="search", kernel=False)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", FLOW_CONFIGS, ids=_ids)
def test_max_flow_and_min_cut_matrix(config, mode):
    nets = flow_networks(config["layout"])
    ends = [(np.int32(0), np.int32(int(net.n) - 1)) for net in nets]
    f = lambda net, s, t: (max_flow(net, s, t, **config), min_cut(net, s, t, **config))
    batched = (batch("flow", config["layout"]), np.array([e[0] for e in ends]), np.array([e[1] for e in ends]))
    out = run(mode, f, [(net, *e) for net, e in zip(nets, ends)], batched)
    for net, (s, t), (res, cut) in zip(nets, ends, out):
        n, m = int(net.n), int(net.n_arcs)
        value = scipy_flow_value(net)
        assert int(res.status) == 0 and int(cut.status) == 0
        assert int(res.flow_value) == value == int(cut.value)
        assert int(max_flow(net, s, t, **config).flow_value) == value   # the solo answer
        certify.check_flow(net, s, t, np.asarray(res.flow)[:m], res.flow_value)
        certify.check_min_cut(net, s, t, np.asarray(res.source_side)[:n], value)
        certify.check_min_cut(net, s, t, np.asarray(cut.source_side)[:n], value)
        arcs = np.asarray(cut.cut_arcs)[:m]
        side = np.asarray(cut.source_side)[:n]
        tail, head, cap, _ = net.edges()
        np.testing.assert_array_equal(arcs, side[tail] & ~side[head])
        assert int(cap[arcs].sum()) == value


WEIGHTED_CONFIGS = [
    ("suitor", dict(sorted_adjacency=True)), ("suitor", dict(sorted_adjacency=False)),
    ("suitor", dict(sorted_adjacency=True, batch=1, lanes=1)),   # one vertex, one entry per round
    ("locally_dominant", dict(sorted_adjacency=True, lanes=1)), ("locally_dominant", dict(sorted_adjacency=False)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("solver,config", WEIGHTED_CONFIGS, ids=lambda x: x if isinstance(x, str) else _ids(x))
def test_weighted_matching_matrix(solver, config, mode):
    fn = {"suitor": suitor, "locally_dominant": locally_dominant}[solver]
    graphs = weighted_graphs()
    out = run(mode, lambda g: fn(g, **config), [(g,) for g in graphs], (batch("graph"),))
    for g, res in zip(graphs, out):
        n = int(g.n)
        mate = np.asarray(res.mate)[:n]
        assert int(res.status) == 0
        np.testing.assert_array_equal(mate, greedy_matching(g))
        np.testing.assert_array_equal(mate, fn(g, **config).mate)   # the solo answer
        certify.check_greedy_dominance(g, mate)
        u, v, w, _ = g.edges()
        matched = (u != v) & (mate[u] == v) if n else np.zeros(0, bool)
        assert np.isclose(float(res.weight), float(w[matched].sum()) if n else 0.0)


# the default on these small graphs is the dense rounds; the queued rounds with bounds per vertex and
# with one vertex and one entry a round
B_CONFIGS = [dict(b="array"), dict(b="array", sorted_adjacency=True),
             dict(b=2, sorted_adjacency=True, batch=1, lanes=1)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", B_CONFIGS, ids=_ids)
def test_b_suitor_matrix(config, mode):
    graphs = weighted_graphs()
    cap = graphs[0].vertex_cap
    opts = {k: v for k, v in config.items() if k != "b"}
    if config["b"] == "array":   # per-vertex bounds 0..3, padded to the vertex capacity
        bs = [np.arange(cap) % 4 for _ in graphs]
        f = lambda g, b: b_suitor(g, b, max_b=3, **opts)
        items, batched = list(zip(graphs, bs)), (batch("graph"), np.stack(bs))
    else:
        bs = [config["b"]] * len(graphs)
        f = lambda g: b_suitor(g, config["b"], **opts)
        items, batched = [(g,) for g in graphs], (batch("graph"),)
    out = run(mode, f, items, batched)
    for g, b, res in zip(graphs, bs, out):
        n, e = int(g.n), int(g.n_entries)
        bn = b[:n] if np.ndim(b) else b
        matched = np.asarray(res.matched)[:e]
        assert int(res.status) == 0
        np.testing.assert_array_equal(matched, greedy_b_matching(g, bn))
        np.testing.assert_array_equal(matched, b_suitor(g, b, **opts).matched)   # the solo answer
        certify.check_greedy_b_dominance(g, bn, matched)


STABLE_CONFIGS = [dict(method="gale_shapley", kernel=False), dict(method="mcvitie_wilson", kernel=False)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", STABLE_CONFIGS, ids=_ids)
def test_stable_marriage_matrix(config, mode):
    prefs = stable_prefs()
    out = run(mode, lambda m, w: stable_marriage(m, w, **config), prefs, batch("stable"))
    for (men, women), (mp, wp), res in zip(stable_instances(), prefs, out):
        wife = np.asarray(res.wife)[:len(men)]
        husband = np.asarray(res.husband)[:len(women)]
        ref_wife, ref_husband, _ = gs_reference(men, women, len(women))
        assert int(res.status) == 0
        assert wife.tolist() == ref_wife and husband.tolist() == ref_husband
        assert wife.tolist() == stable_marriage(mp, wp, **config).wife.tolist()   # the solo answer
        certify.check_stable(men, women, wife)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("refine, buckets", [(True, "auto"), (False, "auto"), (True, "hash")])
def test_louvain_matrix(refine, buckets, mode):
    """Louvain eagerly, under jit and vmap equals the solo run, certified; with and without the
    refinement, and with the hash classes (``Config.buckets``; "auto" gives these small graphs,
    which have no vertex of more than 319 entries, the degree buckets)."""
    graphs = weighted_graphs()
    cfg = CF.Config(buckets=buckets)
    out = run(mode, lambda g: louvain(g, refine=refine, config=cfg), [(g,) for g in graphs], (batch("graph"),))
    for g, res in zip(graphs, out):
        n = int(g.n)
        labels = np.asarray(res.labels)[:n]
        solo = louvain(g, refine=refine, config=cfg)
        assert int(res.status) == int(solo.status)
        np.testing.assert_array_equal(labels, solo.labels)
        certify.check_partition(g, labels)
        certify.check_modularity(g, labels, res.modularity)
        if int(solo.status) == 0:      # converged: a local optimum of single moves (of the last
            levels = np.asarray(solo.levels)   # level's coarse vertices without the refinement)
            groups = None if refine or len(levels) < 2 else levels[-2]
            certify.check_local_optimum(g, labels, groups=groups)
