"""Pallas helpers shared by the kernels: masked loads and stores, bit casts, atomics.

A leaf module (it imports only :mod:`jaxmatch._ops`): every kernel module
imports these from here, never from another kernel. The ``interpret=`` branch
of each helper is what the kernel does when run by the Pallas interpreter
(on any backend, for the tests).
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import INT_MAX


def _load(ref, idx, mask, other, volatile=False):
    return plgpu.load(ref.at[jnp.where(mask, idx, 0)], mask=mask, other=other, volatile=volatile)


def _f32(x):
    return lax.bitcast_convert_type(x, jnp.float32)


def _i32(x):
    return lax.bitcast_convert_type(x, jnp.int32)


def _atomic_min(ref, idx, val, mask, interpret):
    """``old = ref[idx]; ref[idx] = min(old, val)`` where mask, atomically on the GPU.

    ``ref`` holds non-negative int32 values stored as float32 bit patterns:
    Pallas's Triton lowering sends tensor atomics on ints down its float
    path, which for non-negative bit patterns is a signed integer atomic
    min, the operation wanted here. Interpret mode has no masked atomics:
    there a scatter-min stands in, and each lane's ``old`` is what the
    atomics would return run in lane order (lower lanes first).
    """
    if not interpret:
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
