"""The Louvain method in bulk-synchronous array form: the multi-level driver (Paper III).

Papers: V. D. Blondel, J.-L. Guillaume, R. Lambiotte, E. Lefebvre, "Fast
unfolding of communities in large networks", J. Stat. Mech. P10008, 2008 (the
Louvain method); Md. Naim, F. Manne, M. Halappanavar, A. Tumeo, "Community
Detection on the GPU", IPDPS 2017 (Paper III of the thesis): Eq. (1)
modularity, Eq. (2) move gain, Algorithm 1 (modularity optimisation by degree
buckets), Algorithm 2 (compute move), Algorithm 3 (aggregation). The public
entry point is :func:`jaxmatch.louvain`; :func:`louvain` here is its traced
body.

The whole multi-level method is one bounded ``lax.while_loop`` over levels
whose state keeps the *input's* capacities: the coarse graph of every level
is stored in arrays of the input's vertex and entry capacity, padded with the
sentinel id (the vertex capacity), so the loop has fixed shapes, compiles
once per capacity and vmaps over a batch. One level:

1. **Buckets** (:mod:`jaxmatch.community.buckets`): the level's non-loop
   entries sorted once by the bucket of their source: its degree bucket, or on a
   level with hubs a class by a hash of its id (``Config.buckets``, below).
2. **Modularity optimisation** (Algorithms 1 and 2,
   :mod:`jaxmatch.community.moves`): every vertex starts alone; sweeps over
   the buckets move all vertices of a bucket at once, with filters that make
   the simultaneous moves safe, while a sweep gains at least the threshold
   (``threshold_large * |Q|`` while more than ``large_graph`` vertices of the
   level's graph have a non-loop entry, else ``threshold``), at most
   ``max_iters`` sweeps. A level that reaches ``max_iters`` ends there and
   the next one starts from its partition, as GVE-Louvain's iteration cap
   does; only the last stage (the refinement, or the last level without
   it) stopping at the cap while still improving makes the status
   ``MAX_ITERS`` (a capped coarse level was optimised further by the
   levels after it; ``stats["iterations"]`` shows every level's sweeps).
3. **Aggregation** (Algorithm 3, :mod:`jaxmatch.community.aggregation`):
   every community becomes a vertex of the next level's graph. The last
   level's coarse graph is not built (nothing reads it).

The per-level work runs on the smallest static length that holds the level's
entries (:mod:`jaxmatch.community.size_classes`). Levels repeat until a level
moves no vertex, or improves the modularity by less than ``threshold``, or
``max_levels`` levels have run. Then, with ``refine`` (the default), the final
partition is **refined** on the input graph: one more modularity optimisation
that starts from it instead of from singletons (multilevel refinement, as in
Rotta and Noack, "Multilevel local search algorithms for modularity
clustering", ACM J. Experimental Algorithmics, 2011, and networkit's PLMR),
which moves the input vertices that the coarse levels put on the wrong side.
The refinement is one more pass of the loop's body, so the optimisation is
compiled once.

Where the driver differs from the paper, and why (the measurements behind
these choices are in ``experiments/RESULTS.md``):

* Refinement (above) is not in the paper: without it the bulk-synchronous
  moves end below the sequential method's modularity on power-law and RMAT
  graphs (Q about 0.1-0.2, where a few misplaced hubs matter). It costs one
  more optimisation on the input graph, which starts near a local optimum (a
  few sweeps).
* Buckets on levels with hubs (``Config.buckets="auto"``, the default): a
  level whose vertices of more than 319 stored entries (the paper's top degree
  bucket) hold at least 1/256 of its entries (``buckets.HUB_SHARE``) moves its
  vertices in seven classes by a hash of the id, not by degree. With degree
  buckets every leaf of a hub joins the hub's community in the first step,
  before any hub moves; the hubs' communities are then too heavy to merge,
  the levels above split the graph's core into many equal communities, and
  the partition is a trap that even igraph's Leiden started from it does not
  leave. Mixed classes move hubs and leaves in every step, as a sequential
  sweep in random order meets them, and end at a higher modularity on RMAT
  and power-law graphs. Levels without hubs (meshes, roads), or with a few
  whose entries are a negligible share, keep the degree buckets, whose narrow
  rows the in-row grouping serves faster, and which merge more per sweep on
  such graphs. Measurements: ``experiments/RESULTS.md``, sessions 39 and 46.
* Bucket order: the paper's Algorithm 1 runs the buckets from the lowest
  degrees up. On the first level that is the order here too; the coarse
  levels and the refinement (``Config.order`` = 2, the default) run their
  optimisation twice from the same start, lowest first and highest first (the
  hubs, and the big communities, choose first), and keep the run at the
  higher modularity. Neither order alone keeps both heavy-tailed classes
  (power-law, RMAT) close to the sequential method; the second run costs the
  coarse levels' sweeps again. A level on hash classes has no degree order and
  runs once: a second class order is only another arbitrary order, at the
  cost of the sweeps again (``experiments/RESULTS.md``, session 40). ``Config.order``
  0 and 1 pick one order everywhere.
* ``threshold_large`` is relative (gain >= ``threshold_large * |Q|``), the
  paper's t_bin absolute: the two agree on mesh-like graphs (Q near 1), but
  the absolute rule ends the first level of a power-law graph (Q about 0.1)
  after two sweeps.
* ``large_graph`` is compared with the vertices that have a non-loop entry
  (the ones that can move), not with all of the level's vertices: isolated
  vertices cost nothing in a sweep, and a third of an RMAT graph's are
  isolated; counting them cut the sweeps of RMAT's coarse levels short.
  A smaller ``large_graph`` (a user's choice) lets coarse levels stop sweeping
  at the relative gain too, a form of GVE-Louvain's threshold scaling across
  levels: faster, at a little less modularity.
* The level loop stops on the smaller ``threshold`` (the paper does not say
  which one it uses between levels).

Cost per level: one sort of the level's entries for the bucket grouping, one
for the aggregation (except after the last level), and the sweeps (see
:mod:`jaxmatch.community.moves`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import prefix, take
from jaxmatch.community.aggregation import aggregate, coarse_ids
from jaxmatch.community.buckets import Level, buckets_of
from jaxmatch.community.config import DEFAULT, Config, Options
from jaxmatch.community.modularity import degrees, entry_modularity
from jaxmatch.community.moves import level_sweeps
from jaxmatch.community.size_classes import by_class
from jaxmatch.status import Status


class LouvainState(NamedTuple):
    graph: Level
    orig: jax.Array          # [N] vertex of the current level holding each input vertex (-1 padding);
                             # after the refinement, the final labels
    levels: jax.Array        # [max_levels, N] partition of the input vertices after each level
    level_q: jax.Array       # [max_levels]
    moves: jax.Array         # [max_levels, max_iters]
    iters: jax.Array         # [max_levels]
    verts: jax.Array         # [max_levels] vertices of each level's graph
    level: jax.Array         # levels recorded so far
    q: jax.Array             # modularity of the current partition
    refining: jax.Array      # the next pass is the refinement on the input graph
    done: jax.Array
    out_of_levels: jax.Array  # stopped at max_levels while still improving
    hit_max_iters: jax.Array
    communities: jax.Array
    refine_iters: jax.Array
    refine_moves: jax.Array  # [max_iters]


def renumber(comm, real):
    """Communities renumbered 0 .. k-1 in order of their ids; (labels with -1 past n, k)."""
    n_cap = comm.shape[0]
    used = jax.ops.segment_sum(real.astype(jnp.int32), jnp.where(real, comm, n_cap), n_cap) > 0
    new_id = prefix(used, dtype=jnp.int32) - 1
    return jnp.where(real, take(new_id, comm, -1), -1), jnp.sum(used, dtype=jnp.int32)


def by_smallest_vertex(labels, real):
    """``labels`` renumbered 0 .. k-1 in the order of each community's smallest vertex, -1 where not
    ``real``: the numbering of what the solvers return depends on the partition alone, not on which
    vertex ids the moves happened to leave as community ids (two runs that agree on the partition,
    say a vmapped batch and a solo run, whose float sums may round differently, agree on the
    labels)."""
    n_cap = labels.shape[0]
    lab = jnp.where(real, labels, n_cap)
    lead = take(jax.ops.segment_min(jnp.arange(n_cap, dtype=jnp.int32), lab, n_cap + 1), lab, n_cap)
    return renumber(lead, real)[0]        # each community named by its smallest vertex, then ranked


def rows_by_smallest_vertex(rows, real, n_rows=None):
    """:func:`by_smallest_vertex` on each row of ``rows`` [L, N], a row at a time, so that only one
    row's buffers are held. With ``n_rows`` (traced), only the first ``n_rows`` rows, the rest left
    as they are (the solvers then fill them with :func:`held_records`): their records hold
    ``max_levels`` rows, most of them unused, and each renumbering is a segment minimum whose
    updates pile onto one address per community (on a GPU 1 ms a row at 3.3M vertices, a sixth of a
    Delaunay run's time with 32 rows; RESULTS.md, session 36)."""
    if n_rows is None:
        return lax.map(lambda row: by_smallest_vertex(row, real), rows)
    return lax.fori_loop(0, n_rows, lambda i, out: out.at[i].set(by_smallest_vertex(out[i], real)), rows)


def threshold_of(opts: Options, n):
    """(absolute, relative) gain a sweep of a level of ``n`` movable vertices needs for another one."""
    large = n > opts.large_graph
    return jnp.where(large, 0, opts.threshold), jnp.where(large, opts.threshold_large, 0)


def held_records(levels, level_q, n_levels):
    """The level records with the rows past ``n_levels`` holding the last recorded one."""
    last = jnp.maximum(n_levels - 1, 0)
    rows = jnp.arange(levels.shape[0])
    return (jnp.where(rows[:, None] < n_levels, levels, levels[last][None, :]),
            jnp.where(rows < n_levels, level_q, level_q[last]))


def outcome(gr0: Level, labels, real0, k0, resolution, out_of_levels, hit_max_iters):
    """(Q of ``labels`` on the input graph ``gr0``, the run's Status)."""
    n_cap = labels.shape[0]
    lab = jnp.where(real0, labels, n_cap)
    q = entry_modularity(gr0.src, gr0.dst, gr0.w, lab, k0, jax.ops.segment_sum(k0, lab, n_cap), resolution)
    status = jnp.where(out_of_levels, Status.MAX_LEVELS,
                       jnp.where(hit_max_iters, Status.MAX_ITERS, Status.CONVERGED)).astype(jnp.int32)
    return q, status


def louvain(g, opts: Options, *, max_levels: int, max_iters: int, axis=None, cfg: Config = DEFAULT):
    """The multi-level loop; returns (labels, levels, modularity, level_q, status, stats).

    One ``lax.while_loop`` runs the levels (at most ``opts.max_levels`` <=
    ``max_levels``, the static size of the level arrays; ``opts.max_iters`` <=
    ``max_iters`` likewise for the iterations) and then, with
    ``opts.refine``, one more pass of its body on the input graph that starts
    from the final partition (so the optimisation is compiled once, not twice).
    """
    refine = opts.refine
    n_cap = g.vertex_cap
    e_cap = g.adj.src.shape[0]
    ids = jnp.arange(n_cap, dtype=jnp.int32)
    gr0 = Level(g.adj.src, g.adj.indices, g.adj.weights, g.n)
    real0 = ids < g.n
    comm0 = jnp.where(real0, ids, n_cap)
    k0 = degrees(gr0.src, gr0.dst, gr0.w, n_cap)

    def body(st: LouvainState) -> LouvainState:
        gr = st.graph
        real = ids < gr.n
        start = jnp.where(st.refining, jnp.where(real0, st.orig, n_cap), jnp.where(real, ids, n_cap))
        bk = buckets_of(gr, n_cap, axis=axis, cfg=cfg)
        # large or not by the vertices that can move: isolated ones cost nothing in a sweep
        # order 2: the coarse levels and the refinement try both bucket orders (see the docstring)
        both = (opts.order == 2) & (st.refining | (st.level > 0) | opts.coarse)
        comm, q, iters, moves, hit = level_sweeps(bk, start, opts, threshold_of(opts, bk.movable), both,
                                                  max_iters, axis, cfg)
        to_coarse, n_coarse = coarse_ids(comm, real)
        # a coarsening level
        moved = ~st.refining & (n_coarse < gr.n)
        record = ~st.refining & ((st.level == 0) | moved)
        at = jnp.where(record, st.level, max_levels)   # max_levels: dropped
        level = st.level + record.astype(jnp.int32)
        improving = moved & (q - st.q >= opts.threshold)
        last = ~st.refining & (~improving | (level >= opts.max_levels))
        # the coarse graph, unless nothing uses it (after the last level: the input graph for the
        # refinement, or the end)
        used = jnp.sum(gr.src < n_cap)
        coarse = lax.cond(
            st.refining | last, lambda gr, to_coarse: gr,
            lambda gr, to_coarse: by_class(lambda size, gr, tc: aggregate(gr, tc, n_coarse, size, cfg.sort_method),
                                           used, e_cap, gr, to_coarse, axis=axis, cfg=cfg), gr, to_coarse)
        orig = jnp.where(st.refining, st.orig, take(to_coarse, st.orig, -1))
        # the refinement pass: labels of the input vertices from comm, renumbered 0 .. k-1
        refined, k = renumber(comm, real0)
        orig = jnp.where(st.refining, refined, orig)
        return LouvainState(
            graph=Level(*[jnp.where(last & refine, a, b) for a, b in zip(gr0, coarse)]),
            orig=orig,
            levels=st.levels.at[at].set(orig, mode="drop"),
            level_q=st.level_q.at[at].set(q, mode="drop"),
            moves=st.moves.at[at].set(moves, mode="drop"),
            iters=st.iters.at[at].set(iters, mode="drop"),
            verts=st.verts.at[at].set(gr.n, mode="drop"),
            level=level, q=q,
            refining=last & refine,
            done=st.refining | (last & ~refine),
            out_of_levels=st.out_of_levels | (last & improving),
            # the cap counts in the last stage only (see the module docstring)
            hit_max_iters=st.hit_max_iters | (hit & (st.refining | (last & ~refine))),
            communities=jnp.where(st.refining, k, n_coarse),
            refine_iters=jnp.where(st.refining, iters, st.refine_iters),
            refine_moves=jnp.where(st.refining, moves, st.refine_moves))

    q0 = entry_modularity(gr0.src, gr0.dst, gr0.w, comm0, k0, k0, opts.resolution)
    wdt = gr0.w.dtype
    st = LouvainState(
        graph=gr0, orig=jnp.where(real0, ids, -1),
        levels=jnp.full((max_levels, n_cap), -1, jnp.int32),
        level_q=jnp.full(max_levels, jnp.nan, wdt),
        moves=jnp.zeros((max_levels, max_iters), jnp.int32),
        iters=jnp.zeros(max_levels, jnp.int32), verts=jnp.zeros(max_levels, jnp.int32),
        level=jnp.int32(0), q=q0, refining=jnp.bool_(False), done=jnp.bool_(False),
        out_of_levels=jnp.bool_(False), hit_max_iters=jnp.bool_(False), communities=g.n,
        refine_iters=jnp.int32(0), refine_moves=jnp.zeros(max_iters, jnp.int32))
    # at most max_levels coarsening passes and one refinement pass
    st = lax.while_loop(lambda s: ~s.done, body, st)

    labels = by_smallest_vertex(st.orig, real0)
    n_levels = st.level
    levels = rows_by_smallest_vertex(st.levels, real0, n_levels)
    levels, level_q = held_records(levels, st.level_q, n_levels)
    q, status = outcome(gr0, labels, real0, k0, opts.resolution, st.out_of_levels, st.hit_max_iters)
    stats = dict(levels=n_levels, iterations=st.iters, moves=st.moves, vertices=st.verts,
                 communities=st.communities, refine_iterations=st.refine_iters,
                 refine_moves=st.refine_moves)
    return labels, levels, q, level_q, status, stats
