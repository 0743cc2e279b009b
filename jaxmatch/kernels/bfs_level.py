"""Level-synchronous BFS in one persistent Pallas kernel: many levels per launch.

Two BFS run here: the backward residual BFS of the max-flow solver's global
relabel (:mod:`jaxmatch.flow.push_relabel`, :func:`bfs_levels`) and G-PR's
alternating BFS from the unmatched rows (:mod:`jaxmatch.bipartite.push_relabel`,
:func:`alternating_bfs`). On meshes, road networks and the DIMACS families
such a BFS has thousands of levels with frontiers of a few thousand
vertices, so as XLA loop steps its cost is the fixed cost of a step (tens
of microseconds), not its work. One launch here runs up to
:attr:`Config.levels` levels:

1. the grid holds at most one program per SM (all resident at once); in a
   level every program takes chunks of :attr:`Config.block` frontier
   vertices (chunk i, i + programs, ...) and walks their CSR rows
   :attr:`Config.width` arcs at a time, as many times as its longest row
   needs (a chunk's vertices, 32 by default against 256 threads, are held by
   several threads each; safe here, since what they load, the frontier and
   the CSR, does not change during a level, and every atomic is on the
   ``[block, width]`` tile: see :func:`jaxmatch.kernels._pallas._row_load`);
2. an arc (y, x) that may label x (flow: its reverse (x, y) is residual;
   G-PR: any edge from a row to a column) proposes x for the level:
   ``old = atomic_min(dist[x], level)``, and the lane that finds ``old``
   unlabelled (``INT_MAX``) owns x, so each vertex is labelled and enters
   the next frontier once (G-PR: x is a column, and its mate row, written
   by x's owner alone, enters the frontier two levels up);
3. the owners reserve places in the next frontier (the other half of a
   ping-pong buffer) with one atomic add on the level's counter per chunk;
   the vertices of interest are added up by a second atomic;
4. a grid barrier ends the level: every program arrives with an atomic add
   (release order) on one word and polls it with volatile loads until all
   have arrived, then reads it once with an acquire atomic; thread barriers
   before the arrival and after the poll order each program's writes
   against the others' reads. After it every program reads the level's
   counters (volatile loads), so all take the same decision to go on. The
   atomics inside a level (the minimum, the counters) have relaxed order
   (:func:`jaxmatch.kernels._pallas._rmw`): the barrier orders the levels.
   Counters rotate over three slots: program 0 clears the slot of level
   L + 1 during level L, which no program reads any more (all read it
   before arriving at the barrier of level L - 1) and no program writes
   yet (they do after the barrier of level L). The frontier half written in
   a level is read with volatile loads in the next, past the L1 caches of
   other SMs.

Why the result does not depend on the timing: the set of vertices at
distance L is fixed by the levels before it, each vertex is claimed once
by the atomic minimum, and a level starts only after every write of the
previous one (the barrier), so ``dist`` (and G-PR's labels) equal those
of the level-synchronous XLA version bit for bit; only the order inside a
frontier half varies. A program that polls the barrier more than
:attr:`Config.spin` times gives up and the launch reports ``stalled``
(never seen: the grid never exceeds the SM count). Under ``jax.vmap`` the
kernel is refused: a batched launch would hold more programs than can be
resident.

Lowering: Pallas's Triton backend, the one the installed JAX (0.10-0.11)
supports for this pattern: it has scalar and tensor atomics, a thread
barrier (``debug_barrier``) and dynamic loops; the Mosaic GPU backend is
built around TMA and warpgroup pipelines over static tiles and has no
gather or scatter atomics of this kind. ``dist`` holds non-negative int32
levels (``INT_MAX`` unlabelled, -1 blocked) as float32 bit patterns, for
the reason given in :func:`jaxmatch.kernels._pallas._atomic_min`. In
interpret mode (the CPU tests) the grid is one program and the barrier a
no-op.

**Queued row bounds** (``Config.bounds``, on by default: 1-4% off max flow's wall on genrmf21,
rlg21 and road21 on the H200, RESULTS session 34; G-PR's share not measured alone). A level is a
chain of dependent memory trips (frontier id, its row bounds, the arcs, the claim, the
append); neither kind of level uses the frontier vertex itself, only its row. With ``bounds``
the claimer loads the new vertex's row bounds beside its claim (for G-PR, those of the
column's mate row) and stores them in two arrays at the vertex's place in the next frontier;
every level but a launch's first reads them there, one dependent trip less. The ids are
still queued (the callers and a launch's first level read them), so the labels, frontiers
and counts are those of the plain levels.

``_reference`` is one level in pure JAX (the next frontier in vertex
order); :func:`bfs_level` is one level of the kernel. Cost: O(frontier +
its arcs) per level and a barrier, one launch per ``Config.levels`` levels.

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

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from jaxmatch._ops import INT_MAX, compact, take
from jaxmatch.kernels._pallas import (_append, _atomic_add, _atomic_min, _chunks, _f32, _flat, _grid_sync, _i32, _load,
                                      _put, _read, _persistent_call, _resident, _store)
from jaxmatch.kernels._pallas import Config, choose  # noqa: F401  (the solvers' kernel= option)


# state words of the persistent kernel: three rotating next-frontier counters, three rotating
# per-level found counters, the barrier's arrivals, then what the launch hands back
_CNT, _FOUND, _ARRIVED, _COUNT, _SIDE, _TOTAL, _DONE, _STALLED, _LAST = 0, 3, 6, 7, 8, 9, 10, 11, 12
_STATE = 13


def _expand(state, buf, bounds, *, vc, side, count, first, slot, program, grid, cfg, arcs, visit, interpret):
    """Program ``program``'s share of one level: chunks program, program + grid, ... of the frontier
    ``buf[side * vc:][:count]``, their CSR rows ``arcs = (indptr, heads)`` walked ``cfg.width`` arcs
    at a time. ``visit(x, k, valid) -> (new, push, found, (ids, may))`` claims heads; the ``push``
    ids of the ``new`` lanes enter the other half, counted in ``state``'s slot ``slot``, with
    ``found`` added up. With ``bounds`` (``Config.bounds``: two arrays shaped as ``buf``) the row
    bounds of ``ids`` (``may``: a superset of ``new``, known before the claim) are loaded beside
    the claim and queued with the ids, and every level but a launch's ``first`` reads them there."""
    indptr, heads = arcs
    block, width = cfg.block, cfg.width
    cols = jnp.arange(width, dtype=jnp.int32)[None, :]
    base_in, base_out = side * vc, (1 - side) * vc

    def chunk(rows):
        ok = rows < count

        def from_ids():
            y = _load(buf, base_in + rows, ok, 0, volatile=True)   # written by other programs: bypass L1
            start = _load(indptr, y, ok, 0)
            return start, jnp.where(ok, _load(indptr, y + 1, ok, 0) - start, 0)

        def from_queue():
            return (_load(bounds[0], base_in + rows, ok, 0, volatile=True),
                    jnp.where(ok, _load(bounds[1], base_in + rows, ok, 0, volatile=True), 0))
        start, deg = lax.cond(first, from_ids, from_queue) if bounds else from_ids()

        def step(j, carry):
            q = j * width + cols
            valid = q < deg[:, None]
            k = start[:, None] + q
            x = _load(heads, k, valid, 0).astype(jnp.int32)
            new, push, found, (ids, may) = visit(x, k, valid)
            extra = ()
            if bounds:   # issued after the claim, not waiting for it
                lo = _load(indptr, ids, may, 0)
                extra = ((bounds[0], lo), (bounds[1], _load(indptr, ids + 1, may, 0) - lo))
            _append(state, _CNT + slot, buf, base_out, new, push, interpret, extra)

            n_found = jnp.sum(found, dtype=jnp.int32)

            @pl.when(n_found > 0)
            def _():
                _atomic_add(state, _FOUND + slot, n_found, interpret)
            return carry

        lax.fori_loop(0, (jnp.max(deg) + width - 1) // width, step, ())

    _chunks(count, block, program, grid, chunk)


_claim_min = partial(_atomic_min, relaxed=True)   # a level's claims: the barrier orders the levels


def _residual_level(reads, dists, level, interpret):
    """``visit`` of the flow's backward residual BFS: an arc (y, x) whose reverse (x, y) is residual
    (``back``: each arc's reverse capacity) labels an unlabelled x at ``level``; x enters the
    frontier; counted x are found."""
    (indptr, heads, back, counted), (dist,) = reads, dists

    def visit(x, k, valid):
        # a level is a chain of dependent memory trips, so: the reverse capacity is read in one trip
        # (``back``, not ``rc[rev[k]]``), and x's label is not loaded before the claim, which hands it
        # back (a blocked x keeps -1, the minimum): 10% less time on genrmf, RLG and road flows (H100,
        # RESULTS session 29); whether x counts is fetched beside the claim, not after it
        cand = valid & (_load(back, k, valid, 0) > 0)
        wanted = _load(counted, x, cand, 0)
        old = _flat(_claim_min, dist, x, jnp.full(x.shape, level, jnp.int32), cand, interpret)
        new = cand & (old == INT_MAX)
        return new, x, jnp.where(new, wanted, 0), (x, cand)
    return (indptr, heads), visit


def _alternating_level(reads, dists, level, interpret):
    """``visit`` of G-PR's global relabel (rows at even ``level``): an edge (y, x) labels an unlabelled
    column x at ``level + 1``; x's mate row, if any, gets ``level + 2`` and enters the frontier
    (each matched row is the mate of one column, so one writer); new columns are found."""
    (indptr, heads, mate), (psi_r, psi_c) = reads, dists

    def visit(x, k, valid):
        cand = valid & (_i32(_load(psi_c, x, valid, 0.0, volatile=True)) == INT_MAX)
        mated = _load(mate, x, cand, -1)    # beside the claim, not after it
        old = _flat(_claim_min, psi_c, x, jnp.full(x.shape, level + 1, jnp.int32), cand, interpret)
        col_new = cand & (old == INT_MAX)
        r = jnp.where(col_new, mated, -1)
        new = col_new & (r >= 0)
        _flat(_store, psi_r, r, jnp.full(x.shape, level + 2, jnp.int32), new, interpret)
        return new, r, col_new.astype(jnp.int32), (mated, cand & (mated >= 0))
    return (indptr, heads), visit


def _kernel(meta_ref, *refs, kind, n_reads: int, n_dists: int, cfg: Config, grid: int, vc: int, interpret: bool):
    """Persistent BFS: levels until the frontier is empty, ``want`` vertices are found, or
    ``max_levels`` levels ran; a grid barrier (arrivals counted in one word) between levels.
    ``refs``: the read-only inputs, then (buf, *dists, state) in and out (aliased)."""
    reads = refs[:n_reads]
    n_bounds = 2 if cfg.bounds else 0
    buf, *dists, state = refs[n_reads + n_dists + 2 + n_bounds:][:n_dists + 2]
    bounds = refs[-n_bounds:] if n_bounds else ()
    level0, count0, max_levels, want, side0, step = (meta_ref[i] for i in range(6))
    program = pl.program_id(0)

    def go(c):
        count, found, done, side, last, stalled = c
        return (count > 0) & (done < max_levels) & (found < want)

    def body(c):
        count, found, done, side, last, stalled = c
        slot, ahead = done % 3, (done + 1) % 3

        @pl.when(program == 0)
        def _():   # the slot of level done + 1: last read before the previous barrier
            _put(state, _CNT + ahead, 0, interpret)
            _put(state, _FOUND + ahead, 0, interpret)

        arcs, visit = kind(reads, dists, level0 + step * done, interpret)
        _expand(state, buf, bounds, vc=vc, side=side, count=count, first=done == 0, slot=slot, program=program,
                grid=grid, cfg=cfg, arcs=arcs, visit=visit, interpret=interpret)
        # grid barrier: every program's writes of this level before anyone reads its counts
        ok = _grid_sync(state, _ARRIVED, (done + 1) * grid, cfg.spin, interpret)
        nxt = _read(state, _CNT + slot, interpret)
        got = _read(state, _FOUND + slot, interpret)
        return nxt, found + got, done + 1, 1 - side, got, stalled | ~ok

    zero = jnp.int32(0)
    count, found, done, side, last, stalled = lax.while_loop(
        go, body, (count0, zero, zero, side0, zero, jnp.bool_(False)))

    @pl.when(program == 0)
    def _():
        for i, v in ((_COUNT, count), (_SIDE, side), (_TOTAL, found), (_DONE, done), (_LAST, last)):
            _put(state, i, v, interpret)

    @pl.when(stalled)
    def _():
        _put(state, _STALLED, 1, interpret)


def _launch(kind, reads, buf, dists, *, count, level, step, side, want, max_levels, cfg, interpret):
    """One launch of the persistent kernel; returns (buf, dists, the state words)."""
    vc = buf.shape[0] // 2
    grid = _resident(cfg, vc, cfg.block, interpret)
    max_levels = cfg.levels if max_levels is None else max_levels
    meta = jnp.stack([jnp.asarray(x, jnp.int32) for x in (level, count, max_levels, want, side, step)])
    scratch = [jnp.zeros_like(buf), jnp.zeros_like(buf)] if cfg.bounds else []   # the queued row bounds
    alias = [buf, *dists, jnp.zeros(_STATE, jnp.int32), *scratch]
    out = _persistent_call(partial(_kernel, kind=kind, n_reads=len(reads), n_dists=len(dists), cfg=cfg, grid=grid,
                                   vc=vc, interpret=interpret),
                           [meta, *reads], alias, grid=grid, cfg=cfg, interpret=interpret)
    return out[0], out[1:1 + len(dists)], out[1 + len(dists)]


@partial(jax.jit, static_argnames=("cfg", "interpret"))   # eager calls reuse the compiled launch
def bfs_levels(buf, count, level, dist, indptr, heads, back, counted, *, side=0, want=INT_MAX, max_levels=None,
               cfg: Config = Config(), interpret: bool = False):
    """Run BFS levels ``level``, ``level + 1``, ... from the frontier ``buf[side * vertex_cap:][:count]``
    in one launch.

    ``buf`` [2 * vertex_cap] int32: the frontier in half ``side``, the other
    half scratch (the halves swap every level). Each level labels, at its
    level, the unlabelled tails of the residual arcs into the frontier (see
    the module docstring; ``back`` [arcs] int32: each arc's reverse residual
    capacity, ``rc[rev]``, gathered once by the caller so that a level
    reads it in one trip); the launch stops when the frontier is empty, when
    ``want`` vertices of ``counted`` were labelled, or after ``max_levels``
    (default ``cfg.levels``) levels. ``dist`` [vertex_cap] int32
    (``INT_MAX`` unlabelled, -1 blocked). Returns ``(dist, buf, side, count,
    found, levels, stalled)``: the frontier is ``buf[side * vertex_cap:][:count]``,
    ``found`` the counted vertices labelled, ``levels`` the levels run,
    ``stalled`` True if a program gave up waiting at a grid barrier (never
    expected: the grid holds one program per SM).
    """
    reads = (indptr, heads, back, counted.astype(jnp.int32))
    buf, (d,), st = _launch(_residual_level, reads, buf, [_f32(dist)], count=count, level=level, step=1, side=side,
                            want=want, max_levels=max_levels, cfg=cfg, interpret=interpret)
    return _i32(d), buf, st[_SIDE], st[_COUNT], st[_TOTAL], st[_DONE], st[_STALLED] > 0


@partial(jax.jit, static_argnames=("cfg", "interpret"))   # eager calls reuse the compiled launch
def alternating_bfs(indptr, heads, mate, psi_r, n_rows, *, cfg: Config = Config(), interpret: bool = False):
    """G-PR's global relabel (:func:`jaxmatch.bipartite.push_relabel.global_relabel`) in the
    persistent kernel: from the rows with ``psi_r == 0`` (the unmatched ones), rows at level 2i
    label their unlabelled columns 2i + 1 and those columns' mates 2i + 2.

    ``indptr``, ``heads``: the row-major CSR (row -> columns); ``mate`` [col_cap]
    the row matched to each column or -1 (consistent with the rows' mates);
    ``psi_r`` [row_cap] int32: 0 at the roots, anything else elsewhere (only
    the rows reached are written). Returns ``(psi_r, psi_c, steps, stalled)``:
    ``psi_c`` is ``INT_MAX`` where no column was reached, ``psi_r`` keeps its
    input where no row was; ``steps`` the steps the level-synchronous
    version takes (the BFS levels, plus its last step that finds nothing).
    """
    row_cap = psi_r.shape[0]
    ids = jnp.arange(row_cap, dtype=jnp.int32)
    roots = (ids < n_rows) & (psi_r == 0)
    frontier, count = compact(roots, ids, row_cap)
    buf = jnp.concatenate([frontier, jnp.full(row_cap, row_cap, jnp.int32)])
    psi_c = _f32(jnp.full(mate.shape[0], INT_MAX, jnp.int32))

    def launch(c):
        buf, psi_r, psi_c, count, side, done, last, stalled = c
        buf, (psi_r, psi_c), st = _launch(_alternating_level, (indptr, heads, mate), buf, [psi_r, psi_c],
                                          count=count, level=2 * done, step=2, side=side, want=INT_MAX,
                                          max_levels=None, cfg=cfg, interpret=interpret)
        return (buf, psi_r, psi_c, st[_COUNT], st[_SIDE], done + st[_DONE], st[_LAST],
                stalled | (st[_STALLED] > 0))

    zero = jnp.int32(0)
    _, psi_r, psi_c, _, _, done, last, stalled = lax.while_loop(
        lambda c: c[3] > 0, launch, (buf, psi_r, psi_c, count, zero, zero, zero, jnp.bool_(False)))
    return psi_r, _i32(psi_c), jnp.maximum(done + (last > 0), 1), stalled


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
                                                heads, take(rc, rev, 0), counted, max_levels=1, cfg=cfg,
                                                interpret=interpret)
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
