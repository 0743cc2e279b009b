"""Certificates: independent checks of solver answers, in plain numpy and scipy.

Nothing here imports a jaxmatch solver. ``is_*`` functions return a bool;
``check_*`` functions return None or raise :class:`CertificateError` naming
the violation. Graph arguments may be jaxmatch graphs or, where noted, scipy
sparse matrices; results may be JAX or numpy arrays.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from jaxmatch.graph import BipartiteGraph, FlowNetwork

__all__ = [
    "CertificateError", "is_matching", "check_matching", "koenig_cover",
    "check_maximum_matching", "is_maximum_matching", "check_flow", "check_min_cut",
]


class CertificateError(AssertionError):
    """An answer failed its certificate."""


def _biadjacency(g) -> sp.csr_array:
    if isinstance(g, BipartiteGraph):
        rows, cols, nr, nc = g.edges()
        return sp.csr_array((np.ones(rows.size, np.int8), (rows, cols)), shape=(nr, nc))
    if sp.issparse(g):
        a = sp.csr_array(g, copy=True)
        a.eliminate_zeros()
        a.data[:] = 1
        return a
    raise TypeError(f"expected a BipartiteGraph or a scipy sparse matrix, got {type(g).__name__}")


def _mates(x, n: int, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.shape != (n,):
        raise CertificateError(f"{name} has shape {a.shape}, expected ({n},)")
    return a.astype(np.int64)


def check_matching(g, row_mate, col_mate) -> None:
    """Raise unless ``row_mate``/``col_mate`` describe one valid matching of ``g``.

    ``row_mate[r]`` is the column of row r or -1, ``col_mate[c]`` the row of
    column c or -1; the two must agree and every matched pair must be an edge.
    """
    a = _biadjacency(g)
    nr, nc = a.shape
    rm, cm = _mates(row_mate, nr, "row_mate"), _mates(col_mate, nc, "col_mate")
    for name, m, n in (("row_mate", rm, nc), ("col_mate", cm, nr)):
        bad = np.flatnonzero((m < -1) | (m >= n))
        if bad.size:
            raise CertificateError(f"{name}[{bad[0]}] = {m[bad[0]]} is not -1 or a vertex id")
    r = np.flatnonzero(rm >= 0)
    bad = r[cm[rm[r]] != r]
    if bad.size:
        raise CertificateError(
            f"row {bad[0]} is matched to column {rm[bad[0]]}, whose col_mate is {cm[rm[bad[0]]]}")
    c = np.flatnonzero(cm >= 0)
    bad = c[rm[cm[c]] != c]
    if bad.size:
        raise CertificateError(
            f"column {bad[0]} is matched to row {cm[bad[0]]}, whose row_mate is {rm[cm[bad[0]]]}")
    if r.size:
        present = np.asarray(a[r, rm[r]]).ravel() != 0
        if not present.all():
            k = r[np.flatnonzero(~present)[0]]
            raise CertificateError(f"matched pair (row {k}, column {rm[k]}) is not an edge")


def is_matching(g, row_mate, col_mate) -> bool:
    """True when the mates describe a valid matching of ``g``."""
    try:
        check_matching(g, row_mate, col_mate)
    except CertificateError:
        return False
    return True


def koenig_cover(g, row_mate, col_mate):
    """Koenig vertex cover ``(row_in_cover, col_in_cover)`` from a matching.

    Z = vertices reachable from unmatched rows by alternating paths (row ->
    column over any edge, column -> row over its matched edge); the cover is
    (rows not in Z) ∪ (columns in Z). Its size equals the matching's size
    exactly when the matching is maximum (Koenig's theorem), and it then
    covers every edge. O(|V| + |E|), scipy's BFS on one directed graph.
    """
    a = _biadjacency(g)
    nr, nc = a.shape
    rm, cm = _mates(row_mate, nr, "row_mate"), _mates(col_mate, nc, "col_mate")
    # nodes: rows 0..nr-1, columns nr..nr+nc-1, super source nr+nc
    coo = a.tocoo()
    matched_cols = np.flatnonzero(cm >= 0)
    free_rows = np.flatnonzero(rm < 0)
    src = np.concatenate([coo.row, nr + matched_cols, np.full(free_rows.size, nr + nc)])
    dst = np.concatenate([nr + coo.col, cm[matched_cols], free_rows])
    n = nr + nc + 1
    d = sp.csr_array((np.ones(src.size, np.int8), (src, dst)), shape=(n, n))
    reached = np.zeros(n, bool)
    reached[breadth_first_order(d, nr + nc, directed=True, return_predecessors=False)] = True
    return ~reached[:nr], reached[nr:nr + nc]


def check_maximum_matching(g, row_mate, col_mate) -> None:
    """Raise unless the mates are a maximum matching of ``g``.

    Checks validity, builds the Koenig cover, and checks that it covers every
    edge and has as many vertices as the matching has edges.
    """
    check_matching(g, row_mate, col_mate)
    a = _biadjacency(g).tocoo()
    rows_c, cols_c = koenig_cover(g, row_mate, col_mate)
    uncovered = np.flatnonzero(~rows_c[a.row] & ~cols_c[a.col])
    if uncovered.size:
        k = uncovered[0]
        raise CertificateError(
            f"not maximum: edge (row {a.row[k]}, column {a.col[k]}) is not covered by the Koenig "
            "cover, so an augmenting path exists")
    size = int((np.asarray(row_mate) >= 0).sum())
    cover = int(rows_c.sum() + cols_c.sum())
    if cover != size:
        raise CertificateError(f"not maximum: Koenig cover has {cover} vertices, matching has {size} edges")


def is_maximum_matching(g, row_mate, col_mate) -> bool:
    """True when the mates are a maximum matching of ``g``."""
    try:
        check_maximum_matching(g, row_mate, col_mate)
    except CertificateError:
        return False
    return True


# --------------------------------------------------------------------------
# flow


def _terminals(x, n: int, name: str) -> np.ndarray:
    t = np.unique(np.atleast_1d(np.asarray(x)).astype(np.int64))
    if t.size == 0 or t.min() < 0 or t.max() >= n:
        raise CertificateError(f"{name} {x!r} is not a set of vertices in [0, {n})")
    return t


def _arcs(net):
    if not isinstance(net, FlowNetwork):
        raise TypeError(f"expected a FlowNetwork, got {type(net).__name__}")
    tail, head, cap, n = net.edges()
    return tail.astype(np.int64), head.astype(np.int64), cap.astype(np.int64), n


def check_flow(net, source, sink, flow, value=None) -> None:
    """Raise unless ``flow`` (one entry per input arc) is a feasible flow.

    Checks 0 <= flow <= cap on every arc, conservation at every vertex that is
    not a terminal, and, if ``value`` is given, that the net flow out of the
    sources equals it (and equals the net flow into the sinks).
    """
    tail, head, cap, n = _arcs(net)
    s, t = _terminals(source, n, "source"), _terminals(sink, n, "sink")
    if np.intersect1d(s, t).size:
        raise CertificateError(f"source and sink share vertex {np.intersect1d(s, t)[0]}")
    f = np.asarray(flow)
    if f.shape != cap.shape:
        raise CertificateError(f"flow has shape {f.shape}, expected {cap.shape} (one entry per arc)")
    f = f.astype(np.int64)
    bad = np.flatnonzero((f < 0) | (f > cap))
    if bad.size:
        k = bad[0]
        raise CertificateError(f"arc {k} ({tail[k]} -> {head[k]}) carries {f[k]}, outside [0, {cap[k]}]")
    net_out = np.bincount(tail, f, minlength=n) - np.bincount(head, f, minlength=n)
    inner = np.ones(n, bool)
    inner[s] = inner[t] = False
    bad = np.flatnonzero(inner & (net_out != 0))
    if bad.size:
        raise CertificateError(f"flow is not conserved at vertex {bad[0]} (out - in = {int(net_out[bad[0]])})")
    out_s, in_t = int(net_out[s].sum()), int(-net_out[t].sum())
    if out_s != in_t:
        raise CertificateError(f"sources send {out_s} but sinks receive {in_t}")
    if value is not None and out_s != int(value):
        raise CertificateError(f"flow value is {out_s}, expected {int(value)}")


def check_min_cut(net, source, sink, source_side, value) -> None:
    """Raise unless ``source_side`` is an s-t cut of capacity ``value``.

    The mask must contain every source and no sink; the cut's capacity is the
    total capacity of arcs from the source side to the other side. With a
    flow of the same value (``check_flow``) this proves both optimal.
    """
    tail, head, cap, n = _arcs(net)
    s, t = _terminals(source, n, "source"), _terminals(sink, n, "sink")
    side = np.asarray(source_side)
    if side.shape != (n,) or side.dtype != np.bool_:
        raise CertificateError(f"source_side must be a bool mask of shape ({n},), got {side.dtype} {side.shape}")
    if not side[s].all():
        raise CertificateError(f"source {s[~side[s]][0]} is not on the source side")
    if side[t].any():
        raise CertificateError(f"sink {t[side[t]][0]} is on the source side")
    crossing = side[tail] & ~side[head]
    capacity = int(cap[crossing].sum())
    if capacity != int(value):
        raise CertificateError(f"cut capacity is {capacity}, expected {int(value)}")


# --------------------------------------------------------------------------
# weighted matching (greedy dominance)


# --------------------------------------------------------------------------
# stable marriage


# --------------------------------------------------------------------------
# communities (partition and modularity)
