"""Graphs split over several devices: :class:`ShardedGraph` and :func:`shard`.

Partition: one-dimensional, by **source vertex ranges**. With D devices on
the mesh axis and a vertex capacity V (a multiple of D), device d holds every
stored entry (u, v, w) of the symmetric adjacency whose source u lies in
``[d V / D, (d + 1) V / D)``: its rows, each entry with the global id of its
target. Why this layout: in the vertex-centric solvers a vertex's step reads
its own row only (a Suitor proposal scans the proposer's neighbours), so each
device works on its own entries, O(E / D) per round, with no communication;
what crosses devices is the per-vertex state of the targets, kept as
replicated arrays of length V and combined by all-reduces (``lax.pmax`` /
``lax.pmin``) once per round: O(V) words per device and round. A 2-D
partition (entries by source and target blocks) would cut that to
O(V / sqrt(D)) and is the layout ``experiments/SCALING.md`` plans for
10^10 edges over many hosts; on one host's NVLink the replicated state costs
less than the 2-D layout's extra collective steps at these sizes. Vertex
ranges of equal length balance the entries when ids are not ordered by
degree (relabel the vertices randomly first otherwise).

The shards are made on the host and each goes to its own device
(``jax.device_put`` with a ``NamedSharding``), so the whole graph never sits
on one device: :meth:`ShardedGraph.from_edges` builds one from edge arrays,
:func:`shard` from a :class:`jaxmatch.Graph`. Solvers that take one:
:func:`jaxmatch.suitor`.
"""
from __future__ import annotations

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from jaxmatch._csr import _pytree, _static
from jaxmatch._validate import INT32_MAX, GraphInputError
from jaxmatch.graph import Graph, next_pow2

__all__ = ["ShardedGraph", "shard"]


@_pytree
class ShardedGraph:
    """An undirected weighted graph whose stored entries are split over the devices of a mesh axis.

    Entry j of device d is ``(src[d, j], dst[d, j], weights[d, j])``, both
    ids global, ``src`` in device d's vertex range; padding has ``src =
    dst = vertex_cap`` and weight 0. Every edge {u, v} with u != v is stored
    twice, as (u, v) on u's device and (v, u) on v's.

    Attributes:
        src: int32 ``[D, entry_cap]``, sharded over the mesh axis.
        dst: int32 ``[D, entry_cap]``, sharded likewise.
        weights: float32 ``[D, entry_cap]``, sharded likewise.
        n: static int, the number of vertices.
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
    n: int = _static()
    vertex_cap: int = _static()
    entry_cap: int = _static()
    mesh: Mesh = _static()
    axis: str = _static()

    @property
    def shards(self) -> int:
        """D, the number of devices on the mesh axis."""
        return self.mesh.shape[self.axis]

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
            entry_capacity: entries per device (default: the next power of
                two of the largest device's count). Graphs of equal
                capacities and mesh share one compilation.

        Returns:
            The :class:`ShardedGraph`; repeated edges are summed into one (as
            :class:`jaxmatch.Graph` does); self-loops and zero weights are
            kept (the solvers ignore them).

        Raises:
            GraphInputError: on a mesh or axis that does not fit, ids out of
                range, arrays of different lengths, weights that are not
                finite and >= 0, or sizes past int32.
        """
        if not isinstance(mesh, Mesh):
            raise GraphInputError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
        if axis is None:
            if len(mesh.axis_names) != 1:
                raise GraphInputError(f"the mesh has axes {mesh.axis_names}: name the one to split over (axis=)")
            axis = mesh.axis_names[0]
        if axis not in mesh.axis_names:
            raise GraphInputError(f"axis {axis!r} is not an axis of the mesh {mesh.axis_names}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise GraphInputError(f"n must be an int >= 0, got {n!r}")
        u, v = (np.asarray(x) for x in (u, v))
        w = np.ones(u.shape, np.float32) if weights is None else np.asarray(weights)
        if u.ndim != 1 or u.shape != v.shape or u.shape != w.shape:
            raise GraphInputError(f"u, v and weights must be 1-D arrays of one length, got shapes "
                                  f"{u.shape}, {v.shape}, {w.shape}")
        for x, name in ((u, "u"), (v, "v")):
            if x.size and (x.dtype == np.bool_ or not np.issubdtype(x.dtype, np.integer)):
                raise GraphInputError(f"{name} must hold integer ids, got dtype {x.dtype}")
            if x.size and (x.min() < 0 or x.max() >= n):
                raise GraphInputError(f"{name} holds ids out of range [0, {n})")
        if w.size and (not np.issubdtype(w.dtype, np.number) or w.dtype == np.bool_
                       or not np.all(np.isfinite(w)) or w.min() < 0):
            raise GraphInputError("weights must be finite numbers >= 0")
        D = mesh.shape[axis]
        V = max(int(n), 1)
        if vertex_capacity is not None:
            if isinstance(vertex_capacity, bool) or not isinstance(vertex_capacity, (int, np.integer)) \
                    or vertex_capacity < max(n, 1):
                raise GraphInputError(f"vertex_capacity must be an int >= n = {n} (and >= 1), "
                                      f"got {vertex_capacity!r}")
            V = int(vertex_capacity)
        V = -(-max(V, D) // D) * D
        if 2 * u.size > INT32_MAX or V > INT32_MAX // 2:
            raise GraphInputError(f"{u.size} edges on {n} vertices do not fit int32 ids")
        loop = u == v
        src = np.concatenate([u, v[~loop]]).astype(np.int64)
        dst = np.concatenate([v, u[~loop]]).astype(np.int64)
        wt = np.concatenate([w, w[~loop]]).astype(np.float32)
        key = src * V + dst
        order = np.argsort(key, kind="stable")
        key, wt = key[order], wt[order]
        first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if key.size else key
        wt = np.add.reduceat(wt, first) if key.size else wt    # repeated edges summed, as jaxmatch.Graph does
        src, dst = np.divmod(key[first], V)
        owner = src // (V // D)
        counts = np.bincount(owner, minlength=D)
        ec = next_pow2(max(int(counts.max()) if counts.size else 0, 1))
        if entry_capacity is not None:
            if isinstance(entry_capacity, bool) or not isinstance(entry_capacity, (int, np.integer)) \
                    or entry_capacity < counts.max():
                raise GraphInputError(f"entry_capacity must be an int >= {int(counts.max())}, the most "
                                      f"entries of one device, got {entry_capacity!r}")
            ec = int(entry_capacity)
        slot = np.arange(src.size) - np.concatenate([[0], np.cumsum(counts)[:-1]])[owner]
        arrays = [np.full((D, ec), V, np.int32), np.full((D, ec), V, np.int32), np.zeros((D, ec), np.float32)]
        for a, x in zip(arrays, (src, dst, wt)):
            a[owner, slot] = x
        spec = NamedSharding(mesh, P(axis))
        s, d, ww = (jax.device_put(a, spec) for a in arrays)
        return cls(s, d, ww, int(n), V, ec, mesh, axis)


def shard(g: Graph, mesh: Mesh, axis: str | None = None, *, vertex_capacity: int | None = None,
          entry_capacity: int | None = None) -> ShardedGraph:
    """Split a :class:`jaxmatch.Graph` over the devices of ``mesh`` by source vertex ranges.

    The graph's entries go through the host (see the module docstring for
    the layout and why); :meth:`ShardedGraph.from_edges` builds a sharded
    graph without a :class:`jaxmatch.Graph` at all.

    Args:
        g: a single (not batched) :class:`jaxmatch.Graph`.
        mesh: the :class:`jax.sharding.Mesh` to split over.
        axis: the mesh axis (default: the mesh's only axis).
        vertex_capacity, entry_capacity: as for
            :meth:`ShardedGraph.from_edges`.

    Returns:
        The :class:`ShardedGraph`, with the same vertices, edges and weights.

    Raises:
        GraphInputError: when ``g`` is not a single Graph, or as for
            :meth:`ShardedGraph.from_edges`.

    Example:
        >>> import jax, jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> sg = jaxmatch.shard(g, jax.sharding.Mesh(jax.devices()[:1], ("d",)))
        >>> jaxmatch.suitor(sg).mate.tolist()
        [-1, 2, 1, -1]
    """
    if not isinstance(g, Graph):
        raise GraphInputError(f"shard takes a jaxmatch.Graph, got {type(g).__name__}")
    if np.ndim(g.n) != 0:
        raise GraphInputError("shard takes one graph, not a batch")
    e = int(g.n_entries)
    src, dst = np.asarray(g.adj.src)[:e], np.asarray(g.adj.indices)[:e]
    w = np.asarray(g.adj.weights)[:e]
    once = src <= dst                       # each edge once (a loop is stored once already)
    return ShardedGraph.from_edges(src[once], dst[once], w[once], n=int(g.n), mesh=mesh, axis=axis,
                                   vertex_capacity=vertex_capacity, entry_capacity=entry_capacity)
