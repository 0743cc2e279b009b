"""Suitor: half-approximate maximum weight matching by proposals, in array form.

Paper I of the thesis in ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``
(M. Naim, F. Manne, M. Halappanavar, A. Tumeo, J. Langguth, "Optimizing
approximate weighted matching on Nvidia Kepler K40"), Algorithms 3-4, after
F. Manne and M. Halappanavar's Suitor algorithm; Paper IV of the same thesis
shows that Suitor is McVitie-Wilson on a weighted graph and that its answer is
the sequential *greedy* matching.

The edge order (shared by every algorithm of :mod:`jaxmatch.weighted`, the
numpy references in :mod:`jaxmatch.weighted.greedy` and the certificate in
:mod:`jaxmatch.certify`): edge {u, v} comes before edge {x, y} when

    w(u, v) > w(x, y), or the weights are equal and
    (min(u, v), max(u, v)) < (min(x, y), max(x, y)) lexicographically.

Heavier first; among equal weights the smaller pair of vertex ids first. The
order is strict and total, so the greedy matching (scan the edges in this
order, keep an edge when both ends are free) is unique. Entries that are not
edges for matching are ignored: self-loops (a loop can never be matched),
zero-weight edges (dropped, as the paper does) and padding.

Array form. :func:`edge_order` sorts the stored entries once by this order
and gives every entry the integer *rank* of its edge (0 = first; both stored
copies of an edge get the same rank; ignored entries get ``INT_MAX``). From
then on the algorithms compare int32 ranks only, and a segment minimum over
ranks is a segment maximum over (weight, id) keys without packing floats.
That is the ``sorted_adjacency=True`` modes' and b-Suitor's form; the
default modes of Suitor and Locally-Dominant need no ranks: at one vertex
the order compares the other end points only, so they compare the weights'
bits and then the ids (:mod:`jaxmatch.weighted.sharded`).

Suitor state: ``offer[v]`` is the rank of the best proposal v holds
(``INT_MAX`` for none) and ``suitor[v]`` the proposer. A vertex u whose
proposal is not held proposes to its first neighbour v in the order with
``rank(u, v) < offer[v]``; v keeps the best proposal (segment minimum of the
ranks), the proposer it displaces proposes again. Offers only improve, so an
edge that a vertex could not use, lost, or was displaced from is never usable
by it again: that is what lets a per-vertex pointer replace the rescan.

Two ways to find the next proposal (same answer, tested):

* ``sorted_adjacency=False`` (the default; the rounds of
  :mod:`jaxmatch.weighted.sharded` on one device, no ranks): every round, all
  vertices that need a partner propose at once, each to its heaviest
  neighbour (smallest id among equal weights) whose held offer it beats, by a
  segment maximum of the weights' bits; round one over all entries, later
  rounds over the proposers' rows (the dense form of Algorithm 3).
* ``sorted_adjacency=True`` (the paper's speed-up): the neighbour lists are
  sorted by rank once, and each vertex keeps a pointer into its list. The
  vertices that need a partner wait in a ring queue (the "unsuccessful
  vertices" that Algorithm 4 gathers by prefix sums); a round takes up to
  ``batch`` of them and examines, for each, a window of entries after its
  pointer (the window doubles after a miss, so a vertex that must skip many
  neighbours needs O(log deg) rounds), all windows spread over ``lanes``
  load-balanced lanes (:func:`jaxmatch._ops.expand`). Work per round is
  O(batch + lanes), independent of |E|; total pointer movement is O(|E|).

Every round is a set of proposals that some sequential run of Suitor could
make in some order, so the result is the greedy matching (Paper IV); the loop
is bounded by ``max_iters`` rounds.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import (CONVERGED, INT_MAX, MAX_ITERS, compact, expand, mask_ids, offsets, prefix,
                           take)

INITIAL_BUDGET = 2   # first window length after a proposal (entries)


# --------------------------------------------------------------------------
# the shared edge order


def valid_entries(g) -> jax.Array:
    """[entry_cap] bool: stored entries that are edges for matching (no loop, weight > 0)."""
    k = jnp.arange(g.entry_cap, dtype=jnp.int32)
    return (k < g.n_entries) & (g.adj.src != g.adj.indices) & (g.adj.weights > 0)


class EdgeOrder(NamedTuple):
    """The stored entries in the edge order, and the rank of every entry."""

    rank: jax.Array    # [entry_cap] rank of each entry's edge, INT_MAX for ignored entries
    perm: jax.Array    # [2 * (entry_cap // 2)] valid entries by rank, the two copies of an edge
                       # adjacent (2r: the copy with src < dst, 2r + 1 its twin); entry_cap after
    valid: jax.Array   # [entry_cap] entries that are edges for matching


def _weight_key(w, valid):
    """Integer sort key, increasing as the weight decreases; the maximum for ignored entries.

    For positive IEEE floats the bit pattern read as a signed integer is
    monotone in the value, so ``bits(largest finite) - bits(w)`` orders
    heavier first, exactly and without packing.
    """
    itype = jnp.int64 if w.dtype.itemsize == 8 else jnp.int32
    bits = lax.bitcast_convert_type(w, itype)
    top = lax.bitcast_convert_type(jnp.array(jnp.finfo(w.dtype).max, w.dtype), itype)
    return jnp.where(valid, top - bits, jnp.iinfo(itype).max)


def edge_order(g) -> EdgeOrder:
    """Sort the edges by the edge order (weight descending, then (min id, max id)) and rank them.

    Two stable single-key sorts (radix sorts on a GPU, where a multi-key
    comparator sort is several times slower):

    1. ``twin``: the entries stably sorted by target. The CSR holds the
       entries in (source, target) order, so the k-th entry in (target,
       source) order is the reverse of the k-th entry: the twin of every
       entry, for one sort.
    2. The copies with source < target, compacted in CSR order (which is
       (min id, max id) order), stably sorted by weight: their positions are
       the ranks; each twin gets its copy's rank.

    Relies on the :class:`~jaxmatch.graph.Graph` invariants (entries sorted
    by (source, target), both copies of an edge with one weight). Ranks of
    the m valid edges are exactly 0 .. m-1.
    """
    E, H = g.entry_cap, g.entry_cap // 2
    src, dst = g.adj.src, g.adj.indices
    valid = valid_entries(g)
    twin = jnp.argsort(dst, stable=True).astype(jnp.int32)
    k = jnp.arange(E, dtype=jnp.int32)
    canon = valid & (src < dst)
    at = jnp.where(canon, prefix(canon, dtype=jnp.int32) - 1, H)
    first = jnp.full(H, E, jnp.int32).at[at].set(k, mode="drop")       # (lo, hi) order
    key = _weight_key(take(g.adj.weights, first, 0), first < E)
    first = first[jnp.argsort(key, stable=True)]                      # rank order
    second = take(twin, first, E)
    r = jnp.arange(H, dtype=jnp.int32)
    rank = jnp.full(E, INT_MAX, jnp.int32).at[first].set(r, mode="drop").at[second].set(r, mode="drop")
    perm = jnp.stack([first, second], axis=1).reshape(-1)
    return EdgeOrder(rank, perm, valid)


def edge_ranks(g) -> jax.Array:
    """[entry_cap] int32: rank of each stored entry's edge in the edge order, INT_MAX if ignored."""
    return edge_order(g).rank


def rank_table_size(g) -> int:
    """Length of arrays indexed by rank (ranks are < entry_cap // 2 + 1)."""
    return g.entry_cap // 2 + 1


def rank_endpoints(g, rank) -> jax.Array:
    """[entry_cap // 2 + 1] int32: ``lo + hi`` of the edge of each rank (2 * vertex_cap unused).

    The other end of the edge of rank r seen from vertex v is ``ends[r] - v``.
    """
    ends = g.adj.src + g.adj.indices
    return jnp.full(rank_table_size(g), 2 * g.vertex_cap, jnp.int32).at[rank].set(ends, mode="drop")


class SortedAdjacency(NamedTuple):
    """Neighbour lists sorted by rank: row v is ``[start[v], end[v])`` (valid entries only)."""

    nbr: jax.Array     # [2 * (entry_cap // 2)] neighbour of each entry, rows sorted by rank
    rank: jax.Array    # [2 * (entry_cap // 2)] rank of each entry (INT_MAX after the last row)
    start: jax.Array   # [vertex_cap]
    end: jax.Array     # [vertex_cap]


def sorted_adjacency(g, order: EdgeOrder) -> SortedAdjacency:
    """Every neighbour list sorted by rank: one stable sort by source of the rank-ordered entries.

    Only valid entries are kept, so row v is ``[start[v], end[v])`` with
    ``start`` the prefix sum of the valid degrees (not ``adj.indptr``).
    """
    V = g.vertex_cap
    src = take(g.adj.src, order.perm, V)
    by_src = jnp.argsort(src, stable=True).astype(jnp.int32)      # positions in rank order
    entry = order.perm[by_src]
    nbr = take(g.adj.indices, entry, V)
    rank = jnp.where(entry < g.entry_cap, by_src // 2, INT_MAX)
    count = jax.ops.segment_sum(order.valid.astype(jnp.int32), g.adj.src, V)
    end = prefix(count, dtype=jnp.int32)
    return SortedAdjacency(nbr, rank, end - count, end)


# --------------------------------------------------------------------------
# pointer scan over sorted neighbour lists (shared with LD and b-Suitor)


class ScanResult(NamedTuple):
    found: jax.Array     # [K] an accepting entry was found
    entry: jax.Array     # [K] its position in the sorted adjacency (entry_cap if none)
    ptr: jax.Array       # [K] new pointer: past the found entry, or past the examined window
    budget: jax.Array    # [K] next window length
    more: jax.Array      # [K] entries are left after the new pointer
    scanned: jax.Array   # () entries examined


def _exclusive_sum(w, cap: int, saturate: bool | None = None):
    """Exclusive prefix sum of non-negative int32 ``w``, each value ``min(sum, cap)`` (never overflows).

    A plain cumsum where ``len(w) * cap`` fits int32; otherwise a scan with
    the associative operator ``min(a + b, cap)``.
    """
    w = jnp.minimum(w, cap)
    if saturate is None:
        saturate = w.shape[0] * cap >= 2**31 - 1
    inc = (lax.associative_scan(lambda a, b: jnp.minimum(a + b, cap), w) if saturate
           else prefix(w, dtype=jnp.int32))
    return jnp.concatenate([jnp.zeros(1, inc.dtype), inc[:-1]])


def scan(adj: SortedAdjacency, ids, live, ptr, budget, lanes: int,
         accepts: Callable[[jax.Array, jax.Array], jax.Array]) -> ScanResult:
    """For each slot, the first entry at or after its pointer that ``accepts(rank, nbr)``.

    ``ids`` [K] are vertex ids (slots with ``live`` False are ignored),
    ``ptr``/``budget`` [K] their pointers and window lengths. Slot k examines
    ``min(budget, entries left)`` entries; the windows of all slots share
    ``lanes`` lanes in slot order, and a slot that gets fewer lanes than its
    window (or none) just examines less. A slot with no accepting entry in
    its window moves its pointer past the window and doubles its budget.
    """
    K = ids.shape[0]
    end = take(adj.end, ids, 0)
    w = jnp.where(live, jnp.clip(jnp.minimum(budget, end - ptr), 0, lanes), 0)
    before = _exclusive_sum(w, lanes)
    got = jnp.clip(lanes - before, 0, w)
    bounds = offsets(got)
    slot, e, ok = expand(bounds, ptr, jnp.int32(0), lanes)
    e = jnp.where(ok, e, adj.nbr.shape[0])
    hit = ok & accepts(take(adj.rank, e, INT_MAX), take(adj.nbr, e, adj.end.shape[0]))
    first = jax.ops.segment_min(jnp.where(hit, e, INT_MAX), mask_ids(slot, hit, K), K)
    found = live & (first < INT_MAX)
    new_ptr = jnp.where(found, first + 1, ptr + got)
    grow = ~found & (got == w) & (w > 0)
    new_budget = jnp.where(found, INITIAL_BUDGET,
                           jnp.where(grow, jnp.minimum(2 * budget, lanes), budget))
    entry = jnp.where(found, first, adj.nbr.shape[0])
    return ScanResult(found, entry, new_ptr, new_budget, new_ptr < end, bounds[-1])


# --------------------------------------------------------------------------
# ring queue of vertices that need to propose (shared with b-Suitor)


def pop(queue, head, size, batch: int):
    """Up to ``batch`` ids from the front of the ring queue: (ids with sentinel, live, count)."""
    cap = queue.shape[0]
    i = jnp.arange(batch, dtype=jnp.int32)
    live = i < size
    at = head + i
    at = jnp.where(at >= cap, at - cap, at)
    return jnp.where(live, queue[jnp.where(live, at, 0)], cap), live, jnp.minimum(size, batch)


def push(queue, head, size, popped, values):
    """Append the non-sentinel ``values`` (in order) after removing ``popped`` from the front."""
    cap = queue.shape[0]
    keep = values < cap
    pos = prefix(keep, dtype=jnp.int32) - 1
    at = head + size + pos
    at = jnp.where(at >= cap, at - cap, at)
    at = jnp.where(at >= cap, at - cap, at)
    queue = queue.at[jnp.where(keep, at, cap)].set(values, mode="drop")
    head = head + popped
    head = jnp.where(head >= cap, head - cap, head)
    return queue, head, size - popped + jnp.sum(keep, dtype=jnp.int32)


def initial_queue(g, live):
    """Ring queue holding the vertices with ``live`` True, in id order."""
    ids = jnp.arange(g.vertex_cap, dtype=jnp.int32)
    queue, count = compact(live & (ids < g.n), ids, g.vertex_cap)
    return queue, jnp.int32(0), count


# --------------------------------------------------------------------------
# Suitor


class SuitorState(NamedTuple):
    suitor: jax.Array     # [V] proposer whose proposal v holds, -1 for none
    offer: jax.Array      # [V] rank of that proposal, INT_MAX for none
    ptr: jax.Array        # [V] sorted mode: next entry to examine in v's row
    budget: jax.Array     # [V] sorted mode: next window length
    queue: jax.Array      # [V] sorted mode: ring queue of vertices that must propose
    head: jax.Array
    size: jax.Array
    rounds: jax.Array
    proposals: jax.Array
    scanned: jax.Array


def _resolve(s: SuitorState, ids, found, tgt, r):
    """Apply the proposals ids -> tgt (rank r): each target keeps its best; returns (state, win, old)."""
    V = s.suitor.shape[0]
    tgt = mask_ids(tgt, found, V)
    offer = s.offer.at[tgt].min(r, mode="drop")
    win = found & (take(offer, tgt, -1) == r)
    old = take(s.suitor, tgt, -1)
    suitor = s.suitor.at[mask_ids(tgt, win, V)].set(ids, mode="drop")
    return s._replace(suitor=suitor, offer=offer), win, jnp.where(win, old, -1)


def sorted_step(g, adj: SortedAdjacency, s: SuitorState, batch: int, lanes: int) -> SuitorState:
    """One round: up to ``batch`` queued vertices advance their pointers and propose."""
    V = g.vertex_cap
    ids, live, popped = pop(s.queue, s.head, s.size, batch)
    ptr, budget = take(s.ptr, ids, 0), take(s.budget, ids, INITIAL_BUDGET)
    sc = scan(adj, ids, live, ptr, budget, lanes, lambda r, v: r < take(s.offer, v, -1))
    tgt = take(adj.nbr, sc.entry, V)
    r = take(adj.rank, sc.entry, INT_MAX)
    s2, win, old = _resolve(s, ids, sc.found, tgt, r)
    ptr_all = s.ptr.at[ids].set(sc.ptr, mode="drop")
    budget_all = s.budget.at[ids].set(sc.budget, mode="drop")
    stay = live & ~win & sc.more
    back = (old >= 0) & (take(ptr_all, old, 0) < take(adj.end, old, 0))
    values = jnp.concatenate([jnp.where(stay, ids, V), jnp.where(back, old, V)])
    queue, head, size = push(s.queue, s.head, s.size, popped, values)
    return s2._replace(ptr=ptr_all, budget=budget_all, queue=queue, head=head, size=size,
                       rounds=s.rounds + (s.size > 0),
                       proposals=s.proposals + jnp.sum(sc.found, dtype=jnp.int32),
                       scanned=s.scanned + sc.scanned)


def mates_from_suitors(suitor):
    """Matched pairs are the mutual suitors: mate[v] = suitor[v] when suitor[suitor[v]] == v."""
    ids = jnp.arange(suitor.shape[0], dtype=jnp.int32)
    return jnp.where(take(suitor, suitor, -1) == ids, suitor, -1)


def suitor_arrays(g, *, max_iters: int, batch: int, lanes: int):
    """Run Suitor with the sorted adjacency; returns (mate [vertex_cap], status, stats dict)."""
    V = g.vertex_cap
    order = edge_order(g)
    has_edge = jax.ops.segment_max((order.rank < INT_MAX).astype(jnp.int32), g.adj.src, V) > 0
    zero = jnp.int32(0)
    adj = sorted_adjacency(g, order)
    queue, head, size = initial_queue(g, has_edge)
    s = SuitorState(suitor=jnp.full(V, -1, jnp.int32), offer=jnp.full(V, INT_MAX, jnp.int32),
                    ptr=adj.start, budget=jnp.full(V, INITIAL_BUDGET, jnp.int32), queue=queue,
                    head=head, size=size, rounds=zero, proposals=zero, scanned=zero)
    s = lax.while_loop(lambda s: (s.size > 0) & (s.rounds < max_iters),
                       lambda s: sorted_step(g, adj, s, batch, lanes), s)
    status = jnp.where(s.size > 0, MAX_ITERS, CONVERGED).astype(jnp.int32)
    stats = dict(rounds=s.rounds, proposals=s.proposals, scanned=s.scanned)
    return mates_from_suitors(s.suitor), status, stats
