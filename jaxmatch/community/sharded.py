"""Louvain on a graph split over several devices (:class:`jaxmatch.ShardedGraph`).

The first level, the only one of the size of the input, runs under
``jax.shard_map``; so do the coarse levels while their graph is large
(:func:`too_big`); the rest run on one device with
:func:`jaxmatch.louvain`.

**Level one, sharded.** Device d holds the rows of its vertex range (see
:mod:`jaxmatch.shard`); the community of every vertex ``comm``, the degrees
``k`` and the community totals ``tot`` are replicated. Once per call each
device sorts its non-loop entries by the bucket of their source (the
one-device solver's buckets and rule, :mod:`jaxmatch.community.buckets`, with
the mesh's sums of entries for ``Config.buckets="auto"``; one stable
sort, so rows stay contiguous). A pass (sweep) runs the buckets that are
non-empty on the mesh in turn, lowest degrees first (``high``: highest
first), and in the turn of bucket b:

1. each device reads its bucket-b entries (u, v) through a window of one of
   the one-device solver's static lengths
   (:func:`jaxmatch.community.size_classes.window_classes`, by the mesh's
   largest count, so every device takes the same branch) and groups them by
   (u, C(v)), summing each group: e_{u->c}, with the one-device solver's
   grouping (:func:`jaxmatch.community.moves._group_shift` when the
   bucket's widest row holds at most ``GPU_SHIFT_MAX`` entries on a GPU,
   ``CPU_SHIFT_MAX`` elsewhere, or ``Config.shift_max`` if larger, else
   :func:`~jaxmatch.community.moves._group_sort`);
2. u moves to the community c != C(u) of largest gain (ties to the smallest
   id) when its gain beats staying,
   ``e_{u->c} - resolution k_u tot_c / 2m > e_{u->C(u)\\{u}} - resolution k_u (tot_{C(u)} - k_u) / 2m``
   (Eq. (2) of Paper III times m; the same order as the one-device solver's);
   a vertex alone in its community joins another one-vertex community of
   the same bucket only if that community's id is smaller (the singleton
   rule, as on one device). All of the bucket's vertices choose at once, and
   their moves are filtered as the one-device solver's bucket moves are
   (:mod:`jaxmatch.community.moves`, "Safe parallel moves"): (a) the
   interaction bound (the movers' degrees summed per target and per source
   community, on every device from the intended moves, gathered once by
   ``lax.all_gather``: no reduction of per-device sums), (b)
   ``Config.resolve_rounds`` rounds of conflict resolution between
   neighbours, whose bounded gains and states come by ``lax.all_gather``,
   and (c) where (a) and (b) leave the bucket no move on the whole mesh
   (read from the gathered labels), the exclusive moves (the best
   candidates over the mesh by a ``lax.pmax`` and a ``lax.pmin`` of V
   words). The owned labels are then gathered (``lax.all_gather``, V words)
   and ``tot`` recomputed, so later buckets see the moves: six
   ``all_gather``s of the owned vertices' words a turn with two conflict
   rounds (RESULTS, session 32). On one device
   these are the one-device solver's moves (the same modularity on five
   classes: RESULTS, session 32). Until session 30 a pass moved the vertices
   in 4 turns by id modulo 4, unfiltered, and until session 32 all owned
   vertices at once without (c): 4.5% below the one-device solver's
   modularity on an RMAT graph of 2^18 edges;
3. the modularity comes from a ``lax.psum`` of the intra-community weight
   after each pass. Passes repeat while one raises Q by at least
   ``threshold`` (by ``threshold_large * |Q|`` on graphs of more than
   ``large_graph`` vertices, as the one-device solver's levels do); a pass
   that lowers Q is undone and ends the level (at most ``max_iters``
   passes).

**Aggregation.** Each device aggregates its entries as the one-device solver
aggregates a level (:func:`jaxmatch.community.aggregation.aggregate`: pairs of
coarse ids, repeats merged). When the coarse graph is small (:func:`too_big`), the
merged pairs of all devices go to the mesh's first device (``lax.all_gather``
between the devices: a ``jax.device_put`` onto it cost 0.9 s of a 2.6 s run on
4 H200s, RESULTS session 27), where the same
aggregation merges the repeats of different devices into one
:class:`jaxmatch.Graph` of the communities (:func:`coarse_graph`), on which
the one-device solver runs the other levels (without its refinement; its
first level sweeps as a coarse level does, in both bucket orders with
``Config.order`` 2). Otherwise (more than ``MESH_ENTRIES``, or more than one
device holds: a 10^9-edge planted-partition graph's first coarse graph held
about 9x10^8 entries, which the one-device solver could not fit on an H200)
each device sends the pairs of each coarse vertex range to that range's
device, which merges them into its shard of a :class:`jaxmatch.ShardedGraph`
(:func:`coarse_sharded`), and the sharded levels repeat on it, each
ending the run as the one-device solver's level loop does when it merges
no community or gains less than ``threshold``. With
``refine`` the final partition is then refined on the input graph, as the
one-device solver does: the same sharded moves, started from the final
labels instead of singletons (:func:`level_sweeps`: in both bucket orders
with ``Config.order`` 2, as a coarse level on the mesh). The partition of
several devices can differ from one device's where a move's gain ties or
sums round differently; the test suite bounds the modularity gap on its
graphs, and RESULTS records it (a coarse level on the mesh lost 0.9% of Q on
a 2^20-edge planted graph, session 26, with the moves of that time; 0.02% at
2^26 edges on 4 H100s, session 27; none at 2^26 on 4 H100s with the moves of
session 30, 16% less time, session 31).
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

from jaxmatch._ops import CONVERGED, MAX_ITERS, offsets, prefix, segment_argmin, take
from jaxmatch._validate import _float_dtype, next_pow2
from jaxmatch.community.aggregation import aggregate, coarse_ids
from jaxmatch.community.buckets import (N_BUCKETS, Level, hash_rule, hub_entries, per_bucket,
                                       stable_sort_with_positions, vertex_buckets)
from jaxmatch.community.config import Config
from jaxmatch.community.moves import _group_shift, _group_sort, bucket_order, exclusive_moves, settle_conflicts
from jaxmatch.community.size_classes import by_class, window_classes
from jaxmatch.community.modularity import _intra, degrees

#: off the GPU, rows up to this wide are grouped in place (XLA's CPU key-value sort took 0.55 s for
#: 2M entries, and level one of a 2^20-edge planted-partition graph 15.2 s by sorts, 1.6 s so: RESULTS,
#: session 25)
CPU_SHIFT_MAX = 256

#: on the GPU, rows up to this wide (or ``Config.shift_max``, if wider): level one of a 2^24-edge
#: planted-partition graph (rows of about 40 entries) took 0.57 s in place against 0.83 s by sorts on
#: an H100, 0.43 against 0.74 s on an H200 (RESULTS, sessions 25 and 26)
GPU_SHIFT_MAX = 64

#: device bytes per entry of capacity the one-device solver took on a coarse graph (288 GB at 2^30
#: entries, 139 GB at 2^29, 4 x H200; RESULTS, session 26): what ``Config.one_device_entries``
#: defaults by
ONE_DEVICE_BYTES_PER_ENTRY = 270

#: coarse graphs of more entries than this stay on the mesh even where one device holds them: on 4 H100s
#: (planted partition, 2^24 edges per device; RESULTS, session 31) the first coarse graph (4.2x10^7
#: entries) took 0.34 s over the mesh against 0.46 s on one device, and on 2 (2.0x10^7) 0.20 against
#: 0.23 s, at the same modularity; left on the mesh past 2^20 entries, the small levels got slower
MESH_ENTRIES = 1 << 23


def level_one(sg, resolution, threshold, relative, start=None, high=False, *, max_iters: int,
              coarsen: bool = True, cfg: Config = Config()):
    """Local moving on the input graph under shard_map: (comm [V], Q, passes, moves [max_iters], status,
    and with ``coarsen`` the coarse id of each vertex [V], the communities, and each device's entries
    as merged pairs of coarse ids [D, entry_cap] x 3 with their counts [D]), the pairs sharded, the
    rest replicated. From singletons (level one), or from the labels ``start`` [V] (< V for the
    vertices < n): the refinement of the final partition. A pass needs a gain of at least
    ``max(threshold, relative * |Q|)`` for another one. ``high`` (a bool, traced): the degree
    buckets highest first in a pass, else lowest first.

    Two programs: the moves (:func:`_moves`, from a start vector also at level one, so that the
    refinement runs the same compiled program) and the aggregation (:func:`_coarsen`); until
    session 37 the aggregation was inside the moves' program, which the refinement compiled a
    second time without it."""
    if start is None:
        start = jax.device_put(jnp.arange(sg.vertex_cap, dtype=jnp.int32), NamedSharding(sg.mesh, P()))
    out = _moves(sg, resolution, threshold, relative, start, high, max_iters=max_iters, cfg=cfg)
    return out + _coarsen(sg, out[0]) if coarsen else out


@jax.jit
def _coarsen(sg, comm):
    """Each device's entries as pairs of coarse ids, repeats merged, first ``count`` slots (the
    one-device solver's aggregation of a level): (to_coarse [V], n_coarse, [D, E] x 3, count [D])."""
    V, axis = sg.vertex_cap, sg.axis

    def run(src, dst, w, n, comm):
        src, dst, w = src[0], dst[0], w[0]
        to_coarse, n_coarse = coarse_ids(comm, jnp.arange(V) < n)
        lv = aggregate(Level(src, dst, w, n), to_coarse, n_coarse, src.shape[0])
        count = jnp.sum(lv.src < V, dtype=jnp.int32)
        return to_coarse, n_coarse, lv.src[None], lv.dst[None], lv.w[None], count[None]

    f = jax.shard_map(run, mesh=sg.mesh, in_specs=(P(axis),) * 3 + (P(), P()),
                      out_specs=(P(),) * 2 + (P(axis),) * 4, check_vma=False)
    return f(sg.src, sg.dst, sg.weights, sg.n, comm)


@partial(jax.jit, static_argnames=("max_iters", "cfg"))
def _moves(sg, resolution, threshold, relative, start, high, *, max_iters: int, cfg: Config):
    """:func:`level_one`'s local moving from the labels ``start`` [V], replicated: (comm, Q, passes,
    moves, status)."""
    D, V = sg.shards, sg.vertex_cap
    R, axis = V // D, sg.axis

    def run(src, dst, w, n, resolution, threshold, relative, start, high):
        src, dst, w = src[0], dst[0], w[0]
        E = src.shape[0]
        lo = lax.axis_index(axis).astype(jnp.int32) * R
        valid = src < V
        off = valid & (src != dst)
        mine = lo + jnp.arange(R, dtype=jnp.int32)
        k = lax.psum(degrees(src, dst, w, V), axis)          # each row lives on one device
        two_m = jnp.sum(k)
        inv = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), jnp.nan)
        real = jnp.arange(V) < n
        k_own = lax.dynamic_slice(k, (lo,), (R,))
        u_loc = jnp.where(off, src - lo, R)

        # each owned row's stored entries (rows are contiguous: entries in source order)
        span = jax.ops.segment_sum(valid.astype(jnp.int32), jnp.where(valid, src - lo, R), R + 1)[:R]
        shift = cfg._replace(shift_max=max(cfg.shift_max, GPU_SHIFT_MAX if jax.default_backend() == "gpu"
                                           else CPU_SHIFT_MAX))
        group_sort = partial(_group_sort, n_cap=V)
        group_shift = partial(_group_shift, cfg=shift)

        def totals(comm):
            return jax.ops.segment_sum(k, comm, V), jax.ops.segment_sum(real.astype(jnp.int32), comm, V)

        def quality(comm, tot):
            same = valid & (take(comm, src, -1) == take(comm, dst, -2))
            intra = lax.psum(_intra(src, dst, w, same), axis)
            x = tot * inv
            return intra * inv - resolution * jnp.sum(x * x)

        # the buckets of the one-device solver (community.buckets): this device's non-loop
        # entries sorted once by the bucket of their source (stable: rows stay contiguous), so a
        # turn reads its bucket's entries through a window of one of a few static lengths
        of_own = vertex_buckets(span, mine, cfg.buckets, lax.psum(hub_entries(span), axis))
        of_all = lax.all_gather(of_own.astype(jnp.int8), axis, tiled=True)
        key = jnp.where(off, take(of_own, u_loc, N_BUCKETS), N_BUCKETS)
        b_count = per_bucket(jnp.ones_like(key), key, jnp.sum).astype(jnp.int32)
        b_start = (prefix(b_count) - b_count).astype(jnp.int32)
        _, perm = stable_sort_with_positions(key, N_BUCKETS)
        bs, bd, bw = src[perm], dst[perm], w[perm]
        bwidth = per_bucket(span, of_own, jnp.max)
        b_most = lax.pmax(b_count, axis)                # each bucket's largest count on a device: its window
        order, busy = bucket_order(b_most, high)        # the mesh's non-empty buckets

        def turn(W, comm, tot, size, b):
            """Every owned vertex of bucket ``b`` chooses its move (Eq. (2)) at once, from the
            bucket's entries in a window of length ``W``; the moves are bounded and resolved
            as the one-device solver's, then made. The same ``W`` on every device (its
            collectives run in the same branch everywhere)."""
            first, cnt = b_start[b], b_count[b]
            at = jnp.clip(first, 0, E - W)
            pos = at + jnp.arange(W, dtype=jnp.int32)
            inb = (pos >= first) & (pos < first + cnt)
            cut = lambda a, fill: jnp.where(inb, lax.dynamic_slice(a, (at,), (W,)), fill)  # noqa: E731
            s, d, ww = cut(bs, V), cut(bd, V), cut(bw, 0)
            u = jnp.where(inb, s - lo, R)
            cv = jnp.where(inb, take(comm, d, V), V)
            same_b = (take(of_all, d, -1) == b).astype(jnp.int32)     # d may move in this turn
            wide = bwidth[b] > shift.shift_max
            sc, srid, sb, head, e = lax.cond(wide, group_sort, partial(group_shift, width=bwidth[b]),
                                             cv, u, ww, same_b, inb)
            live = head & (srid < R)                       # each (u, C(v)) pair once, at its head
            a_own = lax.dynamic_slice(comm, (lo,), (R,))
            a = take(a_own, srid, V)
            k_u = take(k_own, srid, 0)
            own_e = jax.ops.segment_sum(jnp.where(live & (sc == a), e, 0), jnp.where(live, srid, R), R)
            stay = own_e - resolution * inv * k_own * (take(tot, a_own, 0) - k_own)
            alone = take(size, a, 0) == 1
            # the singleton rule, between vertices that move in the same turn (as one device)
            ok = live & (sc != a) & ~(alone & (take(size, sc, 0) == 1) & (sc > a) & (sb > 0))
            gain = e - resolution * inv * k_u * take(tot, sc, 0)
            best, target = segment_argmin(jnp.where(ok, -gain, jnp.inf), sc, jnp.where(live, srid, R), R)
            move = (mine < n) & (best < jnp.inf) & (-best > stay)
            # (a) the interaction bound: half the null-model cost of the other movers in and out, from
            # every intended move on the mesh (gathered once: no reduction of per-device sums)
            to = lax.all_gather(jnp.where(move, target, V), axis, tiled=True)      # V: no move
            km = jnp.where(to < V, k, 0)
            k_in = jax.ops.segment_sum(km, to, V)
            k_out = jax.ops.segment_sum(km, jnp.where(to < V, comm, V), V)
            crowd = take(k_in, target, 0) + take(k_out, a_own, 0) - 2 * k_own
            bounded = -best - stay - resolution * inv * k_own * crowd / 2
            # (b) conflicts between neighbours (both movers: both in bucket b, u's entry in the window)
            move = move & (bounded > 0)
            gain = jnp.where(move, bounded, -jnp.inf)
            g = lax.all_gather(gain, axis, tiled=True)                              # -inf: no move
            g_u, g_v = take(g, s, -jnp.inf), take(g, d, -jnp.inf)
            to_u, to_v = take(to, s, V), take(to, d, V)
            conf = inb & (g_u > -jnp.inf) & (g_v > -jnp.inf) & ((to_u == take(comm, d, V)) | (to_v == take(comm, s, V)))

            def at_dst(x):                        # a neighbour's state, gathered as bytes (not bools)
                return take(lax.all_gather(x.astype(jnp.int8), axis, tiled=True), d, 0) > 0

            move = settle_conflicts(conf, jnp.where(conf, u, R), d, g_u, g_v, mine, move, gain,
                                    cfg.resolve_rounds, at_dst)
            new = lax.all_gather(jnp.where(move, target, a_own), axis, tiled=True)

            def exclusive():
                """(c) when (a) and (b) left the bucket no move on the mesh: the exclusive moves."""
                win, to_c = exclusive_moves(live & (sc != a), sc, srid, e, k_own, tot, stay, mine < n, a_own,
                                            mine, inv, resolution, axis)
                return lax.all_gather(jnp.where(win, to_c, a_own), axis, tiled=True)

            new = lax.cond(jnp.any(new != comm), lambda: new, exclusive)   # replicated: one branch everywhere
            return (new, *totals(new)), jnp.sum(new != comm, dtype=jnp.int32)     # the mesh's movers

        def sweep(comm, tot, size):
            """A pass: the non-empty degree buckets in turn (:func:`turn`), lowest degrees first
            or (``high``) highest first."""
            def one(j, c):
                (comm, tot, size), moved = c
                b = order[j]
                # the window's class by the mesh's largest count (the same branch on every device)
                st, m = by_class(turn, b_most[b], E, comm, tot, size, b,
                                 classes=window_classes, cfg=cfg)
                return st, moved + m
            return lax.fori_loop(0, busy, one, ((comm, tot, size), jnp.int32(0)))

        comm0 = jnp.where(real, start, V)
        tot0, size0 = totals(comm0)

        def body(st):
            """One pass (:func:`sweep`); undone if Q went down."""
            comm, tot, size, q, it, moves, _ = st
            (new, ntot, nsize), m = sweep(comm, tot, size)
            nq = quality(new, ntot)
            better = nq >= q
            keep = lambda x, y: jnp.where(better, x, y)  # noqa: E731
            return (keep(new, comm), keep(ntot, tot), keep(nsize, size), keep(nq, q), it + 1,
                    moves.at[it].set(m), better & (nq - q >= jnp.maximum(threshold, relative * jnp.abs(q))) & (m > 0))

        st = (comm0, tot0, size0, quality(comm0, tot0), jnp.int32(0), jnp.zeros(max_iters, jnp.int32),
              jnp.bool_(True))
        comm, tot, size, q, it, moves, go = lax.while_loop(lambda s: s[6] & (s[4] < max_iters), body, st)
        status = jnp.where(go, MAX_ITERS, CONVERGED).astype(jnp.int32)
        return comm, q, it, moves, status

    f = jax.shard_map(run, mesh=sg.mesh, in_specs=(P(axis),) * 3 + (P(),) * 6, out_specs=(P(),) * 5,
                      check_vma=False)
    return f(sg.src, sg.dst, sg.weights, sg.n, resolution, threshold, relative, start, jnp.bool_(high))


def level_sweeps(sg, resolution, threshold, relative, start=None, *, both: bool, order: int, **kw):
    """:func:`level_one` (keywords ``kw``) in the bucket order of ``Config.order`` (``order``): with
    order 2 and ``both``, once lowest and once highest degrees first, keeping the run of higher Q
    (ties: the first), as the one-device solver's coarse levels and refinement do (two runs'
    results are held at once), and like it once where the level takes hash classes."""
    both = both and order == 2 and not bool(hash_rule(None, kw.get("cfg", Config()).buckets, _hub_entries(sg)))
    best = None
    for high in ((False, True) if both else (order == 1,)):
        run = level_one(sg, resolution, threshold, relative, start, high, **kw)
        best = run if best is None or float(run[1]) > float(best[1]) else best
    return best


@jax.jit
def _hub_entries(sg):
    """:func:`jaxmatch.community.buckets.hub_entries` of the stored entries of each vertex of ``sg``
    (what the bucket rule compares)."""
    valid = sg.src < sg.vertex_cap
    rows = jnp.where(valid, sg.src, sg.vertex_cap).ravel()
    return hub_entries(jax.ops.segment_sum(valid.astype(jnp.int32).ravel(), rows, sg.vertex_cap + 1)[:-1])


def first_device(devices):
    """The device of lowest id: where a mesh's one-device work and results go."""
    return min(devices, key=lambda d: d.id)


def on_first(x):
    """The copy of a replicated array on the first device of its mesh (no transfer), as a plain
    one-device array: on a one-device mesh the shard is the array itself, still placed by the mesh,
    and the one-device solver compiled its programs again for that placement."""
    one = first_device(x.sharding.device_set)
    return jax.device_put(next(s.data for s in x.addressable_shards if s.device == one), one)


@partial(jax.jit, static_argnames=("mesh", "axis", "k"))
def _gather(pcs, pcd, pw, *, mesh, axis: str, k: int):
    """Every device's first ``k`` pairs on every device ([D, k] x 3, replicated) by ``lax.all_gather``
    between the devices: a ``jax.device_put`` of the sharded pairs onto one device took 0.9 s of a
    2.6 s run on 4 H200s at 2^26 edges (RESULTS, session 27)."""
    def run(*xs):
        return tuple(lax.all_gather(x[:, :k], axis, tiled=True) for x in xs)
    return jax.shard_map(run, mesh=mesh, in_specs=(P(axis),) * 3, out_specs=(P(),) * 3, check_vma=False)(pcs, pcd, pw)


@partial(jax.jit, static_argnames=("vertex_cap",))
def _merge(cs, cd, w, n_coarse, *, vertex_cap: int):
    """On one device: the devices' merged pairs [D, k] (ids < ``vertex_cap``, the sentinel) merged
    across devices by the same aggregation, ids unchanged: (Level of D k entries, pairs)."""
    ids = jnp.arange(vertex_cap, dtype=jnp.int32)
    level = aggregate(Level(cs.reshape(-1), cd.reshape(-1), w.reshape(-1), n_coarse), ids, n_coarse, cs.size)
    return level, jnp.sum(level.src < vertex_cap, dtype=jnp.int32)


@partial(jax.jit, static_argnames=("vc", "ec"))
def _graph(level, n_coarse, pairs, *, vc: int, ec: int):
    """The coarse :class:`jaxmatch.Graph` in capacities (vc, ec) from the merged pairs (both
    directions of each edge, a loop once, sorted by (source, target), ``pairs`` of them first)."""
    from jaxmatch.graph import CSR, Graph
    size = level.src.shape[0]
    fit = lambda x: x[:ec] if size >= ec else jnp.pad(x, (0, ec - size))   # noqa: E731
    real = jnp.arange(ec) < pairs
    src, dst = jnp.where(real, fit(level.src), vc), jnp.where(real, fit(level.dst), vc)
    w = jnp.where(real, fit(level.w), 0).astype(_float_dtype())      # as Graph.from_edges stores them
    indptr = offsets(jax.ops.segment_sum(real.astype(jnp.int32), src, vc))
    edges = jnp.sum(real & (src <= dst), dtype=jnp.int32)
    return Graph(adj=CSR(indptr, dst, src, w), n=n_coarse, n_edges=edges, n_entries=pairs,
                 vertex_cap=vc, entry_cap=ec, weighted=True)


#: the least (vertex, entry) capacities of a coarse graph built on one device: small coarse graphs
#: share one size class, so the one-device solver compiles once for all of them, not once per
#: power of two (three bundled graphs' coarse graphs took three compilations of 1.6-2.6 s each
#: on a 2-core CPU; a solve at this size costs milliseconds)
COARSE_FLOOR = (1024, 4096)


def coarse_graph(to_coarse, n_coarse, pcs, pcd, pw, count, n):
    """The graph of level one's communities (numbered by rank of their ids, as ``np.unique(labels)``)
    from the devices' merged pairs (:func:`level_one`): each device's first ``max(count)`` slots go
    to the mesh's first device and are merged there as the one-device solver aggregates a level;
    the result in the capacities ``Graph.from_edges`` would choose, at least :data:`COARSE_FLOOR`.
    One device holds the distinct pairs, not the input's entries; the counts and the labels cross
    to the host. Returns (Graph, the dense label of each vertex [n], on the mesh's first device).
    (Building it on the host took 3.1-3.5 s of a 4.3 s run on an H100 at 2^24 edges: RESULTS,
    session 25.)"""
    k = next_pow2(int(np.max(np.asarray(count))))
    cs, cd, w = map(on_first, _gather(pcs, pcd, pw, mesh=pcs.sharding.mesh, axis=pcs.sharding.spec[0], k=k))
    level, pairs = _merge(cs, cd, w, on_first(n_coarse), vertex_cap=to_coarse.shape[0])
    nc, m = int(n_coarse), int(pairs)
    vc, ec = max(next_pow2(nc), COARSE_FLOOR[0]), max(next_pow2(m), COARSE_FLOOR[1])
    g = _graph(level, level.n, pairs, vc=vc, ec=ec)
    return g, on_first(to_coarse)[:n]


@jax.jit
def dense_labels(comm, n):
    """``comm`` [V] renumbered 0, 1, ... by rank of the ids of its first ``n`` entries, on the device
    (``np.unique(comm[:n], return_inverse=True)[1]``, a host sort that took 1.7 s at 8.4M vertices on
    a 2-core CPU; RESULTS, session 26); the entries past n get V."""
    return coarse_ids(comm, jnp.arange(comm.shape[0]) < n)[0]


def coarse_sharded(sg, to_coarse, n_coarse, pcs, pcd, pw, count, n):
    """The graph of level one's communities as :func:`coarse_graph` builds it, but split over the
    mesh of ``sg`` as a :class:`jaxmatch.ShardedGraph` (for a large coarse graph, :func:`too_big`):
    each device sends the pairs of each coarse vertex range to the range's device
    (``lax.all_to_all``, buckets of the largest range's count) and merges what it receives with the
    same aggregation, so its entries come in source order. The bucket counts and the community count
    cross to the host (they fix the shapes). Capacities: vertices the next power of two of the
    communities (a multiple of D), entries D times the next power of two of the largest bucket.
    Returns (ShardedGraph, the dense label of each vertex [n], on the mesh's first device)."""
    from jaxmatch.shard import ShardedGraph
    D, mesh, axis = sg.shards, sg.mesh, sg.axis
    nc = int(n_coarse)
    vc = -(-next_pow2(nc) // D) * D
    b = next_pow2(int(np.max(np.asarray(_bucket_counts(pcs, count, mesh=mesh, axis=axis, vc=vc)))))
    src, dst, w = _redistribute(pcs, pcd, pw, count, n_coarse, mesh=mesh, axis=axis, vc=vc, b=b)
    g = ShardedGraph(src, dst, w, np.asarray(nc, np.int32), vc, D * b, mesh, axis)
    return g, on_first(to_coarse)[:n]


def _ranges(cs, c, vc: int, D: int):
    """A device's merged pairs (sorted by coarse source, ``c`` of them) cut by the D coarse vertex
    ranges: the sources with the padding at ``vc``, and the start of each range [D + 1]."""
    cs = jnp.where(jnp.arange(cs.shape[0]) < c, cs, vc)
    return cs, jnp.searchsorted(cs, jnp.arange(D + 1, dtype=jnp.int32) * (vc // D)).astype(jnp.int32)


@partial(jax.jit, static_argnames=("mesh", "axis", "vc"))
def _bucket_counts(pcs, count, *, mesh, axis: str, vc: int):
    """[D, D]: the pairs device d holds for the coarse vertex range of device t."""
    D = mesh.shape[axis]

    def run(cs, c):
        _, at = _ranges(cs[0], c[0], vc, D)
        return (at[1:] - at[:-1])[None]
    return jax.shard_map(run, mesh=mesh, in_specs=(P(axis), P(axis)), out_specs=P(axis), check_vma=False)(pcs, count)


@partial(jax.jit, static_argnames=("mesh", "axis", "vc", "b"))
def _redistribute(pcs, pcd, pw, count, n_coarse, *, mesh, axis: str, vc: int, b: int):
    """Each device's pairs to the owner of their coarse source (buckets of ``b``), merged there:
    (src, dst, weights) [D, D * b], sorted by (source, target), padding ``vc`` and weight 0."""
    D = mesh.shape[axis]

    def run(cs, cd, w, c, nc):
        cs, at = _ranges(cs[0], c[0], vc, D)
        j = at[:-1, None] + jnp.arange(b, dtype=jnp.int32)[None]       # [D, b]: bucket t's slots
        ok = j < at[1:, None]
        send = (jnp.where(ok, take(cs, j, vc), vc), jnp.where(ok, take(cd[0], j, vc), vc),
                jnp.where(ok, take(w[0], j, 0), 0))
        got = [lax.all_to_all(x, axis, 0, 0).reshape(-1) for x in send]   # row s: from device s
        lv = aggregate(Level(*got, nc), jnp.arange(vc, dtype=jnp.int32), nc, D * b)
        return lv.src[None], lv.dst[None], lv.w[None]
    return jax.shard_map(run, mesh=mesh, in_specs=(P(axis),) * 4 + (P(),), out_specs=(P(axis),) * 3,
                         check_vma=False)(pcs, pcd, pw, count, n_coarse)


def too_big(entries: int, sg, cfg: Config) -> bool:
    """Whether a coarse graph of ``entries`` entries (rounded up to a power of two) stays on the mesh:
    above ``cfg.one_device_entries``, or by default above ``MESH_ENTRIES`` or what the mesh's first
    device's free memory holds at ``ONE_DEVICE_BYTES_PER_ENTRY`` (where the backend reports its memory)."""
    limit = cfg.one_device_entries
    if limit is None:
        stats = first_device(sg.mesh.devices.flat).memory_stats() or {}
        limit = MESH_ENTRIES
        if "bytes_limit" in stats:
            limit = min(limit, (stats["bytes_limit"] - stats.get("bytes_in_use", 0)) // ONE_DEVICE_BYTES_PER_ENTRY)
    return next_pow2(entries) > limit
