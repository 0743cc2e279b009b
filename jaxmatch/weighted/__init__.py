"""Half-approximate weighted matching: Suitor, Locally-Dominant, b-Suitor and greedy references.

All algorithms share one strict total order on edges (see
:mod:`jaxmatch.weighted.suitor`): heavier first, equal weights broken by the
smaller (min id, max id) pair. Under that order each returns exactly the
sequential greedy matching (b-matching), :func:`greedy_matching`
(:func:`greedy_b_matching`), whose weight is at least half the optimum.

Input rules: a :class:`jaxmatch.Graph` (symmetric by construction; build an
asymmetric matrix with ``jaxmatch.from_scipy(A, kind="graph",
symmetrize=True)``). Weights are finite and non-negative (checked by the
graph constructors); zero-weight edges are dropped, as the paper does, and
self-loops are ignored (a loop can never be matched).

This module holds the public functions and their results: it checks the
options on the host, runs the jitted array algorithms of
:mod:`jaxmatch.weighted.suitor`, :mod:`jaxmatch.weighted.locally_dominant`
and :mod:`jaxmatch.weighted.b_suitor`, and sums the matched weight; the numpy
references are in :mod:`jaxmatch.weighted.greedy`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import device, is_traced, take, trim
from jaxmatch.status import settle, with_status_name
from jaxmatch._validate import INT32_MAX, check_flag, check_not_batch, check_positive, check_type
from jaxmatch.graph import Graph, GraphInputError
from jaxmatch.shard import ShardedGraph
from jaxmatch.weighted import b_suitor as _bs
from jaxmatch.weighted import locally_dominant as _ld
from jaxmatch.weighted import sharded as _sh
from jaxmatch.weighted import suitor as _su
from jaxmatch.weighted.greedy import greedy_b_matching, greedy_matching

__all__ = [
    "WeightedMatchingResult", "BMatchingResult", "suitor", "locally_dominant", "b_suitor",
    "greedy_matching", "greedy_b_matching",
]

MAX_VERTEX_CAP = 1 << 29   # ring-queue index arithmetic stays inside int32
MAX_LANES = 1 << 30


@with_status_name
class WeightedMatchingResult(NamedTuple):
    """A matching, as returned by :func:`suitor` and :func:`locally_dominant`.

    Eagerly ``mate`` has length n; under ``jit``/``vmap`` it keeps the
    graph's vertex capacity, with -1 past the true size. ``status_name``
    gives the status in words.

    Attributes:
        mate: int32 ``[n]``: v's partner, or -1 when v is unmatched.
        weight: scalar of the weights' dtype: the total weight of the matched edges.
        cardinality: int32 scalar: the number of matched edges.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED (the
            matching is the greedy matching) or MAX_ITERS (a valid matching,
            possibly smaller).
        stats: dict of work counters: ``iterations`` (loop steps, also as
            ``rounds``), ``proposals`` (proposals made; for LD, candidates
            set) and ``scanned`` (adjacency entries examined).
    """

    mate: jax.Array
    weight: jax.Array
    cardinality: jax.Array
    status: jax.Array
    stats: dict[str, Any]


@with_status_name
class BMatchingResult(NamedTuple):
    """A b-matching, as returned by :func:`b_suitor`.

    Eagerly trimmed to n_entries entries and n rows; padded to the
    capacities under ``jit``/``vmap``. ``status_name`` gives the status in
    words.

    Attributes:
        matched: bool ``[n_entries]``: a mask over the graph's stored entries
            (aligned with ``g.adj``: entry k is ``adj.src[k] ->
            adj.indices[k]``), True for both stored copies of every matched edge.
        partners: int32 ``[n, max_b]``: each vertex's partners in the edge
            order (heaviest first), -1 padded.
        weight: scalar of the weights' dtype: the total weight of the matched edges.
        cardinality: int32 scalar: the number of matched edges.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED (the
            b-matching is the greedy b-matching) or MAX_ITERS (a valid
            b-matching, possibly smaller).
        stats: dict of work counters, as in :class:`WeightedMatchingResult`.
    """

    matched: jax.Array
    partners: jax.Array
    weight: jax.Array
    cardinality: jax.Array
    status: jax.Array
    stats: dict[str, Any]


# --------------------------------------------------------------------------
# validation (on the host, before tracing)


def _check_graph(g) -> None:
    check_type(g, Graph, "Graph.from_edges or jaxmatch.from_scipy(A, kind='graph')")
    check_not_batch(g.n, "graphs (from jaxmatch.stack)", "jax.vmap(lambda g: suitor(g).mate)(batch)")
    _check_vertex_cap(g.vertex_cap)


def _check_vertex_cap(cap: int) -> None:
    if cap > MAX_VERTEX_CAP:
        raise GraphInputError(f"vertex_cap = {cap} is above the supported {MAX_VERTEX_CAP}")




# default vertices per round, as a fraction of the vertex capacity: smaller
# batches make fewer wasted proposals, larger ones fewer rounds (the
# measurements behind these values are in experiments/RESULTS.md)
BATCH_DIVISOR = {"suitor": 4, "b_suitor": 16}


def _defaults(g, max_iters, batch, lanes, divisor=1):
    for v, name in ((max_iters, "max_iters"), (batch, "batch"), (lanes, "lanes")):
        check_positive(v, name)
    max_iters = int(max_iters) if max_iters is not None else g.entry_cap + g.vertex_cap + 2
    max_iters = min(max_iters, INT32_MAX)  # a traced int32 operand: no recompilation per value
    batch = min(int(batch or max(g.vertex_cap // divisor, 1)), g.vertex_cap)
    lanes = min(int(lanes or 2 * batch), MAX_LANES)
    return max_iters, batch, lanes




def _weight(g, both_ends_matched):
    """Total weight of the edges whose entries are marked (counted once, src < dst)."""
    once = both_ends_matched & (g.adj.src < g.adj.indices)
    return jnp.sum(jnp.where(once, g.adj.weights, 0)), jnp.sum(once, dtype=jnp.int32)


def _finish(g, mate, status, stats, solver, throw) -> WeightedMatchingResult:
    entry_matched = take(mate, g.adj.src, -1) == g.adj.indices
    weight, card = _weight(g, entry_matched)
    if not is_traced(g.n):
        mate = trim(mate, int(g.n))
    return settle(solver, WeightedMatchingResult(mate, weight, card, status, dict(stats, iterations=stats["rounds"])),
                  throw)


# --------------------------------------------------------------------------
# public functions


def suitor(g: Graph, *, sorted_adjacency: bool = False, max_iters: int | None = None,
           batch: int | None = None, lanes: int | None = None, throw: bool = True) -> WeightedMatchingResult:
    """Half-approximate maximum weight matching by the Suitor algorithm (array form).

    All edges are ranked by one strict order: heavier first, equal weights
    by the smaller ``(min(u, v), max(u, v))`` pair. Every vertex u proposes to
    its first neighbour v in that order whose held offer is worse than
    ``rank(u, v)``; v keeps the best offer it gets, and the suitor it
    displaces proposes again. The mutual suitors form the matching, which is
    exactly the sequential greedy matching (:func:`greedy_matching`), of
    weight at least half the maximum (``w(M) >= w(M*) / 2`` for a maximum
    weight matching ``M*``).

    Papers: F. Manne and M. Halappanavar, "New effective multithreaded
    matching algorithms", IPDPS 2014 (Suitor); Md. Naim, F. Manne, M.
    Halappanavar, A. Tumeo and J. Langguth, "Optimizing approximate weighted
    matching on Nvidia Kepler K40", HiPC 2015 (the GPU form, Algorithms
    3-4); F. Manne, Md. Naim, H. Lerring and M. Halappanavar, "On stable
    marriages and greedy matchings", CSC 2016 (Suitor as McVitie-Wilson, its
    answer the greedy matching). The array form is in
    :mod:`jaxmatch.weighted.suitor`.

    Cost: by default (``sorted_adjacency=False``) no sort; O(``|E|``) in
    round one, then O(``|E|`` / 32 + ``|V|``) to O(``|E|`` + ``|V|``) per round by
    the proposers' rows; with ``sorted_adjacency=True``, O(``|E|``) sorting
    work once (radix sorts) plus O(batch + lanes) per round, and O(``|E|``)
    pointer moves in all. Works eagerly, under ``jax.jit`` and under
    ``jax.vmap`` over a batch from :func:`jaxmatch.stack`.

    A :class:`jaxmatch.ShardedGraph` (:func:`jaxmatch.shard`) runs the
    proposal rounds split over its devices with ``jax.shard_map``
    (:mod:`jaxmatch.weighted.sharded`): the same matching; ``sorted_adjacency``,
    ``batch`` and ``lanes`` do not apply there.

    Args:
        g: the :class:`jaxmatch.Graph`, with finite non-negative weights
            (zero-weight edges and self-loops are ignored), or a
            :class:`jaxmatch.ShardedGraph`.
        sorted_adjacency: False (the default): every round, all vertices
            that need a partner rescan their whole lists for the heaviest
            neighbour whose offer they beat (the weights' bits as integer
            keys, no ranking sort; after round one only the proposers' rows
            on graphs of at least 2^16 entries: :mod:`jaxmatch.weighted.sharded`'s
            rounds on one device). True: neighbour lists sorted by rank once
            and a pointer per vertex; the vertices that need a partner wait in
            a ring queue, and a round takes up to ``batch`` of them. Both
            give the same matching. False was 2.0-2.5x faster on an H100 at
            10^7 edges on RMAT, Delaunay, RGG, road and power-law graphs,
            and 5.5x under ``vmap`` over 2,000 64-vertex graphs on a CPU;
            True was 1.4x faster on a CPU on paths of increasing weights
            (one proposal per round; RESULTS, session 31).
        max_iters: bound on the rounds (default ``entry_cap + vertex_cap +
            2``, always enough; None: the default).
        batch: queued vertices per round with ``sorted_adjacency=True``
            (default ``vertex_cap // 4``; None: the default).
        lanes: adjacency entries examined per round in all, spread evenly
            over the batch's windows (default ``2 * batch``; None: the default).
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when ``max_iters`` stops it first (default True); under
            ``jit``/``vmap`` it has no effect: read ``status`` instead.

    Returns:
        A :class:`WeightedMatchingResult`: ``mate``, ``weight``,
        ``cardinality``, ``status`` and ``stats``.

    Raises:
        GraphInputError: when ``g`` is not a single :class:`jaxmatch.Graph`
            (or a batch outside ``vmap``), its vertex capacity is above
            ``2**29``, or an option is not a positive int / bool. Checked
            before tracing.
        SolverError: eagerly with ``throw=True``, when ``max_iters`` stopped
            the rounds first.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> res = jaxmatch.suitor(g)
        >>> res.mate.tolist(), float(res.weight), res.status_name
        ([-1, 2, 1, -1], 2.0, 'converged')
    """
    if isinstance(g, ShardedGraph):
        return _suitor_sharded(g, max_iters, throw)
    _check_graph(g)
    sorted_adjacency = check_flag(sorted_adjacency, "sorted_adjacency")
    check_flag(throw, "throw")
    max_iters, batch, lanes = _defaults(g, max_iters, batch, lanes, BATCH_DIVISOR["suitor"])
    return _finish(g, *_suitor(g, jnp.int32(max_iters), sorted_adjacency=sorted_adjacency,
                                batch=batch, lanes=lanes), "suitor", throw)


def _suitor_sharded(g: ShardedGraph, max_iters, throw) -> WeightedMatchingResult:
    """Suitor on a graph split over devices: rounds settled by the targets' owners (:mod:`jaxmatch.weighted.sharded`)."""
    check_flag(throw, "throw")
    check_positive(max_iters, "max_iters")
    _check_vertex_cap(g.vertex_cap)
    bound = g.shards * g.entry_cap + g.vertex_cap + 2
    limit = jnp.int32(min(bound if max_iters is None else max_iters, INT32_MAX))
    mate, weight, card, status, stats = _sh.solve(g, limit)
    if not is_traced(mate):
        mate = trim(mate, int(g.n))
    return settle("suitor", WeightedMatchingResult(mate, weight, card, status, dict(stats, iterations=stats["rounds"])),
                  throw)


@partial(jax.jit, static_argnames=("sorted_adjacency", "batch", "lanes"))
def _suitor(g, max_iters, *, sorted_adjacency, batch, lanes):
    if not sorted_adjacency:
        return _sh.dense_arrays(g, max_iters=max_iters)
    return _su.suitor_arrays(g, max_iters=max_iters, batch=batch, lanes=lanes)


def locally_dominant(g: Graph, *, sorted_adjacency: bool = False, max_iters: int | None = None,
                     lanes: int | None = None, throw: bool = True) -> WeightedMatchingResult:
    """Half-approximate maximum weight matching by the Locally-Dominant algorithm.

    An edge is locally dominant when it comes first, in the edge order of
    :func:`suitor` (heavier first, ties by the smaller vertex pair), among
    the unmatched edges at both its ends. Every unmatched vertex points at
    its first unmatched neighbour (its candidate); mutual pointers are
    matched; vertices whose candidate was taken look again; rounds run
    until no unmatched vertex has an unmatched neighbour. The globally first
    remaining edge is always mutual, so every round with work left matches
    an edge, and the result equals :func:`greedy_matching`, of weight at least
    half the maximum.

    Papers: R. Preis, "Linear time 1/2-approximation algorithm for maximum
    weighted matching in general graphs", STACS 1999; F. Manne and R. H.
    Bisseling, "A parallel approximation algorithm for the weighted maximum
    matching problem", PPAM 2007 (the pointer algorithm); Md. Naim, F.
    Manne, M. Halappanavar, A. Tumeo and J. Langguth, "Optimizing
    approximate weighted matching on Nvidia Kepler K40", HiPC 2015
    (Algorithms 1-2, the GPU form). The array form is in
    :mod:`jaxmatch.weighted.locally_dominant`.

    Cost: with ``sorted_adjacency=True``, O(``|E|``) sorting work once plus
    O(vertex_cap + lanes) per round, a matched neighbour skipped once and
    never examined again; with False, O(``|E|``) per round. Works eagerly,
    under ``jax.jit`` and under ``jax.vmap``.

    Args:
        g: the :class:`jaxmatch.Graph`, with finite non-negative weights
            (zero-weight edges and self-loops are ignored).
        sorted_adjacency: False (the default): every stale vertex rescans
            its whole list each round (the paper's Algorithm 2) for its
            heaviest unmatched neighbour, the weights' bits as integer keys
            (no ranking sort). True: a pointer into each neighbour list
            sorted by rank replaces the rescan. Both give the same matching.
            False was 1.6-3.1x faster on an H100 at 10^7 edges on RMAT,
            Delaunay, RGG, road and power-law graphs, 7.5x under ``vmap``
            over 2,000 64-vertex graphs and 3.7x on a 20,000-vertex path on
            a CPU (RESULTS, session 31).
        max_iters: bound on the rounds (default ``entry_cap + vertex_cap +
            2``, always enough; None: the default).
        lanes: adjacency entries examined per round in all, with
            ``sorted_adjacency=True`` (default ``2 * vertex_cap``; None: the default).
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when ``max_iters`` stops it first (default True); under
            ``jit``/``vmap`` it has no effect: read ``status`` instead.

    Returns:
        A :class:`WeightedMatchingResult`: ``mate``, ``weight``,
        ``cardinality``, ``status`` and ``stats``.

    Raises:
        GraphInputError: when ``g`` is not a single :class:`jaxmatch.Graph`
            (or a batch outside ``vmap``), its vertex capacity is above
            ``2**29``, or an option is not a positive int / bool. Checked
            before tracing.
        SolverError: eagerly with ``throw=True``, when ``max_iters`` stopped
            the rounds first.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> jaxmatch.locally_dominant(g).mate.tolist()
        [-1, 2, 1, -1]
    """
    _check_graph(g)
    sorted_adjacency = check_flag(sorted_adjacency, "sorted_adjacency")
    check_flag(throw, "throw")
    max_iters, _, lanes = _defaults(g, max_iters, None, lanes)
    return _finish(g, *_locally_dominant(g, jnp.int32(max_iters), sorted_adjacency=sorted_adjacency,
                                         lanes=lanes), "locally_dominant", throw)


@partial(jax.jit, static_argnames=("sorted_adjacency", "lanes"))
def _locally_dominant(g, max_iters, *, sorted_adjacency, lanes):
    return _ld.locally_dominant_arrays(g, sorted_adjacency_=sorted_adjacency,
                                       max_iters=max_iters, lanes=lanes)


def _b_input(g, b, max_b):
    """(bounds [vertex_cap] int32, static max_b) from an int or an array of bounds."""
    V = g.vertex_cap
    check_positive(max_b, "max_b")
    if max_b is not None and max_b > INT32_MAX:
        raise GraphInputError(f"max_b = {max_b} does not fit int32")
    if isinstance(b, (bool, np.bool_)):
        raise GraphInputError(f"b must be an integer or an integer array, got {b!r}")
    if isinstance(b, (int, np.integer)):
        if b < 0:
            raise GraphInputError(f"b must be >= 0, got {b}")
        if b > INT32_MAX:
            raise GraphInputError(f"b = {b} does not fit int32")
        if max_b is not None and max_b < b:
            raise GraphInputError(f"max_b = {max_b} is smaller than b = {b}")
        return jnp.full(V, int(b), jnp.int32), int(max_b or max(int(b), 1))
    if is_traced(b):
        if max_b is None:
            raise GraphInputError("b is traced: pass max_b (a static bound on b) as well")
        if b.shape != (V,) or not jnp.issubdtype(b.dtype, jnp.integer):
            raise GraphInputError(f"a traced b must be an integer array of shape ({V},) "
                                  f"(the vertex capacity), got {b.dtype} {b.shape}")
        return b.astype(jnp.int32), int(max_b)
    try:
        arr = np.asarray(b)
    except (ValueError, TypeError):
        raise GraphInputError("b must be an integer or a 1-D integer array, got a ragged or nested sequence") from None
    if arr.ndim != 1 or (arr.size and (arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer))):
        raise GraphInputError(f"b must be an integer or a 1-D integer array, got {arr.dtype} {arr.shape}")
    n = None if is_traced(g.n) else int(g.n)
    if (n is not None and arr.shape[0] not in (n, V)) or arr.shape[0] > V:
        raise GraphInputError(f"b must have one entry per vertex ({n if n is not None else V}), "
                              f"got {arr.shape[0]}")
    if arr.size and arr.min() < 0:
        raise GraphInputError(f"b[{int(np.argmin(arr))}] = {int(arr.min())} is negative")
    top = int(arr.max()) if arr.size else 0
    if max_b is not None and max_b < top:
        raise GraphInputError(f"max_b = {max_b} is smaller than max(b) = {top}")
    if top > np.iinfo(np.int32).max:
        raise GraphInputError(f"max(b) = {top} does not fit int32")
    full = np.zeros(V, np.int32)
    full[:arr.shape[0]] = arr
    return device(full), int(max_b or max(top, 1))


def b_suitor(g: Graph, b=1, *, max_b: int | None = None, sorted_adjacency: bool | None = None,
             max_iters: int | None = None, batch: int | None = None, lanes: int | None = None,
             throw: bool = True) -> BMatchingResult:
    """Half-approximate maximum weight b-matching by the b-Suitor algorithm (array form).

    A b-matching gives every vertex v at most b(v) matched edges. Each vertex
    proposes along the edge order of :func:`suitor` (heavier first, ties by
    the smaller vertex pair) until b(v) of its proposals are held; each
    vertex holds its b(v) best offers, and the proposers it drops propose
    again. The edges whose two ends hold each other's proposal form the
    b-matching, which is exactly the sequential greedy b-matching
    (:func:`greedy_b_matching`), of weight at least half the maximum.

    Papers: A. Khan, A. Pothen, M. M. A. Patwary, N. R. Satish, N. Sundaram,
    F. Manne, M. Halappanavar and P. Dubey, "Efficient approximation
    algorithms for weighted b-matching", SIAM J. Sci. Comput. 38(5), 2016
    (b-Suitor); Md. Naim and F. Manne, "Scalable b-matching on GPUs", 2017
    (Paper II of Md. Naim's thesis, the GPU form); F. Manne, Md. Naim, H.
    Lerring and M. Halappanavar, "On stable marriages and greedy matchings",
    CSC 2016 (the stable-assignment view). The array form is in
    :mod:`jaxmatch.weighted.b_suitor`.

    Cost: with ``sorted_adjacency``, O(``|E| log |E|``) for the sorts, plus
    O((batch + lanes) log batch + batch max_b log max_b) per round; the
    pointers move O(``|E|``) in all. Without it, O(``|E|`` max_b + V
    max_b^2) per round and no sort. Works eagerly, under ``jax.jit`` and
    under ``jax.vmap``.

    Args:
        g: the :class:`jaxmatch.Graph`, with finite non-negative weights
            (zero-weight edges and self-loops are ignored).
        b: the bounds: an int for every vertex (default 1), or an int array
            with one bound per vertex (length n, or the vertex capacity;
            under ``jit``/``vmap`` it must have the vertex capacity's length).
        max_b: a static bound on b (the width of ``partners``); required when
            b is a traced array; None (the default): max(b).
        sorted_adjacency: True: neighbour lists sorted by rank once, a
            pointer per vertex, and a ring queue of the vertices short of
            partners, up to ``batch`` of them a round. False: every round,
            every vertex short of partners rescans its whole row for its
            first neighbour (the weights' bits as integer keys) whose
            b(v)-th offer it beats and that does not hold its proposal, and
            each target keeps its b(v) best offers (no sort: comparisons of
            2 max_b offers a row). Both give the same b-matching. None (the
            default): False up to 2^12 entries (``DENSE_MAX`` of
            :mod:`jaxmatch.weighted.b_suitor`; batches of small graphs),
            True above. On a 2-core CPU False was 0.93x at
            512 entries to 7.9x at 131,072 on random graphs, 2.8x under
            ``vmap`` over 2,000 64-vertex graphs, and 1.7x slower on a path
            of 4,096 entries with increasing weights and b = 1 (one proposal
            a round; RESULTS, session 32); large graphs were not measured on
            a GPU without the sort, so they keep it.
        max_iters: bound on the rounds (default ``entry_cap + vertex_cap +
            2``, always enough; None: the default).
        batch: queued vertices per round with ``sorted_adjacency`` (default
            ``vertex_cap // 16``; None: the default).
        lanes: adjacency entries examined per round in all with
            ``sorted_adjacency`` (default ``2 * batch``; None: the default).
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when ``max_iters`` stops it first (default True); under
            ``jit``/``vmap`` it has no effect: read ``status`` instead.

    Returns:
        A :class:`BMatchingResult`: ``matched``, ``partners``, ``weight``,
        ``cardinality``, ``status`` and ``stats``.

    Raises:
        GraphInputError: when ``g`` is not a single :class:`jaxmatch.Graph`
            (or a batch outside ``vmap``), its vertex capacity is above
            ``2**29``, ``b`` is negative, not integer, of the wrong length or
            above ``max_b``, ``b`` is traced without ``max_b``, or an option
            is not a positive int / bool. Checked before tracing.
        SolverError: eagerly with ``throw=True``, when ``max_iters`` stopped
            the rounds first.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], [4.0, 3.0, 2.0, 1.0])
        >>> res = jaxmatch.b_suitor(g, 2)
        >>> res.partners.tolist(), float(res.weight)
        ([[1, 2], [0, 2], [0, 1], [-1, -1]], 9.0)
    """
    _check_graph(g)
    bvec, max_b = _b_input(g, b, max_b)
    if sorted_adjacency is None:
        sorted_adjacency = g.entry_cap > _bs.DENSE_MAX
    sorted_adjacency = check_flag(sorted_adjacency, "sorted_adjacency")
    check_flag(throw, "throw")
    max_iters, batch, lanes = _defaults(g, max_iters, batch, lanes, BATCH_DIVISOR["b_suitor"])
    matched, partners, status, stats = _b_suitor(g, bvec, jnp.int32(max_iters), max_b=max_b,
                                                 sorted_adjacency=sorted_adjacency, batch=batch, lanes=lanes)
    weight, card = _weight(g, matched)
    if not is_traced(g.n):
        matched, partners = trim(matched, int(g.n_entries)), trim(partners, int(g.n))
    stats = dict(stats, iterations=stats["rounds"])
    return settle("b_suitor", BMatchingResult(matched, partners, weight, card, status, stats), throw)


@partial(jax.jit, static_argnames=("max_b", "sorted_adjacency", "batch", "lanes"))
def _b_suitor(g, bvec, max_iters, *, max_b, sorted_adjacency, batch, lanes):
    if not sorted_adjacency:
        return _bs.dense_arrays(g, bvec, max_b=max_b, max_iters=max_iters)
    return _bs.b_suitor_arrays(g, bvec, max_b=max_b, max_iters=max_iters, batch=batch, lanes=lanes)
