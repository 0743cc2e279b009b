"""The pytree machinery of the graph containers, and the padded CSR arrays they hold.

Every container (:class:`~jaxmatch.BipartiteGraph`, :class:`~jaxmatch.Graph`,
:class:`~jaxmatch.FlowNetwork`, :class:`CSR` and the stable-marriage
``Preferences``) is a frozen dataclass registered as a JAX pytree by
``_pytree``: fields made with ``_static()`` (the capacities, the flow layout)
are static metadata, part of the jit cache key; every other field is an
array leaf. :class:`CSR` is one direction of adjacency; ``_csr`` builds it
for one graph and ``_csr_rows`` / ``_fill_csr_rows`` for a stack of graphs, run by run, both on
the host with NumPy, and move the result to the device once.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from jaxmatch._ops import device


def _pytree(cls):
    """Frozen dataclass registered with JAX; fields marked static are metadata."""
    cls = dataclasses.dataclass(frozen=True, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cls)
    meta = [f.name for f in fields if f.metadata.get("static")]
    data = [f.name for f in fields if not f.metadata.get("static")]
    return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)


def _static():
    return dataclasses.field(metadata={"static": True})


def _i32(a) -> jax.Array:
    return device(a, np.int32)


def _scalar(x) -> str:
    """A size field for a container's repr: its int, or its shape when traced or batched."""
    try:
        return str(int(x))
    except Exception:  # traced or batched
        return f"<{getattr(x, 'shape', '?')}>"


@_pytree
class CSR:
    """One direction of adjacency in padded compressed sparse row (CSR) form.

    Row ``v`` holds the entries ``indptr[v]`` to ``indptr[v + 1] - 1``, sorted
    by (source, target). Besides the usual ``indptr``/``indices`` pair, every
    entry also stores its source in ``src`` (the COO row array), so that an
    edge-parallel step is one ``jax.ops.segment_*`` call with
    ``segment_ids=src`` and a static ``num_segments``, with no search of
    ``indptr``. Padding entries past the true edge count point at the
    sentinel ids (the capacities), which ``segment_*`` and
    ``.at[...].set(..., mode="drop")`` ignore. A CSR is a field of the graph
    containers, never built on its own.

    Attributes:
        indptr: int32 ``[n_cap + 1]``, row offsets; rows of the vertices past
            the true size are empty.
        indices: int32 ``[e_cap]``, the target id of each entry; the target
            set's capacity in padding.
        src: int32 ``[e_cap]``, the source id of each entry; ``n_cap`` in
            padding.
        weights: ``[e_cap]`` float array of entry weights (0 in padding), or
            None for an unweighted pattern.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1])
        >>> g.by_row.indptr.tolist(), g.by_row.indices.tolist(), g.by_row.src.tolist()
        ([0, 1, 3], [1, 0, 1, 2], [0, 1, 1, 2])
    """

    indptr: jax.Array
    indices: jax.Array
    src: jax.Array
    weights: Any = None


CSR.__module__ = "jaxmatch.graph"   # its public home: reprs and pickles name it there


def _argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integer keys: where the keys are non-negative and
    they and their positions fit 63 bits together, one ``np.sort`` of each key with its position in
    its low bits. Those packed keys are distinct, so NumPy's default sort (SIMD on x86) gives the
    stable order, faster than its stable kind on keys out of order; keys already in order are
    found by one comparison pass and not sorted (experiments/RESULTS.md, session 48)."""
    n = keys.size
    if n < 2 or bool(np.all(keys[1:] >= keys[:-1])):
        return np.arange(n)
    ib = (n - 1).bit_length()
    if int(keys.min()) < 0 or int(keys.max()).bit_length() + ib > 63:
        return np.argsort(keys, kind="stable")
    return np.sort((keys.astype(np.int64) << ib) | np.arange(n)) & ((1 << ib) - 1)


def _sort(keys: np.ndarray) -> np.ndarray:
    """``keys`` sorted, where nothing rides along (so the sort need not be stable): NumPy's default
    kind, or a copy when they are already in order (see :func:`_argsort`)."""
    if keys.size < 2 or bool(np.all(keys[1:] >= keys[:-1])):
        return keys.copy()
    return np.sort(keys)


def _csr(src, dst, n_cap, dst_cap, e_cap, weights=None, wdtype=None, order=None) -> CSR:
    """CSR of entries src -> dst in ``order`` (default: sorted by (src, dst), stably;
    ``"sorted"``: already in that order)."""
    if order is None:  # one int64 key: one sort instead of a lexsort on two keys
        order = _argsort(src * np.int64(dst_cap) + dst)
    presorted = isinstance(order, str) and order == "sorted"
    if not presorted:
        src, dst = src[order], dst[order]
    m = src.size
    indptr = np.zeros(n_cap + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n_cap), out=indptr[1:])
    s = np.full(e_cap, n_cap, np.int32)   # ids and capacities fit int32 (checked by the builders)
    d = np.full(e_cap, dst_cap, np.int32)
    s[:m], d[:m] = src, dst
    w = None
    if weights is not None:
        w = np.zeros(e_cap, wdtype)
        w[:m] = weights if presorted else weights[order]
        w = device(w)
    return CSR(_i32(indptr), _i32(d), _i32(s), w)


def _transpose_order(r: np.ndarray, c: np.ndarray, nr: int, nc: int) -> np.ndarray:
    """The permutation taking (r, c) pairs sorted by (r, c), all distinct, to (c, r) order.

    scipy's CSR -> CSC conversion (one counting pass instead of a sort; see
    experiments/RESULTS.md), checked, with a stable argsort by c as the fallback.
    """
    import scipy.sparse as sp
    if r.size < 2:
        return np.arange(r.size)
    indptr = np.zeros(nr + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=nr), out=indptr[1:])
    a = sp.csr_array((np.arange(r.size, dtype=np.int32), c.astype(np.int32), indptr.astype(np.int32)),
                     shape=(nr, nc))
    order = a.tocsc().data.astype(np.int64)
    k = c[order] * max(nr, 1) + r[order]
    if order.size != r.size or not np.all(k[1:] > k[:-1]):
        order = _argsort(c)
    return order


def _padded(values, counts, width: int, fill, dtype, copy: bool = False, out=None) -> np.ndarray:
    """The ``[len(counts), width]`` array whose row b holds the next ``counts[b]`` of ``values`` (in
    their order), then ``fill`` (a value, or a ``[width]`` array: one per slot), written into ``out``
    where given. Where every row is full, ``values`` reshaped: no mask, and without ``out`` no new
    array (a view of ``values`` unless ``copy`` or a new dtype)."""
    full = counts.size and int(counts.min()) == width
    if out is None:
        if full:
            return (np.array(values, dtype) if copy else np.asarray(values, dtype)).reshape(counts.size, width)
        out = np.empty((counts.size, width), dtype)
    if full:
        out[...] = np.reshape(values, out.shape)
    else:
        out[...] = fill
        out[np.arange(width)[None, :] < counts[:, None]] = values
    return out


def _indptr(g, src, count: int, n_cap: int, out=None) -> np.ndarray:
    """The ``[count, n_cap + 1]`` int32 row pointers of graphs' entries sorted by (g, src)."""
    out = np.zeros((count, n_cap + 1), np.int32) if out is None else out
    out[:, 0] = 0
    np.cumsum(np.bincount(g * np.int64(n_cap) + src, minlength=count * n_cap).reshape(count, n_cap), axis=1,
              out=out[:, 1:])
    return out


def _csr_rows(count: int, n_cap: int, e_cap: int, wdtype=None) -> tuple:
    """Empty NumPy arrays for the CSRs of ``count`` graphs stacked: ``(indptr [count, n_cap + 1],
    dst [count, e_cap], src [count, e_cap], weights or None)``, filled run by run by
    :func:`_fill_csr_rows`."""
    return (np.empty((count, n_cap + 1), np.int32), np.empty((count, e_cap), np.int32),
            np.empty((count, e_cap), np.int32), None if wdtype is None else np.empty((count, e_cap), wdtype))


def _fill_csr_rows(out: tuple, b0: int, b1: int, g, src, dst, weights, counts, n_cap: int, dst_cap: int) -> None:
    """Graphs b0..b1's rows of :func:`_csr_rows`'s arrays: entry k of the run's graph ``g[k]`` (ids
    from 0 in the run) is ``src[k] -> dst[k]`` (of weight ``weights[k]``), the entries sorted by
    (g, src, dst), ``counts[b]`` of them in graph b0 + b."""
    indptr, d, s, w = (None if x is None else x[b0:b1] for x in out)
    _indptr(g, src, b1 - b0, n_cap, out=indptr)
    _padded(dst, counts, d.shape[1], dst_cap, None, out=d)
    _padded(src, counts, s.shape[1], n_cap, None, out=s)
    if w is not None:
        _padded(weights, counts, w.shape[1], 0, None, out=w)


def _device_csr(out: tuple) -> CSR:
    """:func:`_csr_rows`'s filled arrays as a :class:`CSR` on the device."""
    return CSR(*(None if x is None else device(x) for x in out))
