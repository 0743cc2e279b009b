"""Community detection: the Louvain and Leiden methods and the modularity of a partition.

The public names: :func:`louvain` (communities maximising the modularity, in
the GPU form of Paper III), its result :class:`LouvainResult`, :func:`leiden`
(the same with connected communities) and its :class:`LeidenResult`, and
:func:`modularity` (Q of any partition). This module holds the public
wrappers: the checks of the input and options done before tracing, the
compiled call and the trim of the result to the true sizes (the result types
live in :mod:`~jaxmatch.community.result`). The traced solvers
live in :mod:`jaxmatch.community.louvain` and
:mod:`jaxmatch.community.leiden` (the level loops), with their phases in
:mod:`~jaxmatch.community.buckets`, :mod:`~jaxmatch.community.moves`,
:mod:`~jaxmatch.community.aggregation` and (Leiden's)
:mod:`~jaxmatch.community.refinement`, the static lengths in
:mod:`~jaxmatch.community.size_classes` and the options in
:mod:`~jaxmatch.community.config`.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from jaxmatch._ops import is_traced, trim
from jaxmatch.status import Status, settle
from jaxmatch.community import config as _cfg
from jaxmatch.community import leiden as _ld
from jaxmatch.community import louvain as _lv
from jaxmatch.community import sharded as _sh
from jaxmatch.community.modularity import _check_graph, _check_real, modularity
from jaxmatch.community.result import LeidenResult, LouvainResult
from jaxmatch._validate import check_flag, check_positive
from jaxmatch.graph import Graph, GraphInputError, batch_map, eager_batch
from jaxmatch.shard import ShardedGraph

__all__ = ["LeidenResult", "LouvainResult", "leiden", "louvain", "modularity"]


# the largest max_levels / max_iters: the level and iteration records have these static sizes
# ([max_levels, vertex_cap] labels, [max_levels, max_iters] moves), allocated up front
MAX_LEVELS = 1024
MAX_ITERS = 1 << 16




def louvain(g: Graph, *, resolution: float = 1.0, threshold: float = 1e-6,
            threshold_large: float = 1e-2, large_graph: int = 100_000,
            max_levels: int | None = None, max_iters: int | None = None,
            refine: bool = True, axis_name: str | None = None, config: _cfg.Config | None = None,
            throw: bool = True) -> LouvainResult:
    r"""Communities of an undirected graph by the Louvain method, in bulk-synchronous GPU form.

    Maximises the modularity (see :func:`modularity`)

    .. math::

        Q = \frac{1}{2m} \sum_i e_{i \to C(i)}
            - \gamma \sum_c \frac{a_c^2}{4 m^2}

    greedily, level by level: the Louvain method of V. D. Blondel, J.-L.
    Guillaume, R. Lambiotte and E. Lefebvre, "Fast unfolding of communities
    in large networks" (J. Stat. Mech. P10008, 2008), in the GPU form of
    M. Naim, F. Manne, M. Halappanavar and A. Tumeo, "Community Detection on
    the GPU" (IPDPS 2017; Paper III of the thesis). One level:

    - *Local moving* (Algorithms 1 and 2): every vertex starts in its own
      community. A sweep runs the paper's degree buckets (vertices with
      1-4, 5-8, 9-16, 17-32, 33-84, 85-319, >= 320 stored entries) in turn
      (on a level whose vertices of >= 320 entries hold at least 1/256 of
      its entries, seven classes by a hash of the vertex id instead:
      ``Config.buckets``),
      and all vertices of a bucket move at once to the neighbouring community
      of highest gain (Eq. (2); ties to the lowest community id; the paper's
      singleton rule inside a bucket). e_{i->c} comes from grouping the
      bucket's (vertex, C(j)) pairs, by in-row comparisons or one sort, and
      segment sums. Two O(entries) filters (a bound on the other movers'
      effect, and conflict resolution between neighbours) make the
      simultaneous moves raise Q at least by the sum of their bounded gains,
      as sequential moves would; where they leave a bucket no move, the
      moves that touch disjoint communities go ahead, so a level ends at a
      local optimum of single moves. Sweeps repeat while one gains at least
      the threshold.
    - *Aggregation* (Algorithm 3): every community becomes a vertex of the
      next level's graph; its self-loop holds the community's inner weight.

    Levels repeat until a level moves no vertex or gains less than
    ``threshold``. With ``refine`` (default) the final partition is then
    improved by one more optimisation on the input graph that starts from it
    (multilevel refinement; not in the paper, it closes the gap to the
    sequential method on power-law graphs). The first level runs the buckets
    lowest degrees first, as the paper; the coarse levels and the
    refinement run both orders and keep the better partition (see
    ``config``). Design notes: :mod:`jaxmatch.community.louvain`.

    Self-loops count as in networkx (a loop of weight w adds 2w to the
    degree); isolated vertices stay alone. A graph with no edge weight has
    every vertex in its own community and modularity NaN (igraph's answer;
    networkx raises). Deterministic: ties go to the lowest community id, and
    every reduction runs in a fixed order on CPU (on a GPU, XLA's float
    scatter-adds are unordered unless ``--xla_gpu_deterministic_ops=true``).

    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack` (see :class:`LouvainResult` for shapes). It
    compiles once per capacity pair and ``config``: the other options are
    traced (``max_levels`` up to 32 and ``max_iters`` up to 100 share one
    compilation; larger values size the records). Every level keeps the
    input's capacities, padded with the sentinel id; each bucket step and
    each level's work runs on the smallest of a few static lengths that holds
    its entries.

    Cost: per sweep O(entries + n) work, as one sort (or in-row comparison
    passes) of each non-empty bucket's entries, about 25 gathers and 18
    scatters or segment reductions of the bucket's window length, and O(n)
    for the community totals and Q; per level two sorts of the level's
    entries (bucket grouping and aggregation); on the coarse levels and in
    the refinement the sweeps run twice (both bucket orders). Rounds: at
    most ``max_levels`` levels of at most ``max_iters`` sweeps, each sweep at
    most 7 bucket steps.

    Args:
        g: the undirected graph (:class:`jaxmatch.Graph`, symmetric CSR,
            weighted or not; from :meth:`jaxmatch.Graph.from_edges`,
            :func:`jaxmatch.from_scipy` or :func:`jaxmatch.read`). A batch
            from :func:`jaxmatch.stack` goes through ``jax.vmap``. A
            :class:`jaxmatch.ShardedGraph` (:func:`jaxmatch.shard`) runs its
            first level and the final refinement on its devices with
            ``jax.shard_map`` and the coarse levels on one device
            (:mod:`jaxmatch.community.sharded`: a partition of about the same
            modularity, not the same one; ``threshold_large``,
            ``large_graph`` and ``config`` apply to the coarse levels).
        resolution: gamma, the scale of the null-model term of Q, as in
            networkx and igraph (default 1.0; larger values give smaller
            communities).
        threshold: the modularity gain a sweep needs for another sweep, and
            a level for another level (the paper's t_final; default 1e-6).
        threshold_large: while more than ``large_graph`` vertices of the
            level's graph have an edge to another vertex (isolated ones never
            move), a sweep needs a gain of ``threshold_large * |Q|`` instead
            (default 1e-2). The paper's t_bin is absolute; relative to ``|Q|`` it
            is the same on mesh-like graphs (Q near 1) and does not stop a
            power-law graph (Q about 0.1) after two sweeps.
        large_graph: the vertex count above which ``threshold_large`` applies
            (an int >= 0, default 100,000, the paper's).
        max_levels: the most levels of all passes (a positive int, at most
            1024; None: 32).
        max_iters: the most sweeps of one level (a positive int, at most
            65536; None: 100). A level that reaches it ends and the next level
            starts from its partition (GVE-Louvain's iteration cap); only the
            last stage reaching it while still improving sets MAX_ITERS.
        refine: improve the final partition on the input graph (default
            True); False returns the last level's partition.
        axis_name: None (default), or, inside ``jax.vmap(...,
            axis_name=name)``, the same name
            (``jax.vmap(lambda g: louvain(g, axis_name="b"), axis_name="b")``).
            The batch then agrees, by ``lax.pmax``, on the static length each
            bucket step and each level runs on, so the work shrinks with the
            buckets and the coarse levels; without it a vmapped graph runs
            every step on its whole entry capacity. Same answers either way.
        config: the static knobs (:class:`jaxmatch.community.config.Config`:
            window classes, in-row grouping, conflict rounds, the bucket order,
            the sort method); None: the defaults.
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when a bound stops the method first (default True); under
            ``jit``/``vmap`` read ``status`` instead.

    Returns:
        A :class:`LouvainResult`: ``labels``, ``levels``, ``modularity``,
        ``level_modularity``, ``status`` and ``stats``.

    Raises:
        GraphInputError: before tracing, when ``g`` is not a
            :class:`jaxmatch.Graph` or is a batch under ``jax.jit``; ``resolution``,
            ``threshold`` or ``threshold_large`` is not a finite number >= 0
            that fits the weights' dtype; ``large_graph`` is not an int >= 0;
            ``max_levels`` or ``max_iters`` is not a positive int or above its
            bound; ``refine`` or ``throw`` is not a bool; ``axis_name`` is not
            a str, or is given outside ``jax.vmap``; ``config`` is not a
            ``Config`` or has an unknown ``order``, ``sort_method``, ``run_sums``
            or ``buckets``.
        SolverError: eagerly with ``throw=True``, when ``max_levels`` or
            ``max_iters`` stopped the method (``status`` not CONVERGED).

    Example:
        Two triangles joined by an edge:

        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
        >>> res = jaxmatch.louvain(g)
        >>> res.labels.tolist(), round(float(res.modularity), 4), res.status_name
        ([0, 0, 0, 1, 1, 1], 0.3571, 'converged')
    """
    if isinstance(g, ShardedGraph):
        return _louvain_sharded(g, resolution=resolution, threshold=threshold, threshold_large=threshold_large,
                                large_graph=large_graph, max_levels=max_levels, max_iters=max_iters,
                                refine=refine, config=config, throw=throw)
    if eager_batch(g, Graph):
        return settle("louvain", batch_map(louvain, (g,), dict(
            resolution=resolution, threshold=threshold, threshold_large=threshold_large, large_graph=large_graph,
            max_levels=max_levels, max_iters=max_iters, refine=refine, axis_name=axis_name, config=config)), throw)
    _check_graph(g)
    check_flag(throw, "throw")
    opts, static = _options(g, resolution=resolution, threshold=threshold,
                            threshold_large=threshold_large, large_graph=large_graph,
                            max_levels=max_levels, max_iters=max_iters, refine=refine,
                            axis_name=axis_name, config=config)
    return settle("louvain", _finish(g, *_solve(g, opts, **static)), throw)


def _louvain_sharded(sg, *, resolution, threshold, threshold_large, large_graph, max_levels, max_iters, refine,
                     throw, coarse=False, q_start=None, **rest) -> LouvainResult:
    """Level one on the devices of ``sg`` (:mod:`jaxmatch.community.sharded`), the coarse levels on
    them too while their graph is large (``Config.one_device_entries``), the rest on one
    device. ``coarse``: ``sg`` is itself a coarse level (its level sweeps as one). ``q_start``: the
    modularity of the level below (a coarse level's start); the run ends after this level, as the
    one-device solver's level loop ends, when it merges no community or gains less than
    ``threshold`` over it, and a level that merges nothing is not recorded."""
    _check_options(resolution, threshold, threshold_large, large_graph, max_levels, max_iters, refine)
    rest["config"] = _checked_config(rest.get("config"))
    check_flag(throw, "throw")
    n = int(sg.n)
    large = n > large_graph      # the input level's stopping rule, as the one-device solver's
    gains = (jnp.float32(0 if large else threshold), jnp.float32(threshold_large if large else 0))
    passes = max_iters or _cfg.DEFAULT_MAX_ITERS
    moving = rest["config"]._replace(one_device_entries=None)   # a knob of the host's step: no recompile
    order = rest["config"].order

    sweeps = partial(_sh.level_sweeps, sg, jnp.float32(resolution), *gains, order=order, max_iters=passes,
                     cfg=moving)
    comm, q1, it, moves, status1, *pairs = sweeps(both=coarse)
    n_coarse = int(pairs[1])
    merged = n_coarse < n
    n_it = int(it)
    one = dict(levels=1, iterations=np.array([n_it], np.int32), moves=np.asarray(moves)[None, :n_it],
               vertices=np.array([n], np.int32), communities=n_coarse,
               refine_iterations=0, refine_moves=np.zeros(0, np.int32))
    # a coarse level is the last one when it merges nothing or gains less than threshold (Session 46:
    # until then the mesh's levels went on regardless, two or three levels more than one device's)
    last = q_start is not None and not (merged and float(q1) - q_start >= threshold)
    if max_levels == 1 or last:   # MAX_LEVELS when another level could still merge communities
        status = jnp.where(status1 != 0, status1, jnp.int32(Status.MAX_LEVELS if merged and not last
                                                             else Status.CONVERGED))
        dense = _by_smallest_vertex(_sh.on_first(pairs[0])[:n])
        if last and not merged:      # not recorded, as on one device
            one = dict(one, levels=0, iterations=one["iterations"][:0], moves=one["moves"][:0],
                       vertices=one["vertices"][:0])
        kept = int(one["levels"])
        res = LouvainResult(dense, dense[None][:kept], q1, jnp.reshape(q1, (1,))[:kept], status, one)
        return settle("louvain", res, throw)
    spread = sg.shards > 1 and merged and _sh.too_big(int(np.sum(np.asarray(pairs[-1]))), sg, rest["config"])
    coarse_g, dense = _sh.coarse_sharded(sg, *pairs, n) if spread else _sh.coarse_graph(*pairs, n)
    del pairs
    more = dict(resolution=resolution, threshold=threshold, threshold_large=threshold_large,
                large_graph=large_graph, max_iters=max_iters,
                max_levels=None if max_levels is None else max_levels - 1, refine=False)
    if spread:
        r = _louvain_sharded(coarse_g, throw=False, coarse=True, q_start=float(q1), **more, **rest)
    else:
        r = _coarse_levels(coarse_g, **more, **rest)
    # the gathers by the dense labels run on the mesh's first device (on the host the levels' gather
    # took a second at 8.4M vertices: RESULTS, session 27)
    first = _sh.first_device(sg.mesh.devices.flat)
    labels, q = jax.device_put(r.labels, first)[dense], r.modularity
    refined = dict(refine_iterations=0, refine_moves=np.zeros(0, np.int32))
    if refine:               # the final partition refined on the input graph, on the devices
        start = jnp.full(sg.vertex_cap, sg.vertex_cap, jnp.int32).at[:n].set(labels)
        start = jax.device_put(start, NamedSharding(sg.mesh, P()))
        comm2, q2, it2, moves2, status2 = sweeps(start, both=True, coarsen=False)
        labels = _sh.on_first(_sh.dense_labels(comm2, jnp.int32(n)))[:n]
        q = q2
        refined = dict(refine_iterations=int(it2), refine_moves=np.asarray(moves2)[:int(it2)])
    rm = np.asarray(r.stats["moves"])
    width = max(n_it, rm.shape[1])
    pad = lambda a: np.pad(a, ((0, 0), (0, width - a.shape[1])))  # noqa: E731
    stats = dict(r.stats, **refined, communities=int(jnp.max(labels)) + 1 if labels.size else 0,
                 levels=1 + int(r.stats["levels"]),
                 iterations=np.concatenate([one["iterations"], np.asarray(r.stats["iterations"])]),
                 moves=np.concatenate([pad(one["moves"]), pad(rm)]),
                 vertices=np.concatenate([one["vertices"], np.asarray(r.stats["vertices"])]))
    # as on one device, a level's iteration cap counts in the last stage only (the refinement, if any)
    # on the host: the coarse levels ran on one device (or on the mesh), level one and the refinement on the mesh
    status = int(r.status) if not refine or int(r.status) == Status.MAX_LEVELS else int(status2)
    levels = _by_smallest_vertex(jnp.concatenate([dense[None], jax.device_put(r.levels, first)[:, dense]]))
    level_q = np.concatenate([np.reshape(q1, (1,)), r.level_modularity])
    res = LouvainResult(_by_smallest_vertex(labels), levels, jnp.asarray(np.asarray(q)),
                        jnp.asarray(level_q), jnp.int32(status), stats)
    return settle("louvain", res, throw)


def _coarse_levels(g, **kw) -> LouvainResult:
    """:func:`louvain` (options ``kw``, no throw) of a coarse level's graph on one device, whose first
    level sweeps as a coarse level (both bucket orders with ``Config.order`` 2): the sharded
    solver's levels after the mesh's."""
    opts, static = _options(g, **kw)
    return _finish(g, *_solve(g, opts._replace(coarse=jnp.asarray(True)), **static))


@jax.jit
def _by_smallest_vertex(labels):
    """:func:`jaxmatch.community.louvain.by_smallest_vertex` on trimmed labels ([n] or each row of
    [L, n]): the sharded run numbers its answer as the one-device solver does."""
    real = jnp.ones(labels.shape[-1], bool)
    return _lv.by_smallest_vertex(labels, real) if labels.ndim == 1 else _lv.rows_by_smallest_vertex(labels, real)


def _check_options(resolution, threshold, threshold_large, large_graph, max_levels, max_iters, refine) -> None:
    """Raise GraphInputError unless :func:`louvain`'s numeric options and ``refine`` are valid (on the host)."""
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


def _checked_config(config) -> _cfg.Config:
    """``config`` (None: the default), checked."""
    if config is None:
        config = _cfg.DEFAULT
    if not isinstance(config, _cfg.Config):
        raise GraphInputError(f"config must be None or a jaxmatch.community.config.Config, got {config!r}")
    if config.order not in (0, 1, 2) or config.sort_method not in ("auto", "kv", "key"):
        raise GraphInputError(f"config.order must be 0, 1 or 2 and config.sort_method 'auto', 'kv' or 'key', "
                              f"got {config.order!r} and {config.sort_method!r}")
    if config.run_sums not in ("auto", "scatter", "scan"):
        raise GraphInputError(f"config.run_sums must be 'auto', 'scatter' or 'scan', got {config.run_sums!r}")
    if config.buckets not in ("auto", "degree", "hash"):
        raise GraphInputError(f"config.buckets must be 'auto', 'degree' or 'hash', got {config.buckets!r}")
    e = config.one_device_entries
    if e is not None and (isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 0):
        raise GraphInputError(f"config.one_device_entries must be None or an int >= 0, got {e!r}")
    return config


def _options(g, *, resolution=1.0, threshold=1e-6, threshold_large=1e-2, large_graph=100_000,
             max_levels=None, max_iters=None, refine=True, axis_name=None, config=None):
    """Checked options of :func:`louvain`: (traced ``Options``, static kwargs of ``_solve``).

    Options that differ only in traced values share one compilation (the
    benchmark times ``_solve`` with these directly, skipping the host-side trim).
    """
    _check_options(resolution, threshold, threshold_large, large_graph, max_levels, max_iters, refine)
    if axis_name is not None and not isinstance(axis_name, str):
        raise GraphInputError(f"axis_name must be None or the str given to jax.vmap, got {axis_name!r}")
    if axis_name is not None and not is_traced(g.n):
        raise GraphInputError(f"axis_name={axis_name!r} is for calls inside "
                              f"jax.vmap(..., axis_name={axis_name!r})")
    config = _checked_config(config)
    wdt = g.adj.weights.dtype
    max_levels = max_levels or _cfg.DEFAULT_MAX_LEVELS
    max_iters = max_iters or _cfg.DEFAULT_MAX_ITERS
    opts = _cfg.Options(jnp.asarray(resolution, wdt), jnp.asarray(threshold, wdt),
                       jnp.asarray(threshold_large, wdt),
                       jnp.asarray(min(large_graph, 2**31 - 1), jnp.int32),
                       jnp.asarray(max_levels, jnp.int32), jnp.asarray(max_iters, jnp.int32),
                       jnp.asarray(refine), jnp.asarray(config.order, jnp.int32), jnp.asarray(False))
    # the level and iteration records have static sizes: up to the defaults, one size (one
    # compilation for any max_levels <= 32 and max_iters <= 100)
    return opts, dict(max_levels=max(max_levels, _cfg.DEFAULT_MAX_LEVELS),
                      max_iters=max(max_iters, _cfg.DEFAULT_MAX_ITERS), axis_name=axis_name, config=config)


@partial(jax.jit, static_argnames=("max_levels", "max_iters", "axis_name", "config"))
def _solve(g, opts, *, max_levels, max_iters, axis_name=None, config=_cfg.DEFAULT):
    return _lv.louvain(g, opts, max_levels=max_levels, max_iters=max_iters, axis=axis_name, cfg=config)


def leiden(g: Graph, *, resolution: float = 1.0, threshold: float = 1e-6, threshold_large: float = 1e-2,
           large_graph: int = 100_000, max_levels: int | None = None, max_iters: int | None = None,
           passes: int | None = 2, axis_name: str | None = None, config: _cfg.Config | None = None,
           throw: bool = True) -> LeidenResult:
    r"""Communities of an undirected graph by the Leiden method: high modularity, every community connected.

    Maximises the modularity Q (see :func:`modularity`, :func:`louvain`) by the
    method of V. A. Traag, L. Waltman and N. J. van Eck, "From Louvain to
    Leiden: guaranteeing well-connected communities" (Sci. Rep. 9, 5233,
    2019), in bulk-synchronous array form. Each level runs Louvain's local
    moving (the bucket sweeps of :func:`louvain`) from the last level's
    partition P, then *refines* P: inside each community, vertices still
    alone and well connected (:math:`w(v, C - v) \ge \gamma k_v (K_C - k_v) / 2m`)
    merge greedily into well-connected subcommunities with the best
    non-negative gain (the paper's randomised merge as theta -> 0), in
    rounds where a targeted vertex stays. The graph is aggregated by the
    refinement R, with P as the start partition of the aggregate; levels
    repeat until the aggregate does not shrink (a pass), and passes repeat
    from the last partition while they raise Q. Each subcommunity of R is
    connected by construction, and a final split of every community into its
    connected pieces (never lowering Q) makes every community of the result
    connected. Design notes and the argument: :mod:`jaxmatch.community.leiden`
    and :mod:`jaxmatch.community.refinement`.

    Deterministic (ties to the lowest id; fixed reduction order on CPU).
    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack`, compiling once per capacity pair and ``config``
    (:class:`LeidenResult` gives the shapes). Cost per level: the sweeps of
    :func:`louvain`'s levels, per refinement round one sort of the entries of
    the vertices that may still merge, one sort for the aggregation;
    O(entries + n) per iteration of the final split. Self-loops and an
    edgeless graph as in :func:`louvain`.

    Args:
        g: the undirected graph (:class:`jaxmatch.Graph`; a batch from
            :func:`jaxmatch.stack` goes through ``jax.vmap``, or, given
            eagerly, through :func:`jaxmatch.graph.batch_map`).
        resolution: gamma, as for :func:`louvain` (default 1.0).
        threshold, threshold_large, large_graph: stop a level's local moving,
            as they stop :func:`louvain`'s.
        axis_name, config: as for :func:`louvain`.
        max_levels: the most levels of all passes (a positive int, at most
            1024; None: 32).
        max_iters: the most sweeps of one level's local moving, and the most
            rounds of one refinement (a positive int, at most 65536; None: 100).
        passes: the most passes (a positive int; default and None: 2, as
            igraph's ``n_iterations``); another pass runs while the last one
            raised Q by at least ``threshold``.
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when a bound stopped the method (default True).

    Returns:
        A :class:`LeidenResult`: ``labels``, ``levels``, ``modularity``,
        ``level_modularity``, ``status`` and ``stats``.

    Raises:
        GraphInputError: before tracing, on the inputs and options that
            :func:`louvain` rejects, or ``passes`` not a positive int.
        SolverError: eagerly with ``throw=True``, when ``status`` is not CONVERGED.

    Example:
        Two triangles joined by an edge:

        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
        >>> res = jaxmatch.leiden(g)
        >>> res.labels.tolist(), round(float(res.modularity), 4), res.status_name
        ([0, 0, 0, 1, 1, 1], 0.3571, 'converged')
    """
    if eager_batch(g, Graph):
        return settle("leiden", batch_map(leiden, (g,), dict(
            resolution=resolution, threshold=threshold, threshold_large=threshold_large, large_graph=large_graph,
            max_levels=max_levels, max_iters=max_iters, passes=passes, axis_name=axis_name, config=config)), throw)
    _check_graph(g)
    check_flag(throw, "throw")
    check_positive(passes, "passes")
    opts, static = _options(g, resolution=resolution, threshold=threshold, threshold_large=threshold_large,
                            large_graph=large_graph, max_levels=max_levels, max_iters=max_iters,
                            axis_name=axis_name, config=config)
    passes = jnp.asarray(min(passes or 2, 2**31 - 1), jnp.int32)
    return settle("leiden", _finish(g, *_solve_leiden(g, opts, passes, **static), result=LeidenResult), throw)


@partial(jax.jit, static_argnames=("max_levels", "max_iters", "axis_name", "config"))
def _solve_leiden(g, opts, passes, *, max_levels, max_iters, axis_name=None, config=_cfg.DEFAULT):
    return _ld.leiden(g, opts, passes, max_levels=max_levels, max_iters=max_iters, axis=axis_name, cfg=config)


def _finish(g, labels, levels, q, level_q, status, stats, result=LouvainResult):
    if not is_traced(g.n):
        n, n_levels = int(g.n), int(stats["levels"])
        iters = np.asarray(stats["iterations"])[:n_levels]
        most = int(iters.max()) if n_levels else 0
        cut = lambda a, *idx: jax.device_put(np.asarray(a)[idx])
        labels, levels = trim(labels, n), trim(levels, n_levels, n)   # on the device when large
        level_q = cut(level_q, slice(n_levels))
        stats = dict(stats, iterations=jax.device_put(iters),
                     moves=cut(stats["moves"], slice(n_levels), slice(most)),
                     **{key: cut(stats[key], slice(n_levels))       # Leiden's per-level counters
                        for key in ("vertices", "refine_rounds", "refine_merges") if key in stats})
        if "refine_moves" in stats:                                 # Louvain's final refinement
            stats["refine_moves"] = cut(stats["refine_moves"], slice(int(stats["refine_iterations"])))
    return result(labels, levels, q, level_q, status, stats)
