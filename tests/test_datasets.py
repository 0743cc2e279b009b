"""The bundled datasets API (jaxmatch.datasets): names, kinds, paths, loading, errors.

Sizes and published answers of every dataset are checked in tests/test_io.py.
"""
import gzip
from pathlib import Path

import pytest

import jaxmatch
from jaxmatch import BipartiteGraph, FlowNetwork, Graph, datasets

EXPECTED = {
    "bipartite": ["corporate_leadership", "marvel", "revolution", "unicodelang"],
    "flow": ["dimacs_example", "dimacs_test", "genrmf_small", "mesh10", "mesh30"],
    "graph": ["adamic_blogs", "celegans", "celegansneural", "dolphins", "facebook", "karate", "lesmis",
              "netscience"],
}
CLASSES = {"bipartite": BipartiteGraph, "graph": Graph, "flow": FlowNetwork}


def test_exported():
    assert jaxmatch.datasets is datasets and "datasets" in jaxmatch.__all__


def test_names_sorted_and_filtered_by_kind():
    everything = datasets.names()
    assert everything == sorted(everything) == sorted(sum(EXPECTED.values(), []))
    for kind, expected in EXPECTED.items():
        assert datasets.names(kind) == expected
    assert datasets.names(None) == everything


def test_bad_kind():
    with pytest.raises(ValueError, match="kind must be"):
        datasets.names("digraph")


@pytest.mark.parametrize("call", [datasets.load, datasets.path])
def test_unknown_name_lists_valid_names(call):
    with pytest.raises(ValueError, match=r"unknown dataset 'karate\.gml'.*corporate_leadership.*mesh30"):
        call("karate.gml")
    with pytest.raises(ValueError, match="unknown dataset"):
        call(None)


@pytest.mark.parametrize("name", datasets.names())
def test_path_is_a_bundled_gzip_file(name):
    p = datasets.path(name)
    assert isinstance(p, Path) and p.is_file() and p.suffix == ".gz"
    assert p.parent == Path(datasets.__file__).resolve().parent  # inside the package
    assert p.read_bytes()[:2] == b"\x1f\x8b" and gzip.decompress(p.read_bytes())


@pytest.mark.parametrize("name", datasets.names())
def test_every_dataset_loads(name):
    d = datasets.load(name)
    assert isinstance(d, datasets.Dataset)
    assert d._fields == ("name", "kind", "graph", "source", "sink", "answer", "description")
    assert d.name == name and name in datasets.names(d.kind)
    assert isinstance(d.graph, CLASSES[d.kind])
    if d.kind == "flow":
        net, s, t = jaxmatch.read(datasets.path(name), kind="flow")
        assert (d.source, d.sink) == (s, t) and isinstance(s, int) and isinstance(t, int)
        assert 0 <= s < int(d.graph.n) and 0 <= t < int(d.graph.n) and s != t
        assert set(d.answer) == {"flow_value"}
    else:
        assert d.source is None and d.sink is None
        assert set(d.answer) <= ({"cardinality"} if d.kind == "bipartite" else {"modularity"})
    if d.kind == "bipartite":
        assert set(d.answer) == {"cardinality"}
    assert isinstance(d.description, str) and d.description and "\n" not in d.description


def test_answer_is_a_copy():
    d = datasets.load("karate")
    d.answer["modularity"] = 0.0
    assert datasets.load("karate").answer == {"modularity": 0.4198}


def test_sources_file_ships_beside_the_data():
    text = (Path(datasets.__file__).parent / "SOURCES.md").read_text()
    for name in datasets.names():
        assert f"| {name} |" in text and datasets.path(name).name in text
