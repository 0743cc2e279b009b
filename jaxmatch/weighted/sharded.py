"""Suitor on a graph split over several devices (:class:`jaxmatch.ShardedGraph`), with ``shard_map``.

The dense rounds of :mod:`jaxmatch.weighted.suitor` (every vertex that needs
a partner rescans its row), with the proposers split by the shards' vertex
ranges. The edge order is the module's: heavier first, equal weights by the
smaller ``(min(u, v), max(u, v))`` pair. Among the edges at one vertex x
that order compares the other end points only (for two neighbours a < b of
x, the pair of a comes first whether a and b lie below or above x), so no
global ranking (a sort of all entries across devices) is needed: a proposer
takes its heaviest eligible neighbour, the smallest id among equal weights,
and a target keeps the heaviest proposal, the smallest proposer among equal
weights. The answer is therefore the same greedy matching as one device's
Suitor (and :func:`jaxmatch.greedy_matching`).

Weights are compared as int32 keys, their float32 bits (positive floats
order as their bits; -1: no edge, or no offer), so the segment maxima are
native integer atomics. Every device holds each vertex's offer and suitor
(``held``, [V, 2], so an entry reads both in one memory trip). One round, on
device d (its vertex range ``[lo, lo + R)``, R = V / D):

1. each proposing vertex u of the range finds, over its own entries, the
   first neighbour v in the order whose held offer it beats (a segment
   maximum of the keys, then the smallest target at it; no communication).
   Round one reads no offers (all are -1);
   later rounds scan only the proposers' rows (a device's entries are in
   source order), expanded to E / 32 or E / 4 lanes when they fit
   (:func:`jaxmatch._ops.expand`; ``SPARSE``), else every entry: after round
   one few vertices propose (rounds two to eight averaged 7% of the
   vertices on a random graph of 2^25 edges, degree 16: RESULTS, session 30);
2. each device keeps its best proposal per target (the heaviest, then the
   smallest proposer) and sends the proposals for each vertex range to that
   range's device (one ``lax.all_to_all`` of the weights and proposers); the
   owner keeps the best of the D (owner computes: O(R) work per device, not
   O(V)), and the owners' new offers and suitors are gathered on every
   device (``lax.all_gather``): :func:`exchange`. When no device has more
   than R / ``FEW`` proposers (known from the previous round's counts), the
   proposals themselves are gathered on every device instead, and each
   device applies them all to its copy: :func:`exchange_few` (3 V / FEW
   words, against 4 V);
3. each device finds, for its own vertices, which won their target and which
   lost the target they held (each remembers it); those propose next round;
   a ``lax.psum`` of the proposers left (and of each device's count) decides
   the loop.

Every proposal beats the target's offer at the round's start, so the best of
a round's proposals always replaces it. Communication per round: one
all-to-all and one all-gather of 2V words in all, or one all-gather of
3 V / FEW words, and a psum of D + 2 words;
work per device O(E + V) (E: a device's entries) in round one and in a
round whose proposers' rows hold more than E / 4 entries, O(E / 4 + V) or
O(E / 32 + V) in the others. Each round is a set of proposals some
sequential Suitor could make, so the loop ends within ``max_iters`` rounds
(the default, the entries plus V plus 2, always suffices) with the greedy
matching. (Until session 30 a round rescanned every entry, all-reduced two
arrays of V words (``lax.pmax``, then ``lax.pmin``) and updated all V
vertices on every device: RESULTS, session 30.)

On one device (``axis`` None: no collectives, the rows from the CSR) the same
rounds are the default of :func:`jaxmatch.suitor` on a :class:`jaxmatch.Graph`
(:func:`dense_arrays`; ``SWITCH_MIN``), and :func:`scan`, with "the neighbour
is unmatched" as its eligibility, finds the candidates of
:func:`jaxmatch.locally_dominant`'s default: neither sorts the edges by rank.
On an H100 at 10^7 edges (RMAT, Delaunay, RGG, road, power law) these took
4.7-7.4 ms (Suitor) and 5.4-10.0 ms (LD), against 11.8-16.5 ms with the
sorted adjacency (RESULTS, session 31).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, expand, offsets, prefix, take
from jaxmatch.weighted.suitor import mates_from_suitors

#: after round one, a round scans only its proposers' rows, expanded to E / f lanes for the largest
#: f here whose lanes hold them (E: a device's entry capacity), or every entry when none does
SPARSE = (4, 32)

#: on one device (:func:`dense_arrays`), graphs of at least this entry capacity pick each round's scan
#: and exchange by the round's counts as the sharded rounds do; below it every round scans every entry
#: and settles by :func:`exchange` (one path: under ``vmap`` a switch runs all its branches)
SWITCH_MIN = 1 << 16

#: a round settles its proposals by :func:`exchange_few` when no device has more than R / FEW
#: proposers (R: a device's vertices), else by :func:`exchange`
FEW = 8


class Shard(NamedTuple):
    """A device's entries (in source order, padding last) and what the rounds read of them."""
    src: jax.Array       # [E] global ids
    dst: jax.Array       # [E]
    key: jax.Array       # [E] the weight's bits, -1 where the entry is no edge for matching
    seg: jax.Array       # [E] the source's local id, R where the entry is no edge
    rows: jax.Array      # [R + 1] where each local vertex's row starts, then E
    ids: jax.Array       # [R] the global ids of the device's vertices
    lo: jax.Array        # the first of them


def local(src, dst, w, *, V: int, R: int, axis: str | None, rows=None) -> Shard:
    """The :class:`Shard` of this device (inside ``shard_map``; ``axis`` None: the whole graph on one
    device). Positive float weights order as their bits, so the rounds compare integer keys of the
    weights' width (native atomics for the segment maxima); a row starts where the source changes
    (no binary searches), unless ``rows`` gives the starts."""
    E = src.shape[0]
    lo = jnp.int32(0) if axis is None else lax.axis_index(axis).astype(jnp.int32) * R
    valid = (src < V) & (dst < V) & (src != dst) & (w > 0)
    here = jnp.where(src < V, src - lo, R)
    if rows is None:
        e = jnp.arange(E, dtype=jnp.int32)
        starts = (e == 0) | (here != jnp.roll(here, 1))
        rows = jnp.full(R + 1, E, jnp.int32).at[jnp.where(starts, here, R + 1)].set(e, mode="drop")
        rows = prefix(rows, "min", reverse=True)           # an empty row starts where the next one does
    bits = jnp.int64 if w.dtype == jnp.float64 else jnp.int32
    key = jnp.where(valid, lax.bitcast_convert_type(w if bits == jnp.int64 else w.astype(jnp.float32), bits), -1)
    return Shard(src, dst, key, jnp.where(valid, here, R), rows, lo + jnp.arange(R, dtype=jnp.int32), lo)


def scan(sh: Shard, proposing, eligible=None, *, cap: int | None):
    """Each proposer's heaviest eligible neighbour, the smallest id among equal weights: (key [R],
    -1 for none; target [R]), over all entries (``cap`` None) or over the proposers' rows expanded
    to ``cap`` lanes. ``eligible(src, dst, key)``: which edges may be taken (None: every edge; round
    one of Suitor, where every offer is -inf), given ``dst`` 0 where the entry is no candidate;
    :func:`beats` for Suitor."""
    R = sh.ids.shape[0]
    if cap is None:
        src, dst, key = sh.src, sh.dst, sh.key
        seg = jnp.where(take(proposing, sh.seg, False), sh.seg, R)
    else:
        sizes = jnp.where(proposing, sh.rows[1:] - sh.rows[:-1], 0)
        slot, e, live = expand(offsets(sizes), sh.rows[:-1], jnp.int32(0), cap)
        src, dst, key = take(sh.src, e, -1), take(sh.dst, e, -1), take(sh.key, e, -1)
        seg = jnp.where(live & (key >= 0), slot, R)
    ok = seg < R
    if eligible is not None:
        ok &= eligible(src, jnp.where(ok, dst, 0), key)   # in-bounds ids (0 where not ok)
    seg = jnp.where(ok, seg, R)
    best = jax.ops.segment_max(jnp.where(ok, key, -1), seg, R)
    tgt = jax.ops.segment_min(jnp.where(ok & (key == take(best, seg, -1)), dst, INT_MAX), seg, R)
    return best, tgt


def beats(held):
    """Suitor's eligibility for :func:`scan`: the proposal (src, key) beats the offer that ``dst``
    holds (heavier, or as heavy from a smaller proposer); offer and suitor read in one trip."""
    def eligible(src, dst, key):
        h = held[dst]                                       # [., 2]
        return (key > h[:, 0]) | ((key == h[:, 0]) & (src < h[:, 1]))
    return eligible


def exchange(sh: Shard, best, tgt, held, mine, *, V: int, D: int, axis: str):
    """A round's proposals (``best`` >= 0: key and target per local vertex) settled by the targets'
    owners: (held [V, 2], mine [R], found, win, lost), ``held`` replicated again."""
    R = sh.ids.shape[0]
    found = best >= 0
    tgt = jnp.where(found, tgt, V)
    lw = jnp.full(V, -1, held.dtype).at[tgt].max(best, mode="drop")       # this device's best per target
    first = found & (best == take(lw, tgt, -1))
    lu = jnp.full(V, INT_MAX, held.dtype).at[jnp.where(first, tgt, V)].min(sh.ids, mode="drop")
    got = jnp.stack([lw, lu]).reshape(2, D, R)
    if axis is not None:
        got = lax.all_to_all(got, axis, 1, 1)                             # [2, D, R]: to the owners
    top = jnp.max(got[0], axis=0)
    by = jnp.min(jnp.where(got[0] == top, got[1], INT_MAX), axis=0)
    old = lax.dynamic_slice_in_dim(held, sh.lo, R)
    held = _gather(jnp.where((top >= 0)[:, None], jnp.stack([top, by], axis=1), old), axis)
    return _outcome(sh, held, found, tgt, mine, V)


def exchange_few(sh: Shard, best, tgt, held, mine, *, cap: int, V: int, axis: str):
    """:func:`exchange` for a round in which no device has more than ``cap`` proposals: each device's
    proposals (target, key, proposer) go to every device (``lax.all_gather`` of ``cap`` slots each),
    and every device applies all of them to its copy of ``held`` (the heaviest, then the smallest
    proposer; a proposal always beats the offer it read): O(D cap) words and work, not O(V)."""
    found = best >= 0
    slot = jnp.where(found, prefix(found, dtype=jnp.int32) - 1, cap)
    row = jnp.stack([tgt.astype(held.dtype), best, sh.ids.astype(held.dtype)], axis=1)
    send = jnp.full((cap, 3), V, held.dtype).at[slot].set(row, mode="drop")
    t, k, u = _gather(send, axis).T                                     # [D cap] each; t = V: none
    before = held.at[t, 0].get(mode="fill", fill_value=-1)
    held = held.at[t, 0].max(k, mode="drop")
    top = held.at[t, 0].get(mode="fill", fill_value=-1)
    at_top = (t < V) & (k == top)
    held = held.at[jnp.where(at_top & (top > before), t, V), 1].set(INT_MAX, mode="drop")
    held = held.at[jnp.where(at_top, t, V), 1].min(u, mode="drop")
    return _outcome(sh, held, found, tgt, mine, V)


def _gather(x, axis):
    """Every device's ``x``, concatenated (``lax.all_gather``); ``x`` itself where ``axis`` is None."""
    return x if axis is None else lax.all_gather(x, axis, tiled=True)


def _outcome(sh: Shard, held, found, tgt, mine, V: int):
    """After a round's exchange, for this device's vertices: which won their target and which lost
    the one they held (``mine``: V for none), read from the new suitors; (held, mine, found, win,
    lost)."""
    suitor_of = lambda x: held.at[x, 1].get(mode="fill", fill_value=-1)   # noqa: E731
    win = found & (suitor_of(tgt) == sh.ids)
    lost = (mine < V) & (suitor_of(mine) != sh.ids)
    return held, jnp.where(win, tgt, jnp.where(lost, V, mine)), found, win, lost


def rounds(sh: Shard, n, max_iters, *, V: int, D: int, axis: str | None, switch: bool = True):
    """The proposal rounds on this device's :class:`Shard` (``axis`` None: one device, no
    collectives); returns (suitor [V], rounds, proposals, scanned, busy). ``switch`` False: every
    round scans every entry and settles by :func:`exchange`, one path (under ``vmap`` a switch runs
    all its branches)."""
    R, E = V // D, sh.src.shape[0]
    total = jnp.sum(sh.key >= 0, dtype=jnp.int32)      # a full round examines these
    caps = tuple(sorted({max(E // f, 1) for f in SPARSE})) if switch else ()
    branches = [lambda held, p: scan(sh, p, cap=None)] + \
        [lambda held, p, c=c: scan(sh, p, beats(held), cap=c) for c in (None, *reversed(caps))]
    few = max(R // FEW, 1)
    settle = [partial(exchange, sh, V=V, D=D, axis=axis), partial(exchange_few, sh, cap=few, V=V, axis=axis)]

    def counts(proposing, found):
        """psum'd: [the proposers, the proposals, each device's proposers]."""
        here = jnp.sum(proposing, dtype=jnp.int32)
        if axis is None:
            return jnp.stack([here, jnp.sum(found, dtype=jnp.int32), here])
        each = jnp.zeros(D, jnp.int32).at[lax.axis_index(axis)].set(here)
        return lax.psum(jnp.concatenate([jnp.stack([here, jnp.sum(found, dtype=jnp.int32)]), each]), axis)

    def step(st):
        held, mine, proposing, k, proposals, scanned, left = st
        if switch:
            need = jnp.sum(jnp.where(proposing, sh.rows[1:] - sh.rows[:-1], 0))
            which = jnp.where(k == 0, 0, 1 + jnp.sum(need <= jnp.array(caps, jnp.int32)))
            best, tgt = lax.switch(which, branches, held, proposing)
            held, mine, found, win, lost = lax.cond(jnp.max(left[2:]) <= few, settle[1], settle[0],
                                                    best, tgt, held, mine)
            scanned += jnp.where(which <= 1, total, need)
        else:
            best, tgt = branches[1](held, proposing)
            held, mine, found, win, lost = settle[0](best, tgt, held, mine)
            scanned += total
        proposing = (found & ~win) | lost
        left = counts(proposing, found)
        return held, mine, proposing, k + 1, proposals + left[1], scanned, left

    proposing = (jax.ops.segment_max(sh.key, sh.seg, R) >= 0) & (sh.ids < n)
    held = jnp.broadcast_to(jnp.array([-1, -1], sh.key.dtype), (V, 2))
    zero = jnp.int32(0)
    st = (held, jnp.full(R, V, jnp.int32), proposing, zero, zero, zero, counts(proposing, jnp.zeros(R, bool)))
    held, _, _, k, proposals, scanned, left = lax.while_loop(lambda s: (s[6][0] > 0) & (s[3] < max_iters),
                                                              step, st)
    return held[:, 1].astype(jnp.int32), k, proposals, scanned, left[0] > 0


def dense_arrays(g, *, max_iters: int):
    """Suitor's rounds on one device for a :class:`jaxmatch.Graph` (``suitor(g, sorted_adjacency=False)``):
    :func:`rounds` with no collectives, the rows from the CSR; returns (mate [vertex_cap], status,
    stats dict)."""
    V = g.vertex_cap
    sh = local(g.adj.src, g.adj.indices, g.adj.weights, V=V, R=V, axis=None, rows=g.adj.indptr)
    suitor, k, proposals, scanned, busy = rounds(sh, g.n, max_iters, V=V, D=1, axis=None,
                                                 switch=g.entry_cap >= SWITCH_MIN)
    status = jnp.where(busy, MAX_ITERS, CONVERGED).astype(jnp.int32)
    return mates_from_suitors(suitor), status, dict(rounds=k, proposals=proposals, scanned=scanned)


def suitor_sharded(sg, max_iters):
    """Run the sharded Suitor; returns (mate [vertex_cap], weight, cardinality, status, stats), replicated."""
    D, V = sg.shards, sg.vertex_cap
    R, axis = V // D, sg.axis

    def run(src, dst, w, n, max_iters):
        sh = local(src[0], dst[0], w[0], V=V, R=R, axis=axis)
        suitor, k, proposals, _, busy = rounds(sh, n, max_iters, V=V, D=D, axis=axis)
        mate = mates_from_suitors(suitor)
        mine = (sh.key >= 0) & (take(mate, sh.src, -1) == sh.dst) & (sh.src < sh.dst)
        weight = lax.psum(jnp.sum(jnp.where(mine, w[0], 0.0)), axis)
        card = lax.psum(jnp.sum(mine, dtype=jnp.int32), axis)
        status = jnp.where(busy, MAX_ITERS, CONVERGED).astype(jnp.int32)
        return mate, weight, card, status, k, proposals

    # check_vma=False: the loop starts from constants that become per-device values
    f = jax.shard_map(run, mesh=sg.mesh, in_specs=(P(axis), P(axis), P(axis), P(), P()), out_specs=P(),
                      check_vma=False)
    mate, weight, card, status, k, proposals = f(sg.src, sg.dst, sg.weights, sg.n, max_iters)
    return mate, weight, card, status, dict(rounds=k, proposals=proposals)


solve = jax.jit(suitor_sharded)
