"""Solving many graphs: one jitted ``vmap`` per batch, split over the local devices.

:func:`solve_batch` (public as :func:`jaxmatch.solve_batch`) solves a stacked
batch with one ``jax.jit(jax.vmap(fn))`` call, split along the batch axis over
the local devices with ``jax.shard_map`` when there are several (data
parallelism: no communication). :func:`solve_many` (public as
:func:`jaxmatch.solve_many`) takes a list of graphs of mixed sizes, groups it
by type and capacities, stacks each group with :func:`jaxmatch.stack` and
solves it with :func:`solve_batch`.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxmatch._containers import GRAPH_TYPES, _size_leaf
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
    devices = _devices(devices)
    buckets: dict[tuple, list[int]] = {}
    for i, g in enumerate(graphs):
        buckets.setdefault(_bucket(g), []).append(i)
    out: list = [None] * len(graphs)
    for members in buckets.values():
        leaves, tree = jax.tree_util.tree_flatten(solve_batch(fn, stack([graphs[i] for i in members]),
                                                              devices=devices))
        for j, i in enumerate(members):
            out[i] = jax.tree_util.tree_unflatten(tree, [x[j] for x in leaves])
    return out


def _devices(devices) -> tuple:
    devices = tuple(jax.local_devices() if devices is None else devices)
    if not devices:
        raise GraphInputError("solve_many and solve_batch need at least one device")
    return devices


@functools.lru_cache(maxsize=64)
def _solver(fn, devices: tuple):
    """The jitted ``vmap(fn)`` over a batch split along its axis over ``devices`` (cached, so a
    second call with the same ``fn`` reuses the compiled program), and how to place a batch."""
    if len(devices) == 1:
        return jax.jit(jax.vmap(fn)), lambda b: jax.device_put(b, devices[0])
    mesh = Mesh(np.array(devices), ("graphs",))
    # check_vma=False: the solvers start their loops from constants that become per-device values
    solve = jax.jit(jax.shard_map(jax.vmap(fn), mesh=mesh, in_specs=P("graphs"), out_specs=P("graphs"),
                                  check_vma=False))
    return solve, lambda b: jax.device_put(b, NamedSharding(mesh, P("graphs")))


def solve_batch(fn, batch, *, devices=None):
    """``jax.vmap(fn)(batch)`` for a stacked batch, split along its batch axis over ``devices``.

    Data parallelism for batches of small graphs: every device solves its
    share of the graphs on its own (``jax.shard_map`` over a one-axis mesh
    named ``"graphs"``; no communication), the batch padded to a multiple of
    the device count with copies of its last graph, whose results are
    dropped. The compiled program is cached per ``fn`` and device tuple.

    Args:
        fn: a function of one graph returning a pytree of arrays, as for
            :func:`solve_many`.
        batch: a batch of one graph type with a leading axis of B graphs,
            from :func:`~jaxmatch.stack` or a ``from_edges(graph_index=...)``
            constructor.
        devices: the devices to split the batch over (default:
            ``jax.local_devices()``).

    Returns:
        ``fn``'s results with a leading axis of B, as NumPy arrays.

    Raises:
        GraphInputError: when ``batch`` is not a batch of jaxmatch graphs, or
            ``devices`` is empty.

    Example:
        >>> import jaxmatch
        >>> batch = jaxmatch.stack([jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1]),
        ...                         jaxmatch.BipartiteGraph.from_edges([0, 1], [0, 0], n_cols=2)])
        >>> jaxmatch.solve_batch(lambda g: jaxmatch.maximum_matching(g).cardinality, batch).tolist()
        [2, 1]
    """
    if type(batch) not in GRAPH_TYPES or np.ndim(_size_leaf(batch)) != 1:
        raise GraphInputError("solve_batch takes a batch of jaxmatch graphs (from stack or graph_index=)")
    devices = _devices(devices)
    count = int(np.shape(_size_leaf(batch))[0])
    extra = -count % len(devices)
    if extra:   # a multiple of the device count: copies of the last graph
        batch = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)]), batch)
    solve, place = _solver(fn, devices)
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[:count], solve(place(batch)))
