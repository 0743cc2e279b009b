"""Pallas helpers shared by the kernels: masked loads and stores, bit casts, atomics, and the
persistent kernels' static knobs (:class:`Config`), grid size and grid barrier.

A leaf module (it imports only :mod:`jaxmatch._ops` and :mod:`jaxmatch.graph`'s
error type): every kernel module imports these from here, never from another
kernel. The ``interpret=`` branch of each helper is what the kernel does when
run by the Pallas interpreter (on any backend, for the tests).

Relaxed atomics. Pallas's Triton lowering gives every atomic acquire-release
order at GPU scope, which costs a memory fence per atomic; in the grid-barrier
kernels the barrier alone orders one phase's writes before the next phase's
reads, so inside a phase an atomic needs only to be atomic. :func:`_rmw` binds
a primitive of this module, lowered (for Triton only) to the same
``tt.atomic_rmw`` with relaxed order and a mask, so that lanes with nothing to
do issue no atomic at all. The grid barrier's arrival has release order and its
last read acquire order; the stable-marriage kernel keeps Pallas's
acquire-release atomic, as its correctness rests on the release order. The
primitive reuses Pallas's private lowering helpers (``jax._src``); where the
installed JAX lacks them, :data:`RELAXED` is False and the helpers fall back
to Pallas's public atomics (same answers, the fenced cost).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import INT_MAX
from jaxmatch.graph import GraphInputError


def _relaxed_primitive():
    """The relaxed-atomic primitive and its Triton lowering, or None where this JAX lacks the pieces."""
    try:
        from jax._src import core as jax_core
        from jax._src.pallas.triton import lowering as tl
        from jax._src.pallas.triton import primitives as tp
        from jax._src.state import indexing
        from jax._src.state import primitives as sp
        sems = {"relaxed": tl.tt_dialect.MemSemantic.RELAXED, "release": tl.tt_dialect.MemSemantic.RELEASE,
                "acquire": tl.tt_dialect.MemSemantic.ACQUIRE}
        scope = tl.tt_dialect.MemSyncScope.GPU
        ops = {tp.AtomicOpType.ADD: tl.tt_dialect.RMWOp.ADD, tp.AtomicOpType.MIN: tl.tt_dialect.RMWOp.MIN,
               tp.AtomicOpType.XCHG: tl.tt_dialect.RMWOp.XCHG}
        # every private piece used below, looked up now so that a JAX without one falls back here
        pieces = (tl.register_lowering, tl._compute_pointers_from_indices, tl._ensure_ir_value, tl._fp_bits_type,
                  tl._atomic_rmw, tp._atomic_abstract_eval, sp.get_ref_and_transforms, indexing.NDIndexer)
    except (ImportError, AttributeError):
        return None
    del pieces
    prim = jax_core.Primitive("jaxmatch_relaxed_atomic")
    prim.def_effectful_abstract_eval(lambda *avals, order, **kw: tp._atomic_abstract_eval(*avals, **kw))

    @tl.register_lowering(prim)
    def _lower(ctx, *args_flat, args_tree, atomic_type, order):
        block_info, *_ = ctx.block_infos
        ptr, indexers, val, mask = args_tree.unflatten(args_flat)
        *_, value_aval, mask_aval = args_tree.unflatten(ctx.avals_in)
        if len(indexers) != 1 or not isinstance(indexers[0], indexing.NDIndexer):
            raise NotImplementedError("a relaxed atomic takes one index")
        ptr = tl._compute_pointers_from_indices(ptr, block_info, indexers[0])
        val = tl._ensure_ir_value(val, value_aval)
        mask = None if mask is None else tl._ensure_ir_value(mask, mask_aval)
        floats = jnp.issubdtype(value_aval.dtype, jnp.floating)
        if floats:   # int32 values held as float32 bits: the integer operation on the same bits
            out_type = val.type
            ptr = tl.tt_dialect.bitcast(tl._fp_bits_type(ptr.type), ptr)
            val = tl.tt_dialect.bitcast(tl._fp_bits_type(val.type), val)
        out = tl._atomic_rmw(ops[atomic_type], ptr, val, mask=mask, semantic=sems[order], sync_scope=scope)
        return tl.tt_dialect.bitcast(out_type, out) if floats else out

    def bind(ref, idx, val, mask, kind: str, order: str):
        x_ref, transforms = sp.get_ref_and_transforms(ref, idx, "atomic_rmw")
        args, tree = jax.tree_util.tree_flatten((x_ref, transforms, val, mask))
        return prim.bind(*args, args_tree=tree, atomic_type=tp.AtomicOpType(kind), order=order)

    return bind


_RELAXED_BIND = _relaxed_primitive()
RELAXED = _RELAXED_BIND is not None   # whether the kernels' in-phase atomics are relaxed (see the module docstring)


def _rmw(ref, idx, val, mask, kind: str, order: str = "relaxed"):
    """``old = ref[idx]; ref[idx] = op(old, val)`` where ``mask``, atomically on the GPU with the memory
    ``order`` "relaxed" (default), "release" or "acquire" (``kind``: "add", "min" or "xchg"; a float32
    ref holds int32 bits and gets the integer operation); returns ``old``. Without the relaxed
    primitive: Pallas's public atomic of the kind, acquire-release (for "add" on int32 tensors, which
    Pallas sends down its float path, ``addupdate``)."""
    idx = jnp.where(mask, idx, 0) if mask is not None else idx
    if RELAXED:
        return _RELAXED_BIND(ref, (idx,), val, mask, kind, order)
    if kind == "add" and jnp.ndim(idx):
        jax.ref.addupdate(ref, (idx,), jnp.where(mask, val, 0) if mask is not None else val)
        return None
    f = {"add": plgpu.atomic_add, "min": plgpu.atomic_min, "xchg": plgpu.atomic_xchg}[kind]
    return f(ref, (idx,), val, mask=mask)


class Config(NamedTuple):
    """The persistent kernels' static knobs (hashable: a jit static argument)."""

    block: int = 32        # BFS: frontier vertices per chunk (a power of two)
    width: int = 16        # BFS: arcs per vertex per inner step (a power of two)
    programs: int = 1024   # programs of the grid, at most (and at most one per SM: see _resident)
    num_warps: int = 8     # warps per program of the BFS kernel (8 x 32 threads)
    levels: int = 256      # BFS levels per launch, at most (the caller's loop launches again)
    bounds: bool = True    # BFS: a claimer queues its vertex's row bounds too, and the next level reads them
                           # there, one dependent load less a level (bfs_level's docstring; RESULTS session 34)
    spin: int = 1 << 26    # polls of the grid barrier before a program gives up (``stalled``)
    push: bool = True      # run the push rounds in a kernel too (max flow: push_flow; G-PR: push_match)
    push_block: int = 128  # push rounds: queued vertices per chunk (a power of two; x the tile width >= the threads)
    push_warps: int = 4    # warps per program of the push-round kernels: a round's push phase is bound by
                           # its program's memory operations, so smaller chunks on more programs (RESULTS,
                           # session 28)
    push_width: int = 8    # max-flow push rounds: arcs per vertex per inner step (a power of two)
    push_small: int = 32   # max-flow push rounds: a queue of at most programs x push_small vertices is taken in
                           # chunks of push_small (more programs busy; RESULTS session 33); 0: always push_block
    match_small: int = 0   # G-PR push rounds: the same with chunks of match_small columns; 0 (default): off
                           # (32 was mixed at 2^20 on the H200: road -4%, delaunay +10%; RESULTS session 34)
    push_max_degree: int = 256  # push rounds in the kernel only if no non-terminal (G-PR: no column) has a longer row
    rounds: int = 1024     # push-relabel rounds per launch, at most
    relabel_from_push: bool = True  # max flow: the relabel phase takes the minimum found by the push phase
    match_width: int = 4   # G-PR push rounds: arcs per column per inner step (a power of two)
    solo: int = 0          # max flow: a queue of at most this many vertices runs in a one-program launch
                           # (thread barriers, no grid barrier) until it grows past it; 0: off
    fused: bool = True     # max flow: each vertex relabels right after its pushes, by at most 2, and a round
                           # has one grid barrier instead of two (needs relabel_from_push; push_flow's docstring;
                           # RESULTS session 34); False: a push phase and a relabel phase a round


def powers_of_two(cfg, names, label: str, zero_ok: bool = False) -> None:
    """Raise :class:`~jaxmatch.GraphInputError` unless every knob ``names`` of ``cfg`` is an int
    power of two (the kernels' block and tile sizes and warps), or 0 with ``zero_ok`` (a knob that
    0 turns off), naming ``label.name``."""
    for name in names:
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if zero_ok else 1) or v & (v - 1):
            raise GraphInputError(f"{label}.{name} must be {'0 or ' if zero_ok else ''}a power of two, got {v!r}")


def choose(kernel, x, backend: str | None = None):
    """The ``kernel=`` option of a solver as a :class:`Config` or None: None means on the GPU
    (``backend``: JAX's default backend unless given) and outside ``vmap`` (``x``: an array of the
    graph, a batch tracer under vmap); True the default knobs; False off. The kernel is refused
    under ``vmap``: a batched launch would hold more programs than the GPU runs at once, and the
    grid barrier needs them all resident. The knobs are checked: powers of two, and on the GPU
    a push chunk's tile at least one element per thread (see :func:`_per_row`)."""
    # vmap's tracers by name: the class is not public API and has moved between JAX versions
    batched = type(x).__name__ == "BatchTracer"
    backend = jax.default_backend() if backend is None else backend
    if kernel is None:
        kernel = backend == "gpu" and not batched
    if kernel is True:
        kernel = Config()
    if kernel is not False and not isinstance(kernel, Config):
        raise GraphInputError(f"kernel must be None, a bool or a bfs_level.Config, got {kernel!r}")
    if kernel:
        if isinstance(kernel.solo, bool) or not isinstance(kernel.solo, int) or kernel.solo < 0:
            raise GraphInputError(f"Config.solo must be an int >= 0, got {kernel.solo!r}")
        if kernel.fused and not kernel.relabel_from_push:
            raise GraphInputError("Config.fused needs relabel_from_push=True (the relabel takes the push "
                                  "phase's minimum): pass fused=False with relabel_from_push=False")
        threads = 32 * kernel.push_warps
        powers_of_two(kernel, ("block", "width", "push_block", "push_width", "match_width", "num_warps",
                               "push_warps"), "Config")
        powers_of_two(kernel, ("push_small", "match_small"), "Config", zero_ok=True)
        for name, width in (("push_small", "push_width"), ("match_small", "match_width")):
            small, w = getattr(kernel, name), getattr(kernel, width)
            if backend == "gpu" and 0 < small * w < threads:
                raise GraphInputError(f"Config.{name} x {width} must be at least the {threads} threads of "
                                      f"push_warps={kernel.push_warps}, got {small * w}")
        tile = kernel.push_block * min(kernel.push_width, kernel.match_width)
        if backend == "gpu" and tile < threads:
            # a tile of fewer elements than threads is held by several threads each, and an atomic's
            # result seen by one copy only made the queue inconsistent (illegal addresses on the H100)
            raise GraphInputError(f"Config.push_block x min(push_width, match_width) must be at least the "
                                  f"{threads} threads of push_warps={kernel.push_warps}, got {tile}")
    if kernel and batched:
        raise GraphInputError("kernel= does not run under jax.vmap (the persistent kernel's grid barrier "
                              "needs all its programs resident); leave kernel=None there")
    return kernel or None


def _resident(cfg: Config, items: int, block: int, interpret: bool) -> int:
    """Programs of the grid: all co-resident (at most one per SM), as the grid barrier needs, and
    no more than the chunks of ``block`` of ``items``; one when interpreted (programs run one after
    another there)."""
    if interpret:
        return 1
    sms = getattr(jax.devices()[0], "core_count", None) or 1
    return max(1, min(cfg.programs, sms, -(-items // block)))


def _persistent_call(kernel, reads, alias, *, grid: int, cfg: Config, interpret: bool, warps: int | None = None):
    """One launch of a persistent kernel over ``grid`` programs of ``warps`` warps (default
    ``cfg.num_warps``), every array whole in each program: ``reads`` are inputs only, ``alias`` are
    updated in place and returned (a list, in order)."""
    ins = [*reads, *alias]
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,) * x.ndim)  # noqa: E731
    return pl.pallas_call(
        kernel,
        grid=(grid,),
        in_specs=[whole(x) for x in ins],
        out_specs=[whole(x) for x in alias],
        out_shape=[jax.ShapeDtypeStruct(x.shape, x.dtype) for x in alias],
        input_output_aliases={len(reads) + i: i for i in range(len(alias))},
        compiler_params=plgpu.CompilerParams(num_warps=warps or cfg.num_warps, num_stages=1),
        interpret=interpret,
    )(*ins)


def _load(ref, idx, mask, other, volatile=False):
    return plgpu.load(ref.at[jnp.where(mask, idx, 0)], mask=mask, other=other, volatile=volatile)


def _f32(x):
    return lax.bitcast_convert_type(x, jnp.float32)


def _i32(x):
    return lax.bitcast_convert_type(x, jnp.int32)


def _atomic_min(ref, idx, val, mask, interpret, relaxed=False):
    """``old = ref[idx]; ref[idx] = min(old, val)`` where mask, atomically on the GPU (acquire-release,
    or with ``relaxed`` relaxed order: :func:`_rmw`).

    ``ref`` holds non-negative int32 values stored as float32 bit patterns:
    Pallas's Triton lowering sends tensor atomics on ints down its float
    path, which for non-negative bit patterns is a signed integer atomic
    min, the operation wanted here. Interpret mode has no masked atomics:
    there a scatter-min stands in, and each lane's ``old`` is what the
    atomics would return run in lane order (lower lanes first).
    """
    if not interpret:
        if relaxed:
            return _i32(_rmw(ref, idx, _f32(val), mask, "min"))
        return _i32(plgpu.atomic_min(ref, (jnp.where(mask, idx, 0),), _f32(val), mask=mask))
    a = _i32(ref[...])
    ref[...] = _f32(a.at[jnp.where(mask, idx, a.shape[0])].min(val, mode="drop"))
    lane = jnp.arange(idx.shape[0])
    earlier = (idx[None, :] == idx[:, None]) & mask[None, :] & (lane[None, :] < lane[:, None])
    return jnp.minimum(a[jnp.where(mask, idx, 0)], jnp.min(jnp.where(earlier, val[None, :], INT_MAX), axis=1))


def _store(ref, idx, val, mask, interpret):
    """``ref[idx] = val`` where mask (in interpret mode a scatter that drops the masked lanes)."""
    if not interpret:
        plgpu.store(ref.at[jnp.where(mask, idx, 0)], val, mask=mask)
    else:
        a = ref[...]
        ref[...] = a.at[jnp.where(mask, idx, a.shape[0])].set(val, mode="drop")


def _barrier(interpret):
    if not interpret:
        plgpu.debug_barrier()


def _atomic_add(ref, i, value, interpret, order="relaxed"):
    """``old = ref[i]; ref[i] += value`` for a scalar int32 (a scalar atomic takes Triton's integer path)
    with the memory ``order`` of :func:`_rmw`: relaxed for a counter read after a grid barrier."""
    value = jnp.asarray(value, jnp.int32)
    if not interpret:
        return _rmw(ref, i, value, None, "add", order)
    old = ref[i]
    ref[i] = old + value
    return old


def _add(ref, idx, val, mask, interpret):
    """``ref[idx] += val`` where ``mask`` for int32 tensors, atomically on the GPU with relaxed order
    (:func:`_rmw`); a scatter-add (duplicates summed) in the interpreter."""
    val = val.astype(ref.dtype)
    if not interpret:
        _rmw(ref, idx, val, mask, "add")
    else:
        jax.ref.addupdate(ref, (jnp.where(mask, idx, 0),), jnp.where(mask, val, 0))


def _exchange(ref, idx, val, mask, interpret):
    """``old = ref[idx]; ref[idx] = val`` where mask, atomically on the GPU (relaxed order,
    :func:`_rmw`); returns each lane's ``old`` (int32). ``ref`` holds int32 values as float32 bit
    patterns (an exchange moves bits unchanged). The interpreter runs the exchanges in lane order:
    a lane gets the value of the last earlier masked lane with its index, or the array's. The
    result is only sound when no element of ``idx`` is held by two threads (see :func:`choose`)."""
    if not interpret:
        return _i32(_rmw(ref, idx, _f32(val), mask, "xchg"))
    a = _i32(ref[...])
    lane = jnp.arange(idx.shape[0])
    same = (idx[None, :] == idx[:, None]) & mask[None, :] & mask[:, None]
    prev = jnp.max(jnp.where(same & (lane[None, :] < lane[:, None]), lane[None, :], -1), axis=1)
    last = mask & ~jnp.any(same & (lane[None, :] > lane[:, None]), axis=1)
    ref[...] = _f32(a.at[jnp.where(last, idx, a.shape[0])].set(val, mode="drop"))
    return jnp.where(prev >= 0, val[jnp.maximum(prev, 0)], a[jnp.where(mask, idx, 0)])


def _claim(ref, idx, stamp, mask, interpret):
    """``old = ref[idx]; ref[idx] = stamp`` where mask (:func:`_exchange`); True for the lanes that
    found another value: per index, exactly one lane of those that write ``stamp`` first wins (in
    the interpreter the first masked lane)."""
    return mask & (_exchange(ref, idx, jnp.full(idx.shape, stamp, jnp.int32), mask, interpret) != stamp)


def _chunks(count, block: int, program, grid: int, fn, small: int = 0) -> None:
    """Program ``program``'s share of a queue of ``count`` items: ``fn(positions)`` for chunks
    program, program + grid, ... of ``block`` positions each (the last one may run past ``count``:
    ``fn`` masks), or of ``small`` positions while the queue holds at most ``grid * small`` (one
    small chunk a program at most: more programs busy on a short queue; ``fn`` is traced for both
    sizes). ``program`` is ``pl.program_id(0)`` read at the kernel's top level (the interpreter
    does not take it inside loops)."""
    def run(size):
        lanes = jnp.arange(size, dtype=jnp.int32)
        mine = jnp.maximum((count + size - 1) // size - program + grid - 1, 0) // grid
        lax.fori_loop(0, mine, lambda t, c: (fn((program + t * grid) * size + lanes), c)[1], ())
    if 0 < small < block:
        lax.cond(count <= grid * small, lambda: run(small), lambda: run(block))
    else:
        run(block)


def _append(state, counter: int, buf, base, new, ids, interpret, extra=()) -> None:
    """The ``new`` lanes' ``ids`` (a 1-D or 2-D tile, lanes in order) into a queue at ``buf[base:]``:
    one atomic add on ``state[counter]`` reserves their places for the whole tile. ``extra``:
    ``(ref, values)`` pairs stored at the same places of ``ref``."""
    ones = new.astype(jnp.int32)   # int32 sums throughout (jnp.sum widens under x64)
    if ones.ndim == 2:
        per_row = jnp.sum(ones, axis=1, dtype=jnp.int32)
        pos = (jnp.cumsum(per_row, dtype=jnp.int32) - per_row)[:, None] + jnp.cumsum(ones, axis=1, dtype=jnp.int32)
    else:
        pos = jnp.cumsum(ones, dtype=jnp.int32)
    n_new = jnp.sum(ones, dtype=jnp.int32)

    @pl.when(n_new > 0)
    def _():
        first = _atomic_add(state, counter, n_new, interpret)
        for ref, vals in ((buf, ids), *extra):
            _flat(_store, ref, base + first + pos - 1, vals, new, interpret)


def _per_row(f, ref, idx, val, mask, threads: int, interpret):
    """``f`` (an atomic or a store of this module) once per element of the 1-D chunk vectors
    ``idx``, ``val``, ``mask``, issued from column 0 of a ``[rows, width]`` tile of at least
    ``threads`` elements (the program's threads): a vector of fewer elements than threads is held
    by several threads each, and an atomic on it runs in one copy and hands its result to that
    copy only (illegal addresses on the H100, RESULTS session 11); a tile of at least as many
    elements as threads has one owner per element. Returns ``f``'s result per element (None for a
    store or an add)."""
    width = max(1, threads // idx.shape[0])
    if width == 1:
        return f(ref, idx, jnp.broadcast_to(val, idx.shape), mask, interpret)
    col0 = (jnp.arange(width) == 0)[None, :]
    wide = lambda x: jnp.broadcast_to(jnp.broadcast_to(x, idx.shape)[:, None], (idx.shape[0], width))  # noqa: E731
    out = _flat(f, ref, wide(idx), wide(val), wide(mask) & col0, interpret)
    if out is None:
        return None
    if out.dtype == jnp.bool_:   # (Triton has no reduce_or)
        return jnp.max((out & col0).astype(jnp.int32), axis=1) > 0
    return jnp.max(jnp.where(col0, out, jnp.iinfo(out.dtype).min), axis=1)


def _row_load(ref, idx, mask, other, threads: int, volatile=False):
    """:func:`_load` of the 1-D chunk vector ``idx``, from column 0 of a tile of at least ``threads``
    elements and a reduction along its rows, so that every thread holding a copy of an element gets
    the same value. A vector of fewer elements than threads is held by several threads, each of which
    loads on its own, and a volatile load of memory that other programs are changing (a vertex's
    excess during a push phase) can hand the copies different values: the copies then disagree on
    whether the vertex is active, and the threads of one program on how many steps a loop runs
    (lost and repeated queue entries, stalled barriers and illegal addresses on the H200 at 2^20
    arcs; RESULTS session 33). :func:`_per_row` with the load as its operation."""
    return _per_row(lambda r, i, _, m, __: _load(r, i, m, other, volatile), ref, idx, 0, mask, threads, False)


def _put(ref, i, value, interpret):
    """``ref[i] = value`` for a scalar int32, atomically (seen by every program)."""
    value = jnp.asarray(value, jnp.int32)
    if not interpret:
        _rmw(ref, i, value, None, "xchg")
    else:
        ref[i] = value


def _flat(f, ref, idx, val, mask, interpret):
    """``f`` (an atomic or a store of this module) on a 2-D tile: as is on the GPU, flattened when interpreted."""
    if not interpret:
        return f(ref, idx, val, mask, interpret)
    out = f(ref, idx.reshape(-1), val.reshape(-1), mask.reshape(-1), interpret)
    return None if out is None else out.reshape(idx.shape)


def _read(ref, i, interpret):
    """``ref[i]`` for a scalar int32 written by other programs before a grid barrier: a volatile
    load, past the L1 caches of other SMs (no atomic: it does not queue at the address)."""
    if not interpret:
        return plgpu.load(ref.at[i], volatile=True)
    return ref[i]


def _grid_sync(state, arrived: int, target, spin: int, interpret):
    """Grid barrier of a persistent kernel: every program arrives with an atomic add on the word
    ``state[arrived]`` (release: the program's writes, and through the thread barrier before it its
    threads', are seen before the arrival) and polls it with volatile loads (which do not queue at
    the address as atomics do) until it reaches ``target`` (the programs times the barriers passed
    so far, this one included), then reads it once more with an atomic (acquire: what follows is
    not moved before it); thread barriers before the arrival and after the poll order each program's
    writes against the others' reads. Returns False if the program gave up after ``spin`` polls
    (the launch then reports ``stalled``)."""
    _barrier(interpret)
    seen = _atomic_add(state, arrived, 1, interpret, "release") + 1
    seen, _ = lax.while_loop(lambda v: (v[0] < target) & (v[1] < spin),
                             lambda v: (_read(state, arrived, interpret), v[1] + 1),
                             (seen, jnp.int32(0)))
    seen = _atomic_add(state, arrived, 0, interpret, "acquire")
    _barrier(interpret)
    return seen >= target
