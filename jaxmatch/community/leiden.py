"""The Leiden method in bulk-synchronous array form: the multi-level driver.

Paper: V. A. Traag, L. Waltman, N. J. van Eck, "From Louvain to Leiden:
guaranteeing well-connected communities", Sci. Rep. 9, 5233, 2019. The public
entry point is :func:`jaxmatch.leiden`; :func:`leiden` here is its traced body.

Louvain (:mod:`jaxmatch.community.louvain`) can return a community that does
not induce a connected subgraph: a vertex that bridged two parts of its
community moves out, and the aggregate of the next level fixes the community
as one node, so nothing splits it again. Leiden aggregates by a *refinement*
of the partition instead, whose pieces are connected by construction, and
keeps the partition itself as the start of the next level. One level, on the
current graph (the input graph first, then the aggregates):

1. **Local moving**: Louvain's bucket sweeps
   (:func:`jaxmatch.community.moves.level_sweeps`, the same filters for safe
   simultaneous moves and the same thresholds) from the level's start
   partition (singletons on the input graph, then the last level's partition
   P on the aggregate nodes), giving the partition P of the level's vertices.
2. **Refinement** (:func:`jaxmatch.community.refinement.refine_partition`):
   R starts as singletons; in rounds, every vertex still alone in R and well
   connected to its community of P merges into the well-connected
   subcommunity of its community with the largest non-negative modularity
   gain; a vertex that another candidate targets stays (a mutual pair: the
   smaller id moves). This is the paper's randomised merge in its limit
   theta -> 0 (greedy, deterministic), with the conflicts that the atomics of
   sequential and GVE-Leiden settle in array form. The refinement module's
   docstring argues why every subcommunity stays connected: old members leave
   a subcommunity only when it is a singleton whose vertex moves, which the
   rule forbids when anyone joins it, and every joiner has an edge to an old
   member that stays.
3. **Aggregation** by R (:func:`jaxmatch.community.aggregation.aggregate`):
   every subcommunity becomes a node; the node's start label is its community
   of P (renumbered). So a community of P is a union of connected
   subcommunities, and the next level's local moving can move a subcommunity
   (not a whole community) to another community.

Levels repeat until the aggregate does not shrink (R has as many
subcommunities as the level has vertices): one *pass*. As the paper iterates
the method (and igraph's ``community_leiden`` runs ``n_iterations=2`` by
default), another pass then starts on the input graph from the pass's
partition, while a pass raises the modularity by at least ``threshold``, at
most ``passes`` passes (default 2) and ``max_levels`` levels in all. The
second pass's first level is a multilevel refinement as Louvain's final one,
its refinement and later levels can move whole subcommunities that the first
pass fixed on its coarse levels: one pass alone ends well below igraph's
Leiden on some real graphs (``tests/test_leiden.py`` holds both to 1%).
``levels[l]`` is P after level l on the input
vertices; unlike Louvain's, the rows need not be nested (later levels move
subcommunities between communities, and a new pass starts afresh).

**Safety net.** With the rule above, the aggregate nodes are connected, but a
community of P is a union of nodes that local moving gathered and may leave
disconnected (a node that joined it through a node that later left), and
``max_levels`` may stop the loop early. So the final partition is split into
the connected pieces of each community
(:func:`jaxmatch.community.refinement.split_components`); splitting a
community whose parts share no edge never lowers the modularity. Every
community of the result induces a connected subgraph, unconditionally
(``certify.check_partition(g, labels, connected=True)``);
``stats["split"]`` counts the communities the split added.

Every level keeps the input's capacities (padded with the sentinel id), so
the loop has fixed shapes, compiles once per capacity pair and
:class:`~jaxmatch.community.config.Config`, and vmaps over a batch; the
once-per-level work (bucket grouping, refinement, aggregation, the split)
runs on the smallest of the level classes that holds the level's entries
(:mod:`jaxmatch.community.size_classes`; one class for small capacities).

Cost per level: the local moving's sweeps (:mod:`jaxmatch.community.moves`),
one sort per refinement round (of its candidates' entries), one for the aggregation; at the end
O(entries + n) per iteration of the split.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import take
from jaxmatch.community.aggregation import aggregate, coarse_ids
from jaxmatch.community.buckets import Level, buckets_of
from jaxmatch.community.config import DEFAULT, Config, Options
from jaxmatch.community.louvain import held_records, outcome, renumber, rows_by_smallest_vertex, threshold_of
from jaxmatch.community.modularity import degrees
from jaxmatch.community.moves import level_sweeps
from jaxmatch.community.refinement import refine_partition, split_components
from jaxmatch.community.size_classes import by_class


class LeidenState(NamedTuple):
    graph: Level
    start: jax.Array         # [N] start partition of the current level's vertices (N in padding)
    orig: jax.Array          # [N] vertex of the current level holding each input vertex (-1 padding)
    labels: jax.Array        # [N] P of the last level on the input vertices (-1 padding)
    levels: jax.Array        # [max_levels, N]
    level_q: jax.Array       # [max_levels]
    moves: jax.Array         # [max_levels, max_iters]
    iters: jax.Array         # [max_levels]
    verts: jax.Array         # [max_levels]
    rounds: jax.Array        # [max_levels] refinement rounds of each level
    merges: jax.Array        # [max_levels] vertices the refinement of each level merged
    level: jax.Array
    done: jax.Array
    out_of_levels: jax.Array  # stopped at max_levels while the aggregate still shrank
    hit_max_iters: jax.Array
    passes: jax.Array        # passes of the whole method finished
    pass_q: jax.Array        # modularity at the end of the last pass


def leiden(g, opts: Options, passes, *, max_levels: int, max_iters: int, axis=None, cfg: Config = DEFAULT):
    """The multi-level loop; returns (labels, levels, modularity, level_q, status, stats).

    At most ``passes`` passes (traced) and ``opts.max_levels`` <= ``max_levels`` levels in all
    (the static size of the level records; ``max_iters`` likewise sizes the sweep records and
    bounds the refinement rounds with ``opts.max_iters``), then the split into connected pieces
    on the input graph.
    """
    n_cap = g.vertex_cap
    e_cap = g.adj.src.shape[0]
    ids = jnp.arange(n_cap, dtype=jnp.int32)
    gr0 = Level(g.adj.src, g.adj.indices, g.adj.weights, g.n)
    real0 = ids < g.n
    rounds_max = jnp.minimum(opts.max_iters, max_iters)

    def per_class(fn, gr, *args):      # fn(size, gr, *args) on the smallest class holding gr's entries
        return by_class(fn, jnp.sum(gr.src < n_cap), e_cap, gr, *args, axis=axis, cfg=cfg)

    def body(st: LeidenState) -> LeidenState:
        gr = st.graph
        real = ids < gr.n
        bk = buckets_of(gr, n_cap, axis=axis, cfg=cfg)
        both = (opts.order == 2) & (st.level > 0)
        comm, q, iters, moves, hit = level_sweeps(bk, st.start, opts, threshold_of(opts, bk.movable), both,
                                                  max_iters, axis, cfg)
        part, _ = renumber(comm, real)                     # P, 0 .. k-1 (-1 past n)
        sub, rounds, merges, hit_r = per_class(
            lambda size, gr, comm: refine_partition(gr, comm, opts.resolution, rounds_max, size, axis, cfg),
            gr, comm)
        to_coarse, n_coarse = coarse_ids(sub, real)
        shrinks = n_coarse < gr.n
        level = st.level + 1
        out = level >= opts.max_levels
        end = ~shrinks | out
        # another pass, from P on the input graph, while a pass raises Q by the threshold
        again = end & ~out & (st.passes + 1 < passes) & (q - st.pass_q >= opts.threshold)
        last = end & ~again
        coarse = lax.cond(end, lambda gr, tc: gr,
                          lambda gr, tc: per_class(lambda size, gr, tc: aggregate(gr, tc, n_coarse, size,
                                                                                   cfg.sort_method), gr, tc),
                          gr, to_coarse)
        # the next level starts from P: every aggregate node in its community (R refines P)
        start = jnp.full(n_cap, n_cap, jnp.int32).at[jnp.where(real, to_coarse, n_cap)].set(part, mode="drop")
        labels = take(part, st.orig, -1)
        at = st.level
        graph = Level(*[jnp.where(again, a, b) for a, b in zip(gr0, coarse)])
        start = jnp.where(again, jnp.where(real0, labels, n_cap), start)
        orig = jnp.where(again, jnp.where(real0, ids, -1), take(to_coarse, st.orig, -1))
        return LeidenState(
            graph=graph, start=start, orig=orig, labels=labels,
            passes=st.passes + end.astype(jnp.int32), pass_q=jnp.where(end, q, st.pass_q),
            levels=st.levels.at[at].set(labels, mode="drop"),
            level_q=st.level_q.at[at].set(q, mode="drop"),
            moves=st.moves.at[at].set(moves, mode="drop"),
            iters=st.iters.at[at].set(iters, mode="drop"),
            verts=st.verts.at[at].set(gr.n, mode="drop"),
            rounds=st.rounds.at[at].set(rounds, mode="drop"),
            merges=st.merges.at[at].set(merges, mode="drop"),
            level=level, done=last, out_of_levels=last & shrinks,
            # as in Louvain, a level's iteration cap counts in the last level only
            hit_max_iters=st.hit_max_iters | (last & (hit | hit_r)))

    wdt = gr0.w.dtype
    zeros = jnp.zeros(max_levels, jnp.int32)
    st = LeidenState(
        graph=gr0, start=jnp.where(real0, ids, n_cap), orig=jnp.where(real0, ids, -1),
        labels=jnp.where(real0, ids, -1), levels=jnp.full((max_levels, n_cap), -1, jnp.int32),
        level_q=jnp.full(max_levels, jnp.nan, wdt), moves=jnp.zeros((max_levels, max_iters), jnp.int32),
        iters=zeros, verts=zeros, rounds=zeros, merges=zeros, level=jnp.int32(0),
        done=jnp.bool_(False), out_of_levels=jnp.bool_(False), hit_max_iters=jnp.bool_(False),
        passes=jnp.int32(0), pass_q=jnp.asarray(-jnp.inf, wdt))
    # at most opts.max_levels levels, over all passes: `last` holds once level reaches it
    st = lax.while_loop(lambda s: ~s.done, body, st)

    # the safety net: every community split into its connected pieces, numbered by smallest vertex
    pieces, _ = per_class(lambda size, gr, lab: split_components(gr, lab, size), gr0, st.labels)
    labels, k = renumber(pieces, real0)
    n_levels = st.level
    levels = rows_by_smallest_vertex(st.levels, real0, n_levels)
    levels, level_q = held_records(levels, st.level_q, n_levels)
    k0 = degrees(gr0.src, gr0.dst, gr0.w, n_cap)
    q, status = outcome(gr0, labels, real0, k0, opts.resolution, st.out_of_levels, st.hit_max_iters)
    before = jnp.max(jnp.where(real0, st.labels, -1)) + 1
    stats = dict(levels=n_levels, iterations=st.iters, moves=st.moves, vertices=st.verts, communities=k,
                 refine_rounds=st.rounds, refine_merges=st.merges, split=k - before, passes=st.passes)
    return labels, levels, q, level_q, status, stats
