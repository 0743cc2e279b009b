"""A scipy sparse matrix as a jaxmatch graph: the work behind :func:`jaxmatch.from_scipy`.

``_from_scipy`` reads the matrix once through ``A.tocoo()`` (any sparse
format), applies the rules of the kind (explicit zeros dropped for a
bipartite pattern, after duplicates are summed when the values become
weights; symmetry checked, or ``max(A, A.T)`` taken, and the upper
triangle kept for a graph; integer entries as arc capacities for a network)
and hands the edge arrays to the container's ``from_edges``. It takes the
container class as an argument, so that the classes' ``from_scipy``
classmethods (:mod:`jaxmatch._containers`) and the public
:func:`jaxmatch.graph.from_scipy` share it without an import cycle.
"""
from __future__ import annotations

import numpy as np

from jaxmatch._csr import _argsort
from jaxmatch._validate import GraphInputError


def _from_scipy(A, cls, kind: str, *, symmetrize=None, weighted=None, **kw):
    """``from_scipy(A, kind, ...)`` for the container class ``cls`` of ``kind`` ("bipartite", "graph", "flow")."""
    import scipy.sparse as sp
    if not sp.issparse(A):
        raise GraphInputError(
            f"from_scipy needs a scipy sparse array or matrix, got {type(A).__name__}; "
            "for a dense array pass scipy.sparse.csr_array(A)")
    if len(A.shape) != 2:
        raise GraphInputError(f"from_scipy needs a 2-D sparse matrix, got shape {A.shape}")
    if kind != "graph" and symmetrize is not None:
        raise GraphInputError(f"symmetrize= is refused for kind={kind!r}: symmetry options apply to kind='graph' only")
    if kind == "flow" and weighted is not None:
        raise GraphInputError("weighted= applies to kind='graph' and kind='bipartite' only")
    if "weights" in kw:
        raise GraphInputError("from_scipy takes the weights from the values of A (weighted=), not weights=")
    nr, nc = A.shape
    coo = A.tocoo()
    r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    if kind == "bipartite":
        if not weighted:
            keep = v != 0
            return cls.from_edges(r[keep], c[keep], nr, nc, **kw)
        return _weighted_bipartite(cls, r, c, v, A.shape, **kw)
    if nr != nc:
        raise GraphInputError(f"kind={kind!r} needs a square matrix, got shape {A.shape}")
    if kind == "flow":
        if not np.issubdtype(A.dtype, np.integer):
            raise GraphInputError(
                f"kind='flow' needs integer capacities, got dtype {A.dtype} (scipy's maximum_flow "
                "has the same rule): convert with A.astype(np.int64) if the values are whole")
        return cls.from_edges(r, c, v, nr, **kw)
    weighted = A.dtype != np.bool_ if weighted is None else bool(weighted)
    C = sp.csr_array((v, (r, c)), shape=A.shape)  # canonical: duplicates summed
    C.sum_duplicates()
    cr = np.repeat(np.arange(nr, dtype=np.int64), np.diff(C.indptr))
    cc, cv = C.indices.astype(np.int64), C.data
    if symmetrize:
        keys = np.concatenate([cr * nr + cc, cc * nr + cr])
        vals = np.concatenate([cv, cv])
        order = _argsort(keys)
        keys, vals = keys[order], vals[order]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        keys, v = keys[first], np.maximum.reduceat(vals, first) if first.size else vals
        r, c = keys // max(nr, 1), keys % max(nr, 1)
    else:
        _check_symmetric(cr, cc, cv, nr, weighted)
        if kw.get("duplicates") == "error" and C.nnz < r.size:  # the lower triangle's too
            raise GraphInputError("the matrix has duplicate entries (duplicates='error')")
    upper = r <= c
    return cls.from_edges(r[upper], c[upper], v[upper] if weighted else None, nr, **kw)


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


def _weighted_bipartite(cls, r, c, v, shape, **kw):
    """The weighted bipartite graph of the entries ``v`` at ``(r, c)``: the values are the weights, repeats
    summed first (as ``A.tocsr()`` does) and a zero (sum) is no edge (as scipy's
    ``min_weight_full_bipartite_matching`` treats it)."""
    import scipy.sparse as sp
    if v.dtype != np.bool_ and not (np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)):
        raise GraphInputError(f"weighted=True needs a real numeric matrix, got dtype {v.dtype}")
    v = v.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        k = int(bad[0])
        raise GraphInputError(f"weights: A[{int(r[k])}, {int(c[k])}] = {v[k]} is not finite")
    if kw.get("duplicates", "merge") != "error":   # else from_edges names the first repeat
        C = sp.csr_array((v, (r, c)), shape=shape)  # canonical: duplicates summed
        C.sum_duplicates()
        r = np.repeat(np.arange(shape[0], dtype=np.int64), np.diff(C.indptr))
        c, v = C.indices.astype(np.int64), C.data
    keep = v != 0
    return cls.from_edges(r[keep], c[keep], *shape, weights=v[keep], **kw)
