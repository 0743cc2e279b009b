"""Maximum flow and minimum cut: the public functions (WBPR push-relabel).

:func:`max_flow` and :func:`min_cut` solve single- or multi-terminal
problems on a :class:`jaxmatch.FlowNetwork` with the workload-balanced
lock-free push-relabel algorithm of :mod:`jaxmatch.flow.push_relabel`, whose
docstring gives the array form. :func:`matching_network` and
:func:`matching_from_flow` (:mod:`jaxmatch.flow.matching`) reduce maximum
bipartite matching to unit-capacity flow, as the WBPR paper's matching
experiments do. This module checks the input on the host before tracing
and pads the terminal ids, so that calls with one source or a few share one
compilation.
"""
from __future__ import annotations

import functools
import inspect
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import HOST_TRIM_MAX, device, is_traced, trim
from jaxmatch.status import Status, settle, with_status_name
from jaxmatch.flow import lanes as _lanes
from jaxmatch.flow import push_relabel as _pr
from jaxmatch.flow import residual as _res
from jaxmatch.flow.matching import matching_from_flow, matching_network
from jaxmatch.kernels import bfs_level as _bfs_level
from jaxmatch._containers import LAYOUTS
from jaxmatch._validate import INT32_MAX, batch_terminals, check_flag, check_not_batch, check_positive, check_type, next_pow2
from jaxmatch.graph import FlowNetwork, GraphInputError, split_union
from jaxmatch import graph as _graph

__all__ = ["FlowResult", "CutResult", "max_flow", "min_cut", "matching_network", "matching_from_flow"]


@with_status_name
class FlowResult(NamedTuple):
    """A maximum flow and a minimum cut of the same value, as :func:`max_flow` returns them.

    Eagerly the arrays have the true sizes (``n`` vertices, ``n_arcs``
    arcs); under ``jit``/``vmap`` they keep the network's capacities, with 0
    or False in the padding. ``status_name`` gives the status in words.

    Attributes:
        flow_value: The net flow out of the sources, equal to the net flow
            into the sinks (a scalar of the capacity dtype).
        flow: ``flow[a]``, the flow on input arc a, in the caller's arc
            order.
        source_side: Bool per vertex, a minimum cut's source side: the
            vertices above the lowest height that no vertex has when phase
            one ends. No residual arc leaves them; they hold every source
            and no sink.
        status: The :class:`jaxmatch.Status` as an int32: CONVERGED;
            MAX_ITERS when phase one stopped at ``max_iters`` (the flow may
            not be maximum); EXCESS_LEFT when phase two did (the value and
            the cut are maximum, but the flow breaks conservation where
            excess was left); KERNEL_STALLED when a persistent kernel's grid
            barrier timed out (the result is not reliable).
        stats: A dict of scalars: ``iterations`` (push-relabel steps of
            phase one), ``return_iterations`` (those of phase two),
            ``pushes`` (arcs pushed on), ``relabels``, ``global_relabels``,
            ``bfs_levels`` (BFS levels of all global relabels),
            ``stranded_excess`` (the excess that phase two returned to the
            sources: the paper's termination rule is e(s) + e(t) = total
            excess minus this), ``tiled_steps`` (push-relabel steps whose
            queue had rows of at most ``TILE`` arcs, run in tiles: see
            :func:`jaxmatch.flow.lanes.ladder`).

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [4, 2, 1, 1, 5])
        >>> res = jaxmatch.max_flow(net, 0, 3)
        >>> int(res.flow_value), res.status_name, int(res.stats["stranded_excess"])
        (4, 'converged', 2)
    """

    flow_value: jax.Array
    flow: jax.Array
    source_side: jax.Array
    status: jax.Array
    stats: dict[str, Any]


@with_status_name
class CutResult(NamedTuple):
    """A minimum s-t cut, as :func:`min_cut` returns it: its capacity, its source side and its arcs.

    Eagerly the arrays have the true sizes; under ``jit``/``vmap`` they keep
    the network's capacities, with False in the padding. ``status_name``
    gives the status in words.

    Attributes:
        value: The cut's capacity: the sum of ``cap[a]`` over the cut arcs,
            equal to the maximum flow value.
        source_side: Bool per vertex, the source side S of the cut: it holds
            every source and no sink, and no residual arc of the maximum
            preflow leaves it.
        cut_arcs: Bool per input arc: its tail is in S and its head is not
            (``np.flatnonzero`` gives their ids).
        status: The :class:`jaxmatch.Status` as an int32: CONVERGED;
            MAX_ITERS when the flow's phase one stopped at ``max_iters``
            (the cut may not be minimum); KERNEL_STALLED when a persistent
            kernel's grid barrier timed out.
        stats: The counters of the run, as in :class:`FlowResult`
            (``iterations`` and the rest; ``return_iterations`` is 0, as
            phase two does not run).

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [4, 2, 1, 1, 5])
        >>> cut = jaxmatch.min_cut(net, 0, 3)
        >>> int(cut.value), cut.status_name
        (4, 'converged')
    """

    value: jax.Array
    source_side: jax.Array
    cut_arcs: jax.Array
    status: jax.Array
    stats: dict[str, Any]


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
    is_source = _res._mask_of(source, net.vertex_cap)
    c = _res.initial_preflow(net, is_source)
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
    terminal = _res._mask_of(source, net.vertex_cap) | _res._mask_of(sink, net.vertex_cap)
    return jnp.max(jnp.where(terminal, 0, deg))


def _longest_row(net, source, sink):
    """The longest residual row of a vertex that is not a terminal, as an int; None under tracing."""
    if is_traced(net.res.indptr) or is_traced(source) or is_traced(sink):
        return None
    return int(_longest_inner_row(net, source, sink))


def _prepare(net, source, sink, *, layout, reverse, max_iters, k, lanes):
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
    if lanes is None:
        lanes = _pr.DEFAULT_LANES if jax.default_backend() == "gpu" else _pr.cpu_lanes(net.arc_cap)
    lanes = int(lanes)
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
    longest = _longest_row(net, src, snk)
    return net, src, snk, dict(max_iters=jnp.int32(max_iters), k=None if k is None else float(k),
                               width=_lanes.window_width(2 * net.arc_cap, longest, lanes),
                               search=reverse == "search"), longest


def _batch_flow(batch: FlowNetwork, source, sink, phases: int, options: dict, throw: bool) -> FlowResult:
    """A batch, eagerly: on the GPU one jitted ``vmap``; elsewhere its disjoint unions with every network's
    source and sink (:func:`jaxmatch.graph.solve_union`), read back network by network and padded as under
    vmap (the faster route on each: experiments/RESULTS.md)."""
    ends = batch_terminals(source, sink, np.asarray(batch.n))
    if _graph.batch_route() == "vmap":
        res = _vmapped(phases, tuple(sorted(options.items())))(batch, *(e.astype(np.int32) for e in ends))
        return settle("max_flow", res, throw)
    tail, head = np.asarray(batch.tail), np.asarray(batch.head)
    options = {**options, "k": _pr.UNION_K if options["k"] is None else options["k"]}

    def one(run, union, off):   # one part's networks (graph.solve_union)
        res = _flow(union, ends[0][run] + off["n"][:-1], ends[1][run] + off["n"][:-1], phases, options, throw)
        flow, t = split_union(res.flow, off["n_arcs"], batch.arc_cap, 0), ends[1][run, None]
        # the net inflow of the sink: the value of the flow, and of phase one's preflow (min_cut)
        value = (np.where(head[run] == t, flow, 0).sum(1) - np.where(tail[run] == t, flow, 0).sum(1)).astype(flow.dtype)
        return (value, flow, split_union(res.source_side, off["n"], batch.vertex_cap, False)), res

    (value, flow, side), status, stats = _graph.solve_union(batch, one)
    return FlowResult(*map(jnp.asarray, (value, flow, side, status)), {k: jnp.asarray(v) for k, v in stats.items()})


@functools.lru_cache(maxsize=32)
def _vmapped(phases: int, options: tuple):
    return jax.jit(jax.vmap(lambda net, s, t: _flow(net, s, t, phases, dict(options), False)))


# --------------------------------------------------------------------------
# max flow and min cut


def max_flow(net: FlowNetwork, source, sink, *, layout: str | None = None, max_iters: int | None = None,
             k: float | None = None, lanes: int | None = None, reverse: str = "index",
             kernel=None, throw: bool = True) -> FlowResult:
    r"""Maximum flow from ``source`` to ``sink`` by workload-balanced push-relabel (WBPR).

    Computes a flow f on the arcs of ``net``, with :math:`0 \le f(a) \le
    \mathrm{cap}(a)` on every arc and inflow equal to outflow at every vertex
    other than a terminal, whose value (the net flow out of the sources) is as
    large as possible, and a minimum cut of the same capacity (the max-flow
    min-cut theorem), read from the same run. Several sources and sinks act
    as if joined to a super source and a super sink by arcs of unbounded
    capacity.

    Algorithm: the generic push-relabel method of A. V. Goldberg and
    R. E. Tarjan ("A new approach to the maximum-flow problem", J. ACM 35(4),
    1988) with global relabels, as C.-Y. Hsieh, P.-C. Lin and S.-Y. Kuo
    organise it for GPUs ("Engineering a workload-balanced push-relabel
    algorithm for massive graphs on GPUs", WBPR, arXiv:2404.00270, 2024): the
    lock-free push-relabel of Hong, an active vertex queue whose rows are
    spread over the lanes of a step, and the RCSR / BCSR residual layouts.
    Phase one computes a maximum preflow towards the sinks: in each
    bulk-synchronous step every active vertex pushes its excess to its lower
    residual neighbours and relabels, and global relabels (a backward BFS
    from the sinks over the residual arcs) reset the heights when the work
    done since the last one calls for it. The minimum cut is read from its
    heights, above the lowest height that no vertex has. Phase two returns
    the excess that cannot reach a sink to the sources with the same engine,
    which turns the preflow into a flow without changing its value. The
    array form, and how the lock-free races map onto a synchronous step, are
    described in :mod:`jaxmatch.flow.push_relabel`.

    Cost: O(V^2 E) push and relabel operations in the worst case (generic
    push-relabel); a step costs O(active vertices + their arcs) work, a
    global relabel O(V + E) work and one step per BFS level. On the GPU the
    number of steps (launches) decides the time, which the persistent kernels
    cut by running many levels or rounds per launch.

    Capacities are int32 (int64 under ``jax_enable_x64``). Works eagerly,
    under ``jax.jit`` and under ``jax.vmap`` over a batch made by
    :func:`jaxmatch.stack` (one source and sink id per network).

    Args:
        net: The network (:class:`jaxmatch.FlowNetwork`); a batch from
            :func:`jaxmatch.stack` under ``jax.vmap``, or eagerly (outside
            ``jit``): the result then has a leading batch axis, padded as
            under ``vmap``, and ``source`` and ``sink`` are one id per
            network (an int or a ``[B]`` array); on the GPU the batch runs
            as one jitted ``vmap``, elsewhere its
            :func:`jaxmatch.disjoint_union` of runs of its networks with
            their sources and sinks (:func:`jaxmatch.graph.solve_union`),
            each run's ``status`` and ``stats`` for its networks.
        source: A vertex id, or a 1-D array of ids (several sources).
        sink: A vertex id, or a 1-D array of ids (several sinks), disjoint
            from ``source``.
        layout: ``"bcsr"`` or ``"rcsr"``: convert the network to that
            residual layout on the host first when it differs (both give
            the same flow value); ``None`` (default) keeps the network's.
        max_iters: The most push-relabel steps of each of the two phases
            (default ``None``: ``16 * vertex_cap + 4096``).
        k: The global relabel frequency: the next global relabel runs when
            the push-relabel work since the last one reaches ``k`` times
            that one's cost (the usual work-based rule, with a step's fixed
            cost counted). ``None`` (default): ``KERNEL_K`` = 0.25 where the
            push kernel runs, ``UNION_K`` = 1.0 in a batch's unions off the
            GPU, else ``DEFAULT_K`` = 0.5 (each measured: experiments/RESULTS.md).
        lanes: The most arcs one step scans at once, widened to the longest
            residual row of a vertex that is not a terminal (a power of two,
            at most all residual arcs); under ``jit``/``vmap`` the whole
            residual arc array. ``None`` (default): 2**18 on the GPU, elsewhere
            :func:`jaxmatch.flow.push_relabel.cpu_lanes` (an eighth of the arc
            capacity, 2**16 to 2**20; experiments/RESULTS.md).
        reverse: How a push finds the reverse residual arc: ``"index"``
            (default) reads the stored index (the paper's RCSR
            ``flow_idx``); ``"search"`` binary-searches the head's row (BCSR
            networks only, as the paper does to save the index's memory).
        kernel: Run the global relabels' BFS levels in the persistent Pallas
            kernel of :mod:`jaxmatch.kernels.bfs_level` and the push-relabel
            rounds in that of :mod:`jaxmatch.kernels.push_flow`, many levels
            or rounds per launch. ``None`` (default): on the GPU outside
            ``vmap``, off elsewhere; ``True``: on, with the default knobs (on
            a CPU the kernels run in Pallas's interpreter, for tests);
            ``False``: off; a :class:`jaxmatch.kernels.bfs_level.Config`: on,
            with those knobs (``push=False`` keeps the XLA push steps). The
            push kernel runs only for int32 capacities, ``reverse="index"``
            and networks whose non-terminal residual rows have at most
            ``Config.push_max_degree`` arcs. The value and the certificates
            are the same either way; with the push kernel the flow on each
            arc (not its value) may vary between GPU runs.
        throw: Eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when the status is not CONVERGED (default True); under
            ``jit``/``vmap`` it has no effect: read ``status``.

    Returns:
        FlowResult: ``flow_value``, ``flow`` per input arc, ``source_side``
        of a minimum cut, ``status`` and ``stats`` (see :class:`FlowResult`).

    Raises:
        GraphInputError: before tracing, when ``net`` is not a FlowNetwork
            or is a batch under ``jit`` (use ``jax.vmap``), its vertex capacity does not
            fit int32 heights, ``layout``, ``reverse`` or ``kernel`` is not
            one of the values above (or ``reverse="search"`` meets an RCSR
            network, ``kernel`` is asked for under ``vmap``, or a Config's
            block and width knobs are not powers of two),
            ``max_iters`` or ``lanes`` is not a positive int, ``k`` not a
            positive finite number, ``throw`` not a bool, the layout of a
            traced network would have to change, ``source`` or ``sink`` is
            empty, not integer ids, out of range or shares a vertex with the
            other, or the total capacity out of the sources overflows the
            capacity dtype.
        SolverError: eagerly with ``throw=True``, when the status is not
            CONVERGED.

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [4, 2, 1, 1, 5])
        >>> res = jaxmatch.max_flow(net, 0, 3)
        >>> int(res.flow_value), res.flow.tolist(), res.source_side.tolist()
        (4, [2, 2, 1, 1, 3], [True, True, False, False])
    """
    return _flow(net, source, sink, 2, dict(layout=layout, max_iters=max_iters, k=k, lanes=lanes, reverse=reverse,
                                            kernel=kernel), throw)


def _flow(net, source, sink, phases: int, options: dict, throw: bool) -> FlowResult:
    """:func:`max_flow` (``phases`` = 2) or its phase one alone (1: the preflow and the cut, for
    :func:`min_cut`); ``options``: max_flow's keywords but ``throw``."""
    if _graph.eager_batch(net, FlowNetwork):
        return _batch_flow(net, source, sink, phases, options, throw)
    net, src, snk, opts, longest = _prepare(net, source, sink, **{k: v for k, v in options.items() if k != "kernel"})
    kernel = _bfs_level.choose(options["kernel"], net.cap)
    push = _pr.push_kernel(kernel, net.cap, opts["search"])
    if opts["k"] is None:
        opts["k"] = _pr.KERNEL_K if push else _pr.DEFAULT_K
    # the push kernel's row rule, known eagerly: only the path that runs is compiled (None: both)
    short = longest <= kernel.push_max_degree if push and longest is not None else None
    check_flag(throw, "throw")
    flow, value, side, status, stats = _solve(net, src, snk, kernel=kernel, short=short, phases=phases,
                                              interpret=kernel is not None and jax.default_backend() != "gpu", **opts)
    stats = {k: v for k, v in stats.items() if k != "rung_steps"}  # scalars only
    if not is_traced(net.n):
        flow, side = trim(flow, int(net.n_arcs)), trim(side, int(net.n))
    return settle("max_flow", FlowResult(value, flow, side, status, stats), throw)


def _solve(net, source, sink, **opts):
    # each layout compiles its own step: RCSR rows hold the forward arcs first, so its pushes take one
    # prefix sum where BCSR's take two (push_relabel.push_relabel_step)
    return _solve_jit(net, _padded_ids(source), _padded_ids(sink), **opts)


def _padded_ids(ids):
    """Concrete terminal ids padded with -1 (ignored) to a power of two (at least 8), so one source
    and a few share one compilation; traced ids as they are."""
    if is_traced(ids):
        return ids
    a = np.ravel(np.asarray(ids)).astype(np.int32)
    return np.concatenate([a, np.full(max(8, next_pow2(a.size)) - a.size, -1, np.int32)])


@partial(jax.jit, static_argnames=("k", "width", "search", "kernel", "interpret", "short", "phases"))
def _solve_jit(net, source, sink, *, max_iters, k, width, search, kernel=None, interpret=False, short=None, phases=2):
    return _pr.max_flow_arrays(net, source, sink, max_iters=max_iters, k=k, width=width, search=search,
                               kernel=kernel, interpret=interpret, short=short, phases=phases)


def min_cut(net: FlowNetwork, source, sink, *, throw: bool = True, **options) -> CutResult:
    r"""Minimum s-t cut: its capacity, its source side (bool per vertex) and its arcs (bool per arc).

    A minimum cut is a vertex set S that holds every source and no sink and
    whose leaving arcs have the least total capacity,
    :math:`\mathrm{cap}(S) = \sum_{u \in S,\ v \notin S} \mathrm{cap}(u, v)`;
    by the max-flow min-cut theorem it equals the maximum flow value.
    Computed by phase one of :func:`max_flow` (same algorithm, papers and
    options): the source side is the vertices above the lowest height that
    no vertex has when the maximum preflow is found, a set that no residual
    arc leaves. Phase two (returning the stranded excess, which changes no
    arc across the cut) is not run: 1-17% of max_flow's time on single
    networks on an H100, 30% on a batch of 10^4-10^5 (2-18% and 11-31% on a
    CPU; experiments/RESULTS.md, sessions 52-53). Cost: phase one of
    :func:`max_flow`, plus O(E) for the cut arcs.

    Args:
        net: The network (:class:`jaxmatch.FlowNetwork`).
        source: A vertex id, or a 1-D array of ids (several sources).
        sink: A vertex id, or a 1-D array of ids (several sinks), disjoint
            from ``source``.
        throw: Eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when the status is not CONVERGED (default True); under
            ``jit``/``vmap`` it has no effect: read ``status``.
        **options: The keyword options of :func:`max_flow`: ``layout``,
            ``max_iters``, ``k``, ``lanes``, ``reverse``, ``kernel``.

    Returns:
        CutResult: ``value``, ``source_side``, ``cut_arcs``, ``status`` and
        ``stats`` (see :class:`CutResult`).

    Raises:
        GraphInputError: before tracing, as for :func:`max_flow`.
        SolverError: eagerly with ``throw=True``, when the status is not
            CONVERGED.

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1, 1, 2], [1, 2, 2, 3, 3], [4, 2, 1, 1, 5])
        >>> cut = jaxmatch.min_cut(net, 0, 3)
        >>> int(cut.value), cut.source_side.tolist(), cut.cut_arcs.tolist()
        (4, [True, True, False, False], [False, True, True, True, False])
    """
    check_flag(throw, "throw")
    args = inspect.signature(max_flow).bind(net, source, sink, **options)   # max_flow's keywords and defaults
    args.apply_defaults()
    res = _flow(net, source, sink, 1, {k: v for k, v in list(args.arguments.items())[3:] if k != "throw"}, False)
    side, single = res.source_side, not is_traced(net.n) and np.ndim(net.n) == 0
    if not is_traced(side) and side.size + net.tail.size <= HOST_TRIM_MAX:   # small: on the host (no compile)
        crossing = device(_res.cut_arcs(np, *map(np.asarray, (side, net.tail, net.head))))
    else:   # past it on the device: a round trip of the arcs through the host costs more (RESULTS session 53)
        crossing = _res.cut_arcs_jit(side, net.tail, net.head)
    crossing = trim(crossing, int(net.n_arcs)) if single else crossing
    return settle("min_cut", CutResult(res.flow_value, side, crossing, res.status, res.stats), throw)
