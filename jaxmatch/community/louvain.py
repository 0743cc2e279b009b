"""Louvain community detection in bulk-synchronous array form (Paper III).

Paper: Md. Naim, F. Manne, M. Halappanavar, A. Tumeo, "Community Detection
on the GPU" (Paper III of ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``):
Eq. (1) modularity, Eq. (2) move gain, Algorithm 1 (modularity optimisation by
degree buckets), Algorithm 2 (compute move), Algorithm 3 (aggregation).

The whole multi-level method is one bounded ``lax.while_loop`` over levels
whose state keeps the *input's* capacities: the coarse graph of every level
is stored in arrays of the input's vertex and entry capacity, padded with the
sentinel id (the vertex capacity), so the loop has fixed shapes, compiles
once per capacity and vmaps over a batch.

One level:

1. **Modularity optimisation** (Algorithm 1). Every vertex starts alone
   (C[i] = i). One *iteration* runs the degree buckets of the paper in turn
   (vertices with 1-4, 5-8, 9-16, 17-32, 33-84, 85-319 and >= 320 stored
   entries); inside a bucket all vertices choose a move at once (Algorithm 2)
   and move together; the community totals a_c (and sizes) are recomputed
   after each bucket, so later buckets see the moves of earlier ones.
   Iterations repeat while the modularity gain of an iteration is at least
   the threshold (``threshold_large`` while the level's graph has more than
   ``large_graph`` vertices, else ``threshold``), at most ``max_iters`` times.
2. **Compute move** (Algorithm 2). The GPU code accumulates e_{i->c} in
   per-vertex hash tables. Here the entries (i, j) of the bucket's vertices
   (self-loops excluded) are keyed (i, C[j]) and sorted (:func:`pair_groups`);
   each run of equal keys is one (vertex, neighbouring community) pair, and a
   segment sum over runs gives e_{i->c}. The gain of
   Eq. (2),

       dQ = (e_{i->c} - e_{i->C(i)\\{i}}) / m + k_i (a_{C(i)\\{i}} - a_c) / (2 m^2),

   (null-model term scaled by ``resolution``), is maximised by a segment max
   per vertex, ties to the lowest community id by a segment min; the vertex
   moves when the best gain is positive. The singleton rule of the paper
   (after Lu, Halappanavar, Kalyanaraman): a vertex alone in its community
   may join another one-vertex community c only if c < C(i).
3. **Aggregation** (Algorithm 3). Non-empty communities are renumbered by a
   prefix sum; every entry (i, j, w) becomes (C'(i), C'(j), w), entries are
   sorted by the new pair and summed per run, and the runs are compacted to
   the front. An entry that becomes a diagonal one contributes w/2 (an edge
   inside a community is stored twice) and an old diagonal entry w, so the
   coarse self-loop holds the community's internal weight, each edge once,
   and coarse degrees equal the sums of the members' degrees.

Levels repeat until a level moves no vertex, or improves the modularity by
less than ``threshold``, or ``max_levels`` levels have run.

Where the array version differs from the CUDA code, and why:

* Hash tables -> a sort of (vertex, community) keys, packed into one int32
  key when they fit (vertex capacity up to 46,339, any in 64-bit mode);
  deterministic. On an H100, sorting 2^25 packed keys with their positions
  took 1.7 ms, two stable key-value sorts 3.8 ms, one two-key sort 20.7 ms.
* Fixed shapes: every level keeps the input's capacities; a level whose
  entries fit a quarter (a sixteenth ...) of the entry capacity runs on that
  prefix (:func:`size_classes`), and an empty degree bucket is skipped.
* Safe parallel moves. In a bucket, all vertices move at once on gains
  computed as if nobody else moved. On sparse planar graphs (road grids,
  Delaunay meshes: every vertex in the first bucket) the paper's rules alone
  let neighbours swap or chase each other's communities, and the
  modularity came out 1.3% below igraph's. Two cheap O(entries) filters fix
  that (measured: within 0.1% of igraph on those classes):
  (a) *interaction bound*: Eq. (2) of vertex i is lowered by
  ``resolution * k_i * (K_in(target) + K_out(source) - 2 k_i) / (4 m^2)``,
  half the null-model cost of all other vertices that intend to enter i's
  target or leave i's source in the same bucket; a move whose bounded gain
  is not positive waits for the next iteration;
  (b) *conflict resolution*: moves of neighbours i and j conflict when one
  enters the community the other leaves (a swap, or i joining C(j) while j
  leaves it); in ``RESOLVE_ROUNDS`` rounds, a move survives when its bounded
  gain beats (ties: smaller id) every undecided conflicting neighbour's, and
  beaten neighbours drop out; moves still undecided wait.
  Together they guarantee that the bucket's moves raise the modularity at
  least by the sum of their bounded gains (the pairwise interaction terms
  left are all non-negative), the property the sequential method has.
  The singleton rule and the lowest-id tie rule are kept as the paper has
  them.
* An iteration that still lowers the modularity (float rounding only, after
  the above) is undone and ends the level.
* The level loop stops on the smaller ``threshold`` (the paper does not say
  which one it uses between levels).

Cost: per iteration and bucket, one sort of the entry array plus O(entries +
n) segment work; per level one more sort for the aggregation.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, take
from jaxmatch.community.modularity import degrees, entry_modularity

# Degree buckets of the paper (Section 4.1): bucket b holds the vertices whose
# number of stored entries d satisfies BUCKETS[b] < d <= BUCKETS[b + 1].
BUCKETS = (0, 4, 8, 16, 32, 84, 319, int(INT_MAX))

DEFAULT_MAX_LEVELS = 32
DEFAULT_MAX_ITERS = 100
RESOLVE_ROUNDS = 2
# smallest entry-array length of the size classes (see size_classes)
SIZE_CLASS_MIN = 1 << 17
# how pair_groups sorts: "auto" (by backend), "kv" (key-value sorts) or "key" (key-only / two-key)
SORT_METHOD = "auto"


class Level(NamedTuple):
    """The graph of one level, in the input's capacities (sentinel = vertex_cap)."""
    src: jax.Array     # [E] entry sources, sorted by (src, dst)
    dst: jax.Array     # [E]
    w: jax.Array       # [E] weights, 0 in padding
    n: jax.Array       # vertices at this level


class Options(NamedTuple):
    """Traced numeric options (changing them does not recompile)."""
    resolution: jax.Array
    threshold: jax.Array
    threshold_large: jax.Array
    large_graph: jax.Array


class OptState(NamedTuple):
    comm: jax.Array    # [N] community of each vertex (N for padding)
    tot: jax.Array     # [N] a_c
    q: jax.Array       # modularity of comm on this level's graph
    it: jax.Array
    moves: jax.Array   # [max_iters] vertices moved per iteration
    go: jax.Array


class LouvainState(NamedTuple):
    graph: Level
    orig: jax.Array          # [N] vertex of the current level holding each input vertex (-1 padding)
    levels: jax.Array        # [max_levels, N] partition of the input vertices after each level
    level_q: jax.Array       # [max_levels]
    moves: jax.Array         # [max_levels, max_iters]
    iters: jax.Array         # [max_levels]
    verts: jax.Array         # [max_levels] vertices of each level's graph
    level: jax.Array         # levels recorded so far
    q: jax.Array             # modularity of the current partition
    done: jax.Array
    hit_max_iters: jax.Array


def _heads(a, b):
    """True where the pair (a[p], b[p]) differs from the previous one (a run starts)."""
    return jnp.concatenate([jnp.ones(1, bool), (a[1:] != a[:-1]) | (b[1:] != b[:-1])])


class Groups(NamedTuple):
    """Entries grouped by a pair of ids (the sort that replaces the paper's hash tables)."""
    grp: jax.Array     # [E] per entry (input order): sorted position of its pair's first copy
    a: jax.Array       # [E] the pairs in sorted order
    b: jax.Array
    head: jax.Array    # [E] a sorted position holds the first copy of its pair


def _key_dtype(n_cap: int):
    """Integer type holding the packed pair a * (n_cap + 1) + b, or None."""
    if (n_cap + 1) ** 2 - 1 <= INT_MAX:
        return jnp.int32
    if jax.config.jax_enable_x64:
        return jnp.int64
    return None


def _key_value_sorts() -> bool:
    """Group pairs with key-value sorts (radix sorts on a GPU) rather than key-only/multi-key ones."""
    if SORT_METHOD == "auto":
        return jax.default_backend() not in ("cpu", "tpu")
    return SORT_METHOD == "kv"


def pair_groups(a, b, n_cap: int) -> Groups:
    """Group entries by the pair (a, b), ids in [0, n_cap] (n_cap = the sentinel).

    When the pair packs into one integer key (n_cap <= 46339, or any n_cap in
    64-bit mode) it is sorted as one key; otherwise by a stable sort on b
    then a stable sort on a. XLA's fastest sorts differ by backend: on CPU a
    key-only sort (plus a binary search for each entry's group) or one
    two-key sort; on a GPU single-key key-value sorts, which become radix
    sorts (``SORT_METHOD`` = "auto" picks by ``jax.default_backend()``).
    Every path gives the same groups.
    """
    e_cap = a.shape[0]
    pos = jnp.arange(e_cap, dtype=jnp.int32)
    kdt = _key_dtype(n_cap)
    kv = _key_value_sorts()
    if kdt is not None:
        key = a.astype(kdt) * (n_cap + 1) + b.astype(kdt)
        if kv:
            srt, perm = lax.sort((key, pos), num_keys=1)
        else:
            srt = lax.sort(key)
        sa, sb = (srt // (n_cap + 1)).astype(jnp.int32), (srt % (n_cap + 1)).astype(jnp.int32)
        if not kv:
            grp = jnp.searchsorted(srt, key).astype(jnp.int32)
            return Groups(grp, sa, sb, _heads(sa, sb))
    elif kv:
        _, p1 = lax.sort((b, pos), num_keys=1, is_stable=True)
        sa, perm = lax.sort((a[p1], p1), num_keys=1, is_stable=True)
        sb = b[perm]
    else:
        sa, sb, perm = lax.sort((a, b, pos), num_keys=2)
    head = _heads(sa, sb)
    first = lax.cummax(jnp.where(head, pos, 0))
    return Groups(jnp.zeros(e_cap, jnp.int32).at[perm].set(first), sa, sb, head)


def move_bucket(gr: Level, k, deg, comm, tot, size, lo, hi, inv2m, resolution):
    """Algorithm 2 for every vertex with lo < deg <= hi, at once; returns (comm, moved).

    ``k`` weighted degrees, ``deg`` stored entries per vertex, ``comm``
    communities, ``tot`` = a_c, ``size`` community sizes, ``inv2m`` = 1 / 2m
    (0 when m = 0: nothing moves).
    """
    n_cap, e_cap = comm.shape[0], gr.src.shape[0]
    s, d, w = gr.src, gr.dst, gr.w
    by_vertex = dict(segment_ids=s, num_segments=n_cap, indices_are_sorted=True)
    in_bucket = (deg > lo) & (deg <= hi)
    act = take(in_bucket, s, False) & (s != d)             # entries (i, j) of the bucket, no loops
    c = take(comm, d, n_cap)
    grp = pair_groups(jnp.where(act, s, n_cap), jnp.where(act, c, n_cap), n_cap).grp
    e_ic = jax.ops.segment_sum(w, grp, e_cap)[grp]          # e_{i -> C(j)} on entry (i, j)
    ci = take(comm, s, n_cap)
    own = c == ci
    e_own = jax.ops.segment_sum(jnp.where(act & own, w, 0), **by_vertex)   # e_{i -> C(i) \ {i}}
    single = size == 1
    blocked = take(single, ci, False) & take(single, c, False) & (c > ci)  # the singleton rule
    allowed = act & ~own & ~blocked
    # m * dQ of Eq. (2) = score(target) - stay; score holds the terms that depend on the target
    score = jnp.where(allowed, e_ic - resolution * take(k, s, 0) * take(tot, c, 0) * inv2m, -jnp.inf)
    best = jax.ops.segment_max(score, **by_vertex)
    at_best = allowed & (score == take(best, s, -jnp.inf))
    target = jax.ops.segment_min(jnp.where(at_best, c, n_cap), **by_vertex)   # ties: lowest id
    stay = e_own - resolution * k * (take(tot, comm, 0) - k) * inv2m
    move = in_bucket & (target < n_cap) & (best > stay) & (inv2m > 0)
    # (a) the interaction bound: half the null-model cost of the other movers in and out
    km = jnp.where(move, k, 0)
    k_in = jax.ops.segment_sum(km, jnp.where(move, target, n_cap), n_cap)
    k_out = jax.ops.segment_sum(km, jnp.where(move, comm, n_cap), n_cap)
    crowd = take(k_in, target, 0) + take(k_out, comm, 0) - 2 * k
    gain = best - stay - resolution * k * crowd * inv2m / 2
    move = move & (gain > 0)
    # (b) conflicts between neighbours
    move = resolve_conflicts(s, d, comm, jnp.where(move, target, comm), move, gain)
    return jnp.where(move, target, comm), jnp.sum(move, dtype=jnp.int32)


def resolve_conflicts(s, d, comm, target, move, gain):
    """The moves that survive ``RESOLVE_ROUNDS`` rounds of conflict resolution.

    Neighbours i and j conflict when both intend to move and one enters the
    community the other leaves. A round accepts every undecided mover whose
    gain beats (ties: smaller id) all its undecided conflicting neighbours,
    and drops the neighbours of accepted ones. Like a greedy (locally
    dominant) independent set of the conflict graph, weighted by gain.
    """
    n_cap = comm.shape[0]
    by_vertex = dict(segment_ids=s, num_segments=n_cap, indices_are_sorted=True)
    conf = (s != d) & take(move, s, False) & take(move, d, False) & (
        (take(target, s, -1) == take(comm, d, -2)) | (take(target, d, -1) == take(comm, s, -2)))
    g_i, g_j = take(gain, s, 0), take(gain, d, 0)
    ids = jnp.arange(n_cap, dtype=jnp.int32)

    def round_(_, c):
        undecided, accepted = c
        live = conf & take(undecided, d, False)
        top = jax.ops.segment_max(jnp.where(live, g_j, -jnp.inf), **by_vertex)
        tie = jax.ops.segment_min(jnp.where(live & (g_j == g_i), d, n_cap), **by_vertex)
        win = undecided & ~(top > gain) & ~(tie < ids)
        beaten = jax.ops.segment_max((conf & take(win, d, False)).astype(jnp.int32), **by_vertex) > 0
        return undecided & ~win & ~beaten, accepted | win

    return lax.fori_loop(0, RESOLVE_ROUNDS, round_, (move, jnp.zeros_like(move)))[1]


def optimise(gr: Level, k, deg, real, opts: Options, threshold, max_iters: int):
    """Algorithm 1 on one level's graph; returns (comm, q, iterations, moves, hit_max_iters)."""
    n_cap = k.shape[0]
    two_m = jnp.sum(k)
    inv2m = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), 0)
    comm = jnp.where(real, jnp.arange(n_cap, dtype=jnp.int32), n_cap)
    ones = real.astype(jnp.int32)
    tot = jax.ops.segment_sum(k, comm, n_cap)
    lo_hi = jnp.asarray(BUCKETS, jnp.int32)

    def bucket(b, c):
        lo, hi = lo_hi[b], lo_hi[b + 1]

        def run(c):
            comm, tot, moved = c
            size = jax.ops.segment_sum(ones, comm, n_cap)
            comm, m = move_bucket(gr, k, deg, comm, tot, size, lo, hi, inv2m, opts.resolution)
            return comm, jax.ops.segment_sum(k, comm, n_cap), moved + m

        # an empty bucket costs nothing (under vmap both branches run, as a select)
        return lax.cond(jnp.any((deg > lo) & (deg <= hi)), run, lambda c: c, c)

    def body(s: OptState) -> OptState:
        comm, tot, moved = lax.fori_loop(0, len(BUCKETS) - 1, bucket, (s.comm, s.tot, jnp.int32(0)))
        q = entry_modularity(gr.src, gr.dst, gr.w, comm, k, tot, opts.resolution)
        better = q >= s.q
        return OptState(comm=jnp.where(better, comm, s.comm), tot=jnp.where(better, tot, s.tot),
                        q=jnp.where(better, q, s.q), it=s.it + 1,
                        moves=s.moves.at[s.it].set(moved),
                        go=(moved > 0) & (q - s.q >= threshold))

    q0 = entry_modularity(gr.src, gr.dst, gr.w, comm, k, tot, opts.resolution)
    s = OptState(comm, tot, q0, jnp.int32(0), jnp.zeros(max_iters, jnp.int32), inv2m > 0)
    s = lax.while_loop(lambda s: s.go & (s.it < max_iters), body, s)
    return s.comm, s.q, s.it, s.moves, s.go


def aggregate(gr: Level, comm, real):
    """Algorithm 3: the graph of the communities; returns (coarse Level, vertex -> coarse vertex)."""
    n_cap, e_cap = comm.shape[0], gr.src.shape[0]
    used = jax.ops.segment_sum(real.astype(jnp.int32), comm, n_cap) > 0
    new_id = jnp.cumsum(used, dtype=jnp.int32) - 1
    to_coarse = jnp.where(real, take(new_id, comm, n_cap), n_cap)
    s = take(to_coarse, gr.src, n_cap)
    d = take(to_coarse, gr.dst, n_cap)
    w = jnp.where((gr.src != gr.dst) & (s == d), gr.w / 2, gr.w)
    g = pair_groups(s, d, n_cap)
    total = jax.ops.segment_sum(w, g.grp, e_cap)             # at each pair's first sorted position
    keep = g.head & (g.a < n_cap)
    slot = jnp.where(keep, jnp.cumsum(g.head, dtype=jnp.int32) - 1, e_cap)
    src = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.a, mode="drop")
    dst = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.b, mode="drop")
    w = jnp.zeros_like(gr.w).at[slot].set(total, mode="drop")
    return Level(src, dst, w, jnp.sum(used, dtype=jnp.int32)), to_coarse


def size_classes(e_cap: int) -> list[int]:
    """Static entry-array lengths a level may run on: e_cap, e_cap / 4, ... down to SIZE_CLASS_MIN.

    The coarse graphs shrink, but the loop's arrays keep the input's
    capacity; a level whose entries fit a smaller class runs on that prefix
    (a ``lax.switch`` over the classes; under ``vmap`` every class runs, a
    select picks, which costs at most 4/3 of the largest).
    """
    sizes = [e_cap]
    while sizes[-1] // 4 >= SIZE_CLASS_MIN:
        sizes.append(sizes[-1] // 4)
    return sizes


def louvain(g, opts: Options, *, max_levels: int, max_iters: int):
    """The multi-level loop; returns (labels, levels, modularity, level_q, status, stats)."""
    n_cap = g.vertex_cap
    ids = jnp.arange(n_cap, dtype=jnp.int32)
    gr = Level(g.adj.src, g.adj.indices, g.adj.weights, g.n)
    k0 = degrees(gr.src, gr.dst, gr.w, n_cap)
    real0 = ids < g.n
    comm0 = jnp.where(real0, ids, n_cap)
    q0 = entry_modularity(gr.src, gr.dst, gr.w, comm0, k0, k0, opts.resolution)

    e_cap = gr.src.shape[0]
    sizes = size_classes(e_cap)

    def work(gr: Level, size: int):
        """One level on the first ``size`` entries (all the valid ones), padded back to e_cap."""
        sub = Level(gr.src[:size], gr.dst[:size], gr.w[:size], gr.n)
        k = degrees(sub.src, sub.dst, sub.w, n_cap)
        deg = jax.ops.segment_sum(jnp.ones_like(sub.src), sub.src, n_cap)
        real = ids < sub.n
        thr = jnp.where(sub.n > opts.large_graph, opts.threshold_large, opts.threshold)
        comm, q, iters, moves, hit = optimise(sub, k, deg, real, opts, thr, max_iters)
        coarse, to_coarse = aggregate(sub, comm, real)
        pad = (0, e_cap - size)
        coarse = Level(jnp.pad(coarse.src, pad, constant_values=n_cap),
                       jnp.pad(coarse.dst, pad, constant_values=n_cap), jnp.pad(coarse.w, pad), coarse.n)
        return coarse, to_coarse, q, iters, moves, hit

    def body(st: LouvainState) -> LouvainState:
        gr = st.graph
        if len(sizes) == 1:
            coarse, to_coarse, q, iters, moves, hit = work(gr, e_cap)
        else:   # the smallest size class that holds this level's entries
            used = jnp.sum(gr.src < n_cap)
            pick = jnp.sum(jnp.asarray(sizes) >= used) - 1
            coarse, to_coarse, q, iters, moves, hit = lax.switch(
                pick, [lambda gr, size=size: work(gr, size) for size in sizes], gr)
        moved = coarse.n < gr.n
        record = (st.level == 0) | moved
        orig = take(to_coarse, st.orig, -1)
        at = jnp.where(record, st.level, max_levels)   # max_levels: dropped
        return LouvainState(
            graph=coarse, orig=orig,
            levels=st.levels.at[at].set(orig, mode="drop"),
            level_q=st.level_q.at[at].set(q, mode="drop"),
            moves=st.moves.at[at].set(moves, mode="drop"),
            iters=st.iters.at[at].set(iters, mode="drop"),
            verts=st.verts.at[at].set(gr.n, mode="drop"),
            level=st.level + record.astype(jnp.int32),
            q=q, done=~moved | ~(q - st.q >= opts.threshold),
            hit_max_iters=st.hit_max_iters | (hit & record))

    wdt = gr.w.dtype
    st = LouvainState(
        graph=gr, orig=jnp.where(real0, ids, -1),
        levels=jnp.full((max_levels, n_cap), -1, jnp.int32),
        level_q=jnp.full(max_levels, jnp.nan, wdt),
        moves=jnp.zeros((max_levels, max_iters), jnp.int32),
        iters=jnp.zeros(max_levels, jnp.int32), verts=jnp.zeros(max_levels, jnp.int32),
        level=jnp.int32(0), q=q0, done=jnp.bool_(False), hit_max_iters=jnp.bool_(False))
    st = lax.while_loop(lambda s: ~s.done & (s.level < max_levels), body, st)

    labels = st.orig
    rows = jnp.arange(max_levels)[:, None]
    levels = jnp.where(rows < st.level, st.levels, labels[None, :])
    level_q = jnp.where(jnp.arange(max_levels) < st.level, st.level_q, st.q)
    k_final = jax.ops.segment_sum(k0, jnp.where(real0, labels, n_cap), n_cap)
    q = entry_modularity(gr.src, gr.dst, gr.w, jnp.where(real0, labels, n_cap), k0, k_final,
                         opts.resolution)
    status = jnp.where(st.hit_max_iters | ~st.done, MAX_ITERS, CONVERGED).astype(jnp.int32)
    stats = dict(levels=st.level, iterations=st.iters, moves=st.moves, vertices=st.verts,
                 communities=st.graph.n)
    return labels, levels, q, level_q, status, stats
