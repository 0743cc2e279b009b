"""Solving many graphs of mixed sizes: bucket by capacity, one jitted ``vmap`` per bucket.

>>> import jaxmatch
>>> gs = [jaxmatch.BipartiteGraph.from_edges([0, 1], [1, 0]), jaxmatch.BipartiteGraph.from_edges([0], [0]),
...       jaxmatch.BipartiteGraph.from_edges(range(5), range(5))]
>>> [int(r) for r in solve_many(lambda g: jaxmatch.maximum_matching(g).cardinality, gs)]
[2, 1, 5]
"""
from __future__ import annotations

import jax
import numpy as np

from jaxmatch.graph import GRAPH_TYPES, GraphInputError, stack


def _bucket(g) -> tuple:
    """Graphs that stack without padding: one type, the same capacities (and flow layout)."""
    return (type(g).__name__, tuple(sorted(g.capacities().items())), getattr(g, "layout", None))


def solve_many(fn, graphs) -> list:
    """``[fn(g) for g in graphs]``, computed bucket by bucket.

    ``fn`` takes one graph and returns a pytree of arrays (it must work under
    ``jax.jit`` and ``jax.vmap``, as every jaxmatch solver does). Graphs of
    one type and the same capacities (each graph's own, powers of two by
    default) form a bucket, stacked with :func:`jaxmatch.stack` and solved by
    one ``jax.jit(jax.vmap(fn))`` call, so a list of many small graphs of
    mixed sizes costs one compilation per distinct capacity, not one per
    graph. Returns the results in the order of ``graphs``, as NumPy pytrees;
    arrays sized by the graph keep the bucket's capacity (padding as under
    ``vmap``: see each solver's result), where an eager call trims them.
    """
    graphs = list(graphs)
    if not graphs:
        return []
    if any(type(g) not in GRAPH_TYPES for g in graphs):
        bad = next(type(g).__name__ for g in graphs if type(g) not in GRAPH_TYPES)
        raise GraphInputError(f"solve_many takes jaxmatch graphs, got a {bad}")
    buckets: dict[tuple, list[int]] = {}
    for i, g in enumerate(graphs):
        buckets.setdefault(_bucket(g), []).append(i)
    solve = jax.jit(jax.vmap(fn))
    out: list = [None] * len(graphs)
    for members in buckets.values():
        leaves, tree = jax.tree_util.tree_flatten(solve(stack([graphs[i] for i in members])))
        leaves = [np.asarray(x) for x in leaves]   # one transfer per leaf, then host slices
        for j, i in enumerate(members):
            out[i] = jax.tree_util.tree_unflatten(tree, [x[j] for x in leaves])
    return out
