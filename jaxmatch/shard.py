"""Graphs split over several devices: :class:`ShardedGraph`, :class:`ShardedBipartiteGraph` and :func:`shard`.

Partition: one-dimensional, by **source vertex ranges**. With D devices on
the mesh axis and a vertex capacity V (a multiple of D), device d holds every
stored entry (u, v, w) of the symmetric adjacency whose source u lies in
``[d V / D, (d + 1) V / D)``: its rows, each entry with the global id of its
target. Why this layout: in the vertex-centric solvers a vertex's step reads
its own row only (a Suitor proposal scans the proposer's neighbours), so each
device works on its own entries, O(E / D) per round, with no communication;
what crosses devices is the per-vertex state of the targets, kept as
replicated arrays of length V and combined once per round, by all-reduces
(``lax.pmax`` / ``lax.pmin``; the matchings, Louvain) or by the targets'
owners (an all-to-all, then an all-gather; Suitor): O(V) words per device
and round. A 2-D
partition (entries by source and target blocks) would cut that to
O(V / sqrt(D)); ``experiments/SCALING.md`` plans that (and ghost exchanges
instead of replicated arrays) for 10^10 edges over many hosts. The
replicated form here is the simple one, and no multi-GPU run has compared
the two yet. Vertex ranges of equal length balance the entries when ids are
not ordered by degree (relabel the vertices randomly first otherwise). A
bipartite graph is split by **column ranges** the same way (its matching
solvers grow alternating trees from the columns).

The shards are made on the host and each goes to its own device
(``jax.device_put`` with a ``NamedSharding``), so the whole graph never sits
on one device: the classes' ``from_edges`` build one from edge arrays,
:func:`shard` from a :class:`jaxmatch.Graph` or
:class:`jaxmatch.BipartiteGraph`. Solvers that take one:
:func:`jaxmatch.suitor` and :func:`jaxmatch.louvain` (a ShardedGraph),
:func:`jaxmatch.maximum_matching` with ``method="apfb"``, ``"apsb"`` or
``"graft"`` (a ShardedBipartiteGraph).
"""
from __future__ import annotations

import numpy as np
import jax
import scipy.sparse as sp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from jaxmatch._csr import _pytree, _static
from jaxmatch._validate import INT32_MAX, GraphInputError, size_class
from jaxmatch.graph import BipartiteGraph, Graph

__all__ = ["ShardedBipartiteGraph", "ShardedGraph", "shard"]


class _Sharded:
    """What both sharded containers have: ``shards``, the device count of their mesh axis."""

    @property
    def shards(self) -> int:
        """D, the number of devices on the mesh axis."""
        return self.mesh.shape[self.axis]


@_pytree
class ShardedGraph(_Sharded):
    """An undirected weighted graph whose stored entries are split over the devices of a mesh axis.

    Entry j of device d is ``(src[d, j], dst[d, j], weights[d, j])``, both
    ids global, ``src`` in device d's vertex range, in source order (each row
    contiguous, as ``from_edges`` and :func:`shard` make them: the sharded
    Louvain relies on it); padding has ``src =
    dst = vertex_cap`` and weight 0. Every edge {u, v} with u != v is stored
    twice, as (u, v) on u's device and (v, u) on v's.

    Attributes:
        src: int32 ``[D, entry_cap]``, sharded over the mesh axis.
        dst: int32 ``[D, entry_cap]``, sharded likewise.
        weights: float32 ``[D, entry_cap]``, sharded likewise.
        n: int32 scalar (a 0-d host array, not static: graphs of one
            capacity and mesh share one compilation), the number of vertices.
        vertex_cap: static int, a multiple of D: device d owns the vertices
            ``[d * vertex_cap // D, (d + 1) * vertex_cap // D)``.
        entry_cap: static int, the entries each device has room for.
        mesh: static :class:`jax.sharding.Mesh`.
        axis: static str, the mesh axis the shards are split over.

    Example:
        >>> import jax, jaxmatch
        >>> mesh = jax.sharding.Mesh(jax.devices()[:1], ("d",))
        >>> sg = jaxmatch.ShardedGraph.from_edges([0, 1], [1, 2], [2.0, 3.0], n=3, mesh=mesh)
        >>> sg.shards, sg.vertex_cap, sg.src.tolist()
        (1, 3, [[0, 1, 1, 2]])
    """

    src: jax.Array
    dst: jax.Array
    weights: jax.Array
    n: np.ndarray
    vertex_cap: int = _static()
    entry_cap: int = _static()
    mesh: Mesh = _static()
    axis: str = _static()

    def __repr__(self):
        return (f"ShardedGraph(n={self.n}, shards={self.shards}, axis={self.axis!r}, "
                f"capacities=({self.vertex_cap}, {self.entry_cap} per device))")

    @classmethod
    def from_edges(cls, u, v, weights=None, *, n: int, mesh: Mesh, axis: str | None = None,
                   vertex_capacity: int | None = None, entry_capacity: int | None = None) -> "ShardedGraph":
        """A sharded graph from host arrays of undirected edges (each edge once).

        Args:
            u, v: int arrays of the edges' end points, ids in ``[0, n)``.
            weights: finite weights >= 0 (default: all 1).
            n: the number of vertices.
            mesh: the :class:`jax.sharding.Mesh` to split over.
            axis: the mesh axis (default: the mesh's only axis).
            vertex_capacity: the padded vertex count, at least n, rounded up
                to a multiple of D (default: n rounded up, so that the D
                ranges split the vertices evenly; give one capacity to
                share a compilation between graphs).
            entry_capacity: entries per device (default: the largest
                device's count rounded up by :func:`jaxmatch._validate.size_class`). Graphs of
                equal capacities and mesh share one compilation.

        Returns:
            The :class:`ShardedGraph`; repeated edges are summed into one (as
            :class:`jaxmatch.Graph` does); self-loops and zero weights are
            kept (the solvers ignore them).

        Raises:
            GraphInputError: on a mesh or axis that does not fit, ids out of
                range, arrays of different lengths, weights that are not
                finite and >= 0, or sizes past int32.
        """
        axis, D = _axis(mesh, axis)
        _count(n, "n")
        u, v = _ids(u, "u", n), _ids(v, "v", n)
        w = np.ones(u.shape, np.float32) if weights is None else np.asarray(weights)
        if u.shape != v.shape or u.shape != w.shape:
            raise GraphInputError(f"u, v and weights must be 1-D arrays of one length, got shapes "
                                  f"{u.shape}, {v.shape}, {w.shape}")
        if w.size and (not np.issubdtype(w.dtype, np.number) or w.dtype == np.bool_
                       or not np.all(np.isfinite(w)) or w.min() < 0):
            raise GraphInputError("weights must be finite numbers >= 0")
        V = _capacity(n, vertex_capacity, D, "vertex_capacity")
        if 2 * u.size > INT32_MAX:
            raise GraphInputError(f"{u.size} edges do not fit int32 entry counts")
        loop = u == v
        other = ~loop if loop.any() else slice(None)     # a loop is stored once
        src = np.concatenate([u, v[other]])
        dst = np.concatenate([v, u[other]])
        wt = np.concatenate([w, w[other]]).astype(np.float32, copy=False)
        # scipy's COO -> CSR: a counting sort by source, targets sorted within each row, repeated
        # edges summed (as jaxmatch.Graph does); explicit zeros and self-loops stay
        A = sp.coo_array((wt, (src, dst)), shape=(V, V)).tocsr()
        A.sum_duplicates()
        src = np.repeat(np.arange(V, dtype=np.int32), np.diff(A.indptr))
        ec, (s, d, ww) = _split(A.indptr[::V // D], [(src, V), (A.indices, V), (A.data, 0.0)], D,
                                entry_capacity, mesh, axis)
        return cls(s, d, ww, np.asarray(n, np.int32), V, ec, mesh, axis)


@_pytree
class ShardedBipartiteGraph(_Sharded):
    """A bipartite graph whose edges are split over the devices of a mesh axis, by column ranges.

    Entry j of device d is the edge ``(rows[d, j], cols[d, j])`` (row id,
    column id), ``cols`` in device d's column range ``[d * col_cap // D,
    (d + 1) * col_cap // D)``, sorted by (column, row); padding holds the
    sentinels ``row_cap`` and ``col_cap``. The matching solvers scan
    column-major edges (an alternating BFS grows from the columns), so a
    device scans the rows of its own columns.

    Attributes:
        rows: int32 ``[D, entry_cap]``, sharded over the mesh axis.
        cols: int32 ``[D, entry_cap]``, sharded likewise.
        n_rows, n_cols: int32 scalars (0-d host arrays, not static), the
            true sizes.
        row_cap: static int, the padded row count.
        col_cap: static int, a multiple of D.
        entry_cap: static int, the edges each device has room for.
        mesh: static :class:`jax.sharding.Mesh`.
        axis: static str, the mesh axis.

    Example:
        >>> import jax, jaxmatch
        >>> mesh = jax.sharding.Mesh(jax.devices()[:1], ("d",))
        >>> sb = jaxmatch.ShardedBipartiteGraph.from_edges([0, 1, 1], [0, 0, 1], 2, 2, mesh=mesh)
        >>> sb.cols.tolist(), sb.rows.tolist()
        ([[0, 0, 1, 2]], [[0, 1, 1, 2]])
    """

    rows: jax.Array
    cols: jax.Array
    n_rows: np.ndarray
    n_cols: np.ndarray
    row_cap: int = _static()
    col_cap: int = _static()
    entry_cap: int = _static()
    mesh: Mesh = _static()
    axis: str = _static()

    def __repr__(self):
        return (f"ShardedBipartiteGraph(n_rows={self.n_rows}, n_cols={self.n_cols}, shards={self.shards}, "
                f"axis={self.axis!r}, capacities=({self.row_cap}, {self.col_cap}, {self.entry_cap} per device))")

    @classmethod
    def from_edges(cls, rows, cols, n_rows: int, n_cols: int, *, mesh: Mesh, axis: str | None = None,
                   row_capacity: int | None = None, col_capacity: int | None = None,
                   entry_capacity: int | None = None) -> "ShardedBipartiteGraph":
        """A sharded bipartite graph from host arrays of edges (row id, column id).

        Args:
            rows, cols: int arrays of one length, ids in ``[0, n_rows)`` and
                ``[0, n_cols)``; a repeated edge is kept once.
            n_rows, n_cols: the sizes of the two sides.
            mesh: the :class:`jax.sharding.Mesh` to split over.
            axis: the mesh axis (default: the mesh's only axis).
            row_capacity, col_capacity: padded sizes, at least the true ones
                (the columns rounded up to a multiple of D); default the
                sizes themselves (columns rounded up).
            entry_capacity: edges per device (default: the largest device's
                count rounded up by :func:`jaxmatch._validate.size_class`).

        Returns:
            The :class:`ShardedBipartiteGraph`.

        Raises:
            GraphInputError: on a mesh or axis that does not fit, ids out of
                range, arrays of different lengths or a capacity too small.
        """
        axis, D = _axis(mesh, axis)
        _count(n_rows, "n_rows")
        _count(n_cols, "n_cols")
        r, c = _ids(rows, "rows", n_rows), _ids(cols, "cols", n_cols)
        if r.shape != c.shape:
            raise GraphInputError(f"rows and cols must have one length, got {r.size} and {c.size}")
        rc = _capacity(n_rows, row_capacity, 1, "row_capacity")
        cc = _capacity(n_cols, col_capacity, D, "col_capacity")
        # scipy's COO -> CSR by column: rows sorted within each column, a repeated edge kept once
        A = sp.coo_array((np.ones(r.size, np.int8), (c, r)), shape=(cc, rc)).tocsr()
        A.sum_duplicates()
        c = np.repeat(np.arange(cc, dtype=np.int32), np.diff(A.indptr))
        ec, (rr, cs) = _split(A.indptr[::cc // D], [(A.indices, rc), (c, cc)], D, entry_capacity, mesh, axis)
        return cls(rr, cs, np.asarray(n_rows, np.int32), np.asarray(n_cols, np.int32), rc, cc, ec, mesh, axis)


def _axis(mesh, axis):
    """The mesh axis to split over and its device count, checked."""
    if not isinstance(mesh, Mesh):
        raise GraphInputError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    if axis is None:
        if len(mesh.axis_names) != 1:
            raise GraphInputError(f"the mesh has axes {mesh.axis_names}: name the one to split over (axis=)")
        axis = mesh.axis_names[0]
    if axis not in mesh.axis_names:
        raise GraphInputError(f"axis {axis!r} is not an axis of the mesh {mesh.axis_names}")
    return axis, mesh.shape[axis]


def _count(n, name):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise GraphInputError(f"{name} must be an int >= 0, got {n!r}")


def _ids(x, name, n):
    """A 1-D integer id array with ids in [0, n), as int32 where n fits it (half the host memory
    traffic of int64 in the builds below), else int64."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise GraphInputError(f"{name} must be a 1-D array, got shape {x.shape}")
    if x.size and (x.dtype == np.bool_ or not np.issubdtype(x.dtype, np.integer)):
        raise GraphInputError(f"{name} must hold integer ids, got dtype {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= n):
        raise GraphInputError(f"{name} holds ids out of range [0, {n})")
    return x.astype(np.int32 if n <= INT32_MAX else np.int64, copy=False)


def _capacity(n, given, D, name):
    """The padded count of a vertex set split into D equal ranges: n (or ``given``) rounded up to a
    multiple of D."""
    cap = max(int(n), 1)
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < cap:
            raise GraphInputError(f"{name} must be an int >= {cap} (the vertex count, at least 1), got {given!r}")
        cap = int(given)
    cap = -(-max(cap, D) // D) * D
    if cap > INT32_MAX // 2:
        raise GraphInputError(f"{name} = {cap} does not fit int32 ids")
    return cap


def _split(bounds, columns, D, entry_capacity, mesh, axis):
    """Entries in owner order, device d's at ``[bounds[d], bounds[d + 1])``, into [D, ec] arrays,
    device d's entries first in its row and padding after, each array sharded over ``axis``:
    (ec, arrays). ``columns``: (values, padding) pairs."""
    counts = np.diff(np.asarray(bounds, np.int64))
    most = int(counts.max()) if counts.size else 0
    ec = size_class(most)
    if entry_capacity is not None:
        if isinstance(entry_capacity, bool) or not isinstance(entry_capacity, (int, np.integer)) \
                or entry_capacity < max(most, 1):
            raise GraphInputError(f"entry_capacity must be an int >= {max(most, 1)}, the most entries of "
                                  f"one device, got {entry_capacity!r}")
        ec = int(entry_capacity)
    spec = NamedSharding(mesh, P(axis))
    out = []
    for values, pad in columns:
        a = np.full((D, ec), pad, np.float32 if isinstance(pad, float) else np.int32)
        for d in range(D):
            a[d, :counts[d]] = values[bounds[d]:bounds[d + 1]]
        out.append(jax.device_put(a, spec))
    return ec, out


def shard(g, mesh: Mesh, axis: str | None = None, **capacities):
    """Split a :class:`jaxmatch.Graph` or :class:`jaxmatch.BipartiteGraph` over the devices of ``mesh``.

    A Graph is split by source vertex ranges (:class:`ShardedGraph`), a
    BipartiteGraph by column ranges (:class:`ShardedBipartiteGraph`). The
    entries go through the host (see the module docstring for the layout and
    why); the classes' ``from_edges`` build a sharded graph from edge arrays
    without a single-device graph at all.

    Args:
        g: a single (not batched) :class:`jaxmatch.Graph` or
            :class:`jaxmatch.BipartiteGraph`.
        mesh: the :class:`jax.sharding.Mesh` to split over.
        axis: the mesh axis (default: the mesh's only axis).
        **capacities: ``vertex_capacity`` and ``entry_capacity`` (a Graph) or
            ``row_capacity``, ``col_capacity`` and ``entry_capacity`` (a
            BipartiteGraph), as for the classes' ``from_edges``.

    Returns:
        The :class:`ShardedGraph` or :class:`ShardedBipartiteGraph`, with the
        same vertices, edges and weights.

    Raises:
        GraphInputError: when ``g`` is not a single Graph or BipartiteGraph,
            or as for ``from_edges``.

    Example:
        >>> import jax, jaxmatch
        >>> mesh = jax.sharding.Mesh(jax.devices()[:1], ("d",))
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> jaxmatch.suitor(jaxmatch.shard(g, mesh)).mate.tolist()
        [-1, 2, 1, -1]
        >>> b = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
        >>> int(jaxmatch.maximum_matching(jaxmatch.shard(b, mesh), method="apfb").cardinality)
        2
    """
    if not isinstance(g, (Graph, BipartiteGraph)):
        raise GraphInputError(f"shard takes a jaxmatch.Graph or BipartiteGraph, got {type(g).__name__}")
    if np.ndim(g.n if isinstance(g, Graph) else g.n_rows) != 0:
        raise GraphInputError("shard takes one graph, not a batch")
    if isinstance(g, BipartiteGraph):
        e = int(g.n_edges)
        cols, rows = np.asarray(g.by_col.src)[:e], np.asarray(g.by_col.indices)[:e]
        return ShardedBipartiteGraph.from_edges(rows, cols, int(g.n_rows), int(g.n_cols), mesh=mesh, axis=axis,
                                                **capacities)
    e = int(g.n_entries)
    src, dst = np.asarray(g.adj.src)[:e], np.asarray(g.adj.indices)[:e]
    w = np.asarray(g.adj.weights)[:e]
    once = src <= dst                       # each edge once (a loop is stored once already)
    return ShardedGraph.from_edges(src[once], dst[once], w[once], n=int(g.n), mesh=mesh, axis=axis, **capacities)
