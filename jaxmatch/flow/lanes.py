"""Step sizes of the bulk-synchronous loops: the ladder of rungs, the lanes of a step, the requeue.

A push-relabel step and a BFS level of the global relabel both work on a
queue of vertices (the active vertex queue, AVQ, of WBPR's Algorithm 2, or a
BFS frontier) and on the residual rows of the queued vertices, spread over
the *lanes* of the step (:func:`_lanes`): the array form of the paper's tiles,
a group of threads per active vertex. Every array of a step has the size of
the queue or of its lanes, not of the graph: the step runs in the first
*rung* of a ladder of static (queue slots, lanes) sizes that holds the queue
(:func:`ladder`; :func:`_rung` picks the branch of a ``lax.switch``), so the
many steps with few active vertices stay small, and no shape depends on the
data.

Two kinds of rung. In a tiled rung each queue slot owns a tile of ``TILE``
lanes, as the paper gives each active vertex a warp, and the per-vertex
reductions (:func:`_slot_min`, :func:`_slot_sum`, :func:`_slot_prefix`) run
along the tiles; it is usable while no queued row is longer than a tile. In
a load-balanced rung the rows are laid end to end
(:func:`jaxmatch._ops.expand`), so every lane does equal work whatever the
degrees are, the tile size in effect chosen per vertex by its degree; when
the queued vertices' arcs do not all fit the lanes (which hold at least the
longest row), the vertices past them wait for the next step.

:func:`_requeue` builds the next queue from a step's candidates with no pass
over all vertices: repeats are removed by a scatter-min of the candidate
position per vertex into a scratch array that is reset where touched, and
the survivors are compacted by a prefix sum.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxmatch._ops import INT_MAX, claim_first, compact, expand, prefix, take
from jaxmatch._validate import next_pow2

SMALLEST_QUEUE = 256     # ladder of queue sizes: 256, 2048, 16384, ... up to the vertex capacity
LADDER_FACTOR = 8
TOP_FACTOR = 4          # slots of the rungs whose lanes are the whole width
TILE = 32                # lanes per vertex of the tiled rungs (when no non-terminal row is longer)
TILED_SLOTS = 2048       # the largest tiled rung
ONE_RUNG = 4096          # capacities up to this many vertices: one rung, no unrolling (quick to compile)


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
    (rows laid end to end, :func:`_lanes`) of 256, 2048, 16384, ... slots
    (``LADDER_FACTOR`` apart), each with the slots times twice the mean
    residual degree of the capacities (a power of two) lanes, at most
    ``width``; where the next such rung would reach ``width``, one more of
    twice the slots and lanes (the steps whose queue just misses a rung
    then pay half the lanes, not all); past ``width`` the slots grow by
    ``TOP_FACTOR``; and a last one of the whole capacity with ``width``
    lanes (at least the longest row, so its first vertex always fits).
    Capacities of at most ``ONE_RUNG`` vertices get that last rung only
    (small problems, quick to compile).
    """
    if vertex_cap <= ONE_RUNG:
        return (Rung(vertex_cap, width, 0),)
    ratio = 2 * (1 << max(0, -(-2 * arc_cap // vertex_cap) - 1).bit_length())
    tiled, rest, q = [], [], SMALLEST_QUEUE
    while q < vertex_cap:
        if q <= TILED_SLOTS:
            tiled.append(Rung(q, q * TILE, TILE))
        lanes = min(width, max(q * ratio, 1024))
        rest.append(Rung(q, lanes, 0))
        if lanes < width < q * ratio * LADDER_FACTOR and 2 * q < vertex_cap and 2 * lanes < width:
            rest.append(Rung(2 * q, 2 * lanes, 0))   # a half-width rung below the width
        q *= LADDER_FACTOR if lanes < width else TOP_FACTOR
    return tuple(tiled) + tuple(rest) + (Rung(vertex_cap, width, 0),)


def window_width(arcs: int, longest, lanes: int) -> int:
    """Lanes of a network's largest push-relabel step: ``lanes`` widened to the ``longest`` residual
    row of a vertex that is not a terminal (terminals never enter a step's lanes), a power of two,
    at most the network's ``arcs`` residual arcs. Under tracing (``longest`` None) the rows are
    unknown, so the window is all the residual arcs."""
    if longest is None:
        return arcs
    return min(arcs, next_pow2(max(min(lanes, arcs), longest)))


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
    ends = prefix(deg, dtype=jnp.int32)
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
        return prefix(x.reshape(rung.slots, rung.tile), axis=1, dtype=x.dtype).reshape(-1)
    incl = prefix(x, dtype=x.dtype)
    return incl - take(incl - x, ln.first, 0).astype(x.dtype)


def _requeue(buf, owner, cand, alive, indptr):
    """Compact the ``alive`` candidates, first occurrence of each vertex only, into the queue buffer.

    Returns (buf, count, arcs of the kept vertices, the longest row, owner, keep). ``owner`` is
    a scratch array (INT_MAX everywhere) that is reset where touched.
    """
    vc = buf.shape[0]
    idx = jnp.arange(cand.shape[0], dtype=jnp.int32)
    keep, owner = claim_first(owner, cand, idx, alive)
    new, count = compact(keep, cand, vc)
    m = min(new.shape[0], vc)
    deg = take(indptr, cand + 1, 0) - take(indptr, cand, 0)
    deg = jnp.where(keep, deg, 0)
    return buf.at[:m].set(new[:m]), count, jnp.sum(deg, dtype=jnp.int32), jnp.max(deg), owner, keep
