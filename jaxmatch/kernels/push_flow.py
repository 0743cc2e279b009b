"""Push-relabel rounds of the max-flow solver in one persistent Pallas kernel: many rounds per launch.

The array form (:func:`jaxmatch.flow.push_relabel.push_relabel_step`) pays a
loop step of XLA kernels, 100-150 us on an H100, for every round, and the
long-path classes (road networks, meshes, genrmf) need 10^4-10^5 rounds with
a few thousand active vertices each. Here one launch runs up to
:attr:`Config.rounds` rounds over the active vertex queue (AVQ), the way
WBPR's kernel runs many lock-free push-relabel operations per launch; the
caller's loop runs the global relabel between launches (with the BFS kernel
of :mod:`jaxmatch.kernels.bfs_level`) and stops a launch when the work rule
says a global relabel is due.

One round over the queue ``Q`` (one half of a ping-pong buffer), every
program taking chunks of :attr:`Config.push_block` queued vertices (of
:attr:`Config.push_small` while the queue holds at most that many per program),
each a row of a tile that walks the vertices' residual rows :attr:`Config.push_width`
arcs at a time:

1. **push**: an active ``u`` (excess > 0, height < n, not a terminal) pushes
   on its admissible arcs (residual, head lower: h(w) < h(u)) in arc order
   as much as its excess covers (a prefix sum along the tile's row,
   :func:`_take`), the forward arcs (of input arcs) of each ``push_width`` arcs
   before their reverse arcs (the array form's priority, exact for rows of
   at most ``push_width`` arcs); ``rc(u, w) -= d`` as a plain store (u's
   thread is its one writer), ``rc(w, u) += d``, ``e(w) += d`` and
   ``e(u) -= pushed`` as integer atomic adds (which need no read first). A
   head ``w`` that received a push and is not a terminal claims a place in
   the next queue (the other half) with an atomic exchange of the round's
   stamp in ``stamp[w]``: the lane that finds another stamp owns w and
   appends it (one atomic add on the round's counter per tile); the
   active rows' lengths are added up for the work rule;
2. a **grid barrier** (:func:`jaxmatch.kernels._pallas._grid_sync`);
3. **relabel**: each ``u`` of ``Q`` still active relabels to 1 + the lowest
   head height over its residual arcs that are not admissible, found by the
   push phase (capped at n + 1; with ``Config(relabel_from_push=False)`` it
   reads its row again and relabels only if no residual arc leads lower),
   and if still below n it claims a place in the next queue like the heads;
4. a grid barrier; the next round runs over the other half.

Why this stays a correct (generic) push-relabel under concurrency (Hong's
lock-free argument, made simpler by the barrier between the two phases):

* Heights are only written in the relabel phase, so every push reads the
  heights the round started with: a push ``u -> w`` needs h(w) < h(u), so
  ``w`` never pushes on ``(w, u)`` in the same phase; each residual arc has
  one writer in a push phase (its tail's thread, which also writes the
  reverse entry), so ``rc`` needs no atomics. ``u`` reads its excess while
  others may add to it: what it reads is at least what it had, and it
  subtracts only what it pushed, with an atomic add, so no excess is lost or
  created. (``rc(w, u)`` is written by u alone too; the atomic add only
  saves reading it first.) The new residual arc ``(w, u)`` is valid: h(w) < h(u) <= h(u) + 1.
* Rereading the row (``relabel_from_push=False``): in the relabel phase no
  capacity changes, so ``u`` sees every residual arc, including those
  created by pushes into it. It reads neighbours'
  heights that may be rising concurrently; any value it reads is at most
  the neighbour's current height (heights never decrease), so the new label
  ``1 + min`` is at most ``1 +`` the true minimum: every residual arc out of
  ``u`` stays valid (h(u) <= h(w) + 1). It relabels only when every value
  read is >= h(u), so the label grows. A stale read that still shows a lower
  head only postpones the relabel to the next round.
* With :attr:`Config.relabel_from_push` (the default; experiments/RESULTS.md, session 22, has the
  measurements) the relabel phase does not read the row again: the push phase keeps, for each
  ``u`` left with excess, the lowest head height over the arcs it read as residual and not
  admissible (exact: no height changes in a push phase, and an admissible arc's capacity has one
  writer, u), and u relabels to 1 + that. An arc out of u that became residual during the phase
  was made by a push of a head w into u, which needs h(w) > h(u), and u may have read it before
  the push; every such push claims u in ``stamp`` with the round's id, so a u that finds its
  stamp there caps its new height at h(u) + 2 <= h(w) + 1. Heights are those of the round's
  start, so the relabels can be lower than the rereading phase's (still valid, perhaps more
  rounds).
* So the labels stay valid, heights only grow and every push is admissible:
  the generic algorithm's bounds and its maximum preflow at the end hold,
  whatever the interleaving. The flow found (not its value) may differ from
  run to run, since how much of a concurrent push a vertex sees decides how
  much it passes on. Claims deduplicate the queue: a vertex enters each
  round's queue once. Every active vertex is in the queue: a vertex becomes
  active only by receiving a push (claimed then) and stays active only if
  it was queued (claimed again in the relabel phase).

What the GPU taught (H100 and H200, JAX 0.11.2). A round's push phase is bound by the memory
operations of each busy program: a chunk of 128 vertices x 8 arcs is 8 elements a thread at 4
warps, and on genrmf (about 1,800 queued vertices a round) only 14 of the 132 programs had a
chunk. Chunks of ``push_small`` = 32 (2 elements a thread) spread such a queue over some 56
programs: the push phase 18.5 -> 11.6 us, genrmf21 3.46 -> 2.97 s on an H200 (same rounds); a
queue of 11,000 (rlg) has enough chunks of 128 for every program, and there chunks of 32 always
(of 32 x 4 arcs, in that run) cost more (rlg21 0.63 -> 0.93 s), hence chunks of 32 only while the queue is short (RESULTS session 33).
A chunk of fewer vertices than the program has threads holds each vertex's vector elements in
several threads, and Triton assumes such copies equal: each copy does its own load, so a
volatile load of a changing value (a vertex's excess during the push phase) can hand the
copies different values, and an atomic runs in one copy and hands its result to that copy only.
So every per-vertex atomic and store goes through column 0 of a tile
(:func:`jaxmatch.kernels._pallas._per_row`) and the excess and height through a load there and
a reduction (:func:`jaxmatch.kernels._pallas._row_load`); without that the queue went
inconsistent (lost and repeated entries, stalled barriers, illegal addresses at 2^20 arcs), as
it had in session 11. ``choose`` checks that every tile has at least one element per thread. A
variant that elected each head's appender by an atomic minimum (result unused) and read the
elections after the barrier with plain loads passed the interpreter's tests and ran certified at
2^14-2^20 vertices, but lost or duplicated queue entries at 2^21 (flow not conserved), most
likely for the same reason.

**One phase a round** (``Config.fused``, on by default: no faster on the H100 in session 28, 4-10%
faster on the H200 once small queues run in chunks of ``push_small``, RESULTS session 34). Each ``u``
relabels right after its own pushes, in the push phase, to ``min(1 + lowest, h(u) + 2)`` (lowest:
the push phase's minimum above), and claims its place in the next queue if excess is left; the
round has one grid barrier, not two, and no relabel phase that reads the queue, the excesses and
the heights again. The argument above, with heights now rising during the phase:

* ``u`` pushes before it relabels, with the height it had at the round's start, h0(u); every
  height it reads is at least the head's h0 (heights only grow). A push ``u -> w`` needs
  h0(u) > read h(w) >= h0(w) and one ``w -> u`` needs h0(w) > h0(u): never both, so each residual
  arc keeps one writer in the phase and ``rc`` needs no atomics, as before.
* The new residual arc ``(w, u)`` of a push ``u -> w``: h0(w) <= read h(w) < h0(u). If ``w``'s
  relabel saw the arc, h(w) <= 1 + (a value read of h(u)) <= 1 + h(u); if not, h(w) <= h0(w) + 2
  <= h0(u) + 1 <= h(u) + 1. Valid either way.
* ``u``'s relabel against an arc ``(u, w)`` made residual by a push ``w -> u`` that ``u`` did not
  see (no barrier now separates it): that push needed h0(w) > read h(u) >= h0(u), so
  h(u) <= h0(u) + 2 <= h0(w) + 1 <= h(w) + 1. The cap at h + 2 holds it for every relabel, since
  without a barrier ``u`` cannot know whether such a push comes after its scan (the two-phase
  form caps only a ``u`` whose stamp shows one). Every arc ``u`` read as residual: h(u) <=
  1 + (a value read) <= 1 + h(w). The label grows (lowest >= h(u) once no admissible arc is left).
* Queue: a vertex left with excess claims itself; one that receives a push is claimed by the
  pusher, before or after its own turn; the stamps deduplicate both.

So the labels stay valid and the generic bounds hold. The cost: a vertex rises by at most 2 a
round between global relabels (the rise is 1 or 2 in most relabels: see
:mod:`jaxmatch.flow.push_relabel`); the gain, half the barriers and the relabel phase's loads,
did not show in session 28 (a grid barrier costs 0.2 us and a round's time is its push phase) but
does since chunks of ``push_small`` spread small queues over more programs: with ``bounds``,
genrmf21 2.76 s against 3.02 s with neither, rlg21 0.613 against 0.638 s, road21 0.165 against
0.183 s (``experiments/bench_flow.py``, same call, H200, RESULTS session 34).

**One program for a small queue** (``Config.solo``, off by default: no gain on the H100, RESULTS sessions 27-28).
When the queue holds at most ``solo`` vertices the caller launches this kernel with one program
(``push_rounds(..., solo=True)``), whose two barriers per round are thread barriers: the push and
relabel phases are the same code, and one program's threads see each other's global writes
after a thread barrier (they share the SM's L1), so the argument above holds with the grid
barrier replaced. That launch stops once the queue outgrows ``solo``; a grid launch stops once it
falls to ``solo // 2`` (each runs at least one round, so the caller's alternation cannot stall).
The aim was to skip the grid barriers' cost on the long stretches of small queues of genrmf and
road networks; the barriers turned out to cost 0.2 us each (RESULTS, session 28).

The grid barrier and the three rotating counter slots are those of
:mod:`jaxmatch.kernels.bfs_level` (whose docstring explains the rotation);
loads of what other programs write (capacities, excesses, heights, the
queue) are volatile, past the L1 caches of other SMs. Lowering: Pallas's
Triton backend, for the reasons given there; every atomic inside a phase
(capacity and excess adds, claims, counters) has relaxed order and skips
masked lanes (:func:`jaxmatch.kernels._pallas._rmw`): the barrier orders
the phases, and only the barrier's atomics pay a fence. In interpret mode
(the CPU tests) the grid is one program.

Cost per round: O(queue + its arcs) work and two grid barriers, against a
loop step of about ten XLA kernels in the array form: 7.0 us for a round
of one active vertex on an H100 with 4 warps and chunks of 128 (20.2 us
with Pallas's fenced atomics), against 100-190 us as an XLA step
(``experiments/bench_rounds.py``, RESULTS sessions 11 and 20). The default
knobs became 8 warps and chunks of 256 in session 22 (5-10% less time on
genrmf, RLG and road flows, 2-24% on G-PR's road/delaunay/rgg graphs, where
many vertices are active at once), and this kernel's ``push_width`` 8
(fewer rounds: 4-26% less time on genrmf, RLG and meshes).

>>> import jax.numpy as jnp
>>> indptr = jnp.array([0, 1, 3, 4], jnp.int32)        # path 0 -> 1 -> 2 of capacity 5, 0 the source
>>> heads = jnp.array([1, 0, 2, 1], jnp.int32)
>>> rev = jnp.array([1, 0, 3, 2], jnp.int32)
>>> fwd = jnp.array([1, 0, 1, 0], jnp.int32)
>>> rc = jnp.array([0, 5, 5, 0], jnp.int32)             # the source's arc saturated
>>> out = push_rounds(jnp.array([1, 3, 3, 3, 3, 3], jnp.int32), 1, rc, jnp.array([-5, 5, 0], jnp.int32),
...                   jnp.array([3, 1, 0], jnp.int32), jnp.full(3, -1, jnp.int32), indptr, heads, rev, fwd,
...                   jnp.array([1, 0, 1], jnp.int32), n=3, round_id=1, room=100.0, max_rounds=10,
...                   cfg=Config(push_block=2, push_width=2), interpret=True)
>>> out.rc.tolist(), out.excess.tolist(), int(out.count), int(out.rounds)
([0, 5, 0, 5], [-5, 0, 5], 0, 1)
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from jaxmatch._ops import INT_MAX
from jaxmatch.kernels._pallas import (Config, _add, _append, _atomic_add, _barrier, _chunks, _claim, _f32, _flat,
                                      _grid_sync, _i32, _load, _per_row, _put, _persistent_call, _read, _resident,
                                      _row_load, _store)

STEP_LANES = 1 << 18   # the flow solver's work unit: arcs a step scans for the cost of its fixed overhead

# state words: three rotating next-queue counters and three for the round's queued rows' lengths
# (the work rule), the barrier's arrivals, then what the launch hands back
_CNT, _ARCS, _ARRIVED, _COUNT, _SIDE, _DONE, _STALLED, _PUSHES, _RELABELS, _WORK = 0, 3, 6, 7, 8, 9, 10, 11, 12, 13
_STATE = 14


class Rounds(NamedTuple):
    """What a launch hands back: the state, the queue ``buf[side * vertex_cap:][:count]``, the rounds
    run, their work (the solver's units), pushes, relabels, and whether a program gave up at a grid
    barrier."""

    rc: jax.Array
    excess: jax.Array
    height: jax.Array
    stamp: jax.Array
    buf: jax.Array
    side: jax.Array
    count: jax.Array
    rounds: jax.Array
    work: jax.Array
    pushes: jax.Array
    relabels: jax.Array
    stalled: jax.Array


def _mark(point: int, dep, state) -> None:
    """A probe point of a push chunk (0: its start; 1: its vertices' state loaded; 2: their rows'
    bounds; 3: the tiles pushed; 4: its end): nothing here, no code. ``experiments/time_rounds.py``
    swaps in one that reads the GPU's timer once ``dep()`` (a scalar) is known and adds the
    chunk's stretches into ``state``."""


def _take(x, rem):
    """Per row of the tile ``x`` (non-negative int32 amounts, lanes in order), what the row's
    ``rem`` covers: the first lanes whole, the lane where it runs out the rest, then nothing;
    returns (taken per lane, what is left). The running sums wrap past 2**31, but only after the
    lane where they first reach ``rem`` (every amount and ``rem`` are below 2**31, so up to that
    lane a sum is exact as an unsigned number: negative as int32 or >= rem)."""
    after = jnp.cumsum(x, axis=1, dtype=jnp.int32)
    before = after - x
    lane = jnp.arange(x.shape[1], dtype=jnp.int32)[None, :]
    cut = jnp.min(jnp.where((after < 0) | (after >= rem[:, None]), lane, x.shape[1]), axis=1)
    taken = jnp.where(lane < cut[:, None], x, jnp.where(lane == cut[:, None], rem[:, None] - before, 0))
    return taken, jnp.where(cut < x.shape[1], 0, rem - jnp.sum(x, axis=1, dtype=jnp.int32))


def _kernel(meta_ref, room_ref, indptr, heads, rev, fwd, terminal, buf_in, rc_in, ex_in, h_in, st_in, state_in,
            lows_in, buf, rc, excess, height, stamp, state, lows, *, cfg: Config, grid: int, vc: int,
            interpret: bool, solo: bool = False):
    del buf_in, rc_in, ex_in, h_in, st_in, state_in, lows_in   # aliased with the outputs
    count0, side0, n, max_rounds, stamp0 = (meta_ref[i] for i in range(5))
    room = room_ref[0]
    program = pl.program_id(0)
    threads = 32 * cfg.push_warps
    cols = jnp.arange(cfg.push_width, dtype=jnp.int32)[None, :]
    chunks = lambda count, fn: _chunks(count, cfg.push_block, program, grid, fn, cfg.push_small)  # noqa: E731

    def row(u, ok, act):
        """The row of ``u``: loaded where ``ok`` (beside the vertex's state, not after it), its
        length zero where ``u`` is not active."""
        start = _load(indptr, u, ok, 0)
        return start, jnp.where(act, _load(indptr, u + 1, ok, 0) - start, 0)

    def vertex(rows, count, base_in):
        ok = rows < count
        u = _load(buf, base_in + rows, ok, 0, volatile=True)
        e = _row_load(excess, u, ok, 0, threads, volatile=True)    # changing under the push phase (and the
        h = _row_load(height, u, ok, INT_MAX, threads, volatile=True)  # heights under Config.fused): _row_load
        act = ok & (_load(terminal, u, ok, 1) == 0) & (e > 0) & (h < n)
        return u, e, h, act, ok

    # Loads are masked by what their address needs, not by what their value is for, so that none
    # waits on another's value for its mask alone (measured neutral on the H100: RESULTS, session 28).
    def push_chunk(rows, count, base_in, base_out, slot, rid):
        _mark(0, lambda: jnp.max(rows), state)
        u, e, h, act, ok = vertex(rows, count, base_in)
        _mark(1, lambda: jnp.max(jnp.where(act, e + h, 0)), state)
        start, deg = row(u, ok, act)
        _mark(2, lambda: jnp.max(start + deg), state)
        arcs = jnp.sum(deg, dtype=jnp.int32)

        @pl.when(arcs > 0)
        def _():   # the round's work: the rows of its active vertices
            _atomic_add(state, _ARCS + slot, arcs, interpret)

        def tile(j, c):
            rem, pushes, *lowest = c   # lowest: [the minimum] with relabel_from_push, else []
            q = j * cfg.push_width + cols
            valid = (q < deg[:, None]) & (rem[:, None] > 0)
            k = start[:, None] + q
            r = _load(rc, k, valid, 0, volatile=True)
            w = _load(heads, k, valid, 0)
            f = _load(fwd, k, valid, 0)
            kr = _load(rev, k, valid, 0)
            res = valid & (r > 0)
            hw = _load(height, w, res, INT_MAX, volatile=True)
            tw = _load(terminal, w, res, 1)      # beside the head's height, not after the pushes
            adm = res & (hw < h[:, None])
            if cfg.relabel_from_push:   # the lowest head of the arcs that stay residual (not admissible)
                lowest = [jnp.minimum(lowest[0], jnp.min(jnp.where(res & ~adm & (w != u[:, None]), hw, INT_MAX),
                                                         axis=1))]
            d_f, rem = _take(jnp.where(adm & (f == 1), r, 0), rem)   # forward arcs first
            d_r, rem = _take(jnp.where(adm & (f == 0), r, 0), rem)
            d = d_f + d_r
            moved = d > 0
            _flat(_store, rc, k, r - d, moved, interpret)
            _add(rc, kr, d, moved, interpret)
            _add(excess, w, d, moved, interpret)
            cand = moved & (tw == 0)
            _append(state, _CNT + slot, buf, base_out, _flat(_claim, stamp, w, rid, cand, interpret), w, interpret)
            return (rem, pushes + jnp.sum(moved.astype(jnp.int32), dtype=jnp.int32), *lowest)

        top = jnp.max(deg)
        start_low = [jnp.full(u.shape, INT_MAX, jnp.int32)] if cfg.relabel_from_push else []
        rem, pushes, *lowest = lax.fori_loop(0, (top + cfg.push_width - 1) // cfg.push_width, tile,
                                             (jnp.where(act, e, 0), jnp.int32(0), *start_low))
        _mark(3, lambda: jnp.max(rem) + pushes, state)
        _per_row(_add, excess, u, rem - e, act, threads, interpret)
        if cfg.fused:   # relabel now, by at most 2 (Config.fused: why in the module docstring)
            left = act & (rem > 0)   # every admissible arc saturated, so lowest >= h
            finish(u, h, left, left, jnp.minimum(jnp.minimum(lowest[0], n) + 1, h + 2), base_out, slot, rid)
        elif cfg.relabel_from_push:   # for the relabel phase: the minimum, or -1 (no relabel: no excess left)
            _per_row(_store, lows, u, jnp.where(act & (rem > 0), lowest[0], -1), rows < count, threads,
                     interpret)

        @pl.when(pushes > 0)
        def _():
            _atomic_add(state, _PUSHES, pushes, interpret)
        _mark(4, lambda: pushes, state)

    def relabel_chunk(rows, count, base_in, base_out, slot, rid):
        u, _, h, act, ok = vertex(rows, count, base_in)
        if cfg.relabel_from_push:
            return relabel_stored(u, h, act, ok, base_out, slot, rid)
        start, deg = row(u, ok, act)

        def tile(j, low):
            q = j * cfg.push_width + cols
            valid = q < deg[:, None]
            k = start[:, None] + q
            w = _load(heads, k, valid, 0)
            res = valid & (_load(rc, k, valid, 0, volatile=True) > 0) & (w != u[:, None])
            hw = jnp.where(res, _load(height, w, res, INT_MAX, volatile=True), INT_MAX)
            return jnp.minimum(low, jnp.min(hw, axis=1))

        low = lax.fori_loop(0, (jnp.max(deg) + cfg.push_width - 1) // cfg.push_width, tile,
                            jnp.full(u.shape, INT_MAX, jnp.int32))
        finish(u, h, act, act & (low >= h), jnp.minimum(low, n) + 1, base_out, slot, rid)

    def relabel_stored(u, h, act, ok, base_out, slot, rid):
        lowest = jnp.where(act, _load(lows, u, ok, -1, volatile=True), -1)   # loaded beside the vertex's state
        received = _i32(_load(stamp, u, ok, 0.0, volatile=True)) == rid   # a push into u claimed it this round
        new_h = jnp.minimum(lowest, n) + 1
        new_h = jnp.where(received, jnp.minimum(new_h, h + 2), new_h)    # why: see the module docstring
        finish(u, h, act, act & (lowest >= h), new_h, base_out, slot, rid)

    def finish(u, h, act, relabel, new_h, base_out, slot, rid):
        _per_row(_store, height, u, new_h, relabel, threads, interpret)
        h = jnp.where(relabel, new_h, h)
        n_rel = jnp.sum(relabel.astype(jnp.int32), dtype=jnp.int32)

        @pl.when(n_rel > 0)
        def _():
            _atomic_add(state, _RELABELS, n_rel, interpret)
        new = _per_row(_claim, stamp, u, rid, act & (h < n), threads, interpret)
        _append(state, _CNT + slot, buf, base_out, new, u, interpret)

    def go(c):
        count, done, side, work, stalled = c
        # with Config.solo: the one-program launch stops when its queue outgrows it, the grid's when
        # its queue falls to half of it (the caller then launches the other; each runs >= 1 round)
        fits = (count <= cfg.solo) if solo else (count > cfg.solo // 2) | (done == 0)
        return (count > 0) & (done < max_rounds) & (work < room) & ~stalled & fits

    def sync(i):
        if solo:          # one program: a thread barrier orders its threads' global writes and reads
            _barrier(interpret)
            return jnp.bool_(True)
        return _grid_sync(state, _ARRIVED, i * grid, cfg.spin, interpret)

    def body(c):
        count, done, side, work, stalled = c
        slot, ahead = done % 3, (done + 1) % 3

        @pl.when(program == 0)
        def _():   # the slots of round done + 1: last read before the previous round's barriers
            _put(state, _CNT + ahead, 0, interpret)
            _put(state, _ARCS + ahead, 0, interpret)

        base_in, base_out, rid = side * vc, (1 - side) * vc, stamp0 + done
        chunks(count, partial(push_chunk, count=count, base_in=base_in, base_out=base_out, slot=slot, rid=rid))
        if cfg.fused:     # one phase, one barrier a round
            ok1 = ok2 = sync(done + 1)
        else:
            ok1 = sync(2 * done + 1)
            chunks(count, partial(relabel_chunk, count=count, base_in=base_in, base_out=base_out, slot=slot,
                                  rid=rid))
            ok2 = sync(2 * done + 2)
        nxt = _read(state, _CNT + slot, interpret)
        work = work + 1.0 + _read(state, _ARCS + slot, interpret).astype(jnp.float32) / STEP_LANES
        return nxt, done + 1, 1 - side, work, stalled | ~(ok1 & ok2)

    count, done, side, work, stalled = lax.while_loop(
        go, body, (count0, jnp.int32(0), side0, jnp.float32(0), jnp.bool_(False)))

    @pl.when(program == 0)
    def _():
        for i, v in ((_COUNT, count), (_SIDE, side), (_DONE, done), (_WORK, _i32(work))):
            _put(state, i, v, interpret)

    @pl.when(stalled)
    def _():
        _put(state, _STALLED, 1, interpret)


@partial(jax.jit, static_argnames=("cfg", "interpret", "solo"))   # eager calls reuse the compiled launch
def push_rounds(buf, count, rc, excess, height, stamp, indptr, heads, rev, fwd, terminal, *, n, round_id,
                room, max_rounds, side=0, cfg: Config = Config(), interpret: bool = False,
                solo: bool = False) -> Rounds:
    """Run push-relabel rounds over the queue ``buf[side * vertex_cap:][:count]`` in one launch.

    ``buf`` [2 * vertex_cap] int32 (the other half scratch); ``rc`` [2 * arc_cap], ``excess``, ``height``
    [vertex_cap] int32; ``stamp`` [vertex_cap] int32 claim stamps (none equal to the
    round ids of this launch: ``round_id``, ``round_id + 1``, ..., one per
    round); the residual CSR ``indptr``, ``heads``, reverse positions
    ``rev`` and ``fwd`` (1 on arcs of input arcs) int32; ``terminal``
    [vertex_cap] int32 (1: never active). Rounds run until the queue is
    empty, ``max_rounds`` ran, or their work (1 + queued arcs / ``STEP_LANES``
    each) reaches ``room``. With ``Config.solo`` > 0 a ``solo`` launch (one program) runs while the
    queue holds at most ``solo`` vertices and a grid launch while it holds more than ``solo // 2``.
    Returns :class:`Rounds`.
    """
    vc = height.shape[0]
    grid = 1 if solo else _resident(cfg, vc, cfg.push_block, interpret)
    meta = jnp.stack([jnp.asarray(x, jnp.int32) for x in (count, side, n, max_rounds, round_id)])
    room = jnp.reshape(jnp.asarray(room, jnp.float32), (1,))
    scratch = jnp.zeros(vc if cfg.relabel_from_push else 1, jnp.int32)   # the push phase's minima
    alias = [buf, rc, excess, height, _f32(stamp), jnp.zeros(_STATE, jnp.int32), scratch]
    out = _persistent_call(partial(_kernel, cfg=cfg, grid=grid, vc=vc, interpret=interpret, solo=solo),
                           [meta, room, indptr, heads, rev, fwd, terminal], alias, grid=grid, cfg=cfg,
                           interpret=interpret, warps=cfg.push_warps)
    buf, rc, excess, height, stamp, st, _ = out
    return Rounds(rc, excess, height, _i32(stamp), buf, st[_SIDE], st[_COUNT], st[_DONE],
                  _f32(st[_WORK]), st[_PUSHES], st[_RELABELS], st[_STALLED] > 0)
