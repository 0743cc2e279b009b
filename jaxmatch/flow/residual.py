"""The residual network of a :class:`jaxmatch.FlowNetwork` as arrays, and the cut read from the heights.

A flow ``f`` on the input arcs and the residual capacities ``rc`` of the
residual arcs (the WBPR paper's ``c_f``, shape ``[2 * arc_cap]``) determine
each other: input arc a gives a forward residual arc of capacity
cap[a] - f[a] and a reverse one of capacity f[a] (:func:`residual_from_flow`,
:func:`flow_from_residual`); :func:`initial_preflow` saturates the arcs out
of the sources and :func:`excess_of_flow` gives every vertex's inflow minus
outflow. A push on a residual arc also updates its reverse arc, whose
position :func:`reverse_position` finds: ``search=False`` reads the stored
``res_rev`` (one gather; the RCSR ``flow_idx`` of the paper, stored for BCSR
too), ``search=True`` binary-searches the head's row of a BCSR network,
sorted by (head, direction, arc id), as the paper does to save the index's
memory.

The minimum cut is read from the heights of a maximum preflow, the
observation behind Goldberg and Tarjan's gap heuristic (:func:`gap_cut`):
with L the lowest height in [1, n) that no vertex has, no residual arc
leaves {v : h(v) > L} (an arc (u, v) with h(u) > L >= h(v) would need
h(u) <= h(v) + 1 <= L), and that set holds every source (height n) and every
vertex with excess once no vertex below n is active, and no sink, so it is
a minimum cut's source side: a height histogram (:func:`histogram`), no BFS; :func:`cut_arcs`
marks the arcs that leave it.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, take


def residual_from_flow(net, flow):
    """Residual capacities [2 * arc_cap] of a flow given per input arc."""
    c = take(net.cap, net.res_arc, 0)
    f = take(flow, net.res_arc, 0)
    return jnp.where(net.res_forward, c - f, f)


def flow_from_residual(net, rc):
    """Flow per input arc [arc_cap]: the residual capacity of each arc's reverse entry."""
    rev = ~net.res_forward & (net.res_arc < net.arc_cap)
    return jnp.zeros(net.arc_cap, rc.dtype).at[jnp.where(rev, net.res_arc, net.arc_cap)].set(rc, mode="drop")


def excess_of_flow(net, flow):
    """Inflow minus outflow of every vertex [vertex_cap]."""
    inflow = jax.ops.segment_sum(flow, net.head, net.vertex_cap)
    outflow = jax.ops.segment_sum(flow, net.tail, net.vertex_cap)
    return inflow - outflow


def initial_preflow(net, is_source):
    """Saturate every arc out of a source (not into a source, not a self-loop)."""
    sat = take(is_source, net.tail, False) & ~take(is_source, net.head, False) & (net.tail != net.head)
    return jnp.where(sat, net.cap, 0)


def reverse_position(net, pos, search: bool):
    """Position of the reverse residual arc of each residual position ``pos`` (sentinel -> 2*arc_cap).

    ``search=False`` reads ``res_rev``; ``search=True`` (BCSR only) binary
    searches the row of the arc's head, whose entries are sorted by
    (head, reverse-flag, arc id), for the entry (tail, flag of pos, arc id).
    """
    size = 2 * net.arc_cap
    ok = (pos >= 0) & (pos < size)
    if not search:
        return jnp.where(ok, take(net.res_rev, pos, size), size)
    tail = take(net.res.src, pos, net.vertex_cap)
    head = take(net.res.indices, pos, net.vertex_cap)
    arc = take(net.res_arc, pos, net.arc_cap)
    want_flag = take(net.res_forward, pos, False).astype(jnp.int32)  # reverse flag of the partner
    lo = take(net.res.indptr, head, 0)
    hi = take(net.res.indptr, head + 1, 0)

    def bisect(_, c):
        lo, hi = c
        mid = (lo + hi) // 2
        k1 = take(net.res.indices, mid, INT_MAX)
        k2 = (~take(net.res_forward, mid, True)).astype(jnp.int32)
        k3 = take(net.res_arc, mid, INT_MAX)
        less = (k1 < tail) | ((k1 == tail) & ((k2 < want_flag) | ((k2 == want_flag) & (k3 < arc))))
        go = lo < hi
        return jnp.where(go & less, mid + 1, lo), jnp.where(go & ~less, mid, hi)

    steps = max(1, (2 * net.arc_cap).bit_length())
    lo, _ = lax.fori_loop(0, steps, bisect, (lo, hi))
    return jnp.where(ok, lo, size)


# --------------------------------------------------------------------------
# terminals and the cut


def _mask_of(ids, size):
    """Bool mask [size] of the ids (a scalar or an array; ids outside [0, size) are ignored)."""
    ids = jnp.ravel(ids).astype(jnp.int32)
    return jnp.zeros(size, bool).at[jnp.where((ids >= 0) & (ids < size), ids, size)].set(True, mode="drop")


def histogram(height, n):
    """Number of real vertices at each height below n [vertex_cap + 2] (heights >= n in the last entry)."""
    vc = height.shape[0]
    low = (jnp.arange(vc) < n) & (height < n)
    return jax.ops.segment_sum(low.astype(jnp.int32), jnp.where(low, height, vc + 1), vc + 2)


def lowest_gap(hist, n):
    """The lowest height in [1, n) that no vertex has (n if none)."""
    levels = jnp.arange(hist.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where((hist == 0) & (levels >= 1) & (levels < n), levels, n))


def gap_cut(height, real, n):
    """Source side {v : h(v) > L}, L the lowest height in [1, n) that no real vertex has (module docstring)."""
    return real & (height > lowest_gap(histogram(height, n), n))


def cut_arcs(xp, side, tail, head):
    """Bool per arc (``xp``: numpy or jax.numpy; a network or a batch): its tail in ``side``, its head
    not; ids past ``side`` (padding) count as outside for the tail, inside for the head."""
    pad = [(0, 0)] * (side.ndim - 1) + [(0, 1)]
    at = lambda fill, ids: xp.take_along_axis(xp.pad(side, pad, constant_values=fill),  # noqa: E731
                                              xp.minimum(ids, side.shape[-1]), -1)
    return at(False, tail) & ~at(True, head)


cut_arcs_jit = jax.jit(partial(cut_arcs, jnp))
