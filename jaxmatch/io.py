"""Adapters and readers: scipy, networkx, igraph and graph files -> jaxmatch graphs.

Everything here runs on the host and ends in one of the ``from_edges``
constructors of :mod:`jaxmatch.graph`, so their input rules (id ranges,
duplicates, weights, capacities, int32 sizes) apply unchanged; extra keyword
arguments (``duplicates=``, ``layout=``, capacities) pass through to them.

* :func:`from_scipy` / :func:`to_scipy`: sparse matrices, both ways;
* :func:`from_networkx`, :func:`from_igraph`: graph objects of those libraries
  (both optional dependencies, imported lazily);
* :func:`read`: Matrix Market, DIMACS max-flow, KONECT, SNAP-style edge lists
  and GML files, plain or gzip-compressed.

Vertex numbering: a networkx node ``x`` becomes vertex ``list(G.nodes).index(x)``;
an igraph vertex keeps its id; file ids become 0-based.

The parsers of the text formats live in ``jaxmatch._readers``; this module
holds the public functions, the networkx and igraph adapters, and the GML
reader (which goes through networkx).
"""
from __future__ import annotations

import io as _io
import os
import re

import numpy as np
import scipy.sparse as sp

from jaxmatch._readers import _detect, _read_bytes, _read_dimacs, _read_edgelist, _read_konect, _read_mtx
from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError, _kind, from_scipy

__all__ = ["from_scipy", "to_scipy", "from_networkx", "from_igraph", "read", "FORMATS"]

#: The file formats :func:`read` reads (its ``fmt=`` values).
FORMATS = ("mtx", "dimacs", "konect", "edgelist", "gml")


# --------------------------------------------------------------------------
# scipy


def _single(g, size):
    if np.ndim(size):
        raise GraphInputError("to_scipy takes one graph, not a batch: split it with jaxmatch.graph.unstack")


def to_scipy(g):
    """The sparse matrix of a graph, as a ``scipy.sparse.csr_array``.

    * :class:`~jaxmatch.BipartiteGraph`: its ``(n_rows, n_cols)`` biadjacency
      matrix, ``int8`` ones;
    * :class:`~jaxmatch.Graph`: the symmetric ``(n, n)`` adjacency of its
      stored weights (``float64``; ones for an unweighted simple graph, loops
      on the diagonal). ``from_scipy(to_scipy(g), "graph")`` gives ``g`` back;
      for an unweighted ``g`` pass ``weighted=False``;
    * :class:`~jaxmatch.FlowNetwork`: the ``(n, n)`` capacity matrix. Parallel
      arcs are summed into one entry, so the matrix loses their identity (and
      the arc order): the round trip gives ``g`` back only when ``g`` has no
      parallel arcs and its arcs are in row-major order.

    One transfer of the graph to the host and one COO -> CSR conversion,
    O(m) for m stored entries.

    Args:
        g: a single (not batched) jaxmatch graph.

    Returns:
        The ``scipy.sparse.csr_array`` described above.

    Raises:
        GraphInputError: when ``g`` is not a jaxmatch graph, or is a batch
            (split it with :func:`~jaxmatch.unstack`).

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1])
        >>> jaxmatch.to_scipy(g).toarray().tolist()
        [[0, 1], [1, 1]]
    """
    if isinstance(g, BipartiteGraph):
        _single(g, g.n_rows)
        r, c, nr, nc = g.edges()
        return sp.csr_array((np.ones(r.size, np.int8), (r, c)), shape=(nr, nc))
    if isinstance(g, Graph):
        _single(g, g.n)
        k, n = int(g.n_entries), int(g.n)
        w = np.asarray(g.adj.weights[:k], np.float64)
        return sp.csr_array((w, (np.asarray(g.adj.src[:k]), np.asarray(g.adj.indices[:k]))), shape=(n, n))
    if isinstance(g, FlowNetwork):
        _single(g, g.n)
        t, h, cap, n = g.edges()
        return sp.csr_array((cap, (t, h)), shape=(n, n))
    raise GraphInputError(f"to_scipy needs a jaxmatch graph, got {type(g).__name__}")


# --------------------------------------------------------------------------
# networkx / igraph


def _networkx():
    try:
        import networkx
    except ImportError as e:  # pragma: no cover - networkx is installed in CI
        raise ImportError("from_networkx and GML files need networkx: pip install networkx") from e
    return networkx


def _sides(u, v, side, name):
    """Bipartite graph from edges u - v of a vertex set split by ``side`` (0 = row, 1 = column)."""
    same = np.flatnonzero(side[u] == side[v])
    if same.size:
        k = int(same[0])
        raise GraphInputError(
            f"edge {name(u[k])!r} - {name(v[k])!r} joins two vertices of side {int(side[u[k]])}; "
            "a bipartite graph has edges between the sides only")
    pos = np.zeros(side.size, np.int64)
    n1 = int(side.sum())
    pos[side == 0] = np.arange(side.size - n1)
    pos[side == 1] = np.arange(n1)
    row = np.where(side[u] == 0, pos[u], pos[v])
    col = np.where(side[u] == 0, pos[v], pos[u])
    return row, col, side.size - n1, n1


def _weights(vals):
    """Array of edge values, missing ones (None) 1; None when all are missing."""
    if all(x is None for x in vals):
        return None
    return np.asarray([1 if x is None else x for x in vals])


def _capacities(vals, what, describe):
    missing = [i for i, x in enumerate(vals) if x is None]
    if missing:
        raise GraphInputError(
            f"arc {describe(missing[0])} has no {what!r} attribute (needed for kind='flow')")
    return np.asarray(vals) if vals else np.zeros(0, np.int64)


def from_networkx(G, kind=None, weight="weight", *, capacity="capacity", **kw):
    """Build a jaxmatch graph from a networkx graph; vertex ``i`` is node ``list(G.nodes)[i]``.

    * ``kind=None`` or ``"graph"``: an undirected ``nx.Graph`` / ``nx.MultiGraph``
      gives a :class:`Graph` weighted by edge attribute ``weight`` (missing
      values count 1; unweighted when no edge has it or ``weight=None``);
      parallel edges add their weights. A directed graph raises: pass
      ``G.to_undirected()`` (which merges reciprocal arcs) or ``kind="flow"``.
    * ``kind="flow"``: a directed graph gives a :class:`FlowNetwork` with
      integer capacities from edge attribute ``capacity`` (networkx's name; a
      missing value raises, where networkx would read it as infinite);
      parallel arcs of a MultiDiGraph stay separate.
    * ``kind="bipartite"``: sides from node attribute ``bipartite`` (0 = row,
      1 = column) when every node has it, else from the 2-colouring of
      ``networkx.algorithms.bipartite.color`` (its colour 0 = rows; it gives
      colour 1 to the first node of a component); rows and columns are numbered
      in node order within each side. Arc directions are ignored.

    One pass over ``G.edges`` in Python, then the ``from_edges`` build.

    Args:
        G: a ``networkx.Graph``, ``DiGraph``, ``MultiGraph`` or ``MultiDiGraph``
            (networkx is an optional dependency, imported here).
        kind: None or ``"graph"`` (default: a :class:`~jaxmatch.Graph`),
            ``"bipartite"``, ``"flow"``, or one of the container classes.
        weight: the edge attribute holding the weights (default
            ``"weight"``); None for an unweighted graph. Used for
            ``kind="graph"``.
        capacity: the edge attribute holding the integer capacities
            (default ``"capacity"``). Used for ``kind="flow"``.
        **kw: passed to the ``from_edges`` constructor (``duplicates=``,
            ``layout=``, capacities).

    Returns:
        A :class:`~jaxmatch.Graph`, :class:`~jaxmatch.FlowNetwork` or
        :class:`~jaxmatch.BipartiteGraph`.

    Raises:
        GraphInputError: when ``G`` is not a networkx graph, for a directed
            graph with ``kind="graph"`` or an undirected one with
            ``kind="flow"``, an arc without a capacity, a graph that is not
            bipartite or a ``bipartite`` node attribute other than 0 or 1,
            or any error of ``from_edges``.

    Example:
        >>> import networkx as nx
        >>> import jaxmatch
        >>> g = jaxmatch.from_networkx(nx.path_graph(3))
        >>> int(g.n), int(g.n_edges), g.weighted
        (3, 2, False)
    """
    if not isinstance(G, _networkx().Graph):  # DiGraph and the multigraphs subclass Graph
        raise GraphInputError(f"from_networkx needs a networkx graph, got {type(G).__name__}")
    return _from_networkx(G, _kind(kind, "graph"), weight, capacity, False, kw)


def _from_networkx(G, cls, weight, capacity, arcs_as_edges, kw):
    nx = _networkx()
    nodes = list(G.nodes)
    index = {x: i for i, x in enumerate(nodes)}
    directed = G.is_directed()
    attr = capacity if cls is FlowNetwork else weight
    data = list(G.edges(data=attr, default=None)) if attr is not None else list(G.edges(data=False))
    m = len(data)
    u = np.fromiter((index[e[0]] for e in data), np.int64, m)
    v = np.fromiter((index[e[1]] for e in data), np.int64, m)
    vals = [e[2] for e in data] if attr is not None else [None] * m
    if cls is FlowNetwork:
        if not directed:
            raise GraphInputError(
                "kind='flow' needs a directed graph (networkx.DiGraph); "
                "G.to_directed() gives each edge as two arcs")
        cap = _capacities(vals, capacity, lambda k: f"{nodes[u[k]]!r} -> {nodes[v[k]]!r}")
        return FlowNetwork.from_edges(u, v, cap, len(nodes), **kw)
    if cls is Graph:
        if directed and not arcs_as_edges:
            raise GraphInputError(
                "kind='graph' needs an undirected graph: pass G.to_undirected(), "
                "or kind='flow' for a directed network")
        return Graph.from_edges(u, v, _weights(vals), len(nodes), **kw)
    sides = nx.get_node_attributes(G, "bipartite")
    if len(sides) != len(nodes):
        try:
            sides = nx.algorithms.bipartite.color(G)
        except nx.NetworkXError as e:
            raise GraphInputError("graph is not bipartite (no 2-colouring exists)") from e
    bad = [x for x in nodes if sides[x] not in (0, 1)]
    if bad:
        raise GraphInputError(
            f"node {bad[0]!r} has bipartite = {sides[bad[0]]!r}; it must be 0 (row) or 1 (column)")
    side = np.fromiter((sides[x] for x in nodes), np.int64, len(nodes))
    row, col, nr, nc = _sides(u, v, side, lambda i: nodes[i])
    return BipartiteGraph.from_edges(row, col, nr, nc, **kw)


def from_igraph(G, kind=None, weight="weight", *, capacity="capacity", **kw):
    """Build a jaxmatch graph from an ``igraph.Graph``; vertex ids are kept.

    The rules of :func:`~jaxmatch.from_networkx`, in igraph's terms: an
    undirected graph gives a :class:`~jaxmatch.Graph` (edge attribute
    ``weight``; parallel edges add); a directed one with ``kind="flow"`` a
    :class:`~jaxmatch.FlowNetwork` with capacities from edge attribute
    ``capacity``; ``kind="bipartite"`` takes the sides from vertex attribute
    ``type`` (igraph's convention: False = row, True = column) when every
    vertex has it, else from ``G.is_bipartite(return_types=True)``; rows
    and columns are numbered in vertex order within each side.

    Args:
        G: an ``igraph.Graph`` (igraph is an optional dependency).
        kind: None or ``"graph"`` (default), ``"bipartite"``, ``"flow"``, or
            one of the container classes.
        weight: the edge attribute holding the weights (default
            ``"weight"``; ignored when absent); None for an unweighted graph.
        capacity: the edge attribute holding the integer capacities
            (default ``"capacity"``), for ``kind="flow"``.
        **kw: passed to the ``from_edges`` constructor.

    Returns:
        A :class:`~jaxmatch.Graph`, :class:`~jaxmatch.FlowNetwork` or
        :class:`~jaxmatch.BipartiteGraph`.

    Raises:
        GraphInputError: when ``G`` is not an igraph graph, for a directed
            graph with ``kind="graph"`` or an undirected one with
            ``kind="flow"``, an arc without a capacity, a graph that is not
            bipartite, or any error of ``from_edges``.

    Example:
        >>> import igraph as ig
        >>> import jaxmatch
        >>> g = jaxmatch.from_igraph(ig.Graph([(0, 1), (1, 2)]), "bipartite")
        >>> int(g.n_rows), int(g.n_cols), int(g.n_edges)
        (2, 1, 2)
    """
    cls = _kind(kind, "graph")
    if not all(hasattr(G, a) for a in ("vcount", "get_edgelist", "es", "vs")):
        raise GraphInputError(f"from_igraph needs an igraph.Graph, got {type(G).__name__}")
    n = G.vcount()
    uv = np.asarray(G.get_edgelist(), np.int64).reshape(-1, 2)
    u, v = uv[:, 0], uv[:, 1]
    attrs = G.es.attributes()
    if cls is FlowNetwork:
        if not G.is_directed():
            raise GraphInputError(
                "kind='flow' needs a directed igraph.Graph; G.as_directed() gives each edge as two arcs")
        vals = G.es[capacity] if capacity in attrs else [None] * G.ecount()
        cap = _capacities(vals, capacity, lambda k: f"{int(u[k])} -> {int(v[k])} (edge {k})")
        return FlowNetwork.from_edges(u, v, cap, n, **kw)
    if cls is Graph:
        if G.is_directed():
            raise GraphInputError(
                "kind='graph' needs an undirected graph: pass G.as_undirected(mode='each') "
                "(keeps every arc as an edge), or kind='flow' for a directed network")
        w = _weights(G.es[weight]) if weight is not None and weight in attrs else None
        return Graph.from_edges(u, v, w, n, **kw)
    types = G.vs["type"] if "type" in G.vs.attributes() else None
    if types is None or any(t is None for t in types):
        ok, types = G.is_bipartite(return_types=True)
        if not ok:
            raise GraphInputError("graph is not bipartite (no 2-colouring exists)")
    side = np.asarray(types, dtype=bool).astype(np.int64).reshape(-1)
    row, col, nr, nc = _sides(u, v, side, int)
    return BipartiteGraph.from_edges(row, col, nr, nc, **kw)


# --------------------------------------------------------------------------
# files (the parsers of the text formats are in jaxmatch._readers)


_OPTIONS = {"edgelist": ("one_based",), "konect": ("right_offset",), "gml": ("weight",)}


def read(path, kind=None, *, fmt=None, **kw):
    """Read a graph file: Matrix Market, DIMACS max-flow, KONECT, edge list or GML, plain or gzip-compressed.

    Gzip-compressed files (any format) are recognised by content.

    ``fmt`` is one of :data:`FORMATS`; by default it comes from the name
    (``.mtx``, ``.max``/``.dimacs``, ``.gml``, KONECT's ``out.*``; ``.gz``
    stripped first), else from the first line that is not a comment
    (``p max`` -> DIMACS, ``graph``/``Creator`` -> GML), else edge list.
    ``kind`` ("bipartite", "graph", "flow") overrides the format's default.
    Other keywords go to the ``from_edges`` constructor (e.g. ``duplicates=``,
    ``layout=``), except the format options named below.

    * Matrix Market: :func:`scipy.io.mmread`, then :func:`from_scipy`; kind
      "graph" if the header says ``symmetric``, else "bipartite"; a
      ``pattern`` file gives an unweighted graph (unit capacities for flow).
    * DIMACS max-flow (``c``, ``p max N M``, ``n ID s|t``, ``a U V CAP``,
      1-based): returns ``(net, source, sink)`` with 0-based ids. The arc count
      must equal ``M``, with exactly one source and one sink.
    * KONECT (``out.*``): ``%`` lines, then ``u v [weight [time]]``, 1-based.
      The first ``%`` line names the kind: ``bip`` -> bipartite, ``sym`` and
      ``asym`` -> graph (an arc of an ``asym`` file is taken as an undirected
      edge; repeated edges add up); a second ``% m n1 n2`` line gives sizes.
      A first data line of exactly three integers ``m n1 n2`` whose ``m`` equals
      the number of remaining lines is such a size header (the Brunson files),
      and means bipartite. In a bipartite file whose right ids all exceed the
      largest left id, the right ids are shifted down by that largest id
      (KONECT's Marvel file numbers both sides in one range);
      ``right_offset=`` sets the shift (0 disables it). A bipartite file read
      as a graph or network numbers the right side after the left one.
      Weights (third column) are used by graphs, ignored by bipartite graphs;
      a network needs integer capacities there.
    * Edge list (SNAP; the default): ``#``/``%`` comment lines, ``u v [w]``
      per line separated by whitespace or commas, 0-based ids
      (``one_based=True`` for 1-based); kind "graph" by default (weighted when
      a third column is present), "bipartite" (u row, v column) or "flow"
      (third column = integer capacity).
    * GML: ``networkx.read_gml(label="id")`` then the rules of
      :func:`from_networkx`, with edge weights from attribute ``weight="value"``
      (Newman's files; ``weight=None`` for an unweighted graph). The default
      kind is "graph" even for a directed file: each arc is taken as an
      undirected edge and repeated edges add up. A file with repeated edges
      but no ``multigraph 1`` header is read as a multigraph.

    The text formats are parsed with NumPy over the whole buffer (no Python
    loop over lines), O(file size), then built by ``from_edges``.

    Args:
        path: the file name (str, bytes or ``os.PathLike``).
        kind: ``"bipartite"``, ``"graph"``, ``"flow"`` or a container class;
            None (default) for the format's default kind.
        fmt: one of :data:`FORMATS` (``"snap"`` is taken as ``"edgelist"``);
            None (default) to detect it.
        **kw: the format options ``one_based=`` (edge lists),
            ``right_offset=`` (KONECT) and ``weight=`` (GML), and keywords of
            the ``from_edges`` constructor.

    Returns:
        The graph (:class:`~jaxmatch.BipartiteGraph`, :class:`~jaxmatch.Graph`
        or :class:`~jaxmatch.FlowNetwork`); for a DIMACS file the tuple
        ``(net, source, sink)``.

    Raises:
        GraphInputError: naming the file, and the 1-based line where one is
            known: an unreadable file, an unknown ``fmt``, a format option of
            another format, a malformed line, or any error of ``from_edges``.

    Example:
        >>> import os, tempfile
        >>> import jaxmatch
        >>> path = os.path.join(tempfile.mkdtemp(), "tri.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("# triangle\\n0 1\\n1 2\\n2 0\\n")
        >>> g = jaxmatch.read(path)
        >>> int(g.n), int(g.n_edges)
        (3, 3)
    """
    try:
        name = os.fspath(path)
    except TypeError:
        raise GraphInputError(
            f"path must be a str, bytes or os.PathLike file name, got {type(path).__name__}") from None
    name = name.decode() if isinstance(name, bytes) else name
    data = _read_bytes(name)
    fmt = {"snap": "edgelist"}.get(fmt, fmt) or _detect(name, data)
    if fmt not in FORMATS:
        raise GraphInputError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    options = _OPTIONS.get(fmt, ())
    for opt in ("one_based", "right_offset", "weight"):
        if opt in kw and opt not in options:
            raise GraphInputError(f"{name}: option {opt}= does not apply to {fmt} files")
    opts = {k: kw.pop(k) for k in options if k in kw}
    reader = {"mtx": _read_mtx, "dimacs": _read_dimacs, "konect": _read_konect,
              "edgelist": _read_edgelist, "gml": _read_gml}[fmt]
    try:
        return reader(data, name, kind, kw, **opts)
    except GraphInputError as e:
        if str(e).startswith(name):
            raise
        raise GraphInputError(f"{name}: {e}") from e


def _read_gml(data, name, kind, kw, weight="value"):
    nx = _networkx()
    try:
        try:
            G = nx.read_gml(_io.BytesIO(data), label="id")
        except nx.NetworkXError as e:
            if "duplicated" not in str(e):
                raise
            # repeated edges without a 'multigraph 1' header: read as a multigraph
            data = re.sub(rb"\bgraph\s*\[", lambda mt: mt.group(0) + b"\n  multigraph 1", data, count=1)
            G = nx.read_gml(_io.BytesIO(data), label="id")
    except (nx.NetworkXError, ValueError, KeyError, UnicodeDecodeError) as e:
        raise GraphInputError(f"{name}: cannot read GML: {e}") from e
    return _from_networkx(G, _kind(kind, "graph"), weight, "capacity", True, kw)
