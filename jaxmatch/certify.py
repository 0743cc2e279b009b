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
    "check_greedy_dominance", "is_greedy_dominant", "check_greedy_b_dominance", "is_greedy_b_dominant",
    "check_stable", "is_stable", "check_partition", "check_modularity", "modularity_numpy",
    "best_move", "check_local_optimum",
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
#
# Edge order (the one of jaxmatch.weighted, restated here independently):
# heavier first; equal weights: the smaller (min id, max id) pair first.
# Self-loops and zero-weight edges are not edges for matching.
#
# Theorem used: a matching M is the greedy matching (edges scanned in this
# order, kept when both ends are free) iff every edge e not in M has an end
# matched by an edge of M that comes before e. (If M and greedy first differ
# at edge e: e in M only would share an end with an earlier greedy edge, also
# in M; e in greedy only would have an end taken by an earlier M edge, also
# greedy.) For b-matchings: iff every edge e not in M has an end v holding
# b(v) edges of M, all before e. So these checks prove equality with the
# greedy answer in O(|E| log |E|), without rerunning greedy.




def _weighted_edges(g):
    """Edges for matching of a jaxmatch Graph: (lo, hi, rank, n), each edge once, rank 0 first."""
    from jaxmatch.graph import Graph
    if not isinstance(g, Graph) or np.ndim(g.n):
        raise TypeError(f"expected a single jaxmatch Graph, got {type(g).__name__}")
    k = int(g.n_entries)
    s = np.asarray(g.adj.src)[:k].astype(np.int64)
    d = np.asarray(g.adj.indices)[:k].astype(np.int64)
    w = np.asarray(g.adj.weights)[:k]
    keep = (s < d) & (w > 0)
    s, d, w = s[keep], d[keep], w[keep]
    order = np.lexsort((d, s, -w))
    rank = np.empty(s.size, np.int64)
    rank[order] = np.arange(s.size)
    return s, d, rank, int(g.n)


def _edge_lookup(lo, hi, n):
    """A function (a, b) -> index of edge {a, b} in (lo, hi), or -1 where it is not an edge for matching."""
    keys = lo * max(n, 1) + hi
    order = np.argsort(keys)
    keys = keys[order]

    def find(a, b):
        q = np.minimum(a, b) * max(n, 1) + np.maximum(a, b)
        if keys.size == 0:
            return np.full(q.shape, -1, np.int64)
        pos = np.minimum(np.searchsorted(keys, q), keys.size - 1)
        return np.where(keys[pos] == q, order[pos], -1)

    return find


def check_greedy_dominance(g, mate) -> None:
    """Raise unless ``mate`` is the greedy matching of the weighted Graph ``g``.

    Checks that ``mate`` (length n, -1 unmatched) is a symmetric matching of
    edges with positive weight (no loops), and that every other edge has an
    end matched by an earlier edge in the edge order (heavier, ties by the
    smaller (min id, max id) pair). By the theorem above, this holds exactly
    for the greedy matching, which implies weight >= 1/2 of the optimum.
    """
    lo, hi, rank, n = _weighted_edges(g)
    m = _mates(mate, n, "mate")
    bad = np.flatnonzero((m < -1) | (m >= n))
    if bad.size:
        raise CertificateError(f"mate[{bad[0]}] = {m[bad[0]]} is not -1 or a vertex id")
    v = np.flatnonzero(m >= 0)
    bad = v[m[m[v]] != v]
    if bad.size:
        raise CertificateError(f"vertex {bad[0]} is matched to {m[bad[0]]}, whose mate is {m[m[bad[0]]]}")
    find = _edge_lookup(lo, hi, n)
    mrank = np.full(n, np.iinfo(np.int64).max)
    if v.size:
        e = find(v, m[v])
        if (e < 0).any():
            k = v[np.flatnonzero(e < 0)[0]]
            raise CertificateError(f"matched pair ({k}, {m[k]}) is not an edge of positive weight")
        mrank[v] = rank[e]
    free = m[lo] != hi
    blocked = (mrank[lo] < rank) | (mrank[hi] < rank)
    bad = np.flatnonzero(free & ~blocked)
    if bad.size:
        k = bad[np.argmin(rank[bad])]
        raise CertificateError(
            f"not greedy: edge ({lo[k]}, {hi[k]}) is unmatched but no earlier matched edge "
            "touches either end (greedy would take it)")


def is_greedy_dominant(g, mate) -> bool:
    """True when ``mate`` is the greedy matching of ``g`` (see :func:`check_greedy_dominance`)."""
    try:
        check_greedy_dominance(g, mate)
    except CertificateError:
        return False
    return True


def check_greedy_b_dominance(g, b, matched) -> None:
    """Raise unless ``matched`` is the greedy b-matching of the weighted Graph ``g``.

    ``matched``: bool mask over the stored entries of ``g.adj`` (length
    n_entries), both copies of a matched edge True. ``b``: an int or an int
    array of length n. Checks that the marked edges are edges of positive
    weight marked in both directions, that vertex v has at most b[v] of them,
    and that every other edge has an end v with b[v] marked edges, all
    earlier in the edge order.
    """
    lo, hi, rank, n = _weighted_edges(g)
    bb = np.asarray(b).astype(np.int64)
    bb = np.full(n, int(bb)) if bb.ndim == 0 else bb
    if bb.shape != (n,):
        raise CertificateError(f"b has shape {bb.shape}, expected ({n},)")
    k = int(g.n_entries)
    mk = np.asarray(matched)
    if mk.shape != (k,) or mk.dtype != np.bool_:
        raise CertificateError(f"matched must be a bool mask of shape ({k},), got {mk.dtype} {mk.shape}")
    s = np.asarray(g.adj.src)[:k].astype(np.int64)
    d = np.asarray(g.adj.indices)[:k].astype(np.int64)
    e = _edge_lookup(lo, hi, n)(s[mk], d[mk])
    if (e < 0).any():
        j = np.flatnonzero(mk)[np.flatnonzero(e < 0)[0]]
        raise CertificateError(f"matched entry {j} ({s[j]}, {d[j]}) is not an edge of positive weight")
    copies = np.bincount(e, minlength=lo.size)
    if (copies % 2).any():
        e = np.flatnonzero(copies % 2)[0]
        raise CertificateError(f"edge ({lo[e]}, {hi[e]}) is marked in one direction only")
    inm = copies == 2
    deg = np.bincount(lo[inm], minlength=n) + np.bincount(hi[inm], minlength=n)
    bad = np.flatnonzero(deg > bb)
    if bad.size:
        raise CertificateError(f"vertex {bad[0]} has {deg[bad[0]]} matched edges, more than b = {bb[bad[0]]}")
    worst = np.full(n, -1, np.int64)
    np.maximum.at(worst, lo[inm], rank[inm])
    np.maximum.at(worst, hi[inm], rank[inm])
    full = deg == bb
    blocked = (full[lo] & (worst[lo] < rank)) | (full[hi] & (worst[hi] < rank))
    bad = np.flatnonzero(~inm & ~blocked)
    if bad.size:
        e = bad[np.argmin(rank[bad])]
        raise CertificateError(
            f"not greedy: edge ({lo[e]}, {hi[e]}) is unmatched but neither end is filled by "
            "earlier edges (greedy would take it)")


def is_greedy_b_dominant(g, b, matched) -> bool:
    """True when ``matched`` is the greedy b-matching of ``g`` (see :func:`check_greedy_b_dominance`)."""
    try:
        check_greedy_b_dominance(g, b, matched)
    except CertificateError:
        return False
    return True


# --------------------------------------------------------------------------
# stable marriage


def _rank_lists(x, name: str):
    """("shared", order, n) for one list shared by n people, else ("csr", indptr, ids).

    Accepts jaxmatch ``Preferences`` (duck-typed: ``shared``, ``to_csr``),
    ``(indptr, indices)``, a list of lists, or a padded array with -1 after
    each row's last id (a numpy broadcast view of one row counts as shared).
    """
    if hasattr(x, "to_csr") and hasattr(x, "shared"):
        if x.shared:
            return "shared", np.asarray(x.shared_order()).astype(np.int64), int(x.n)
        indptr, ids = x.to_csr()
        return "csr", np.asarray(indptr, np.int64), np.asarray(ids, np.int64)
    if isinstance(x, tuple) and len(x) == 2:
        return "csr", np.asarray(x[0], np.int64), np.asarray(x[1], np.int64)
    if isinstance(x, list) and (not x or len({len(r) for r in x}) > 1):
        rows = [np.asarray(r, np.int64).reshape(-1) for r in x]
        indptr = np.concatenate([[0], np.cumsum([r.size for r in rows], dtype=np.int64)]).astype(np.int64)
        return "csr", indptr, np.concatenate(rows) if rows else np.zeros(0, np.int64)
    a = np.asarray(x)
    if a.ndim != 2:
        raise CertificateError(f"{name} must be padded [n, L], (indptr, indices) or lists, got shape {a.shape}")
    if a.shape[0] > 1 and a.strides[0] == 0:
        row = a[0].astype(np.int64)
        return "shared", row[row >= 0], a.shape[0]
    a = a.astype(np.int64)
    keep = a >= 0
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int64)
    return "csr", indptr, a[keep]


def _to_csr(lists):
    if lists[0] == "csr":
        return lists[1], lists[2]
    _, order, n = lists
    return np.arange(n + 1, dtype=np.int64) * order.size, np.tile(order, n)


def _people(lists) -> int:
    return lists[2] if lists[0] == "shared" else lists[1].size - 1


def _partner_pos(indptr, ids, partner, who: str, other: str):
    """Position of each person's partner in their own list (-1 if single); raises if unlisted."""
    n = indptr.size - 1
    owner = np.repeat(np.arange(n), np.diff(indptr))
    pos = np.arange(ids.size) - indptr[owner]
    hit = ids == partner[owner]
    out = np.full(n, -1, np.int64)
    out[owner[hit]] = pos[hit]
    bad = np.flatnonzero((partner >= 0) & (out < 0))
    if bad.size:
        p = int(bad[0])
        raise CertificateError(f"{who} {p} is married to {other} {int(partner[p])}, whom {who} {p} does not rank")
    return owner, pos, out


def check_stable(men_prefs, women_prefs, wife) -> None:
    """Raise unless ``wife`` is a stable matching of the SM/SMI instance.

    ``wife[m]`` is man m's wife or -1. Checks: a valid matching (ids in range,
    no woman married twice), only mutually ranked pairs, and no blocking
    pair (m, w) who rank each other and each prefer the other to their
    partner (or are single). Lists as for :func:`jaxmatch.stable_marriage`.
    O(E + B log B) for E list entries and B the entries ranked above a
    partner; O(n log n) when both sides share one list each.
    """
    men, women = _rank_lists(men_prefs, "men_prefs"), _rank_lists(women_prefs, "women_prefs")
    n_men, n_women = _people(men), _people(women)
    wf = np.asarray(wife)
    if wf.shape != (n_men,):
        raise CertificateError(f"wife has shape {wf.shape}, expected ({n_men},)")
    wf = wf.astype(np.int64)
    bad = np.flatnonzero((wf < -1) | (wf >= n_women))
    if bad.size:
        raise CertificateError(f"wife[{bad[0]}] = {wf[bad[0]]} is not -1 or a woman in [0, {n_women})")
    married = np.flatnonzero(wf >= 0)
    husband = np.full(n_women, -1, np.int64)
    husband[wf[married]] = married
    if np.count_nonzero(husband >= 0) != married.size:
        w = int(np.flatnonzero(np.bincount(wf[married], minlength=n_women) > 1)[0])
        raise CertificateError(f"woman {w} is married to more than one man")
    if men[0] == "shared" and women[0] == "shared":
        _check_stable_shared(men[1], women[1], n_men, n_women, wf, husband)
        return
    m_ptr, m_ids = _to_csr(men)
    w_ptr, w_ids = _to_csr(women)
    m_own, m_pos, wife_pos = _partner_pos(m_ptr, m_ids, wf, "man", "woman")
    w_own, w_pos, hus_pos = _partner_pos(w_ptr, w_ids, husband, "woman", "man")
    # pairs each side prefers to its partner; a blocking pair is in both sets
    q = (wife_pos[m_own] < 0) | (m_pos < wife_pos[m_own])
    f = (hus_pos[w_own] < 0) | (w_pos < hus_pos[w_own])
    nm = max(n_men, 1)
    keys_m = m_ids[q] * nm + m_own[q]
    keys_w = w_own[f] * nm + w_ids[f]
    common = np.intersect1d(keys_m, keys_w, assume_unique=True)
    if common.size:
        w, m = divmod(int(common[0]), nm)
        raise CertificateError(f"blocking pair: man {m} and woman {w} rank each other and prefer each other "
                               "to their partners")


def _check_stable_shared(order_m, order_w, n_men, n_women, wf, husband) -> None:
    """The check when all men share one list and all women share one list, O(n log n)."""
    big = np.iinfo(np.int64).max
    inv_m = np.full(n_women, big, np.int64)
    inv_m[order_m] = np.arange(order_m.size)
    inv_w = np.full(n_men, big, np.int64)
    inv_w[order_w] = np.arange(order_w.size)
    married = np.flatnonzero(wf >= 0)
    for m in married[(inv_m[wf[married]] == big) | (inv_w[married] == big)][:1]:
        raise CertificateError(f"man {m} and woman {wf[m]} are married but do not rank each other")
    # a[m]: rank (in the men's list) of m's wife, past the end if single; b[w] likewise
    a = np.where(wf >= 0, inv_m[np.maximum(wf, 0)], order_m.size)
    b = np.where(husband >= 0, inv_w[np.maximum(husband, 0)], order_w.size)
    # best[k] = max of b over the first k women of the men's list
    best = np.concatenate([[-1], np.maximum.accumulate(b[order_m])]) if order_m.size else np.array([-1])
    listed = inv_w < big
    block = listed & (best[np.minimum(a, order_m.size)] > inv_w)
    if block.any():
        m = int(np.flatnonzero(block)[0])
        k = int(np.flatnonzero(b[order_m][:a[m]] > inv_w[m])[0])
        raise CertificateError(f"blocking pair: man {m} and woman {int(order_m[k])} rank each other and "
                               "prefer each other to their partners")


def is_stable(men_prefs, women_prefs, wife) -> bool:
    """True when ``wife`` is a stable matching (see :func:`check_stable`)."""
    try:
        check_stable(men_prefs, women_prefs, wife)
    except CertificateError:
        return False
    return True


# --------------------------------------------------------------------------
# communities (partition and modularity)


def _community_edges(g):
    """(u, v, w, n) of a jaxmatch Graph, each undirected edge once (u <= v), weights float64."""
    from jaxmatch.graph import Graph
    if not isinstance(g, Graph):
        raise TypeError(f"expected a jaxmatch.Graph, got {type(g).__name__}")
    k = int(g.n_entries)   # slice on the host (a device slice compiles once per length)
    s, d = np.asarray(g.adj.src)[:k].astype(np.int64), np.asarray(g.adj.indices)[:k].astype(np.int64)
    keep = s <= d
    w = np.asarray(g.adj.weights)[:k][keep].astype(np.float64) if g.weighted else np.ones(int(keep.sum()))
    return s[keep], d[keep], w, int(g.n)


def _community_labels(labels, n: int) -> np.ndarray:
    a = np.asarray(labels)
    if a.shape != (n,):
        raise CertificateError(f"labels has shape {a.shape}, expected ({n},) (one per vertex)")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise CertificateError(f"labels must be integers, got dtype {a.dtype}")
    return a.astype(np.int64)


def check_partition(g, labels) -> None:
    """Raise unless ``labels`` numbers the communities of a partition of ``g``'s vertices 0 .. k-1.

    One integer label per vertex, every label in [0, k) and every one of the
    k communities non-empty (so k = max label + 1).
    """
    _, _, _, n = _community_edges(g)
    a = _community_labels(labels, n)
    if a.size == 0:
        return
    if a.min() < 0:
        raise CertificateError(f"vertex {int(np.argmin(a))} has negative label {int(a.min())}")
    used = np.bincount(a)
    empty = np.flatnonzero(used == 0)
    if empty.size:
        raise CertificateError(
            f"community {int(empty[0])} is empty but label {int(a.max())} is used: labels must be "
            "numbered 0 .. k-1")


def modularity_numpy(g, labels, *, resolution: float = 1.0):
    """Modularity (float64) of any integer labels, in plain numpy; NaN when m = 0.

    Q = sum_c [ L_c / m - resolution * (a_c / 2m)^2 ], L_c the weight of the
    edges inside c (each edge and each self-loop once), a_c the sum of the
    degrees in c (a loop of weight w adds 2w, as networkx counts it).
    Returns ``(q, scale)``, where ``scale`` = sum L_c / m + resolution *
    sum (a_c / 2m)^2 is the size of the two terms whose difference is q.
    """
    u, v, w, n = _community_edges(g)
    a = _community_labels(labels, n)
    m = w.sum()
    if not m > 0:
        return float("nan"), float("nan")
    _, comm = np.unique(a, return_inverse=True)
    deg = np.bincount(u, w, minlength=n) + np.bincount(v, w, minlength=n)
    inside = w[comm[u] == comm[v]].sum() / m
    null = resolution * float(np.sum((np.bincount(comm, deg) / (2 * m)) ** 2))
    return float(inside - null), float(inside + null)


def check_modularity(g, labels, value, *, resolution: float = 1.0, rtol: float = 1e-6) -> None:
    """Raise unless ``value`` is the modularity of ``labels`` on ``g``, recomputed in numpy.

    The tolerance is ``rtol`` times the size of the two terms of Eq. (1)
    (see :func:`modularity_numpy`), so a value near zero is not held to an
    accuracy its float32 terms cannot give. NaN matches NaN (no edge weight).
    """
    q, scale = modularity_numpy(g, labels, resolution=resolution)
    value = float(value)
    if np.isnan(q) or np.isnan(value):
        if not (np.isnan(q) and np.isnan(value)):
            raise CertificateError(f"modularity is {q} but the value given is {value}")
        return
    if abs(value - q) > rtol * max(scale, abs(q)):
        raise CertificateError(
            f"modularity is {q!r} but the value given is {value!r} (difference {abs(value - q):.3g}, "
            f"tolerance {rtol * max(scale, abs(q)):.3g})")


def best_move(g, labels, *, resolution: float = 1.0, groups=None):
    """The single move that raises the modularity most, in plain numpy/scipy (float64).

    A move takes one vertex (or, with ``groups``, one group of vertices that
    share a label, e.g. a coarse vertex of a Louvain level) out of its
    community into a community it has an edge to, as Louvain's moves do. Its
    gain is Eq. (2) of the Louvain paper, exact:

        dQ = (e_{i,c} - e_{i,C(i)\\i}) / m - resolution * k_i (a_c - a_{C(i)} + k_i) / (2 m^2).

    Args:
      g: a jaxmatch ``Graph``.
      labels: int [n], any integer community labels.
      resolution: the null model's weight, as in :func:`modularity_numpy`.
      groups: optional int [n] labels of a partition that refines ``labels``;
        groups move whole.

    Returns:
      ``(gain, unit, community)``: the largest gain (``-inf`` when no move
      exists), the vertex (or group label) that moves, and the label of the
      community it joins (-1 when no move exists).

    >>> from jaxmatch import Graph
    >>> best_move(Graph.from_edges([0, 1, 0], [1, 2, 2]), [0, 1, 2])[0] > 0   # a triangle, split
    True
    """
    u, v, w, n = _community_edges(g)
    a = _community_labels(labels, n)
    grp = np.arange(n) if groups is None else _community_labels(groups, n)
    names, gi = np.unique(grp, return_inverse=True)
    lab = np.zeros(names.size, np.int64)
    lab[gi] = a
    if np.any(lab[gi] != a):
        raise CertificateError("groups must refine labels: a group holds vertices of two communities")
    m = w.sum()
    if not m > 0 or n == 0:
        return -np.inf, -1, -1
    ng = names.size
    labs, comm = np.unique(lab, return_inverse=True)
    gu, gv = gi[u], gi[v]
    deg = np.bincount(gu, w, ng) + np.bincount(gv, w, ng)
    tot = np.bincount(comm, deg, labs.size)
    off = gu != gv
    src = np.concatenate([gu[off], gv[off]])
    dst = np.concatenate([gv[off], gu[off]])
    ww = np.concatenate([w[off], w[off]])
    inside = comm[src] == comm[dst]
    e_own = np.bincount(src[inside], ww[inside], ng)
    e = sp.coo_array((ww[~inside], (src[~inside], comm[dst[~inside]])), shape=(ng, labs.size)).tocsr()
    e.sum_duplicates()
    e = e.tocoo()
    r, c = e.row, e.col
    if r.size == 0:
        return -np.inf, -1, -1
    gain = (e.data - e_own[r]) / m - resolution * deg[r] * (tot[c] - tot[comm[r]] + deg[r]) / (2 * m * m)
    top = int(np.argmax(gain))
    return float(gain[top]), int(names[r[top]]), int(labs[c[top]])


def check_local_optimum(g, labels, *, resolution: float = 1.0, groups=None, tol: float = 1e-5) -> None:
    """Raise unless no single move raises the modularity of ``labels`` by more than ``tol``.

    A partition that Louvain returns as converged is a local optimum: no
    vertex (with ``groups``: no group, e.g. the last level's coarse vertices
    when the refinement is off) can join a neighbouring community and raise
    Q by more than ``tol``. See :func:`best_move` for the moves and gains.
    """
    gain, unit, comm = best_move(g, labels, resolution=resolution, groups=groups)
    if gain > tol:
        what = "vertex" if groups is None else "group"
        raise CertificateError(
            f"not a local optimum: moving {what} {unit} to community {comm} raises the modularity "
            f"by {gain:.3g} (tolerance {tol:.3g})")
