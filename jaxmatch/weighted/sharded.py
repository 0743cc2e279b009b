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

One round, on device d (its vertex range ``[lo, lo + R)``, R = V / D):

1. each proposing vertex u of the range finds, over its own entries, the
   first neighbour v in the order whose held offer ``(offer[v], suitor[v])``
   it beats (a segment arg-max over the device's entries, no communication);
2. each device reduces its proposals per target into arrays of length V
   (the heaviest weight, then the smallest proposer at that weight); two
   all-reduces over the mesh axis (``lax.pmax`` of the weights, ``lax.pmin``
   of the proposers at the global best weight) give every device the same
   winners, and ``offer`` / ``suitor`` stay replicated;
3. a proposer that lost proposes again, and so does every suitor displaced
   from its target (the device owning it reads that from the replicated
   arrays); a ``lax.psum`` of the proposers left decides the loop.

Communication per round: two all-reduces of V words and one of a scalar;
work per device O(E / D + V). Each round is a set of proposals some
sequential Suitor could make, so the loop ends within ``max_iters`` rounds
(the default, the entries plus V plus 2, always suffices) with the greedy
matching.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, segment_argmin, take


def suitor_sharded(sg, max_iters):
    """Run the sharded Suitor; returns (mate [vertex_cap], weight, cardinality, status, stats), replicated."""
    D, V = sg.shards, sg.vertex_cap
    R, axis = V // D, sg.axis
    ninf = jnp.float32(-jnp.inf)

    def run(src, dst, w, n, max_iters):
        src, dst, w = src[0], dst[0], w[0]
        lo = lax.axis_index(axis).astype(jnp.int32) * R
        valid = (src < V) & (dst < V) & (src != dst) & (w > 0)
        u_loc = jnp.where(valid, src - lo, R)                      # R: outside every segment
        ids_loc = lo + jnp.arange(R, dtype=jnp.int32)
        has_edge = jax.ops.segment_max(valid.astype(jnp.int32), u_loc, R) > 0

        def step(st):
            suitor, offer, proposing, rounds, proposals, _ = st
            ow, os = take(offer, dst, ninf), take(suitor, dst, -1)
            ok = valid & take(proposing, u_loc, False) & ((w > ow) | ((w == ow) & (src < os)))
            neg, bv = segment_argmin(jnp.where(ok, -w, jnp.inf), dst, u_loc, R)
            found = neg < jnp.inf
            bw, tgt = -neg, jnp.where(found, bv, V)
            gw = lax.pmax(jnp.full(V, ninf).at[tgt].max(bw, mode="drop"), axis)
            first = found & (bw == take(gw, tgt, ninf))
            gu = lax.pmin(jnp.full(V, INT_MAX, jnp.int32).at[jnp.where(first, tgt, V)].min(ids_loc, mode="drop"),
                          axis)
            improved = gu < INT_MAX
            new_suitor = jnp.where(improved, gu, suitor)
            win = found & (take(new_suitor, tgt, -1) == ids_loc)
            out = jnp.zeros(V, bool).at[jnp.where(improved & (suitor >= 0), suitor, V)].set(True, mode="drop")
            proposing = (found & ~win) | lax.dynamic_slice(out, (lo,), (R,))
            busy = lax.psum(jnp.any(proposing).astype(jnp.int32), axis) > 0
            return (new_suitor, jnp.where(improved, gw, offer), proposing, rounds + 1,
                    proposals + lax.psum(jnp.sum(found, dtype=jnp.int32), axis), busy)

        proposing = has_edge & (ids_loc < n)
        st = (jnp.full(V, -1, jnp.int32), jnp.full(V, ninf), proposing, jnp.int32(0), jnp.int32(0),
              lax.psum(jnp.any(proposing).astype(jnp.int32), axis) > 0)
        suitor, _, _, rounds, proposals, busy = lax.while_loop(lambda s: s[5] & (s[3] < max_iters), step, st)
        ids = jnp.arange(V, dtype=jnp.int32)
        mate = jnp.where(take(suitor, suitor, -1) == ids, suitor, -1)
        mine = valid & (take(mate, src, -1) == dst) & (src < dst)
        weight = lax.psum(jnp.sum(jnp.where(mine, w, 0.0)), axis)
        card = lax.psum(jnp.sum(mine, dtype=jnp.int32), axis)
        status = jnp.where(busy, MAX_ITERS, CONVERGED).astype(jnp.int32)
        return mate, weight, card, status, rounds, proposals

    # check_vma=False: the loop starts from constants that become per-device values
    f = jax.shard_map(run, mesh=sg.mesh, in_specs=(P(axis), P(axis), P(axis), P(), P()), out_specs=P(),
                      check_vma=False)
    mate, weight, card, status, rounds, proposals = f(sg.src, sg.dst, sg.weights, sg.n, max_iters)
    return mate, weight, card, status, dict(rounds=rounds, proposals=proposals)


solve = jax.jit(suitor_sharded)
