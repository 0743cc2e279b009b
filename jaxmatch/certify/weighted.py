"""Certificates of greedy weighted matchings and b-matchings (greedy dominance).

Every solver of :mod:`jaxmatch.weighted` (Suitor, LD, b-Suitor, and the
greedy references) returns the *greedy* matching: edges scanned heaviest
first, each kept when its ends are still free (Paper IV of Md Naim's thesis:
F. Manne, Md Naim, H. Lerring, M. Halappanavar, "On stable marriages and
greedy matching", SIAM Workshop on Combinatorial Scientific Computing (CSC),
2016; Preis, "Linear time 1/2-approximation algorithm for maximum weighted
matching in general graphs", STACS 1999, for the 1/2 bound).

Edge order (the one of :mod:`jaxmatch.weighted`, restated here
independently): heavier first; for equal weights the smaller
``(min id, max id)`` pair first. Self-loops and zero-weight edges are not
edges for matching.

Theorem used: a matching M is the greedy matching (edges scanned in this
order, kept when both ends are free) iff every edge e not in M has an end
matched by an edge of M that comes before e. (If M and greedy first differ
at edge e: e in M only would share an end with an earlier greedy edge, also
in M; e in greedy only would have an end taken by an earlier M edge, also
greedy.) For b-matchings: iff every edge e not in M has an end v holding
b(v) edges of M, all before e. So these checks prove equality with the
greedy answer in ``O(|E| log |E|)``, without rerunning greedy.
"""
from __future__ import annotations

import numpy as np

from jaxmatch.certify._common import CertificateError, _mates
from jaxmatch.graph import Graph


def _weighted_edges(g):
    """Edges for matching of a jaxmatch Graph: (lo, hi, rank, n), each edge once, rank 0 first."""
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

    The greedy matching scans the edges in the edge order of the module
    docstring (heavier first, ties by the smaller ``(min id, max id)`` pair)
    and keeps an edge when both ends are free; its weight is at least 1/2 of
    the maximum (Preis, STACS 1999). Greedy dominance certifies it without
    rerunning greedy: M is the greedy matching iff every edge not in M has an
    end matched by an edge of M that comes earlier in the order. The check
    also requires ``mate`` to be a symmetric matching of edges of positive
    weight (no self-loops). ``O(|E| log |E|)``.

    Args:
        g: a single :class:`jaxmatch.Graph` (weighted, or unweighted with unit
            weights).
        mate: int array [n] (JAX or numpy), the mate of each vertex, -1 for an
            unmatched one, as :func:`jaxmatch.suitor` returns it.

    Raises:
        CertificateError: when ``mate`` has the wrong shape or an entry out of
            range, is not symmetric (``mate[mate[v]] != v``), pairs vertices
            that share no edge of positive weight, or leaves an edge unmatched
            that no earlier matched edge touches (greedy would take it).
        TypeError: when ``g`` is not a single Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 3.0, 1.0])   # path 0-1-2-3, middle edge heaviest
        >>> certify.check_greedy_dominance(g, [-1, 2, 1, -1])
        >>> certify.check_greedy_dominance(g, [1, 0, 3, 2])                # the two light edges
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: not greedy: edge (1, 2) is unmatched but no earlier matched edge touches either end (greedy would take it)
    """
    lo, hi, rank, n = _weighted_edges(g)
    m = _mates(mate, n, "mate", ids=n)
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
    """True when ``mate`` is the greedy matching of ``g`` (see :func:`check_greedy_dominance`).

    The boolean form of :func:`check_greedy_dominance`: every unmatched edge
    has an end taken by an earlier matched edge.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        mate: int array [n], the mate of each vertex, -1 unmatched.

    Returns:
        bool: True when :func:`check_greedy_dominance` passes, False when it
        raises :class:`CertificateError`.

    Raises:
        TypeError: when ``g`` is not a single Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 3.0, 1.0])
        >>> certify.is_greedy_dominant(g, [-1, 2, 1, -1]), certify.is_greedy_dominant(g, [1, 0, 3, 2])
        (True, False)
    """
    try:
        check_greedy_dominance(g, mate)
    except CertificateError:
        return False
    return True


def check_greedy_b_dominance(g, b, matched) -> None:
    """Raise unless ``matched`` is the greedy b-matching of the weighted Graph ``g``.

    A b-matching gives vertex v at most b(v) matched edges; the greedy
    b-matching scans the edges in the module's edge order and keeps an edge
    when both ends still have room. Greedy dominance for b-matchings: M is
    the greedy b-matching iff every edge not in M has an end v that holds
    b(v) edges of M, all earlier in the order. The check also requires the
    marked entries to be edges of positive weight marked in both directions,
    and vertex v to hold at most b(v) of them. ``O(|E| log |E|)``.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        b: an int (the same bound for every vertex) or an int array [n].
        matched: numpy bool array [n_entries], a mask over the stored entries
            of ``g.adj`` (``g.adj.src[:n_entries]``, ``g.adj.indices[:n_entries]``),
            both copies of a matched edge True, as :func:`jaxmatch.b_suitor`
            returns it.

    Raises:
        CertificateError: when ``b`` or ``matched`` has the wrong shape or
            dtype, a marked entry is not an edge of positive weight, an edge
            is marked in one direction only, a vertex has more than b(v)
            marked edges, or an unmatched edge has no end filled by earlier
            edges (greedy would take it).
        TypeError: when ``g`` is not a single Graph.

    Example:
        >>> import numpy as np
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 3.0, 1.0])
        >>> k = int(g.n_entries)
        >>> src, dst = np.asarray(g.adj.src)[:k], np.asarray(g.adj.indices)[:k]
        >>> middle = np.isin(src, [1, 2]) & np.isin(dst, [1, 2])   # both copies of edge (1, 2)
        >>> certify.check_greedy_b_dominance(g, 1, middle)
        >>> certify.check_greedy_b_dominance(g, 2, np.ones(k, bool))   # b = 2 takes the whole path
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
    """True when ``matched`` is the greedy b-matching of ``g`` (see :func:`check_greedy_b_dominance`).

    The boolean form of :func:`check_greedy_b_dominance`.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        b: an int (the same bound for every vertex) or an int array [n].
        matched: numpy bool array [n_entries], both copies of a matched edge True.

    Returns:
        bool: True when :func:`check_greedy_b_dominance` passes, False when it
        raises :class:`CertificateError`.

    Raises:
        TypeError: when ``g`` is not a single Graph.

    Example:
        >>> import numpy as np
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 3.0, 1.0])
        >>> k = int(g.n_entries)
        >>> src, dst = np.asarray(g.adj.src)[:k], np.asarray(g.adj.indices)[:k]
        >>> middle = np.isin(src, [1, 2]) & np.isin(dst, [1, 2])
        >>> certify.is_greedy_b_dominant(g, 1, middle), certify.is_greedy_b_dominant(g, 2, middle)
        (True, False)
    """
    try:
        check_greedy_b_dominance(g, b, matched)
    except CertificateError:
        return False
    return True
