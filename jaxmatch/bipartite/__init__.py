"""Maximum cardinality bipartite matching: the public functions."""
from __future__ import annotations

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
from jaxmatch.kernels import bfs_level as _bfs_level
from jaxmatch.graph import (INT32_MAX, BipartiteGraph, GraphInputError, check_flag, check_not_batch, check_positive,
                            check_type, next_pow2)

__all__ = ["MatchingResult", "maximum_matching", "initial_matching"]

METHODS = ("pr", "flow") + _ap.METHODS + ("graft", "auto")
AUTO_LEVELS = 4.0  # default auto_levels: graft's BFS levels before G-PR takes over, per sqrt(larger side)
INITS = (None,) + _init.METHODS


@with_status_name
class MatchingResult(NamedTuple):
    """A matching: ``row_mate[r]`` is r's column or -1, ``col_mate[c]`` c's row or -1.

    ``status`` is a :class:`jaxmatch.Status`: 0 when the solver converged (the
    matching is maximum), else the bound that stopped it (the matching is
    valid but may not be maximum). ``stats`` holds work counters (iterations, global relabels,
    pushes, BFS levels, initialisation rounds). Eagerly the mates have length
    n_rows and n_cols; under ``jit``/``vmap`` they keep the graph's
    capacities, with -1 past the true sizes.
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

    ``method`` is "cheap" or "karp_sipser" (see :mod:`jaxmatch.bipartite.init`).
    Returns a :class:`MatchingResult` whose status is 0 when the matching is
    maximal, 1 when ``max_rounds`` stopped it first (None: the default,
    ``jaxmatch.bipartite.init.DEFAULT_ROUNDS``; ``throw`` as for
    :func:`maximum_matching`). O(|E|) per round.

    >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
    >>> int(initial_matching(g, "karp_sipser").cardinality)
    2
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
                     init_rounds: int | None = _init.DEFAULT_ROUNDS, lanes: int | None = _pr.DEFAULT_LANES,
                     bfs: str = "gpubfs_wr", graft: bool = True, direction_optimizing: bool = True,
                     alpha: float | None = _graft.DEFAULT_ALPHA, auto_levels: float | None = AUTO_LEVELS,
                     kernel=None, throw: bool = True) -> MatchingResult:
    """Maximum cardinality matching of a bipartite graph.

    Methods: ``"pr"``, G-PR push-relabel (the lock-free GPU push-relabel paper),
    with ``k`` the adaptive global-relabel factor (next relabel after
    ``k * maxLevel`` steps); ``"flow"``, unit-capacity max flow with a super
    source and sink by :func:`jaxmatch.flow.max_flow` (WBPR; ``init``, ``k``
    and ``lanes`` do not apply, ``max_iters`` bounds the flow solver);
    ``"apfb"`` / ``"apsb"``, phases of alternating BFS from all free columns,
    then augmentation along all paths found (APFB: the BFS runs out; APsB: it
    stops at the first level that finds a path), with ``bfs`` "gpubfs" or
    "gpubfs_wr" (a tree stops growing once it found a path); ``max_iters``
    bounds the phases (default ``min(row_cap, col_cap) + 1``, never hit; ``k``
    and ``lanes`` do not apply), see :mod:`jaxmatch.bipartite.augmenting`;
    ``"graft"``, MS-BFS-Graft: vertex-disjoint alternating BFS trees from all
    free columns, direction-optimising (top-down / bottom-up by the rule with
    ``alpha``, the paper's 5), augmentation along all their paths at once, and
    tree grafting between phases; ``graft=False`` rebuilds the forest every
    phase, ``direction_optimizing=False`` always grows top-down; ``max_iters``
    bounds the phases as for APFB, see :mod:`jaxmatch.bipartite.graft`.
    ``"auto"`` runs MS-BFS-Graft until its BFS levels reach ``auto_levels *
    sqrt(max(n_rows, n_cols))`` (a traced value: changing it does not recompile), then, if it has not finished, G-PR from its
    matching (``stats``: graft's counters, and G-PR's prefixed ``pr_``; zero
    when G-PR did not run); ``max_iters`` bounds both loops as for each.
    Why: on the H100 (experiments/RESULTS.md) graft was the fastest method or
    within 1.23x of it on every graph of 2^20-2^22 vertices except the
    road-like grid in its original order, where its phases need 36,271 BFS
    levels (2.4x slower than G-PR); in random order the same grid took 2,531
    levels, Delaunay and geometric graphs under 1,100, Kronecker and
    power-law graphs under 150 (sqrt(2^20) = 1,024). The statistic that
    decides is that BFS depth, measured as graft runs: statistics of the
    graph alone (sizes, degrees) are the same for the grid and its random
    permutation, which need different methods (graft 4.5 s against 0.32 s).
    With G-PR's pushes in the persistent kernel (the GPU default, on graphs
    whose columns all have at most ``Config.push_max_degree`` rows) a G-PR
    round costs 20-40 us against about 100 us for a BFS level in XLA, and G-PR
    alone was the fastest method or within 1.24x of it on every class of the
    benchmark at 2^20 (RESULTS, session 13): there ``"auto"`` is G-PR.
    ``init`` picks the initial matching ("cheap", "karp_sipser" or None for
    empty, run for at most ``init_rounds`` rounds).
    ``max_iters`` bounds the solver's loop (default ``16 * (row_cap + col_cap)
    + 1024``); ``lanes`` is the number of edges a push step scans at once.
    ``k``, ``init_rounds``, ``lanes``, ``alpha`` and ``auto_levels`` given as None take their
    defaults (the values in the signature). ``kernel``: G-PR's global
    relabels (``"pr"``, and ``"auto"``'s G-PR) run in the persistent BFS
    kernel of :mod:`jaxmatch.kernels.bfs_level` (many BFS levels per launch),
    and its push rounds in :mod:`jaxmatch.kernels.push_match` (many rounds
    per launch; ``Config.push=False`` keeps them in XLA, as does a column of
    more than ``Config.push_max_degree`` rows); default: on the GPU; off
    elsewhere, and refused under ``vmap``; asked for on a CPU it runs in
    Pallas's interpreter, for tests; a
    :class:`jaxmatch.kernels.bfs_level.Config` sets its knobs. The same
    cardinality either way; with the push kernel the matching found and the
    counters may differ (see that module). ``throw``: eagerly, raise
    :class:`jaxmatch.SolverError` (holding the result) when a bound stops the
    solver first; under ``jit``/``vmap`` read ``status`` instead.

    Works eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch made
    by :func:`jaxmatch.stack`. A push-relabel step costs O(slots + lanes),
    slots being the free columns after the start (eagerly; the column
    capacity under tracing); a global relabel O(|E|) per BFS level.

    >>> g = BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1])
    >>> res = maximum_matching(g)
    >>> int(res.cardinality), res.status_name
    (2, 'converged')
    >>> res = maximum_matching(g, method="graft", init=None)
    >>> int(res.cardinality), int(res.stats["phases"])
    (2, 2)
    """
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
    lanes = _pr.DEFAULT_LANES if lanes is None else int(lanes)
    alpha = _graft.DEFAULT_ALPHA if alpha is None else float(alpha)
    auto_levels = AUTO_LEVELS if auto_levels is None else float(auto_levels)
    res = _matching(g, method, init, max_iters, k, init_rounds, lanes, bfs, graft, direction_optimizing, alpha,
                    auto_levels, kernel)
    return settle("maximum_matching", res, throw)


def _matching(g, method, init, max_iters, k, init_rounds, lanes, bfs, graft, direction_optimizing, alpha,
              auto_levels, kernel):
    if method == "flow":
        return _by_flow(g, max_iters)
    row_mate, col_mate, rounds = _start(g, init=init, init_rounds=init_rounds)
    graft_opts = dict(k=0.0, lanes=0, slots=None, bfs=None,
                      graft=bool(graft), direction_optimizing=bool(direction_optimizing), alpha=float(alpha))
    if method == "auto":
        budget = _auto_levels(g, auto_levels)
        if kernel is not None and kernel.push:   # G-PR's push rounds run in the kernel: G-PR from the start
            budget = jnp.where(_pr.push_kernel_runs(g, kernel), 0, budget)
        out = _solve(g, row_mate, col_mate, method="graft", max_iters=max_iters, **graft_opts, max_levels=budget)
        pr = _push_relabel(g, out[0], out[1], max_iters, k, lanes, kernel, skip=out[2] == 0)
        stats = dict(out[3], **{f"pr_{key}": v for key, v in pr[3].items()})
        return _finish(g, pr[0], pr[1], jnp.where(out[2] == 0, out[2], pr[2]), dict(stats, init_rounds=rounds))
    if method == "pr":
        out = _push_relabel(g, row_mate, col_mate, max_iters, k, lanes, kernel)
    else:  # options that do not apply are fixed, so they cause no recompilation
        opts = graft_opts if method == "graft" else dict(k=0.0, lanes=0, slots=None, bfs=bfs)
        out = _solve(g, row_mate, col_mate, method=method, max_iters=max_iters, **opts)
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


@partial(jax.jit, static_argnames=("method", "max_iters", "k", "lanes", "slots", "bfs", "graft",
                                   "direction_optimizing", "alpha", "kernel"))
def _solve(g, row_mate, col_mate, *, method, max_iters, k, lanes, slots, bfs,
           graft=None, direction_optimizing=None, alpha=None, max_levels=None, kernel=None):
    if method == "graft":
        return _graft.ms_bfs_graft(g, row_mate, col_mate, graft=graft, direction_optimizing=direction_optimizing,
                                   alpha=alpha, max_iters=max_iters, max_levels=max_levels)
    if method in _ap.METHODS:
        return _ap.augmenting_paths(g, row_mate, col_mate, method=method, bfs=bfs, max_iters=max_iters)
    return _pr.push_relabel(g, row_mate, col_mate, max_iters=max_iters, k=k, lanes=lanes, slots=slots,
                            kernel=kernel, interpret=kernel is not None and jax.default_backend() != "gpu")
