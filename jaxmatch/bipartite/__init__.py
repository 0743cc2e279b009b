"""Maximum cardinality bipartite matching: the public functions.

:func:`maximum_matching` runs one of the exact solvers from an initial
matching, :func:`initial_matching` only the initial matching; both return a
:class:`MatchingResult`. The algorithms live one per module:
:mod:`jaxmatch.bipartite.init` (cheap greedy and Karp-Sipser),
:mod:`jaxmatch.bipartite.push_relabel` (G-PR),
:mod:`jaxmatch.bipartite.augmenting` (APFB and APsB) and
:mod:`jaxmatch.bipartite.graft` (MS-BFS-Graft). This module checks the
options on the host, picks a jitted solver per static configuration (options
that do not apply to the method are fixed, so they cause no recompilation),
and trims the eager results to the true sizes.
"""
from __future__ import annotations

import functools
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import is_traced, trim
from jaxmatch.status import settle, with_status_name
from jaxmatch.bipartite import augmenting as _ap
from jaxmatch.bipartite import graft as _graft
from jaxmatch.bipartite import init as _init
from jaxmatch.bipartite import push_relabel as _pr
from jaxmatch.bipartite import sharded as _sharded
from jaxmatch.kernels import bfs_level as _bfs_level
from jaxmatch._validate import INT32_MAX, check_flag, check_not_batch, check_positive, check_type, next_pow2
from jaxmatch.graph import BipartiteGraph, GraphInputError, split_union
from jaxmatch import graph as _graph
from jaxmatch.shard import ShardedBipartiteGraph

__all__ = ["MatchingResult", "maximum_matching", "initial_matching"]

METHODS = ("pr", "flow") + _ap.METHODS + ("graft", "auto")
AUTO_LEVELS = 4.0  # default auto_levels on the GPU: graft's BFS levels before G-PR takes over, per sqrt(larger side)
INITS = (None,) + _init.METHODS


@with_status_name
class MatchingResult(NamedTuple):
    """A bipartite matching, as returned by :func:`maximum_matching` and :func:`initial_matching`.

    Eagerly the mates have lengths n_rows and n_cols; under ``jit``/``vmap``
    they keep the graph's capacities, with -1 past the true sizes.
    ``status_name`` gives the status in words.

    Attributes:
        row_mate: int32 ``[n_rows]``: row r's column, or -1 when r is unmatched.
        col_mate: int32 ``[n_cols]``: column c's row, or -1.
        cardinality: int32 scalar: the number of matched pairs.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED (0) when
            the solver finished (the matching is maximum; for
            :func:`initial_matching`, maximal), else the bound that stopped it
            (the matching is valid but may not be maximum).
        stats: dict of work counters, all with ``iterations`` (the solver's
            loop steps) and ``init_rounds`` (rounds of the initial matching);
            by method: G-PR ``global_relabels``, ``pushes``, ``bfs_levels``;
            APFB, APsB and MS-BFS-Graft ``phases``, ``bfs_levels``,
            ``edges_traversed``, ``augmentations``; ``"auto"`` graft's
            counters and G-PR's prefixed ``pr_``; ``"flow"`` those of
            :func:`jaxmatch.max_flow`.
    """

    row_mate: jax.Array
    col_mate: jax.Array
    cardinality: jax.Array
    status: jax.Array
    stats: dict[str, Any]


def _check_graph(g) -> None:
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    check_not_batch(g.n_rows, "graphs (from jaxmatch.stack)",
                    "jax.vmap(lambda g: maximum_matching(g).cardinality)(batch)")
    if g.row_cap + g.col_cap + 2 > INT32_MAX:
        raise GraphInputError("row_cap + col_cap must stay below 2**31 - 2 (labels are int32)")


def _check_choice(value, allowed, name):
    if value not in allowed:
        raise GraphInputError(f"{name} must be one of {allowed}, got {value!r}")




def _finish(g, row_mate, col_mate, status, stats) -> MatchingResult:
    card = jnp.sum(row_mate >= 0, dtype=jnp.int32)
    if not is_traced(g.n_rows):
        row_mate, col_mate = trim(row_mate, int(g.n_rows)), trim(col_mate, int(g.n_cols))
    return MatchingResult(row_mate, col_mate, card, status, stats)


def initial_matching(g: BipartiteGraph, method: str = "karp_sipser", *,
                     max_rounds: int | None = _init.DEFAULT_ROUNDS, throw: bool = True):
    """A maximal (after enough rounds) matching by the cheap greedy or Karp-Sipser rule.

    A matching is maximal when no edge joins two unmatched vertices; it has
    at least half the maximum cardinality. Both rules run as rounds of
    handshakes (every row picks its best candidate column, every column
    accepts the best row that picked it), so a round with a candidate edge
    matches at least one pair. ``"cheap"`` takes any edge between unmatched
    vertices (the "cheap matching" of the matching papers); ``"karp_sipser"``
    prefers edges at vertices of residual degree 1, whose match is safe in
    some maximum matching (R. M. Karp and M. Sipser, "Maximum matchings in
    sparse random graphs", FOCS 1981), and picks greedily elsewhere in the
    same round. See :mod:`jaxmatch.bipartite.init`. Cost: O(``|E|``) per
    round. Works eagerly, under ``jax.jit`` and under ``jax.vmap``.

    Args:
        g: the :class:`jaxmatch.BipartiteGraph` (a batch from
            :func:`jaxmatch.stack` only inside ``jax.vmap``).
        method: ``"karp_sipser"`` (the default) or ``"cheap"``.
        max_rounds: bound on the rounds (default 64; None: the default).
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when ``max_rounds`` stops the rounds before the matching
            is maximal (default True); under ``jit``/``vmap`` read ``status``.

    Returns:
        A :class:`MatchingResult` whose status is CONVERGED when the matching
        is maximal and MAX_ITERS when ``max_rounds`` stopped it first.

    Raises:
        GraphInputError: when ``g`` is not a single BipartiteGraph, its
            capacities overflow int32 labels, or an option is not accepted.
        SolverError: eagerly with ``throw=True``, when ``max_rounds`` stopped it.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1])
        >>> res = jaxmatch.initial_matching(g, "karp_sipser")
        >>> int(res.cardinality), res.status_name
        (2, 'converged')
    """
    _check_graph(g)
    _check_choice(method, _init.METHODS, "method")
    check_positive(max_rounds, "max_rounds")
    check_flag(throw, "throw")
    max_rounds = _init.DEFAULT_ROUNDS if max_rounds is None else min(int(max_rounds), INT32_MAX)
    return settle("initial_matching", _finish(g, *_initial(g, method=method, max_rounds=max_rounds)), throw)


@partial(jax.jit, static_argnames=("method", "max_rounds"))
def _initial(g, *, method, max_rounds):
    row_mate, col_mate, rounds = _init.initial_matching_arrays(g, method, max_rounds)
    left = jnp.any(_init.live_edges(g, row_mate, col_mate))
    return row_mate, col_mate, left.astype(jnp.int32), dict(iterations=rounds, init_rounds=rounds)


def maximum_matching(g: BipartiteGraph, *, method: str = "pr", init: str | None = "karp_sipser",
                     max_iters: int | None = None, k: float | None = _pr.DEFAULT_K,
                     init_rounds: int | None = _init.DEFAULT_ROUNDS, lanes: int | None = None,
                     bfs: str = "gpubfs_wr", graft: bool = True, direction_optimizing: bool = True,
                     alpha: float | None = _graft.DEFAULT_ALPHA, auto_levels: float | None = None,
                     kernel=None, throw: bool = True) -> MatchingResult:
    """Maximum cardinality matching of a bipartite graph.

    A matching is a set of edges of which no two share a vertex; a maximum
    one has the most edges. By Berge's theorem a matching is maximum exactly
    when no augmenting path (an alternating path between two unmatched
    vertices) is left, which every method below uses to stop, and which
    :func:`jaxmatch.certify.check_maximum_matching` checks with a Koenig
    vertex cover. Every method starts from the ``init`` matching and returns
    a maximum matching (the cardinality is the same for all; the matching
    found may differ).

    Papers: G-PR is M. Deveci, K. Kaya, B. Ucar and U. V. Catalyurek, "A
    push-relabel-based maximum cardinality bipartite matching algorithm on
    GPUs", ICPP 2013; APFB and APsB with GPUBFS and GPUBFS-WR are the same
    authors' "GPU accelerated maximum cardinality matching algorithms for
    bipartite graphs", Euro-Par 2013; MS-BFS-Graft is A. Azad, A. Buluc and
    A. Pothen, "A parallel tree grafting algorithm for maximum cardinality
    matching in bipartite graphs", IPDPS 2015. Each module of
    :mod:`jaxmatch.bipartite` describes its array form and where it departs
    from the paper's GPU or OpenMP code (races become scatter-min picks, so
    runs are deterministic).

    Cost: a G-PR push step costs O(slots + ``lanes``), slots being the free
    columns after the start (eagerly; the column capacity under tracing),
    and a global relabel O(``|E|``) per BFS level. An APFB, APsB or
    MS-BFS-Graft phase costs O(``|E|``) per BFS level plus O(n) per
    augmentation step, and at most ``min(n_rows, n_cols) + 1`` phases run
    (O(n ``|E|``) in all). Works eagerly, under ``jax.jit`` and under
    ``jax.vmap`` over a batch made by :func:`jaxmatch.stack`.

    ``method="auto"`` runs MS-BFS-Graft until its BFS levels reach
    ``auto_levels * sqrt(max(n_rows, n_cols))``, then, if it has not
    finished, G-PR from graft's matching. Why: graft is the fastest method
    or close to it except where the alternating BFS needs very many levels
    (road-like grids in their natural order), where G-PR is faster. That BFS
    depth, measured as graft runs, is what decides: statistics of the graph
    alone (sizes, degrees) are the same for a grid and its random
    permutation, which need different methods. Where G-PR's push rounds run
    in the persistent kernel (the GPU default, on graphs whose columns all
    have at most ``Config.push_max_degree`` rows) a G-PR round costs less
    than a BFS level, and G-PR alone is fastest or close on every benchmark
    class: there ``"auto"`` is G-PR from the start. Off the GPU a BFS level
    and a push step are each a pass over the graph's arrays, and G-PR alone
    was the fastest method on every class measured there (random, road,
    Delaunay, RMAT, power-law graphs and unions of small graphs), so the
    default budget is 0 there: G-PR from the start (unless ``kernel`` is given: its interpreter keeps the GPU's
    rule). The measurements are in experiments/RESULTS.md.

    Args:
        g: the :class:`jaxmatch.BipartiteGraph`; a batch from
            :func:`jaxmatch.stack` under ``jax.vmap``, or eagerly (outside
            ``jit``): the result then has a leading batch axis, padded as
            under ``vmap``; on the GPU the batch runs as one jitted
            ``vmap``, elsewhere the :func:`jaxmatch.disjoint_union` of
            runs of its graphs (:func:`jaxmatch.graph.solve_union`), each
            run's ``status`` and ``stats`` for its graphs
            (:func:`jaxmatch.graph.batch_route`); or a
            :class:`jaxmatch.ShardedBipartiteGraph` (:func:`jaxmatch.shard`):
            its edges split over devices, solved with ``method="apfb"``,
            ``"apsb"`` or ``"graft"`` from the empty matching under
            ``jax.shard_map`` (:mod:`jaxmatch.bipartite.sharded`; only
            ``bfs``, ``graft``, ``direction_optimizing``, ``alpha``,
            ``max_iters`` and ``throw`` apply there).
        method: the solver.

            - ``"pr"`` (the default): G-PR push-relabel. Labels are lower
              bounds on the alternating distance to a free row; every active
              column pushes to its lowest-labelled neighbour row at once, and
              a global relabel (a BFS from the free rows) resets the labels
              every ``k * maxLevel`` steps.
            - ``"flow"``: unit-capacity max flow with a super source and
              sink, by :func:`jaxmatch.max_flow` (WBPR push-relabel; ``init``,
              ``k`` and ``lanes`` do not apply, ``max_iters`` bounds the
              flow solver).
            - ``"apfb"`` / ``"apsb"``: phases of alternating BFS from all free
              columns, then augmentation along all paths found; APFB runs the
              BFS out, APsB stops it at the first level that finds a path
              (shortest paths, as Hopcroft-Karp). ``bfs`` picks the BFS.
            - ``"graft"``: MS-BFS-Graft: vertex-disjoint alternating BFS
              trees from all free columns, grown top-down or bottom-up by the
              direction-optimising rule, augmentation along all their paths
              at once, and tree grafting between phases.
            - ``"auto"``: MS-BFS-Graft, then G-PR (see above); ``stats``
              holds graft's counters and G-PR's prefixed ``pr_`` (zero when
              G-PR did not run).

        init: the initial matching: ``"karp_sipser"`` (the default),
            ``"cheap"``, or None for the empty matching (see
            :func:`initial_matching`).
        max_iters: bound on the solver's loop steps. None (the default):
            ``16 * (row_cap + col_cap) + 1024`` steps for G-PR;
            ``min(row_cap, col_cap) + 1`` phases for APFB, APsB and
            MS-BFS-Graft (never hit); the flow solver's default for
            ``"flow"``; ``"auto"`` bounds each of its loops as for that method.
            A traced value in the compiled solver: another bound does not
            recompile.
        k: G-PR's adaptive global-relabel factor: the next global relabel
            runs ``k * maxLevel`` push steps after the last (default 0.7,
            the paper's best; None: the default).
        init_rounds: bound on the rounds of the initial matching (default
            64; None: the default).
        lanes: the number of edges a G-PR push step scans at once (its
            active columns' edges spread evenly over the lanes; a step with
            more edges loops over windows of this size). None (default):
            ``2**18`` on the GPU; elsewhere, where a step's cost is its lanes'
            work rather than a fixed overhead, the edge capacity over 128
            (between ``2**10`` and ``2**18``).
        bfs: the BFS of APFB and APsB: ``"gpubfs_wr"`` (the default: a tree
            stops growing once it has found a path, and APsB keeps one path
            end per root) or ``"gpubfs"`` (plain level-synchronous BFS).
        graft: MS-BFS-Graft's tree grafting (default True); False dismantles
            all trees after every phase.
        direction_optimizing: MS-BFS-Graft grows top-down or bottom-up by the
            ``alpha`` rule (default True); False always grows top-down.
        alpha: MS-BFS-Graft's direction and graft switches: bottom-up when
            ``|frontier| * alpha >= #unvisited rows``, grafting when
            ``|active columns| * alpha > |renewable rows|`` (default 5.0,
            the paper's; None: the default).
        auto_levels: ``"auto"``'s graft budget in BFS levels per square root
            of the larger side (None, the default: 4.0 on the GPU, 0
            elsewhere, see above). A traced value: changing it does not
            recompile.
        kernel: G-PR's global relabels (``"pr"``, and ``"auto"``'s G-PR) in
            the persistent BFS kernel of :mod:`jaxmatch.kernels.bfs_level`
            (many BFS levels per launch), and its push rounds in
            :mod:`jaxmatch.kernels.push_match` (many rounds per launch;
            ``Config.push=False`` keeps them in XLA, as does a column of more
            than ``Config.push_max_degree`` rows). True, False, a
            :class:`jaxmatch.kernels.bfs_level.Config` (the kernel's knobs),
            or None (the default: on the GPU outside ``vmap``, off
            elsewhere). Refused under ``vmap``; asked for on a CPU it runs in
            Pallas's interpreter, for tests. The same cardinality either way;
            with the push kernel the matching found and the counters may
            differ.
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when a bound stops the solver first (default True);
            under ``jit``/``vmap`` it has no effect: read ``status`` instead.

    Returns:
        A :class:`MatchingResult`: ``row_mate``, ``col_mate``,
        ``cardinality``, ``status`` and ``stats``.

    Raises:
        GraphInputError: when ``g`` is not a BipartiteGraph (or is a batch
            under ``jit`` outside ``vmap``), its capacities overflow int32 labels, an option
            is not one of the accepted values, not positive or not finite, or
            the kernel is asked for under ``vmap``. All checked before tracing.
        SolverError: eagerly with ``throw=True``, when a bound stopped the
            solver before the matching was maximum.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1])
        >>> res = jaxmatch.maximum_matching(g)
        >>> int(res.cardinality), res.status_name
        (2, 'converged')
        >>> res = jaxmatch.maximum_matching(g, method="graft", init=None)
        >>> int(res.cardinality), int(res.stats["phases"])
        (2, 2)
    """
    if isinstance(g, ShardedBipartiteGraph):
        return _sharded_matching(g, method, max_iters, bfs, graft, direction_optimizing, alpha, throw)
    if _graph.eager_batch(g, BipartiteGraph):
        return _batch_matching(g, dict(method=method, init=init, max_iters=max_iters, k=k, init_rounds=init_rounds,
                                       lanes=lanes, bfs=bfs, graft=graft, direction_optimizing=direction_optimizing,
                                       alpha=alpha, auto_levels=auto_levels, kernel=kernel, throw=throw))
    _check_graph(g)
    _check_choice(method, METHODS, "method")
    _check_choice(init, INITS, "init")
    check_positive(max_iters, "max_iters")
    check_positive(init_rounds, "init_rounds")
    check_positive(k, "k", float)
    if k is not None and not np.isfinite(k):
        raise GraphInputError(f"k must be finite, got {k!r}")
    check_positive(lanes, "lanes")
    _check_choice(bfs, _ap.BFS, "bfs")
    graft, direction_optimizing = check_flag(graft, "graft"), check_flag(direction_optimizing, "direction_optimizing")
    check_flag(throw, "throw")
    kernel = _bfs_level.choose(kernel, g.by_row.indptr)
    check_positive(alpha, "alpha", float)
    check_positive(auto_levels, "auto_levels", float)
    if auto_levels is not None and not np.isfinite(auto_levels):
        raise GraphInputError(f"auto_levels must be finite, got {auto_levels!r}")
    if alpha is not None and not np.isfinite(alpha):
        raise GraphInputError(f"alpha must be finite, got {alpha!r}")
    # None: the default (the values in the signature)
    k = _pr.DEFAULT_K if k is None else float(k)
    init_rounds = _init.DEFAULT_ROUNDS if init_rounds is None else min(int(init_rounds), INT32_MAX)
    max_iters = None if max_iters is None else min(int(max_iters), INT32_MAX)  # loop counters are int32
    if lanes is None:   # the backend known at trace time, as for max_flow's lanes
        lanes = _pr.DEFAULT_LANES if jax.default_backend() == "gpu" else _pr.cpu_lanes(g.edge_cap)
    lanes = int(lanes)
    alpha = _graft.DEFAULT_ALPHA if alpha is None else float(alpha)
    if auto_levels is None:     # the backend known at trace time, as for lanes; a kernel Config given off
        # the GPU (its interpreter) keeps the GPU's rule
        auto_levels = AUTO_LEVELS if jax.default_backend() == "gpu" or kernel is not None else 0.0
    auto_levels = float(auto_levels)
    res = _matching(g, method, init, max_iters, k, init_rounds, lanes, bfs, graft, direction_optimizing, alpha,
                    auto_levels, kernel)
    return settle("maximum_matching", res, throw)


def _batch_matching(batch: BipartiteGraph, options: dict) -> MatchingResult:
    """A batch, eagerly: on the GPU one jitted ``vmap``; elsewhere its disjoint unions
    (:func:`jaxmatch.graph.solve_union`), read back graph by graph and padded as under vmap (the faster
    route on each: experiments/RESULTS.md)."""
    throw = options.pop("throw")
    if _graph.batch_route() == "vmap":
        return settle("maximum_matching", _vmapped(tuple(sorted(options.items())))(batch), throw)

    def one(run, union, off):   # one part's graphs (graph.solve_union)
        res = maximum_matching(union, **options, throw=throw)
        rows = split_union(res.row_mate, off["n_rows"], batch.row_cap, -1)
        cols = split_union(res.col_mate, off["n_cols"], batch.col_cap, -1)
        rows = np.where(rows >= 0, rows - off["n_cols"][:-1, None], -1).astype(np.int32)
        cols = np.where(cols >= 0, cols - off["n_rows"][:-1, None], -1).astype(np.int32)
        return (rows, cols), res

    (rows, cols), status, stats = _graph.solve_union(batch, one)
    return MatchingResult(jnp.asarray(rows), jnp.asarray(cols), jnp.sum(rows >= 0, axis=1, dtype=jnp.int32),
                          jnp.asarray(status), {k: jnp.asarray(v) for k, v in stats.items()})


@functools.lru_cache(maxsize=32)
def _vmapped(options: tuple):
    return jax.jit(jax.vmap(partial(maximum_matching, **dict(options), throw=False)))


def _sharded_matching(g, method, max_iters, bfs, graft, direction_optimizing, alpha, throw) -> MatchingResult:
    """APFB/APsB or MS-BFS-Graft on a graph split over devices (:mod:`jaxmatch.bipartite.sharded`), from the
    empty matching."""
    if method not in _ap.METHODS + ("graft",):
        raise GraphInputError(f"a ShardedBipartiteGraph runs method='apfb', 'apsb' or 'graft', got {method!r}")
    _check_choice(bfs, _ap.BFS, "bfs")
    check_positive(max_iters, "max_iters")
    graft, direction_optimizing = check_flag(graft, "graft"), check_flag(direction_optimizing, "direction_optimizing")
    check_positive(alpha, "alpha", float)
    if alpha is not None and not np.isfinite(alpha):
        raise GraphInputError(f"alpha must be finite, got {alpha!r}")
    check_flag(throw, "throw")
    phases = _ap.default_phases(g) if max_iters is None else min(int(max_iters), INT32_MAX)
    row_mate, col_mate, status, stats = _sharded.solve(
        g, method=method, bfs=bfs, max_iters=phases, graft=bool(graft), direction_optimizing=bool(direction_optimizing),
        alpha=_graft.DEFAULT_ALPHA if alpha is None else float(alpha))
    stats = dict(stats, init_rounds=jnp.int32(0))      # the same counters as the unsharded run's
    return settle("maximum_matching", _finish(g, row_mate, col_mate, status, stats), throw)


def _matching(g, method, init, max_iters, k, init_rounds, lanes, bfs, graft, direction_optimizing, alpha,
              auto_levels, kernel):
    if method == "flow":
        return _by_flow(g, max_iters)
    row_mate, col_mate, rounds = _start(g, init=init, init_rounds=init_rounds)
    phases = _ap.default_phases(g) if max_iters is None else max_iters   # traced in _solve: no recompilation
    graft_opts = dict(k=0.0, lanes=0, slots=None, bfs=None,
                      graft=bool(graft), direction_optimizing=bool(direction_optimizing), alpha=float(alpha))
    if method == "auto":
        budget = _auto_levels(g, auto_levels)
        if kernel is not None and kernel.push:   # G-PR's push rounds run in the kernel: G-PR from the start
            budget = jnp.where(_pr.push_kernel_runs(g, kernel), 0, budget)
        out = _solve(g, row_mate, col_mate, method="graft", max_iters=phases, **graft_opts, max_levels=budget)
        pr = _push_relabel(g, out[0], out[1], max_iters, k, lanes, kernel, skip=out[2] == 0)
        stats = dict(out[3], **{f"pr_{key}": v for key, v in pr[3].items()})
        return _finish(g, pr[0], pr[1], jnp.where(out[2] == 0, out[2], pr[2]), dict(stats, init_rounds=rounds))
    if method == "pr":
        out = _push_relabel(g, row_mate, col_mate, max_iters, k, lanes, kernel)
    else:  # options that do not apply are fixed, so they cause no recompilation
        opts = graft_opts if method == "graft" else dict(k=0.0, lanes=0, slots=None, bfs=bfs)
        out = _solve(g, row_mate, col_mate, method=method, max_iters=phases, **opts)
    return _finish(g, *out[:3], dict(out[3], init_rounds=rounds))


def _auto_levels(g, per_root: float):
    """graft's level budget under ``method="auto"``: ``per_root`` * sqrt of the larger side."""
    n = jnp.maximum(g.n_rows, g.n_cols)    # eager, traced or vmapped alike
    return jnp.ceil(jnp.float32(per_root) * jnp.sqrt(n.astype(jnp.float32))).astype(jnp.int32)


def _push_relabel(g, row_mate, col_mate, max_iters, k, lanes, kernel, skip=None):
    """G-PR from a matching; eagerly with an active list sized to its free columns. ``skip``
    (``method="auto"``: graft already finished): eagerly G-PR does not run (zero counters);
    under tracing it runs (its first global relabel finds no free column to work on)."""
    if max_iters is None:
        max_iters = 16 * (g.row_cap + g.col_cap) + 1024
    opts = dict(method="pr", max_iters=max_iters, k=float(k), lanes=lanes, bfs=None, kernel=kernel)
    if skip is not None and not is_traced(skip) and not is_traced(g.n_cols) and bool(skip):
        zero = jnp.int32(0)
        return row_mate, col_mate, zero, dict(iterations=zero, global_relabels=zero, pushes=zero, bfs_levels=zero)
    # the start may be concrete on a traced graph (init=None under vmap: its mates do not depend
    # on the graph), so the graph decides too
    slots = None if is_traced(row_mate) or is_traced(g.n_cols) else active_slots(g, col_mate)
    return _solve(g, row_mate, col_mate, slots=slots, **opts)


def _by_flow(g, max_iters) -> MatchingResult:
    """Matching as a unit-capacity max flow (WBPR), as in the WBPR paper's matching experiments."""
    from jaxmatch.flow import matching_from_flow, matching_network, max_flow

    net, source, sink = matching_network(g)
    res = max_flow(net, source, sink, max_iters=max_iters, throw=False)
    row_mate, col_mate = matching_from_flow(g, res.flow)
    return _finish(g, row_mate, col_mate, res.status, dict(res.stats))


def active_slots(g, col_mate) -> int:
    """Eager length of the active-column list: the free columns left by the start, as a
    power of two (graphs of up to 4096 columns keep the full list: one compilation per capacity)."""
    free = int(np.sum(np.asarray(col_mate)[:int(g.n_cols)] == -1))
    return max(next_pow2(free), min(g.col_cap, 4096))


@partial(jax.jit, static_argnames=("init", "init_rounds"))
def _start(g, *, init, init_rounds):
    if init is None:
        return (*_init.empty_matching(g), jnp.int32(0))
    return _init.initial_matching_arrays(g, init, init_rounds)


@partial(jax.jit, static_argnames=("method", "k", "lanes", "slots", "bfs", "graft", "direction_optimizing",
                                   "alpha", "kernel"))
def _solve(g, row_mate, col_mate, *, method, max_iters, k, lanes, slots, bfs,
           graft=None, direction_optimizing=None, alpha=None, max_levels=None, kernel=None):
    if method == "graft":
        return _graft.ms_bfs_graft(g, row_mate, col_mate, graft=graft, direction_optimizing=direction_optimizing,
                                   alpha=alpha, max_iters=max_iters, max_levels=max_levels)
    if method in _ap.METHODS:
        return _ap.augmenting_paths(g, row_mate, col_mate, method=method, bfs=bfs, max_iters=max_iters)
    return _pr.push_relabel(g, row_mate, col_mate, max_iters=max_iters, k=k, lanes=lanes, slots=slots,
                            kernel=kernel, interpret=kernel is not None and jax.default_backend() != "gpu")
