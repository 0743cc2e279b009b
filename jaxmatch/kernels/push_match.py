"""G-PR's push rounds in one persistent Pallas kernel: many rounds per launch.

The array form (:func:`jaxmatch.bipartite.push_relabel._push`) pays a loop
step of XLA kernels for every push round, and on meshes, road networks and
grids G-PR needs 10^4-10^5 rounds with a few hundred active columns each.
Here one launch runs up to :attr:`Config.rounds` rounds over the queue of
active columns (unmatched, not known to be unmatchable); the caller's loop
runs the global relabel (:func:`jaxmatch.kernels.bfs_level.alternating_bfs`)
and the shrink between launches, as the paper's host loop does.

One round over the queue ``Q`` (one half of a ping-pong buffer), every
program taking chunks of :attr:`Config.push_block` queued columns (of
:attr:`Config.match_small` while the queue holds at most that many per program, where
set: off by default, 32 was mixed on the H200, RESULTS session 34; the per-column writes go through
:func:`jaxmatch.kernels._pallas._per_row`, as in :mod:`jaxmatch.kernels.push_flow`), each a
row of a tile that walks the column's rows :attr:`Config.match_width` at a
time:

1. **push** (the paper's Algorithm 9): column ``v`` finds the row ``u`` of
   least ``psi_r`` among its neighbours (ties to the smallest row id). If
   ``psi_r(u) >= inf``, v is unmatchable (``col_mate = -2``). Otherwise v
   sets ``psi_c(v) = psi_r(u) + 1`` and ``col_mate(v) = u`` (v's thread is
   their one writer) and takes u with an atomic exchange
   ``w = row_mate[u]; row_mate[u] = v``; a ``w >= 0`` (u's mate before, or
   a column that took u earlier in this round) is unmatched now and is
   appended to the next queue (the other half; one atomic add on the
   round's counter per chunk);
2. a **grid barrier** (:func:`jaxmatch.kernels._pallas._grid_sync`);
3. **relabel the rows**: each column of ``Q`` that pushed to ``u`` writes
   ``psi_r(u) = psi_c(v) + 1``;
4. a grid barrier; the next round runs over the other half.

Why this stays a correct G-PR under concurrency (the paper's argument for
its racing threads, made simpler by the atomic exchange and the barrier):

* Row labels are written only in phase 3, so in phase 1 every column reads
  the labels the round started with, and every column that pushes to ``u``
  read the same ``psi_r(u)``: the phase-3 stores to ``u`` all write the
  same value, ``psi_r(u) + 2``. The labels stay valid as in a sequential
  run: ``psi_c(v) = min + 1`` is at most ``psi_r(x) + 1`` over v's rows
  ``x``; u's label becomes ``psi_c(v) + 1`` for whichever column holds it
  after the round (all pushers to u have the same ``psi_c``); a column
  that lost u again has ``psi_c = psi_r(u)_old + 1 <= psi_r(u)_new + 1``;
  a displaced earlier mate ``w`` had ``psi_c(w) <= psi_r(u)_old - 1``.
  Labels only grow, so a label ``>= inf`` still proves that no augmenting
  path starts at the column.
* The exchange serialises the pushes to one row: each one matches u to its
  column and hands the column it displaced to exactly one thread, so
  ``row_mate`` is a matching at every moment (no roll-back, no
  FixMatching for rows), and every column that becomes unmatched enters
  the next queue exactly once; a queued column either matches or becomes
  unmatchable in its round, so the queue holds each active column once.
  ``col_mate`` of a displaced column is stale until the caller's
  :func:`jaxmatch.bipartite.push_relabel.consistent_col_mate`.
* The matching found may differ from run to run (which of several pushers
  to a row holds it is decided by the order of their exchanges); its size
  at the end does not: the loop ends with no active column, a maximum
  matching.

``row_mate`` holds int32 column ids (-1 free) as float32 bit patterns: an
exchange moves the bits unchanged (:func:`jaxmatch.kernels._pallas._exchange`).
Lowering, grid barrier and the rotating counter slots are those of
:mod:`jaxmatch.kernels.bfs_level` and :mod:`jaxmatch.kernels.push_flow`. In
interpret mode (the CPU tests) the grid is one program and the exchanges
run in lane order. The pure-JAX reference is the array form's ``_push``.

>>> import jax.numpy as jnp
>>> indptr = jnp.array([0, 1, 3], jnp.int32)   # column 0: row 0; column 1: rows 0, 1
>>> rows = jnp.array([0, 0, 1], jnp.int32)
>>> out = push_match_rounds(jnp.array([0, 2, 2, 2], jnp.int32), 1,    # the queue: column 0
...                         jnp.array([1, -1], jnp.int32), jnp.array([-1, 0], jnp.int32),   # row 0 - column 1
...                         jnp.array([2, 0], jnp.int32), jnp.array([0, 1], jnp.int32), indptr, rows,
...                         inf=4, max_rounds=10, cfg=Config(push_block=2, match_width=2), interpret=True)
>>> out.row_mate.tolist(), int(out.count), int(out.rounds), int(out.pushes)   # 0 takes row 0, 1 moves to row 1
([0, 1], 0, 2, 2)
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from jaxmatch._ops import INT_MAX
from jaxmatch.kernels._pallas import (Config, _append, _atomic_add, _chunks, _exchange, _f32, _grid_sync, _i32,
                                      _load, _per_row, _put, _persistent_call, _read, _resident, _store)

# state words: three rotating next-queue counters, the barrier's arrivals, then what the launch hands back
_CNT, _ARRIVED, _COUNT, _SIDE, _DONE, _STALLED, _PUSHES = 0, 3, 4, 5, 6, 7, 8
_STATE = 9


class MatchRounds(NamedTuple):
    """What a launch hands back: the state, the queue ``buf[side * slots:][:count]``, the rounds
    run, the pushes, and whether a program gave up at a grid barrier."""

    row_mate: jax.Array
    col_mate: jax.Array
    psi_r: jax.Array
    psi_c: jax.Array
    buf: jax.Array
    side: jax.Array
    count: jax.Array
    rounds: jax.Array
    pushes: jax.Array
    stalled: jax.Array


def _kernel(meta_ref, indptr, rows, buf_in, rm_in, cm_in, pr_in, pc_in, state_in,
            buf, row_mate, col_mate, psi_r, psi_c, state, *, cfg: Config, grid: int, slots: int, interpret: bool):
    del buf_in, rm_in, cm_in, pr_in, pc_in, state_in   # aliased with the outputs
    count0, side0, inf, max_rounds = (meta_ref[i] for i in range(4))
    program = pl.program_id(0)
    threads = 32 * cfg.push_warps
    cols = jnp.arange(cfg.match_width, dtype=jnp.int32)[None, :]
    chunks = lambda count, fn: _chunks(count, cfg.push_block, program, grid, fn, cfg.match_small)  # noqa: E731

    def column(pos, count, base_in):
        ok = pos < count
        return _load(buf, base_in + pos, ok, 0, volatile=True), ok

    def push_chunk(pos, count, base_in, base_out, slot):
        v, ok = column(pos, count, base_in)
        start = _load(indptr, v, ok, 0)
        deg = jnp.where(ok, _load(indptr, v + 1, ok, 0) - start, 0)

        def tile(j, c):
            best, arg = c
            q = j * cfg.match_width + cols
            valid = q < deg[:, None]
            r = _load(rows, start[:, None] + q, valid, 0)
            key = jnp.where(valid, _load(psi_r, r, valid, INT_MAX, volatile=True), INT_MAX)
            b = jnp.min(key, axis=1)
            a = jnp.min(jnp.where(valid & (key == b[:, None]), r, INT_MAX), axis=1)
            better = (b < best) | ((b == best) & (a < arg))
            return jnp.where(better, b, best), jnp.where(better, a, arg)

        full = jnp.full(v.shape, INT_MAX, jnp.int32)
        best, u = lax.fori_loop(0, (jnp.max(deg) + cfg.match_width - 1) // cfg.match_width, tile, (full, full))
        push = ok & (best < inf)
        _per_row(_store, col_mate, v, jnp.where(push, u, -2), ok, threads, interpret)
        _per_row(_store, psi_c, v, best + 1, push, threads, interpret)
        w = _per_row(_exchange, row_mate, u, v, push, threads, interpret)
        _append(state, _CNT + slot, buf, base_out, push & (w >= 0), w, interpret)   # the displaced columns
        n_push = jnp.sum(push.astype(jnp.int32), dtype=jnp.int32)

        @pl.when(n_push > 0)
        def _():
            _atomic_add(state, _PUSHES, n_push, interpret)

    def relabel_chunk(pos, count, base_in):
        v, ok = column(pos, count, base_in)
        u = _load(col_mate, v, ok, -2, volatile=True)
        pushed = ok & (u >= 0)
        _per_row(_store, psi_r, u, _load(psi_c, v, pushed, 0, volatile=True) + 1, pushed, threads, interpret)

    def go(c):
        count, done, side, stalled = c
        return (count > 0) & (done < max_rounds) & ~stalled

    def body(c):
        count, done, side, stalled = c
        slot, ahead = done % 3, (done + 1) % 3

        @pl.when(program == 0)
        def _():   # the slot of round done + 1: last read before the previous round's barriers
            _put(state, _CNT + ahead, 0, interpret)

        base_in, base_out = side * slots, (1 - side) * slots
        chunks(count, partial(push_chunk, count=count, base_in=base_in, base_out=base_out, slot=slot))
        ok1 = _grid_sync(state, _ARRIVED, (2 * done + 1) * grid, cfg.spin, interpret)
        chunks(count, partial(relabel_chunk, count=count, base_in=base_in))
        ok2 = _grid_sync(state, _ARRIVED, (2 * done + 2) * grid, cfg.spin, interpret)
        return _read(state, _CNT + slot, interpret), done + 1, 1 - side, stalled | ~(ok1 & ok2)

    count, done, side, stalled = lax.while_loop(go, body, (count0, jnp.int32(0), side0, jnp.bool_(False)))

    @pl.when(program == 0)
    def _():
        for i, v in ((_COUNT, count), (_SIDE, side), (_DONE, done)):
            _put(state, i, v, interpret)

    @pl.when(stalled)
    def _():
        _put(state, _STALLED, 1, interpret)


@partial(jax.jit, static_argnames=("cfg", "interpret"))   # eager calls reuse the compiled launch
def push_match_rounds(buf, count, row_mate, col_mate, psi_r, psi_c, indptr, rows, *, inf, max_rounds, side=0,
                      cfg: Config = Config(), interpret: bool = False) -> MatchRounds:
    """Run G-PR push rounds over the active columns ``buf[side * slots:][:count]`` in one launch.

    ``buf`` [2 * slots] int32 (the other half scratch; ``slots`` at least the
    unmatched columns); ``row_mate`` [row_cap], ``col_mate``, ``psi_r``,
    ``psi_c`` int32; the column-major CSR ``indptr`` [col_cap + 1] and
    ``rows`` int32. Rounds run until the queue is empty or ``max_rounds``
    ran. Returns :class:`MatchRounds` (``col_mate`` may be stale for
    displaced columns).
    """
    slots = buf.shape[0] // 2
    grid = _resident(cfg, slots, cfg.push_block, interpret)
    meta = jnp.stack([jnp.asarray(x, jnp.int32) for x in (count, side, inf, max_rounds)])
    alias = [buf, _f32(row_mate), col_mate, psi_r, psi_c, jnp.zeros(_STATE, jnp.int32)]
    out = _persistent_call(partial(_kernel, cfg=cfg, grid=grid, slots=slots, interpret=interpret),
                           [meta, indptr, rows], alias, grid=grid, cfg=cfg, interpret=interpret,
                           warps=cfg.push_warps)
    buf, row_mate, col_mate, psi_r, psi_c, st = out
    return MatchRounds(_i32(row_mate), col_mate, psi_r, psi_c, buf, st[_SIDE], st[_COUNT], st[_DONE],
                       st[_PUSHES], st[_STALLED] > 0)
