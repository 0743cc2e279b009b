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
"""
from __future__ import annotations

import gzip
import io as _io
import os
import re

import numpy as np
import scipy.sparse as sp

# from_scipy builds the containers, so it lives beside them; it is re-exported here
from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError, _kind, from_scipy

__all__ = ["from_scipy", "to_scipy", "from_networkx", "from_igraph", "read", "FORMATS"]

FORMATS = ("mtx", "dimacs", "konect", "edgelist", "gml")


# --------------------------------------------------------------------------
# scipy


def _single(g, size):
    if np.ndim(size):
        raise GraphInputError("to_scipy takes one graph, not a batch: split it with jaxmatch.graph.unstack")


def to_scipy(g):
    """Sparse matrix of a graph, as a ``scipy.sparse.csr_array``.

    * :class:`BipartiteGraph`: its ``(n_rows, n_cols)`` biadjacency matrix, ``int8`` ones;
    * :class:`Graph`: the symmetric ``(n, n)`` adjacency of its stored weights
      (``float64``; ones for an unweighted simple graph, loops on the
      diagonal). ``from_scipy(to_scipy(g), "graph")`` gives ``g`` back; for an
      unweighted ``g`` pass ``weighted=False``;
    * :class:`FlowNetwork`: the ``(n, n)`` capacity matrix. Parallel arcs are
      summed into one entry, so the matrix loses their identity (and the arc
      order): the round trip gives ``g`` back only when ``g`` has no parallel
      arcs and its arcs are in row-major order.

    >>> import scipy.sparse as sp
    >>> to_scipy(BipartiteGraph.from_edges([0, 1], [1, 1])).toarray()
    array([[0, 1],
           [0, 1]], dtype=int8)
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
    """jaxmatch graph of a networkx graph; vertex ``i`` is node ``list(G.nodes)[i]``.

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

    >>> import networkx as nx
    >>> g = from_networkx(nx.path_graph(4))
    >>> int(g.n), int(g.n_edges), g.weighted
    (4, 3, False)
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
    """jaxmatch graph of an ``igraph.Graph``; vertex ids are kept.

    The rules of :func:`from_networkx`, in igraph's terms: an undirected graph
    gives a :class:`Graph` (edge attribute ``weight``; parallel edges add); a
    directed one with ``kind="flow"`` a :class:`FlowNetwork` with capacities
    from edge attribute ``capacity``; ``kind="bipartite"`` takes the sides
    from vertex attribute ``type`` (igraph's convention: False = row, True =
    column) when every vertex has it, else from ``G.is_bipartite(return_types=True)``.

    >>> import igraph as ig
    >>> g = from_igraph(ig.Graph([(0, 1), (1, 2)]), "bipartite")
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
# files


_SPACE = np.zeros(256, bool)
_SPACE[list(b" \t\n\r\x0b\x0c")] = True  # what bytes.split() splits on


class _Text:
    """A text file as lines and whitespace tokens, found with numpy (no loop over lines)."""

    def __init__(self, data: bytes, name: str, commas: bool):
        buf = np.frombuffer(data, np.uint8)
        if commas and b"," in data:
            buf = np.where(buf == ord(","), np.uint8(32), buf)
        self.buf, self.name = buf, name
        nl = np.flatnonzero(buf == 10)
        self.starts = np.concatenate([[0], nl + 1])
        self.ends = np.concatenate([nl, [buf.size]])
        space = _SPACE[buf]
        tok = np.flatnonzero(~space & np.concatenate([[True], space[:-1]]))
        line = np.searchsorted(self.starts, tok, side="right") - 1
        self.ntok = np.bincount(line, minlength=self.starts.size)
        lead = np.concatenate([[True], line[1:] != line[:-1]])[:line.size]  # first token of its line
        self.first = np.zeros(self.starts.size, np.uint8)  # first byte of a line's first token, 0 if blank
        self.first[line[lead]] = buf[tok[lead]]

    def line(self, i) -> str:
        return bytes(self.buf[self.starts[i]:self.ends[i]]).decode("utf-8", "replace").strip()

    def fail(self, i, msg):
        raise GraphInputError(f"{self.name}:{int(i) + 1}: {msg}: {self.line(i)!r}")

    def take(self, lines, k):
        """Tokens of ``lines`` (each with exactly k tokens) as a bytes array of shape (len(lines), k)."""
        mask = np.zeros(self.starts.size, bool)
        mask[lines] = True
        text = self.buf
        if not mask.all():
            text = text[np.repeat(mask, np.diff(np.concatenate([self.starts, [text.size]])))]
        toks = text.tobytes().split()
        return (np.array(toks) if toks else np.zeros(0, "S1")).reshape(-1, k)

    def numbers(self, tok, lines, dtype, msg):
        try:
            return tok.astype(dtype)
        except (ValueError, OverflowError):
            for j, row in enumerate(tok):  # error path: find the line
                try:
                    row.astype(dtype)
                except (ValueError, OverflowError):
                    self.fail(lines[j], msg)
            raise

    def columns(self, lines, allowed, what):
        """Common token count of ``lines``, which must be in ``allowed``."""
        if not lines.size:
            return allowed[0]
        k = int(self.ntok[lines[0]])
        if k not in allowed:
            self.fail(lines[0], f"{what} needs {' or '.join(map(str, allowed))} columns, found {k}")
        bad = np.flatnonzero(self.ntok[lines] != k)
        if bad.size:
            self.fail(lines[bad[0]], f"expected {k} columns like line {int(lines[0]) + 1}, "
                                     f"found {int(self.ntok[lines[bad[0]]])}")
        return k


def _read_bytes(name: str) -> bytes:
    try:
        with open(name, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError) as e:
        raise GraphInputError(f"{name}: cannot read: {e}") from e
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data  # UTF-8 byte order mark
    return data[:-1] if data.endswith(b"\x1a") else data  # DOS end-of-file mark (Ctrl-Z)


def _detect(name: str, data: bytes) -> str:
    base = os.path.basename(name).lower()
    base = base[:-3] if base.endswith(".gz") else base
    ext = os.path.splitext(base)[1]
    if ext == ".mtx" or data.startswith(b"%%MatrixMarket"):
        return "mtx"
    if ext in (".max", ".dimacs"):
        return "dimacs"
    if ext == ".gml":
        return "gml"
    if base.startswith("out."):
        return "konect"
    for line in data[:1 << 16].splitlines():
        words = line.split()
        if not words or words[0][:1] in (b"#", b"%") or words[0] == b"c":
            continue
        if words[:2] == [b"p", b"max"]:
            return "dimacs"
        if words[0].startswith((b"graph", b"Creator", b"Version")):
            return "gml"
        break
    return "edgelist"


_OPTIONS = {"edgelist": ("one_based",), "konect": ("right_offset",), "gml": ("weight",)}


def read(path, kind=None, *, fmt=None, **kw):
    """Read a graph file; gzip-compressed files (any format) are recognised by content.

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

    Problems raise :class:`GraphInputError` naming the file, and the 1-based
    line where one is known.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "tri.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("# triangle\\n0 1\\n1 2\\n2 0\\n")
    >>> g = read(path)
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


def _read_mtx(data, name, kind, kw):
    import scipy.io
    try:
        field, symmetry = scipy.io.mminfo(_io.BytesIO(data))[4:6]
        A = scipy.io.mmread(_io.BytesIO(data))
    except Exception as e:  # scipy raises several types for bad files
        raise GraphInputError(f"{name}: not a readable Matrix Market file: {e}") from e
    A = sp.csr_array(A) if not sp.issparse(A) else A
    cls = _kind(kind, "graph" if symmetry == "symmetric" else "bipartite")
    if field == "pattern" and cls is Graph:
        kw.setdefault("weighted", False)
    if field == "pattern" and cls is FlowNetwork:
        A = A.astype(np.int64)
    return from_scipy(A, cls, **kw)


def _read_dimacs(data, name, kind, kw):
    if _kind(kind, "flow") is not FlowNetwork:
        raise GraphInputError(f"{name}: a DIMACS max-flow file holds a flow network; kind must be 'flow'")
    t = _Text(data, name, commas=False)
    first = t.first
    bad = np.flatnonzero((t.ntok > 0) & ~np.isin(first, list(b"cpna")))
    if bad.size:
        t.fail(bad[0], "unknown line type (expected c, p, n or a)")
    plines = np.flatnonzero(first == ord("p"))
    if plines.size != 1:
        if not plines.size:
            raise GraphInputError(f"{name}: no problem line 'p max NODES ARCS'")
        t.fail(plines[1], "second problem line")
    words = t.line(plines[0]).split()
    if len(words) != 4 or words[:2] != ["p", "max"] or not all(w.isdigit() for w in words[2:]):
        t.fail(plines[0], "problem line must be 'p max NODES ARCS'")
    n, m = int(words[2]), int(words[3])
    ends = {"s": [], "t": []}
    for i in np.flatnonzero(first == ord("n")):  # node lines: a few
        words = t.line(i).split()
        if len(words) != 3 or words[0] != "n" or words[2] not in ends or not words[1].isdigit():
            t.fail(i, "node line must be 'n ID s' or 'n ID t'")
        if not 1 <= int(words[1]) <= n:
            t.fail(i, f"node id out of range 1..{n}")
        ends[words[2]].append((int(words[1]) - 1, i))
    for key, what in (("s", "source"), ("t", "sink")):
        if len(ends[key]) != 1:
            if ends[key]:
                t.fail(ends[key][1][1], f"second {what} line")
            raise GraphInputError(f"{name}: no {what} line 'n ID {key}'")
    (source, _), (sink, sink_line) = ends["s"][0], ends["t"][0]
    if source == sink:
        t.fail(sink_line, "source and sink are the same node")
    arcs = np.flatnonzero(first == ord("a"))
    wrong = arcs[t.ntok[arcs] != 4]
    if wrong.size:
        t.fail(wrong[0], "arc line needs 3 integers")
    tok = t.take(arcs, 4)
    bad = np.flatnonzero(tok[:, 0] != b"a")
    if bad.size:
        t.fail(arcs[bad[0]], "unknown line type (expected c, p, n or a)")
    tail, head, cap = t.numbers(tok[:, 1:], arcs, np.int64, "arc line needs 3 integers").T
    bad = np.flatnonzero((tail < 1) | (tail > n) | (head < 1) | (head > n))
    if bad.size:
        t.fail(arcs[bad[0]], f"arc end out of range 1..{n}")
    bad = np.flatnonzero(cap < 0)
    if bad.size:
        t.fail(arcs[bad[0]], "negative capacity")
    if arcs.size != m:
        t.fail(plines[0], f"problem line says {m} arcs, the file has {arcs.size}")
    net = FlowNetwork.from_edges(tail - 1, head - 1, cap, n, **kw)
    return net, source, sink


def _pairs(t, cls, u, v, wtok, lines, kw, *, n=None, n_rows=None, n_cols=None):
    """Graph of parsed edge lines u v [w]."""
    if cls is BipartiteGraph:
        return BipartiteGraph.from_edges(u, v, kw.pop("n_rows", n_rows), kw.pop("n_cols", n_cols), **kw)
    n = kw.pop("n", n)
    if cls is Graph:
        w = None if wtok is None else t.numbers(wtok, lines, np.float64, "weight must be a number")
        if w is not None:
            bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
            if bad.size:
                t.fail(lines[bad[0]], "weight must be finite and >= 0")
        return Graph.from_edges(u, v, w, n, **kw)
    if wtok is None:
        raise GraphInputError(f"{t.name}: kind='flow' needs a third column of integer capacities")
    cap = t.numbers(wtok, lines, np.int64, "capacity must be an integer")
    bad = np.flatnonzero(cap < 0)
    if bad.size:
        t.fail(lines[bad[0]], "negative capacity")
    return FlowNetwork.from_edges(u, v, cap, n, **kw)


def _ids(t, tok, lines, base):
    ids = t.numbers(tok, lines, np.int64, "vertex ids must be integers") - base
    bad = np.flatnonzero((ids < 0).any(axis=1))
    if bad.size:
        t.fail(lines[bad[0]], f"vertex id below {base}")
    return ids[:, 0], ids[:, 1]


def _read_edgelist(data, name, kind, kw, one_based=False):
    cls = _kind(kind, "graph")
    t = _Text(data, name, commas=True)
    lines = np.flatnonzero((t.ntok > 0) & ~np.isin(t.first, list(b"#%")))
    k = t.columns(lines, (2, 3), "an edge list line (u v [w])")
    tok = t.take(lines, k)
    u, v = _ids(t, tok[:, :2], lines, int(bool(one_based)))
    return _pairs(t, cls, u, v, tok[:, 2] if k == 3 else None, lines, kw)


def _int_words(words):
    return [int(w) for w in words] if words and all(w.isdigit() for w in words) else None


def _read_konect(data, name, kind, kw, right_offset=None):
    t = _Text(data, name, commas=True)
    comments = np.flatnonzero(t.first == ord("%"))
    lines = np.flatnonzero((t.ntok > 0) & (t.first != ord("%")))
    flavor, sizes = None, None
    if comments.size:
        words = t.line(comments[0]).lstrip("%").split()
        flavor = words[0] if words and words[0] in ("bip", "sym", "asym") else None
    if comments.size > 1:
        sizes = _int_words(t.line(comments[1]).lstrip("%").split())
        sizes = sizes if sizes and len(sizes) == 3 else None
    if lines.size and t.ntok[lines[0]] == 3:
        head = _int_words(t.line(lines[0]).split())
        if head and head[0] == lines.size - 1:  # Brunson-style header: edges, left, right
            sizes, lines, flavor = head, lines[1:], flavor or "bip"
    k = t.columns(lines, (2, 3, 4), "a KONECT line (u v [weight [time]])")
    tok = t.take(lines, k)
    u, v = _ids(t, tok[:, :2], lines, 1)
    wtok = tok[:, 2] if k >= 3 else None
    if flavor != "bip":
        return _pairs(t, _kind(kind, "graph"), u, v, wtok, lines, kw, n=sizes[1] if sizes else None)
    if right_offset is None:
        right_offset = int(u.max()) + 1 if u.size and v.min() > u.max() else 0
    v = v - int(right_offset)
    bad = np.flatnonzero(v < 0)
    if bad.size:
        t.fail(lines[bad[0]], f"right id not above right_offset = {right_offset}")
    nr = sizes[1] if sizes else int(u.max()) + 1 if u.size else 0
    nc = sizes[2] if sizes else int(v.max()) + 1 if v.size else 0
    cls = _kind(kind, "bipartite")
    if cls is BipartiteGraph:
        return _pairs(t, cls, u, v, None, lines, kw, n_rows=nr, n_cols=nc)
    return _pairs(t, cls, u, v + nr, wtok, lines, kw, n=nr + nc)


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
