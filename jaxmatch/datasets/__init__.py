"""Real graphs bundled with jaxmatch, with their published answers.

Seventeen small public graphs ship inside the package, gzip-compressed, so
tests, examples and benchmarks need nothing outside the repository:

* ``"bipartite"``: KONECT bipartite edge lists with published maximum matching
  sizes (``answer["cardinality"]``);
* ``"flow"``: DIMACS max-flow instances from the WBPR repository with their
  maximum flow values (``answer["flow_value"]``);
* ``"graph"``: community detection graphs (Newman's collection, C. elegans,
  SNAP ego-Facebook, Zachary's karate club) with the best known modularity of
  the unweighted simple graph where one is published (``answer["modularity"]``).

``SOURCES.md`` beside this file gives each file's origin, licence and the
papers that publish the answers. :func:`names` lists the datasets,
:func:`load` reads one (once per process) with its answer, and :func:`path`
gives its file.

>>> from jaxmatch import datasets
>>> datasets.names("flow")
['dimacs_example', 'dimacs_test', 'genrmf_small', 'mesh10', 'mesh30']
>>> d = datasets.load("dimacs_example")
>>> d.kind, int(d.graph.n), int(d.graph.n_arcs), d.source, d.sink, d.answer
('flow', 7, 9, 0, 6, {'flow_value': 6})
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

__all__ = ["Dataset", "names", "load", "path"]

_HERE = Path(__file__).resolve().parent
_KINDS = ("bipartite", "graph", "flow")


class _Entry(NamedTuple):
    file: str          # bundled file name (the original name + ".gz")
    kind: str
    answer: dict
    description: str


# Sizes and answers as in SOURCES.md; tests/test_io.py checks every one of them.
_REGISTRY = {
    # KONECT bipartite: n_rows x n_cols, edges; maximum matching
    "corporate_leadership": _Entry(
        "out.brunson_corporate-leadership_corporate-leadership.gz", "bipartite", {"cardinality": 20},
        "KONECT brunson_corporate-leadership (via rohitdwivedula/network-flow-graphs): 20 x 24, 99 edges"),
    "revolution": _Entry(
        "out.brunson_revolution_revolution.gz", "bipartite", {"cardinality": 5},
        "KONECT brunson_revolution (via rohitdwivedula/network-flow-graphs): 136 x 5, 160 edges"),
    "unicodelang": _Entry(
        "out.unicodelang.gz", "bipartite", {"cardinality": 188},
        "KONECT unicodelang, countries x languages (via Night-Quiet/Community-Mining): 254 x 614, 1255 edges"),
    "marvel": _Entry(
        "out.marvel.gz", "bipartite", {"cardinality": 5058},
        "KONECT marvel, characters x works (via Night-Quiet/Community-Mining): 6486 x 12942, 96662 edges"),
    # community detection graphs: n, undirected simple edges; best known modularity (unweighted)
    "karate": _Entry(
        "karate.gml.gz", "graph", {"modularity": 0.4198},
        "Zachary's karate club (GML): 34 vertices, 78 edges"),
    "dolphins": _Entry(
        "dolphins.gml.gz", "graph", {"modularity": 0.5285},
        "Newman's collection, Lusseau's dolphins (GML): 62 vertices, 159 edges"),
    "lesmis": _Entry(
        "lesmis.gml.gz", "graph", {"modularity": 0.5600},
        "Newman's collection, Les Miserables coappearances (GML, weighted): 77 vertices, 254 edges"),
    "netscience": _Entry(
        "netscience.gml.gz", "graph", {"modularity": 0.9599},
        "Newman's collection, network science coauthorships (GML, weighted): 1589 vertices, 2742 edges"),
    "celegans": _Entry(
        "celegans.g.gz", "graph", {"modularity": 0.406},
        "C. elegans neural network (0-based edge list): 297 vertices, 2148 edges"),
    "celegansneural": _Entry(
        "celegansneural.gml.gz", "graph", {},
        "Newman's collection, C. elegans neural network (GML, directed weighted, 2359 arcs): "
        "297 vertices, 2148 undirected edges"),
    "adamic_blogs": _Entry(
        "AdamicBlog.gml.gz", "graph", {},
        "Adamic's political blogs (GML, directed multigraph, 19090 arcs): 1490 vertices, 16718 undirected edges"),
    "facebook": _Entry(
        "Facebook_4039.csv.gz", "graph", {},
        "SNAP ego-Facebook (0-based CSV edge list): 4039 vertices, 88234 edges"),
    # DIMACS max flow (NTUDDSNLab/WBPR): n, arcs; maximum flow
    "dimacs_example": _Entry(
        "example.max.gz", "flow", {"flow_value": 6},
        "DIMACS example.max, hand example (NTUDDSNLab/WBPR): 7 vertices, 9 arcs"),
    "dimacs_test": _Entry(
        "test_DIMACS.txt.gz", "flow", {"flow_value": 25},
        "DIMACS test_DIMACS.txt, hand example (NTUDDSNLab/WBPR): 4 vertices, 5 arcs"),
    "genrmf_small": _Entry(
        "network.dimacs.gz", "flow", {"flow_value": 228},
        "DIMACS network.dimacs, genrmf a=4 b=3 c1=10 c2=20 (NTUDDSNLab/WBPR): 48 vertices, 176 arcs"),
    "mesh10": _Entry(
        "m10.max.gz", "flow", {"flow_value": 9_860_177},
        "DIMACS m10.max, 10x10 mesh (NTUDDSNLab/WBPR): 102 vertices, 290 arcs"),
    "mesh30": _Entry(
        "m30.max.gz", "flow", {"flow_value": 28_258_807},
        "DIMACS m30.max, 30x30 mesh (NTUDDSNLab/WBPR): 902 vertices, 2670 arcs"),
}


class Dataset(NamedTuple):
    """A bundled graph with its published answer, as :func:`load` returns it.

    Attributes:
        name: the dataset's name, one of :func:`names`.
        kind: ``"bipartite"``, ``"graph"`` or ``"flow"``.
        graph: the container :func:`jaxmatch.read` gives for the file
            (:class:`~jaxmatch.BipartiteGraph`, :class:`~jaxmatch.Graph` or
            :class:`~jaxmatch.FlowNetwork`).
        source: for ``kind == "flow"``, the source vertex of the DIMACS file
            (0-based; ``(graph, source, sink)`` is the ``(net, s, t)`` that
            ``read`` returns); else None.
        sink: the sink vertex for ``kind == "flow"``, else None.
        answer: the published answers: ``{"cardinality": k}`` (maximum
            matching), ``{"flow_value": v}`` (maximum flow),
            ``{"modularity": q}`` (best known modularity of the unweighted
            simple graph, see SOURCES.md; exact for karate, dolphins and
            lesmis, from heuristics for netscience and celegans), or ``{}``.
        description: the origin and size of the graph, in words.

    Example:
        >>> from jaxmatch import datasets
        >>> d = datasets.load("dimacs_test")
        >>> d.kind, d.source, d.sink, d.answer
        ('flow', 0, 3, {'flow_value': 25})
    """
    name: str
    kind: str
    graph: object
    source: int | None
    sink: int | None
    answer: dict
    description: str


def _entry(name: str) -> _Entry:
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(names())}") from None


def names(kind: str | None = None) -> list[str]:
    """List the names of the bundled datasets, sorted.

    Args:
        kind: ``None`` (default) for all, else ``"bipartite"``, ``"graph"``
            or ``"flow"``.

    Returns:
        The sorted list of names that :func:`load` and :func:`path` accept.

    Raises:
        ValueError: for another ``kind``.

    Example:
        >>> from jaxmatch import datasets
        >>> datasets.names("bipartite")
        ['corporate_leadership', 'marvel', 'revolution', 'unicodelang']
    """
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be None or one of {_KINDS}, got {kind!r}")
    return sorted(n for n, e in _REGISTRY.items() if kind is None or e.kind == kind)


def path(name: str) -> Path:
    """Give the path of the bundled (gzip-compressed) file of a dataset.

    The file keeps its original name plus ``.gz``, so :func:`jaxmatch.read`
    (and the ``jaxmatch`` command line) detect its format as for the original.

    Args:
        name: one of :func:`names`.

    Returns:
        A :class:`pathlib.Path` inside the installed package.

    Raises:
        ValueError: for an unknown name (the message lists the valid names).

    Example:
        >>> from jaxmatch import datasets
        >>> datasets.path("karate").name
        'karate.gml.gz'
    """
    return _HERE / _entry(name).file


@functools.lru_cache(maxsize=None)
def _read(name: str):
    from jaxmatch.io import read  # lazy: keeps `import jaxmatch.datasets` light

    return read(path(name), kind=_entry(name).kind)


def load(name: str) -> Dataset:
    """Read a bundled dataset, with its published answer.

    The file is read once per process with ``jaxmatch.read(path(name),
    kind=...)`` (graphs are immutable, so later calls share it).

    Args:
        name: one of :func:`names`, e.g. ``"marvel"``, ``"karate"``, ``"mesh10"``.

    Returns:
        A :class:`Dataset` ``(name, kind, graph, source, sink, answer,
        description)``.

    Raises:
        ValueError: for an unknown name (the message lists the valid names).

    Example:
        >>> from jaxmatch import datasets
        >>> d = datasets.load("karate")
        >>> d.kind, int(d.graph.n), int(d.graph.n_edges), d.answer
        ('graph', 34, 78, {'modularity': 0.4198})
        >>> datasets.load("revolution").answer
        {'cardinality': 5}
    """
    e = _entry(name)
    out = _read(name)
    net, s, t = out if e.kind == "flow" else (out, None, None)
    return Dataset(name, e.kind, net, s, t, dict(e.answer), e.description)
