"""The scripts in examples/ run and check their own answers."""
import importlib.util
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coarsen_batch():
    """Suitor coarsening jitted over a batch: every graph's cluster count and the weight left between
    clusters equal the graph coarsened on its own (the script asserts it for each graph here), and a
    matching merges at least one pair somewhere."""
    sizes, clusters, between = _load("coarsen_batch").main(["--graphs", "24", "--check", "24", "--seed", "3"])
    assert clusters.shape == (24,) and np.all(between >= 0)
    assert np.all(2 * clusters >= sizes) and np.all(clusters < sizes)   # pairs merged, never more than halved
