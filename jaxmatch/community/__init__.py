"""Community detection: Louvain (Paper III of the thesis) and modularity."""
from __future__ import annotations

import math
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import is_traced, with_status_name
from jaxmatch.community import louvain as _lv
from jaxmatch.community.modularity import modularity
from jaxmatch.graph import Graph, GraphInputError, check_positive, check_type

__all__ = ["LouvainResult", "louvain", "modularity"]


@with_status_name
class LouvainResult(NamedTuple):
    """Communities found by :func:`louvain`.

    * ``labels`` int32: the community of each vertex, numbered 0 .. k-1.
    * ``levels`` int32 [levels, n]: the hierarchy; row l is the partition of
      the *input* vertices after level l (so ``levels[-1]`` equals
      ``labels``). Each row is numbered 0 .. k_l - 1.
    * ``modularity``: Q of ``labels`` on the input graph (Eq. (1)); NaN when
      the graph has no edge weight.
    * ``level_modularity`` [levels]: Q after each level (computed on that
      level's coarse graph, equal to Q of ``levels[l]`` up to rounding).
    * ``status``: 0 converged, 1 when a level hit ``max_iters`` or the method
      stopped at ``max_levels`` while still improving (the partition is valid
      either way).
    * ``stats``: ``levels`` (levels run), ``iterations`` [levels] (iterations
      of the modularity optimisation per level), ``moves`` [levels, iters]
      (vertices moved in each iteration; an iteration that lowered Q was
      undone, its moves still count), ``vertices`` [levels] (vertices of each
      level's graph), ``communities`` (k).

    Eagerly, arrays are trimmed to the true sizes (n vertices, the levels
    run, the most iterations of a level). Under ``jit``/``vmap`` they keep
    fixed shapes: labels [vertex_cap] with -1 past n, levels [max_levels,
    vertex_cap] with rows past ``stats["levels"]`` repeating the final
    labels, level_modularity [max_levels] (the final Q past the last level),
    moves [max_levels, max_iters].
    """

    labels: jax.Array
    levels: jax.Array
    modularity: jax.Array
    level_modularity: jax.Array
    status: jax.Array
    stats: dict[str, Any]


def _check_graph(g) -> None:
    check_type(g, Graph, "Graph.from_edges, jaxmatch.from_scipy or jaxmatch.read")
    if not is_traced(g.n) and jnp.ndim(g.n) != 0:
        raise GraphInputError(
            "got a batch of graphs (from jaxmatch.stack); map over it with jax.vmap, e.g. "
            "jax.vmap(lambda g: louvain(g).labels)(batch)")


def _check_real(value, name, *, minimum=0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < minimum:
        raise GraphInputError(f"{name} must be a finite number >= {minimum}, got {value!r}")




def louvain(g: Graph, *, resolution: float = 1.0, threshold: float = 1e-6,
            threshold_large: float = 1e-2, large_graph: int = 100_000,
            max_levels: int | None = None, max_iters: int | None = None) -> LouvainResult:
    """Communities of an undirected graph by the Louvain method, GPU style (Paper III).

    Maximises the modularity (Eq. (1), see :func:`modularity`) greedily: each
    level moves vertices between communities by degree buckets (Algorithms 1
    and 2: all vertices of a bucket at once, e_{i->c} by sorting (vertex,
    community) keys and segment sums, the gain of Eq. (2), ties to the lowest
    community id, the singleton rule; plus two O(entries) filters that make
    a bucket's simultaneous moves safe, see :mod:`jaxmatch.community.louvain`),
    then contracts every community to a vertex (Algorithm 3), until
    modularity stops improving. ``threshold`` is
    the modularity gain an iteration needs for another one (and a level for
    another level); ``threshold_large`` replaces it while the level's graph
    has more than ``large_graph`` vertices (the paper's t_bin and t_final).
    ``resolution`` scales the null model, as in networkx and igraph.
    ``max_levels`` (default 32) bounds the levels, ``max_iters`` (default
    100) the iterations of one level. Details: :mod:`jaxmatch.community.louvain`.

    Weighted and unweighted graphs; self-loops count as in networkx (a loop
    of weight w adds 2w to the degree); isolated vertices stay alone. A graph
    with no edge weight has every vertex in its own community and modularity
    NaN (igraph's answer; networkx raises). Deterministic: ties go to the
    lowest community id, and every reduction runs in a fixed order on CPU (on
    a GPU, XLA's float scatter-adds are unordered unless
    ``--xla_gpu_deterministic_ops=true``).

    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack` (see :class:`LouvainResult` for shapes); compiles
    once per capacity pair and (max_levels, max_iters). Cost per iteration:
    7 sorts of the entry array and O(entries + n) segment work per bucket.

    >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
    >>> res = louvain(g)
    >>> res.labels.tolist(), round(float(res.modularity), 4), res.status_name
    ([0, 0, 0, 1, 1, 1], 0.3571, 'converged')
    """
    _check_graph(g)
    _check_real(resolution, "resolution")
    _check_real(threshold, "threshold")
    _check_real(threshold_large, "threshold_large")
    if isinstance(large_graph, bool) or not isinstance(large_graph, int) or large_graph < 0:
        raise GraphInputError(f"large_graph must be an int >= 0, got {large_graph!r}")
    check_positive(max_levels, "max_levels")
    check_positive(max_iters, "max_iters")
    wdt = g.adj.weights.dtype
    opts = _lv.Options(jnp.asarray(resolution, wdt), jnp.asarray(threshold, wdt),
                       jnp.asarray(threshold_large, wdt),
                       jnp.asarray(min(large_graph, 2**31 - 1), jnp.int32))
    out = _solve(g, opts, max_levels=max_levels or _lv.DEFAULT_MAX_LEVELS,
                 max_iters=max_iters or _lv.DEFAULT_MAX_ITERS)
    return _finish(g, *out)


@partial(jax.jit, static_argnames=("max_levels", "max_iters"))
def _solve(g, opts, *, max_levels, max_iters):
    return _lv.louvain(g, opts, max_levels=max_levels, max_iters=max_iters)


def _finish(g, labels, levels, q, level_q, status, stats) -> LouvainResult:
    if not is_traced(g.n):
        # trim on the host: slicing device arrays to data-dependent shapes would
        # compile a new slice for every size
        n, n_levels = int(g.n), int(stats["levels"])
        iters = np.asarray(stats["iterations"])[:n_levels]
        most = int(iters.max()) if n_levels else 0
        cut = lambda a, *idx: jax.device_put(np.asarray(a)[idx])
        labels, levels = cut(labels, slice(n)), cut(levels, slice(n_levels), slice(n))
        level_q = cut(level_q, slice(n_levels))
        stats = dict(stats, iterations=jax.device_put(iters),
                     moves=cut(stats["moves"], slice(n_levels), slice(most)),
                     vertices=cut(stats["vertices"], slice(n_levels)))
    return LouvainResult(labels, levels, q, level_q, status, stats)
