"""Parsers of the text graph formats behind :func:`jaxmatch.read`: Matrix Market, DIMACS, KONECT, edge lists.

Each ``_read_<format>(data, name, kind, kw, **options)`` takes the file's
bytes (already gunzipped by ``_read_bytes``) and ends in a ``from_edges``
constructor (or :func:`~jaxmatch.from_scipy` for Matrix Market), passing the
caller's keywords ``kw`` through. ``_detect`` picks the format from the name
or the first data line. The text is never split line by line in Python:
``_Text`` finds line starts and whitespace tokens with NumPy over the whole
buffer, converts the columns of all data lines at once, and only on an error
goes back to name the first bad line (1-based) with the file name. GML goes
through networkx and lives beside the networkx adapter in :mod:`jaxmatch.io`.
"""
from __future__ import annotations

import gzip
import inspect
import io as _io
import os

import numpy as np
import scipy.sparse as sp

from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError, _kind, from_scipy


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


def _read_mtx(data, name, kind, kw):
    import scipy.io
    try:
        field, symmetry = scipy.io.mminfo(_io.BytesIO(data))[4:6]
        # scipy >= 1.15 warns that mmread's default return type changes; ask for a sparse array where it can
        spmatrix = {"spmatrix": False} if "spmatrix" in inspect.signature(scipy.io.mmread).parameters else {}
        A = scipy.io.mmread(_io.BytesIO(data), **spmatrix)
    except Exception as e:  # scipy raises several types for bad files
        raise GraphInputError(f"{name}: not a readable Matrix Market file: {e}") from e
    A = sp.csr_array(A) if not sp.issparse(A) else A
    cls = _kind(kind, "graph" if symmetry == "symmetric" else "bipartite")
    if field == "pattern" and cls is Graph:
        kw.setdefault("weighted", False)
    if field == "pattern" and cls is FlowNetwork:
        A = A.astype(np.int64)
    if field == "pattern" and cls is BipartiteGraph and kw.get("weighted"):
        raise GraphInputError(f"{name}: a pattern file has no values to use as weights")
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
