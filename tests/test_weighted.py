"""Suitor, Locally-Dominant, b-Suitor and the greedy references (jaxmatch.weighted).

Every solver must return exactly the sequential greedy matching (b-matching)
under the shared edge order: heavier first, equal weights by the smaller
(min id, max id) pair. The reference here is written independently of
jaxmatch (a plain Python loop over ``sorted``), the certificate is
jaxmatch.certify's greedy-dominance check, and networkx's exact
``max_weight_matching`` (scipy's MILP for b-matching) bounds the weight.

All random graphs are padded to one capacity (CAPS) so that each solver
variant compiles once, eagerly and once under vmap.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import jaxmatch
from jaxmatch import certify
from jaxmatch.graph import BipartiteGraph, Graph, GraphInputError, stack
from jaxmatch.weighted import (
    b_suitor,
    greedy_b_matching,
    greedy_matching,
    locally_dominant,
    suitor,
)

CAPS = dict(vertex_capacity=64, entry_capacity=512)
MAX_B = 3


# --------------------------------------------------------------------------
# independent reference and graph makers


def edge_list(g):
    """(u, v, w) with u < v, positive weights, as stored (float32) in g."""
    k = int(g.n_entries)  # host slices (an eager jax slice compiles once per length)
    u, v = np.asarray(g.adj.src)[:k], np.asarray(g.adj.indices)[:k]
    w, n = np.asarray(g.adj.weights)[:k], int(g.n)
    keep = (u < v) & (w > 0)
    return u[keep].tolist(), v[keep].tolist(), w[keep].tolist(), n


def reference(g, b=1):
    """Sequential greedy b-matching: set of matched pairs (u, v), u < v."""
    u, v, w, n = edge_list(g)
    room = [b] * n if np.ndim(b) == 0 else list(np.asarray(b).tolist())
    chosen = set()
    for _, a, c in sorted(zip((-x for x in w), u, v)):
        if room[a] > 0 and room[c] > 0:
            room[a] -= 1
            room[c] -= 1
            chosen.add((a, c))
    return chosen


def ref_mate(g):
    mate = np.full(int(g.n), -1)
    for a, c in reference(g):
        mate[a], mate[c] = c, a
    return mate


def pairs_of_mask(g, matched):
    k = int(g.n_entries)
    s, d = np.asarray(g.adj.src)[:k], np.asarray(g.adj.indices)[:k]
    m = np.asarray(matched)[:k]
    return {(int(a), int(c)) for a, c in zip(s[m], d[m]) if a < c}


def random_graph(rng, kind=None, n=None):
    kind = kind or rng.choice(["ties", "float", "dirty", "path", "clique", "star"])
    n = n or int(rng.integers(1, 41))
    if kind == "path":  # increasing weights: the longest proposal chains
        u = np.arange(n - 1)
        return Graph.from_edges(u, u + 1, np.arange(1, n, dtype=float), n=n, **CAPS)
    if kind == "clique":
        n = min(n, 16)
        u, v = np.triu_indices(n, 1)
        return Graph.from_edges(u, v, rng.integers(1, 3, u.size).astype(float), n=n, **CAPS)
    if kind == "star":
        return Graph.from_edges(np.zeros(n - 1, int), np.arange(1, n), rng.integers(1, 4, n - 1), n=n, **CAPS)
    m = int(rng.integers(0, 3 * n + 1))
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    if kind == "float":
        w = rng.random(m).astype(np.float32) + 0.01
    else:
        w = rng.integers(0 if kind == "dirty" else 1, 4, m).astype(float)  # ties; zeros when dirty
    if kind != "dirty":
        u, v = u[u != v], v[u != v]
        w = w[: u.size]
    return Graph.from_edges(u, v, w, n=n, **CAPS)


def random_graphs(seed, count):
    rng = np.random.default_rng(seed)
    return [random_graph(rng) for _ in range(count)]


def check_mate(g, mate, status=0):
    mate = np.asarray(mate)
    assert int(status) == 0
    np.testing.assert_array_equal(mate[: int(g.n)], ref_mate(g))
    assert (mate[int(g.n):] == -1).all()
    certify.check_greedy_dominance(g, mate[: int(g.n)])


# --------------------------------------------------------------------------
# the numpy references


def test_greedy_references_match_the_plain_loop():
    for g in random_graphs(1, 60):
        np.testing.assert_array_equal(greedy_matching(g), ref_mate(g))
        for b in (1, 2, 3):
            assert pairs_of_mask(g, greedy_b_matching(g, b)) == reference(g, b)


def test_edge_order_breaks_ties_by_smaller_pair():
    # all weights equal: (0,1) first, then (0,2)... greedy takes (0,1), (2,3)
    u, v = np.triu_indices(5, 1)
    g = Graph.from_edges(u, v, np.ones(u.size), **CAPS)
    want = [1, 0, 3, 2, -1]
    assert greedy_matching(g).tolist() == want
    for f in (suitor, locally_dominant):
        assert f(g).mate.tolist() == want
    # a heavier edge wins over id order; equal weights: (1, 4) before (2, 3)
    g = Graph.from_edges([2, 1, 0], [3, 4, 1], [5.0, 5.0, 6.0], **CAPS)
    assert suitor(g).mate.tolist() == [1, 0, 3, 2, -1]
    g = Graph.from_edges([2, 1], [3, 4], [5.0, 5.0], **CAPS)
    assert suitor(g).mate.tolist() == [-1, 4, 3, 2, 1]
    g = Graph.from_edges([2, 1, 1], [3, 4, 3], [5.0, 5.0, 5.0], **CAPS)
    # (1,3) comes before (1,4) and (2,3): greedy takes (1,3) only
    assert suitor(g).mate.tolist() == [-1, 3, -1, 1, -1]
    assert locally_dominant(g).mate.tolist() == [-1, 3, -1, 1, -1]


# --------------------------------------------------------------------------
# many random graphs, vmapped: every variant equals the reference


VARIANTS = {
    "suitor": lambda g: suitor(g).mate,
    "suitor_sorted": lambda g: suitor(g, sorted_adjacency=True).mate,
    "suitor_small_batches": lambda g: suitor(g, batch=4, lanes=6).mate,
    "ld": lambda g: locally_dominant(g).mate,
    "ld_sorted": lambda g: locally_dominant(g, sorted_adjacency=True).mate,
    "ld_few_lanes": lambda g: locally_dominant(g, lanes=5).mate,
}


def stack_equal(graphs):
    """jaxmatch.stack for graphs that already share CAPS (skips its host round trip per graph)."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *graphs)


@pytest.fixture(scope="module")
def batches():
    graphs = random_graphs(7, 320)
    return [(graphs[i:i + 64], stack_equal(graphs[i:i + 64])) for i in range(0, 320, 64)]


def test_vmap_over_jaxmatch_stack_equals_each_graph_alone():
    rng = np.random.default_rng(4)
    graphs = [Graph.from_edges(*random_graph(rng, "ties", n=n).edges()) for n in (3, 9, 20, 33)]
    batch = stack(graphs)  # capacities: the largest, rounded to powers of two
    assert batch.vertex_cap == 64
    mates = jax.vmap(lambda g: suitor(g).mate)(batch)
    for g, mate in zip(graphs, np.asarray(mates)):
        np.testing.assert_array_equal(mate[: int(g.n)], suitor(g.with_capacity(**CAPS)).mate)
        assert (mate[int(g.n):] == -1).all()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_matching_variants_equal_greedy_on_320_graphs(name, batches):
    f = jax.jit(jax.vmap(VARIANTS[name]))
    for graphs, batch in batches:
        mates = np.asarray(f(batch))
        for g, mate in zip(graphs, mates):
            check_mate(g, mate)


@pytest.mark.parametrize("small", [False, True])
def test_b_suitor_equals_greedy_b_matching_on_320_graphs(small, batches):
    kw = dict(batch=4, lanes=6) if small else {}
    rng = np.random.default_rng(3)

    def run(g, b):
        r = b_suitor(g, b, max_b=MAX_B, **kw)
        return r.matched, r.partners, r.status

    f = jax.jit(jax.vmap(run))
    for i, (graphs, batch) in enumerate(batches):
        # b = 1, 2, 3 for whole batches, then random per-vertex bounds in 0..3
        bs = np.full((len(graphs), 64), i + 1) if i < 3 else rng.integers(0, MAX_B + 1, (len(graphs), 64))
        matched, partners, status = map(np.asarray, f(batch, jnp.asarray(bs, jnp.int32)))
        for g, b, m, p, s in zip(graphs, bs, matched, partners, status):
            n = int(g.n)
            want = reference(g, b[:n])
            assert s == 0
            assert pairs_of_mask(g, m) == want
            assert not m[int(g.n_entries):].any()
            certify.check_greedy_b_dominance(g, b[:n], m[: int(g.n_entries)])
            for x in range(n):  # partners: heaviest first, -1 padded
                row = [y for y in p[x] if y >= 0]
                assert sorted(row) == sorted(c if a == x else a for a, c in want if x in (a, c))
                assert (p[x][len(row):] == -1).all()


# --------------------------------------------------------------------------
# property test (eager, one fixed capacity)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(0, 90))
    u = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    v = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.25]), min_size=m, max_size=m))
    return Graph.from_edges(u, v, w, n=n, **CAPS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, MAX_B))
def test_property_all_algorithms_equal_greedy(g, b):
    for r in (suitor(g), suitor(g, sorted_adjacency=True), locally_dominant(g)):
        check_mate(g, r.mate, r.status)
        np.testing.assert_array_equal(r.mate, greedy_matching(g))
    r = b_suitor(g, b, max_b=MAX_B)
    assert int(r.status) == 0
    np.testing.assert_array_equal(r.matched, greedy_b_matching(g, b))
    certify.check_greedy_b_dominance(g, b, r.matched)


# --------------------------------------------------------------------------
# weight against the optimum


def test_weight_at_least_half_of_networkx_optimum():
    rng = np.random.default_rng(11)
    ratios = []
    for _ in range(40):
        g = random_graph(rng, "float", n=int(rng.integers(4, 31)))
        u, v, w, n = edge_list(g)
        G = nx.Graph()
        G.add_weighted_edges_from(zip(u, v, w))
        opt = sum(G[a][c]["weight"] for a, c in nx.max_weight_matching(G))
        res = suitor(g)
        mate = np.asarray(res.mate)
        mine = sum(x for a, c, x in zip(u, v, w) if mate[a] == c)
        assert float(res.weight) == pytest.approx(mine, rel=1e-5)
        assert int(res.cardinality) == int((mate >= 0).sum()) // 2
        if opt > 0:
            assert mine >= 0.5 * opt - 1e-6
            assert mine <= opt + 1e-6
            ratios.append(mine / opt)
    assert np.mean(ratios) > 0.8  # greedy is near-optimal in practice (typically ~0.95)


def _optimal_b_matching(g, b):
    u, v, w, n = edge_list(g)
    m = len(u)
    if m == 0:
        return 0.0
    A = sp.csr_array((np.ones(2 * m), (np.r_[u, v], np.r_[np.arange(m), np.arange(m)])), shape=(n, m))
    res = scipy.optimize.milp(-np.asarray(w), integrality=np.ones(m),
                              bounds=scipy.optimize.Bounds(0, 1),
                              constraints=scipy.optimize.LinearConstraint(A, 0, b))
    return -res.fun


def test_b_suitor_weight_at_least_half_of_optimum():
    rng = np.random.default_rng(12)
    for i in range(12):
        g = random_graph(rng, "float", n=int(rng.integers(4, 25)))
        b = 1 + i % MAX_B
        res = b_suitor(g, b, max_b=MAX_B)
        opt = _optimal_b_matching(g, b)
        assert float(res.weight) >= 0.5 * opt - 1e-5
        assert float(res.weight) <= opt + 1e-4


# --------------------------------------------------------------------------
# jit, vmap, options, degenerate inputs


def test_jit_gives_padded_eager_answer():
    g = random_graph(np.random.default_rng(5), "ties", n=37)
    eager = suitor(g)
    jitted = jax.jit(lambda g: suitor(g))(g)
    assert jitted.mate.shape == (64,) and eager.mate.shape == (37,)
    np.testing.assert_array_equal(jitted.mate[:37], eager.mate)
    assert float(jitted.weight) == float(eager.weight)


def test_sorted_and_dense_give_identical_results_and_stats_make_sense():
    g = random_graph(np.random.default_rng(6), "float", n=40)
    a, d = suitor(g, sorted_adjacency=True), suitor(g)
    np.testing.assert_array_equal(a.mate, d.mate)
    assert int(a.stats["proposals"]) >= int(a.cardinality)
    assert int(a.stats["rounds"]) >= 1 and int(d.stats["rounds"]) >= 1
    # the pointer scan examines fewer entries than full rescans
    assert int(a.stats["scanned"]) <= int(d.stats["scanned"])
    la, ld = locally_dominant(g, sorted_adjacency=True), locally_dominant(g)
    np.testing.assert_array_equal(la.mate, ld.mate)
    np.testing.assert_array_equal(la.mate, a.mate)


def test_dense_rounds_compare_weight_bits_in_float64_and_switch_on_large_graphs():
    """``sorted_adjacency=False`` compares the weights' bits (int64 keys in 64-bit mode: weights equal
    in float32 stay apart), and past ``SWITCH_MIN`` entries picks each round's scan and exchange: the
    greedy matching either way, as the rank-sorted mode."""
    from jaxmatch.weighted import sharded
    rng = np.random.default_rng(11)
    with jax.enable_x64(True):
        u, v = rng.integers(0, 60, 240), rng.integers(0, 60, 240)
        g = Graph.from_edges(u, v, 1.0 + rng.integers(0, 4, 240) * 1e-12, **CAPS)
        assert g.adj.weights.dtype == jnp.float64
        want = greedy_matching(g)
        np.testing.assert_array_equal(suitor(g, sorted_adjacency=False).mate, want)
        np.testing.assert_array_equal(suitor(g, sorted_adjacency=True).mate, want)
    n, m = 4000, 24000
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    g = Graph.from_edges(u, v, rng.integers(1, 9, m).astype(np.float32), n=n, entry_capacity=sharded.SWITCH_MIN)
    d = suitor(g, sorted_adjacency=False)
    np.testing.assert_array_equal(d.mate, greedy_matching(g))
    certify.check_greedy_dominance(g, np.asarray(d.mate)[:n])
    # later rounds scan the proposers' rows only: fewer entries than a full scan per round
    assert int(d.stats["rounds"]) >= 3 and int(d.stats["scanned"]) < int(d.stats["rounds"]) * int(g.n_entries)


def test_max_iters_reports_status_and_keeps_a_valid_matching():
    u = np.arange(39)
    g = Graph.from_edges(u, u + 1, np.arange(1.0, 40.0), **CAPS)  # long chain
    with pytest.raises(jaxmatch.SolverError, match="suitor: stopped at max_iters"):
        suitor(g, max_iters=2)
    for res in (suitor(g, max_iters=2, throw=False), suitor(g, sorted_adjacency=True, max_iters=2, throw=False),
                locally_dominant(g, max_iters=1, throw=False),
                locally_dominant(g, sorted_adjacency=True, max_iters=1, throw=False)):
        assert res.status_name == "hit max_iters"
        mate = np.asarray(res.mate)
        v = np.flatnonzero(mate >= 0)
        assert (mate[mate[v]] == v).all() and (np.abs(mate[v] - v) == 1).all()
    r = b_suitor(g, 2, max_b=MAX_B, max_iters=1, throw=False)
    assert int(r.status) == 1
    assert suitor(g).status_name == "converged"


@pytest.mark.parametrize("case", ["empty", "no_edges", "loops_only", "zero_weights", "one_edge", "unweighted"])
def test_degenerate_graphs(case):
    if case == "empty":
        g = Graph.from_edges([], [], n=0, **CAPS)
    elif case == "no_edges":
        g = Graph.from_edges([], [], n=5, **CAPS)
    elif case == "loops_only":
        g = Graph.from_edges([0, 1, 2], [0, 1, 2], [5.0, 1.0, 2.0], **CAPS)
    elif case == "zero_weights":
        g = Graph.from_edges([0, 1], [1, 2], [0.0, 0.0], **CAPS)
    elif case == "one_edge":
        g = Graph.from_edges([3], [1], [0.25], **CAPS)
    else:
        g = Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], **CAPS)
    want = ref_mate(g)
    for res in (suitor(g), suitor(g, sorted_adjacency=True), locally_dominant(g),
                locally_dominant(g, sorted_adjacency=True)):
        assert res.status_name == "converged"
        np.testing.assert_array_equal(res.mate, want)
    r = b_suitor(g, 2, max_b=MAX_B)
    assert int(r.status) == 0 and pairs_of_mask(g, r.matched) == reference(g, 2)
    if case in ("loops_only", "zero_weights", "empty", "no_edges"):
        assert (want == -1).all() and float(suitor(g).weight) == 0.0
    if case == "unweighted":  # ties everywhere: (0,1) then (2,3)
        assert want.tolist() == [1, 0, 3, 2]


def test_b_zero_and_b_at_least_the_degree():
    u = np.arange(30)  # a cycle with chords: degree 3
    g = Graph.from_edges(np.r_[u, u[:15]], np.r_[(u + 1) % 30, u[:15] + 15], np.r_[u % 5, u[:15] % 4], **CAPS)
    r = b_suitor(g, 0, max_b=MAX_B)
    assert not np.asarray(r.matched).any() and float(r.weight) == 0.0
    # b = 3 >= the maximum degree of the loops-free part: every positive edge is taken
    r = b_suitor(g, MAX_B, max_b=MAX_B)
    eu, ev, ew, _ = edge_list(g)
    assert max(np.bincount(np.r_[eu, ev])) <= MAX_B
    assert int(r.cardinality) == len(eu) and float(r.weight) == pytest.approx(sum(ew))


def test_bad_input():
    g = Graph.from_edges([0], [1], [1.0], **CAPS)
    with pytest.raises(GraphInputError, match="Graph"):
        suitor(BipartiteGraph.from_edges([0], [0]))
    with pytest.raises(GraphInputError, match="Graph"):
        locally_dominant(sp.csr_array(np.eye(2)))
    with pytest.raises(GraphInputError, match="max_iters"):
        suitor(g, max_iters=0)
    with pytest.raises(GraphInputError, match="batch"):
        suitor(g, batch=-1)
    with pytest.raises(GraphInputError, match="lanes"):
        locally_dominant(g, lanes=1.5)
    with pytest.raises(GraphInputError, match="sorted_adjacency"):
        suitor(g, sorted_adjacency="yes")
    with pytest.raises(GraphInputError, match="negative|>= 0"):
        b_suitor(g, -1)
    with pytest.raises(GraphInputError, match="negative"):
        b_suitor(g, np.array([1, -2]))
    with pytest.raises(GraphInputError, match="one entry per vertex"):
        b_suitor(g, np.array([1, 2, 3]))
    with pytest.raises(GraphInputError, match="integer"):
        b_suitor(g, 1.5)
    with pytest.raises(GraphInputError, match="integer"):
        b_suitor(g, np.array([1.0, 2.0]))
    with pytest.raises(GraphInputError, match="max_b"):
        b_suitor(g, 3, max_b=2)
    with pytest.raises(GraphInputError, match="sorted_adjacency"):
        b_suitor(g, 1, sorted_adjacency="yes")
    with pytest.raises(GraphInputError, match="max_b"):
        jax.jit(lambda b: b_suitor(g, b).matched)(jnp.ones(64, jnp.int32))
    with pytest.raises(GraphInputError, match="Graph"):
        greedy_matching(BipartiteGraph.from_edges([0], [0]))
    with pytest.raises(GraphInputError, match="b must"):
        greedy_b_matching(g, np.ones(5, int))


# --------------------------------------------------------------------------
# the certificate itself


def test_certificate_rejects_non_greedy_answers():
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], [2.0, 3.0, 2.0], **CAPS)  # path: greedy takes (1,2)
    good = greedy_matching(g)
    assert certify.is_greedy_dominant(g, good)
    optimum = np.array([1, 0, 3, 2])  # heavier in total, but not greedy
    with pytest.raises(certify.CertificateError, match="not greedy"):
        certify.check_greedy_dominance(g, optimum)
    assert not certify.is_greedy_dominant(g, np.full(4, -1))           # not maximal
    assert not certify.is_greedy_dominant(g, np.array([2, -1, 0, -1]))  # (0, 2) is no edge
    assert not certify.is_greedy_dominant(g, np.array([-1, 2, 3, -1]))  # not symmetric
    assert not certify.is_greedy_dominant(g, good[:3])                  # wrong shape
    # a loop or a zero-weight edge cannot be matched
    z = Graph.from_edges([0, 1], [1, 1], [0.0, 1.0], **CAPS)
    assert certify.is_greedy_dominant(z, np.array([-1, -1]))
    assert not certify.is_greedy_dominant(z, np.array([1, 0]))
    # b-matching variant
    mask = greedy_b_matching(g, 2)
    assert certify.is_greedy_b_dominant(g, 2, mask) and mask.all()
    assert not certify.is_greedy_b_dominant(g, 1, mask)                 # too many at a vertex
    one = greedy_b_matching(g, 1)
    assert certify.is_greedy_b_dominant(g, 1, one)
    half = one.copy()
    half[np.flatnonzero(one)[0]] = False
    assert not certify.is_greedy_b_dominant(g, 1, half)                 # one direction only
    assert not certify.is_greedy_b_dominant(g, 2, one)                  # not greedy for b = 2
    assert not certify.is_greedy_b_dominant(g, 1, one.astype(int))      # not a bool mask


def test_certificate_agrees_with_reference_on_perturbed_matchings():
    rng = np.random.default_rng(9)
    for g in random_graphs(10, 40):
        mate = ref_mate(g)
        assert certify.is_greedy_dominant(g, mate)
        v = np.flatnonzero(mate >= 0)
        if v.size:  # drop one matched edge: no longer greedy (that edge is free now)
            bad = mate.copy()
            x = rng.choice(v)
            bad[x] = bad[mate[x]] = -1
            assert not certify.is_greedy_dominant(g, bad)


def test_saturating_prefix_sum_of_the_pointer_scan():
    import importlib
    su = importlib.import_module("jaxmatch.weighted.suitor")
    rng = np.random.default_rng(13)
    for cap in (1, 5, 40, 1000):
        w = rng.integers(0, 12, 50).astype(np.int32)
        want = np.minimum(np.r_[0, np.cumsum(np.minimum(w, cap))[:-1]], cap)
        np.testing.assert_array_equal(su._exclusive_sum(jnp.asarray(w), cap, saturate=True), want)
        plain = np.asarray(su._exclusive_sum(jnp.asarray(w), cap, saturate=False))
        np.testing.assert_array_equal(np.minimum(plain, cap), want)
