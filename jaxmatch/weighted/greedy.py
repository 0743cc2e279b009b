"""Sequential greedy matching and b-matching in numpy: the references for Suitor, LD and b-Suitor.

The greedy algorithm scans the edges in the edge order of
:mod:`jaxmatch.weighted.suitor` (weight descending, ties by the smaller
(min id, max id) pair) and keeps an edge when both ends still have room
(one edge each for a matching, b(v) for a b-matching). Self-loops and
zero-weight edges are ignored. Its weight is at least half the optimum
(Avis; Paper IV of the thesis). O(|E| log |E|) for the sort plus a Python
loop over the edges: meant for checking, not for speed.
"""
from __future__ import annotations

import numpy as np

from jaxmatch.graph import Graph, GraphInputError

__all__ = ["greedy_matching", "greedy_b_matching", "edge_order"]


def _check(g):
    if not isinstance(g, Graph) or np.ndim(g.n):
        raise GraphInputError(f"expected a single jaxmatch.Graph, got {type(g).__name__}")


def _entries(g):
    k = int(g.n_entries)  # slice on the host: an eager jax slice compiles once per length
    return (np.asarray(g.adj.src)[:k].astype(np.int64), np.asarray(g.adj.indices)[:k].astype(np.int64),
            np.asarray(g.adj.weights)[:k])


def edge_order(u, v, w) -> np.ndarray:
    """Indices of the edges (u[k], v[k], w[k]) sorted by the shared edge order.

    Weight descending, equal weights by the smaller ``(min(u, v), max(u,
    v))`` pair: the order every algorithm of :mod:`jaxmatch.weighted` follows.
    One NumPy lexsort, O(m log m) for m edges.

    Args:
        u: int ``[m]``: one end of each edge.
        v: int ``[m]``: the other end.
        w: float ``[m]``: the weights.

    Returns:
        A NumPy int array ``[m]``: the edge indices, first edge first.

    Example:
        >>> edge_order([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0]).tolist()
        [1, 0, 2]
    """
    u, v = np.asarray(u), np.asarray(v)
    return np.lexsort((np.maximum(u, v), np.minimum(u, v), -np.asarray(w)))


def _sorted_edges(g):
    s, d, w = _entries(g)
    keep = (s < d) & (w > 0)
    s, d, w = s[keep], d[keep], w[keep]
    order = edge_order(s, d, w)
    return s[order], d[order]


def greedy_matching(g: Graph) -> np.ndarray:
    """The greedy matching of ``g``: the sequential reference for Suitor and Locally-Dominant.

    Scans the edges in the edge order (weight descending, ties by the
    smaller ``(min id, max id)`` pair) and keeps an edge when both ends are
    still unmatched. The order is strict and total, so the result is unique;
    its weight is at least half the maximum (D. Avis, "A survey of
    heuristics for the weighted matching problem", Networks 13(4), 1983).
    :func:`jaxmatch.suitor` and :func:`jaxmatch.locally_dominant` return
    exactly this matching. Cost: O(``|E| log |E|``) for the sort plus a
    Python loop over the edges, on the host: meant for checking, not speed.

    Args:
        g: a single :class:`jaxmatch.Graph` (self-loops and zero-weight
            edges are ignored).

    Returns:
        ``mate``: a NumPy int32 array ``[n]``, v's partner or -1.

    Raises:
        GraphInputError: when ``g`` is not a single Graph.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> jaxmatch.greedy_matching(g).tolist()
        [-1, 2, 1, -1]
    """
    _check(g)
    mate = [-1] * int(g.n)
    for a, b in zip(*(x.tolist() for x in _sorted_edges(g))):
        if mate[a] < 0 and mate[b] < 0:
            mate[a], mate[b] = b, a
    return np.asarray(mate, np.int32)


def b_vector(g: Graph, b) -> np.ndarray:
    """Per-vertex bounds as an int64 array of length n from an int or an array (validated)."""
    n = int(g.n)
    arr = np.asarray(b)
    if arr.ndim == 0:
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise GraphInputError(f"b must be an integer or an integer array, got {b!r}")
        arr = np.full(n, int(arr), np.int64)
    elif arr.shape != (n,) or (arr.size and (arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer))):
        raise GraphInputError(f"b must be an integer or an integer array of shape ({n},), "
                              f"got dtype {arr.dtype} and shape {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise GraphInputError(f"b[{int(np.argmin(arr))}] = {int(arr.min())} is negative")
    return arr


def greedy_b_matching(g: Graph, b) -> np.ndarray:
    """The greedy b-matching of ``g``: the sequential reference for b-Suitor.

    Scans the edges in the edge order (weight descending, ties by the
    smaller ``(min id, max id)`` pair) and keeps an edge while both ends have
    fewer than b of them: vertex v takes at most ``b[v]`` edges. The result is
    unique, of weight at least half the maximum b-matching's, and
    :func:`jaxmatch.b_suitor` returns exactly it. Cost: O(``|E| log |E|``)
    for the sort plus a Python loop over the edges, on the host.

    Args:
        g: a single :class:`jaxmatch.Graph` (self-loops and zero-weight
            edges are ignored).
        b: the bounds: an int for every vertex, or an int array ``[n]``.

    Returns:
        A NumPy bool mask ``[n_entries]`` over the stored entries: entry k of
        ``g.adj`` (``src[k] -> indices[k]``) is True when its edge is
        matched; both stored copies of a matched edge are True.

    Raises:
        GraphInputError: when ``g`` is not a single Graph, or ``b`` is not an
            int or an int array of length n, or is negative.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 0, 1], [1, 2, 2], [3.0, 2.0, 1.0])
        >>> int(jaxmatch.greedy_b_matching(g, 2).sum()) // 2, int(jaxmatch.greedy_b_matching(g, 1).sum()) // 2
        (3, 1)
    """
    _check(g)
    room = b_vector(g, b).tolist()
    n = int(g.n)
    chosen = []
    for a, c in zip(*(x.tolist() for x in _sorted_edges(g))):
        if room[a] > 0 and room[c] > 0:
            room[a] -= 1
            room[c] -= 1
            chosen.append(a * n + c)
    s, d, _ = _entries(g)
    return np.isin(np.minimum(s, d) * n + np.maximum(s, d), np.asarray(chosen, np.int64)) & (s != d)
