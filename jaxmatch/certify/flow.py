"""Certificates of maximum flows and minimum cuts.

A flow is one integer per input arc of a :class:`jaxmatch.FlowNetwork`, in
the order of ``net.edges()`` (the order the arcs were given), as
:func:`jaxmatch.max_flow` returns it; a cut is a bool mask of the source side.
Feasibility (capacity bounds, conservation) is one vectorised pass with
:func:`numpy.bincount`; optimality follows from max-flow min-cut duality:
a feasible flow and an s-t cut of the same value are both optimal, so
:func:`check_flow` and :func:`check_min_cut` together certify a maximum flow
without recomputing one. Sources and sinks may be single vertices or sets.
"""
from __future__ import annotations

import numpy as np

from jaxmatch.certify._common import CertificateError
from jaxmatch.graph import FlowNetwork


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

    A feasible s-t flow f satisfies the capacity bounds ``0 <= f(a) <= cap(a)``
    on every arc a and conservation (flow in = flow out) at every vertex that
    is not a terminal; its value is the net flow out of the sources, which
    then equals the net flow into the sinks. With ``value`` given, the check
    also requires that value. Together with :func:`check_min_cut` for a cut
    of the same value this proves the flow maximum (max-flow min-cut theorem:
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian
    Journal of Mathematics 8, 1956). ``O(|V| + |E|)``.

    Args:
        net: a single :class:`jaxmatch.FlowNetwork` (not a batch).
        source: the source vertex (int) or a set of source vertices (int array).
        sink: the sink vertex or a set of sink vertices, disjoint from the sources.
        flow: int array [n_arcs] (JAX or numpy), the flow on each arc in the
            order of ``net.edges()``, as :func:`jaxmatch.max_flow` returns it.
        value: the expected flow value, or None (the default) to check
            feasibility only.

    Raises:
        CertificateError: when a terminal is out of range or is both a source
            and a sink, when ``flow`` has the wrong shape, an arc's flow is
            outside ``[0, cap]``, flow is not conserved at an inner vertex,
            the sources send more or less than the sinks receive, or the value
            is not ``value``.
        TypeError: when ``net`` is not a FlowNetwork.

    Example:
        >>> from jaxmatch import FlowNetwork, certify
        >>> net = FlowNetwork.from_edges([0, 1, 0], [1, 2, 2], [2, 1, 1])   # arcs 0->1, 1->2, 0->2
        >>> certify.check_flow(net, 0, 2, [1, 1, 1], value=2)
        >>> certify.check_flow(net, 0, 2, [2, 1, 1])
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: flow is not conserved at vertex 1 (out - in = -1)
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

    An s-t cut is a vertex set S holding every source and no sink; its
    capacity is the total capacity of the arcs from S to the rest. Every
    feasible flow's value is at most every cut's capacity (weak duality), so
    a flow and a cut of equal value, checked by :func:`check_flow` and this
    function, prove both optimal (the max-flow min-cut theorem of Ford and
    Fulkerson, 1956). ``O(|V| + |E|)``.

    Args:
        net: a single :class:`jaxmatch.FlowNetwork`.
        source: the source vertex (int) or a set of source vertices (int array).
        sink: the sink vertex or a set of sink vertices.
        source_side: numpy bool array [n], True for the vertices of S (for
            example ``np.asarray(res.source_side)`` of :func:`jaxmatch.max_flow`).
        value: the expected cut capacity (the maximum flow's value).

    Raises:
        CertificateError: when a terminal is out of range, ``source_side`` is
            not a bool mask of shape [n], a source is outside S or a sink
            inside it, or the cut's capacity is not ``value``.
        TypeError: when ``net`` is not a FlowNetwork.

    Example:
        >>> import numpy as np
        >>> from jaxmatch import FlowNetwork, certify
        >>> net = FlowNetwork.from_edges([0, 1, 0], [1, 2, 2], [2, 1, 1])
        >>> certify.check_min_cut(net, 0, 2, np.array([True, True, False]), 2)   # cuts 1->2 and 0->2
        >>> certify.check_min_cut(net, 0, 2, np.array([True, False, False]), 2)
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: cut capacity is 3, expected 2
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
