"""Solving many graphs of mixed sizes: bucket by capacity, one jitted ``vmap`` per bucket.

:func:`solve_many` (public as :func:`jaxmatch.solve_many`) groups a list of
graphs by type and capacities, stacks each group with
:func:`jaxmatch.stack`, and solves it with one ``jax.jit(jax.vmap(fn))``
call, split over the local devices with ``jax.shard_map`` when there are
several.
"""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxmatch._containers import GRAPH_TYPES
from jaxmatch.graph import GraphInputError, stack


def _bucket(g) -> tuple:
    """Graphs that stack without padding: one type, the same capacities (and flow layout)."""
    return (type(g).__name__, tuple(sorted(g.capacities().items())), getattr(g, "layout", None))


def solve_many(fn, graphs, *, devices=None) -> list:
    """Compute ``[fn(g) for g in graphs]`` bucket by bucket, with one compiled ``vmap`` per bucket.

    Graphs of one type and the same capacities (each graph's own, powers of
    two by default) form a bucket, stacked with :func:`~jaxmatch.stack` and
    solved by one ``jax.jit(jax.vmap(fn))`` call, so a list of many small
    graphs of mixed sizes costs one compilation per distinct capacity, not
    one per graph, and one device launch per bucket. With several
    ``devices`` each bucket is split along its batch axis over them
    (``jax.shard_map``: every device runs its share on its own, no
    communication), padded to a multiple of the device count with copies of
    its last graph whose results are dropped.

    Args:
        fn: a function of one graph returning a pytree of arrays; it must
            work under ``jax.jit`` and ``jax.vmap``, as every jaxmatch solver
            does (under ``jit`` a solver does not raise on its status: read
            the ``status`` field of the results).
        graphs: an iterable of single jaxmatch graphs, of any types and sizes.
        devices: the devices to split each bucket over (default:
            ``jax.local_devices()``).

    Returns:
        A list of the results in the order of ``graphs``, as NumPy pytrees;
        arrays sized by the graph keep the bucket's capacity (padding as
        under ``vmap``: see each solver's result), where an eager call trims
        them. An empty ``graphs`` gives ``[]``.

    Raises:
        GraphInputError: when an element of ``graphs`` is not a jaxmatch
            graph, or ``devices`` is empty.

    Example:
        >>> import jaxmatch
        >>> gs = [jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1]),
        ...       jaxmatch.BipartiteGraph.from_edges([0, 1], [0, 0], n_cols=2, edge_capacity=4)]
        >>> [int(r) for r in jaxmatch.solve_many(lambda g: jaxmatch.maximum_matching(g).cardinality, gs)]
        [2, 1]
    """
    graphs = list(graphs)
    if not graphs:
        return []
    if any(type(g) not in GRAPH_TYPES for g in graphs):
        bad = next(type(g).__name__ for g in graphs if type(g) not in GRAPH_TYPES)
        raise GraphInputError(f"solve_many takes jaxmatch graphs, got a {bad}")
    devices = list(jax.local_devices() if devices is None else devices)
    if not devices:
        raise GraphInputError("solve_many needs at least one device")
    buckets: dict[tuple, list[int]] = {}
    for i, g in enumerate(graphs):
        buckets.setdefault(_bucket(g), []).append(i)
    if len(devices) == 1:
        solve, place = jax.jit(jax.vmap(fn)), lambda b: jax.device_put(b, devices[0])  # noqa: E731
    else:   # the batch axis split over the devices, each share solved on its own device
        mesh = Mesh(np.array(devices), ("graphs",))
        # check_vma=False: the solvers start their loops from constants that become per-device values
        solve = jax.jit(jax.shard_map(jax.vmap(fn), mesh=mesh, in_specs=P("graphs"), out_specs=P("graphs"),
                                      check_vma=False))
        place = lambda b: jax.device_put(b, NamedSharding(mesh, P("graphs")))  # noqa: E731
    out: list = [None] * len(graphs)
    for members in buckets.values():
        share = [graphs[i] for i in members]
        share += share[-1:] * (-len(share) % len(devices))     # a multiple of the device count
        leaves, tree = jax.tree_util.tree_flatten(solve(place(stack(share))))
        leaves = [np.asarray(x) for x in leaves]   # one transfer per leaf, then host slices
        for j, i in enumerate(members):
            out[i] = jax.tree_util.tree_unflatten(tree, [x[j] for x in leaves])
    return out
