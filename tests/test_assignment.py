"""Exact weighted bipartite matching (issue 24): linear_sum_assignment against scipy's, min_weight_matching
against scipy's min_weight_full_bipartite_matching (full) and networkx's max_weight_matching (any size),
every answer certified by its dual potentials (jaxmatch.certify.check_assignment); jit, vmap, ties,
forbidden entries, infeasible and empty inputs, bad input.

Shapes are few on purpose (one compilation each): dense 5 x 5 (the dense square path), 4 x 7 and 7 x 4 (padded
to a square), 2 x 9 (more than 4 columns a row: the sparse square problem of its entries); sparse graphs at one
capacity (8, 8, 64)."""
import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

import jaxmatch
from jaxmatch import BipartiteGraph, GraphInputError, SolverError, Status, linear_sum_assignment, min_weight_matching
from jaxmatch.assignment import _dense, _rectangular
from jaxmatch.assignment.auction import Config
from jaxmatch.certify import CertificateError, check_assignment

SHAPES = [(5, 5), (4, 7), (7, 4), (2, 9)]
CAPS = dict(row_capacity=8, col_capacity=8, edge_capacity=64)


def _matrix(rng, shape, kind):
    n, m = shape
    if kind == "int":
        return rng.integers(0, 10, shape).astype(float)
    if kind == "ties":                      # many equal optima
        return rng.integers(0, 2, shape).astype(float)
    if kind == "negative":
        return rng.integers(-50, 50, shape).astype(float)
    return rng.random(shape)


def _duals(c, maximize, cfg=Config()):
    """(column of each row, column potentials) of the solver on a matrix with rows <= columns."""
    if c.shape[1] <= 4 * c.shape[0]:
        cols, _, v, status, _ = _dense(jnp.asarray(c), 10**6, maximize, cfg)
    else:
        cols, _, v, status, _ = _rectangular(jnp.asarray(c), 10**6, maximize, cfg)
    assert int(status) == Status.CONVERGED
    return np.asarray(cols), np.asarray(v)


def _same_as_scipy(c, maximize):
    """Our answer has scipy's form and scipy's optimal total; the potentials certify it."""
    r0, c0 = scipy.optimize.linear_sum_assignment(c, maximize=maximize)
    r1, c1 = (np.asarray(x) for x in linear_sum_assignment(c, maximize=maximize))
    assert r1.dtype == np.int32 and r1.shape == c1.shape == r0.shape
    assert np.all(np.diff(r1) > 0) and np.unique(c1).size == c1.size
    if c.shape[0] <= c.shape[1]:
        assert np.array_equal(r1, np.arange(c.shape[0]))
    want, got = c[r0, c0].sum(), c[r1, c1].sum()
    assert abs(got - want) <= 1e-5 * (1 + abs(want)), (got, want)
    t = c if c.shape[0] <= c.shape[1] else c.T
    cols, v = _duals(t, maximize)
    check_assignment(t, cols, v, maximize=maximize)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["int", "ties", "negative", "float"])
def test_dense_equals_scipy(shape, kind):
    rng = np.random.default_rng(hash((shape, kind)) % 2**32)
    for trial in range(12):
        c = _matrix(rng, shape, kind)
        _same_as_scipy(c, maximize=trial % 3 == 1)


@pytest.mark.parametrize("shape", SHAPES)
def test_forbidden_entries_and_infeasible(shape):
    """inf forbids a pair (-inf when maximising); scipy's ValueError when no assignment avoids them."""
    rng = np.random.default_rng(5)
    feasible = infeasible = 0
    for trial in range(30):
        c = _matrix(rng, shape, "int")
        c[rng.random(shape) < (0.5, 0.85)[trial % 2]] = np.inf
        maximize = trial % 3 == 1
        if maximize:
            c[np.isinf(c)] = -np.inf
        try:
            scipy.optimize.linear_sum_assignment(c, maximize=maximize)
        except ValueError as e:
            infeasible += 1
            with pytest.raises(ValueError, match=str(e)):
                linear_sum_assignment(c, maximize=maximize)
            continue
        feasible += 1
        _same_as_scipy(c, maximize)
    assert feasible and infeasible
    big = np.ones((300, 300))
    big[:, 7] = np.inf                         # a column nobody may take: refused before any bidding
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(big)


def test_dense_reads_only_the_bidders_rows():
    """The dense round on the rows of the bidders only, in row-count classes (min_rows=4: 40, 10
    rows): the same answers, certified, as scipy's, with ties, forbidden pairs and padding rows."""
    rng = np.random.default_rng(11)
    for trial in range(6):
        n, m = (40, 40) if trial % 2 else (30, 40)
        c = _matrix(rng, (n, m), ("int", "ties", "float")[trial % 3])
        c[rng.random((n, m)) < 0.1] = np.inf
        r0, c0 = scipy.optimize.linear_sum_assignment(c)
        cols, v = _duals(c, False, Config(min_rows=4, kernel=False))
        assert abs(c[np.arange(n), cols].sum() - c[r0, c0].sum()) <= 1e-5 * (1 + abs(c[r0, c0].sum()))
        check_assignment(c, cols, v)


def test_scipy_checks_and_empty():
    for shape in [(0, 0), (0, 3), (3, 0)]:
        r, c = linear_sum_assignment(np.zeros(shape))
        assert r.shape == c.shape == (0,)
    with pytest.raises(ValueError, match="invalid numeric entries"):
        linear_sum_assignment(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="invalid numeric entries"):
        linear_sum_assignment(np.array([[1.0, -np.inf]]))
    with pytest.raises(ValueError, match="invalid numeric entries"):
        linear_sum_assignment(np.array([[1.0, np.inf]]), maximize=True)
    with pytest.raises(ValueError, match="2-D"):
        linear_sum_assignment(np.zeros(3))
    with pytest.raises(ValueError, match="real numeric"):
        linear_sum_assignment(np.array([["a", "b"]]))
    # a matrix already on the device: checked there, and on the host only when an entry is not finite
    with pytest.raises(ValueError, match=r"invalid numeric entries \(cost_matrix\[0, 1\] = nan\)"):
        linear_sum_assignment(jnp.asarray([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(jnp.asarray([[np.inf, np.inf], [1.0, 2.0]]))
    assert linear_sum_assignment(jnp.asarray([[np.inf, 1.0], [1.0, 2.0]]))[1].tolist() == [1, 0]
    with pytest.raises(GraphInputError, match="maximize"):
        linear_sum_assignment(np.zeros((2, 2)), maximize="yes")
    r, c = linear_sum_assignment(np.array([[True, False], [False, True]]))   # bool costs, as scipy
    assert c.tolist() == [1, 0]


def test_jit_and_vmap_over_a_batch():
    """jit gives the eager answer; vmap over equal-shape matrices gives each matrix's eager answer,
    infeasible ones -1 (no exception can leave a traced call)."""
    rng = np.random.default_rng(9)
    batch = np.stack([_matrix(rng, (5, 5), "int") for _ in range(6)])
    batch[5, :, 0] = batch[5, :, 1] = batch[5, :, 2] = np.inf     # 5 rows, 2 usable columns
    rows, cols = jax.vmap(linear_sum_assignment)(jnp.asarray(batch))
    jrows, jcols = jax.jit(linear_sum_assignment)(jnp.asarray(batch[0]))
    for k in range(5):
        r, c = linear_sum_assignment(batch[k])
        assert np.array_equal(np.asarray(rows[k]), np.asarray(r)) and np.array_equal(np.asarray(cols[k]), np.asarray(c))
    assert np.array_equal(np.asarray(jcols), np.asarray(linear_sum_assignment(batch[0])[1]))
    assert np.all(np.asarray(cols[5]) == -1)
    rect = np.stack([_matrix(rng, (7, 4), "float") for _ in range(3)])
    rows, cols = jax.vmap(linear_sum_assignment)(jnp.asarray(rect))
    for k in range(3):
        r, c = linear_sum_assignment(rect[k])
        assert np.array_equal(np.asarray(rows[k]), np.asarray(r)) and np.array_equal(np.asarray(cols[k]), np.asarray(c))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SHAPES), st.integers(0, 2**32 - 1), st.booleans(), st.floats(0, 0.6))
def test_property_dense(shape, seed, maximize, forbid):
    rng = np.random.default_rng(seed)
    c = rng.integers(-3, 4, shape).astype(float)
    c[rng.random(shape) < forbid] = -np.inf if maximize else np.inf
    try:
        scipy.optimize.linear_sum_assignment(c, maximize=maximize)
    except ValueError:
        with pytest.raises(ValueError, match="infeasible"):
            linear_sum_assignment(c, maximize=maximize)
        return
    _same_as_scipy(c, maximize)


# --------------------------------------------------------------------------
# sparse: min_weight_matching on a weighted BipartiteGraph

def _graph(rng, nr, nc, density, kind):
    mask = rng.random((nr, nc)) < density
    r, c = np.nonzero(mask)
    w = rng.random(r.size) + 0.1 if kind == "float" else rng.integers(1, 20, r.size) * (1 if kind == "int" else -1)
    return r, c, w.astype(float)


def _reference(r, c, w, nr, nc, full, maximize):
    """scipy's full matching weight (None when infeasible), or networkx's best matching of any size."""
    if full:
        try:
            i, j = min_weight_full_bipartite_matching(sp.csr_array((w, (r, c)), shape=(nr, nc)), maximize=maximize)
        except ValueError:
            return None
        return sp.csr_array((w, (r, c)), shape=(nr, nc))[i, j].sum()
    g = nx.Graph()
    for a, b, x in zip(r, c, w):
        if (x if maximize else -x) > 0:
            g.add_edge(("r", a), ("c", b), weight=x if maximize else -x)
    total = sum(g[a][b]["weight"] for a, b in nx.max_weight_matching(g))
    return total if maximize else -total


@pytest.mark.parametrize("nr,nc", [(6, 6), (5, 8), (8, 5)])
def test_sparse_equals_scipy_and_networkx(nr, nc):
    rng = np.random.default_rng(nr * 10 + nc)
    seen = {"converged": 0, "infeasible": 0}
    for trial in range(16):
        r, c, w = _graph(rng, nr, nc, (0.3, 0.6, 1.0)[trial % 3], ("int", "negative", "float")[trial % 3])
        g = BipartiteGraph.from_edges(r, c, nr, nc, weights=w, **CAPS)
        for full in (True, False):
            for maximize in (False, True):
                want = _reference(r, c, w, nr, nc, full, maximize)
                res = min_weight_matching(g, full=full, maximize=maximize, throw=False)
                seen[res.status_name] += 1
                if want is None:
                    assert res.status_name == "infeasible"
                    with pytest.raises(SolverError, match="infeasible"):
                        min_weight_matching(g, full=full, maximize=maximize)
                    continue
                assert res.status_name == "converged"
                assert abs(float(res.weight) - want) <= 1e-4 * (1 + abs(want)), (float(res.weight), want)
                check_assignment(g, res.row_mate, res.col_potential, full=full, maximize=maximize)
                mate, cmate = np.asarray(res.row_mate), np.asarray(res.col_mate)
                assert mate.shape == (nr,) and cmate.shape == (nc,)
                assert all(cmate[j] == i for i, j in enumerate(mate) if j >= 0)
                u, v = np.asarray(res.row_potential), np.asarray(res.col_potential)
                slack = (w - u[r] - v[c]) * (-1 if maximize else 1)      # reduced costs >= 0 (up to eps)
                assert slack.min() >= -1e-3 * (1 + np.abs(w).max())
    assert seen["converged"] and seen["infeasible"]


def test_sparse_from_scipy_vmap_and_jit():
    """A batch of weighted graphs at one capacity under vmap, and jit: each equals its eager run."""
    rng = np.random.default_rng(2)
    graphs = []
    for nr, nc in [(6, 6), (5, 8), (3, 2), (0, 0)]:
        r, c, w = _graph(rng, nr, nc, 0.7, "int")
        graphs.append(jaxmatch.from_scipy(sp.coo_array((w, (r, c)), shape=(nr, nc)), weighted=True, **CAPS))
    solo = [min_weight_matching(g, full=False, maximize=True) for g in graphs]
    batched = jax.vmap(lambda g: min_weight_matching(g, full=False, maximize=True))(jaxmatch.stack(graphs))
    jitted = jax.jit(lambda g: min_weight_matching(g, full=False, maximize=True))(graphs[0])
    for k, (g, s) in enumerate(zip(graphs, solo)):
        nr = int(g.n_rows)
        assert np.array_equal(np.asarray(batched.row_mate[k][:nr]), np.asarray(s.row_mate))
        assert float(batched.weight[k]) == float(s.weight)
        check_assignment(g, s.row_mate, s.col_potential, full=False, maximize=True)
    assert np.array_equal(np.asarray(jitted.row_mate[:6]), np.asarray(solo[0].row_mate))


def test_square_graph_needs_no_dummies():
    """A square graph with full=True given eagerly runs the problem of its own edges (no dummy persons or
    forbidden entries); under jit the square problem with dummies: both bid alike (same matching, same
    rounds), scipy's total, and each certificate holds. The threshold of ``Config.early`` counts the persons
    to assign, not the capacity's."""
    from jaxmatch.assignment import _sparse
    rng = np.random.default_rng(11)
    for k in (3, 7, 8):
        for ties in (False, True):
            r = np.concatenate([rng.integers(0, k, 3 * k), np.arange(k)])
            c = np.concatenate([rng.integers(0, k, 3 * k), rng.permutation(k)])
            w = rng.integers(1, 3 if ties else 50, r.size).astype(np.float32)
            A = sp.csr_matrix((w, (r, c)), shape=(k, k))
            g = jaxmatch.from_scipy(A, weighted=True, **CAPS)
            for maximize in (False, True):
                eager = min_weight_matching(g, maximize=maximize)
                traced = jax.jit(lambda g, m=maximize: min_weight_matching(g, maximize=m))(g)
                sq = _sparse(g, jnp.int32(10**7), True, maximize, Config(), True)
                np.testing.assert_array_equal(np.asarray(sq.row_mate[:k]), np.asarray(eager.row_mate))
                np.testing.assert_array_equal(np.asarray(traced.row_mate[:k]), np.asarray(eager.row_mate))
                assert int(traced.stats["iterations"]) == int(eager.stats["iterations"])
                i, j = min_weight_full_bipartite_matching(A, maximize=maximize)
                assert float(eager.weight) == float(traced.weight) == pytest.approx(float(A[i, j].sum()))
                check_assignment(g, eager.row_mate, eager.col_potential, maximize=maximize)
                check_assignment(g, traced.row_mate[:k], traced.col_potential[:k], maximize=maximize)
    # row and column capacities that differ (the problem is as wide as the larger)
    g = BipartiteGraph.from_edges([0, 1, 2, 2], [2, 0, 1, 0], 3, 3, weights=[1.0, 2.0, 3.0, 4.0],
                                  row_capacity=4, col_capacity=16, edge_capacity=32)
    for maximize, want in ((False, [2, 0, 1]), (True, [2, 0, 1])):
        res = min_weight_matching(g, maximize=maximize)
        assert np.asarray(res.row_mate).tolist() == want and float(res.weight) == 6.0
        check_assignment(g, res.row_mate, res.col_potential, maximize=maximize)
    from jaxmatch.assignment.auction import _early
    real = jnp.arange(4096) < 3000
    assert int(_early(Config(finish=16, early=0.002), None, real)) == 6
    assert int(_early(Config(finish=0, early=0.002), None, real)) == 0


def test_certificate_refuses_wrong_answers():
    cost = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])
    cols, v = _duals(cost, False)
    assert check_assignment(cost, cols, v) < 1
    with pytest.raises(CertificateError, match="from the dual bound"):
        check_assignment(cost, [0, 1, 2], v)                     # cost 6, not the optimum 5
    with pytest.raises(CertificateError, match="two rows"):
        check_assignment(cost, [1, 1, 2], v)
    with pytest.raises(CertificateError, match="pairs"):
        check_assignment(cost, [1, 0, -1], v)
    with pytest.raises(CertificateError, match="not an allowed pair"):
        check_assignment(np.where(np.eye(3) > 0, np.inf, cost), [0, 2, 1], v)
    with pytest.raises(CertificateError, match="from the dual bound"):
        check_assignment(cost, cols, v + np.array([0.0, 3.0, 0.0]))   # potentials that prove less


def test_min_weight_matching_bad_input_and_limits():
    g = BipartiteGraph.from_edges([0, 1], [1, 0])
    with pytest.raises(GraphInputError, match="weighted"):
        min_weight_matching(g)
    wg = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1], weights=[1.0, 2.0, 3.0])
    with pytest.raises(GraphInputError, match="full"):
        min_weight_matching(wg, full=1)
    with pytest.raises(GraphInputError, match="max_iters"):
        min_weight_matching(wg, max_iters=0)
    with pytest.raises(GraphInputError, match="BipartiteGraph"):
        min_weight_matching(np.eye(2))
    with pytest.raises(GraphInputError, match="batch"):
        min_weight_matching(jaxmatch.stack([wg, wg]))
    assert float(min_weight_matching(wg, max_iters=2**40).weight) == 3.0
    res = min_weight_matching(wg, max_iters=1, throw=False)
    assert res.status_name == "hit max_iters"


def test_sparse_reads_only_the_bidders_entries():
    """The sparse round on the bidders' entries only (entries sorted by person, min_rows=4: slot
    counts 80, 20, 5 and lanes in proportion; no sequential tail, which needs the row pointers)
    makes the same bids as the pass over every entry: the same prices, assignment and rounds bit
    for bit; and through min_weight_matching's path, scipy's total, certified."""
    from jaxmatch.assignment import _sparse
    from jaxmatch.assignment import auction as au
    rng = np.random.default_rng(12)
    cfg = Config(min_rows=4, tail=0)
    for trial in range(4):
        n = 80
        person = np.concatenate([np.repeat(np.arange(n), 5), np.arange(n)]).astype(np.int32)
        obj = np.concatenate([rng.integers(0, n, 5 * n), rng.permutation(n)]).astype(np.int32)
        keep = rng.random(person.size) < 0.9
        keep[5 * n:] = True                                   # a perfect matching: feasible
        person, obj = np.where(keep, person, n), np.where(keep, obj, n)
        a = jnp.asarray(rng.integers(0, 50 if trial % 2 else 5, person.size), jnp.float32)   # 5: many ties
        real = jnp.ones(n, bool)
        b, _, spread, _ = au.scale(a, jnp.asarray(keep), jnp.int32(n), jnp.float32)
        sorted_p = au.by_person(jnp.asarray(person), jnp.asarray(obj), b, real)
        one = jax.jit(lambda p: au.solve(p, spread, 10**6, cfg=cfg))
        got, full = one(sorted_p), one(sorted_p._replace(indptr=None))
        assert int(got.status) == 0 and int(got.rounds) > 0
        for x, y in zip(got, full):
            assert np.array_equal(np.asarray(x), np.asarray(y))
    for trial in range(3):
        nr, nc = 60, 50
        r = np.concatenate([rng.integers(0, nr, 400), np.arange(nc)])
        c = np.concatenate([rng.integers(0, nc, 400), np.arange(nc)])
        w = rng.integers(1, 30, r.size).astype(np.float32)
        A = sp.csr_matrix((w, (r, c)), shape=(nr, nc))
        A.sum_duplicates()
        g = jaxmatch.from_scipy(A, weighted=True)
        res = _sparse(g, jnp.int32(10**6), True, False, cfg)
        ri, ci = min_weight_full_bipartite_matching(A)
        assert int(res.status) == 0
        assert float(res.weight) == pytest.approx(float(A[ri, ci].sum()))
        check_assignment(g, res.row_mate[:nr], res.col_potential[:nc])


def _square_problem(rng, n: int, trial: int):
    """A sparse n x n weighted graph (4 random entries a row and a perfect matching) and scipy's optimal
    total: integer weights with many ties (odd trials) or not, none in column 0 (trial 3: None, it is
    infeasible), uniform floats (trial 4)."""
    r = np.concatenate([np.repeat(np.arange(n), 4), np.arange(n)])
    c = np.concatenate([rng.integers(0, n, 4 * n), rng.permutation(n)])
    if trial == 3:                                       # infeasible: column 0 has no edge
        c = np.where(c == 0, 1, c)
    w = rng.random(r.size) if trial == 4 else rng.integers(1, 4 if trial % 2 else 100, r.size)
    A = sp.csr_matrix((w.astype(np.float32), (r, c)), shape=(n, n))
    A.sum_duplicates()
    try:
        ri, ci = min_weight_full_bipartite_matching(A)
        want = float(A[ri, ci].sum())
    except ValueError:
        want = None
    return jaxmatch.from_scipy(A, weighted=True), want


def _vmap_equals_solo(rng, cfg):
    """Four sparse square problems of 10-60 persons in one capacity, under vmap with ``cfg``: each
    converges with its solo run's matching and rounds."""
    from jaxmatch.assignment import _sparse
    caps = dict(row_capacity=64, col_capacity=64, edge_capacity=512)
    gs = [jaxmatch.from_scipy(sp.csr_matrix(
        (rng.integers(1, 9, 4 * k).astype(np.float32),
         (np.concatenate([rng.integers(0, k, 3 * k), np.arange(k)]),
          np.concatenate([rng.integers(0, k, 3 * k), rng.permutation(k)]))), shape=(k, k)),
        weighted=True, **caps) for k in (10, 30, 50, 60)]
    solve = jax.jit(lambda g: _sparse(g, jnp.int32(10**7), True, False, cfg))
    batched = jax.vmap(solve)(jaxmatch.stack(gs))
    for b, g in enumerate(gs):
        solo = solve(g)
        assert int(batched.status[b]) == int(solo.status) == Status.CONVERGED
        np.testing.assert_array_equal(np.asarray(batched.row_mate[b]), np.asarray(solo.row_mate))
        assert int(batched.stats["iterations"][b]) == int(solo.stats["iterations"])


def test_sequential_tail_gives_the_optimum():
    """The phases' last bids one at a time (Config.tail with finish=0: never, at most 16 bidders, every bid) on
    sparse square problems of 60 persons, feasible (integer weights with many ties) and not (a
    column nobody may take): scipy's optimal total and a certificate, or INFEASIBLE, in every mode;
    every bid of the all-sequential mode is a round of its own, while the rounds without a tail
    have several bidders; a round cap still shows as MAX_ITERS; under vmap, with some problems in
    their tail while others bid in rounds, each problem's answer and rounds equal its solo run's."""
    from jaxmatch.assignment import _sparse
    rng = np.random.default_rng(5)
    modes = [Config(tail=0, finish=0), Config(tail=16, tail_width=4, finish=0),
             Config(tail=10**6, tail_width=8, finish=0)]
    for trial in range(4):
        n = 60
        g, want = _square_problem(rng, n, trial)
        for cfg in modes:
            res = _sparse(g, jnp.int32(10**7), True, False, cfg)
            if want is None:
                assert int(res.status) == Status.INFEASIBLE, (trial, cfg)
                continue
            assert int(res.status) == Status.CONVERGED, (trial, cfg)
            assert float(res.weight) == pytest.approx(want), (trial, cfg, float(res.weight), want)
            check_assignment(g, res.row_mate[:n], res.col_potential[:n])
            bids, rounds = int(res.stats["bids"]), int(res.stats["iterations"])
            assert bids == rounds if cfg.tail > 10**5 else bids > rounds, (trial, cfg, bids, rounds)
    capped = _sparse(g, jnp.int32(3), True, False, modes[2])
    assert int(capped.status) == Status.MAX_ITERS and int(capped.stats["iterations"]) == 3
    # under vmap some problems bid in rounds while others are in their tail: each equals its solo run
    _vmap_equals_solo(rng, modes[1])


def test_augmenting_paths_give_the_optimum():
    """Phases ended by shortest augmenting paths (Config.finish: the default 16 with phases before the
    last ending early, every person by a path in every phase, 8 with phases ending at a tenth left)
    on sparse square problems of 60 persons, feasible (integer weights, many ties; float weights)
    and not (a column nobody may take): scipy's optimal total and a certificate, or INFEASIBLE;
    with every person by a path, one bid a person a phase; a round cap shows as MAX_ITERS; under
    vmap each problem's answer and rounds equal its solo run's."""
    from jaxmatch.assignment import _sparse
    rng = np.random.default_rng(6)
    modes = [Config(), Config(finish=10**6, early=0.0), Config(finish=8, early=0.1)]
    n = 60
    for trial in range(5):
        g, want = _square_problem(rng, n, trial)
        for cfg in modes:
            res = _sparse(g, jnp.int32(10**7), True, False, cfg)
            if want is None:
                assert int(res.status) == Status.INFEASIBLE, (trial, cfg)
                continue
            assert int(res.status) == Status.CONVERGED, (trial, cfg)
            gap = check_assignment(g, res.row_mate[:n], res.col_potential[:n])
            assert float(res.weight) == pytest.approx(want, abs=gap + 1e-4), (trial, cfg, float(res.weight), want)
            if cfg.finish == 10**6:
                assert int(res.stats["bids"]) == n * int(res.stats["phases"]), (trial, dict(res.stats))
    capped = _sparse(g, jnp.int32(3), True, False, modes[1])
    assert int(capped.status) == Status.MAX_ITERS
    _vmap_equals_solo(rng, Config(finish=16, early=0.1))


def test_infeasible_is_found_before_bidding():
    """A graph whose rows cannot all be matched (two thousand rows on half as many columns' worth of
    edges) is INFEASIBLE at once eagerly, with no bidding round (scipy's Hopcroft-Karp decides; the
    auction's price bound would take O(N x range) rounds), and raises with throw; a small graph of
    two rows on one column is solved with full=False, and under jit the auction finds it infeasible
    itself."""
    rng = np.random.default_rng(8)
    n = 2000
    r = rng.integers(0, n, 4 * n)
    c = rng.integers(0, n // 2, 4 * n)                         # the upper half of the columns has no edge
    g = BipartiteGraph.from_edges(r, c, n, n, weights=rng.integers(1, 100, r.size).astype(np.float32))
    res = min_weight_matching(g, throw=False)
    assert res.status_name == "infeasible" and int(res.stats["iterations"]) == 0
    assert res.row_mate.shape == (n,) and np.all(np.asarray(res.row_mate) == -1)
    with pytest.raises(SolverError, match="infeasible"):
        min_weight_matching(g)
    small = BipartiteGraph.from_edges([0, 1], [0, 0], 2, 2, weights=[1.0, 2.0], **CAPS)
    assert min_weight_matching(small, full=False).status_name == "converged"
    traced = jax.jit(lambda g: min_weight_matching(g, throw=False).status)(small)
    assert int(traced) == Status.INFEASIBLE


def test_config_reaches_the_auction():
    """config= picks the auction's knobs in both public functions (the Jacobi rounds alone, tail=0 and finish=0, give
    scipy's optimum too, with other round counts); anything but a Config is refused."""
    rng = np.random.default_rng(4)
    c = rng.integers(0, 20, (12, 12)).astype(float)
    r0, c0 = scipy.optimize.linear_sum_assignment(c)
    for cfg in (None, Config(tail=0, kernel=False), Config(theta=3.0, tail=4, kernel=False)):
        rows, cols = linear_sum_assignment(c, config=cfg)
        assert c[np.asarray(rows), np.asarray(cols)].sum() == c[r0, c0].sum()
    A = sp.csr_matrix(c + 1)
    g = jaxmatch.from_scipy(A, weighted=True)
    ri, ci = min_weight_full_bipartite_matching(A)
    runs = [min_weight_matching(g, config=cfg) for cfg in (None, Config(tail=0, finish=0))]
    assert [float(r.weight) for r in runs] == [pytest.approx(float(A[ri, ci].sum()))] * 2
    assert int(runs[0].stats["iterations"]) != int(runs[1].stats["iterations"])
    for bad in ("fast", {"tail": 0}):
        with pytest.raises(GraphInputError, match="config"):
            linear_sum_assignment(c, config=bad)
        with pytest.raises(GraphInputError, match="config"):
            min_weight_matching(g, config=bad)
    for bad, word in ((Config(finish=-1), "finish"), (Config(finish=2.5), "finish"), (Config(early=1.0), "early"),
                      (Config(early="x"), "early"), (Config(min_rows=0), "min_rows"),
                      (Config(min_rows=2.0), "min_rows")):
        with pytest.raises(GraphInputError, match=word):
            min_weight_matching(g, config=bad)


def test_tail_default_by_backend_and_size(monkeypatch):
    """Config.tail=None resolves by backend and size (a static shape: a problem under vmap runs as it
    does alone): 16 on the CPU; on the GPU none up to 1,024 persons, else 1 dense and 4 sparse; a
    tail given stays. Config.min_rows=None: 256, but N for a sparse problem of fewer than
    LADDER_ENTRIES entries on the GPU. Config.kernel=None: a float32 dense problem one bid at a time, as one XLA loop
    off the GPU."""
    from jaxmatch.assignment import auction as au
    assert au.one_bid(Config(), 10**5, jnp.float32) == "loop" and au.one_bid(Config(), 8, np.float64) is None
    assert au.resolve(Config(), dense=True, n=5000).tail == 16
    assert au.resolve(Config(), dense=False, n=5000, entries=10).min_rows == 256
    monkeypatch.setattr(au.jax, "default_backend", lambda: "gpu")
    assert [au.resolve(Config(), dense=d, n=n).tail for d in (True, False) for n in (1024, 1025)] == [0, 1, 0, 4]
    assert au.resolve(Config(tail=7), dense=True, n=5000).tail == 7
    # the row ladder on the GPU: off (min_rows = N, one size) below LADDER_ENTRIES sparse entries; on the CPU,
    # in the dense layout and where given, as asked
    big = au.LADDER_ENTRIES
    assert [au.resolve(Config(), dense=d, n=5000, entries=e).min_rows
            for d in (True, False) for e in (big - 1, big)] == [256, 256, 5000, 256]
    assert au.resolve(Config(min_rows=4), dense=False, n=5000, entries=1).min_rows == 4
    # the dense kernel: by default on the GPU for float32 problems up to KERNEL_MAX persons; asked for, any
    # float32 dense problem; never for float64 or when turned off
    use = au.one_bid
    assert [use(Config(), n, jnp.float32) for n in (au.KERNEL_MAX, au.KERNEL_MAX + 1)] == ["kernel", None]
    assert use(Config(), 8, np.float64) is None and use(Config(kernel=False), 8, jnp.float32) is None
    assert use(Config(kernel=True), 10**5, jnp.float32) == "kernel"
    # where the auction runs one bid at a time by default, its own eps scaling: theta 10, eps0 <= 0.5 / n
    assert au.dense_default(1000, jnp.float32) == au.DENSE._replace(theta=10.0, eps0=0.0005)
    assert au.dense_default(8, jnp.float32).eps0 == au.DENSE.eps0
    assert au.dense_default(1000, np.float64) == au.DENSE == au.dense_default(au.KERNEL_MAX + 1, jnp.float32)


def test_kernel_bids_as_the_sequential_auction():
    """The dense auction in one Pallas program (``Config(kernel=True)``; the Pallas interpreter on the
    CPU) and as one XLA loop (the default off the GPU) make the bids of the array auction with every
    phase one bid at a time (``tail`` past N), bit for bit: assignment, potentials (from the prices), bids and phases, on float and integer
    matrices with forbidden entries, a rectangular one among them; its pure-JAX twin too; the totals
    are scipy's and the potentials certify them. A bid cap shows as MAX_ITERS; an infeasible matrix
    as INFEASIBLE; under vmap each problem gets its solo answer."""
    from jaxmatch.assignment.auction import DENSE
    from jaxmatch.kernels import auction_dense
    on, seq = DENSE._replace(kernel=True), DENSE._replace(kernel=False, tail=10**6)
    rng = np.random.default_rng(11)
    for shape, kind in (((9, 9), "float"), ((9, 9), "ties"), ((7, 9), "int")):
        c = _matrix(rng, shape, kind)
        c[rng.random(shape) < 0.25] = np.inf
        c[np.arange(shape[0]), rng.permutation(shape[1])[:shape[0]]] = 1.0   # an assignment exists
        k = _dense(jnp.asarray(c, jnp.float32), 10**6, False, on)
        s = _dense(jnp.asarray(c, jnp.float32), 10**6, False, seq)
        loop = _dense(jnp.asarray(c, jnp.float32), 10**6, False, DENSE)       # off the GPU: the XLA loop
        assert int(k[3]) == int(s[3]) == Status.CONVERGED
        for a, b, x in zip(*(jax.tree_util.tree_leaves(r) for r in (k, s, loop))):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            np.testing.assert_array_equal(np.asarray(x), np.asarray(b))
        assert int(k[4]["bids"]) == int(k[4]["iterations"]) > 0
        r0, c0 = scipy.optimize.linear_sum_assignment(c)
        assert c[np.arange(shape[0]), np.asarray(k[0])].sum() == pytest.approx(c[r0, c0].sum(), rel=1e-5)
        check_assignment(c, np.asarray(k[0]), np.asarray(k[2]))
    # the kernel's pure-JAX twin, from the scaled benefits the solver hands it
    m = 9
    a = -jnp.asarray(_matrix(rng, (m, m), "float"), jnp.float32)
    from jaxmatch.assignment.auction import scale
    b, _, r, _ = scale(a.ravel(), jnp.ones(m * m, bool), jnp.int32(m), jnp.float32)
    opts = dict(theta=DENSE.theta, eps0=DENSE.eps0)
    got = auction_dense.solve(b.reshape(m, m), r, 10**6, interpret=True, **opts)
    ref = auction_dense._reference(b.reshape(m, m), r, 10**6, **opts)
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    capped = _dense(jnp.asarray(_matrix(rng, (9, 9), "float"), jnp.float32), 5, False, on)
    assert int(capped[3]) == Status.MAX_ITERS and int(capped[4]["iterations"]) == 5
    batch = np.stack([_matrix(rng, (5, 5), "int") for _ in range(4)]).astype(np.float32)
    batch[3, :, :3] = np.inf                                          # 5 rows, 2 usable columns
    f = jax.vmap(lambda x: linear_sum_assignment(x, config=on)[1])
    cols = np.asarray(f(jnp.asarray(batch)))
    for i in range(3):
        np.testing.assert_array_equal(cols[i], np.asarray(linear_sum_assignment(batch[i], config=on)[1]))
        r0, c0 = scipy.optimize.linear_sum_assignment(batch[i])
        assert batch[i][np.arange(5), cols[i]].sum() == batch[i][r0, c0].sum()
    assert np.all(cols[3] == -1)
    with pytest.raises(GraphInputError, match="kernel"):
        linear_sum_assignment(batch[0], config=Config(kernel="yes"))
