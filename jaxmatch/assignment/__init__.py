"""Exact weighted bipartite matching (the assignment problem): dense and sparse, with dual certificates.

:func:`linear_sum_assignment` is scipy's function of that name on the
device (dense cost matrix, rectangular, ``inf`` for a forbidden pair);
:func:`min_weight_matching` solves a weighted sparse
:class:`~jaxmatch.BipartiteGraph`: the minimum-cost matching that covers the
smaller side (``full=True``, scipy's ``min_weight_full_bipartite_matching``)
or the best matching of any size (``full=False``), with the dual potentials
that prove it optimal (:func:`jaxmatch.certify.check_assignment`).

Both run the epsilon-scaling auction of :mod:`jaxmatch.assignment.auction`
on a square problem (a dense float32 problem one bid at a time: on the GPU in
one Pallas program, one program a problem under ``vmap``, elsewhere as one XLA
loop; :mod:`jaxmatch.kernels.auction_dense`, ``auction.Config.kernel``). A dense ``n x m`` matrix (``n <= m``, else its
transpose) gets ``m - n`` dummy rows of zero cost. A sparse graph becomes
the square problem of ``n_rows + n_cols`` persons and objects in which
every row ``i`` has a dummy object ``E_i`` ("row ``i`` unmatched", cost 0,
allowed when rows may stay unmatched) and every column ``j`` a dummy person
``D_j`` ("column ``j`` unmatched", cost 0, allowed when columns may), and
``D_j`` may take ``E_i`` for every edge ``(i, j)``: the perfect matchings of
this problem are exactly the allowed matchings of the graph, at the same
cost, with ``2 |E| + n_rows + n_cols`` entries. A square graph given eagerly
with ``full=True`` needs no dummy (none may be taken): its problem is its own
``|E|`` edges, rows bidding for columns.

Exactness: integer costs give the optimum when ``2 (N + 1)`` times their
range fits the float's exact integers with room (``2^21`` in float32,
``2^50`` in float64 under ``jax_enable_x64``; ``N`` the persons of the square
problem); other costs an assignment within ``N * range / 2^21`` (float32) of
the optimal cost, which the potentials prove (the gap that
:func:`jaxmatch.certify.check_assignment` returns).

Why the auction (and not Goldberg-Kennedy cost scaling): its round is a
row reduction and two scatters over the entries, the same bulk-synchronous
array round as the library's push-relabel, and its dense form is a plain row
reduction of the cost matrix, which batches of small problems under ``vmap``
need. Cost scaling needs the same rounds plus global price updates over the
residual graph. The choice is argued, not measured: no cost-scaling solver
was built to compare (experiments/RESULTS.md, session 17, gives the
auction's round counts, its weak point on sparse problems).
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from jaxmatch._ops import is_traced, take, trim
from jaxmatch._validate import check_flag, check_not_batch, check_positive, check_type
from jaxmatch.assignment import auction as _au
from jaxmatch.graph import BipartiteGraph, GraphInputError
from jaxmatch.status import Status, settle, with_status_name

__all__ = ["AssignmentResult", "linear_sum_assignment", "min_weight_matching"]

DEFAULT_MAX_ITERS = 10_000_000


@with_status_name
class AssignmentResult(NamedTuple):
    """An optimal matching with its dual potentials, as returned by :func:`min_weight_matching`.

    Eagerly the arrays have the graph's true sizes; under ``jit``/``vmap``
    its capacities (-1 and 0 past the true sizes).

    Attributes:
        row_mate: int32 ``[n_rows]``, row i's column, or -1.
        col_mate: int32 ``[n_cols]``, column j's row, or -1.
        weight: the total weight of the matched edges (the weights' dtype).
        row_potential: ``[n_rows]`` dual potentials ``u``.
        col_potential: ``[n_cols]`` dual potentials ``v``. Minimising:
            ``u_i + v_j <= w_ij`` on every edge, with equality (up to the
            tolerance) on matched edges, and ``u <= 0`` (``v <= 0``) on a side
            that may stay unmatched; so ``sum(u) + sum(v)`` is a lower bound
            on every allowed matching's weight. Maximising: the same with
            the inequalities reversed.
        status: int32, :class:`jaxmatch.Status`: CONVERGED, INFEASIBLE (no
            matching covers the side it must; the arrays are then not a
            solution) or MAX_ITERS.
        stats: ``iterations`` (bidding rounds), ``phases`` (epsilon-scaling
            phases), ``bids``.
    """

    row_mate: jax.Array
    col_mate: jax.Array
    weight: jax.Array
    row_potential: jax.Array
    col_potential: jax.Array
    status: jax.Array
    stats: dict[str, Any]


def _stats(st) -> dict:
    return dict(iterations=st.rounds, phases=st.phases, bids=st.bids)


@partial(jax.jit, static_argnames=("maximize", "cfg"))
def _dense(cost, max_iters, maximize: bool, cfg: _au.Config = _au.DENSE):
    """The dense problem with rows <= columns: (column of each row, u, v, status, stats)."""
    n, m = cost.shape
    a, dt = _benefits(cost, maximize)
    allowed = jnp.concatenate([jnp.isfinite(a), jnp.ones((m - n, m), bool)])
    a = jnp.concatenate([jnp.where(allowed[:n], a, 0), jnp.zeros((m - n, m), dt)])
    benefit, s, rng, hi = _au.scale(a.ravel(), allowed.ravel(), jnp.int32(m), dt)
    p = _au.Problem(None, None, benefit, jnp.ones(m, bool))      # the dense layout implies both
    st = _au.solve(p, rng, max_iters, width=m, cfg=cfg)
    # potentials of the minimisation of -a (see the module docstring of certify.assignment)
    big_u = -_au.profits(p, st.price, m) / s - hi
    big_v = -st.price / s
    dummy = big_u[n] if m > n else jnp.zeros((), dt)
    u, v = big_u[:n] - dummy, big_v + dummy
    sign = -1 if maximize else 1
    return st.assigned[:n], sign * u, sign * v, st.status, _stats(st)


def _solve_dense(cost, max_iters, maximize: bool, cfg: _au.Config | None = None):
    """A dense problem with rows <= columns: padded to a square (:func:`_dense`) up to 4 columns a
    row, else as a sparse square problem (:func:`_rectangular`), whose dummies do not all share one
    row of zeros (the padding's identical rows bid against each other: 18,470 rounds against
    3,888 on a 20 x 1000 matrix, experiments/RESULTS.md, session 17)."""
    n, m = cost.shape
    if m <= 4 * n:
        return _dense(cost, max_iters, maximize, _au.dense_default(m, jnp.promote_types(cost.dtype, jnp.float32))
                      if cfg is None else cfg)
    return _rectangular(cost, max_iters, maximize, _au.DEFAULT if cfg is None else cfg)


def _check_config(config) -> None:
    if config is not None and not isinstance(config, _au.Config):
        raise GraphInputError(f"config must be None or a jaxmatch.assignment.auction.Config, got {config!r}")
    if config is not None and config.kernel is not None and not isinstance(config.kernel, bool):
        raise GraphInputError(f"Config.kernel must be None or a bool, got {config.kernel!r}")
    if config is not None and config.finish is not None and (type(config.finish) is not int or config.finish < 0):
        raise GraphInputError(f"Config.finish must be None or an int >= 0, got {config.finish!r}")
    if config is not None and config.min_rows is not None and (type(config.min_rows) is not int or config.min_rows < 1):
        raise GraphInputError(f"Config.min_rows must be None or an int >= 1, got {config.min_rows!r}")
    if config is not None and not (isinstance(config.early, (int, float)) and 0 <= config.early < 1):
        raise GraphInputError(f"Config.early must be a fraction in [0, 1), got {config.early!r}")


_all_finite = jax.jit(lambda c: jnp.isfinite(c).all())


def _check_kind(c) -> None:
    """scipy's checks of ``linear_sum_assignment``'s input that read no entry: a 2-D real array."""
    if np.ndim(c) != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {np.ndim(c)}-D array")
    if not (np.issubdtype(c.dtype, np.number) or c.dtype == np.bool_) or np.iscomplexobj(c):
        raise ValueError(f"expected a real numeric matrix, got dtype {c.dtype}")


def _check_values(cost, maximize: bool) -> None:
    """scipy's checks of the entries (skipped for traced values), its infeasibility among them: when
    entries are forbidden, whether any assignment avoids them (:func:`_coverable`, before any
    bidding). The common case, every entry finite, is one pass where the matrix is (on the device
    after its transfer); the full checks copy it to the host."""
    if is_traced(cost) or cost.dtype.kind != "f" or bool(_all_finite(cost)):
        return
    c = np.asarray(cost)
    bad = np.isnan(c) | (c == (np.inf if maximize else -np.inf))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"matrix contains invalid numeric entries (cost_matrix[{i}, {j}] = {c[i, j]})")
    allowed = np.isfinite(c)
    if not allowed.all() and not _coverable(*np.nonzero(allowed), *allowed.shape):
        raise ValueError("cost matrix is infeasible")


@partial(jax.jit, static_argnames=("maximize", "config"))
def _assign(cost, maximize: bool, config):
    """``(row_ind, col_ind, status)`` of :func:`linear_sum_assignment` for a matrix with rows and columns,
    in one program (-1 in ``col_ind`` unless CONVERGED)."""
    if cost.dtype == jnp.bool_:
        cost = cost.astype(jnp.int32)
    n, m = cost.shape
    flip = n > m
    cols, _, _, status, _ = _solve_dense(cost.T if flip else cost, DEFAULT_MAX_ITERS, maximize, config)
    cols = jnp.where(status == Status.CONVERGED, cols, -1).astype(jnp.int32)
    ids = jnp.arange(min(n, m), dtype=jnp.int32)
    if not flip:
        return ids, cols, status
    order = jnp.argsort(jnp.where(cols >= 0, cols, n))
    return cols[order], ids[order], status


def linear_sum_assignment(cost_matrix, maximize: bool = False, *, config: _au.Config | None = None):
    """Solve the linear sum assignment problem: scipy.optimize.linear_sum_assignment on the device.

    Finds the assignment of rows to columns (each row to at most one column,
    each column to at most one row, ``min(n, m)`` pairs) of least total cost
    ``sum(cost_matrix[row_ind, col_ind])`` (largest with ``maximize``). An
    entry ``inf`` (``-inf`` when maximising) forbids its pair, as in scipy.
    Runs the epsilon-scaling auction (:mod:`jaxmatch.assignment.auction`)
    on the ``max(n, m)``-square padding of the matrix (``O(max(n, m)^2)``
    work per round, less when few rows bid), or for a matrix more than four
    times wider than tall on the sparse square problem of the package
    docstring (``O(n m)``). Exact for integer costs (see the package docstring for
    the range), within a stated tolerance for others. Jittable, and
    vmappable over a batch of equal-shape matrices.

    Args:
        cost_matrix: ``[n, m]`` array of costs (any real dtype).
        maximize: find the largest total instead (default False).
        config: the auction's knobs, :class:`jaxmatch.assignment.auction.Config`
            (default: ``auction.dense_default`` of the square padding's size,
            ``auction.DEFAULT`` for the sparse form).

    Returns:
        ``(row_ind, col_ind)``: int32 arrays of length ``min(n, m)``, the
        assigned pairs sorted by row (``row_ind`` is ``arange(n)`` when
        ``n <= m``), as scipy returns them. Under ``jit``/``vmap`` an
        infeasible matrix gives -1 in ``col_ind`` (eagerly it raises).

    Raises:
        ValueError: for a matrix that is not 2-D or not real, NaN entries,
            ``-inf`` (``+inf`` when maximising), or an infeasible matrix
            (no assignment of ``min(n, m)`` pairs avoids the forbidden
            ones; eagerly found before any bidding, by scipy's
            ``maximum_bipartite_matching`` on the allowed pairs), as
            scipy's messages say.

    Example:
        >>> import numpy as np, jaxmatch
        >>> cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
        >>> rows, cols = jaxmatch.linear_sum_assignment(cost)
        >>> cols.tolist(), int(cost[rows, cols].sum())
        ([1, 0, 2], 5)
    """
    check_flag(maximize, "maximize")
    _check_config(config)
    c = cost_matrix if isinstance(cost_matrix, jax.Array) else np.asarray(cost_matrix)
    _check_kind(c)
    cost = jnp.asarray(c)
    _check_values(cost, maximize)
    if min(cost.shape) == 0:
        empty = jnp.zeros(0, jnp.int32)
        return empty, empty
    rows, cols, status = _assign(cost, maximize, config)
    if not is_traced(status) and int(status) != Status.CONVERGED:
        raise ValueError("cost matrix is infeasible" if int(status) == Status.INFEASIBLE else
                         f"linear_sum_assignment: the auction stopped at its bound of {DEFAULT_MAX_ITERS:,} "
                         "rounds before converging; min_weight_matching(..., max_iters=) takes a larger one")
    return rows, cols


def _benefits(w, maximize: bool):
    """(the benefits the auction maximises, their float dtype): the weights or costs ``w`` as they are
    when maximising, negated when minimising."""
    dt = jnp.promote_types(w.dtype, jnp.float32)
    return (w.astype(dt) if maximize else -w.astype(dt)), dt


def _mates(assigned, nr, rc: int, cc: int):
    """(row_mate, col_mate) of the graph from the square problem's ``assigned`` (person -> object), its
    first ``rc`` persons the rows and first ``cc`` objects the columns (-1 for the others)."""
    got, rows = assigned[:rc], jnp.arange(rc, dtype=jnp.int32)
    row_mate = jnp.where((rows < nr) & (got >= 0) & (got < cc), got, -1)
    col_mate = jnp.full(cc, -1, jnp.int32).at[jnp.where(row_mate >= 0, row_mate, cc)].set(rows, mode="drop")
    return row_mate, col_mate


def _gadget(src, dst, w, valid, nr, nc, rc: int, cc: int, max_iters, full: bool, maximize: bool,
            cfg: _au.Config):
    """The matching problem on edges (src, dst, w) of an ``nr x nc`` graph (capacities rc, cc) as the
    square problem of the module docstring: (row_mate, col_mate, u, v, status, stats)."""
    big = rc + cc
    a, dt = _benefits(w, maximize)
    rows, cols = jnp.arange(rc, dtype=jnp.int32), jnp.arange(cc, dtype=jnp.int32)
    row_free = jnp.asarray(not full) | (nr > nc)       # rows may stay unmatched
    col_free = jnp.asarray(not full) | (nr < nc)
    dummies = row_free | col_free                      # a perfect matching of a square graph needs none
    person = jnp.concatenate([jnp.where(valid, src, big), rows, rc + cols, jnp.where(valid, rc + dst, big)])
    obj = jnp.concatenate([jnp.where(valid, dst, big), cc + rows, cols, jnp.where(valid, cc + src, big)])
    benefit = jnp.concatenate([jnp.where(valid, a, 0), jnp.zeros(rc + cc + src.shape[0], dt)])
    allowed = jnp.concatenate([valid, (rows < nr) & row_free, (cols < nc) & col_free, valid & dummies])
    real = jnp.concatenate([rows < nr, (cols < nc) & dummies])
    benefit, s, rng, hi = _au.scale(benefit, allowed, nr + jnp.where(dummies, nc, 0), dt)
    p = _au.by_person(person, obj, benefit, real)     # a round reads its bidders' entries only
    st = _au.solve(p, rng, max_iters, cfg=cfg)
    big_u = jnp.where(real, -_au.profits(p, st.price) / s - hi, 0)
    big_v = jnp.where(jnp.concatenate([cols < cc, jnp.broadcast_to(dummies, (rc,))]), -st.price / s, 0)
    sign = -1 if maximize else 1
    u = jnp.where(rows < nr, big_u[:rc] + big_v[cc:], 0) * sign
    v = jnp.where(cols < nc, big_v[:cc] + big_u[rc:], 0) * sign
    return (*_mates(st.assigned, nr, rc, cc), u, v, st.status, _stats(st))


def _square(src, dst, w, valid, nr, rc: int, cc: int, max_iters, maximize: bool, cfg: _au.Config):
    """A perfect matching of a square graph (``nr`` rows and columns; capacities rc, cc) as the square
    problem of its own edges, persons the rows and objects the columns: the problem :func:`_gadget`
    builds when neither side may stay unmatched, without its ``|E| + rc + cc`` forbidden entries and
    ``cc`` persons that never bid (half the entries a full pass reads): (row_mate, col_mate, u, v,
    status, stats)."""
    big = max(rc, cc)
    a, dt = _benefits(w, maximize)
    ids = jnp.arange(big, dtype=jnp.int32)
    benefit, s, rng, hi = _au.scale(jnp.where(valid, a, 0), valid, nr, dt)
    p = _au.by_person(jnp.where(valid, src, big), jnp.where(valid, dst, big), benefit, ids < nr)
    st = _au.solve(p, rng, max_iters, cfg=cfg)
    sign = -1 if maximize else 1
    u = jnp.where(ids < nr, -_au.profits(p, st.price) / s - hi, 0)[:rc] * sign
    v = jnp.where(ids < nr, -st.price / s, 0)[:cc] * sign
    return (*_mates(st.assigned, nr, rc, cc), u, v, st.status, _stats(st))


def _coverable(r, c, nr: int, nc: int) -> bool:
    """Whether some matching of the edges ``(r, c)`` of an ``nr x nc`` graph covers its smaller side:
    scipy's Hopcroft-Karp (``maximum_bipartite_matching``) on the host, which compiles nothing (the
    auction would only notice infeasibility once its prices ran past their bound, after O(N x
    range) rounds)."""
    if min(nr, nc) == 0:
        return True
    A = sp.csr_array((np.ones(np.size(r), np.int8), (r, c)), shape=(nr, nc))
    return int(np.sum(maximum_bipartite_matching(A, perm_type="column") >= 0)) == min(nr, nc)


def _infeasible(g: BipartiteGraph) -> AssignmentResult:
    """The eager answer when no matching covers the smaller side (see :func:`_coverable`): nothing
    matched, zero potentials, INFEASIBLE."""
    nr, nc = int(g.n_rows), int(g.n_cols)
    dt = jnp.promote_types(g.by_row.weights.dtype, jnp.float32)
    zero = jnp.zeros((), jnp.int32)
    return AssignmentResult(jnp.full(nr, -1, jnp.int32), jnp.full(nc, -1, jnp.int32),
                            jnp.zeros((), g.by_row.weights.dtype),
                            jnp.zeros(nr, dt), jnp.zeros(nc, dt), jnp.int32(Status.INFEASIBLE),
                            dict(iterations=zero, phases=zero, bids=zero))


@partial(jax.jit, static_argnames=("full", "maximize", "cfg", "square"))
def _sparse(g: BipartiteGraph, max_iters, full: bool, maximize: bool, cfg: _au.Config = _au.DEFAULT,
            square: bool = False):
    """The matching of :func:`min_weight_matching`; ``square``: the caller knows that ``full`` holds and
    the graph has as many rows as columns, so the problem is the graph's own (:func:`_square`)."""
    src, dst, w = g.by_row.src, g.by_row.indices, g.by_row.weights
    valid = src < g.row_cap
    if square:
        row_mate, col_mate, u, v, status, stats = _square(src, dst, w, valid, g.n_rows, g.row_cap, g.col_cap,
                                                          max_iters, maximize, cfg)
    else:
        row_mate, col_mate, u, v, status, stats = _gadget(src, dst, w, valid, g.n_rows, g.n_cols, g.row_cap,
                                                          g.col_cap, max_iters, full, maximize, cfg)
    weight = jnp.sum(jnp.where(valid & (take(row_mate, src, -1) == dst), w, 0))
    return AssignmentResult(row_mate, col_mate, weight, u, v, status, stats)


@partial(jax.jit, static_argnames=("maximize", "cfg"))
def _rectangular(cost, max_iters, maximize: bool, cfg: _au.Config = _au.DEFAULT):
    """A dense ``n x m`` problem with n != m, as the sparse square problem of its finite entries."""
    n, m = cost.shape
    ok = jnp.isfinite(cost).ravel()
    src = jnp.repeat(jnp.arange(n, dtype=jnp.int32), m)
    dst = jnp.tile(jnp.arange(m, dtype=jnp.int32), n)
    w = jnp.where(ok, cost.ravel(), 0)
    row_mate, _, u, v, status, stats = _gadget(src, dst, w, ok, jnp.int32(n), jnp.int32(m), n, m, max_iters,
                                               True, maximize, cfg)
    return row_mate, u, v, status, stats


def min_weight_matching(g: BipartiteGraph, *, full: bool = True, maximize: bool = False,
                        max_iters: int | None = None, config: _au.Config | None = None,
                        throw: bool = True) -> AssignmentResult:
    """Minimum-weight matching of a weighted bipartite graph, exact, with dual potentials.

    With ``full=True`` (default): the matching of ``min(n_rows, n_cols)``
    edges (it covers the smaller side) of least total weight, as scipy's
    ``min_weight_full_bipartite_matching`` (greatest with ``maximize``);
    INFEASIBLE when no matching covers the smaller side (eagerly that is
    found first, by scipy's ``maximum_bipartite_matching`` on the host,
    before any bidding; under ``jit`` by the auction's price bound, which
    takes many rounds). With
    ``full=False``: the matching of any size of least total weight (only
    negative-weight edges help; with ``maximize``, the maximum-weight
    matching, of positive-weight edges). The epsilon-scaling auction
    (:mod:`jaxmatch.assignment.auction`) on the square problem of the
    package docstring, ``2 |E| + n_rows + n_cols`` entries (``|E|`` for a square
    graph with ``full=True`` outside ``jit``); exact for integer
    weights in range (package docstring), else within the stated tolerance.

    Args:
        g: a weighted :class:`~jaxmatch.BipartiteGraph` (built with
            ``weights=`` or ``from_scipy(A, weighted=True)``).
        full: cover the smaller side (default True), or any size.
        maximize: the largest total weight instead.
        max_iters: bound on the bidding rounds (default 10^7).
        config: the auction's knobs, :class:`jaxmatch.assignment.auction.Config`
            (default ``auction.DEFAULT``).
        throw: eagerly, raise :class:`~jaxmatch.SolverError` when the status
            is not CONVERGED (default True).

    Returns:
        An :class:`AssignmentResult`.

    Raises:
        GraphInputError: for a graph that is not a single weighted
            BipartiteGraph, or bad options.
        SolverError: eagerly with ``throw``, for INFEASIBLE or MAX_ITERS.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0], weights=[1.0, 2.0, 2.0])
        >>> r = jaxmatch.min_weight_matching(g)
        >>> r.row_mate.tolist(), float(r.weight)
        ([1, 0], 4.0)
    """
    check_type(g, BipartiteGraph, "build one with jaxmatch.BipartiteGraph.from_edges(rows, cols, weights=w)")
    check_not_batch(g.n_rows, "bipartite graphs", "jax.vmap(lambda g: jaxmatch.min_weight_matching(g))(batch)")
    if g.by_row.weights is None:
        raise GraphInputError("min_weight_matching needs a weighted BipartiteGraph: build it with "
                              "BipartiteGraph.from_edges(rows, cols, weights=w) or from_scipy(A, weighted=True)")
    full, maximize = check_flag(full, "full"), check_flag(maximize, "maximize")
    throw = check_flag(throw, "throw")
    if max_iters is not None:
        check_positive(max_iters, "max_iters")
    _check_config(config)
    eager = not is_traced(g.n_rows)
    if eager and full and not _coverable(*g.edges()):
        return settle("min_weight_matching", _infeasible(g), throw)
    # a square graph given eagerly with full=True: the problem of its own edges (under jit the sizes
    # are traced, and the square problem of the package docstring serves every shape)
    square = eager and full and int(g.n_rows) == int(g.n_cols)
    res = _sparse(g, jnp.int32(min(max_iters or DEFAULT_MAX_ITERS, 2**31 - 1)), full, maximize,
                  _au.DEFAULT if config is None else config, square)
    if eager:
        nr, nc = int(g.n_rows), int(g.n_cols)
        res = res._replace(row_mate=trim(res.row_mate, nr), col_mate=trim(res.col_mate, nc),
                           row_potential=trim(res.row_potential, nr), col_potential=trim(res.col_potential, nc))
    return settle("min_weight_matching", res, throw)
