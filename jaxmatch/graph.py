"""Graph pytrees: padded CSR arrays on the device, built and validated on the host.

Every container is a frozen dataclass registered as a JAX pytree. Array fields
hold the data; only the *capacities* (array lengths) are static, so graphs of
equal capacity share one compilation and stack into a batch for ``jax.vmap``.
True sizes (``n_rows``, ``n``, ``n_edges`` ...) are scalar int32 arrays.

Padding rule: entries past the true size point at the *sentinel* id, which is
the capacity of the vertex set they index (one past the last valid slot), so
``jax.ops.segment_*`` with ``num_segments=capacity`` and
``.at[...].set(..., mode="drop")`` ignore them.

Input rules (checked here, on the host, before anything is traced):

* ids are integer arrays, ``0 <= id < n``; floats, bools and out-of-range ids
  raise :class:`GraphInputError`;
* counts must fit int32 (capacities are at most ``2**31 - 1``);
* weights must be finite and non-negative, and (summed over repeated
  edges) fit the float dtype (float32 unless 64-bit mode is on); capacities
  integer and non-negative; ragged or nested sequences are rejected;
* duplicates: a :class:`BipartiteGraph` stores a repeated edge once
  (``duplicates="merge"``); a :class:`Graph` adds the weights of repeated
  edges, like ``scipy.sparse`` does when it sums duplicates
  (``duplicates="sum"``); ``duplicates="error"`` rejects them instead;
  a :class:`FlowNetwork` keeps parallel arcs as separate arcs;
* self-loops: a :class:`Graph` keeps them (one diagonal entry holding the
  loop's weight, as in its scipy adjacency matrix); algorithms that cannot use
  them say so; a :class:`FlowNetwork` keeps them (they never carry flow).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import device

__all__ = [
    "GraphInputError", "CSR", "BipartiteGraph", "Graph", "FlowNetwork",
    "stack", "unstack", "next_pow2",
]

INT32_MAX = int(np.iinfo(np.int32).max)


class GraphInputError(ValueError):
    """Bad input to a graph constructor or solver, found before tracing."""


# --------------------------------------------------------------------------
# host-side validation helpers


def next_pow2(n: int) -> int:
    """Smallest power of two >= max(n, 1), clipped to the int32 maximum."""
    n = max(int(n), 1)
    return min(1 << (n - 1).bit_length(), INT32_MAX)


def _count(n, name: str) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise GraphInputError(f"{name} must be an integer, got {n!r}")
    n = int(n)
    if n < 0:
        raise GraphInputError(f"{name} must be >= 0, got {n}")
    if n > INT32_MAX:
        raise GraphInputError(
            f"{name} = {n} does not fit int32 (at most {INT32_MAX}): jaxmatch "
            "uses int32 ids and offsets")
    return n


def check_type(g, cls, hint: str) -> None:
    """Raise unless ``g`` is a ``cls``; ``hint`` says how to build one."""
    if not isinstance(g, cls):
        raise GraphInputError(f"expected a jaxmatch.{cls.__name__}, got {type(g).__name__}; build one with {hint}")


def check_positive(value, name: str, kind=int) -> None:
    """Raise unless ``value`` is None or a positive int (``kind=float``: a positive real); bools are rejected."""
    if value is None:
        return
    types = (int, np.integer) if kind is int else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, types) or not value > 0:
        raise GraphInputError(f"{name} must be a positive {kind.__name__}, got {value!r}")


def check_flag(value, name: str) -> bool:
    """``value`` as a bool; GraphInputError unless it is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise GraphInputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_not_batch(size, what: str, example: str) -> None:
    """Raise unless ``size`` (a container's true-size field) is a scalar: a batch made by
    :func:`stack` must go through ``jax.vmap``. Works eagerly and on tracers (a tracer has its
    per-graph shape under vmap, the batch shape under jit)."""
    if np.ndim(size) != 0:
        raise GraphInputError(f"got a batch of {what}; map over it with jax.vmap, e.g. {example}")


def _capacity(n: int, given, name: str) -> int:
    if given is None:
        return next_pow2(n)
    cap = _count(given, name)
    if cap < max(n, 1):
        raise GraphInputError(f"{name} = {cap} is smaller than the size {n} it must hold")
    return cap


def _array(x, name: str) -> np.ndarray:
    """``np.asarray(x)``, with ragged or otherwise unconvertible input reported by name."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError):
        raise GraphInputError(f"{name} must be a 1-D array of numbers, got a ragged or nested sequence") from None


def _ids(x, name: str) -> np.ndarray:
    a = _array(x, name)
    if a.ndim != 1:
        raise GraphInputError(f"{name} must be a 1-D array, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise GraphInputError(f"{name} must be an integer array, got dtype {a.dtype}")
    if a.size and a.dtype.kind == "u" and a.max() > INT32_MAX:  # would wrap in the int64 cast
        i = int(np.argmax(a))
        raise GraphInputError(f"{name}[{i}] = {int(a[i])} does not fit int32 (at most {INT32_MAX})")
    return a.astype(np.int64, copy=False)


def _in_range(a: np.ndarray, n: int, name: str, size_name: str) -> None:
    bad = np.flatnonzero((a < 0) | (a >= n))
    if bad.size:
        i = int(bad[0])
        raise GraphInputError(
            f"{name}[{i}] = {int(a[i])} is out of range [0, {n}) for {size_name} = {n}")


def _size(a: np.ndarray, given, name: str) -> int:
    n = max(int(a.max()) + 1, 0) if given is None and a.size else given  # negative ids: named by _in_range
    return _count(0 if n is None else n, name)


def _values(x, m: int, name: str, *, integer: bool) -> np.ndarray:
    a = _array(x, name)
    if a.shape != (m,):
        raise GraphInputError(f"{name} must have shape ({m},) like the edge arrays, got {a.shape}")
    if a.size == 0:
        return a.astype(np.int64 if integer else np.float64)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise GraphInputError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if integer and not np.issubdtype(a.dtype, np.integer):
        raise GraphInputError(
            f"{name} must be an integer array, got dtype {a.dtype}: convert "
            "capacities to integers first (scipy's maximum_flow has the same rule)")
    if not integer:
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise GraphInputError(f"{name}[{int(bad[0])}] = {a[bad[0]]} is not finite")
    bad = np.flatnonzero(a < 0)
    if bad.size:
        raise GraphInputError(f"{name}[{int(bad[0])}] = {a[bad[0]]} is negative")
    return a


def _float_dtype():
    return jnp.dtype(jnp.float64) if jax.config.jax_enable_x64 else jnp.dtype(jnp.float32)


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


# --------------------------------------------------------------------------
# CSR


@_pytree
class CSR:
    """One direction of adjacency, padded.

    ``indptr`` [n_cap + 1]: offsets (vertices past the true size have empty
    rows). ``indices`` [e_cap]: target id of each entry, the target set's
    capacity in padding. ``src`` [e_cap]: source id of each entry (the
    segment id for ``segment_*``), ``n_cap`` in padding. ``weights`` [e_cap]
    or None: entry weights, 0 in padding. Entries are sorted by
    (source, target).
    """

    indptr: jax.Array
    indices: jax.Array
    src: jax.Array
    weights: Any = None


def _csr(src, dst, n_cap, dst_cap, e_cap, weights=None, wdtype=None, order=None) -> CSR:
    """CSR of entries src -> dst in ``order`` (default: sorted by (src, dst), stably;
    ``"sorted"``: already in that order)."""
    if order is None:  # one int64 key sorts 2-4x faster than lexsort on two
        order = np.argsort(src * np.int64(dst_cap) + dst, kind="stable")
    presorted = isinstance(order, str) and order == "sorted"
    if not presorted:
        src, dst = src[order], dst[order]
    m = src.size
    indptr = np.zeros(n_cap + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n_cap), out=indptr[1:])
    s = np.full(e_cap, n_cap, np.int64)
    d = np.full(e_cap, dst_cap, np.int64)
    s[:m], d[:m] = src, dst
    w = None
    if weights is not None:
        w = np.zeros(e_cap, wdtype)
        w[:m] = weights if presorted else weights[order]
        w = device(w)
    return CSR(_i32(indptr), _i32(d), _i32(s), w)


def _transpose_order(r: np.ndarray, c: np.ndarray, nr: int, nc: int) -> np.ndarray:
    """The permutation taking (r, c) pairs sorted by (r, c), all distinct, to (c, r) order.

    scipy's CSR -> CSC conversion (one counting pass; 5x faster than a stable
    argsort by c on a CPU, 63M pairs), checked, with the argsort as the fallback.
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
        order = np.argsort(c, kind="stable")
    return order


def _batched_csr(g, src, dst, count: int, n_cap: int, dst_cap: int, e_cap: int, weights=None, wdtype=None) -> CSR:
    """The CSRs of ``count`` graphs stacked ([count, ...] arrays): entry k of graph ``g[k]`` is
    ``src[k] -> dst[k]`` (of weight ``weights[k]``), the entries sorted by (g, src, dst)."""
    starts = np.zeros(count + 1, np.int64)
    np.cumsum(np.bincount(g, minlength=count), out=starts[1:])
    flat = np.arange(g.size) + (g * e_cap - starts[g])   # entry k's place in the [count, e_cap] arrays
    indptr = np.zeros((count, n_cap + 1), np.int32)
    np.cumsum(np.bincount(g * n_cap + src, minlength=count * n_cap).reshape(count, n_cap), axis=1,
              out=indptr[:, 1:])
    s = np.full(count * e_cap, n_cap, np.int32)
    d = np.full(count * e_cap, dst_cap, np.int32)
    s[flat], d[flat] = src, dst
    w = None
    if weights is not None:
        w = np.zeros(count * e_cap, wdtype)
        w[flat] = weights
        w = device(w.reshape(count, e_cap))
    return CSR(device(indptr), device(d.reshape(count, e_cap)), device(s.reshape(count, e_cap)), w)


def _sorted_unique(keys: np.ndarray, rule: str, what: str) -> np.ndarray:
    """The distinct keys, sorted (a sort, not an argsort: nothing rides along); raises on a repeat
    when rule == 'error', naming the first position that holds a repeated key."""
    sk = np.sort(keys)
    new = np.ones(sk.size, bool)
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    if rule == "error" and not new.all():
        first = int(np.flatnonzero(np.isin(keys, sk[1:][~new[1:]]))[0])
        raise GraphInputError(f"duplicate {what} at position {first} (duplicates='error')")
    return sk[new]


def _sizes(x, count_from, name: str) -> np.ndarray:
    """Per-graph sizes of a batch: a 1-D array of non-negative ints that fit int32."""
    if x is None:
        raise GraphInputError(f"{name} must be given per graph (an array) with graph_index")
    a = _ids(np.atleast_1d(x), name)
    if a.size == 0:
        raise GraphInputError(f"{name} must hold at least one graph's size")
    if (a < 0).any():
        i = int(np.flatnonzero(a < 0)[0])
        raise GraphInputError(f"{name}[{i}] = {int(a[i])} is negative")
    if count_from is not None and a.size != count_from:
        raise GraphInputError(f"{name} has {a.size} sizes, the other sizes {count_from}: one per graph each")
    _count(int(a.max()), name)
    return a


def _bipartite_batch(rows, cols, n_rows, n_cols, graph_index, duplicates, caps):
    """:meth:`BipartiteGraph.from_edges` with ``graph_index``: the stacked batch in one pass."""
    r, c, g = _ids(rows, "rows"), _ids(cols, "cols"), _ids(graph_index, "graph_index")
    if not r.shape == c.shape == g.shape:
        raise GraphInputError(f"rows, cols and graph_index must have the same length, got {r.size}, {c.size} "
                              f"and {g.size}")
    nr = _sizes(n_rows, None, "n_rows")
    nc = _sizes(n_cols, nr.size, "n_cols")
    count = nr.size
    _in_range(g, count, "graph_index", "the number of graphs")
    _local_ids(r, g, nr, "rows", "n_rows")
    _local_ids(c, g, nc, "cols", "n_cols")
    br = (max(int(nr.max()), 1) - 1).bit_length()   # bits of a row id, of a column id: keys by shifts
    bc = (max(int(nc.max()), 1) - 1).bit_length()
    if (count - 1).bit_length() + br + bc > 62:
        raise GraphInputError("the batch's graphs times rows times columns must stay below 2**62")
    keys = _sorted_unique((g << (br + bc)) | (r << bc) | c, duplicates, "edge (row, col) of a graph")
    g, r, c = keys >> (br + bc), (keys >> bc) & ((1 << br) - 1), keys & ((1 << bc) - 1)
    m = np.bincount(g, minlength=count)
    _count(int(m.max()), "number of edges")
    rc = _capacity(int(nr.max()), caps[0], "row_capacity")
    cc = _capacity(int(nc.max()), caps[1], "col_capacity")
    ec = _capacity(int(m.max()), caps[2], "edge_capacity")
    t = np.sort((g << (br + bc)) | (c << br) | r)   # the same edges by (graph, col, row): nothing rides along
    gt, ct, rt = t >> (br + bc), (t >> br) & ((1 << bc) - 1), t & ((1 << br) - 1)
    return BipartiteGraph(by_col=_batched_csr(gt, ct, rt, count, cc, rc, ec),
                          by_row=_batched_csr(g, r, c, count, rc, cc, ec),
                          n_rows=_i32(nr), n_cols=_i32(nc), n_edges=_i32(m), row_cap=rc, col_cap=cc, edge_cap=ec)


def _local_ids(ids, g, sizes, name: str, size_name: str) -> None:
    """Raise unless every ``ids[k]`` lies in [0, sizes[g[k]]) (ids local to their own graph)."""
    bad = np.flatnonzero((ids < 0) | (ids >= sizes[g]))
    if bad.size:
        i = int(bad[0])
        raise GraphInputError(f"{name}[{i}] = {int(ids[i])} is out of range [0, {int(sizes[g[i]])}) for graph "
                              f"{int(g[i])}'s {size_name}")


def _graph_batch(u, v, weights, n, graph_index, duplicates, caps):
    """:meth:`Graph.from_edges` with ``graph_index``: the stacked batch in one pass."""
    u, v, g = _ids(u, "u"), _ids(v, "v"), _ids(graph_index, "graph_index")
    if not u.shape == v.shape == g.shape:
        raise GraphInputError(f"u, v and graph_index must have the same length, got {u.size}, {v.size} and {g.size}")
    nv = _sizes(n, None, "n")
    count = nv.size
    _in_range(g, count, "graph_index", "the number of graphs")
    _local_ids(u, g, nv, "u", "n")
    _local_ids(v, g, nv, "v", "n")
    wdt = _float_dtype()
    w = np.ones(u.size) if weights is None else _values(weights, u.size, "weights", integer=False)
    b = (max(int(nv.max()), 1) - 1).bit_length()
    if (count - 1).bit_length() + 2 * b > 62:
        raise GraphInputError("the batch's graphs times vertices squared must stay below 2**62")
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keys, inv = _merge((g << 2 * b) | (lo << b) | hi, duplicates, "edge {u, v} of a graph")
    w = np.bincount(inv, weights=w, minlength=keys.size)
    with np.errstate(over="ignore"):
        w, w64 = w.astype(wdt), w
    big = np.flatnonzero(~np.isfinite(w))
    if big.size:
        raise GraphInputError(f"weight {float(w64[big[0]]):.4g} of an edge does not fit {wdt}; scale the weights "
                              "or enable 64-bit mode (jax.config.update('jax_enable_x64', True))")
    g, lo, hi = keys >> 2 * b, (keys >> b) & ((1 << b) - 1), keys & ((1 << b) - 1)
    off = lo != hi
    eg, src, dst, ww = (np.concatenate([x, y[off]]) for x, y in ((g, g), (lo, hi), (hi, lo), (w, w)))
    o = np.argsort((eg << 2 * b) | (src << b) | dst, kind="stable")
    m, ne = np.bincount(g, minlength=count), np.bincount(eg, minlength=count)
    _count(int(ne.max()), "number of stored entries")
    vc = _capacity(int(nv.max()), caps[0], "vertex_capacity")
    ec = _capacity(int(ne.max()), caps[1], "entry_capacity")
    weighted = weights is not None or bool(np.any(w != 1))
    return Graph(adj=_batched_csr(eg[o], src[o], dst[o], count, vc, vc, ec, ww[o], wdt), n=_i32(nv), n_edges=_i32(m),
                 n_entries=_i32(ne), vertex_cap=vc, entry_cap=ec, weighted=weighted)


def _sort_keys(keys) -> np.ndarray:
    """The order sorting by the ``(array, bound)`` keys, first key first (``np.lexsort`` of the reversed
    arrays): one argsort of the keys packed into one int64 where their bounds fit 62 bits (5-10x faster
    than lexsort on millions of entries), else lexsort."""
    bits = [max(int(bound) - 1, 1).bit_length() for _, bound in keys]
    if sum(bits) > 62:
        return np.lexsort([k.astype(np.int64) for k, _ in reversed(keys)])
    packed = np.zeros(keys[0][0].size, np.int64)
    for (k, _), b in zip(keys, bits):
        packed = (packed << b) | k.astype(np.int64)
    return np.argsort(packed, kind="stable")


def _flow_batch(tail, head, cap, n, graph_index, layout, caps):
    """:meth:`FlowNetwork.from_edges` with ``graph_index``: the stacked batch in one pass."""
    t, h, g = _ids(tail, "tail"), _ids(head, "head"), _ids(graph_index, "graph_index")
    if not t.shape == h.shape == g.shape:
        raise GraphInputError(f"tail, head and graph_index must have the same length, got {t.size}, {h.size} "
                              f"and {g.size}")
    c = _values(cap, t.size, "cap", integer=True)
    cdt = jnp.dtype(jnp.int64) if jax.config.jax_enable_x64 else jnp.dtype(jnp.int32)
    if c.size and int(c.max()) > np.iinfo(cdt).max:
        raise GraphInputError(f"cap = {int(c.max())} does not fit {cdt}; enable 64-bit mode "
                              "(jax.config.update('jax_enable_x64', True)) for larger capacities")
    nv = _sizes(n, None, "n")
    count = nv.size
    _in_range(g, count, "graph_index", "the number of graphs")
    _local_ids(t, g, nv, "tail", "n")
    _local_ids(h, g, nv, "head", "n")
    by_graph = np.argsort(g, kind="stable")   # each network's arcs in their input order
    t, h, c, g = t[by_graph], h[by_graph], c[by_graph], g[by_graph]
    m = np.bincount(g, minlength=count)
    first = np.concatenate([[0], np.cumsum(m)])
    vc = _capacity(int(nv.max()), caps[0], "vertex_capacity")
    ac = _capacity(int(m.max()), caps[1], "arc_capacity")
    _count(2 * ac, "number of residual arcs (2 * arc_capacity)")
    total = t.size
    ids = np.arange(total) - first[g]   # arc ids local to each network
    # residual entries: forward i = arc i, reverse i + total; sorted by network, then as one network's
    src, dst = np.concatenate([t, h]), np.concatenate([h, t])
    fwd = np.concatenate([np.ones(total, bool), np.zeros(total, bool)])
    arc, eg = np.concatenate([ids, ids]), np.concatenate([g, g])
    second, third = ((dst, vc), (~fwd, 2)) if layout == "bcsr" else ((~fwd, 2), (dst, vc))
    order = _sort_keys([(eg, count), (src, vc), second, third, (arc, ac)])
    local = np.empty(2 * total, np.int64)   # each entry's position in its network's residual arrays
    local[order] = np.arange(2 * total) - 2 * first[eg[order]]
    rev = np.tile(np.arange(2 * ac, dtype=np.int64), (count, 1))
    rev[eg, local] = local[(np.arange(2 * total) + total) % max(2 * total, 1)]
    res = _batched_csr(eg[order], src[order], dst[order], count, vc, vc, 2 * ac)
    res_arc = np.full((count, 2 * ac), ac, np.int64)
    res_arc[eg[order], local[order]] = arc[order]
    res_fwd = np.zeros((count, 2 * ac), bool)
    res_fwd[eg[order], local[order]] = fwd[order]
    tt, hh, cc = np.full((count, ac), vc, np.int32), np.full((count, ac), vc, np.int32), np.zeros((count, ac), cdt)
    tt[g, ids], hh[g, ids], cc[g, ids] = t, h, c
    return FlowNetwork(tail=device(tt), head=device(hh), cap=device(cc), res=res, res_arc=_i32(res_arc),
                       res_forward=device(res_fwd), res_rev=_i32(rev), n=_i32(nv), n_arcs=_i32(m),
                       vertex_cap=vc, arc_cap=ac, layout=layout)


def _merge(keys: np.ndarray, rule: str, what: str):
    """Sorted unique keys and the inverse map; raises on duplicates when rule == 'error'.

    (``np.unique(..., return_inverse=True)`` took 3-4x as long on a CPU.) Keys
    already strictly increasing (edges from a canonical CSR) are taken as they are."""
    if keys.size < 2 or bool(np.all(keys[1:] > keys[:-1])):
        return keys, np.arange(keys.size)
    order = np.argsort(keys)
    sk = keys[order]
    new = np.ones(sk.size, bool)
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    uniq = sk[new]
    if rule == "error" and uniq.size < keys.size:
        repeated = np.bincount(group)[group] > 1
        first = int(order[repeated].min())
        raise GraphInputError(f"duplicate {what} at position {first} (duplicates='error')")
    inverse = np.empty(keys.size, np.int64)
    inverse[order] = group
    return uniq, inverse


def _check_rule(rule: str, allowed: tuple[str, ...]) -> None:
    if rule not in allowed:
        raise GraphInputError(f"duplicates must be one of {allowed}, got {rule!r}")


def _scalar(x) -> str:
    try:
        return str(int(x))
    except Exception:  # traced or batched
        return f"<{getattr(x, 'shape', '?')}>"


# --------------------------------------------------------------------------
# containers


@_pytree
class BipartiteGraph:
    """Bipartite graph G = (rows ∪ cols, E), the pattern of an n_rows x n_cols matrix.

    ``by_col``: column-major CSR (column -> rows; ``indices`` are row ids,
    ``src`` column ids). ``by_row``: row-major CSR (row -> columns). Built by
    :meth:`from_edges` or the adapters of :mod:`jaxmatch.io`.

    >>> g = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1])
    >>> int(g.n_rows), int(g.n_cols), int(g.n_edges), g.row_cap
    (2, 2, 3, 2)
    """

    by_col: CSR
    by_row: CSR
    n_rows: jax.Array
    n_cols: jax.Array
    n_edges: jax.Array
    row_cap: int = _static()
    col_cap: int = _static()
    edge_cap: int = _static()

    @classmethod
    def from_edges(cls, rows, cols, n_rows=None, n_cols=None, *, duplicates="merge",
                   row_capacity=None, col_capacity=None, edge_capacity=None, graph_index=None):
        """Build from edge arrays: edge k joins row ``rows[k]`` and column ``cols[k]``.

        A repeated (row, col) pair is stored once (``duplicates="merge"``) or
        rejected (``duplicates="error"``). Capacities default to powers of two.

        With ``graph_index`` (an int array beside the edges: the graph of each
        edge) the result is a *batch* of graphs, built in one vectorised pass:
        ``n_rows`` and ``n_cols`` are then arrays with one size per graph,
        edge ids are local to each graph, and the batch equals
        :func:`stack` of the graphs built one by one (capacities: the largest
        over the graphs, as powers of two).

        >>> b = BipartiteGraph.from_edges([0, 1, 0], [1, 0, 0], n_rows=[2, 1], n_cols=[2, 3], graph_index=[0, 0, 1])
        >>> b.n_edges.tolist(), b.by_row.indices.tolist()
        ([2, 1], [[1, 0], [0, 4]])
        """
        _check_rule(duplicates, ("merge", "error"))
        if graph_index is not None:
            return _bipartite_batch(rows, cols, n_rows, n_cols, graph_index, duplicates,
                                    (row_capacity, col_capacity, edge_capacity))
        r, c = _ids(rows, "rows"), _ids(cols, "cols")
        if r.shape != c.shape:
            raise GraphInputError(f"rows and cols must have the same length, got {r.size} and {c.size}")
        nr, nc = _size(r, n_rows, "n_rows"), _size(c, n_cols, "n_cols")
        _in_range(r, nr, "rows", "n_rows")
        _in_range(c, nc, "cols", "n_cols")
        keys, _ = _merge(r * max(nc, 1) + c, duplicates, "edge (row, col)")
        r, c = keys // max(nc, 1), keys % max(nc, 1)
        m = _count(r.size, "number of edges")
        rc = _capacity(nr, row_capacity, "row_capacity")
        cc = _capacity(nc, col_capacity, "col_capacity")
        ec = _capacity(m, edge_capacity, "edge_capacity")
        # keys are sorted by (row, col): by_row needs no sort
        return cls(by_col=_csr(c, r, cc, rc, ec, order=_transpose_order(r, c, nr, nc)),
                   by_row=_csr(r, c, rc, cc, ec, order="sorted"),
                   n_rows=_i32(nr), n_cols=_i32(nc), n_edges=_i32(m),
                   row_cap=rc, col_cap=cc, edge_cap=ec)

    @classmethod
    def from_scipy(cls, A, **kw):
        """Biadjacency pattern of a scipy sparse array or matrix (see :func:`jaxmatch.io.from_scipy`)."""
        return from_scipy(A, kind="bipartite", **kw)

    def edges(self):
        """Host copy ``(rows, cols, n_rows, n_cols)``, edges in row-major order."""
        m = int(self.n_edges)
        return (np.asarray(self.by_row.src)[:m], np.asarray(self.by_row.indices)[:m],
                int(self.n_rows), int(self.n_cols))

    def capacities(self) -> dict:
        return dict(row_capacity=self.row_cap, col_capacity=self.col_cap, edge_capacity=self.edge_cap)

    def with_capacity(self, **caps) -> "BipartiteGraph":
        """The same graph padded to other capacities (defaults: powers of two of the true sizes)."""
        return BipartiteGraph.from_edges(*self.edges(), **caps)

    def __repr__(self):
        return (f"BipartiteGraph(n_rows={_scalar(self.n_rows)}, n_cols={_scalar(self.n_cols)}, "
                f"n_edges={_scalar(self.n_edges)}, capacities=({self.row_cap}, {self.col_cap}, {self.edge_cap}))")


@_pytree
class Graph:
    """Undirected graph, optionally weighted, stored as a symmetric CSR ``adj``.

    Edge {u, v} (u != v) is stored twice, (u, v) and (v, u); a self-loop once,
    as the diagonal entry of the adjacency matrix. ``adj.weights`` always
    exists (ones for an unweighted graph; ``weighted`` records which).
    ``n_edges`` counts undirected edges (a loop once), ``n_entries`` the
    stored entries.

    >>> g = Graph.from_edges([0, 1], [1, 2], [2.0, 3.0])
    >>> int(g.n), int(g.n_edges), int(g.n_entries), g.weighted
    (3, 2, 4, True)
    """

    adj: CSR
    n: jax.Array
    n_edges: jax.Array
    n_entries: jax.Array
    vertex_cap: int = _static()
    entry_cap: int = _static()
    weighted: bool = _static()

    @classmethod
    def from_edges(cls, u, v, weights=None, n=None, *, duplicates="sum",
                   vertex_capacity=None, entry_capacity=None, graph_index=None):
        """Build from undirected edges {u[k], v[k]} with optional ``weights[k]``.

        Repeated edges (in either orientation) have their weights added
        (``duplicates="sum"``; an unweighted repeat becomes weight 2, and the
        graph then counts as weighted) or are rejected (``duplicates="error"``).
        With ``graph_index`` (the graph of each edge; ``n`` an array of
        sizes, ids local to each graph) the result is the batch that
        :func:`stack` makes of the graphs built one by one, in one pass
        (weighted if any graph is).
        """
        _check_rule(duplicates, ("sum", "error"))
        if graph_index is not None:
            return _graph_batch(u, v, weights, n, graph_index, duplicates, (vertex_capacity, entry_capacity))
        u, v = _ids(u, "u"), _ids(v, "v")
        if u.shape != v.shape:
            raise GraphInputError(f"u and v must have the same length, got {u.size} and {v.size}")
        nv = _size(np.concatenate([u, v]), n, "n")
        _in_range(u, nv, "u", "n")
        _in_range(v, nv, "v", "n")
        wdt = _float_dtype()
        w = np.ones(u.size) if weights is None else _values(weights, u.size, "weights", integer=False)
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        keys, inv = _merge(lo * max(nv, 1) + hi, duplicates, "edge {u, v}")
        w = np.bincount(inv, weights=w, minlength=keys.size)
        with np.errstate(over="ignore"):
            w, w64 = w.astype(wdt), w
        big = np.flatnonzero(~np.isfinite(w))
        if big.size:  # a weight, or the sum of repeated edges, overflows the float dtype
            k = int(big[0])
            raise GraphInputError(
                f"weight {float(w64[k]):.4g} of edge {{{int(keys[k] // max(nv, 1))}, {int(keys[k] % max(nv, 1))}}} "
                f"does not fit {wdt} (at most {float(np.finfo(wdt).max):.4g}); scale the weights "
                "or enable 64-bit mode (jax.config.update('jax_enable_x64', True))")
        lo, hi = keys // max(nv, 1), keys % max(nv, 1)
        off = lo != hi
        src = np.concatenate([lo, hi[off]])
        dst = np.concatenate([hi, lo[off]])
        ww = np.concatenate([w, w[off]])
        m = _count(keys.size, "number of edges")
        ne = _count(src.size, "number of stored entries")
        vc = _capacity(nv, vertex_capacity, "vertex_capacity")
        ec = _capacity(ne, entry_capacity, "entry_capacity")
        weighted = weights is not None or bool(np.any(w != 1))  # summed repeats carry weight
        return cls(adj=_csr(src, dst, vc, vc, ec, ww, wdt), n=_i32(nv), n_edges=_i32(m),
                   n_entries=_i32(ne), vertex_cap=vc, entry_cap=ec, weighted=weighted)

    @classmethod
    def from_scipy(cls, A, **kw):
        """Graph of a symmetric scipy sparse adjacency (see :func:`jaxmatch.io.from_scipy`)."""
        return from_scipy(A, kind="graph", **kw)

    def edges(self):
        """Host copy ``(u, v, weights or None, n)``, each undirected edge once with u <= v."""
        k = int(self.n_entries)
        s, d = np.asarray(self.adj.src)[:k], np.asarray(self.adj.indices)[:k]
        keep = s <= d
        w = np.asarray(self.adj.weights)[:k][keep] if self.weighted else None
        return s[keep], d[keep], w, int(self.n)

    def capacities(self) -> dict:
        return dict(vertex_capacity=self.vertex_cap, entry_capacity=self.entry_cap)

    def with_capacity(self, **caps) -> "Graph":
        return Graph.from_edges(*self.edges(), **caps)

    def __repr__(self):
        return (f"Graph(n={_scalar(self.n)}, n_edges={_scalar(self.n_edges)}, weighted={self.weighted}, "
                f"capacities=({self.vertex_cap}, {self.entry_cap}))")


LAYOUTS = ("bcsr", "rcsr")


@_pytree
class FlowNetwork:
    """Directed network with integer arc capacities and its residual layout.

    Input arcs, in the caller's order: ``tail``, ``head``, ``cap`` [arc_cap]
    (padding: tail = head = vertex_cap, cap = 0). Residual arcs [2 * arc_cap]:
    every input arc a gives a forward residual arc (capacity cap[a] - f[a])
    and a reverse one (capacity f[a]). ``res`` is a CSR over residual arcs
    keyed by their tail (``res.src``), ``res.indices`` their head;
    ``res_arc`` the input arc each one comes from, ``res_forward`` its
    direction and ``res_rev`` the position of its reverse arc.

    The two layouts of the WBPR paper differ in the order inside a vertex's
    row: ``"bcsr"`` (bidirectional CSR) mixes out- and in-arcs sorted by head,
    so a reverse arc can be found by binary search; ``"rcsr"`` keeps the
    forward arcs first and the reverse arcs after them (the paper's second,
    reverse CSR). ``res_rev`` is stored for both (O(1) lookup).

    >>> net = FlowNetwork.from_edges([0, 0, 1], [1, 2, 2], [3, 2, 1])
    >>> int(net.n), int(net.n_arcs), net.res.indices.shape
    (3, 3, (8,))
    """

    tail: jax.Array
    head: jax.Array
    cap: jax.Array
    res: CSR
    res_arc: jax.Array
    res_forward: jax.Array
    res_rev: jax.Array
    n: jax.Array
    n_arcs: jax.Array
    vertex_cap: int = _static()
    arc_cap: int = _static()
    layout: str = _static()

    @classmethod
    def from_edges(cls, tail, head, cap, n=None, *, layout="bcsr",
                   vertex_capacity=None, arc_capacity=None, graph_index=None):
        """Build from arcs tail[k] -> head[k] with integer capacity cap[k] >= 0.

        With ``graph_index`` (the network of each arc; ``n`` an array of
        sizes, ids local to each network, arcs of a network in their input
        order) the result is the batch that :func:`stack` makes of the
        networks built one by one, in one pass.
        """
        if layout not in LAYOUTS:
            raise GraphInputError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if graph_index is not None:
            return _flow_batch(tail, head, cap, n, graph_index, layout, (vertex_capacity, arc_capacity))
        t, h = _ids(tail, "tail"), _ids(head, "head")
        if t.shape != h.shape:
            raise GraphInputError(f"tail and head must have the same length, got {t.size} and {h.size}")
        c = _values(cap, t.size, "cap", integer=True)
        cdt = jnp.dtype(jnp.int64) if jax.config.jax_enable_x64 else jnp.dtype(jnp.int32)
        if c.size and int(c.max()) > np.iinfo(cdt).max:
            raise GraphInputError(
                f"cap = {int(c.max())} does not fit {cdt}; enable 64-bit mode "
                "(jax.config.update('jax_enable_x64', True)) for larger capacities")
        nv = _size(np.concatenate([t, h]), n, "n")
        _in_range(t, nv, "tail", "n")
        _in_range(h, nv, "head", "n")
        m = _count(t.size, "number of arcs")
        vc = _capacity(nv, vertex_capacity, "vertex_capacity")
        ac = _capacity(m, arc_capacity, "arc_capacity")
        _count(2 * ac, "number of residual arcs (2 * arc_capacity)")
        ids = np.arange(m)
        # residual arcs: forward k = arc k, reverse k + m = arc k reversed
        src = np.concatenate([t, h])
        dst = np.concatenate([h, t])
        fwd = np.concatenate([np.ones(m, bool), np.zeros(m, bool)])
        arc = np.concatenate([ids, ids])
        second = dst if layout == "bcsr" else ~fwd
        third = ~fwd if layout == "bcsr" else dst
        order = np.lexsort((arc, third, second, src))
        pos = np.empty(2 * m, np.int64)
        pos[order] = np.arange(2 * m)
        rev = np.arange(2 * ac, dtype=np.int64)
        rev[pos] = pos[(np.arange(2 * m) + m) % max(2 * m, 1)]
        res = _csr(src, dst, vc, vc, 2 * ac, order=order)
        pad = lambda a, fill, dt=np.int32: np.pad(a, (0, ac - m), constant_values=fill).astype(dt)
        return cls(tail=_i32(pad(t, vc)), head=_i32(pad(h, vc)), cap=device(pad(c, 0, cdt)),
                   res=res,
                   res_arc=_i32(np.pad(arc[order], (0, 2 * (ac - m)), constant_values=ac)),
                   res_forward=device(np.pad(fwd[order], (0, 2 * (ac - m)))),
                   res_rev=_i32(rev), n=_i32(nv), n_arcs=_i32(m),
                   vertex_cap=vc, arc_cap=ac, layout=layout)

    @classmethod
    def from_scipy(cls, A, **kw):
        """Network whose arcs are the entries of a scipy sparse matrix (see :func:`jaxmatch.io.from_scipy`)."""
        return from_scipy(A, kind="flow", **kw)

    def edges(self):
        """Host copy ``(tail, head, cap, n)`` in the input order."""
        m = int(self.n_arcs)
        return (np.asarray(self.tail)[:m], np.asarray(self.head)[:m], np.asarray(self.cap)[:m],
                int(self.n))

    def capacities(self) -> dict:
        return dict(vertex_capacity=self.vertex_cap, arc_capacity=self.arc_cap)

    def with_capacity(self, **caps) -> "FlowNetwork":
        return FlowNetwork.from_edges(*self.edges(), layout=self.layout, **caps)

    def with_layout(self, layout: str) -> "FlowNetwork":
        """The same network in the other residual layout."""
        return FlowNetwork.from_edges(*self.edges(), layout=layout, **self.capacities())

    def __repr__(self):
        return (f"FlowNetwork(n={_scalar(self.n)}, n_arcs={_scalar(self.n_arcs)}, layout={self.layout!r}, "
                f"capacities=({self.vertex_cap}, {self.arc_cap}))")


# --------------------------------------------------------------------------
# scipy (re-exported by jaxmatch.io)


_KINDS = {"bipartite": BipartiteGraph, "graph": Graph, "flow": FlowNetwork}


def _kind(kind, default):
    kind = default if kind is None else kind
    if isinstance(kind, type) and kind in _KINDS.values():
        return kind
    if isinstance(kind, str) and kind in _KINDS:
        return _KINDS[kind]
    raise GraphInputError(
        f"kind must be one of {tuple(_KINDS)} or a jaxmatch graph class, got {kind!r}")


# --------------------------------------------------------------------------
# scipy


def from_scipy(A, kind="bipartite", *, symmetrize=None, weighted=None, **kw):
    """Graph of a scipy sparse array or matrix (any format: csr, csc, coo, lil, dok ...).

    ``kind="bipartite"``: the biadjacency pattern, ``n_rows x n_cols = A.shape``.
    A stored entry is an edge only if it is nonzero (explicit zeros are
    dropped, as ``A.eliminate_zeros()`` would do on a copy; note that
    ``scipy.sparse.csgraph.maximum_bipartite_matching`` instead counts every
    stored entry, explicit zeros included).

    ``kind="graph"``: ``A`` must be square and exactly symmetric (pattern and
    values; only the pattern with ``weighted=False``), else the first
    asymmetric entry in row-major order is named; ``symmetrize=True`` uses
    ``max(A, A.T)`` instead (a missing entry counts as absent). Every stored
    entry is an edge (scipy.sparse.csgraph's convention: an explicit zero is
    an edge of weight 0; the stored entries are those of ``A.tocoo()``, which
    for BSR include the zeros inside stored blocks); the diagonal holds
    self-loop weights. The graph is
    weighted unless ``weighted=False`` (a boolean matrix defaults to False);
    the upper triangle, diagonal included, goes to :meth:`Graph.from_edges`.

    ``kind="flow"``: ``A`` square with an integer dtype (scipy's
    ``maximum_flow`` has the same rule); every stored entry ``A[i, j]`` is an
    arc ``i -> j`` of that capacity, in the order of ``A.tocoo()``.

    Duplicate entries of a non-canonical input (e.g. COO) are kept and go to
    ``from_edges``, whose ``duplicates=`` rule applies: merged for bipartite,
    summed for graphs (as scipy sums them), parallel arcs for flow.

    >>> import scipy.sparse as sp
    >>> g = from_scipy(sp.csr_array([[1, 0], [1, 1]]))
    >>> int(g.n_rows), int(g.n_cols), int(g.n_edges)
    (2, 2, 3)
    >>> int(from_scipy(sp.csr_array([[0, 2.0], [2.0, 0]]), "graph").n_edges)
    1
    """
    import scipy.sparse as sp
    cls = _kind(kind, "bipartite")
    if not sp.issparse(A):
        raise GraphInputError(
            f"from_scipy needs a scipy sparse array or matrix, got {type(A).__name__}; "
            "for a dense array pass scipy.sparse.csr_array(A)")
    if len(A.shape) != 2:
        raise GraphInputError(f"from_scipy needs a 2-D sparse matrix, got shape {A.shape}")
    if cls is not Graph and (symmetrize is not None or weighted is not None):
        raise GraphInputError("symmetrize= and weighted= apply to kind='graph' only")
    nr, nc = A.shape
    coo = A.tocoo()
    r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    if cls is BipartiteGraph:
        keep = v != 0
        return BipartiteGraph.from_edges(r[keep], c[keep], nr, nc, **kw)
    if nr != nc:
        kind = "graph" if cls is Graph else "flow"
        raise GraphInputError(f"kind={kind!r} needs a square matrix, got shape {A.shape}")
    if cls is FlowNetwork:
        if not np.issubdtype(A.dtype, np.integer):
            raise GraphInputError(
                f"kind='flow' needs integer capacities, got dtype {A.dtype} (scipy's maximum_flow "
                "has the same rule): convert with A.astype(np.int64) if the values are whole")
        return FlowNetwork.from_edges(r, c, v, nr, **kw)
    weighted = A.dtype != np.bool_ if weighted is None else bool(weighted)
    C = sp.csr_array((v, (r, c)), shape=A.shape)  # canonical: duplicates summed
    C.sum_duplicates()
    cr = np.repeat(np.arange(nr, dtype=np.int64), np.diff(C.indptr))
    cc, cv = C.indices.astype(np.int64), C.data
    if symmetrize:
        keys = np.concatenate([cr * nr + cc, cc * nr + cr])
        vals = np.concatenate([cv, cv])
        order = np.argsort(keys, kind="stable")
        keys, vals = keys[order], vals[order]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        keys, v = keys[first], np.maximum.reduceat(vals, first) if first.size else vals
        r, c = keys // max(nr, 1), keys % max(nr, 1)
    else:
        _check_symmetric(cr, cc, cv, nr, weighted)
        if kw.get("duplicates") == "error" and C.nnz < r.size:  # the lower triangle's too
            raise GraphInputError("the matrix has duplicate entries (duplicates='error')")
    upper = r <= c
    return Graph.from_edges(r[upper], c[upper], v[upper] if weighted else None, nr, **kw)


def _check_symmetric(r, c, v, n, values):
    key = r * n + c                      # sorted: canonical CSR is row-major
    if not key.size:
        return
    pos = np.minimum(np.searchsorted(key, c * n + r), key.size - 1)
    found = key[pos] == c * n + r
    bad = ~found | (found & (v[pos] != v)) if values else ~found
    idx = np.flatnonzero(bad)
    if idx.size:
        k = int(idx[0])
        i, j = int(r[k]), int(c[k])
        mirror = f"A[{j}, {i}] = {v[pos[k]].item()!r}" if found[k] else f"A[{j}, {i}] is not stored"
        raise GraphInputError(
            f"kind='graph' needs a symmetric matrix: A[{i}, {j}] = {v[k].item()!r} but {mirror}; "
            "pass symmetrize=True to use max(A, A.T)")


GRAPH_TYPES = (BipartiteGraph, Graph, FlowNetwork)


def _size_leaf(g):
    return g.n_rows if isinstance(g, BipartiteGraph) else g.n


# --------------------------------------------------------------------------
# batching


def stack(graphs):
    """Pad graphs of one type to common capacities and stack them for ``jax.vmap``.

    Capacities are the largest among the graphs, rounded up to powers of two;
    every array field gains a leading batch axis.

    >>> gs = [BipartiteGraph.from_edges([0], [0]), BipartiteGraph.from_edges([0, 2], [1, 0])]
    >>> b = stack(gs)
    >>> b.n_rows.shape, b.row_cap
    ((2,), 4)
    """
    try:
        graphs = list(graphs)
    except TypeError:
        raise GraphInputError(f"stack needs a sequence of jaxmatch graphs, got {type(graphs).__name__}") from None
    if not graphs:
        raise GraphInputError("stack needs at least one graph")
    kind = type(graphs[0])
    if kind not in GRAPH_TYPES or any(type(g) is not kind for g in graphs):
        raise GraphInputError(f"stack needs graphs of one jaxmatch type, got {sorted({type(g).__name__ for g in graphs})}")
    if any(np.ndim(_size_leaf(g)) for g in graphs):
        raise GraphInputError("stack takes single graphs, not batches")
    flat = [jax.tree_util.tree_flatten(g) for g in graphs]
    caps = graphs[0].capacities()
    dtypes = lambda leaves: tuple(x.dtype for x in leaves)  # noqa: E731
    if (all(t == flat[0][1] and dtypes(v) == dtypes(flat[0][0]) for v, t in flat)
            and all(next_pow2(v) == v for v in caps.values())):
        # one structure (type, capacities, layout, weights or not, dtypes) at powers of two: the
        # batch's rows are the graphs' padded arrays as they are
        return jax.tree_util.tree_unflatten(flat[0][1], [device(np.stack(x)) for x in zip(*(v for v, _ in flat))])
    caps = {k: next_pow2(max(g.capacities()[k] for g in graphs)) for k in caps}
    if kind is FlowNetwork:
        layouts = {g.layout for g in graphs}
        if len(layouts) > 1:
            raise GraphInputError(f"stack needs one residual layout, got {sorted(layouts)}")
    # otherwise one transfer to the host and one vectorised pass over all the edges (the batch
    # constructors), no per-graph padding
    host = jax.device_get(graphs)
    parts = [g.edges() for g in host]
    gid = np.repeat(np.arange(len(parts)), [p[0].size for p in parts])
    cat = [np.concatenate([p[i] for p in parts]) for i in range(2)]
    if kind is BipartiteGraph:
        return BipartiteGraph.from_edges(*cat, np.array([p[2] for p in parts]), np.array([p[3] for p in parts]),
                                         graph_index=gid, **caps)
    if kind is Graph:   # a weighted batch if any graph is (unit weights for the others)
        w = None
        if any(g.weighted for g in graphs):
            w = np.concatenate([p[2] if p[2] is not None else np.ones(p[0].size) for p in parts])
        return Graph.from_edges(*cat, w, np.array([p[3] for p in parts]), graph_index=gid, **caps)
    return FlowNetwork.from_edges(*cat, np.concatenate([p[2] for p in parts]), np.array([p[3] for p in parts]),
                                  layout=graphs[0].layout, graph_index=gid, **caps)


def unstack(batch, *, trim: bool = False):
    """Split a batch made by :func:`stack` (or a ``graph_index=`` constructor) into its graphs.

    Default: one transfer of the batch to the host, and each graph is a view of it, at the
    batch's capacities, with NumPy arrays (as :func:`jax.device_get` gives): 10^5 graphs of
    32 x 32 split in about a second on a 2-core CPU. A solver takes such a graph as it is (its
    arrays go to the device with the call; ``jax.device_put(g)`` moves one ahead). ``trim=True``
    rebuilds each graph on the device at its own default capacities (one ``from_edges`` per
    graph, 1-2 ms each).

    >>> b = stack([BipartiteGraph.from_edges([0], [0]), BipartiteGraph.from_edges([0, 2], [1, 0])])
    >>> g = unstack(b)[1]
    >>> int(g.n_edges), g.row_cap, unstack(b, trim=True)[0].row_cap
    (2, 4, 1)
    """
    if type(batch) not in GRAPH_TYPES:
        raise GraphInputError(f"unstack needs a batched jaxmatch graph, got {type(batch).__name__}")
    if np.ndim(_size_leaf(batch)) != 1:
        raise GraphInputError("unstack needs a batch made by stack (array fields with one leading axis)")
    leaves, tree = jax.tree_util.tree_flatten(jax.device_get(batch))
    graphs = [jax.tree_util.tree_unflatten(tree, [x[i] for x in leaves]) for i in range(leaves[0].shape[0])]
    return [g.with_capacity() for g in graphs] if trim else graphs
