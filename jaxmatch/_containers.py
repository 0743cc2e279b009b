"""The graph containers: :class:`BipartiteGraph`, :class:`Graph` and :class:`FlowNetwork`.

Each container is a frozen dataclass registered as a JAX pytree
(:mod:`jaxmatch._csr`): array fields hold padded CSR arrays and the true sizes
(scalar int32 arrays, ``[B]`` in a batch); the capacities are static fields,
so graphs of equal capacities share one compilation and stack into a batch
for ``jax.vmap``. The classes hold their fields, their documentation and thin
constructors: ``from_edges`` checks its options and builds the arrays on the
host (:mod:`jaxmatch._build`), ``from_scipy`` reads a sparse matrix
(:mod:`jaxmatch._sparse`). Users import the classes from :mod:`jaxmatch` or
:mod:`jaxmatch.graph`.
"""
from __future__ import annotations

import jax
import numpy as np

from jaxmatch._build import (_bipartite_batch, _bipartite_fields, _flow_batch, _flow_fields, _graph_batch,
                             _graph_fields)
from jaxmatch._csr import CSR, _pytree, _static
from jaxmatch._sparse import _from_scipy
from jaxmatch._validate import GraphInputError, _check_rule


def _scalar(x) -> str:
    try:
        return str(int(x))
    except Exception:  # traced or batched
        return f"<{getattr(x, 'shape', '?')}>"


@_pytree
class BipartiteGraph:
    """A bipartite graph G = (R ∪ C, E), the nonzero pattern of an ``n_rows x n_cols`` matrix.

    Row ``i`` and column ``j`` are joined by an edge when entry ``(i, j)`` is
    stored. The graph is kept in both directions, as a column-major CSR
    ``by_col`` (column -> rows) and a row-major CSR ``by_row`` (row ->
    columns), padded to static capacities: padding entries point at the
    sentinel ids ``row_cap`` and ``col_cap``, which the solvers' ``segment_*``
    reductions and dropped scatters ignore, so graphs of equal capacities
    share one compilation. Built by :meth:`from_edges`,
    :func:`~jaxmatch.from_scipy`, :func:`~jaxmatch.from_networkx`,
    :func:`~jaxmatch.from_igraph` or :func:`~jaxmatch.read`.

    Attributes:
        by_col: :class:`~jaxmatch.CSR` column -> rows (``indices`` are row ids,
            ``src`` column ids).
        by_row: :class:`~jaxmatch.CSR` row -> columns.
        n_rows: int32 scalar (``[B]`` in a batch), the number of rows.
        n_cols: int32 scalar, the number of columns.
        n_edges: int32 scalar, the number of distinct edges.
        row_cap: static int, the padded number of rows.
        col_cap: static int, the padded number of columns.
        edge_cap: static int, the padded number of edges.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1])
        >>> int(g.n_rows), int(g.n_cols), int(g.n_edges), g.capacities()
        (2, 2, 3, {'row_capacity': 2, 'col_capacity': 2, 'edge_capacity': 4})
    """

    by_col: CSR
    by_row: CSR
    n_rows: jax.Array
    n_cols: jax.Array
    n_edges: jax.Array
    row_cap: int = _static()
    col_cap: int = _static()
    edge_cap: int = _static()

    @classmethod
    def from_edges(cls, rows, cols, n_rows=None, n_cols=None, *, duplicates="merge",
                   row_capacity=None, col_capacity=None, edge_capacity=None, graph_index=None):
        """Build a bipartite graph, or a batch of them, from edge arrays.

        Edge ``k`` joins row ``rows[k]`` and column ``cols[k]``. The edges are
        sorted once by a packed ``(row, col)`` key, repeats merged, and both
        CSR directions filled on the host: O(m log m) work for m edges.

        With ``graph_index`` (an int array beside the edges: the graph of each
        edge) the result is a *batch* of graphs, built in one vectorised pass:
        ``n_rows`` and ``n_cols`` are then arrays with one size per graph,
        ids are local to each graph, and the batch equals
        :func:`~jaxmatch.stack` of the graphs built one by one (capacities:
        the largest over the graphs, as powers of two).

        Args:
            rows: int array ``[m]``, the row of each edge (0-based).
            cols: int array ``[m]``, the column of each edge.
            n_rows: the number of rows (default: the largest row id + 1);
                with ``graph_index``, an int array of one size per graph.
            n_cols: the number of columns, likewise.
            duplicates: ``"merge"`` (default) stores a repeated (row, col)
                pair once; ``"error"`` raises on a repeat.
            row_capacity: the padded number of rows, at least ``n_rows``
                (default: the next power of two).
            col_capacity: the padded number of columns (default likewise).
            edge_capacity: the padded number of edges (default likewise).
            graph_index: int array ``[m]``, the graph of each edge; None
                (default) builds one graph.

        Returns:
            The :class:`BipartiteGraph`; with ``graph_index``, the batch (every
            array field with a leading axis of one entry per graph).

        Raises:
            GraphInputError: for ids that are not integers or are out of range,
                edge arrays of different lengths, a repeat under
                ``duplicates="error"``, a capacity below its size, or a count
                beyond int32.

        Example:
            >>> b = BipartiteGraph.from_edges([0, 1, 0], [1, 0, 0], n_rows=[2, 1], n_cols=[2, 3],
            ...                               graph_index=[0, 0, 1])
            >>> b.n_edges.tolist(), b.by_row.indices.tolist()
            ([2, 1], [[1, 0], [0, 4]])
        """
        _check_rule(duplicates, ("merge", "error"))
        if graph_index is not None:
            return BipartiteGraph(**_bipartite_batch(rows, cols, n_rows, n_cols, graph_index, duplicates,
                                                     (row_capacity, col_capacity, edge_capacity)))
        return cls(**_bipartite_fields(rows, cols, n_rows, n_cols, duplicates, row_capacity, col_capacity,
                                       edge_capacity))

    @classmethod
    def from_scipy(cls, A, **kw):
        """The bipartite graph of a scipy sparse matrix's nonzero pattern.

        Args:
            A: a scipy sparse array or matrix of any format.
            **kw: the keywords of :func:`~jaxmatch.from_scipy` and :meth:`from_edges`.

        Returns:
            ``from_scipy(A, kind="bipartite", **kw)``.
        """
        return _from_scipy(A, BipartiteGraph, "bipartite", **kw)

    def edges(self):
        """The edges, copied to the host.

        Returns:
            ``(rows, cols, n_rows, n_cols)``: two NumPy int32 arrays of the
            edges in row-major order, and the two sizes as ints.
        """
        m = int(self.n_edges)
        return (np.asarray(self.by_row.src)[:m], np.asarray(self.by_row.indices)[:m],
                int(self.n_rows), int(self.n_cols))

    def capacities(self) -> dict:
        """The capacities, as the keywords of :meth:`from_edges`.

        Returns:
            ``{"row_capacity": ..., "col_capacity": ..., "edge_capacity": ...}``.
        """
        return dict(row_capacity=self.row_cap, col_capacity=self.col_cap, edge_capacity=self.edge_cap)

    def with_capacity(self, **caps) -> "BipartiteGraph":
        """The same graph padded to other capacities.

        Args:
            **caps: ``row_capacity``, ``col_capacity``, ``edge_capacity``; a
                missing one becomes the power of two of the true size.

        Returns:
            A new :class:`BipartiteGraph`, rebuilt from :meth:`edges`.
        """
        return BipartiteGraph.from_edges(*self.edges(), **caps)

    def __repr__(self):
        return (f"BipartiteGraph(n_rows={_scalar(self.n_rows)}, n_cols={_scalar(self.n_cols)}, "
                f"n_edges={_scalar(self.n_edges)}, capacities=({self.row_cap}, {self.col_cap}, {self.edge_cap}))")


@_pytree
class Graph:
    """An undirected graph, optionally weighted, stored as its symmetric adjacency matrix in CSR.

    The CSR ``adj`` holds the adjacency matrix A, ``A[u, v] = A[v, u] = w``
    for an edge {u, v} of weight w: an edge with u != v is stored twice, as
    (u, v) and (v, u); a self-loop once, as the diagonal entry holding its
    weight (the layout of its scipy adjacency matrix). A vertex's entries
    are one CSR row sorted by neighbour, so a vertex-parallel step is one
    ``segment_*`` reduction over ``adj.src``. ``adj.weights`` always exists
    (ones for an unweighted graph; the static ``weighted`` records which).
    Padding follows :class:`~jaxmatch.CSR`: sentinel id ``vertex_cap``,
    weight 0.

    Attributes:
        adj: :class:`~jaxmatch.CSR` of the stored entries; ``adj.weights`` is
            float32 (float64 in 64-bit mode).
        n: int32 scalar (``[B]`` in a batch), the number of vertices.
        n_edges: int32 scalar, the number of undirected edges (a loop once).
        n_entries: int32 scalar, the number of stored entries (two per edge,
            one per loop).
        vertex_cap: static int, the padded number of vertices.
        entry_cap: static int, the padded number of stored entries.
        weighted: static bool, True when weights were given or repeated edges
            were summed into a weight other than 1.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1], [1, 2], [2.0, 3.0])
        >>> int(g.n), int(g.n_edges), int(g.n_entries), g.weighted
        (3, 2, 4, True)
        >>> g.adj.indices.tolist(), g.adj.weights.tolist()
        ([1, 0, 2, 1], [2.0, 2.0, 3.0, 3.0])
    """

    adj: CSR
    n: jax.Array
    n_edges: jax.Array
    n_entries: jax.Array
    vertex_cap: int = _static()
    entry_cap: int = _static()
    weighted: bool = _static()

    @classmethod
    def from_edges(cls, u, v, weights=None, n=None, *, duplicates="sum",
                   vertex_capacity=None, entry_capacity=None, graph_index=None):
        """Build an undirected graph, or a batch of them, from edge arrays.

        Edge ``k`` is {u[k], v[k]} with weight ``weights[k]``. The edges are
        sorted once by a packed ``(min, max)`` key, repeats merged, and the
        symmetric CSR filled on the host: O(m log m) work for m edges.
        With ``graph_index`` (the graph of each edge; ``n`` an array of
        sizes, ids local to each graph) the result is the batch that
        :func:`~jaxmatch.stack` makes of the graphs built one by one, in one
        pass (weighted if any graph is).

        Args:
            u: int array ``[m]``, one end of each edge (0-based).
            v: int array ``[m]``, the other end (``u[k] == v[k]`` is a self-loop).
            weights: float array ``[m]``, finite and >= 0, or None (default)
                for an unweighted graph (unit weights).
            n: the number of vertices (default: the largest id + 1); with
                ``graph_index``, an int array of one size per graph.
            duplicates: ``"sum"`` (default) adds the weights of repeated
                edges, in either orientation, as ``scipy.sparse`` sums
                duplicates (an unweighted repeat becomes weight 2 and the
                graph then counts as weighted); ``"error"`` raises on a repeat.
            vertex_capacity: the padded number of vertices, at least ``n``
                (default: the next power of two).
            entry_capacity: the padded number of stored entries (default likewise).
            graph_index: int array ``[m]``, the graph of each edge; None
                (default) builds one graph.

        Returns:
            The :class:`Graph`; with ``graph_index``, the batch.

        Raises:
            GraphInputError: for ids that are not integers or are out of range,
                negative or non-finite weights, a (summed) weight beyond the
                float dtype, a repeat under ``duplicates="error"``, a capacity
                below its size, or a count beyond int32.
        """
        _check_rule(duplicates, ("sum", "error"))
        if graph_index is not None:
            return Graph(**_graph_batch(u, v, weights, n, graph_index, duplicates, (vertex_capacity, entry_capacity)))
        return cls(**_graph_fields(u, v, weights, n, duplicates, vertex_capacity, entry_capacity))

    @classmethod
    def from_scipy(cls, A, **kw):
        """The graph of a symmetric scipy sparse adjacency matrix.

        Args:
            A: a square scipy sparse array or matrix of any format.
            **kw: the keywords of :func:`~jaxmatch.from_scipy` (``symmetrize=``,
                ``weighted=``) and :meth:`from_edges`.

        Returns:
            ``from_scipy(A, kind="graph", **kw)``.
        """
        return _from_scipy(A, Graph, "graph", **kw)

    def edges(self):
        """The edges, copied to the host.

        Returns:
            ``(u, v, weights, n)``: each undirected edge once, with ``u <= v``,
            sorted; ``weights`` a NumPy array, or None for an unweighted graph.
        """
        k = int(self.n_entries)
        s, d = np.asarray(self.adj.src)[:k], np.asarray(self.adj.indices)[:k]
        keep = s <= d
        w = np.asarray(self.adj.weights)[:k][keep] if self.weighted else None
        return s[keep], d[keep], w, int(self.n)

    def capacities(self) -> dict:
        """The capacities, as the keywords of :meth:`from_edges`.

        Returns:
            ``{"vertex_capacity": ..., "entry_capacity": ...}``.
        """
        return dict(vertex_capacity=self.vertex_cap, entry_capacity=self.entry_cap)

    def with_capacity(self, **caps) -> "Graph":
        """The same graph padded to other capacities.

        Args:
            **caps: ``vertex_capacity``, ``entry_capacity``; a missing one
                becomes the power of two of the true size.

        Returns:
            A new :class:`Graph`, rebuilt from :meth:`edges`.
        """
        return Graph.from_edges(*self.edges(), **caps)

    def __repr__(self):
        return (f"Graph(n={_scalar(self.n)}, n_edges={_scalar(self.n_edges)}, weighted={self.weighted}, "
                f"capacities=({self.vertex_cap}, {self.entry_cap}))")


LAYOUTS = ("bcsr", "rcsr")


@_pytree
class FlowNetwork:
    """A directed network with integer arc capacities, and the layout of its residual graph.

    Arc ``a`` goes from ``tail[a]`` to ``head[a]`` with capacity
    ``cap[a] >= 0``; the arcs keep the caller's order, parallel arcs stay
    separate and loops are kept (they never carry flow). For a flow f every
    input arc a gives two residual arcs: a forward one of capacity
    cap[a] - f[a] and a reverse one of capacity f[a]. The ``2 * arc_cap``
    residual arcs form the CSR ``res`` keyed by their tail; ``res_arc``,
    ``res_forward`` and ``res_rev`` map each one to its input arc, its
    direction and the position of its reverse arc.

    The two layouts are those of the WBPR paper (Hsieh, Lin, Kuo,
    "Engineering a workload-balanced push-relabel algorithm for massive graphs
    on GPUs") and differ in the order inside a vertex's row: ``"bcsr"``
    (bidirectional CSR) mixes out- and in-arcs sorted by head, so a reverse
    arc can be found by binary search; ``"rcsr"`` keeps the forward arcs first
    and the reverse arcs after them (the paper's second, reverse CSR).
    ``res_rev`` is stored for both, so the solvers find a reverse arc in O(1).

    Attributes:
        tail: int32 ``[arc_cap]``, the tail of each input arc (``vertex_cap`` in padding).
        head: int32 ``[arc_cap]``, the head of each input arc (``vertex_cap`` in padding).
        cap: ``[arc_cap]`` arc capacities, int32 (int64 in 64-bit mode), 0 in padding.
        res: :class:`~jaxmatch.CSR` of the residual arcs (``res.src`` their
            tails, ``res.indices`` their heads).
        res_arc: int32 ``[2 * arc_cap]``, the input arc of each residual arc
            (``arc_cap`` in padding).
        res_forward: bool ``[2 * arc_cap]``, True for a forward residual arc.
        res_rev: int32 ``[2 * arc_cap]``, the position of each residual arc's
            reverse arc (a padding entry points at itself).
        n: int32 scalar (``[B]`` in a batch), the number of vertices.
        n_arcs: int32 scalar, the number of input arcs.
        vertex_cap: static int, the padded number of vertices.
        arc_cap: static int, the padded number of input arcs.
        layout: static str, ``"bcsr"`` or ``"rcsr"``.

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1], [1, 2, 2], [3, 2, 1])
        >>> int(net.n), int(net.n_arcs), net.res.indices.shape
        (3, 3, (8,))
        >>> net.res.indices.tolist()[:6], net.res_forward.tolist()[:6]
        ([1, 2, 0, 2, 0, 1], [True, True, False, True, False, False])
    """

    tail: jax.Array
    head: jax.Array
    cap: jax.Array
    res: CSR
    res_arc: jax.Array
    res_forward: jax.Array
    res_rev: jax.Array
    n: jax.Array
    n_arcs: jax.Array
    vertex_cap: int = _static()
    arc_cap: int = _static()
    layout: str = _static()

    @classmethod
    def from_edges(cls, tail, head, cap, n=None, *, layout="bcsr",
                   vertex_capacity=None, arc_capacity=None, graph_index=None):
        """Build a flow network, or a batch of them, from arc arrays.

        Arc ``k`` goes from ``tail[k]`` to ``head[k]`` with capacity
        ``cap[k]``. The residual arcs are sorted once into the chosen
        layout on the host: O(m log m) work for m arcs. With ``graph_index``
        (the network of each arc; ``n`` an array of sizes, ids local to each
        network, arcs of a network in their input order) the result is the
        batch that :func:`~jaxmatch.stack` makes of the networks built one by
        one, in one pass.

        Args:
            tail: int array ``[m]``, the tail of each arc (0-based).
            head: int array ``[m]``, the head of each arc.
            cap: int array ``[m]`` of capacities >= 0 (integers, as for
                scipy's ``maximum_flow``; beyond int32 they need 64-bit mode).
            n: the number of vertices (default: the largest id + 1); with
                ``graph_index``, an int array of one size per network.
            layout: ``"bcsr"`` (default) or ``"rcsr"``, the residual layout
                (see the class).
            vertex_capacity: the padded number of vertices, at least ``n``
                (default: the next power of two).
            arc_capacity: the padded number of input arcs (default likewise);
                the residual arrays hold twice as many.
            graph_index: int array ``[m]``, the network of each arc; None
                (default) builds one network.

        Returns:
            The :class:`FlowNetwork`; with ``graph_index``, the batch.

        Raises:
            GraphInputError: for ids or capacities that are not integers, ids
                out of range, negative capacities, capacities beyond the
                integer dtype, an unknown layout, a capacity below its size,
                or a count beyond int32.
        """
        if layout not in LAYOUTS:
            raise GraphInputError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if graph_index is not None:
            return FlowNetwork(**_flow_batch(tail, head, cap, n, graph_index, layout,
                                             (vertex_capacity, arc_capacity)))
        return cls(**_flow_fields(tail, head, cap, n, layout, vertex_capacity, arc_capacity))

    @classmethod
    def from_scipy(cls, A, **kw):
        """The network whose arcs are the stored entries of a square integer scipy sparse matrix.

        Args:
            A: a square scipy sparse array or matrix with an integer dtype.
            **kw: the keywords of :meth:`from_edges` (``layout=``, capacities).

        Returns:
            ``from_scipy(A, kind="flow", **kw)``.
        """
        return _from_scipy(A, FlowNetwork, "flow", **kw)

    def edges(self):
        """The arcs, copied to the host.

        Returns:
            ``(tail, head, cap, n)``: NumPy arrays of the arcs in their input
            order, and the number of vertices.
        """
        m = int(self.n_arcs)
        return (np.asarray(self.tail)[:m], np.asarray(self.head)[:m], np.asarray(self.cap)[:m],
                int(self.n))

    def capacities(self) -> dict:
        """The capacities, as the keywords of :meth:`from_edges`.

        Returns:
            ``{"vertex_capacity": ..., "arc_capacity": ...}``.
        """
        return dict(vertex_capacity=self.vertex_cap, arc_capacity=self.arc_cap)

    def with_capacity(self, **caps) -> "FlowNetwork":
        """The same network, in the same layout, padded to other capacities.

        Args:
            **caps: ``vertex_capacity``, ``arc_capacity``; a missing one
                becomes the power of two of the true size.

        Returns:
            A new :class:`FlowNetwork`, rebuilt from :meth:`edges`.
        """
        return FlowNetwork.from_edges(*self.edges(), layout=self.layout, **caps)

    def with_layout(self, layout: str) -> "FlowNetwork":
        """The same network, at the same capacities, in another residual layout.

        Args:
            layout: ``"bcsr"`` or ``"rcsr"``.

        Returns:
            A new :class:`FlowNetwork`, rebuilt from :meth:`edges`.
        """
        return FlowNetwork.from_edges(*self.edges(), layout=layout, **self.capacities())

    def __repr__(self):
        return (f"FlowNetwork(n={_scalar(self.n)}, n_arcs={_scalar(self.n_arcs)}, layout={self.layout!r}, "
                f"capacities=({self.vertex_cap}, {self.arc_cap}))")


GRAPH_TYPES = (BipartiteGraph, Graph, FlowNetwork)
for _cls in GRAPH_TYPES:
    _cls.__module__ = "jaxmatch.graph"   # their public home: reprs and pickles name them there
del _cls


def _size_leaf(g):
    return g.n_rows if isinstance(g, BipartiteGraph) else g.n
