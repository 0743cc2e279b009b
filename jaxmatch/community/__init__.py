"""Community detection: Louvain (Paper III of the thesis) and modularity."""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import is_traced, trim
from jaxmatch.status import settle, with_status_name
from jaxmatch.community import louvain as _lv
from jaxmatch.community.modularity import _check_graph, _check_real, modularity
from jaxmatch.graph import Graph, GraphInputError, check_flag, check_positive

__all__ = ["LouvainResult", "louvain", "modularity"]


@with_status_name
class LouvainResult(NamedTuple):
    """Communities found by :func:`louvain`.

    * ``labels`` int32: the community of each vertex, numbered 0 .. k-1.
    * ``levels`` int32 [levels, n]: the hierarchy; row l is the partition of
      the *input* vertices after level l, each row a coarsening of the one
      before, numbered 0 .. k_l - 1. ``levels[-1]`` equals ``labels`` when
      ``refine=False``; with refinement ``labels`` is ``levels[-1]`` with some
      input vertices moved (``stats["refine_moves"]``).
    * ``modularity``: Q of ``labels`` on the input graph (Eq. (1)); NaN when
      the graph has no edge weight.
    * ``level_modularity`` [levels]: Q after each level (computed on that
      level's coarse graph, equal to Q of ``levels[l]`` up to rounding); the
      refinement can only raise ``modularity`` above the last one.
    * ``status`` (:class:`jaxmatch.Status`): CONVERGED, MAX_LEVELS when the
      method stopped at ``max_levels`` while still improving, MAX_ITERS when
      a level hit ``max_iters`` (the partition is valid either way).
    * ``stats``: ``levels`` (levels run), ``iterations`` [levels] (iterations
      of the modularity optimisation per level), ``moves`` [levels, iters]
      (vertices moved in each iteration; an iteration that lowered Q was
      undone, its moves still count), ``vertices`` [levels] (vertices of each
      level's graph), ``communities`` (k), ``refine_iterations`` and
      ``refine_moves`` [iters] (the refinement's iterations and moves).

    Eagerly, arrays are trimmed to the true sizes (n vertices, the levels
    run, the most iterations of a level). Under ``jit``/``vmap`` they keep
    fixed shapes, with L = max(max_levels, 32) and I = max(max_iters, 100):
    labels [vertex_cap] with -1 past n, levels [L, vertex_cap] with rows past
    ``stats["levels"]`` repeating the last level's row, level_modularity [L]
    (the last level's Q past it), moves [L, I], refine_moves [I].
    """

    labels: jax.Array
    levels: jax.Array
    modularity: jax.Array
    level_modularity: jax.Array
    status: jax.Array
    stats: dict[str, Any]


# the largest max_levels / max_iters: the level and iteration records have these static sizes
# ([max_levels, vertex_cap] labels, [max_levels, max_iters] moves), allocated up front
MAX_LEVELS = 1024
MAX_ITERS = 1 << 16




def louvain(g: Graph, *, resolution: float = 1.0, threshold: float = 1e-6,
            threshold_large: float = 1e-2, large_graph: int = 100_000,
            max_levels: int | None = None, max_iters: int | None = None,
            refine: bool = True, axis_name: str | None = None, config: _lv.Config | None = None,
            throw: bool = True) -> LouvainResult:
    """Communities of an undirected graph by the Louvain method, GPU style (Paper III).

    Maximises the modularity (Eq. (1), see :func:`modularity`) greedily: each
    level moves vertices between communities by degree buckets (Algorithms 1
    and 2: all vertices of a bucket at once, the buckets lowest degrees
    first on the first level, while the coarse levels and the refinement run
    in both orders, lowest and highest degrees first, and keep the better
    partition; e_{i->c} by sorting (vertex, community) keys and segment sums,
    the gain of Eq. (2), ties to the lowest community id, the singleton rule;
    plus two O(entries) filters that make a bucket's simultaneous moves safe,
    see :mod:`jaxmatch.community.louvain`),
    then contracts every community to a vertex (Algorithm 3), until
    modularity stops improving; with ``refine`` (default) the final partition
    is then improved by one more optimisation on the input graph that starts
    from it (multilevel refinement; not in the paper, it closes the gap to
    the sequential method on power-law graphs). ``threshold`` is
    the modularity gain an iteration needs for another one (and a level for
    another level); while more than ``large_graph`` vertices of the level's
    graph have an edge to another vertex (isolated ones never move), an
    iteration needs a gain of ``threshold_large * |Q|`` instead
    (the paper's t_bin and t_final; relative here, see below).
    ``resolution`` scales the null model, as in networkx and igraph.
    ``max_levels`` (default 32, at most 1024) bounds the levels, ``max_iters``
    (default 100, at most 65536) the iterations of one level. Details: :mod:`jaxmatch.community.louvain`.

    ``axis_name``: inside ``jax.vmap(..., axis_name=name)``, pass the same
    name (``jax.vmap(lambda g: louvain(g, axis_name="b"), axis_name="b")``).
    The batch then agrees, by ``lax.pmax``, on the array length each bucket
    step and each level runs on (the smallest of a few size classes that
    holds that step's entries in every graph of the batch), so the work
    shrinks with the buckets and the coarse levels; without it a vmapped
    graph runs every step on its whole entry capacity. Same answers either
    way (each graph's equal to its own run).

    Weighted and unweighted graphs; self-loops count as in networkx (a loop
    of weight w adds 2w to the degree); isolated vertices stay alone. A graph
    with no edge weight has every vertex in its own community and modularity
    NaN (igraph's answer; networkx raises). Deterministic: ties go to the
    lowest community id, and every reduction runs in a fixed order on CPU (on
    a GPU, XLA's float scatter-adds are unordered unless
    ``--xla_gpu_deterministic_ops=true``).

    ``config``: the static knobs (:class:`jaxmatch.community.louvain.Config`:
    window classes, the bucket order, the sort method; None: the defaults).
    ``throw``: eagerly, raise :class:`jaxmatch.SolverError` (holding the
    result) when a bound stops the method first; under ``jit``/``vmap`` read
    ``status`` instead.

    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack` (see :class:`LouvainResult` for shapes); compiles
    once per capacity pair (all other options are traced, up to ``max_levels``
    32 and ``max_iters`` 100). Cost per iteration (sweep): one sort of each
    non-empty degree bucket's entries (every entry about once) and O(entries
    + n) gathers and segment reductions (twice on coarse levels: both bucket
    orders); per level two sorts of the level's entries. ``threshold_large``
    is relative to the modularity: on mesh-like graphs (Q about 0.9-0.99) that is the paper's absolute 1e-2, but on a
    power-law graph (Q about 0.1-0.2) the absolute rule stopped the first level
    after two sweeps (200,000 vertices: 4.8% below igraph, 10.4M edges: 16%
    below); the relative rule: 1.4% above igraph on the first.

    >>> g = Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
    >>> res = louvain(g)
    >>> res.labels.tolist(), round(float(res.modularity), 4), res.status_name
    ([0, 0, 0, 1, 1, 1], 0.3571, 'converged')
    """
    _check_graph(g)
    check_flag(throw, "throw")
    opts, static = _options(g, resolution=resolution, threshold=threshold,
                            threshold_large=threshold_large, large_graph=large_graph,
                            max_levels=max_levels, max_iters=max_iters, refine=refine,
                            axis_name=axis_name, config=config)
    return settle("louvain", _finish(g, *_solve(g, opts, **static)), throw)


def _options(g, *, resolution=1.0, threshold=1e-6, threshold_large=1e-2, large_graph=100_000,
             max_levels=None, max_iters=None, refine=True, axis_name=None, config=None):
    """Checked options of :func:`louvain`: (traced ``Options``, static kwargs of ``_solve``).

    Options that differ only in traced values share one compilation (the
    benchmark times ``_solve`` with these directly, skipping the host-side trim).
    """
    _check_real(resolution, "resolution")
    _check_real(threshold, "threshold")
    _check_real(threshold_large, "threshold_large")
    if isinstance(large_graph, bool) or not isinstance(large_graph, int) or large_graph < 0:
        raise GraphInputError(f"large_graph must be an int >= 0, got {large_graph!r}")
    check_positive(max_levels, "max_levels")
    check_positive(max_iters, "max_iters")
    for value, name, top in ((max_levels, "max_levels", MAX_LEVELS), (max_iters, "max_iters", MAX_ITERS)):
        if value is not None and value > top:
            raise GraphInputError(f"{name} = {value} is above the supported {top}: the level and iteration "
                                  "records are allocated at that size")
    if not isinstance(refine, bool):
        raise GraphInputError(f"refine must be True or False, got {refine!r}")
    if axis_name is not None and not isinstance(axis_name, str):
        raise GraphInputError(f"axis_name must be None or the str given to jax.vmap, got {axis_name!r}")
    if axis_name is not None and not is_traced(g.n):
        raise GraphInputError(f"axis_name={axis_name!r} is for calls inside "
                              f"jax.vmap(..., axis_name={axis_name!r})")
    if config is None:
        config = _lv.DEFAULT
    if not isinstance(config, _lv.Config):
        raise GraphInputError(f"config must be None or a jaxmatch.community.louvain.Config, got {config!r}")
    if config.order not in (0, 1, 2) or config.sort_method not in ("auto", "kv", "key"):
        raise GraphInputError(f"config.order must be 0, 1 or 2 and config.sort_method 'auto', 'kv' or 'key', "
                              f"got {config.order!r} and {config.sort_method!r}")
    wdt = g.adj.weights.dtype
    max_levels = max_levels or _lv.DEFAULT_MAX_LEVELS
    max_iters = max_iters or _lv.DEFAULT_MAX_ITERS
    opts = _lv.Options(jnp.asarray(resolution, wdt), jnp.asarray(threshold, wdt),
                       jnp.asarray(threshold_large, wdt),
                       jnp.asarray(min(large_graph, 2**31 - 1), jnp.int32),
                       jnp.asarray(max_levels, jnp.int32), jnp.asarray(max_iters, jnp.int32),
                       jnp.asarray(refine), jnp.asarray(config.order, jnp.int32))
    # the level and iteration records have static sizes: up to the defaults, one size (one
    # compilation for any max_levels <= 32 and max_iters <= 100)
    return opts, dict(max_levels=max(max_levels, _lv.DEFAULT_MAX_LEVELS),
                      max_iters=max(max_iters, _lv.DEFAULT_MAX_ITERS), axis_name=axis_name, config=config)


@partial(jax.jit, static_argnames=("max_levels", "max_iters", "axis_name", "config"))
def _solve(g, opts, *, max_levels, max_iters, axis_name=None, config=_lv.DEFAULT):
    return _lv.louvain(g, opts, max_levels=max_levels, max_iters=max_iters, axis=axis_name, cfg=config)


def _finish(g, labels, levels, q, level_q, status, stats) -> LouvainResult:
    if not is_traced(g.n):
        n, n_levels = int(g.n), int(stats["levels"])
        iters = np.asarray(stats["iterations"])[:n_levels]
        most = int(iters.max()) if n_levels else 0
        cut = lambda a, *idx: jax.device_put(np.asarray(a)[idx])
        labels, levels = trim(labels, n), trim(levels, n_levels, n)   # on the device when large
        level_q = cut(level_q, slice(n_levels))
        r_most = int(stats["refine_iterations"])
        stats = dict(stats, iterations=jax.device_put(iters),
                     moves=cut(stats["moves"], slice(n_levels), slice(most)),
                     refine_moves=cut(stats["refine_moves"], slice(r_most)),
                     vertices=cut(stats["vertices"], slice(n_levels)))
    return LouvainResult(labels, levels, q, level_q, status, stats)
