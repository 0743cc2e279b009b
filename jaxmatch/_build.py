"""Host-side construction of the containers' arrays from edge arrays: one graph, or a batch.

The ``from_edges`` constructors of :mod:`jaxmatch.graph` check their options and
hand the work to the functions here, which validate the edges (ids, sizes,
weights, capacities; :mod:`jaxmatch._validate`), merge repeated edges by one sort
of packed int64 keys, and build the padded CSR arrays with NumPy. Each returns
the container's fields as a dict (the container classes sit one layer up).
``_*_fields`` build one graph; ``_*_batch`` build the batch that
:func:`~jaxmatch.stack` makes of many graphs, in one vectorised pass over all
their edges (``graph_index=``): the graph id is the leading part of every sort
key, and every array gains a leading batch axis, padded to the largest
capacities over the graphs.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._csr import (_argsort, _csr, _csr_rows, _device_csr, _fill_csr_rows, _i32, _padded, _sort,
                           _transpose_order)
from jaxmatch._ops import cores, device
from jaxmatch._validate import (GraphInputError, _capacity, _count, _float_dtype, _ids, _in_range, _size,
                                _values)


def _merge(keys: np.ndarray, rule: str, what: str):
    """Sorted unique keys and the inverse map; raises on duplicates when rule == 'error'.

    One argsort and a ``cumsum`` (quicker than ``np.unique(..., return_inverse=True)``).
    Keys already strictly increasing (edges from a canonical CSR) are taken as they are."""
    if keys.size < 2 or bool(np.all(keys[1:] > keys[:-1])):
        return keys, np.arange(keys.size)
    order = _argsort(keys)
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


def _sorted_unique(keys: np.ndarray, rule: str, what: str) -> np.ndarray:
    """The distinct keys, sorted (a sort, not an argsort: nothing rides along); raises on a repeat
    when rule == 'error', naming the first position that holds a repeated key."""
    sk = _sort(keys)
    new = np.ones(sk.size, bool)
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    if rule == "error" and not new.all():
        first = int(np.flatnonzero(np.isin(keys, sk[1:][~new[1:]]))[0])
        raise GraphInputError(f"duplicate {what} at position {first} (duplicates='error')")
    return sk[new]


def _summed(w: np.ndarray, inv: np.ndarray, size: int, wdt) -> np.ndarray:
    """The weights of the distinct edges: ``w`` summed over repeats (``inv``: each input edge's distinct
    edge) in float64, then cast to ``wdt``; raises when a sum does not fit it."""
    s = np.bincount(inv, weights=w, minlength=size)
    with np.errstate(over="ignore"):
        out = s.astype(wdt)
    big = np.flatnonzero(~np.isfinite(out))
    if big.size:
        raise GraphInputError(f"weights: the weight {float(s[big[0]]):.4g} of an edge does not fit {wdt}; scale "
                              "the weights or enable 64-bit mode (jax.config.update('jax_enable_x64', True))")
    return out


def _bipartite_fields(rows, cols, weights, n_rows, n_cols, duplicates, row_capacity, col_capacity, edge_capacity):
    """:meth:`BipartiteGraph.from_edges` of one graph: its fields."""
    r, c = _ids(rows, "rows"), _ids(cols, "cols")
    if r.shape != c.shape:
        raise GraphInputError(f"rows and cols must have the same length, got {r.size} and {c.size}")
    w = None if weights is None else _values(weights, r.size, "weights", integer=False, signed=True)
    nr, nc = _size(r, n_rows, "n_rows"), _size(c, n_cols, "n_cols")
    _in_range(r, nr, "rows", "n_rows")
    _in_range(c, nc, "cols", "n_cols")
    keys, inv = _merge(r * max(nc, 1) + c, duplicates, "edge (row, col)")
    r, c = keys // max(nc, 1), keys % max(nc, 1)
    wdt = None
    if w is not None:   # the weights of repeated edges add up, as scipy.sparse sums duplicates
        wdt = _float_dtype()
        w = _summed(w, inv, keys.size, wdt)
    m = _count(r.size, "number of edges")
    rc = _capacity(nr, row_capacity, "row_capacity")
    cc = _capacity(nc, col_capacity, "col_capacity")
    ec = _capacity(m, edge_capacity, "edge_capacity")
    # keys are sorted by (row, col): by_row needs no sort
    return dict(by_col=_csr(c, r, cc, rc, ec, w, wdt, order=_transpose_order(r, c, nr, nc)),
                by_row=_csr(r, c, rc, cc, ec, w, wdt, order="sorted"),
                n_rows=_i32(nr), n_cols=_i32(nc), n_edges=_i32(m),
                row_cap=rc, col_cap=cc, edge_cap=ec)


def _graph_fields(u, v, weights, n, duplicates, vertex_capacity, entry_capacity):
    """:meth:`Graph.from_edges` of one graph: its fields."""
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
    return dict(adj=_csr(src, dst, vc, vc, ec, ww, wdt), n=_i32(nv), n_edges=_i32(m),
                n_entries=_i32(ne), vertex_cap=vc, entry_cap=ec, weighted=weighted)


def _flow_fields(tail, head, cap, n, layout, vertex_capacity, arc_capacity):
    """:meth:`FlowNetwork.from_edges` of one network: its fields."""
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
    # residual arcs: forward k = arc k, reverse k + m = arc k reversed
    order, _, src, dst, fwd, arc = _residual_sorted(t, h, np.arange(m), np.zeros(m, np.int64), np.array([0, m]), vc,
                                                      ac, layout)
    pos = np.empty(2 * m, np.int64)
    pos[order] = np.arange(2 * m)
    rev = np.arange(2 * ac, dtype=np.int64)
    rev[pos] = pos[(np.arange(2 * m) + m) % max(2 * m, 1)]
    res = _csr(src, dst, vc, vc, 2 * ac, order="sorted")
    pad = lambda a, fill, dt=np.int32: np.pad(a, (0, ac - m), constant_values=fill).astype(dt)
    return dict(tail=_i32(pad(t, vc)), head=_i32(pad(h, vc)), cap=device(pad(c, 0, cdt)),
                res=res,
                res_arc=_i32(np.pad(arc, (0, 2 * (ac - m)), constant_values=ac)),
                res_forward=device(np.pad(fwd, (0, 2 * (ac - m)))),
                res_rev=_i32(rev), n=_i32(nv), n_arcs=_i32(m),
                vertex_cap=vc, arc_cap=ac, layout=layout)


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


def _bipartite_batch(rows, cols, weights, n_rows, n_cols, graph_index, duplicates, caps):
    """:meth:`BipartiteGraph.from_edges` with ``graph_index``: the stacked batch in one pass."""
    r, c, g = _ids(rows, "rows"), _ids(cols, "cols"), _ids(graph_index, "graph_index")
    if not r.shape == c.shape == g.shape:
        raise GraphInputError(f"rows, cols and graph_index must have the same length, got {r.size}, {c.size} "
                              f"and {g.size}")
    w = None if weights is None else _values(weights, r.size, "weights", integer=False, signed=True)
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
    kt = np.int32 if (count - 1).bit_length() + br + bc <= 31 else np.int64   # int32 keys: half the traffic
    wdt = None if w is None else _float_dtype()
    g, r, c, w = _graph_sorted(g, r, c, w)
    first = np.concatenate([[0], np.cumsum(np.bincount(g, minlength=count))])
    runs = list(_runs(first))   # graphs in runs, each on its own (as _residual_rows)
    what = "edge (row, col) of a graph"

    def distinct(run):   # a run's distinct edges, keys (graph in the run, row, col), weights summed
        (b0, b1), lo, hi = run, first[run[0]], first[run[1]]
        keys = ((g[lo:hi] - b0).astype(kt) << (br + bc)) | (r[lo:hi].astype(kt) << bc) | c[lo:hi].astype(kt)
        if w is None:
            return _sorted_unique(keys, "merge", what), None
        keys, inv = _merge(keys, "merge", what)
        return keys, _summed(w[lo:hi], inv, keys.size, wdt)

    parts = _each_run(distinct, runs)
    if duplicates == "error" and sum(k.size for k, _ in parts) < g.size:   # name the first repeat
        _sorted_unique((_ids(graph_index, "graph_index") << (br + bc)) | (_ids(rows, "rows") << bc)
                       | _ids(cols, "cols"), "error", what)
    m = np.concatenate([np.bincount(k >> (br + bc), minlength=b1 - b0) for (k, _), (b0, b1) in zip(parts, runs)])
    _count(int(m.max()), "number of edges")
    rc = _capacity(int(nr.max()), caps[0], "row_capacity")
    cc = _capacity(int(nc.max()), caps[1], "col_capacity")
    ec = _capacity(int(m.max()), caps[2], "edge_capacity")
    out = {side: _csr_rows(count, n, ec, None if w is None else wdt) for side, n in (("row", rc), ("col", cc))}

    def fill(run, part):   # the run's rows of both CSRs
        (b0, b1), (keys, wk) = run, part
        gl, rl, cl = keys >> (br + bc), (keys >> bc) & ((1 << br) - 1), keys & ((1 << bc) - 1)
        t = (gl << (br + bc)) | (cl << br) | rl   # the same edges by (graph, col, row)
        if w is None:
            t, wt = _sort(t), None   # nothing rides along
        else:
            o = _argsort(t)
            t, wt = t[o], wk[o]
        gt, ct, rt = t >> (br + bc), (t >> br) & ((1 << bc) - 1), t & ((1 << br) - 1)
        _fill_csr_rows(out["row"], b0, b1, gl, rl, cl, wk, m[b0:b1], rc, cc)
        _fill_csr_rows(out["col"], b0, b1, gt, ct, rt, wt, m[b0:b1], cc, rc)

    _each_run(fill, runs, parts)
    return dict(by_col=_device_csr(out["col"]), by_row=_device_csr(out["row"]),
                n_rows=_i32(nr), n_cols=_i32(nc), n_edges=_i32(m), row_cap=rc, col_cap=cc, edge_cap=ec)


def _local_ids(ids, g, sizes, name: str, size_name: str) -> None:
    """Raise unless every ``ids[k]`` lies in [0, sizes[g[k]]) (ids local to their own graph)."""
    if not ids.size or (int(ids.min()) >= 0 and int(ids.max()) < int(sizes.min())):
        return   # within the smallest graph's size: no gather of each id's own size
    bad = np.flatnonzero((ids < 0) | (ids >= sizes[g]))
    if bad.size:
        i = int(bad[0])
        raise GraphInputError(f"{name}[{i}] = {int(ids[i])} is out of range [0, {int(sizes[g[i]])}) for graph "
                              f"{int(g[i])}'s {size_name}")


def _graph_batch(u_in, v_in, weights, n, graph_index, duplicates, caps):
    """:meth:`Graph.from_edges` with ``graph_index``: the stacked batch in one pass."""
    u, v, g = _ids(u_in, "u"), _ids(v_in, "v"), _ids(graph_index, "graph_index")
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
    g, u, v, w = _graph_sorted(g, u, v, w)
    first = np.concatenate([[0], np.cumsum(np.bincount(g, minlength=count))])
    runs = list(_runs(first))   # graphs in runs, each on its own (as _residual_rows)
    what = "edge {u, v} of a graph"

    def distinct(run):   # a run's distinct edges, keys (graph in the run, lower id, higher id), weights summed
        (b0, b1), lo, hi = run, first[run[0]], first[run[1]]
        a, c = u[lo:hi], v[lo:hi]
        keys, inv = _merge(((g[lo:hi] - b0) << 2 * b) | (np.minimum(a, c) << b) | np.maximum(a, c), "sum", what)
        return keys, _summed(w[lo:hi], inv, keys.size, wdt)

    parts = _each_run(distinct, runs)
    if duplicates == "error" and sum(k.size for k, _ in parts) < g.size:   # name the first repeat
        a, c = _ids(u_in, "u"), _ids(v_in, "v")
        _merge((_ids(graph_index, "graph_index") << 2 * b) | (np.minimum(a, c) << b) | np.maximum(a, c), "error", what)
    per_run = [(k >> 2 * b, (k >> b) & ((1 << b) - 1), k & ((1 << b) - 1)) for k, _ in parts]
    m = np.concatenate([np.bincount(gl, minlength=b1 - b0) for (gl, _, _), (b0, b1) in zip(per_run, runs)])
    ne = m + np.concatenate([np.bincount(gl[lo != hi], minlength=b1 - b0)
                             for (gl, lo, hi), (b0, b1) in zip(per_run, runs)])
    _count(int(ne.max()), "number of stored entries")
    vc = _capacity(int(nv.max()), caps[0], "vertex_capacity")
    ec = _capacity(int(ne.max()), caps[1], "entry_capacity")
    weighted = weights is not None or any(bool(np.any(wk != 1)) for _, wk in parts)
    out = _csr_rows(count, vc, ec, wdt)

    def fill(run, keys, part):   # the run's rows: each edge both ways (a loop once), by (graph, src, dst)
        (b0, b1), (gl, lo, hi), (_, wk) = run, keys, part
        off = lo != hi
        eg, src, dst, ww = (np.concatenate([x, y[off]]) for x, y in ((gl, gl), (lo, hi), (hi, lo), (wk, wk)))
        o = _argsort((eg << 2 * b) | (src << b) | dst)
        _fill_csr_rows(out, b0, b1, eg[o], src[o], dst[o], ww[o], ne[b0:b1], vc, vc)

    _each_run(fill, runs, per_run, parts)
    return dict(adj=_device_csr(out), n=_i32(nv), n_edges=_i32(m), n_entries=_i32(ne), vertex_cap=vc, entry_cap=ec,
                weighted=weighted)


def _residual_sorted(t, h, arc, g, first, vc: int, ac: int, layout: str):
    """The residual entries of networks' arcs in the residual CSRs' order, and the order itself.

    Entry i < m is arc i forward (``t[i] -> h[i]``), entry m + i the same arc reversed; ``arc`` holds
    each arc's id in its network, ``g`` its network (sorted; zeros for one network), ``first`` where
    each network's arcs start among the m, and the end (``[0, m]`` for one network). The order: by
    network, tail, then head, forward entries first, arc id (BCSR), or forward entries first, head,
    arc id (RCSR). Returns ``(order, g, src, dst, forward, arc)``, the fields in that order. Where the
    keys fit 63 bits, one sort of them packed into int64: the keys are distinct, so NumPy's default
    (SIMD) sort gives the order, and the fields are read back from the sorted keys' bits, with no
    gather; else ``np.lexsort``."""
    m = t.size
    bg, bv, ba = (max(int(x) - 1, 0).bit_length() for x in (first.size - 1, vc, ac))
    if bg + 2 * bv + 1 + ba > 63:
        src, dst = np.concatenate([t, h]), np.concatenate([h, t])
        gg, aa = np.concatenate([g, g]), np.concatenate([arc, arc])
        back = np.arange(2 * m) >= m
        second, third = (dst, back) if layout == "bcsr" else (back, dst)
        order = np.lexsort((aa, third, second, src, gg))
        return order, gg[order], src[order], dst[order], ~back[order], aa[order]
    # bits from the top: network, tail, then head and the reverse flag (BCSR) or the flag and head, arc
    sb, db, rb = (bv + 1 + ba, 1 + ba, ba) if layout == "bcsr" else (bv + 1 + ba, ba, bv + ba)
    keys = np.empty(2 * m, np.int64)
    for part, (a, b, back) in enumerate(((t, h, 0), (h, t, 1))):
        k = keys[part * m:(part + 1) * m]
        k[...] = g
        k <<= sb + bv
        k |= a.astype(np.int64) << sb
        k |= b.astype(np.int64) << db
        k |= arc
        if back:
            k |= 1 << rb
    keys.sort()
    field = lambda shift, bits: ((keys >> shift) & ((1 << bits) - 1)).astype(np.int32)  # noqa: E731
    gs, src, dst, arcs = keys >> (sb + bv), field(sb, bv), field(db, bv), field(0, ba)
    forward = (keys & (1 << rb)) == 0
    order = first[gs] + arcs + np.where(forward, 0, m)
    return order, gs, src, dst, forward, arcs


BUILD_RUN = 1 << 16   # the edges of a batch built at once per 4 cores (below; RESULTS sessions 52-53)


def _runs(first: np.ndarray):
    """``(b0, b1)`` ranges of consecutive graphs, each with at most ``size`` edges (or one graph);
    ``first``: where each graph's edges start, and the end. ``size`` is ``BUILD_RUN`` per 4 cores (2
    cores: 2^16 edges, the best of 2^16-2^20 at 10^3-10^5 graphs; 16 cores: 2^18, 28-40% faster than
    2^16 at 10^5), but no more than a core's share of the batch, so a small batch still spreads over
    the cores (10^3 graphs of 256 edges on 16 cores: 4 runs of 2^16, twice as fast as one)."""
    threads = cores()
    size = min(BUILD_RUN * max(1, threads // 4), max(BUILD_RUN, int(first[-1]) // threads))
    b0, count = 0, first.size - 1
    while b0 < count:
        b1 = max(b0 + 1, int(np.searchsorted(first, first[b0] + size, "right")) - 1)
        yield b0, min(b1, count)
        b0 = b1


def _each_run(fn, runs, *per_run) -> list:
    """``fn(run, ...)`` for every run of graphs (with the run's item of each ``per_run`` list), on as
    many threads as there are cores: NumPy's passes let go of the GIL, so the runs overlap."""
    if len(runs) < 2 or cores() < 2:
        return list(map(fn, runs, *per_run))
    with ThreadPoolExecutor(cores()) as pool:
        return list(pool.map(fn, runs, *per_run))


def _graph_sorted(g, *arrays):
    """``g`` and ``arrays`` (None stays None) in graph order, each graph's edges in their input order."""
    if g.size < 2 or bool(np.all(g[1:] >= g[:-1])):
        return (g, *arrays)
    o = _argsort(g)
    return (g[o], *(None if x is None else x[o] for x in arrays))


def _residual_rows(t, h, g, m, first, b0: int, b1: int, vc: int, ac: int, layout: str, out: dict) -> None:
    """Networks b0..b1's rows of the batch's residual arrays, written into ``out``'s arrays.

    The batch's build takes its networks in runs (:func:`_runs`): each run's
    temporaries are a few MB, which the allocator hands back to the next run, where one pass over
    the whole batch touches fresh memory for every temporary (experiments/RESULTS.md, session 51)."""
    lo, hi = int(first[b0]), int(first[b1])
    ms, fl, total = m[b0:b1], first[b0:b1 + 1] - lo, hi - lo
    ids = np.arange(total) - np.repeat(fl[:-1], ms)   # arc ids local to each network (g is sorted)
    order, eg, src, dst, fwd, arc = _residual_sorted(t[lo:hi], h[lo:hi], ids, g[lo:hi] - b0, fl, vc, ac, layout)
    # in sorted order the entries run network by network, 2 m[b] of them each, filling each network's
    # slots in order (_padded)
    local = np.empty(2 * total, np.int32)   # each entry's position in its network's residual arrays
    local[order] = np.arange(2 * total) - np.repeat(2 * fl[:-1], 2 * ms)
    rows, w, ms2 = slice(b0, b1), 2 * ac, 2 * ms
    _padded(local[(order + total) % max(2 * total, 1)], ms2, w, np.arange(w), np.int32, out=out["rev"][rows])
    _padded(arc, ms2, w, ac, None, out=out["arc"][rows])
    _padded(fwd, ms2, w, False, None, out=out["fwd"][rows])
    _fill_csr_rows(out["res"], b0, b1, eg, src, dst, None, ms2, vc, vc)


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
    g, t, h, c = _graph_sorted(g, t, h, c)
    m = np.bincount(g, minlength=count)
    first = np.concatenate([[0], np.cumsum(m)])
    vc = _capacity(int(nv.max()), caps[0], "vertex_capacity")
    ac = _capacity(int(m.max()), caps[1], "arc_capacity")
    _count(2 * ac, "number of residual arcs (2 * arc_capacity)")
    w = 2 * ac
    out = dict(res=_csr_rows(count, vc, w), arc=np.empty((count, w), np.int32), fwd=np.empty((count, w), bool),
               rev=np.empty((count, w), np.int32))
    _each_run(lambda r: _residual_rows(t, h, g, m, first, *r, vc, ac, layout, out), list(_runs(first)))
    res, res_arc, res_fwd, rev = _device_csr(out["res"]), out["arc"], out["fwd"], out["rev"]
    tt, hh = _padded(t, m, ac, vc, np.int32), _padded(h, m, ac, vc, np.int32)
    cc = _padded(c, m, ac, 0, cdt, copy=True)
    return dict(tail=device(tt), head=device(hh), cap=device(cc), res=res, res_arc=_i32(res_arc),
                res_forward=device(res_fwd), res_rev=_i32(rev), n=_i32(nv), n_arcs=_i32(m),
                vertex_cap=vc, arc_cap=ac, layout=layout)
