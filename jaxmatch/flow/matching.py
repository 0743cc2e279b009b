"""Maximum bipartite matching as unit-capacity maximum flow: the network and the matching read back.

:func:`matching_network` builds, on the device, the classic reduction that
the WBPR paper's matching experiments solve: a super source with an arc to
every row, an arc row -> column for every edge, an arc from every column to a
super sink, all of capacity 1. :func:`matching_from_flow` reads the matching
off a maximum flow of it. The network is built from padded arc arrays with
the same residual order as :meth:`jaxmatch.FlowNetwork.from_edges`, so it
traces under ``jit`` and ``vmap`` and graphs of one capacity share one
network capacity.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxmatch._ops import is_traced, mask_ids, offsets, take, trim
from jaxmatch._containers import LAYOUTS
from jaxmatch._validate import INT32_MAX, check_type
from jaxmatch.graph import CSR, BipartiteGraph, FlowNetwork, GraphInputError

HOST_BUILD_MAX = 1 << 16   # eager networks of at most this many arcs are built on the host: no device compile


def _network_from_arcs(tail, head, cap, n, n_arcs, vertex_cap: int, layout: str) -> FlowNetwork:
    """A FlowNetwork built on the device from padded arc arrays (traceable).

    ``tail``/``head``/``cap`` [arc_cap]: the first ``n_arcs`` entries are the
    arcs, the rest padding (tail = head = vertex_cap, cap = 0). Same residual
    order as :meth:`FlowNetwork.from_edges` (a sort by (tail, head, reverse
    flag, arc) for BCSR, (tail, reverse flag, head, arc) for RCSR).
    """
    ac = tail.shape[0]
    ids = jnp.arange(ac, dtype=jnp.int32)
    src = jnp.concatenate([tail, head])
    dst = jnp.concatenate([head, tail])
    back = jnp.concatenate([jnp.zeros(ac, jnp.int32), jnp.ones(ac, jnp.int32)])
    arc = jnp.concatenate([ids, ids])
    # (second, third) packed in one key (< 2 vertex_cap), and the position in [forward; reverse] for
    # arc order: 3 keys instead of a 4-key lexsort, the same order (a smaller sort to compile)
    middle = dst * 2 + back if layout == "bcsr" else back * vertex_cap + dst
    _, _, order = lax.sort((src, middle, jnp.arange(2 * ac, dtype=jnp.int32)), num_keys=3)
    pos = jnp.zeros(2 * ac, jnp.int32).at[order].set(jnp.arange(2 * ac, dtype=jnp.int32))
    rev = jnp.zeros(2 * ac, jnp.int32).at[pos].set(pos[(jnp.arange(2 * ac) + ac) % (2 * ac)])
    counts = jax.ops.segment_sum(jnp.ones(2 * ac, jnp.int32), src, vertex_cap)
    indptr = offsets(counts)
    real = arc[order] < n_arcs
    res = CSR(indptr, dst[order], src[order], None)
    return FlowNetwork(tail=tail, head=head, cap=cap, res=res,
                       res_arc=jnp.where(real, arc[order], ac), res_forward=real & (back[order] == 0),
                       res_rev=rev, n=jnp.asarray(n, jnp.int32), n_arcs=jnp.asarray(n_arcs, jnp.int32),
                       vertex_cap=vertex_cap, arc_cap=ac, layout=layout)


def matching_network(g: BipartiteGraph, *, layout: str = "bcsr"):
    """The unit-capacity flow network of a bipartite graph, whose maximum flow is a maximum matching.

    The classic reduction, as in the WBPR paper's bipartite matching
    experiments: a super source S with an arc to every row, an arc
    row -> column for every edge, and an arc from every column to a super
    sink T, all of capacity 1. An integral flow from S to T is a matching
    (each row sends at most one unit, each column receives at most one), so
    the maximum flow value is the maximum matching's cardinality, and
    :func:`matching_from_flow` reads the matching back.

    Numbering: rows are vertices ``0 .. n_rows-1``, columns
    ``n_rows .. n_rows+n_cols-1``, the super source ``S = n_rows + n_cols``
    and the super sink ``T = S + 1``. Arcs, in this order: arc k
    (k < n_edges) is edge k of ``g.edges()`` (row -> column), then S -> row r
    for every row, then column c -> T for every column. Capacities:
    ``row_cap + col_cap + 2`` vertices and ``edge_cap + row_cap + col_cap``
    arcs, so graphs of one capacity give networks of one capacity (and one
    compilation of the solver).

    Built on the device and traceable (works under ``jit`` and ``vmap``);
    called eagerly on a graph of at most ``HOST_BUILD_MAX`` arcs, built on
    the host instead (the same network, with no XLA compilation). Cost: one
    sort of the 2 (E + V) residual arcs, O((E + V) log(E + V)) work.

    Args:
        g: The bipartite graph (:class:`jaxmatch.BipartiteGraph`).
        layout: The network's residual layout, ``"bcsr"`` (default) or
            ``"rcsr"`` (see :class:`jaxmatch.FlowNetwork`).

    Returns:
        ``(net, source, sink)``: the :class:`jaxmatch.FlowNetwork` and the
        ids of S and T (int32 scalars), ready for
        ``jaxmatch.max_flow(net, source, sink)``.

    Raises:
        GraphInputError: when ``g`` is not a BipartiteGraph, ``layout`` is
            not ``"bcsr"`` or ``"rcsr"``, or the network would have too many
            arcs for int32 ids.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
        >>> net, s, t = jaxmatch.matching_network(g)
        >>> int(net.n), int(net.n_arcs), int(s), int(t)
        (6, 7, 4, 5)
        >>> int(jaxmatch.max_flow(net, s, t).flow_value)
        2
    """
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    if layout not in LAYOUTS:
        raise GraphInputError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if g.row_cap + g.col_cap + g.edge_cap + 2 > INT32_MAX // 2:
        raise GraphInputError("the matching network of this graph has too many arcs for int32 ids")
    if not is_traced(g.n_rows) and g.edge_cap + g.row_cap + g.col_cap <= HOST_BUILD_MAX:
        return _matching_network_host(g, layout)
    return _matching_network(g, layout=layout)


def _matching_network_host(g, layout):
    """:func:`matching_network` of a concrete graph, by :meth:`FlowNetwork.from_edges` on the host (the
    same arcs, capacities and residual order: the device build's first call costs an XLA compilation,
    seconds on a GPU, more than a small graph's whole solve)."""
    rows, cols, nr, nc = g.edges()
    S, T = nr + nc, nr + nc + 1
    tail = np.concatenate([rows, np.full(nr, S), nr + np.arange(nc)]).astype(np.int32)
    head = np.concatenate([nr + cols, np.arange(nr), np.full(nc, T)]).astype(np.int32)
    cdt = np.int64 if jax.config.jax_enable_x64 else np.int32   # as the device build
    net = FlowNetwork.from_edges(tail, head, np.ones(tail.size, cdt), nr + nc + 2, layout=layout,
                                 vertex_capacity=g.row_cap + g.col_cap + 2,
                                 arc_capacity=g.edge_cap + g.row_cap + g.col_cap)
    return net, jnp.int32(S), jnp.int32(T)


@partial(jax.jit, static_argnames=("layout",))
def _matching_network(g, *, layout):
    vc = g.row_cap + g.col_cap + 2
    ac = g.edge_cap + g.row_cap + g.col_cap
    cdt = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
    nr, nc, ne = g.n_rows, g.n_cols, g.n_edges
    S, T = nr + nc, nr + nc + 1
    rows = jnp.arange(g.row_cap, dtype=jnp.int32)
    cols = jnp.arange(g.col_cap, dtype=jnp.int32)
    e = jnp.arange(g.edge_cap, dtype=jnp.int32)
    # (position, tail, head) of every arc kind; padding entries get position ac (dropped)
    pos = jnp.concatenate([jnp.where(e < ne, e, ac), jnp.where(rows < nr, ne + rows, ac),
                           jnp.where(cols < nc, ne + nr + cols, ac)])
    t = jnp.concatenate([g.by_row.src, jnp.full(g.row_cap, S), nr + cols])
    h = jnp.concatenate([nr + g.by_row.indices, rows, jnp.full(g.col_cap, T)])
    tail = jnp.full(ac, vc, jnp.int32).at[pos].set(t.astype(jnp.int32), mode="drop")
    head = jnp.full(ac, vc, jnp.int32).at[pos].set(h.astype(jnp.int32), mode="drop")
    m = ne + nr + nc
    cap = (jnp.arange(ac) < m).astype(cdt)
    return _network_from_arcs(tail, head, cap, nr + nc + 2, m, vc, layout), S, T


def matching_from_flow(g: BipartiteGraph, flow):
    """The matching that a flow of :func:`matching_network` carries: ``(row_mate, col_mate)``.

    Row r and column c are matched when the arc of an edge (r, c) carries
    flow (``flow[k] > 0`` for edge k: the network's first ``n_edges`` arcs).
    For an integral flow within the unit capacities, as :func:`max_flow`
    returns, this is a matching, and a maximum one when the flow is maximum.
    Cost: O(E) work, one scatter per side.

    Args:
        g: The bipartite graph (:class:`jaxmatch.BipartiteGraph`) the network
            was built from.
        flow: The flow per arc of the network (``FlowResult.flow``), indexed
            by the network's arcs.

    Returns:
        ``(row_mate, col_mate)``: int32 arrays, the column matched to each
        row and the row matched to each column, -1 where unmatched. Eagerly
        they have length ``n_rows`` and ``n_cols``; under ``jit``/``vmap``
        the graph's capacities.

    Raises:
        GraphInputError: when ``g`` is not a BipartiteGraph.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
        >>> net, s, t = jaxmatch.matching_network(g)
        >>> rm, cm = jaxmatch.matching_from_flow(g, jaxmatch.max_flow(net, s, t).flow)
        >>> rm.tolist(), cm.tolist()
        ([0, 1], [0, 1])
    """
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    row_mate, col_mate = _matching_from_flow(g, jnp.asarray(flow))
    if not is_traced(g.n_rows):
        row_mate, col_mate = trim(row_mate, int(g.n_rows)), trim(col_mate, int(g.n_cols))
    return row_mate, col_mate


@jax.jit
def _matching_from_flow(g, flow):
    e = jnp.arange(g.edge_cap, dtype=jnp.int32)
    f = take(flow, e, 0)
    on = (e < g.n_edges) & (f > 0)
    r, c = g.by_row.src, g.by_row.indices
    row_mate = jnp.full(g.row_cap, -1, jnp.int32).at[mask_ids(r, on, g.row_cap)].set(c, mode="drop")
    col_mate = jnp.full(g.col_cap, -1, jnp.int32).at[mask_ids(c, on, g.col_cap)].set(r, mode="drop")
    return row_mate, col_mate
