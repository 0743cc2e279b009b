"""The results of :func:`jaxmatch.louvain` and :func:`jaxmatch.leiden` (their public home:
:mod:`jaxmatch.community`)."""
from __future__ import annotations

from typing import Any, NamedTuple

import jax

from jaxmatch.status import with_status_name

__all__ = ["LeidenResult", "LouvainResult"]


@with_status_name
class LouvainResult(NamedTuple):
    """Communities found by :func:`louvain`, with the hierarchy of levels and counters.

    Eagerly, arrays are trimmed to the true sizes (n vertices, the levels
    run, the most iterations of a level). Under ``jit``/``vmap`` they keep
    fixed shapes, with L = max(max_levels, 32) and I = max(max_iters, 100):
    ``labels`` [vertex_cap] with -1 past n, ``levels`` [L, vertex_cap] with
    rows past ``stats["levels"]`` repeating the last level's row,
    ``level_modularity`` [L] (the last level's Q past it), ``moves`` [L, I],
    ``refine_moves`` [I]. ``status_name`` gives ``status`` in words.

    Attributes:
        labels: int32 [n]: the community of each vertex, numbered 0 .. k-1 in
            the order of their smallest vertex (so two runs that find the same
            partition, a vmapped batch and a solo run say, give the same labels).
        levels: int32 [levels, n]: the hierarchy; row l is the partition of
            the *input* vertices after level l, each row a coarsening of the
            one before, numbered 0 .. k_l - 1 in the order of their smallest
            vertex. ``levels[-1]`` equals ``labels`` when ``refine=False``;
            with refinement ``labels`` is ``levels[-1]`` with some input
            vertices moved (``stats["refine_moves"]``).
        modularity: scalar of the weights' dtype: Q of ``labels`` on the input
            graph (see :func:`modularity`); NaN when the graph has no edge
            weight.
        level_modularity: [levels]: Q after each level (computed on that
            level's coarse graph, equal to Q of ``levels[l]`` up to rounding);
            the refinement can only raise ``modularity`` above the last one.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED;
            MAX_LEVELS when the method stopped at ``max_levels`` while still
            improving; MAX_ITERS when the last stage (the refinement, or the
            last level with ``refine=False``) stopped at ``max_iters`` while
            still improving (a coarser level that reaches it just ends). The partition
            is valid either way.
        stats: dict of counters: ``levels`` (levels run), ``iterations``
            [levels] (sweeps of the modularity optimisation per level),
            ``moves`` [levels, iters] (vertices moved in each sweep; a sweep
            that lowered Q was undone, its moves still count), ``vertices``
            [levels] (vertices of each level's graph), ``communities`` (k),
            ``refine_iterations`` and ``refine_moves`` [iters] (the
            refinement's sweeps and moves).
    """

    labels: jax.Array
    levels: jax.Array
    modularity: jax.Array
    level_modularity: jax.Array
    status: jax.Array
    stats: dict[str, Any]


@with_status_name
class LeidenResult(NamedTuple):
    """Communities found by :func:`leiden`: the fields of :class:`LouvainResult` (same shapes
    eagerly and under ``jit``/``vmap``), with these differences.

    Attributes:
        labels: int32 [n]: the community of each vertex, numbered 0 .. k-1 in
            the order of their smallest vertex; every community induces a
            connected subgraph.
        levels: int32 [levels, n]: row l is the partition P after level l on
            the input vertices, numbered 0 .. k_l - 1 in the order of their
            smallest vertex. Rows need not be nested
            (a level moves subcommunities between communities); ``labels`` is
            the last row split into connected pieces (``stats["split"]``).
        modularity: scalar: Q of ``labels`` on the input graph (NaN when the
            graph has no edge weight).
        level_modularity: [levels]: Q of ``levels[l]``.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED;
            MAX_LEVELS when ``max_levels`` stopped the method while the
            aggregate still shrank; MAX_ITERS when the last level's sweeps or
            refinement rounds stopped at ``max_iters`` (an earlier level that
            reaches it just ends). ``labels`` is valid either way.
        stats: dict: ``levels``, ``iterations``, ``moves``, ``vertices`` and
            ``communities`` as :class:`LouvainResult`'s; ``refine_rounds`` and
            ``refine_merges`` [levels] (the refinement's rounds and the vertices
            it merged, per level); ``passes`` (passes run); ``split``
            (communities the final split added).
    """

    labels: jax.Array
    levels: jax.Array
    modularity: jax.Array
    level_modularity: jax.Array
    status: jax.Array
    stats: dict[str, Any]


LouvainResult.__module__ = LeidenResult.__module__ = "jaxmatch.community"   # reprs and pickles name it
