"""WBPR: workload-balanced lock-free push-relabel maximum flow, in bulk-synchronous array form.

Paper: C.-Y. Hsieh, P.-C. Lin, S.-Y. Kuo, "Engineering a workload-balanced
push-relabel algorithm for massive graphs on GPUs" (WBPR,
``shared/papers/wbpr-push-relabel-maxflow.txt``): Algorithm 1 (the lock-free
push-relabel of Hong and He-Hong), Algorithm 2 (the vertex-centric iteration
with an active vertex queue and a tile per active vertex) and the RCSR / BCSR
residual layouts.

State: the residual capacity ``rc`` of every residual arc (the paper's
``c_f``; a forward arc of input arc a holds cap[a] - f[a], its reverse f[a]),
the excess ``e`` and the height ``h`` of every vertex. ``n`` is the true
vertex count. One push-relabel step (Algorithm 1 lines 9-21 as Algorithm 2
organises them):

1. the active vertices (e > 0, h < n, not a terminal) are compacted into the
   active vertex queue (AVQ) by a prefix sum (:func:`jaxmatch._ops.compact`);
2. every queued vertex u finds its residual arc (rc > 0, not a self-loop) to
   the neighbour of minimum height, ties to the smallest arc position: the
   arcs of the queued vertices are laid end to end over one window of lanes
   (:func:`window`, :func:`jaxmatch._ops.expand`) and reduced per vertex by a
   segment argmin (the paper's tile reduction, with the tile size chosen per
   vertex by its degree instead of fixed at a warp). The window holds at
   least the longest row; when the active vertices' arcs do not all fit,
   the vertices past the window wait for the next step (any subset of the
   active vertices may act in a step of the generic algorithm);
3. if that neighbour v is lower, u pushes d = min(e(u), rc(u, v)): rc(u, v)
   -= d, rc(v, u) += d, e(u) -= d, e(v) += d by scatter-add; otherwise u
   relabels to h(v) + 1 (capped at n + 1).

The mapping of the lock-free races onto a synchronous step. Every decision of
a step reads the heights, excesses and residual capacities at the start of
the step (one snapshot), as every thread of Algorithm 1 reads values that
other threads may be changing. Then:

* Each active vertex pushes on at most one arc per step, and arcs (u, v) and
  (v, u) are never both pushed in one step (that would need h(u) > h(v) and
  h(v) > h(u)), so every residual arc receives at most one update and the
  AtomicSub / AtomicAdd of lines 15-18 become plain scatter-adds; pushes from
  several vertices into one vertex add up in the excess scatter-add.
* A vertex that pushes in a step also may receive pushes in it; its push
  amount was bounded by its snapshot excess, which only grew.
* The one race that could break the validity of the labels (h(u) <= h(v) + 1
  on every residual arc) is a vertex v that relabels while a neighbour u
  pushes into it: the push creates the residual arc (v, u) with h(u) =
  h(v) + 1, which v's relabel did not see. Hong's lock-free argument
  tolerates the stale relabel; here such a v relabels to
  min(h_min + 1, h(v) + 2) instead of h_min + 1, which is still >= h(v) + 1.
  With that rule the step equals the sequential trace "all pushes of the
  step (each admissible under the snapshot labels), then all relabels (each
  to a value <= the minimum residual neighbour + 1)", so the labels stay
  valid and every property of the generic push-relabel algorithm holds:
  heights are lower bounds on the residual distance to a sink, a vertex
  with h >= n cannot reach a sink, and the number of steps is finite.

Global relabel (the paper's heuristic of line 23, done on the device with no
host round trip): a backward level-synchronous BFS from the sinks over the
residual arcs gives every vertex its exact residual distance to a sink;
vertices that cannot reach a sink get h = n and stop being active (their
excess is *stranded*). It runs at step 0 and then every ``k * L`` steps, L
being the depth of the last BFS (G-PR's adaptive rule; the paper's fixed
``cycle = |V|`` is the case of a huge k).

Termination. The paper stops when e(s) + e(t) equals Excess_total minus the
stranded excess. Here the loop stops when the AVQ is empty, which is the same
condition: the excess not at a terminal is then all on vertices of height n,
which cannot reach the sink. At that point the preflow is maximum.

Second phase. The maximum preflow becomes a maximum *flow* by returning the
stranded excess to the sources with the same engine: targets = the sources
(height 0), the sinks fixed at height n, heights from a BFS towards the
sources. Every vertex holding excess can reach a source in the residual
graph (reverse the flow paths that brought its excess), and stranded
vertices cannot reach a sink, so this phase never changes the flow into the
sinks. The minimum cut's source side is the set of vertices that cannot
reach a sink in the residual graph after phase one; all arcs leaving it are
saturated and all arcs entering it are empty, so its capacity equals the
flow value.

Several sources and sinks: all sources start at height n with their
out-arcs saturated and all sinks are BFS roots at height 0. This is exactly
the super source / super sink construction of the paper's experiments (a
super source S with unbounded arcs to every source, a super sink T reached
from every sink), without materialising S and T.

Reverse arcs: the push needs the position of the reverse residual arc.
``reverse="index"`` reads the stored ``res_rev`` (one gather; the RCSR
``flow_idx`` of the paper, stored for BCSR too); ``reverse="search"`` finds
it in a BCSR network by a binary search in the head's row, sorted by (head,
direction, arc id), as the paper does to save the index's memory.

Loop structure (no branch inside the hot loop): an outer loop runs a global
relabel and then an inner loop of push-relabel steps until the next global
relabel is due or no vertex is active.

Costs: a push-relabel step is O(V + window) work; a global relabel
O(V + window) per BFS level (compacting the frontier), O(E_f) in all.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, compact, expand, mask_ids, segment_argmin, take

DEFAULT_K = 1.0
DEFAULT_LANES = 1 << 18
REVERSE = ("index", "search")


class PRState(NamedTuple):
    rc: jax.Array        # [2 * arc_cap] residual capacities
    excess: jax.Array    # [vertex_cap]
    height: jax.Array    # [vertex_cap] int32
    it: jax.Array        # push-relabel steps done
    next_gr: jax.Array   # step of the next global relabel
    n_gr: jax.Array      # global relabels done
    pushes: jax.Array
    relabels: jax.Array
    levels: jax.Array    # BFS levels run by all global relabels


class BFSState(NamedTuple):
    dist: jax.Array
    level: jax.Array
    done: jax.Array      # [vertex_cap] expanded already
    added: jax.Array


# --------------------------------------------------------------------------
# residual network


def residual_from_flow(net, flow):
    """Residual capacities [2 * arc_cap] of a flow given per input arc."""
    c = take(net.cap, net.res_arc, 0)
    f = take(flow, net.res_arc, 0)
    return jnp.where(net.res_forward, c - f, f)


def flow_from_residual(net, rc):
    """Flow per input arc [arc_cap]: the residual capacity of each arc's reverse entry."""
    rev = ~net.res_forward & (net.res_arc < net.arc_cap)
    return jnp.zeros(net.arc_cap, rc.dtype).at[mask_ids(net.res_arc, rev, net.arc_cap)].set(rc, mode="drop")


def excess_of_flow(net, flow):
    """Inflow minus outflow of every vertex [vertex_cap]."""
    inflow = jax.ops.segment_sum(flow, net.head, net.vertex_cap)
    outflow = jax.ops.segment_sum(flow, net.tail, net.vertex_cap)
    return inflow - outflow


def initial_preflow(net, is_source):
    """Saturate every arc out of a source (not into a source, not a self-loop)."""
    sat = take(is_source, net.tail, False) & ~take(is_source, net.head, False) & (net.tail != net.head)
    return jnp.where(sat, net.cap, 0)


def reverse_position(net, pos, search: bool):
    """Position of the reverse residual arc of each residual position ``pos`` (sentinel -> 2*arc_cap).

    ``search=False`` reads ``res_rev``; ``search=True`` (BCSR only) binary
    searches the row of the arc's head, whose entries are sorted by
    (head, reverse-flag, arc id), for the entry (tail, flag of pos, arc id).
    """
    size = 2 * net.arc_cap
    ok = (pos >= 0) & (pos < size)
    if not search:
        return jnp.where(ok, take(net.res_rev, pos, size), size)
    tail = take(net.res.src, pos, net.vertex_cap)
    head = take(net.res.indices, pos, net.vertex_cap)
    arc = take(net.res_arc, pos, net.arc_cap)
    want_flag = take(net.res_forward, pos, False).astype(jnp.int32)  # reverse flag of the partner
    lo = take(net.res.indptr, head, 0)
    hi = take(net.res.indptr, head + 1, 0)

    def bisect(_, c):
        lo, hi = c
        mid = (lo + hi) // 2
        k1 = take(net.res.indices, mid, INT_MAX)
        k2 = (~take(net.res_forward, mid, True)).astype(jnp.int32)
        k3 = take(net.res_arc, mid, INT_MAX)
        less = (k1 < tail) | ((k1 == tail) & ((k2 < want_flag) | ((k2 == want_flag) & (k3 < arc))))
        go = lo < hi
        return jnp.where(go & less, mid + 1, lo), jnp.where(go & ~less, mid, hi)

    steps = max(1, (2 * net.arc_cap).bit_length())
    lo, _ = lax.fori_loop(0, steps, bisect, (lo, hi))
    return jnp.where(ok, lo, size)


# --------------------------------------------------------------------------
# global relabel


def window(queue, count, indptr, width: int):
    """The arcs of the longest prefix of the queue whose rows fit ``width`` lanes, spread over the lanes.

    The rows of the queued vertices are laid end to end (:func:`jaxmatch._ops.expand`),
    so every lane does equal work whatever the degrees are: the array form of
    the paper's tiles. ``width`` is at least the largest row, so the first
    queued vertex always fits. Returns (slot, entry, valid [width], n_fit):
    lane p holds entry ``entry[p]`` of the row of queue slot ``slot[p]``, and
    slots ``0 .. n_fit-1`` are complete.
    """
    vc = queue.shape[0]
    ok = jnp.arange(vc) < count
    start = take(indptr, queue, 0)
    deg = jnp.where(ok, take(indptr, queue + 1, 0) - start, 0)
    ends = jnp.cumsum(deg, dtype=jnp.int32)
    n_fit = jnp.sum(ok & (ends <= width), dtype=jnp.int32)
    total = take(ends, n_fit - 1, 0)
    offsets = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.minimum(ends, total)])
    slot, e, valid = expand(offsets, start, jnp.int32(0), width)
    return slot, e, valid, n_fit


def residual_bfs(net, rc, roots, blocked, width: int, search: bool):
    """Residual distance of every vertex to the set ``roots``; INT_MAX if it cannot reach it.

    Backward level-synchronous BFS over residual arcs (rc > 0; self-loops
    never matter): the frontier (vertices at the current level not yet
    expanded, compacted) scans its rows in one window of ``width`` lanes; an
    entry y -> x whose reverse arc x -> y is residual gives an unlabelled x
    the next level. A frontier whose arcs do not fit one window takes more
    loop steps at the same level. ``blocked`` vertices are never labelled or
    passed through. O(V) per loop step for the compaction plus the window.
    Returns (dist [vertex_cap], number of levels).
    """
    vc = net.vertex_cap
    ids = jnp.arange(vc, dtype=jnp.int32)
    dist = jnp.where(roots, 0, jnp.where(blocked, -1, INT_MAX)).astype(jnp.int32)

    def step(s: BFSState) -> BFSState:
        frontier, count = compact((s.dist == s.level) & ~s.done, ids, vc)
        slot, e, valid, n_fit = window(frontier, count, net.res.indptr, width)
        x = take(net.res.indices, e, vc)
        back = take(rc, reverse_position(net, mask_ids(e, valid, 2 * net.arc_cap), search), 0)
        hit = valid & (back > 0) & (take(s.dist, x, -1) == INT_MAX)
        dist = s.dist.at[mask_ids(x, hit, vc)].set(s.level + 1, mode="drop")
        done = s.done.at[mask_ids(frontier, ids < n_fit, vc)].set(True, mode="drop")
        return BFSState(dist, jnp.where(n_fit == count, s.level + 1, s.level), done, count > 0)

    init = BFSState(dist, jnp.int32(0), jnp.zeros(vc, bool), jnp.bool_(True))
    s = lax.while_loop(lambda s: s.added & (s.level < vc), step, init)
    return jnp.where(s.dist < 0, INT_MAX, s.dist), s.level - 1


def global_relabel(net, s: PRState, targets, fixed, n, k: float, width: int, search: bool) -> PRState:
    """Exact heights: BFS distance to the targets, n where there is none, n at fixed vertices."""
    dist, levels = residual_bfs(net, s.rc, targets, fixed, width, search)
    height = jnp.where(fixed | (dist >= n), n, dist).astype(jnp.int32)
    gap = jnp.maximum(1, jnp.ceil(k * levels).astype(jnp.int32))
    return s._replace(height=height, next_gr=s.it + gap, n_gr=s.n_gr + 1, levels=s.levels + levels)


# --------------------------------------------------------------------------
# push-relabel step


def is_active(net, s: PRState, terminal, n):
    return (s.excess > 0) & (s.height < n) & ~terminal


def _relabel(s: PRState, queue, relabel, best, received, n):
    """Relabel the queued vertices marked ``relabel`` to min(best, n) + 1, at most h + 2 if they received a push."""
    h_u = take(s.height, queue, INT_MAX)
    new_h = jnp.minimum(best, n) + 1
    new_h = jnp.where(take(received, queue, False), jnp.minimum(new_h, h_u + 2), new_h)
    return s.height.at[mask_ids(queue, relabel, queue.shape[0])].set(new_h, mode="drop")


def push_relabel_step(net, s: PRState, terminal, n, width: int, search: bool) -> PRState:
    """One bulk-synchronous push-or-relabel of the active vertices (the paper's step, see the module docstring).

    The active vertices whose arcs fit the window act (all of them unless
    their arcs outnumber the lanes; the rest act in the next step, which the
    generic algorithm allows).
    """
    vc, size = net.vertex_cap, 2 * net.arc_cap
    ids = jnp.arange(vc, dtype=jnp.int32)
    queue, n_queued = compact(is_active(net, s, terminal, n), ids, vc)
    slot, e, valid, n_fit = window(queue, n_queued, net.res.indptr, width)
    w = take(net.res.indices, e, vc)
    usable = valid & (take(s.rc, e, 0) > 0) & (w != take(queue, slot, vc))
    key = jnp.where(usable, take(s.height, w, INT_MAX), INT_MAX)
    best, arc = segment_argmin(key, e, mask_ids(slot, usable, vc), vc)
    queued = ids < n_fit
    push = queued & (best < take(s.height, queue, INT_MAX))
    relabel = queued & ~push
    d = jnp.where(push, jnp.minimum(take(s.excess, queue, 0), take(s.rc, arc, 0)), 0).astype(s.rc.dtype)
    arc = mask_ids(arc, push, size)
    w = take(net.res.indices, arc, vc)
    rc = s.rc.at[arc].add(-d, mode="drop")
    rc = rc.at[reverse_position(net, arc, search)].add(d, mode="drop")
    excess = s.excess.at[mask_ids(queue, push, vc)].add(-d, mode="drop")
    excess = excess.at[w].add(d, mode="drop")
    received = jnp.zeros(vc, bool).at[w].set(True, mode="drop")
    height = _relabel(s, queue, relabel, best, received, n)
    return s._replace(rc=rc, excess=excess, height=height, it=s.it + 1,
                      pushes=s.pushes + jnp.sum(push, dtype=jnp.int32),
                      relabels=s.relabels + jnp.sum(relabel, dtype=jnp.int32))


def run_phase(net, rc, excess, targets, fixed, n, *, max_iters, k, width, search):
    """Push-relabel until no vertex is active (or max_iters steps); returns the final state.

    Outer loop: a global relabel, then push-relabel steps until the next one
    is due (no branch inside the step loop).
    """
    terminal = targets | fixed
    zero = jnp.int32(0)
    height = jnp.where(fixed, n, 0).astype(jnp.int32)
    s = PRState(rc, excess, height, zero, zero, zero, zero, zero, zero)

    def going(s: PRState):
        return jnp.any(is_active(net, s, terminal, n)) & (s.it < max_iters)

    def phase(s: PRState) -> PRState:
        s = global_relabel(net, s, targets, fixed, n, k, width, search)
        return lax.while_loop(lambda s: (s.it < s.next_gr) & going(s),
                              lambda s: push_relabel_step(net, s, terminal, n, width, search), s)

    return lax.while_loop(going, phase, s)


def _mask_of(ids, size):
    ids = jnp.ravel(ids).astype(jnp.int32)
    return jnp.zeros(size, bool).at[mask_ids(ids, (ids >= 0) & (ids < size), size)].set(True, mode="drop")


def max_flow_arrays(net, source, sink, *, max_iters, k=DEFAULT_K, width=None, search=False):
    """Both phases on the device.

    ``source`` and ``sink``: int32 ids (scalars or 1-D arrays; out-of-range
    ids are ignored). Returns (flow [arc_cap], value, source_side
    [vertex_cap], status, stats dict).
    """
    vc = net.vertex_cap
    width = 2 * net.arc_cap if width is None else int(width)
    n = net.n.astype(jnp.int32)
    real = jnp.arange(vc) < n
    is_source = _mask_of(source, vc) & real
    is_sink = _mask_of(sink, vc) & real & ~is_source

    # phase 1: maximum preflow towards the sinks
    f0 = initial_preflow(net, is_source)
    p1 = run_phase(net, residual_from_flow(net, f0), excess_of_flow(net, f0), is_sink, is_source, n,
                   max_iters=max_iters, k=k, width=width, search=search)
    active_left = jnp.any(is_active(net, p1, is_sink | is_source, n))
    dist, cut_levels = residual_bfs(net, p1.rc, is_sink, is_source, width, search)
    source_side = real & (dist == INT_MAX) & ~is_sink
    value = jnp.sum(jnp.where(is_sink, p1.excess, 0))

    # phase 2: return the stranded excess to the sources
    stranded = jnp.where(is_source | is_sink, 0, p1.excess)
    p2 = run_phase(net, p1.rc, stranded, is_source, is_sink, n,
                   max_iters=max_iters, k=k, width=width, search=search)
    excess_left = jnp.any(real & ~is_source & ~is_sink & (p2.excess != 0))
    status = jnp.where(active_left | excess_left, MAX_ITERS, CONVERGED).astype(jnp.int32)
    stats = dict(iterations=p1.it, return_iterations=p2.it, pushes=p1.pushes + p2.pushes,
                 relabels=p1.relabels + p2.relabels, global_relabels=p1.n_gr + p2.n_gr,
                 bfs_levels=p1.levels + p2.levels + cut_levels, stranded_excess=jnp.sum(stranded))
    return flow_from_residual(net, p2.rc), value, source_side, status, stats
