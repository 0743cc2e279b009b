"""The graph containers: :class:`BipartiteGraph`, :class:`Graph`, and :class:`FlowNetwork` (from ``_network``).

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

from jaxmatch._build import _bipartite_batch, _bipartite_fields, _graph_batch, _graph_fields
from jaxmatch._csr import CSR, _pytree, _scalar, _static
from jaxmatch._network import LAYOUTS, FlowNetwork  # noqa: F401 (LAYOUTS: re-exported)
from jaxmatch._sparse import _from_scipy
from jaxmatch._validate import GraphInputError, _check_rule


@_pytree
class BipartiteGraph:
    """A bipartite graph G = (R ∪ C, E), optionally weighted: the pattern of an ``n_rows x n_cols`` matrix.

    Row ``i`` and column ``j`` are joined by an edge when entry ``(i, j)`` is
    stored; a weighted graph (the costs of an assignment problem) also keeps
    each edge's weight, any finite real, in ``weights`` of both CSRs. The
    graph is kept in both directions, as a column-major CSR ``by_col``
    (column -> rows) and a row-major CSR ``by_row`` (row -> columns), padded
    to static capacities: padding entries point at the sentinel ids
    ``row_cap`` and ``col_cap``, which the solvers' ``segment_*`` reductions
    and dropped scatters ignore, so graphs of equal capacities share one
    compilation. Built by :meth:`from_edges`,
    :func:`~jaxmatch.from_scipy`, :func:`~jaxmatch.from_networkx`,
    :func:`~jaxmatch.from_igraph` or :func:`~jaxmatch.read`.

    Attributes:
        by_col: :class:`~jaxmatch.CSR` column -> rows (``indices`` are row ids,
            ``src`` column ids).
        by_row: :class:`~jaxmatch.CSR` row -> columns. Both ``weights`` are
            float32 (float64 in 64-bit mode) in their own entry order, 0 in
            padding, or None for an unweighted graph (see :attr:`weighted`).
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
    def from_edges(cls, rows, cols, n_rows=None, n_cols=None, *, weights=None, duplicates="merge",
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
            weights: float array ``[m]``, the weight of each edge, finite, of
                any sign; None (default) for an unweighted graph.
            duplicates: ``"merge"`` (default) stores a repeated (row, col)
                pair once, with the sum of its weights (as ``scipy.sparse``
                sums duplicates); ``"error"`` raises on a repeat.
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
                edge arrays of different lengths, non-finite weights or a
                summed weight beyond the float dtype, a repeat under
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
            return BipartiteGraph(**_bipartite_batch(rows, cols, weights, n_rows, n_cols, graph_index, duplicates,
                                                     (row_capacity, col_capacity, edge_capacity)))
        return cls(**_bipartite_fields(rows, cols, weights, n_rows, n_cols, duplicates, row_capacity, col_capacity,
                                       edge_capacity))

    @classmethod
    def from_scipy(cls, A, **kw):
        """The bipartite graph of a scipy sparse matrix's nonzero pattern (``weighted=True``: values as weights).

        Args:
            A: a scipy sparse array or matrix of any format.
            **kw: the keywords of :func:`~jaxmatch.from_scipy` and :meth:`from_edges`.

        Returns:
            ``from_scipy(A, kind="bipartite", **kw)``.
        """
        return _from_scipy(A, BipartiteGraph, "bipartite", **kw)

    @property
    def weighted(self) -> bool:
        """True when the graph carries edge weights (``by_row.weights`` is not None)."""
        return self.by_row.weights is not None

    def edges(self):
        """The edges, copied to the host.

        Returns:
            ``(rows, cols, n_rows, n_cols)``: two NumPy int32 arrays of the
            edges in row-major order, and the two sizes as ints.
        """
        m = int(self.n_edges)
        return (np.asarray(self.by_row.src)[:m], np.asarray(self.by_row.indices)[:m],
                int(self.n_rows), int(self.n_cols))

    def edge_weights(self) -> np.ndarray:
        """The edge weights, copied to the host: a NumPy float array in the order of :meth:`edges`.

        Raises:
            GraphInputError: for an unweighted graph.

        Example:
            >>> BipartiteGraph.from_edges([1, 0, 1], [0, 1, 0], weights=[2.0, -1.0, 0.5]).edge_weights().tolist()
            [-1.0, 2.5]
        """
        if not self.weighted:
            raise GraphInputError("edge_weights needs a weighted BipartiteGraph (from_edges(..., weights=...))")
        return np.asarray(self.by_row.weights)[:int(self.n_edges)]

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
            A new :class:`BipartiteGraph`, rebuilt from :meth:`edges` (and
            :meth:`edge_weights`).
        """
        w = self.edge_weights() if self.weighted else None
        return BipartiteGraph.from_edges(*self.edges(), weights=w, **caps)

    def __repr__(self):
        return (f"BipartiteGraph(n_rows={_scalar(self.n_rows)}, n_cols={_scalar(self.n_cols)}, "
                f"n_edges={_scalar(self.n_edges)}, {'weighted=True, ' if self.weighted else ''}"
                f"capacities=({self.row_cap}, {self.col_cap}, {self.edge_cap}))")


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


GRAPH_TYPES = (BipartiteGraph, Graph, FlowNetwork)
for _cls in GRAPH_TYPES:
    _cls.__module__ = "jaxmatch.graph"   # their public home: reprs and pickles name them there
del _cls


def _size_leaf(g):
    return g.n_rows if isinstance(g, BipartiteGraph) else g.n
