"""Array primitives shared by the solvers (traceable, vmappable, fixed shapes).

Ids are int32; a *sentinel* id (the capacity of the indexed set) marks an
empty slot. Gathers go through :func:`take` so that sentinel and negative ids
read a fill value instead of being clamped, and scatters use ``mode="drop"``.
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxmatch.status import Status

# solver status codes (jaxmatch.Status), as plain ints for traced code
CONVERGED = int(Status.CONVERGED)
MAX_ITERS = int(Status.MAX_ITERS)
INFEASIBLE = int(Status.INFEASIBLE)

INT_MAX = jnp.iinfo(jnp.int32).max


def is_traced(x) -> bool:
    """True inside jit/vmap tracing (the host cannot read the value)."""
    return isinstance(x, jax.core.Tracer)


def device(x, dtype=None) -> jax.Array:
    """A host value as a device array, compiling nothing (``jnp.asarray`` of a NumPy array compiles a
    small program per shape in some JAX versions: 10-20 ms for each new graph size)."""
    return jax.device_put(np.asarray(x, dtype))


def cores() -> int:
    """The CPU cores this process may run on (host work split over threads)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


HOST_TRIM_MAX = 1 << 16


def trim(x: jax.Array, *k: int) -> jax.Array:
    """``x[:k0, :k1, ...]`` of an eager result. Up to ``HOST_TRIM_MAX`` elements the cut is made on
    the host: a device slice compiles once per length, which a user with many small graphs pays per
    graph; past it on the device, as a round trip of a large array through the host costs more
    (Louvain's hierarchy at 10^7 edges: 0.17 s of a 0.93 s run on an H100)."""
    cut = tuple(slice(j) for j in k)
    if x.shape[:len(k)] == tuple(k):
        return x
    if x.size <= HOST_TRIM_MAX:
        return device(np.asarray(x)[cut])
    return x[cut]


def take(a: jax.Array, idx: jax.Array, fill) -> jax.Array:
    """``a[idx]`` where in-range, ``fill`` where idx < 0 or idx >= len(a) (everywhere when a is empty)."""
    if a.shape[0] == 0:        # nothing to gather from (a gather from an empty array does not compile)
        return jnp.broadcast_to(jnp.asarray(fill, a.dtype), idx.shape + a.shape[1:])
    ok = (idx >= 0) & (idx < a.shape[0])
    return jnp.where(ok, a[jnp.where(ok, idx, 0)], fill)


def mask_ids(ids: jax.Array, keep: jax.Array, sentinel: int) -> jax.Array:
    """ids where keep, the sentinel elsewhere."""
    return jnp.where(keep, ids, sentinel)


def claim_first(scratch: jax.Array, target: jax.Array, ids: jax.Array, valid: jax.Array):
    """Scatter-min claims: of the valid entries that name the same ``target``, the smallest id wins.

    The array form of a CUDA compare-and-swap race (G-PR's pushes, b-Suitor's and the flow
    queue's de-duplication). The valid ``ids`` must be distinct. ``scratch`` has one slot per
    target and holds ``INT_MAX`` everywhere; it is reset only where this call touched it (each
    touched target has exactly one winner, so resetting the winners' targets does it, one
    write per address), and a solver keeps it across loop steps instead of refilling it
    (O(claims) work, not O(targets)). Returns (won, scratch).
    """
    n = scratch.shape[0]
    scratch = scratch.at[mask_ids(target, valid, n)].min(ids, mode="drop")
    won = valid & (take(scratch, target, -1) == ids)
    return won, scratch.at[mask_ids(target, won, n)].set(INT_MAX, mode="drop")


def smallest_fit(sizes, used: jax.Array) -> jax.Array:
    """Index of the smallest of the static ``sizes`` (largest first) that holds ``used``.

    With :func:`switch`, the ladder of static shapes: the work of a loop step runs on the smallest
    compiled size that holds it (Louvain's size classes, Gale-Shapley's slot widths), since shapes
    cannot depend on data inside ``jit``."""
    return jnp.sum(jnp.asarray(sizes) >= used, dtype=jnp.int32) - 1


def switch(index: jax.Array, branches, *operands):
    """``branches[index](*operands)``: a ``lax.switch``, or the only branch called directly."""
    return lax.switch(index, branches, *operands) if len(branches) > 1 else branches[0](*operands)


def segment_argmin(keys: jax.Array, ids: jax.Array, segments: jax.Array, num_segments: int):
    """Per segment, the minimum key and the smallest id attaining it.

    Entries whose segment is out of range (the sentinel) are ignored. Empty
    segments get ``(INT_MAX, INT_MAX)``. Two segment reductions, no packing,
    so keys and ids may use the whole int32 range.
    """
    best = jax.ops.segment_min(keys, segments, num_segments)
    at_best = keys == take(best, segments, INT_MAX)
    arg = jax.ops.segment_min(jnp.where(at_best, ids, INT_MAX), segments, num_segments)
    return best, arg


def prefix(x: jax.Array, op: str = "sum", *, dtype=None, axis: int = 0, reverse: bool = False) -> jax.Array:
    """The running ``op`` ("sum", "max" or "min") of ``x`` along ``axis`` (``jnp.cumsum`` with
    ``dtype``; ``lax.cummax`` / ``lax.cummin``), computed apart from the ops around it: its input
    and output pass optimization barriers, so XLA fuses neither the scan into a reduction nor a
    reduction beside it. Fused with a reduction, XLA's GPU backend lowers the scan (a blocked
    reduce-window) inside the reduction's loop, and at some sizes LLVM then took 20-35 s to
    compile that one kernel (``max_flow`` on networks of 8,192 arcs, ``suitor`` and ``b_suitor``
    on graphs of 15K-30K edges; experiments/RESULTS.md, session 21). Apart it costs one more
    pass over the array.
    """
    x = lax.optimization_barrier(x)
    if op == "sum":
        out = jnp.cumsum(jnp.flip(x, axis) if reverse else x, axis=axis, dtype=dtype)
        out = jnp.flip(out, axis) if reverse else out
    else:
        x = x if dtype is None else x.astype(dtype)
        out = {"max": lax.cummax, "min": lax.cummin}[op](x, axis=axis, reverse=reverse)
    return lax.optimization_barrier(out)


def run_totals(values: jax.Array, last: jax.Array) -> jax.Array:
    """For runs of contiguous entries, each ending where ``last``: every entry's sum of its run from
    it to the run's end, so at a run's first entry the run's total. A segmented scan from the end
    (``lax.associative_scan``): no atomics, and the same summation order on every run, where a
    scatter-add of a long run piles its updates onto one address (on a GPU 1.6 ms a launch for
    Louvain's grouped pairs on RMAT graphs; RESULTS.md, session 36). Its sums group the terms in a
    tree, not left to right, so they may differ from a sequential sum in the last bits."""
    def add(a, b):
        return a[0] | b[0], jnp.where(b[0], b[1], a[1] + b[1])
    return lax.associative_scan(add, (last, values), reverse=True)[1]


def compact(keep: jax.Array, values: jax.Array, fill, size: int | None = None) -> tuple[jax.Array, jax.Array]:
    """Stable compaction: the kept values first, then ``fill``; and their count. With ``size``, only
    the first ``size`` slots (the later kept values dropped).

    A prefix sum gives every kept entry its slot (the shrink kernel of G-PR), and only the kept
    entries write: ``jnp.nonzero(size=k)`` instead counts every entry into k bins (a ``bincount``
    of the prefix sum), all of them at once on the GPU, where the auction's row ladder lost most of
    its rounds' time to it (experiments/RESULTS.md, session 45).
    """
    size = values.shape[0] if size is None else size
    total = prefix(keep, dtype=jnp.int32)
    out = jnp.full((size,), fill, values.dtype).at[jnp.where(keep, total - 1, size)].set(values, mode="drop")
    return out, total[-1] if keep.shape[0] else jnp.int32(0)


def offsets(sizes: jax.Array) -> jax.Array:
    """Where each of consecutive ranges of these ``sizes`` starts, and the end: ``[0, s0, s0 + s1,
    ...]``, int32, one longer than ``sizes`` (CSR row pointers from row lengths; the ``offsets`` of
    :func:`expand`)."""
    return jnp.concatenate([jnp.zeros(1, jnp.int32), prefix(sizes, dtype=jnp.int32)])


def expand(offsets: jax.Array, starts: jax.Array, first: jax.Array, lanes: int):
    """Load-balanced expansion of slot ranges into ``lanes`` work items.

    Slot i owns the items ``[offsets[i], offsets[i+1])`` of a virtual list
    (``offsets`` is an exclusive prefix sum of the slot sizes, length
    n_slots + 1); item p of slot i stands for entry ``starts[i] + p -
    offsets[i]`` of an edge array. For the items ``first .. first+lanes-1``
    returns (slot, entry, valid). Every lane does equal work whatever the
    degrees are: the array form of WBPR's workload balancing and of
    merge-path partitioning. Each slot that starts inside the window marks
    its first lane and a running maximum carries the mark forward, so the
    cost is O(lanes + n_slots) with no binary search.
    """
    n_slots = offsets.shape[0] - 1
    lo, size = offsets[:-1], offsets[1:] - offsets[:-1]
    ids = jnp.arange(n_slots, dtype=jnp.int32)
    rel = lo - first
    starts_here = (size > 0) & (rel >= 0) & (rel < lanes)
    head = jnp.zeros(lanes, jnp.int32).at[jnp.where(starts_here, rel, lanes)].max(ids, mode="drop")
    owner = jnp.max(jnp.where((size > 0) & (lo <= first), ids, 0))  # slot holding item `first`
    slot = jax.lax.cummax(head.at[0].max(owner))
    p = first + jnp.arange(lanes, dtype=jnp.int32)
    valid = p < offsets[-1]
    entry = starts[slot] + p - offsets[slot]
    return slot, entry, valid


WORD = 1 << 16


def sum_words(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """An exact sum of non-negative int32 values without 64-bit ints on the device.

    Returns per-chunk sums of the low and the high 16 bits (uint32 each, no
    overflow: chunks of 2^16 values), a few words per 2^16 values, so the
    host adds them in 64 bits (:func:`words_total`) instead of fetching x.
    """
    v = jnp.pad(x.astype(jnp.uint32), (0, -x.shape[0] % WORD)).reshape(-1, WORD)
    return jnp.sum(v & (WORD - 1), axis=1, dtype=jnp.uint32), jnp.sum(v >> 16, axis=1, dtype=jnp.uint32)


def words_total(words) -> int:
    """The host's total of :func:`sum_words`."""
    lo, hi = (np.asarray(w).astype(np.int64).sum() for w in words)
    return int(lo) + (int(hi) << 16)
