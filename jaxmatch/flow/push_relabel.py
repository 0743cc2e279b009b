"""WBPR: workload-balanced lock-free push-relabel maximum flow, in bulk-synchronous array form.

Paper: C.-Y. Hsieh, P.-C. Lin, S.-Y. Kuo, "Engineering a workload-balanced
push-relabel algorithm for massive graphs on GPUs" (WBPR,
``shared/papers/wbpr-push-relabel-maxflow.txt``): Algorithm 1 (the lock-free
push-relabel of Hong and He-Hong), Algorithm 2 (the vertex-centric iteration
with an active vertex queue and a tile per active vertex) and the RCSR / BCSR
residual layouts.

State: the residual capacity ``rc`` of every residual arc (the paper's
``c_f``; a forward arc of input arc a holds cap[a] - f[a], its reverse f[a]),
the excess ``e`` and the height ``h`` of every vertex, and the active vertex
queue (AVQ). ``n`` is the true vertex count. One push-relabel step (Algorithm
1 lines 9-21 as Algorithm 2 organises them):

1. the vertices of the AVQ (every active vertex: e > 0, h < n, not a
   terminal, is in it) spread their residual rows over the lanes of the
   step (:func:`_lanes`): the paper's tiles. While no queued row is longer
   than ``TILE`` arcs, each vertex gets a tile of ``TILE`` lanes, as the
   paper gives each a warp, and the per-vertex reductions run along the
   tiles; otherwise the rows are laid end to end
   (:func:`jaxmatch._ops.expand`), the tile size chosen per vertex by its
   degree, and when the queued vertices' arcs do not all fit the lanes
   (which hold at least the longest row), the vertices past them wait for
   the next step (any subset of the active vertices may act in a step of
   the generic algorithm);
2. every queued vertex u *discharges* once: it pushes on all its residual
   arcs to lower neighbours (h(v) < h(u), the lock-free rule of line 14), in
   arc order, as much as its excess covers (a prefix sum over its lanes: the
   first arcs are saturated, the arc where the excess runs out gets the
   rest), the forward arcs (those of input arcs) before the reverse
   arcs (:data:`PRIORITY`; two prefix sums in BCSR, one in RCSR, whose
   rows already hold the forward arcs first): excess moves on towards the
   sink before it cancels flow, which sends it back and forth between two
   vertices (BCSR, whose rows interleave the two kinds, took 1.3-2x the
   steps of RCSR on Washington RLG without it, and takes the same with
   it); rc(u, v) -= d, rc(v, u) += d, e(u) -= d, e(v) += d by
   scatter-add. If excess is left (all those arcs are saturated), u
   relabels in the same step to 1 + the minimum height over its remaining
   residual arcs (capped at n + 1): line 20, whose minimum the saturated
   arcs no longer take part in. Algorithm 1 pushes on one arc per visit;
   discharging all admissible arcs at once moves the same flow in fewer
   steps;
3. the next AVQ is built from the queue and the heads of this step's
   pushes only (no pass over all vertices): those still active, without
   repeats (a scatter-min of the candidate position per vertex into a
   scratch array that is reset where touched), compacted by a prefix sum.

Every array of a step has the size of the queue or of its lanes, not of the
graph: the step runs in the first rung of a ladder of (queue, lanes) sizes
that holds the queue (:func:`ladder`, ``lax.switch``), so the many steps
with few active vertices (most of them, on the DIMACS families) stay small,
and ``unroll`` steps run per ``while_loop`` iteration (masked no-ops once
done), which amortises the loop's fixed cost. On a GPU such a step costs its
kernel launches, so the number of steps is what counts.
With ``kernel`` (the default on the GPU) and rows of at most
``Config.push_max_degree`` arcs, the steps run instead as rounds of the
persistent kernel of :mod:`jaxmatch.kernels.push_flow`, many per launch:
the same discharge, with a grid barrier between the pushes and the
relabels in place of this step's single snapshot (its docstring gives the
argument).

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
  So the labels stay valid, every push is along an arc that is admissible
  in the lock-free sense, and the properties of generic push-relabel hold:
  heights are lower bounds on the residual distance to a sink, a vertex
  with h >= n cannot reach a sink, and the number of steps is finite.

Global relabel (the paper's heuristic of line 23, done on the device with no
host round trip): a backward BFS from the sinks over the residual arcs (level
1 by one pass over all arcs, so the sinks' long rows never enter the lanes;
then a frontier queue built like the AVQ, on the same ladder, so a level
costs O(frontier + its arcs); with ``kernel``, the default on the GPU, the
further levels run in the persistent Pallas kernel of
:mod:`jaxmatch.kernels.bfs_level` instead, up to ``Config.levels`` levels per launch), gives every vertex its residual
distance to a sink; vertices that cannot reach a sink get h = n and stop
being active (their excess is *stranded*). The BFS stops as soon as every vertex that was
active is labelled (vertices it did not reach then get max(h, L + 1), L the
lowest unexpanded level: a valid lower bound), or when the frontier is
empty. Frequency: the usual work-based rule (Goldberg's hi_pr, Baumstark et
al.'s synchronous push-relabel) with the GPU's fixed step cost in it: a push
step costs 1 + (arcs scanned) / ``STEP_LANES`` step units, a global relabel
``levels + (6 n + 2 m) / STEP_LANES``; the next global relabel runs when the
push steps since the last one cost ``k`` times as much as it did. ``k``
below 1 (``DEFAULT_K`` = 0.5) pays: between global relabels the labels
decay quickly (excess bounces between neighbours, a relabel of 1 or 2 a
step), while the BFS levels of a global relabel barely grow in number as
they get more frequent, since it stops at the farthest active vertex
(steps, BFS levels included, of ``k`` = 0.5 over those of ``k`` = 1:
0.76-0.96 on genrmf 2^12-2^15, 0.87-0.90 on road grids, but 1.17-1.29 on
Washington RLG; a rule counting only the share of the active vertices that
relabel, and global relabels stopped once 75-90% of the active vertices
are labelled, both took more steps on genrmf). Each
global relabel rebuilds the AVQ from all vertices (one compaction).

Termination. The paper stops when e(s) + e(t) equals Excess_total minus the
stranded excess. Here phase one stops when the AVQ is empty, which is the
same condition: the excess not at a terminal is then all on vertices of
height >= n, which cannot reach a sink. The preflow is then maximum, and the
*minimum cut* is read from the heights: with L the lowest height in [1, n)
that no vertex has, no residual arc leaves {v : h(v) > L} (it would need
h(u) <= h(v) + 1 <= L), which holds every source and every vertex with
excess and no sink, so it is a minimum cut's source side (a height histogram,
no BFS).

Second phase. The maximum preflow becomes a maximum *flow* by returning the
stranded excess to the sources with the same engine: targets = the sources
(height 0), the sinks fixed at height n, heights from a BFS towards the
sources. Every vertex holding excess can reach a source in the residual
graph (reverse the flow paths that brought its excess), and it lies on the
source side of the cut, which no residual arc leaves, so this phase never
changes the flow across the cut, into the sinks or out of the sources'
side.

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

Both phases run in one ``fori_loop``, so the phase's code is compiled once.

Costs: a push-relabel step is O(Q + W) work for the ladder rung (Q queue
slots, W lanes) that holds the queue; a global relabel O(V + E) (the first
level and the rebuilt AVQ) plus O(frontier + its arcs) per BFS level.
Measured: ``experiments/bench_flow.py``.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, compact, expand, take
from jaxmatch.status import Status
from jaxmatch.kernels.bfs_level import bfs_levels
from jaxmatch.kernels.push_flow import push_rounds

DEFAULT_K = 0.5
KERNEL_K = 0.25          # with the push kernel: genrmf18 1.57 s against 2.35 s at 0.5; rlg18, road20 within 5%
DEFAULT_LANES = 1 << 18
DEFAULT_UNROLL = 1         # push steps per loop iteration: 2 compiled 1.3-1.6x slower and ran 9-29% slower
                           # on the H100 once the BFS levels moved to the persistent kernel (RESULTS, session 10)
STEP_LANES = 1 << 18     # arcs a step scans for the cost of its fixed overhead (the work rule's unit)
ALPHA = 6                # the work rule's weight of a vertex against an arc
SMALLEST_QUEUE = 256     # ladder of queue sizes: 256, 2048, 16384, ... up to the vertex capacity
LADDER_FACTOR = 8
TILE = 32                # lanes per vertex of the tiled rungs (when no non-terminal row is longer)
TILED_SLOTS = 2048       # the largest tiled rung
ONE_RUNG = 4096          # capacities up to this many vertices: one rung, no unrolling (quick to compile)
REVERSE = ("index", "search")
PRIORITY = "forward"   # arcs pushed on first: "forward" (input arcs before reverse arcs) or "none" (arc order)


class PRState(NamedTuple):
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


class BFSState(NamedTuple):
    dist: jax.Array      # [vertex_cap] level, INT_MAX unreached, -1 blocked
    frontier: jax.Array  # [vertex_cap] its first `count` entries, in level order
    count: jax.Array
    arcs: jax.Array
    longest: jax.Array
    owner: jax.Array
    found: jax.Array     # vertices of interest labelled so far
    levels: jax.Array


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
    return jnp.zeros(net.arc_cap, rc.dtype).at[jnp.where(rev, net.res_arc, net.arc_cap)].set(rc, mode="drop")


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
# queues and lanes


class Rung(NamedTuple):
    """A size a step may run in: ``slots`` queue entries over ``lanes`` lanes, in tiles of ``tile`` lanes or not."""

    slots: int
    lanes: int
    tile: int   # lanes per queued vertex (every row fits), or 0: rows laid end to end (load-balanced)


def ladder(vertex_cap: int, arc_cap: int, width: int) -> tuple[Rung, ...]:
    """The rungs a step may run in, in the order they are tried.

    Tiled rungs of 256 and 2048 slots, each slot a tile of ``TILE`` lanes:
    no load-balancing pass, per-vertex reductions along the tile; usable
    while no queued row is longer than a tile. Then load-balanced rungs
    (rows laid end to end, :func:`_lanes`) of 256, 2048, 16384, ... slots,
    each with the slots times twice the mean residual degree of the
    capacities (a power of two) lanes, at most ``width``, and a last one of
    the whole capacity with ``width`` lanes (at least the longest row, so its
    first vertex always fits). Capacities of at most ``ONE_RUNG`` vertices
    get that last rung only (small problems, quick to compile).
    """
    if vertex_cap <= ONE_RUNG:
        return (Rung(vertex_cap, width, 0),)
    ratio = 2 * (1 << max(0, -(-2 * arc_cap // vertex_cap) - 1).bit_length())
    tiled, rest, q = [], [], SMALLEST_QUEUE
    while q < vertex_cap:
        if q <= TILED_SLOTS:
            tiled.append(Rung(q, q * TILE, TILE))
        rest.append(Rung(q, min(width, max(q * ratio, 1024)), 0))
        q *= LADDER_FACTOR
    return tuple(tiled) + tuple(rest) + (Rung(vertex_cap, width, 0),)


def _rung(rungs, count, arcs, longest, go):
    """Branch index of the first rung that holds ``count`` vertices with ``arcs`` arcs, the longest
    ``longest`` (0: do nothing)."""
    fits = [(count <= r.slots) & ((longest <= r.tile) if r.tile else (arcs <= r.lanes)) for r in rungs[:-1]]
    first = jnp.argmax(jnp.stack(fits + [jnp.bool_(True)])).astype(jnp.int32)
    return jnp.where(go, first + 1, 0)


class Lanes(NamedTuple):
    """The residual rows of the queued vertices spread over the lanes of a rung."""

    slot: jax.Array    # [lanes] queue slot of each lane
    entry: jax.Array   # [lanes] residual position (2 * arc_cap where not valid)
    valid: jax.Array   # [lanes]
    fit: jax.Array     # [slots] the slot's whole row is on the lanes (a prefix of the queue)
    first: jax.Array   # [lanes] first lane of the lane's slot
    total: jax.Array   # lanes in use


def _lanes(u, ok, indptr, size: int, rung: Rung) -> Lanes:
    """Rows of the queue entries ``u`` (where ``ok``) over the lanes of ``rung``.

    Tiled: slot i owns lanes [i * tile, (i + 1) * tile). Otherwise the rows
    are laid end to end (:func:`jaxmatch._ops.expand`), so every lane does
    equal work whatever the degrees are: the array form of the paper's tiles,
    with the tile size chosen per vertex by its degree; the slots whose rows
    do not fit wait.
    """
    slots, lanes, tile = rung
    start = take(indptr, u, 0)
    deg = jnp.where(ok, take(indptr, u + 1, 0) - start, 0)
    if tile:
        j = jnp.arange(tile, dtype=jnp.int32)
        valid = (j[None, :] < deg[:, None]).reshape(-1)
        entry = jnp.where(valid, (start[:, None] + j[None, :]).reshape(-1), size)
        slot = jnp.arange(lanes, dtype=jnp.int32) // tile
        return Lanes(slot, entry, valid, ok, slot * tile, jnp.sum(deg))
    ends = jnp.cumsum(deg, dtype=jnp.int32)
    fit = ok & (ends <= lanes)
    total = jnp.max(jnp.where(fit, ends, 0), initial=0)
    offsets = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.minimum(ends, total)])
    slot, entry, valid = expand(offsets, start, jnp.int32(0), lanes)
    return Lanes(slot, jnp.where(valid, entry, size), valid, fit, offsets[slot], total)


def _slot_min(values, ln: Lanes, rung: Rung):
    """Per slot, the minimum of ``values`` over its valid lanes (INT_MAX for none); values must be int32."""
    values = jnp.where(ln.valid, values, INT_MAX)
    if rung.tile:
        return jnp.min(values.reshape(rung.slots, rung.tile), axis=1)
    return jax.ops.segment_min(values, jnp.where(ln.valid, ln.slot, rung.slots), rung.slots)


def _slot_sum(x, ln: Lanes, rung: Rung):
    """Per slot, the sum of ``x`` over its lanes (zero on lanes that are not valid)."""
    if rung.tile:
        return jnp.sum(x.reshape(rung.slots, rung.tile), axis=1, dtype=x.dtype)
    return jax.ops.segment_sum(x, jnp.where(ln.valid, ln.slot, rung.slots), rung.slots)


def _slot_prefix(x, ln: Lanes, rung: Rung):
    """Per slot, the inclusive prefix sum of ``x`` over its lanes (unsigned, modulo 2**bits)."""
    if rung.tile:
        return jnp.cumsum(x.reshape(rung.slots, rung.tile), axis=1, dtype=x.dtype).reshape(-1)
    incl = jnp.cumsum(x, dtype=x.dtype)
    return incl - take(incl - x, ln.first, 0).astype(x.dtype)


def _requeue(buf, owner, cand, alive, indptr):
    """Compact the ``alive`` candidates, first occurrence of each vertex only, into the queue buffer.

    Returns (buf, count, arcs of the kept vertices, the longest row, owner, keep). ``owner`` is
    a scratch array (INT_MAX everywhere) that is reset where touched.
    """
    vc = buf.shape[0]
    idx = jnp.arange(cand.shape[0], dtype=jnp.int32)
    target = jnp.where(alive, cand, vc)
    owner = owner.at[target].min(idx, mode="drop")
    keep = alive & (take(owner, cand, -1) == idx)
    owner = owner.at[target].set(INT_MAX, mode="drop")
    new, count = compact(keep, cand, vc)
    m = min(new.shape[0], vc)
    deg = take(indptr, cand + 1, 0) - take(indptr, cand, 0)
    deg = jnp.where(keep, deg, 0)
    return buf.at[:m].set(new[:m]), count, jnp.sum(deg, dtype=jnp.int32), jnp.max(deg), owner, keep


# --------------------------------------------------------------------------
# global relabel


def _bfs_step(net, rc, counted, b: BFSState, *, rung: Rung, search: bool) -> BFSState:
    """One BFS step: the first frontier vertices whose rows fit the lanes label their unlabelled in-neighbours."""
    vc, size = net.vertex_cap, 2 * net.arc_cap
    y = jnp.where(jnp.arange(rung.slots) < b.count, b.frontier[:rung.slots], vc)
    ok = y < vc
    ln = _lanes(y, ok, net.res.indptr, size, rung)
    x = take(net.res.indices, ln.entry, vc)
    back = take(rc, reverse_position(net, ln.entry, search), 0) > 0   # x -> y is residual
    level = take(b.dist, y, INT_MAX)[ln.slot] + 1
    hit = ln.valid & back & (take(b.dist, x, -1) > level)
    x = jnp.where(hit, x, vc)
    dist = b.dist.at[x].min(level, mode="drop")
    cand = jnp.concatenate([jnp.where(ok & ~ln.fit, y, vc), x])
    frontier, count, arcs, longest, owner, keep = _requeue(b.frontier, b.owner, cand, cand < vc, net.res.indptr)
    new = keep & (jnp.arange(cand.shape[0]) >= rung.slots) & take(counted, cand, False)
    return BFSState(dist, frontier, count, arcs, longest, owner, b.found + jnp.sum(new, dtype=jnp.int32),
                    b.levels + 1)


def residual_bfs(net, rc, roots, blocked, counted, rungs, *, search: bool, unroll: int, early: bool, owner,
                 kernel=None, interpret=False):
    """Residual distance to the set ``roots`` by a level-synchronous BFS over residual arcs (backwards).

    Level 1 is found by one pass over all residual arcs (so the roots' rows,
    which can be long, never enter the lanes), the next levels from a
    frontier queue. ``blocked`` vertices are never labelled or passed
    through. With ``early``, the BFS stops once every ``counted`` vertex is
    labelled. With ``kernel`` (a :class:`jaxmatch.kernels.bfs_level.Config`;
    the stored reverse index only), the further levels run in that
    persistent kernel (many levels per launch, a grid barrier between them), with ``interpret`` in Pallas's interpreter. Returns (dist
    [vertex_cap]: INT_MAX where not labelled, -1 where blocked; the lowest unexpanded level, or -1 when the frontier ran
    empty; the number of BFS levels; the owner scratch; whether a kernel launch stalled).
    """
    vc = net.vertex_cap
    ids = jnp.arange(vc, dtype=jnp.int32)
    deg = net.res.indptr[1:] - net.res.indptr[:-1]
    dist = jnp.where(roots, 0, jnp.where(blocked, -1, INT_MAX)).astype(jnp.int32)
    x = net.res.src
    one = (rc > 0) & take(roots, net.res.indices, False) & (take(dist, x, -1) == INT_MAX)
    dist = dist.at[jnp.where(one, x, vc)].set(1, mode="drop")
    first = dist == 1
    frontier, count = compact(first, ids, vc)
    want = jnp.sum(counted & ~roots, dtype=jnp.int32)
    b = BFSState(dist, frontier, count, jnp.sum(jnp.where(first, deg, 0), dtype=jnp.int32),
                 jnp.max(jnp.where(first, deg, 0)), owner, jnp.sum(first & counted, dtype=jnp.int32), jnp.int32(1))
    steps = [lambda b: b] + [partial(_bfs_step, net, rc, counted, rung=r, search=search) for r in rungs]

    def going(b: BFSState):
        go = b.count > 0
        return go & (b.found < want) if early else go

    def body(b: BFSState) -> BFSState:
        for _ in range(unroll):
            b = lax.switch(_rung(rungs, b.count, b.arcs, b.longest, going(b)), steps, b)
        return b

    if kernel is not None and not search:   # many levels per launch of the persistent kernel
        wanted = counted.astype(jnp.int32)

        def launch(c):
            b, buf, side, stalled = c
            dist, buf, side, count, found, done, halt = bfs_levels(
                buf, b.count, b.levels + 1, b.dist, net.res.indptr, net.res.indices, net.res_rev, rc, wanted,
                side=side, want=want - b.found if early else INT_MAX, cfg=kernel, interpret=interpret)
            return (b._replace(dist=dist, frontier=lax.dynamic_slice(buf, (side * vc,), (vc,)), count=count,
                               found=b.found + found, levels=b.levels + done), buf, side, stalled | halt)

        buf = jnp.concatenate([b.frontier, jnp.full(vc, vc, jnp.int32)])
        b, _, _, stalled = lax.while_loop(lambda c: going(c[0]), launch, (b, buf, jnp.int32(0), jnp.bool_(False)))
    else:
        b, stalled = lax.while_loop(going, body, b), jnp.bool_(False)
    lowest = jnp.where(b.count > 0, take(b.dist, b.frontier[0], INT_MAX), -1)
    return b.dist, lowest, b.levels, b.owner, stalled


def global_relabel(net, s: PRState, targets, fixed, terminal, n, k: float, rungs, *, search, unroll, early,
                   kernel=None, interpret=False):
    """Heights from a BFS to the targets (see the module docstring), and a rebuilt AVQ."""
    counted = (s.excess > 0) & (s.height < n) & ~terminal
    dist, lowest, levels, owner, stalled = residual_bfs(net, s.rc, targets, fixed, counted, rungs, search=search,
                                               unroll=unroll, early=early, owner=s.owner, kernel=kernel,
                                               interpret=interpret)
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
    rc = s.rc.at[jnp.concatenate([pos, reverse_position(net, pos, search)])].add(
        jnp.concatenate([-d, d]), mode="drop")
    w = jnp.where(moved, w, vc)
    excess = s.excess.at[jnp.concatenate([jnp.where(moved, tail, vc), w])].add(jnp.concatenate([-d, d]),
                                                                              mode="drop")
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
              interpret=False):
    """Push-relabel towards ``targets`` until no vertex is active (or max_iters steps); returns the final state.

    Each loop iteration runs a global relabel if one is due (the first
    iteration always does), then ``unroll`` push-relabel steps (no-ops once
    none is active or a global relabel is due), or, when :func:`push_kernel`
    and no non-terminal's residual row is longer than
    ``kernel.push_max_degree``, one launch of the push kernel (rounds until
    the work rule calls for a global relabel).
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
        return lax.cond(going(s) & (s.work >= s.budget), lambda s: relabel(s), lambda s: s, s)

    steps = [lambda s: s] + [partial(push_relabel_step, net, terminal, n, rung=r, search=search) for r in rungs]

    def step_body(s: PRState) -> PRState:
        s = relabel_if_due(s)
        for _ in range(unroll):
            r = _rung(rungs, s.count, s.arcs, s.longest, going(s) & (s.work < s.budget))
            s = lax.switch(r, steps, s)
            s = s._replace(rung_steps=s.rung_steps.at[jnp.where(r > 0, r - 1, len(rungs))].add(1, mode="drop"))
        return s

    if push_kernel(kernel, rc, search):   # the push-relabel rounds in the persistent kernel, many per launch
        fwd, term = net.res_forward.astype(jnp.int32), terminal.astype(jnp.int32)
        deg = net.res.indptr[1:] - net.res.indptr[:-1]
        # a long row is walked by one program in the kernel, load-balanced over all lanes by the XLA steps
        short = jnp.max(jnp.where(terminal, 0, deg)) <= kernel.push_max_degree

        def launch(s: PRState) -> PRState:
            o = push_rounds(jnp.concatenate([s.queue, jnp.full(vc, vc, jnp.int32)]), s.count, s.rc, s.excess,
                            s.height, s.owner, net.res.indptr, net.res.indices, net.res_rev, fwd, term, n=n,
                            round_id=s.it + 1, room=s.budget - s.work,
                            max_rounds=jnp.minimum(kernel.rounds, max_iters - s.it), cfg=kernel, interpret=interpret)
            return s._replace(rc=o.rc, excess=o.excess, height=o.height, owner=o.stamp, count=o.count,
                              queue=lax.dynamic_slice(o.buf, (o.side * vc,), (vc,)), it=s.it + o.rounds,
                              work=s.work + o.work, pushes=s.pushes + o.pushes, relabels=s.relabels + o.relabels,
                              stalled=s.stalled | o.stalled)

        def kernel_body(s: PRState) -> PRState:
            s = relabel_if_due(s)
            return lax.cond(going(s) & (s.work < s.budget), launch, lambda s: s, s)

        def body(s: PRState) -> PRState:   # one of the two for the whole phase (`short` is fixed)
            return lax.cond(short, kernel_body, step_body, s)
    else:
        body = step_body

    return lax.while_loop(going, body, s)


def push_kernel(kernel, rc, search: bool) -> bool:
    """Whether the push-relabel rounds run in :mod:`jaxmatch.kernels.push_flow`: a kernel config that
    asks for it, the stored reverse index, and int32 capacities (the kernel's atomics)."""
    return kernel is not None and kernel.push and not search and rc.dtype == jnp.int32


def _mask_of(ids, size):
    ids = jnp.ravel(ids).astype(jnp.int32)
    return jnp.zeros(size, bool).at[jnp.where((ids >= 0) & (ids < size), ids, size)].set(True, mode="drop")


def histogram(height, n):
    """Number of real vertices at each height below n [vertex_cap + 2] (heights >= n in the last entry)."""
    vc = height.shape[0]
    low = (jnp.arange(vc) < n) & (height < n)
    return jax.ops.segment_sum(low.astype(jnp.int32), jnp.where(low, height, vc + 1), vc + 2)


def lowest_gap(hist, n):
    """The lowest height in [1, n) that no vertex has (n if none)."""
    levels = jnp.arange(hist.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where((hist == 0) & (levels >= 1) & (levels < n), levels, n))


def gap_cut(height, real, n):
    """Source side {v : h(v) > L}, L the lowest height in [1, n) that no real vertex has (see the docstring)."""
    return real & (height > lowest_gap(histogram(height, n), n))


def max_flow_arrays(net, source, sink, *, max_iters, k=DEFAULT_K, width=None, search=False, rungs=None,
                    unroll=None, early=True, kernel=None, interpret=False):
    """Both phases on the device.

    ``source`` and ``sink``: int32 ids (scalars or 1-D arrays; out-of-range
    ids are ignored). ``width``: lanes of the last rung (at least the longest
    row; default all residual arcs). ``rungs``: the step sizes (default
    :func:`ladder`; the last must hold the whole capacity with at least the
    longest row of a non-terminal vertex as lanes). ``unroll``:
    push-relabel steps per loop iteration (default ``DEFAULT_UNROLL``). ``early``: global
    relabels stop when every active vertex is labelled. ``kernel``: a
    :class:`jaxmatch.kernels.bfs_level.Config` to run the global relabels'
    BFS levels in that kernel (``interpret``: in Pallas's interpreter).
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
                interpret=interpret)

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
        0, 2, phase, (init, jnp.zeros((), f0.dtype)))
    total = counts.sum(axis=0)
    tiled = sum(per_rung[i] for i, r in enumerate(rungs) if r.tile) if any(r.tile for r in rungs) else jnp.int32(0)
    stats = dict(iterations=counts[0, 0], return_iterations=counts[1, 0], pushes=total[1], relabels=total[2],
                 global_relabels=total[3], bfs_levels=total[4], stranded_excess=stranded, tiled_steps=tiled,
                 rung_steps=per_rung)
    return flow_from_residual(net, rc), value, source_side, status, stats
