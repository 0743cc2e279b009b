"""WBPR: workload-balanced lock-free push-relabel maximum flow, in bulk-synchronous array form.

Papers: C.-Y. Hsieh, P.-C. Lin, S.-Y. Kuo, "Engineering a workload-balanced
push-relabel algorithm for massive graphs on GPUs" (WBPR, arXiv:2404.00270,
2024): Algorithm 1 (the lock-free push-relabel of B. Hong, IPDPS 2008, and
Z. He and B. Hong, IPDPS 2010), Algorithm 2 (the vertex-centric iteration
with an active vertex queue and a tile per active vertex) and the RCSR /
BCSR residual layouts; A. V. Goldberg and R. E. Tarjan, "A new approach to
the maximum-flow problem" (J. ACM 35(4), 1988), the generic push-relabel
method, its global relabel and gap heuristics.

This module holds the state of a phase, the push-relabel step, the global
relabel, one phase (:func:`run_phase`) and the two phases on the device
(:func:`max_flow_arrays`, which :func:`jaxmatch.max_flow` calls). The
residual network's arrays and the cut live in :mod:`jaxmatch.flow.residual`,
the step sizes (ladder, lanes, requeue) in :mod:`jaxmatch.flow.lanes`, the
BFS of the global relabel in :mod:`jaxmatch.flow.residual_bfs`.

State: the residual capacity ``rc`` of every residual arc (the paper's
``c_f``; a forward arc of input arc a holds cap[a] - f[a], its reverse f[a]),
the excess ``e`` and the height ``h`` of every vertex, and the active vertex
queue (AVQ). ``n`` is the true vertex count. One push-relabel step
(:func:`push_relabel_step`; Algorithm 1 lines 9-21 as Algorithm 2 organises
them):

1. the vertices of the AVQ (every active vertex: e > 0, h < n, not a
   terminal, is in it) spread their residual rows over the lanes of the
   step (:mod:`jaxmatch.flow.lanes`): the paper's tiles. While no queued
   row is longer than ``TILE`` arcs, each vertex gets a tile of ``TILE``
   lanes, as the paper gives each a warp; otherwise the rows are laid end
   to end, and when the queued vertices' arcs do not all fit the lanes,
   the vertices past them wait for the next step (any subset of the active
   vertices may act in a step of the generic algorithm);
2. every queued vertex u *discharges* once: it pushes on all its residual
   arcs to lower neighbours (h(v) < h(u), the lock-free rule of line 14), in
   arc order, as much as its excess covers (a prefix sum over its lanes: the
   first arcs are saturated, the arc where the excess runs out gets the
   rest), the forward arcs (those of input arcs) before the reverse arcs
   (``PRIORITY``; two prefix sums in BCSR, one in RCSR, whose rows already
   hold the forward arcs first): excess moves on towards the sink before it
   cancels flow, which sends it back and forth between two vertices (with
   this order BCSR, whose rows interleave the two kinds, takes the steps of
   RCSR); rc(u, v) -= d, rc(v, u) += d, e(u) -= d, e(v) += d by
   scatter-add. If excess is left (all those arcs are saturated), u
   relabels in the same step to 1 + the minimum height over its remaining
   residual arcs (capped at n + 1): line 20, whose minimum the saturated
   arcs no longer take part in. Algorithm 1 pushes on one arc per visit;
   discharging all admissible arcs at once moves the same flow in fewer
   steps;
3. the next AVQ is built from the queue and the heads of this step's
   pushes only (no pass over all vertices): those still active, without
   repeats, compacted by a prefix sum.

Every array of a step has the size of the queue or of its lanes, not of the
graph: the step runs in the first rung of a ladder of (queue, lanes) sizes
that holds the queue (:func:`jaxmatch.flow.lanes.ladder`, ``lax.switch``),
so the many steps with few active vertices stay small, and ``unroll`` steps
run per ``while_loop`` iteration (masked no-ops once done), which amortises
the loop's fixed cost. On a GPU such a step costs its kernel launches, so
the number of steps is what counts. With ``kernel`` (the default on the
GPU) and rows of at most ``Config.push_max_degree`` arcs, the steps run
instead as rounds of the persistent kernel of
:mod:`jaxmatch.kernels.push_flow`, many per launch: the same discharge, with
a grid barrier between the pushes and the relabels in place of this step's
single snapshot (its docstring gives the argument).

The mapping of the lock-free races onto a synchronous step. Every decision of
a step reads the heights, excesses and residual capacities at the start of
the step (one snapshot), as every thread of Algorithm 1 reads values that
other threads may be changing. Then:

* Arcs (u, v) and (v, u) are never both pushed in one step (that would need
  h(u) > h(v) and h(v) > h(u)), and each residual arc is pushed by its tail
  only, so every residual arc receives at most one update and the AtomicSub
  / AtomicAdd of lines 15-18 become plain scatter-adds; pushes from several
  vertices into one vertex add up in the excess scatter-add.
* A vertex that pushes in a step also may receive pushes in it; its pushes
  were bounded by its snapshot excess, which only grew.
* A push u -> v (h(v) < h(u)) creates the residual arc (v, u), for which
  h(v) <= h(u) + 1 holds. The one race that could break the validity of the
  labels (h(x) <= h(y) + 1 on every residual arc (x, y)) is a vertex v that
  relabels while a neighbour u pushes into it: v's relabel did not see the
  new arc (v, u). Hong's lock-free argument tolerates the stale relabel; here
  such a v relabels to min(h_min + 1, h(v) + 2) instead of h_min + 1, which
  is still >= h(v) + 1 and keeps (v, u) valid since h(u) >= h(v) + 1 and
  heights never decrease. Every other arc keeps its validity because a
  relabel only reads snapshot heights, which can only have grown.

So the labels stay valid, every push is along an arc that is admissible in
the lock-free sense, and the properties of generic push-relabel hold:
heights are lower bounds on the residual distance to a sink, a vertex with
h >= n cannot reach a sink, and the number of steps is finite.

Global relabel (:func:`global_relabel`; the paper's heuristic of line 23,
done on the device with no host round trip): a backward BFS from the sinks
over the residual arcs (:func:`jaxmatch.flow.residual_bfs.residual_bfs`)
gives every vertex its residual distance to a sink; vertices that cannot
reach a sink get h = n and stop being active (their excess is *stranded*).
The BFS stops as soon as every vertex that was active is labelled (vertices
it did not reach then get max(h, L + 1), L the lowest unexpanded level: a
valid lower bound), or when the frontier is empty. Frequency: the usual
work-based rule (Goldberg's hi_pr, Baumstark et al.'s synchronous
push-relabel) with the GPU's fixed step cost in it: a push step costs
1 + (arcs scanned) / ``STEP_LANES`` step units, a global relabel
``levels + (6 n + 2 m) / STEP_LANES``; the next global relabel runs when the
push steps since the last one cost ``k`` times as much as it did. ``k``
below 1 (``DEFAULT_K`` = 0.5) pays: between global relabels the labels
decay quickly (excess bounces between neighbours, a relabel of 1 or 2 a
step), while the BFS levels of a global relabel barely grow in number as
they get more frequent, since it stops at the farthest active vertex (step
counts: experiments/RESULTS.md). Each global relabel rebuilds the AVQ from
all vertices (one compaction).

Termination. The paper stops when e(s) + e(t) equals Excess_total minus the
stranded excess. Here phase one stops when the AVQ is empty, which is the
same condition: the excess not at a terminal is then all on vertices of
height >= n, which cannot reach a sink. The preflow is then maximum, and the
*minimum cut* is read from the heights, at the lowest height that no vertex
has (:func:`jaxmatch.flow.residual.gap_cut`: a height histogram, no BFS).

Second phase. The maximum preflow becomes a maximum *flow* by returning the
stranded excess to the sources with the same engine: targets = the sources
(height 0), the sinks fixed at height n, heights from a BFS towards the
sources. Every vertex holding excess can reach a source in the residual
graph (reverse the flow paths that brought its excess), and it lies on the
source side of the cut, which no residual arc leaves, so this phase never
changes the flow across the cut, into the sinks or out of the sources'
side. Both phases run in one ``fori_loop``, so the phase's code is compiled
once.

Several sources and sinks: all sources start at height n with their
out-arcs saturated and all sinks are BFS roots at height 0. This is exactly
the super source / super sink construction of the paper's experiments (a
super source S with unbounded arcs to every source, a super sink T reached
from every sink), without materialising S and T.

Costs: a push-relabel step is O(Q + W) work for the ladder rung (Q queue
slots, W lanes) that holds the queue; a global relabel O(V + E) (the first
level and the rebuilt AVQ) plus O(frontier + its arcs) per BFS level.
Measured: ``experiments/bench_flow.py`` and experiments/RESULTS.md.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, compact, switch, take
from jaxmatch.status import Status
from jaxmatch.flow.lanes import Lanes, Rung, _lanes, _requeue, _rung, _slot_min, _slot_prefix, _slot_sum, ladder
from jaxmatch.flow.residual import (
    _mask_of, excess_of_flow, flow_from_residual, gap_cut, initial_preflow, residual_from_flow, reverse_position)
from jaxmatch.flow.residual_bfs import residual_bfs
from jaxmatch.kernels.push_flow import push_rounds

DEFAULT_K = 0.5
KERNEL_K = 0.25          # with the push kernel, whose rounds cost more than a BFS level (measured: RESULTS.md)
UNION_K = 1.0            # a batch's disjoint unions off the GPU (graph.solve_union; RESULTS.md, session 51)
DEFAULT_LANES = 1 << 18
CPU_LANES = 1 << 16      # on the CPU a narrower step wastes less work on padding lanes (measured: RESULTS.md)
CPU_LANES_MAX = 1 << 20  # the widest default step off the GPU (2**21 was slower on a 5M-arc union: RESULTS.md)
DEFAULT_UNROLL = 1         # push steps per loop iteration: more compile longer and, with the BFS levels in the
                           # persistent kernel, run slower (measured: RESULTS.md)
STEP_LANES = 1 << 18     # arcs a step scans for the cost of its fixed overhead (the work rule's unit)
ALPHA = 6                # the work rule's weight of a vertex against an arc
REVERSE = ("index", "search")
PRIORITY = "forward"   # arcs pushed on first: "forward" (input arcs before reverse arcs) or "none" (arc order)


class PRState(NamedTuple):
    """The loop state of a push-relabel phase."""

    rc: jax.Array        # [2 * arc_cap] residual capacities
    excess: jax.Array    # [vertex_cap]
    height: jax.Array    # [vertex_cap] int32
    queue: jax.Array     # [vertex_cap] the AVQ: its first `count` entries
    count: jax.Array
    arcs: jax.Array      # residual arcs of the queued vertices
    longest: jax.Array   # the longest residual row of a queued vertex
    owner: jax.Array     # [vertex_cap] scratch for removing repeats, INT_MAX when unused
    it: jax.Array        # push-relabel steps done
    work: jax.Array      # float32, step units of push work since the last global relabel
    budget: jax.Array    # float32, push work allowed before the next one
    n_gr: jax.Array      # global relabels done
    pushes: jax.Array
    relabels: jax.Array
    levels: jax.Array    # BFS levels run by all global relabels
    rung_steps: jax.Array  # [rungs] push-relabel steps run in each rung of the ladder
    stalled: jax.Array   # a launch of the BFS kernel reported a stalled grid barrier


# --------------------------------------------------------------------------
# global relabel


def global_relabel(net, s: PRState, targets, fixed, terminal, n, k: float, rungs, *, search, unroll, early,
                   kernel=None, interpret=False, run=True):
    """Heights from a BFS to the targets (see the module docstring), and a rebuilt AVQ. ``run`` False
    (a traced bool): no BFS level runs (see :func:`run_phase` under vmap)."""
    counted = (s.excess > 0) & (s.height < n) & ~terminal
    dist, lowest, levels, owner, stalled = residual_bfs(net, s.rc, targets, fixed, counted, rungs, search=search,
                                               unroll=unroll, early=early, owner=s.owner, kernel=kernel,
                                               interpret=interpret, run=run)
    floor = jnp.where(lowest < 0, n, jnp.minimum(lowest + 1, n))
    labelled = (dist >= 0) & (dist < INT_MAX)
    height = jnp.where(labelled, dist, jnp.minimum(jnp.maximum(s.height, floor), n))
    height = jnp.where(fixed, n, height).astype(jnp.int32)
    active = (s.excess > 0) & (height < n) & ~terminal
    queue, count = compact(active, jnp.arange(net.vertex_cap, dtype=jnp.int32), net.vertex_cap)
    deg = net.res.indptr[1:] - net.res.indptr[:-1]
    cost = 1.0 + levels.astype(jnp.float32) + (ALPHA * n + 2 * net.n_arcs).astype(jnp.float32) / STEP_LANES
    deg = jnp.where(active, deg, 0)
    return s._replace(height=height, queue=queue, count=count, arcs=jnp.sum(deg, dtype=jnp.int32), longest=jnp.max(deg),
                      owner=owner, work=jnp.float32(0),
                      budget=jnp.float32(k) * cost, n_gr=s.n_gr + 1, levels=s.levels + levels,
                      stalled=s.stalled | stalled)


# --------------------------------------------------------------------------
# push-relabel step


def _push_prefix(adm, r, need, lane, ln: Lanes, rung: Rung, udt):
    """Push on the ``adm`` lanes in lane order while ``need`` (per lane: its slot's) lasts.

    Returns (amount per lane, the slot's cut lane: where the running sum reaches
    ``need``, INT_MAX where it never does, the slot's total: exact where there is no cut).
    Sums are taken modulo 2**bits, exact up to the first lane where the running sum reaches
    ``need`` (each term is below 2**(bits-1)).
    """
    x = jnp.where(adm, r, 0).astype(udt)
    after = _slot_prefix(x, ln, rung)
    before = after - x
    cut = _slot_min(jnp.where(adm & (after >= need), lane, INT_MAX), ln, rung)
    last = cut[ln.slot]
    d = jnp.where(adm & (lane < last), x, jnp.where(adm & (lane == last), need - before, 0))
    return d, cut, _slot_sum(x, ln, rung)


def cpu_lanes(arc_cap: int) -> int:
    """The default lanes off the GPU: an eighth of the arc capacity, between ``CPU_LANES`` and
    ``CPU_LANES_MAX``. A step scans at most its lanes' arcs, and a step or BFS level whose queue has
    more arcs runs again, each time with its rung's full work (a prefix sum and a requeue over the
    queue's slots); on a large network with wide frontiers (a batch's disjoint union) 2**16 lanes
    split every level into many passes: the union of 20,000 flow networks of 256 arcs (2**22.3 arc
    slots) took 45 s with 2**16 lanes and 12.6 s with 2**20 on this repository's CPU. Networks of at
    most 2**19 arc slots keep 2**16 (on single networks of 2**13-2**18 slots it was as fast as 2**13
    and 2**14 lanes, within the machine's noise, or faster; experiments/RESULTS.md, session 38)."""
    return min(max(int(arc_cap) >> 3, CPU_LANES), CPU_LANES_MAX)


def push_relabel_step(net, terminal, n, s: PRState, *, rung: Rung, search: bool) -> PRState:
    """One bulk-synchronous discharge of the queued vertices whose rows fit the lanes (see the module docstring)."""
    vc, size = net.vertex_cap, 2 * net.arc_cap
    udt = jnp.uint64 if s.rc.dtype == jnp.int64 else jnp.uint32
    u = jnp.where(jnp.arange(rung.slots) < s.count, s.queue[:rung.slots], vc)
    h_u = take(s.height, u, INT_MAX)
    e_u = take(s.excess, u, 0)
    act = (u < vc) & (e_u > 0) & (h_u < n)
    ln = _lanes(u, act, net.res.indptr, size, rung)
    lane = jnp.arange(rung.lanes, dtype=jnp.int32)
    w = take(net.res.indices, ln.entry, vc)
    r = take(s.rc, ln.entry, 0)
    h_w = take(s.height, w, INT_MAX)
    tail, h_t, e_t = u[ln.slot], h_u[ln.slot], e_u[ln.slot]
    # push on the admissible arcs, forward arcs first, each kind in arc order, while the excess lasts
    adm = ln.valid & (r > 0) & (h_w < h_t)
    need = e_t.astype(udt)
    if PRIORITY == "forward" and net.layout == "bcsr":
        first = adm & take(net.res_forward, ln.entry, False)
        d_a, cut_a, total_a = _push_prefix(first, r, need, lane, ln, rung, udt)
        # the rest only where the first class does not take all the excess (then total_a < need is exact)
        d_b, cut_b, _ = _push_prefix(adm & ~first, r, need - total_a[ln.slot], lane, ln, rung, udt)
        d = jnp.where(first, d_a, jnp.where((cut_a == INT_MAX)[ln.slot], d_b, 0))
        cut = jnp.minimum(cut_a, cut_b)
    else:  # arc order: RCSR rows already hold the forward arcs first, so one prefix sum does
        d, cut, _ = _push_prefix(adm, r, need, lane, ln, rung, udt)
    d = d.astype(s.rc.dtype)
    # relabel where excess is left: 1 + the lowest head over the arcs that stay residual
    best = _slot_min(jnp.where((r > 0) & ~adm & (w != tail), h_w, INT_MAX), ln, rung)
    relabel = act & ln.fit & (cut == INT_MAX)
    moved = d > 0
    pos = jnp.where(moved, ln.entry, size)
    # two scatters each rather than one of concatenated halves: XLA's CPU backend otherwise computes the
    # pushed amounts again in each fusion that builds a concatenation (measured: RESULTS.md, session 49)
    rc = s.rc.at[pos].add(-d, mode="drop").at[reverse_position(net, pos, search)].add(d, mode="drop")
    w = jnp.where(moved, w, vc)
    excess = s.excess.at[jnp.where(moved, tail, vc)].add(-d, mode="drop").at[w].add(d, mode="drop")
    received = take(excess, u, 0) > e_u - _slot_sum(d, ln, rung)   # a neighbour pushed into u in this step
    new_h = jnp.minimum(best, n) + 1
    new_h = jnp.where(received, jnp.minimum(new_h, h_u + 2), new_h)
    height = s.height.at[jnp.where(relabel, u, vc)].set(new_h, mode="drop")
    cand = jnp.concatenate([u, w])
    alive = (take(excess, cand, 0) > 0) & (take(height, cand, n) < n) & ~take(terminal, cand, True)
    queue, count, arcs, longest, owner, _ = _requeue(s.queue, s.owner, cand, alive, net.res.indptr)
    return s._replace(rc=rc, excess=excess, height=height, queue=queue, count=count, arcs=arcs, longest=longest,
                      owner=owner,
                      it=s.it + 1,
                      work=s.work + 1.0 + ln.total.astype(jnp.float32) / STEP_LANES,
                      pushes=s.pushes + jnp.sum(moved, dtype=jnp.int32),
                      relabels=s.relabels + jnp.sum(relabel, dtype=jnp.int32))


def run_phase(net, rc, excess, targets, fixed, n, *, max_iters, k, rungs, search, unroll, early, kernel=None,
              interpret=False, short=None):
    """Push-relabel towards ``targets`` until no vertex is active (or max_iters steps); returns the final state.

    Each loop iteration runs a global relabel if one is due (the first
    iteration always does), then ``unroll`` push-relabel steps (no-ops once
    none is active or a global relabel is due), or, when :func:`push_kernel`
    and no non-terminal's residual row is longer than
    ``kernel.push_max_degree``, one launch of the push kernel (rounds until
    the work rule calls for a global relabel). ``short``: whether that row
    rule holds, when known before tracing (True: only the kernel's loop is
    compiled, False: only the steps'); None: both, chosen at run time.
    """
    vc = net.vertex_cap
    terminal = targets | fixed
    zero = jnp.int32(0)
    s = PRState(rc, excess, jnp.where(fixed, n, 0).astype(jnp.int32), jnp.full(vc, vc, jnp.int32), zero, zero,
                zero, jnp.full(vc, INT_MAX, jnp.int32), zero, jnp.float32(0), jnp.float32(0), zero, zero, zero, zero,
                jnp.zeros(len(rungs), jnp.int32), jnp.bool_(False))
    relabel = partial(global_relabel, net, targets=targets, fixed=fixed, terminal=terminal, n=n, k=k, rungs=rungs,
                      search=search, unroll=unroll, early=early, kernel=kernel, interpret=interpret)

    def going(s: PRState):
        return ((s.count > 0) | (s.n_gr == 0)) & (s.it < max_iters)

    def relabel_if_due(s: PRState) -> PRState:
        # under vmap the cond runs both branches for every network: the BFS runs only where it is due
        # (else every step ran a whole global relabel for every network of the batch)
        due = going(s) & (s.work >= s.budget)
        return lax.cond(due, lambda s: relabel(s, run=due), lambda s: s, s)

    steps = [lambda s: s] + [partial(push_relabel_step, net, terminal, n, rung=r, search=search) for r in rungs]

    def step_body(s: PRState) -> PRState:
        s = relabel_if_due(s)
        for _ in range(unroll):
            r = _rung(rungs, s.count, s.arcs, s.longest, going(s) & (s.work < s.budget))
            s = switch(r, steps, s)
            s = s._replace(rung_steps=s.rung_steps.at[jnp.where(r > 0, r - 1, len(rungs))].add(1, mode="drop"))
        return s

    if push_kernel(kernel, rc, search):   # the push-relabel rounds in the persistent kernel, many per launch
        fwd, term = net.res_forward.astype(jnp.int32), terminal.astype(jnp.int32)
        deg = net.res.indptr[1:] - net.res.indptr[:-1]
        # a long row is walked by one program in the kernel, load-balanced over all lanes by the XLA steps
        rows_ok = jnp.max(jnp.where(terminal, 0, deg)) <= kernel.push_max_degree

        def launch(s: PRState, solo: bool = False) -> PRState:
            o = push_rounds(jnp.concatenate([s.queue, jnp.full(vc, vc, jnp.int32)]), s.count, s.rc, s.excess,
                            s.height, s.owner, net.res.indptr, net.res.indices, net.res_rev, fwd, term, n=n,
                            round_id=s.it + 1, room=s.budget - s.work,
                            max_rounds=jnp.minimum(kernel.rounds, max_iters - s.it), cfg=kernel, interpret=interpret,
                            solo=solo)
            return s._replace(rc=o.rc, excess=o.excess, height=o.height, owner=o.stamp, count=o.count,
                              queue=lax.dynamic_slice(o.buf, (o.side * vc,), (vc,)), it=s.it + o.rounds,
                              work=s.work + o.work, pushes=s.pushes + o.pushes, relabels=s.relabels + o.relabels,
                              stalled=s.stalled | o.stalled)

        def either_launch(s: PRState) -> PRState:   # a small queue in one program (Config.solo), else the grid
            if not kernel.solo:
                return launch(s)
            return lax.cond(s.count <= kernel.solo, partial(launch, solo=True), launch, s)

        def kernel_body(s: PRState) -> PRState:
            s = relabel_if_due(s)
            return lax.cond(going(s) & (s.work < s.budget), either_launch, lambda s: s, s)

        def either(s: PRState) -> PRState:   # one of the two for the whole phase (`rows_ok` is fixed)
            return lax.cond(rows_ok, kernel_body, step_body, s)
        body = either if short is None else kernel_body if short else step_body
    else:
        body = step_body

    return lax.while_loop(going, body, s)


def push_kernel(kernel, rc, search: bool) -> bool:
    """Whether the push-relabel rounds run in :mod:`jaxmatch.kernels.push_flow`: a kernel config that
    asks for it, the stored reverse index, and int32 capacities (the kernel's atomics)."""
    return kernel is not None and kernel.push and not search and rc.dtype == jnp.int32


def max_flow_arrays(net, source, sink, *, max_iters, k=DEFAULT_K, width=None, search=False, rungs=None,
                    unroll=None, early=True, kernel=None, interpret=False, short=None, phases=2):
    """Both phases on the device (``phases`` = 1: phase one only, a maximum preflow and its minimum
    cut, as :func:`jaxmatch.min_cut` needs; ``flow`` is then that preflow).

    ``source`` and ``sink``: int32 ids (scalars or 1-D arrays; out-of-range
    ids are ignored). ``width``: lanes of the last rung (at least the longest
    row; default all residual arcs). ``rungs``: the step sizes (default
    :func:`ladder`; the last must hold the whole capacity with at least the
    longest row of a non-terminal vertex as lanes). ``unroll``:
    push-relabel steps per loop iteration (default ``DEFAULT_UNROLL``). ``early``: global
    relabels stop when every active vertex is labelled. ``kernel``: a
    :class:`jaxmatch.kernels.bfs_level.Config` to run the global relabels'
    BFS levels in that kernel (``interpret``: in Pallas's interpreter);
    ``short``: see :func:`run_phase`.
    Returns (flow [arc_cap], value, source_side [vertex_cap], status, stats dict, whose
    ``rung_steps`` counts the push-relabel steps run in each rung).
    """
    vc = net.vertex_cap
    width = 2 * net.arc_cap if width is None else int(width)
    if unroll is None:
        unroll = DEFAULT_UNROLL
    rungs = ladder(vc, net.arc_cap, width) if rungs is None else tuple(Rung(*r) for r in rungs)
    n = net.n.astype(jnp.int32)
    real = jnp.arange(vc) < n
    is_source = _mask_of(source, vc) & real
    is_sink = _mask_of(sink, vc) & real & ~is_source
    opts = dict(max_iters=max_iters, k=k, rungs=rungs, search=search, unroll=unroll, early=early, kernel=kernel,
                interpret=interpret, short=short)

    # phase 0: a maximum preflow towards the sinks; phase 1: the stranded excess back to the sources.
    # One loop over the two phases, so that the phase's code is compiled once.
    f0 = initial_preflow(net, is_source)

    def phase(i, c):
        (rc, excess, side, value, left, counts, per_rung), stranded_total = c
        first = i == 0
        targets, fixed = jnp.where(first, is_sink, is_source), jnp.where(first, is_source, is_sink)
        excess = jnp.where(first | ~(is_source | is_sink), excess, 0)
        p = run_phase(net, rc, excess, targets, fixed, n, **opts)
        side = jnp.where(first, gap_cut(p.height, real, n) & ~is_sink, side)
        value = jnp.where(first, jnp.sum(jnp.where(is_sink, p.excess, 0)), value)
        stranded = jnp.sum(jnp.where(is_source | is_sink, 0, p.excess))
        unfinished = (p.count > 0) | (~first & (stranded != 0))
        # the first bound hit decides: phase one's (the flow may not be maximum), else phase two's
        code = jnp.where(first, Status.MAX_ITERS, Status.EXCESS_LEFT)
        left = jnp.where((left == Status.CONVERGED) & unfinished, code, left)
        left = jnp.where(p.stalled, Status.KERNEL_STALLED, left)
        counts = counts.at[i].set(jnp.stack([p.it, p.pushes, p.relabels, p.n_gr, p.levels]))
        return ((p.rc, p.excess, side, value, left, counts, per_rung + p.rung_steps),
                stranded_total + jnp.where(first, stranded, 0))

    init = (residual_from_flow(net, f0), excess_of_flow(net, f0), jnp.zeros(vc, bool), jnp.zeros((), f0.dtype),
            jnp.int32(Status.CONVERGED), jnp.zeros((2, 5), jnp.int32), jnp.zeros(len(rungs), jnp.int32))
    (rc, _, source_side, value, status, counts, per_rung), stranded = lax.fori_loop(
        0, phases, phase, (init, jnp.zeros((), f0.dtype)))
    total = counts.sum(axis=0)
    tiled = sum(per_rung[i] for i, r in enumerate(rungs) if r.tile) if any(r.tile for r in rungs) else jnp.int32(0)
    stats = dict(iterations=counts[0, 0], return_iterations=counts[1, 0], pushes=total[1], relabels=total[2],
                 global_relabels=total[3], bfs_levels=total[4], stranded_excess=stranded, tiled_steps=tiled,
                 rung_steps=per_rung)
    return flow_from_residual(net, rc), value, source_side, status, stats
