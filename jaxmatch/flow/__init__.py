"""Maximum flow and minimum cut: the public functions (WBPR push-relabel).

:func:`max_flow` and :func:`min_cut` solve single- or multi-terminal
problems on a :class:`jaxmatch.FlowNetwork` with the workload-balanced
lock-free push-relabel algorithm of :mod:`jaxmatch.flow.push_relabel`.
:func:`matching_network` and :func:`matching_from_flow` reduce maximum
bipartite matching to unit-capacity flow, as the WBPR paper's matching
experiments do.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import device, is_traced, mask_ids, take, trim
from jaxmatch.status import Status, settle, with_status_name
from jaxmatch.flow import push_relabel as _pr
from jaxmatch.kernels import bfs_level as _bfs_level
from jaxmatch.graph import (
    CSR, INT32_MAX, LAYOUTS, BipartiteGraph, FlowNetwork, GraphInputError, check_flag, check_not_batch, check_positive, check_type, next_pow2)

__all__ = ["FlowResult", "CutResult", "max_flow", "min_cut", "matching_network", "matching_from_flow"]


@with_status_name
class FlowResult(NamedTuple):
    """A maximum flow and a minimum cut of the same value.

    ``flow[a]`` is the flow on input arc a (the caller's arc order);
    ``flow_value`` the net flow out of the sources (= into the sinks);
    ``source_side`` a minimum cut's source side: the vertices above the
    lowest height that no vertex has when phase one ends (no residual arc
    leaves them; they hold every source and no sink). ``status``
    (:class:`jaxmatch.Status`) is CONVERGED, MAX_ITERS when phase one
    stopped at ``max_iters`` (the flow may not be maximum), EXCESS_LEFT
    when phase two did (value and cut are maximum, but the flow breaks
    conservation where excess was left), or KERNEL_STALLED when a
    kernel's grid barrier timed out (never seen; the result is not reliable). ``stats``: iterations (push-relabel steps of phase one),
    return_iterations (phase two), pushes (arcs pushed on), relabels,
    global_relabels, bfs_levels (BFS steps of all global relabels),
    stranded_excess (the excess phase two returned to the sources: the
    paper's termination rule is e(s) + e(t) = total excess minus this),
    tiled_steps (push-relabel steps whose queue had rows of at most
    ``TILE`` arcs, run in tiles: see :func:`jaxmatch.flow.push_relabel.ladder`).
    Eagerly the arrays have the true sizes; under
    ``jit``/``vmap`` they keep the network's capacities (0 / False in
    padding).
    """

    flow_value: jax.Array
    flow: jax.Array
    source_side: jax.Array
    status: jax.Array
    stats: dict[str, Any]


@with_status_name
class CutResult(NamedTuple):
    """A minimum s-t cut: its capacity, its source side and the arcs crossing it.

    ``cut_arcs`` is a bool mask over the input arcs: tail on the source side,
    head on the other (``np.flatnonzero`` gives their ids); their capacities
    add up to ``value``.
    """

    value: jax.Array
    source_side: jax.Array
    cut_arcs: jax.Array
    status: jax.Array


# --------------------------------------------------------------------------
# validation (host side, before tracing)




def _check_net(net) -> None:
    check_type(net, FlowNetwork, "FlowNetwork.from_edges, jaxmatch.from_scipy(A, kind='flow') or jaxmatch.read")
    check_not_batch(net.n, "networks (from jaxmatch.stack)",
                    "jax.vmap(lambda net: max_flow(net, s, t).flow_value)(batch)")
    if net.vertex_cap + 2 > INT32_MAX:
        raise GraphInputError("vertex_capacity must stay below 2**31 - 2 (heights are int32)")


def _terminal(x, name: str, n):
    """Terminal ids as an int32 array (shape () or (k,)), checked against n when concrete."""
    if is_traced(x):
        if not jnp.issubdtype(x.dtype, jnp.integer) or x.ndim > 1:
            raise GraphInputError(f"{name} must be an integer id or a 1-D array of ids, got {x.dtype}{list(x.shape)}")
        return x.astype(jnp.int32), None
    a = np.asarray(x)
    if a.size == 0:
        raise GraphInputError(f"{name} is empty: give at least one vertex")
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer) or a.ndim > 1:
        raise GraphInputError(f"{name} must be an integer id or a 1-D array of ids, got {x!r}")
    if n is not None:
        bad = np.flatnonzero((a.ravel() < 0) | (a.ravel() >= n))
        if bad.size:
            raise GraphInputError(
                f"{name} {int(a.ravel()[bad[0]])} is out of range [0, {n}) for a network with n = {n}")
    return device(a.astype(np.int32)), a.ravel().astype(np.int64)


@jax.jit
def _saturated_estimate(net, source):
    """float32 sum of the capacities that the initial preflow saturates, and those capacities."""
    is_source = _pr._mask_of(source, net.vertex_cap)
    c = _pr.initial_preflow(net, is_source)
    return jnp.sum(c.astype(jnp.float32)), c


def _check_overflow(net, source) -> None:
    """Raise when the total capacity out of the sources does not fit the capacity dtype.

    The excess of every vertex and the flow value are bounded by that total.
    A float32 sum of non-negative integers is exact, in any order, while it
    stays below 2**24, and it reaches 2**24 when the true sum does (rounding
    is monotone), so only totals >= 2**24 need the exact host sum.
    """
    est, c = _saturated_estimate(net, source)
    if float(est) < 2.0 ** 24:
        return
    c = np.asarray(c)
    limit = int(np.iinfo(c.dtype).max)
    total = float(np.sum(c, dtype=np.float64))
    if total >= 2.0 ** 62:
        total = sum(int(v) for v in c[c > 0])
    elif total >= 2.0 ** 52:
        total = int(np.sum(c, dtype=np.int64))
    if total > limit:
        raise GraphInputError(
            f"the total capacity out of the sources is {int(total)}, which does not fit {c.dtype} "
            f"(at most {limit}): flow values would overflow; enable 64-bit mode "
            "(jax.config.update('jax_enable_x64', True)) and rebuild the network")


@jax.jit
def _longest_inner_row(net, source, sink):
    deg = net.res.indptr[1:] - net.res.indptr[:-1]
    terminal = _pr._mask_of(source, net.vertex_cap) | _pr._mask_of(sink, net.vertex_cap)
    return jnp.max(jnp.where(terminal, 0, deg))


def _window_width(net, source, sink, lanes) -> int:
    """Lanes of the largest push-relabel step: ``lanes`` widened to the longest residual row of a vertex that
    is not a terminal (terminals never enter a step's lanes), a power of two, at most all residual arcs.

    Under tracing the rows are unknown, so the window is the whole residual
    arc array.
    """
    full = 2 * net.arc_cap
    if is_traced(net.res.indptr) or is_traced(source) or is_traced(sink):
        return full
    return min(full, next_pow2(max(min(lanes, full), int(_longest_inner_row(net, source, sink)))))



def _prepare(net, source, sink, layout, reverse, max_iters, k, lanes):
    _check_net(net)
    if layout is not None and layout not in LAYOUTS:
        raise GraphInputError(f"layout must be one of {LAYOUTS} or None, got {layout!r}")
    if reverse not in _pr.REVERSE:
        raise GraphInputError(f"reverse must be one of {_pr.REVERSE}, got {reverse!r}")
    check_positive(max_iters, "max_iters")
    check_positive(k, "k", float)
    if k is not None and not np.isfinite(k):
        raise GraphInputError(f"k must be finite, got {k!r}")
    check_positive(lanes, "lanes")
    lanes = _pr.DEFAULT_LANES if lanes is None else int(lanes)
    if layout is not None and layout != net.layout:
        if is_traced(net.n):
            raise GraphInputError(f"cannot change the layout of a traced network: build it with "
                                  f"layout={layout!r} (or call net.with_layout) outside jit/vmap")
        net = net.with_layout(layout)
    if reverse == "search" and net.layout != "bcsr":
        raise GraphInputError("reverse='search' is the BCSR binary search; an RCSR network has the "
                              "O(1) reverse index (use reverse='index')")
    n = None if is_traced(net.n) else int(net.n)
    src, s_ids = _terminal(source, "source", n)
    snk, t_ids = _terminal(sink, "sink", n)
    if s_ids is not None and t_ids is not None:
        both = np.intersect1d(s_ids, t_ids)
        if both.size:
            raise GraphInputError(f"source and sink share vertex {int(both[0])}: they must be disjoint")
    if n is not None and not is_traced(net.cap) and not is_traced(src):
        _check_overflow(net, src)
    if max_iters is None:
        max_iters = 16 * net.vertex_cap + 4096
    max_iters = min(int(max_iters), INT32_MAX)  # an int32 operand: more steps than it holds are never run
    return net, src, snk, dict(max_iters=jnp.int32(max_iters), k=None if k is None else float(k),
                               width=_window_width(net, src, snk, lanes), search=reverse == "search")


# --------------------------------------------------------------------------
# max flow and min cut


def max_flow(net: FlowNetwork, source, sink, *, layout: str | None = None, max_iters: int | None = None,
             k: float | None = None, lanes: int | None = _pr.DEFAULT_LANES, reverse: str = "index",
             kernel=None, throw: bool = True) -> FlowResult:
    """Maximum flow from ``source`` to ``sink`` by workload-balanced push-relabel (WBPR).

    ``source`` and ``sink`` are vertex ids or 1-D arrays of ids (several
    sources and sinks, as if joined to a super source and a super sink by
    arcs of unbounded capacity). ``layout`` ("bcsr" or "rcsr") converts the
    network on the host first when it differs (both give the same flow
    value). ``max_iters`` bounds the push-relabel steps of each of the two
    phases (default ``16 * vertex_cap + 4096``), ``k`` the global relabel
    frequency (the next global relabel runs when the push-relabel work since
    the last one reaches ``k`` times that one's cost: the usual work-based
    rule, with a step's fixed cost counted, see
    :mod:`jaxmatch.flow.push_relabel`), ``lanes`` the most arcs one step
    scans at once (widened to the longest residual row; under jit/vmap the
    whole residual arc array), ``reverse`` how a push finds the reverse arc
    ("index": stored; "search": binary search, BCSR). ``layout=None`` keeps
    the network's layout; ``k=None`` takes ``KERNEL_K`` = 0.25 where the
    push kernel runs and ``DEFAULT_K`` = 0.5 elsewhere (the measured best of
    each: RESULTS, session 12), ``lanes=None`` the default in the
    signature. ``kernel``: run the
    global relabels' BFS levels in the persistent Pallas kernel of
    :mod:`jaxmatch.kernels.bfs_level` (many levels per launch) and the
    push-relabel rounds in that of :mod:`jaxmatch.kernels.push_flow` (many
    rounds per launch; only for int32 capacities, the stored reverse index,
    and networks whose non-terminal residual rows are at most
    ``Config.push_max_degree`` arcs) (default: on the GPU; off elsewhere,
    and refused under ``vmap``; asked for on a CPU they run in Pallas's
    interpreter, for tests; a :class:`jaxmatch.kernels.bfs_level.Config`
    sets their knobs, ``push=False`` keeps the XLA push steps). The value
    and the certificates are the same either way; with the push kernel the
    flow on each arc (not its value) may vary between GPU runs. ``throw``: eagerly, raise
    :class:`jaxmatch.SolverError` (holding the result) when ``max_iters``
    stops a phase; under ``jit``/``vmap`` read ``status`` instead.

    Capacities are int32 (int64 under ``jax_enable_x64``); a network whose
    total capacity out of the sources overflows that type is rejected.
    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack` (one source and sink id per network).

    Cost: O(V^2 E) push-relabel operations in the worst case (generic
    push-relabel); a step costs O(active vertices + their arcs), a global
    relabel O(V + E). Paper: Hsieh, Lin, Kuo, WBPR (see
    :mod:`jaxmatch.flow.push_relabel`).

    >>> net = FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [3, 2, 1, 2, 3])
    >>> res = max_flow(net, 0, 3)
    >>> int(res.flow_value), res.flow.tolist(), res.source_side.tolist()
    (5, [3, 2, 1, 2, 3], [True, False, False, False])
    """
    net, src, snk, opts = _prepare(net, source, sink, layout, reverse, max_iters, k, lanes)
    kernel = _bfs_level.choose(kernel, net.cap)
    if opts["k"] is None:
        opts["k"] = _pr.KERNEL_K if _pr.push_kernel(kernel, net.cap, opts["search"]) else _pr.DEFAULT_K
    check_flag(throw, "throw")
    flow, value, side, status, stats = _solve(net, src, snk, kernel=kernel,
                                              interpret=kernel is not None and jax.default_backend() != "gpu", **opts)
    stats = {k: v for k, v in stats.items() if k != "rung_steps"}  # scalars only
    if not is_traced(net.n):
        flow, side = trim(flow, int(net.n_arcs)), trim(side, int(net.n))
    return settle("max_flow", FlowResult(value, flow, side, status, stats), throw)


def _solve(net, source, sink, **opts):
    # the solver reads the layout only through the arrays, so both layouts share one compilation
    # unless the binary search needs BCSR's row order
    if not opts["search"] and net.layout != "bcsr":
        net = dataclasses.replace(net, layout="bcsr")
    return _solve_jit(net, _padded_ids(source), _padded_ids(sink), **opts)


def _padded_ids(ids):
    """Concrete terminal ids padded with -1 (ignored) to a power of two (at least 8), so one source
    and a few share one compilation; traced ids as they are."""
    if is_traced(ids):
        return ids
    a = np.ravel(np.asarray(ids)).astype(np.int32)
    return np.concatenate([a, np.full(max(8, next_pow2(a.size)) - a.size, -1, np.int32)])


@partial(jax.jit, static_argnames=("k", "width", "search", "kernel", "interpret"))
def _solve_jit(net, source, sink, *, max_iters, k, width, search, kernel=None, interpret=False):
    return _pr.max_flow_arrays(net, source, sink, max_iters=max_iters, k=k, width=width, search=search,
                               kernel=kernel, interpret=interpret)


def min_cut(net: FlowNetwork, source, sink, *, throw: bool = True, **options) -> CutResult:
    """Minimum s-t cut: value, source side (bool per vertex) and the cut arcs (bool per arc).

    Computed from the maximum flow of :func:`max_flow` (same options): its
    ``source_side``, a set of vertices that no residual arc leaves. Only
    phase one of the flow is needed, so ``status`` is CONVERGED also when
    the flow's is EXCESS_LEFT; ``throw`` as for :func:`max_flow`.

    >>> net = FlowNetwork.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [4, 1, 1, 5])
    >>> cut = min_cut(net, 0, 3)
    >>> int(cut.value), cut.source_side.tolist(), cut.cut_arcs.tolist()
    (2, [True, True, False, False], [False, True, True, False])
    """
    check_flag(throw, "throw")
    res = max_flow(net, source, sink, throw=False, **options)
    side = res.source_side
    if is_traced(net.n):
        crossing = take(side, net.tail, False) & ~take(side, net.head, True)
    else:
        m, host = int(net.n_arcs), np.asarray(side)
        crossing = device(host[np.asarray(net.tail)[:m]] & ~host[np.asarray(net.head)[:m]])
    status = jnp.where(res.status == Status.EXCESS_LEFT, Status.CONVERGED, res.status).astype(jnp.int32)
    return settle("min_cut", CutResult(res.flow_value, side, crossing, status), throw)


# --------------------------------------------------------------------------
# bipartite matching as unit-capacity flow


def _network_from_arcs(tail, head, cap, n, n_arcs, vertex_cap: int, layout: str) -> FlowNetwork:
    """A FlowNetwork built on the device from padded arc arrays (traceable).

    ``tail``/``head``/``cap`` [arc_cap]: the first ``n_arcs`` entries are the
    arcs, the rest padding (tail = head = vertex_cap, cap = 0). Same residual
    order as :meth:`FlowNetwork.from_edges` (a sort by (tail, head, reverse
    flag, arc) for BCSR, (tail, reverse flag, head, arc) for RCSR).
    """
    ac = tail.shape[0]
    ids = jnp.arange(ac, dtype=jnp.int32)
    src = jnp.concatenate([tail, head])
    dst = jnp.concatenate([head, tail])
    back = jnp.concatenate([jnp.zeros(ac, jnp.int32), jnp.ones(ac, jnp.int32)])
    arc = jnp.concatenate([ids, ids])
    second, third = (dst, back) if layout == "bcsr" else (back, dst)
    order = jnp.lexsort((arc, third, second, src)).astype(jnp.int32)
    pos = jnp.zeros(2 * ac, jnp.int32).at[order].set(jnp.arange(2 * ac, dtype=jnp.int32))
    rev = jnp.zeros(2 * ac, jnp.int32).at[pos].set(pos[(jnp.arange(2 * ac) + ac) % (2 * ac)])
    counts = jax.ops.segment_sum(jnp.ones(2 * ac, jnp.int32), src, vertex_cap)
    indptr = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(counts, dtype=jnp.int32)])
    real = arc[order] < n_arcs
    res = CSR(indptr, dst[order], src[order], None)
    return FlowNetwork(tail=tail, head=head, cap=cap, res=res,
                       res_arc=jnp.where(real, arc[order], ac), res_forward=real & (back[order] == 0),
                       res_rev=rev, n=jnp.asarray(n, jnp.int32), n_arcs=jnp.asarray(n_arcs, jnp.int32),
                       vertex_cap=vertex_cap, arc_cap=ac, layout=layout)


def matching_network(g: BipartiteGraph, *, layout: str = "bcsr"):
    """Unit-capacity network of a bipartite graph: returns ``(net, source, sink)``.

    Vertices: rows ``0 .. n_rows-1``, columns ``n_rows .. n_rows+n_cols-1``,
    super source ``S = n_rows + n_cols``, super sink ``T = S + 1``. Arcs, in
    this order: arc k (k < n_edges) is edge k of ``g.edges()`` (row ->
    column), then S -> row r for every row, then column c -> T for every
    column; all of capacity 1. A maximum flow's value is the maximum matching
    size; :func:`matching_from_flow` reads the matching back. Traceable (works
    under jit and vmap); capacities: ``row_cap + col_cap + 2`` vertices,
    ``edge_cap + row_cap + col_cap`` arcs. Cost: one sort of the residual arcs.

    >>> g = BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
    >>> net, s, t = matching_network(g)
    >>> int(net.n), int(net.n_arcs), int(s), int(t)
    (6, 7, 4, 5)
    """
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    if layout not in LAYOUTS:
        raise GraphInputError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if g.row_cap + g.col_cap + g.edge_cap + 2 > INT32_MAX // 2:
        raise GraphInputError("the matching network of this graph has too many arcs for int32 ids")
    return _matching_network(g, layout=layout)


@partial(jax.jit, static_argnames=("layout",))
def _matching_network(g, *, layout):
    vc = g.row_cap + g.col_cap + 2
    ac = g.edge_cap + g.row_cap + g.col_cap
    cdt = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
    nr, nc, ne = g.n_rows, g.n_cols, g.n_edges
    S, T = nr + nc, nr + nc + 1
    rows = jnp.arange(g.row_cap, dtype=jnp.int32)
    cols = jnp.arange(g.col_cap, dtype=jnp.int32)
    e = jnp.arange(g.edge_cap, dtype=jnp.int32)
    # (position, tail, head) of every arc kind; padding entries get position ac (dropped)
    pos = jnp.concatenate([jnp.where(e < ne, e, ac), jnp.where(rows < nr, ne + rows, ac),
                           jnp.where(cols < nc, ne + nr + cols, ac)])
    t = jnp.concatenate([g.by_row.src, jnp.full(g.row_cap, S), nr + cols])
    h = jnp.concatenate([nr + g.by_row.indices, rows, jnp.full(g.col_cap, T)])
    tail = jnp.full(ac, vc, jnp.int32).at[pos].set(t.astype(jnp.int32), mode="drop")
    head = jnp.full(ac, vc, jnp.int32).at[pos].set(h.astype(jnp.int32), mode="drop")
    m = ne + nr + nc
    cap = (jnp.arange(ac) < m).astype(cdt)
    return _network_from_arcs(tail, head, cap, nr + nc + 2, m, vc, layout), S, T


def matching_from_flow(g: BipartiteGraph, flow):
    """``(row_mate, col_mate)`` of the edges that carry flow in a flow of :func:`matching_network`.

    ``flow`` is indexed by the network's arcs (its first ``n_edges`` entries
    are the edges). -1 marks an unmatched vertex. Eagerly the arrays have
    length n_rows and n_cols, under jit/vmap the graph's capacities.

    >>> g = BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
    >>> net, s, t = matching_network(g)
    >>> rm, cm = matching_from_flow(g, max_flow(net, s, t).flow)
    >>> rm.tolist(), cm.tolist()
    ([0, 1], [0, 1])
    """
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    row_mate, col_mate = _matching_from_flow(g, jnp.asarray(flow))
    if not is_traced(g.n_rows):
        row_mate, col_mate = trim(row_mate, int(g.n_rows)), trim(col_mate, int(g.n_cols))
    return row_mate, col_mate


@jax.jit
def _matching_from_flow(g, flow):
    e = jnp.arange(g.edge_cap, dtype=jnp.int32)
    f = take(flow, e, 0)
    on = (e < g.n_edges) & (f > 0)
    r, c = g.by_row.src, g.by_row.indices
    row_mate = jnp.full(g.row_cap, -1, jnp.int32).at[mask_ids(r, on, g.row_cap)].set(c, mode="drop")
    col_mate = jnp.full(g.col_cap, -1, jnp.int32).at[mask_ids(c, on, g.col_cap)].set(r, mode="drop")
    return row_mate, col_mate
