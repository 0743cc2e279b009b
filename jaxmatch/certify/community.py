r"""Certificates of community detection: partitions, modularity, and Louvain's local optimum.

Modularity (M. E. J. Newman, M. Girvan, "Finding and evaluating community
structure in networks", Physical Review E 69, 026113, 2004; Eq. (1) of
Paper III of Md Naim's thesis, "Community detection on the GPU", IPDPS 2017)
is recomputed here in float64 numpy from the edge list, independently of
:func:`jaxmatch.modularity`, and the Louvain move gain (Eq. (2) of Paper III,
after V. D. Blondel, J.-L. Guillaume, R. Lambiotte, E. Lefebvre, "Fast
unfolding of communities in large networks", J. Stat. Mech. P10008, 2008) is
evaluated for every possible move at once with scipy sparse sums, so a
converged Louvain answer can be checked to be a local optimum. Graphs are
single :class:`jaxmatch.Graph` containers; each undirected edge is counted
once (``u <= v``), self-loops as networkx counts them.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from jaxmatch.certify._common import CertificateError
from jaxmatch.graph import Graph


def _community_edges(g):
    """(u, v, w, n) of a jaxmatch Graph, each undirected edge once (u <= v), weights float64."""
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


def check_partition(g, labels, *, connected: bool = False) -> None:
    """Raise unless ``labels`` numbers the communities of a partition of ``g``'s vertices 0 .. k-1.

    A partition into k communities, numbered densely as :func:`jaxmatch.louvain`
    numbers them: one integer label per vertex, every label in [0, k), and
    every one of the k communities non-empty (so k = max label + 1). O(n).
    With ``connected``, also every community induces a connected subgraph,
    as :func:`jaxmatch.leiden` guarantees: the connected components of the
    edges inside communities (scipy's ``connected_components``) must give all
    vertices of a community one component. ``O(n + |E|)``.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        labels: int array [n] (JAX or numpy), the community of each vertex.
        connected: also check that every community is connected (default False).

    Raises:
        CertificateError: when ``labels`` has the wrong shape, is not of an
            integer dtype, holds a negative label, or skips a label below its
            maximum (an empty community); with ``connected``, when a community
            is not connected (the message names the first such community and
            two of its vertices in different pieces).
        TypeError: when ``g`` is not a Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4], [1, 2, 2, 4, 5, 5])   # two triangles
        >>> certify.check_partition(g, [0, 0, 0, 1, 1, 1])
        >>> certify.check_partition(g, [0, 0, 0, 2, 2, 2])
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: community 1 is empty but label 2 is used: labels must be numbered 0 .. k-1
        >>> certify.check_partition(g, [0, 0, 1, 1, 0, 0], connected=True)
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: community 0 is not connected: vertices 0 and 4 are in different pieces of it
    """
    u, v, _, n = _community_edges(g)
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
    if connected:
        _check_connected(u, v, a)


def _check_connected(u, v, a) -> None:
    """Raise unless every community of labels ``a`` (0 .. k-1) is connected by the edges (u, v) inside it."""
    n = a.size
    inside = a[u] == a[v]
    pieces = connected_components(sp.coo_array((np.ones(int(inside.sum())), (u[inside], v[inside])),
                                               shape=(n, n)), directed=False)[1]
    first = np.unique(a, return_index=True)[1]           # the smallest vertex of each community
    other = np.flatnonzero(pieces != pieces[first[a]])
    if other.size:
        c = int(a[other].min())
        w = int(other[a[other] == c][0])
        raise CertificateError(f"community {c} is not connected: vertices {int(first[c])} and {w} are in "
                               "different pieces of it")


def modularity_numpy(g, labels, *, resolution: float = 1.0):
    r"""Modularity (float64) of any integer labels, in plain numpy; NaN when m = 0.

    .. math::

        Q = \sum_c \left[ \frac{L_c}{m} - \gamma \left(\frac{a_c}{2m}\right)^2 \right],

    where m is the total edge weight, :math:`L_c` the weight of the edges
    inside community c (each edge and each self-loop once), :math:`a_c` the
    sum of the degrees in c (a loop of weight w adds 2w, as networkx counts
    it) and :math:`\gamma` the ``resolution`` (Newman and Girvan, 2004;
    Eq. (1) of Paper III). An independent float64 twin of
    :func:`jaxmatch.modularity`. ``O(n + |E|)``.

    Args:
        g: a single :class:`jaxmatch.Graph` (unweighted edges weigh 1).
        labels: int array [n], any integer community labels (they need not be
            numbered 0 .. k-1).
        resolution: :math:`\gamma`, the weight of the null-model term; 1.0
            (the default) is Newman-Girvan modularity.

    Returns:
        ``(q, scale)``: two Python floats, the modularity and the size of the
        two terms whose difference it is,
        :math:`\sum_c L_c / m + \gamma \sum_c (a_c / 2m)^2` (the scale that
        :func:`check_modularity` measures its tolerance against). Both are
        NaN when the graph has no edge weight.

    Raises:
        CertificateError: when ``labels`` has the wrong shape or is not of an
            integer dtype.
        TypeError: when ``g`` is not a Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4], [1, 2, 2, 4, 5, 5])
        >>> certify.modularity_numpy(g, [0, 0, 0, 1, 1, 1])
        (0.5, 1.5)
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

    Recomputes Q in float64 with :func:`modularity_numpy` and compares. The
    tolerance is ``rtol`` times the size of the two terms of Eq. (1)
    (the ``scale`` of :func:`modularity_numpy`), so a value near zero is not
    held to an accuracy its float32 terms cannot give. NaN matches NaN (no
    edge weight).

    Args:
        g: a single :class:`jaxmatch.Graph`.
        labels: int array [n], any integer community labels.
        value: the modularity to check (a float or a scalar array, e.g.
            ``res.modularity`` of :func:`jaxmatch.louvain`).
        resolution: the null model's weight, as in :func:`modularity_numpy`; default 1.0.
        rtol: the relative tolerance; default 1e-6.

    Raises:
        CertificateError: when ``labels`` is malformed (see
            :func:`modularity_numpy`), when exactly one of Q and ``value`` is
            NaN, or when they differ by more than the tolerance.
        TypeError: when ``g`` is not a Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4], [1, 2, 2, 4, 5, 5])
        >>> certify.check_modularity(g, [0, 0, 0, 1, 1, 1], 0.5)
        >>> certify.check_modularity(g, [0, 0, 0, 1, 1, 1], 0.25)
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: modularity is 0.5 but the value given is 0.25 (difference 0.25, tolerance 1.5e-06)
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
    r"""The single move that raises the modularity most, in plain numpy/scipy (float64).

    A move takes one vertex i (or, with ``groups``, one group of vertices that
    share a label, e.g. a coarse vertex of a Louvain level) out of its
    community C(i) into a community c it has an edge to, as Louvain's moves
    do. Its gain is Eq. (2) of Paper III (after Blondel et al., 2008), exact:

    .. math::

        \Delta Q = \frac{e_{i,c} - e_{i,C(i) \setminus i}}{m}
                   - \gamma \, \frac{k_i \, (a_c - a_{C(i)} + k_i)}{2 m^2},

    with :math:`e_{i,c}` the weight of i's edges into c, :math:`k_i` its
    degree, :math:`a_c` the degree sum of c, m the total edge weight and
    :math:`\gamma` the ``resolution``. All candidate moves are evaluated at
    once (one sparse sum over the cut edges), ``O(n + |E| log |E|)``.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        labels: int array [n], any integer community labels.
        resolution: :math:`\gamma`, the null model's weight, as in
            :func:`modularity_numpy`; default 1.0.
        groups: None (the default: every vertex moves alone), or int array
            [n], the labels of a partition that refines ``labels``; groups
            move whole.

    Returns:
        ``(gain, unit, community)``: the largest gain (``-inf`` when no move
        exists), the vertex (or group label) that moves, and the label of the
        community it joins (-1 when no move exists).

    Raises:
        CertificateError: when ``labels`` or ``groups`` is malformed, or a
            group holds vertices of two communities.
        TypeError: when ``g`` is not a Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4], [1, 2, 2, 4, 5, 5])
        >>> gain, unit, community = certify.best_move(g, [0, 0, 1, 1, 1, 1])   # vertex 2 is misplaced
        >>> round(gain, 4), unit, community
        (0.3889, 2, 0)
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

    A partition that Louvain returns as converged is a local optimum of the
    modularity: no vertex (with ``groups``: no group, e.g. the last level's
    coarse vertices when the refinement is off) can join a neighbouring
    community and raise Q by more than ``tol``. The check evaluates the
    exact gain of every move (Eq. (2) of Paper III) with :func:`best_move`
    and compares the largest with ``tol``.

    Args:
        g: a single :class:`jaxmatch.Graph`.
        labels: int array [n], any integer community labels.
        resolution: the null model's weight, as in :func:`modularity_numpy`; default 1.0.
        groups: None (the default: single-vertex moves), or int array [n]
            labels of a partition refining ``labels`` whose groups move whole.
        tol: the largest gain accepted; default 1e-5.

    Raises:
        CertificateError: when some move gains more than ``tol`` (the message
            names the vertex or group and the community), or when ``labels``
            or ``groups`` is malformed (see :func:`best_move`).
        TypeError: when ``g`` is not a Graph.

    Example:
        >>> from jaxmatch import Graph, certify
        >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4], [1, 2, 2, 4, 5, 5])
        >>> certify.check_local_optimum(g, [0, 0, 0, 1, 1, 1])
        >>> certify.check_local_optimum(g, [0, 0, 1, 1, 1, 1])
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: not a local optimum: moving vertex 2 to community 0 raises the modularity by 0.389 (tolerance 1e-05)
    """
    gain, unit, comm = best_move(g, labels, resolution=resolution, groups=groups)
    if gain > tol:
        what = "vertex" if groups is None else "group"
        raise CertificateError(
            f"not a local optimum: moving {what} {unit} to community {comm} raises the modularity "
            f"by {gain:.3g} (tolerance {tol:.3g})")
