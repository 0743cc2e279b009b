"""One level of the global relabel's backward BFS as one Pallas kernel.

The global relabel of :mod:`jaxmatch.flow.push_relabel` is a level-synchronous
BFS from the sinks over residual arcs, backwards. On the DIMACS families
and road graphs most of the solver's loop steps are BFS levels (63-67% of
them on the H100: 485,000 of genrmf21's 738,000 steps), each a handful of
XLA kernels for a frontier of a few thousand vertices, so the fixed cost of
a step, not the work, sets their time. This kernel does a level in one
launch:

1. every program takes chunks of :attr:`Config.block` frontier vertices
   (chunk i, i + programs, ...; the first ``count`` entries of
   ``frontier``) and walks their residual rows :attr:`Config.width` arcs at
   a time, as many times as its longest row needs;
2. an arc (y, x) of a frontier vertex y whose reverse (x, y) is residual,
   with x not labelled, proposes x for ``level``: ``old =
   atomic_min(dist[x], level)``, and the lane that finds ``old`` unlabelled
   (``INT_MAX``) owns x, so each vertex enters the next frontier once;
3. the owners reserve places in the next frontier with one atomic add on
   its count per chunk and write themselves there, in an order that
   depends on the timing of the programs; the vertices of interest among
   them are added up by a second atomic.

``dist`` and the result are the same whatever the timing: the set of
vertices at distance ``level`` is fixed, and so is each one's ``dist``.
``dist`` holds non-negative int32 levels (``INT_MAX`` unlabelled, -1
blocked) as float32 bit patterns, for the reason given in
:func:`jaxmatch.kernels._pallas._atomic_min`.

``_reference`` is the same level in pure JAX (the next frontier in vertex
order). Cost: O(frontier + its arcs) per level, one launch.

>>> import jax.numpy as jnp
>>> indptr = jnp.array([0, 1, 3, 4], jnp.int32)        # path 0 - 1 - 2, rows sorted by tail
>>> heads = jnp.array([1, 0, 2, 1], jnp.int32)
>>> rev = jnp.array([1, 0, 3, 2], jnp.int32)
>>> rc = jnp.array([1, 1, 1, 1], jnp.int32)
>>> dist = jnp.array([2**31 - 1, 2**31 - 1, 0], jnp.int32)
>>> frontier = jnp.array([2, 3, 3], jnp.int32)
>>> out = bfs_level(frontier, jnp.int32(1), jnp.int32(1), dist, indptr, heads, rev, rc,
...                 jnp.ones(3, bool), cfg=Config(block=2, width=2, programs=2), interpret=True)
>>> out[0].tolist(), out[1][:int(out[2])].tolist(), int(out[2]), int(out[3])
([2147483647, 1, 0], [1], 1, 1)
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import INT_MAX, take
from jaxmatch.kernels._pallas import _atomic_min, _barrier, _f32, _i32, _load, _store


class Config(NamedTuple):
    """The kernel's static knobs (hashable: a jit static argument)."""

    block: int = 32        # frontier vertices per chunk (a power of two)
    width: int = 16        # arcs per vertex per inner step (a power of two)
    programs: int = 1024   # programs of the grid, at most (and at most one per SM: see _resident)
    num_warps: int = 4
    levels: int = 256      # levels per launch, at most (the caller's loop launches again)
    spin: int = 1 << 26    # polls of the grid barrier before a program gives up (``stalled``)


# state words of the persistent kernel: three rotating next-frontier counters, three rotating
# per-level found counters, the barrier's arrivals, then what the launch hands back
_CNT, _FOUND, _ARRIVED, _COUNT, _SIDE, _TOTAL, _DONE, _STALLED = 0, 3, 6, 7, 8, 9, 10, 11
_STATE = 12


def _atomic_add(ref, i, value, interpret):
    """``old = ref[i]; ref[i] += value`` for a scalar int32 (a scalar atomic takes Triton's integer path)."""
    value = jnp.asarray(value, jnp.int32)
    if not interpret:
        return plgpu.atomic_add(ref, (i,), value)
    old = ref[i]
    ref[i] = old + value
    return old


def _put(ref, i, value, interpret):
    """``ref[i] = value`` for a scalar int32, atomically (seen by every program)."""
    value = jnp.asarray(value, jnp.int32)
    if not interpret:
        plgpu.atomic_xchg(ref, (i,), value)
    else:
        ref[i] = value


def _flat(f, ref, idx, val, mask, interpret):
    """``f`` (an atomic or a store of :mod:`jaxmatch.kernels._pallas`) on a 2-D tile: as is on the GPU, flattened when interpreted."""
    if not interpret:
        return f(ref, idx, val, mask, interpret)
    out = f(ref, idx.reshape(-1), val.reshape(-1), mask.reshape(-1), interpret)
    return None if out is None else out.reshape(idx.shape)


def _level(state, buf, dist, counted, indptr, heads, rev, rc, *, vc, side, count, level, slot,
           program, grid, cfg, interpret):
    """Program ``program``'s share of one level: chunks program, program + grid, ... of the frontier
    ``buf[side * vc:][:count]``; new vertices go to the other half, counted in ``state``'s slot ``slot``."""
    block, width = cfg.block, cfg.width
    cols = jnp.arange(width, dtype=jnp.int32)[None, :]
    slots = jnp.arange(block, dtype=jnp.int32)
    base_in, base_out = side * vc, (1 - side) * vc

    def chunk(c):
        rows = c * block + slots
        ok = rows < count
        y = _load(buf, base_in + rows, ok, 0, volatile=True)   # written by other programs: bypass L1
        start = _load(indptr, y, ok, 0)
        deg = jnp.where(ok, _load(indptr, y + 1, ok, 0) - start, 0)

        def step(j, carry):
            q = j * width + cols
            valid = q < deg[:, None]
            k = start[:, None] + q
            x = _load(heads, k, valid, 0).astype(jnp.int32)
            back = _load(rc, _load(rev, k, valid, 0), valid, 0) > 0
            cand = valid & back & (_i32(_load(dist, x, valid & back, 0.0, volatile=True)) == INT_MAX)
            old = _flat(_atomic_min, dist, x, jnp.full((block, width), level, jnp.int32), cand, interpret)
            new = cand & (old == INT_MAX)
            ones = new.astype(jnp.int32)   # int32 sums throughout (jnp.sum widens under x64)
            n_row = jnp.sum(ones, axis=1, dtype=jnp.int32)
            n_new = jnp.sum(n_row, dtype=jnp.int32)

            @pl.when(n_new > 0)
            def _():
                first = _atomic_add(state, _CNT + slot, n_new, interpret)
                before = jnp.cumsum(n_row, dtype=jnp.int32) - n_row
                pos = base_out + first + before[:, None] + jnp.cumsum(ones, axis=1, dtype=jnp.int32) - 1
                _flat(_store, buf, pos, x, new, interpret)
                found = jnp.sum(jnp.where(new, _load(counted, x, new, 0), 0), dtype=jnp.int32)
                _atomic_add(state, _FOUND + slot, found, interpret)
            return carry

        lax.fori_loop(0, (jnp.max(deg) + width - 1) // width, step, ())

    chunks = (count + block - 1) // block
    mine = jnp.maximum(chunks - program + grid - 1, 0) // grid   # chunks program, program + grid, ...
    lax.fori_loop(0, mine, lambda t, carry: (chunk(program + t * grid), carry)[1], ())


def _kernel(meta_ref, indptr, heads, rev, rc, counted, buf_in, dist_in, state_in, buf, dist, state, *,
            cfg: Config, grid: int, vc: int, interpret: bool):
    """Persistent BFS: levels until the frontier is empty, ``want`` counted vertices are found, or
    ``max_levels`` levels ran; a grid barrier (arrivals counted in one word) between levels."""
    del buf_in, dist_in, state_in   # aliased: the output refs hold the same data
    level0, count0, max_levels, want, side0 = (meta_ref[i] for i in range(5))
    program = pl.program_id(0)

    def go(c):
        count, found, done, side, stalled = c
        return (count > 0) & (done < max_levels) & (found < want)

    def body(c):
        count, found, done, side, stalled = c
        slot, ahead = done % 3, (done + 1) % 3

        @pl.when(program == 0)
        def _():   # the slot of level done + 1: last read before the previous barrier
            _put(state, _CNT + ahead, 0, interpret)
            _put(state, _FOUND + ahead, 0, interpret)

        _level(state, buf, dist, counted, indptr, heads, rev, rc, vc=vc, side=side, count=count, level=level0 + done, slot=slot, program=program, grid=grid,
               cfg=cfg, interpret=interpret)
        # grid barrier: every program's writes of this level before anyone reads its counts
        _barrier(interpret)
        target = (done + 1) * grid
        seen = _atomic_add(state, _ARRIVED, 1, interpret) + 1
        seen, polls = lax.while_loop(lambda v: (v[0] < target) & (v[1] < cfg.spin),
                                     lambda v: (_atomic_add(state, _ARRIVED, 0, interpret), v[1] + 1),
                                     (seen, jnp.int32(0)))
        _barrier(interpret)
        nxt = _atomic_add(state, _CNT + slot, 0, interpret)
        got = _atomic_add(state, _FOUND + slot, 0, interpret)
        return nxt, found + got, done + 1, 1 - side, stalled | (seen < target)

    count, found, done, side, stalled = lax.while_loop(
        go, body, (count0, jnp.int32(0), jnp.int32(0), side0, jnp.bool_(False)))

    @pl.when(program == 0)
    def _():
        for i, v in ((_COUNT, count), (_SIDE, side), (_TOTAL, found), (_DONE, done)):
            _put(state, i, v, interpret)

    @pl.when(stalled)
    def _():
        _put(state, _STALLED, 1, interpret)


def _resident(cfg: Config, vc: int, interpret: bool) -> int:
    """Programs of the grid: all co-resident (one per SM), as the grid barrier needs; one when
    interpreted (programs run one after another there)."""
    if interpret:
        return 1
    sms = getattr(jax.devices()[0], "core_count", None) or 1
    return max(1, min(cfg.programs, sms, -(-vc // cfg.block)))


def bfs_levels(buf, count, level, dist, indptr, heads, rev, rc, counted, *, side=0, want=INT_MAX, max_levels=None,
               cfg: Config = Config(), interpret: bool = False):
    """Run BFS levels ``level``, ``level + 1``, ... from the frontier ``buf[side * vertex_cap:][:count]``
    in one launch.

    ``buf`` [2 * vertex_cap] int32: the frontier in half ``side``, the other
    half scratch (the halves swap every level). Each level labels, at its
    level, the unlabelled tails of the residual arcs into the frontier (see
    the module docstring); the launch stops when the frontier is empty, when
    ``want`` vertices of ``counted`` were labelled, or after ``max_levels``
    (default ``cfg.levels``) levels. ``dist`` [vertex_cap] int32
    (``INT_MAX`` unlabelled, -1 blocked). Returns ``(dist, buf, side, count,
    found, levels, stalled)``: the frontier is ``buf[side * vertex_cap:][:count]``,
    ``found`` the counted vertices labelled, ``levels`` the levels run,
    ``stalled`` True if a program gave up waiting at a grid barrier (never
    expected: the grid holds one program per SM).
    """
    vc = dist.shape[0]
    grid = _resident(cfg, vc, interpret)
    max_levels = cfg.levels if max_levels is None else max_levels
    meta = jnp.stack([jnp.asarray(x, jnp.int32) for x in (level, count, max_levels, want, side)])
    ins = [meta, indptr, heads, rev, rc, counted.astype(jnp.int32), buf, _f32(dist), jnp.zeros(_STATE, jnp.int32)]
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,) * x.ndim)  # noqa: E731
    kernel = pl.pallas_call(
        partial(_kernel, cfg=cfg, grid=grid, vc=vc, interpret=interpret),
        grid=(grid,),
        in_specs=[whole(x) for x in ins],
        out_specs=[whole(x) for x in ins[-3:]],
        out_shape=[jax.ShapeDtypeStruct(x.shape, x.dtype) for x in ins[-3:]],
        input_output_aliases={6: 0, 7: 1, 8: 2},
        compiler_params=plgpu.CompilerParams(num_warps=cfg.num_warps, num_stages=1),
        interpret=interpret,
    )
    buf, d, st = kernel(*ins)
    return _i32(d), buf, st[_SIDE], st[_COUNT], st[_TOTAL], st[_DONE], st[_STALLED] > 0


def bfs_level(frontier, count, level, dist, indptr, heads, rev, rc, counted, out=None, *, cfg: Config = Config(),
              interpret: bool = False):
    """Label, at ``level``, the unlabelled tails of the residual arcs into the first ``count`` vertices of ``frontier``.

    One level of :func:`bfs_levels`. ``dist`` [vertex_cap] int32 (``INT_MAX``
    unlabelled, -1 blocked); ``heads``, ``rev``, ``rc`` the residual CSR's
    heads, reverse positions and residual capacities (rows by tail,
    ``indptr``); ``counted`` [vertex_cap] the vertices of interest; ``out``
    [vertex_cap] int32 a buffer for the next frontier (its contents do not
    matter; a fresh one if None). Returns ``(dist, next frontier
    [vertex_cap]: its first count entries, count, vertices of interest among
    them)``.
    """
    vc = dist.shape[0]
    spare = jnp.full(vc, vc, jnp.int32) if out is None else out
    d, buf, _, cnt, found, done, _ = bfs_levels(jnp.concatenate([frontier, spare]), count, level, dist, indptr,
                                                heads, rev, rc, counted, max_levels=1, cfg=cfg, interpret=interpret)
    return d, jnp.where(done > 0, buf[vc:], spare), cnt * (done > 0), found


def _reference(frontier, count, level, dist, indptr, heads, rev, rc, counted):
    """The same level in pure JAX; the next frontier in vertex order."""
    vc = dist.shape[0]
    size = heads.shape[0]
    src = jnp.searchsorted(indptr, jnp.arange(size, dtype=jnp.int32), side="right").astype(jnp.int32) - 1
    in_frontier = jnp.zeros(vc, bool).at[jnp.where(jnp.arange(vc) < count, frontier, vc)].set(True, mode="drop")
    hit = take(in_frontier, src, False) & (take(rc, rev, 0) > 0) & (take(dist, heads, -1) == INT_MAX)
    new = jnp.zeros(vc, bool).at[jnp.where(hit, heads, vc)].set(True, mode="drop")
    dist = jnp.where(new, level, dist).astype(jnp.int32)
    ids = jnp.arange(vc, dtype=jnp.int32)
    order = jnp.argsort(~new, stable=True).astype(jnp.int32)
    n = jnp.sum(new, dtype=jnp.int32)
    nxt = jnp.where(ids < n, ids[order], vc)
    return dist, nxt, n, jnp.sum(new & counted, dtype=jnp.int32)
