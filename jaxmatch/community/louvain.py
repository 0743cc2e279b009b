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

1. **Buckets** (once per level, :func:`group_by_bucket`). The degree buckets
   of the paper (vertices with 1-4, 5-8, 9-16, 17-32, 33-84, 85-319 and
   >= 320 stored entries) do not change during a level, so the non-loop
   entries are sorted once by the bucket of their source (a stable sort: inside
   a bucket they stay sorted by (source, target)); bucket b's entries are then
   the contiguous range ``start[b] .. start[b] + count[b]``.
2. **Modularity optimisation** (Algorithm 1, :func:`optimise`). Every vertex
   starts alone (C[i] = i). One *iteration* (sweep) runs the non-empty
   buckets in turn, lowest degrees first (as the paper; coarse levels try
   both orders, see "Bucket order" below); inside a bucket all vertices
   choose a move at once (Algorithm 2) and move together; the community
   totals a_c and sizes are updated after each bucket (by the movers'
   degrees; recomputed exactly once per sweep), so later buckets see the
   moves of earlier ones. Iterations repeat while the modularity gain of an
   iteration is at least the threshold (``threshold_large * |Q|`` while more
   than ``large_graph`` vertices of the level's graph have a non-loop entry,
   else ``threshold``), at most ``max_iters`` times.
3. **Compute move** (Algorithm 2, :func:`move_bucket`). The GPU code
   accumulates e_{i->c} in per-vertex hash tables. Here the bucket's entries
   (i, j) are read through a window of static length (the smallest of the
   size classes, see :func:`window_classes`, that holds the bucket) and
   grouped by (vertex, C(j)) pair. In a bucket whose rows hold at most
   ``Config.shift_max`` entries (every bucket of a mesh or road graph) each entry
   is compared with the ``width - 1`` entries before it (rows are
   contiguous), which finds the pair's first entry without a sort; wider
   buckets are sorted by C(j) with one stable sort: since they were sorted
   by i, the result is ordered by (C(j), i), so every pair is one run of
   equal keys. A segment sum over the pairs gives e_{i->c} (both ways add a
   pair's weights in entry order: the same bits). The gain of Eq. (2),

       dQ = (e_{i->c} - e_{i->C(i)\\{i}}) / m + k_i (a_{C(i)\\{i}} - a_c) / (2 m^2),

   (null-model term scaled by ``resolution``), is maximised by a segment max
   per vertex, ties to the lowest community id by a segment min; the vertex
   moves when the best gain is positive. The singleton rule of the paper
   (after Lu, Halappanavar, Kalyanaraman): a vertex alone in its community
   may join another one-vertex community c only if c < C(i), applied, as its
   purpose is, to the pairs that move at the same time (c's vertex is in the
   same bucket; see below).
4. **Aggregation** (Algorithm 3, :func:`aggregate`). Non-empty communities
   are renumbered by a prefix sum; every entry (i, j, w) becomes (C'(i),
   C'(j), w), entries are grouped by the new pair (:func:`pair_groups`) and
   summed per run, and the runs are compacted to the front. An entry that
   becomes a diagonal one contributes w/2 (an edge inside a community is
   stored twice) and an old diagonal entry w, so the coarse self-loop holds
   the community's internal weight, each edge once, and coarse degrees equal
   the sums of the members' degrees. The last level's coarse graph is not
   built (nothing reads it).

Levels repeat until a level moves no vertex, or improves the modularity by
less than ``threshold``, or ``max_levels`` levels have run. Then, with
``refine`` (the default), the final partition is **refined** on the input
graph: one more modularity optimisation that starts from it instead of from
singletons (multilevel refinement, as in Rotta and Noack's multilevel local
search and networkit's PLMR), which moves the input vertices that the
coarse levels put on the wrong side.

Where the array version differs from the CUDA code, and why:

* Hash tables -> in-row comparisons (rows of at most ``Config.shift_max``
  entries: ``ceil((width - 1) / shift_unroll)`` fused passes over the
  bucket) or one stable sort of the bucket's own entries (C(j) as key,
  position as value or packed into the key: a radix sort on a GPU);
  deterministic. On CPU the step of a 1.36M-entry bucket (Delaunay, rows
  of 5-8 entries, window 2^21) took 0.82 s with the key-value sort and
  0.17 s with the comparisons.
* Atomics: a scatter costs one atomic per update on a GPU, and updates to
  one address serialise. The segment reductions over a row's entries where
  few entries count (the own community, the best target, conflicts) scatter
  only those (:func:`sparse_reduce`); per-level counts use run lengths and
  one masked reduction per bucket, not scatters into a few addresses. H100
  profile (``experiments/profile_louvain.py``) of the first level of the
  benchmark's 1e7-edge graphs: road 379 -> 56 ms, random geometric 473 ->
  87 ms, power-law 469 -> 90 ms (same answers, bit for bit); before, seven
  of these reductions took 42 of road's 54 ms a sweep.
* Fixed shapes: every level keeps the input's capacities; a bucket runs in
  the smallest window class that holds it, per-level work (bucket grouping,
  aggregation, the modularity of a sweep) runs on the smallest class that
  holds the level's entries (``lax.switch`` over the classes; one class
  when the entry capacity is at most ``Config.single_class_max``, the vmap case); an
  empty bucket is skipped. Under ``jax.vmap(..., axis_name=a)`` with
  ``axis=a`` the batch agrees on the class by a ``lax.pmax`` of the lengths
  (the switch index is then unbatched, so one branch runs, not all), and
  small capacities get classes too (:func:`window_classes` ``shared``):
  without it every bucket of every level of a vmapped graph runs on the
  whole entry capacity. On a batch of 256 planted-partition graphs of
  129-256 vertices (capacity 256 / 2048 entries, 4-5 buckets a sweep) that
  took 3.2x the time on CPU (21.7 s against 6.7 s); the answers are the same.
* Safe parallel moves. In a bucket, all vertices move at once on gains
  computed as if nobody else moved. On sparse planar graphs (road grids,
  Delaunay meshes: every vertex in the first buckets) the paper's rules alone
  let neighbours swap or chase each other's communities, and the
  modularity came out 1.3% below igraph's. Two cheap O(entries) filters fix
  that: (a) *interaction bound*: Eq. (2) of vertex i is lowered by
  ``resolution * k_i * (K_in(target) + K_out(source) - 2 k_i) / (4 m^2)``,
  half the null-model cost of all other vertices that intend to enter i's
  target or leave i's source in the same bucket; a move whose bounded gain
  is not positive waits for the next iteration; (b) *conflict resolution*:
  moves of neighbours i and j conflict when one enters the community the
  other leaves (a swap, or i joining C(j) while j leaves it); in
  ``Config.resolve_rounds`` rounds, a move survives when its bounded gain beats
  (ties: smaller id) every undecided conflicting neighbour's, and beaten
  neighbours drop out; moves still undecided wait. Together they guarantee
  that the bucket's moves raise the modularity at least by the sum of their
  bounded gains (the pairwise interaction terms left are all non-negative),
  the property the sequential method has. (c) *exclusive moves*: where (a)
  and (b) leave a bucket no move (on a clique every vertex's bound cancels its
  whole gain), the candidates that are the best among all candidates touching
  their source or target community move (:func:`exclusive_moves`); they touch
  disjoint communities, so Q rises by exactly their gains, and a level ends
  only at a local optimum of single moves (``certify.check_local_optimum``).
* The singleton rule blocks i -> c (both singletons, c > C(i)) only when c's
  vertex is in i's bucket, i.e. could move in the same step; the paper's
  wording (every singleton pair) also blocked moves toward singletons of
  other buckets, which do not move then. Measured on power-law and RMAT
  graphs of 2^12-2^14 vertices, the unrestricted rule cost 1.5-4% of the
  modularity (the sequential method has no such rule); swaps inside a bucket
  are still blocked, and (b) covers the rest.
* Refinement (above) is not in the paper: without it the bulk-synchronous
  moves ended 2.5-5% below igraph on power-law and RMAT graphs (Q about 0.1-0.2,
  where a few misplaced hubs matter); with it (and the singleton rule above)
  within 0.6% of igraph or above it, on 2^12-2^15 vertices and several seeds.
  It costs one more optimisation on the input graph, which starts near a
  local optimum (a few sweeps; one under ``threshold_large``).
* Bucket order: the paper's Algorithm 1 runs the buckets from the lowest
  degrees up. On the first level that is the order here too; the coarse
  levels and the refinement (``Config.order`` = 2, the default) run their
  optimisation twice from the same start, lowest first and highest first
  (the hubs, and the big communities, choose first), and keep the run at
  the higher modularity. Neither order alone is within 1% of igraph on both
  heavy-tailed classes, and they lose on the coarse levels. H100 runs of
  ``experiments/bench_louvain.py``'s 1e7-edge graphs (seed 0; Q / igraph's
  Q): power-law (Chung-Lu, average degree 16, 1,315,789 vertices, 10.4M
  edges; igraph 0.1763) 0.979 lowest first everywhere (order 0),
  1.004 highest first (order 1), 0.995 with both; RMAT (scale 19,
  7.74M edges; igraph 0.0792) 0.994, 0.936 and 0.994. Tried, same graphs:
  both orders on the first level as well (power-law 1.003, RMAT 0.993;
  costs the first level twice over); each order for 3 sweeps of a coarse
  level, then the better one alone (RMAT 0.975: the order ahead after 3
  sweeps was not the one ahead at the end); on CPU, highest first on the
  first level only (RMAT 0.992, power-law 0.973) and alternating orders
  between sweeps (RMAT 0.944). The second run costs the coarse levels'
  sweeps again: 0.52 -> 0.78 s on that power-law graph, 0.63 -> 1.06 s on
  that RMAT graph. Delaunay, random geometric and road graphs have Q
  within 1e-4 either way.
* An iteration that still lowers the modularity (float rounding only, after
  the above) is undone and ends the level.
* ``threshold_large`` is relative (gain >= ``threshold_large * |Q|``), the
  paper's t_bin absolute: equal on mesh-like graphs, but the absolute 1e-2
  ended the first level of power-law graphs (Q about 0.1) after two sweeps,
  16% below igraph at 10.4M edges (H100 run of 2026-11-22).
* ``large_graph`` is compared with the vertices that have a non-loop entry
  (the ones that can move), not with all of the level's vertices: isolated
  vertices cost nothing in a sweep, and a third of an RMAT graph's are
  isolated. Counting them kept RMAT scale 18's second level (136,664
  vertices, about 48,000 that can move) under ``threshold_large``: 10 sweeps
  instead of 20, Q 0.0821 against 0.0824 after refinement (igraph's,
  randomised: 0.0834-0.0843), 40 s against 61 s (2-core CPU, seed 1).
  Mesh, road and power-law graphs (no or few isolated vertices) give the
  same answers.
* ``large_graph=10_000`` (a user's choice, not the default) lets coarse
  levels of 10^4-10^5 vertices stop sweeping at the relative gain too, a
  form of GVE-Louvain's threshold scaling across levels: on the H100 at
  about 10^7 edges 2.26x faster on RMAT (its second level: 10 sweeps
  instead of 26) and 1.05-1.12x on power-law, Delaunay, RGG and road
  graphs, at 0.9927-1.0000 of the default's modularity; on RMAT that is
  0.987 of igraph's, under the 1% the default keeps (experiments/RESULTS.md,
  session 14).
* The level loop stops on the smaller ``threshold`` (the paper does not say
  which one it uses between levels).

Cost, per sweep, per non-empty bucket (a window is at most twice its
bucket, 4/3 of it in the largest classes, or ``Config.window_min``): the grouping
(``ceil((width - 1) / 4)`` passes when the bucket's rows hold at most
``Config.shift_max`` entries, else a sort: a key-only sort of ``C(j) * W +
position`` when that fits an int32, else a stable key-value sort, then
three gathers by the permutation and a cumsum); about 25 gathers and 18
scatters / segment reductions of window length (neighbour lookups use the
rows of the window, through ``d_rank`` computed once per level); O(n) per
sweep for a_c and Q, and one pass over the level's entries for Q. Per
level: one sort of the level's entries for the bucket grouping, and one
for the aggregation, except after the last level.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, take
from jaxmatch.status import Status
from jaxmatch.community.modularity import degrees, entry_modularity

# Degree buckets of the paper (Section 4.1): bucket b holds the vertices whose
# number of stored entries d satisfies BUCKETS[b] < d <= BUCKETS[b + 1].
BUCKETS = (0, 4, 8, 16, 32, 84, 319, int(INT_MAX))
N_BUCKETS = len(BUCKETS) - 1

DEFAULT_MAX_LEVELS = 32
DEFAULT_MAX_ITERS = 100


class Config(NamedTuple):
    """The solver's static knobs (hashable: a ``jit`` static argument, so part of the cache key).

    * ``single_class_max``, ``window_min``, ``fine_classes``: the window
      classes (:func:`window_classes`): entry capacities up to
      ``single_class_max`` use one class (no ``lax.switch``: under vmap a
      switch runs every branch); larger ones e_cap, 3/4, 1/2, 1/4, 1/8 of it
      (``fine_classes`` classes a factor 2 apart), then a factor 4 apart down
      to ``window_min``.
    * ``shared_min``: the smallest class when a vmapped batch shares its
      classes (``axis_name``).
    * ``shift_max``, ``shift_unroll``: buckets whose rows hold at most
      ``shift_max`` entries group (vertex, C(j)) pairs by comparing each entry
      with the ones before it in its row, ``shift_unroll`` offsets per loop
      step (see :func:`move_bucket`); wider ones by a sort.
    * ``resolve_rounds``: rounds of conflict resolution (:func:`resolve_conflicts`).
    * ``order``: the order of the buckets in a sweep (module docstring,
      "Bucket order"): 0 the paper's lowest degrees first, 1 highest first, 2
      lowest first on the first level and both (the better run kept) on the
      coarse levels and in the refinement.
    * ``sort_method``: how :func:`pair_groups` sorts: "auto" (by backend),
      "kv" (key-value sorts) or "key" (key-only / two-key).
    """
    single_class_max: int = 1 << 18
    window_min: int = 1 << 16
    shared_min: int = 1 << 7
    fine_classes: int = 4
    shift_max: int = 32
    shift_unroll: int = 4
    resolve_rounds: int = 2
    order: int = 2
    sort_method: str = "auto"


DEFAULT = Config()


class Level(NamedTuple):
    """The graph of one level, in the input's capacities (sentinel = vertex_cap)."""
    src: jax.Array     # [E] entry sources, sorted by (src, dst)
    dst: jax.Array     # [E]
    w: jax.Array       # [E] weights, 0 in padding
    n: jax.Array       # vertices at this level


class Buckets(NamedTuple):
    """A level's non-loop entries grouped by the degree bucket of their source."""
    s: jax.Array       # [E] sources: bucket 0's entries, then bucket 1's ...; n_cap after the last
    d: jax.Array       # [E] targets (n_cap in padding)
    w: jax.Array       # [E] weights (0 in padding)
    d_rank: jax.Array  # [E] row of d inside the bucket when d is in s's bucket, else -1
    start: jax.Array   # [N_BUCKETS] first position of each bucket
    count: jax.Array   # [N_BUCKETS] entries of each bucket
    width: jax.Array   # [N_BUCKETS] most entries of one vertex (row) in each bucket
    of: jax.Array      # [N] bucket of each vertex (-1: no stored entry, or padding)
    k: jax.Array       # [N] weighted degrees (a loop counts twice)
    loops: jax.Array   # sum of the diagonal entries' contributions to sum_i e_{i -> C(i)}
    movable: jax.Array  # vertices with a non-loop entry (the ones that can move)


class Options(NamedTuple):
    """Traced options (changing them does not recompile)."""
    resolution: jax.Array
    threshold: jax.Array
    threshold_large: jax.Array
    large_graph: jax.Array
    max_levels: jax.Array    # levels run at most (<= the static level capacity)
    max_iters: jax.Array     # iterations of one level at most (<= the static iteration capacity)
    refine: jax.Array        # bool: refine the final partition on the input graph
    order: jax.Array         # bucket order (Config.order): 0 lowest degrees first, 1 highest first, 2 both


class OptState(NamedTuple):
    comm: jax.Array    # [N] community of each vertex (N for padding)
    tot: jax.Array     # [N] a_c
    size: jax.Array    # [N] vertices of each community
    q: jax.Array       # modularity of comm on this level's graph
    it: jax.Array
    moves: jax.Array   # [max_iters] vertices moved per iteration
    go: jax.Array


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


# --------------------------------------------------------------------------
# static-length windows


def window_classes(e_cap: int, shared: bool = False, cfg: Config = DEFAULT) -> list[int]:
    """Static array lengths work may run on: [e_cap] when e_cap <= single_class_max,
    else e_cap, 3 e_cap / 4, e_cap / 2, e_cap / 4, e_cap / 8 (``fine_classes``
    classes a factor 2 apart, where the big buckets fall, and one between the
    first two: on sparse meshes and road graphs one bucket holds most entries,
    and a graph's entries fill half to all of its power-of-two capacity), then
    a factor 4 apart down to window_min (``cfg``). Each class compiles its own copy of
    the bucket step.

    ``shared``: the batch of a ``vmap`` picks one class for all its graphs
    (``axis_name``), so small capacities get classes too, down to shared_min."""
    sizes = [e_cap]
    floor = cfg.shared_min if shared and e_cap <= cfg.single_class_max else cfg.window_min
    if e_cap > cfg.single_class_max or shared:
        while True:
            nxt = sizes[-1] // (2 if len(sizes) < cfg.fine_classes else 4)
            if nxt < floor:
                break
            sizes.append(nxt)
    if e_cap > cfg.single_class_max and not shared and cfg.fine_classes > 1:
        sizes.insert(1, e_cap // 4 * 3)
    return sizes


def level_classes(e_cap: int, shared: bool = False, cfg: Config = DEFAULT) -> list[int]:
    """The coarser classes of once-per-level work (bucket grouping, aggregation, Q):
    e_cap, e_cap / 8, e_cap / 64 ... >= window_min ([e_cap] up to single_class_max;
    with ``shared``, see :func:`window_classes`: e_cap, e_cap / 4 ... >= shared_min)."""
    sizes = [e_cap]
    if shared and e_cap <= cfg.single_class_max:
        while sizes[-1] // 4 >= cfg.shared_min:
            sizes.append(sizes[-1] // 4)
        return sizes
    while e_cap > cfg.single_class_max and sizes[-1] // 8 >= cfg.window_min:
        sizes.append(sizes[-1] // 8)
    return sizes


def by_class(fn, used, e_cap: int, *args, classes=level_classes, axis=None, cfg: Config = DEFAULT):
    """``fn(size, *args)`` for the smallest class ``size`` >= ``used`` of ``classes(e_cap)``.

    A ``lax.switch`` over the classes (none when there is one); every
    branch must return arrays of equal shapes (pad back to e_cap). Under
    ``jax.vmap(..., axis_name=axis)`` the class is the batch's largest
    (``lax.pmax``): the switch index is then not batched, and only one
    branch runs (a batched index runs every branch)."""
    sizes = classes(e_cap, axis is not None, cfg)
    if len(sizes) == 1:
        return fn(sizes[0], *args)
    if axis is not None:
        used = lax.pmax(used, axis)
    pick = jnp.sum(jnp.asarray(sizes) >= used) - 1
    return lax.switch(pick, [partial(fn, size) for size in sizes], *args)


def _pad(a, e_cap, fill):
    return jnp.pad(a, (0, e_cap - a.shape[0]), constant_values=fill)


# --------------------------------------------------------------------------
# grouping by pairs (aggregation)


def _heads(a, b):
    """True where the pair (a[p], b[p]) differs from the previous one (a run starts)."""
    return jnp.concatenate([jnp.ones(1, bool), (a[1:] != a[:-1]) | (b[1:] != b[:-1])])


class Groups(NamedTuple):
    """Entries grouped by a pair of ids."""
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


def _key_value_sorts(sort_method: str) -> bool:
    """Group pairs with key-value sorts (radix sorts on a GPU) rather than key-only/multi-key ones."""
    if sort_method == "auto":
        return jax.default_backend() not in ("cpu", "tpu")
    return sort_method == "kv"


def pair_groups(a, b, n_cap: int, sort_method: str = "auto") -> Groups:
    """Group entries by the pair (a, b), ids in [0, n_cap] (n_cap = the sentinel).

    When the pair packs into one integer key (n_cap <= 46339, or any n_cap in
    64-bit mode) it is sorted as one key; otherwise by a stable sort on b
    then a stable sort on a. XLA's fastest sorts differ by backend: on CPU a
    key-only sort (plus a binary search for each entry's group) or one
    two-key sort; on a GPU single-key key-value sorts, which become radix
    sorts (``sort_method`` = "auto" picks by ``jax.default_backend()``).
    Every path gives the same groups. Used once per level (aggregation).
    """
    e_cap = a.shape[0]
    pos = jnp.arange(e_cap, dtype=jnp.int32)
    kdt = _key_dtype(n_cap)
    kv = _key_value_sorts(sort_method)
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


# --------------------------------------------------------------------------
# one level: buckets, moves, sweeps


def stable_sort_with_positions(key, key_max: int):
    """(sorted key, positions in stable order) for int32 keys in [0, key_max].

    Packed into one int32 key-only sort (key * len + position) when it fits:
    on CPU a key-only sort is about 7x faster than a key-value one, and on a
    GPU it moves half the bytes; otherwise a stable key-value sort (a radix
    sort of pairs on a GPU).
    """
    size = key.shape[0]
    pos = jnp.arange(size, dtype=jnp.int32)
    if (key_max + 1) * size - 1 <= INT_MAX:
        packed = lax.sort(key * size + pos)
        return packed // size, packed % size
    return lax.sort((key, pos), num_keys=1, is_stable=True)


def vertex_buckets(deg):
    """Bucket of each vertex by its number of stored entries (-1 when it has none)."""
    upper = jnp.asarray(BUCKETS[1:-1], deg.dtype)
    b = jnp.sum(deg[:, None] > upper[None, :], axis=1, dtype=jnp.int32)
    return jnp.where(deg > 0, b, -1)


def run_lengths(ids, n_cap: int):
    """[n_cap] entries of each id, for ``ids`` whose equal values are contiguous (id n_cap:
    padding, not counted). By the distance between run heads, where a segment sum of ones over
    sorted ids costs one atomic per entry on one address per run (on a GPU)."""
    size = ids.shape[0]
    pos = jnp.arange(size, dtype=jnp.int32)
    head = ids != jnp.concatenate([jnp.full(1, -1, ids.dtype), ids[:-1]])
    nxt = lax.cummin(jnp.where(head, pos, size), reverse=True)
    nxt = jnp.concatenate([nxt[1:], jnp.full(1, size, nxt.dtype)])
    return jnp.zeros(n_cap, jnp.int32).at[jnp.where(head, ids, n_cap)].set(nxt - pos, mode="drop")


def per_bucket(values, bucket, reduce):
    """[N_BUCKETS] ``reduce`` (jnp.sum or jnp.max, of non-negative values; 0 when none) of the
    values of each bucket id (others ignored): one masked reduction per bucket, where a scatter
    into N_BUCKETS addresses would serialise on a GPU."""
    return jnp.stack([reduce(jnp.where(bucket == b, values, 0)) for b in range(N_BUCKETS)])


def group_by_bucket(gr: Level, n_cap: int, size: int, of=None) -> Buckets:
    """Sort the first ``size`` entries of ``gr`` (all its valid ones) by bucket; arrays padded to e_cap.

    ``of`` (the bucket of each vertex) defaults to :func:`vertex_buckets` of
    the stored-entry counts; a vertex with ``of = -1`` never moves. One
    stable key-value sort (the key has N_BUCKETS + 1 values).
    """
    e_cap = gr.src.shape[0]
    src, dst, w = gr.src[:size], gr.dst[:size], gr.w[:size]
    k = degrees(src, dst, w, n_cap)
    if of is None:
        of = vertex_buckets(run_lengths(src, n_cap))
    loop = src == dst
    key = jnp.where(loop | (src >= n_cap), N_BUCKETS, take(of, src, N_BUCKETS))
    key = jnp.where(key < 0, N_BUCKETS, key)
    _, perm = stable_sort_with_positions(key, N_BUCKETS)
    count = per_bucket(jnp.ones_like(key), key, jnp.sum)
    start = jnp.cumsum(count) - count
    keep = jnp.arange(size) < jnp.sum(count)
    s = jnp.where(keep, src[perm], n_cap)
    d = jnp.where(keep, dst[perm], n_cap)
    ww = jnp.where(keep, w[perm], 0)
    kb = key[perm]
    # rows: the vertices with entries, numbered inside their bucket in id order (the numbering
    # move_bucket's windows use); d_rank: the row of the entry's target when it is in the same
    # bucket (it may move in the same step), else -1
    head = keep & (s != jnp.concatenate([jnp.full(1, n_cap, s.dtype), s[:-1]]))
    row = jnp.cumsum(head, dtype=jnp.int32) - 1
    rows = per_bucket(head.astype(jnp.int32), kb, jnp.sum)
    rank_here = row - take(jnp.cumsum(rows) - rows, kb, 0)
    rank = jnp.full(n_cap, -1, jnp.int32).at[jnp.where(head, s, n_cap)].set(rank_here, mode="drop")
    d_rank = jnp.where(keep & (take(of, d, -1) == kb), take(rank, d, -1), -1)
    row_len = run_lengths(s, n_cap)
    width = per_bucket(row_len, of, jnp.max)
    loops = 2 * jnp.sum(jnp.where(loop & (src < n_cap), w, 0))
    return Buckets(_pad(s, e_cap, n_cap), _pad(d, e_cap, n_cap), _pad(ww, e_cap, 0),
                   _pad(d_rank, e_cap, -1), start.astype(jnp.int32), count.astype(jnp.int32),
                   width.astype(jnp.int32), of, k, loops,
                   jnp.sum(row_len > 0, dtype=jnp.int32))


def move_bucket(bk: Buckets, comm, tot, size, b, inv2m, resolution, window: int,
                group: str = "sort", cfg: Config = DEFAULT):
    """Algorithm 2 for every vertex of bucket ``b`` at once; returns (comm, tot, size, moved).

    ``comm`` communities [N], ``tot`` = a_c, ``size`` community sizes,
    ``inv2m`` = 1 / 2m (0 when m = 0: nothing moves). The bucket's entries are
    read through a window of static length ``window`` >= count[b]. All
    per-vertex work is on the window's rows (W-sized arrays); N-sized arrays
    are read by gathers and written by scatters of W values, and two are
    filled (the interaction bound's community sums).
    """
    n_cap, e_cap, W = comm.shape[0], bk.s.shape[0], window
    first, cnt = bk.start[b], bk.count[b]
    lo = jnp.clip(first, 0, e_cap - W)
    cut = lambda a: lax.dynamic_slice(a, (lo,), (W,))
    pos = lo + jnp.arange(W, dtype=jnp.int32)
    valid = (pos >= first) & (pos < first + cnt)
    s = jnp.where(valid, cut(bk.s), n_cap)
    d = jnp.where(valid, cut(bk.d), n_cap)
    w = jnp.where(valid, cut(bk.w), 0)
    jr = jnp.where(valid, cut(bk.d_rank), -1)
    # rows: the bucket's vertices in the window, numbered 0 .. R-1 in order
    row_head = valid & (s != jnp.concatenate([jnp.full(1, n_cap, s.dtype), s[:-1]]))
    rid = jnp.maximum(jnp.cumsum(row_head, dtype=jnp.int32) - 1, 0)   # sorted; masked entries harmless
    vertex = jnp.full(W, n_cap, jnp.int32).at[jnp.where(row_head, rid, W)].set(s, mode="drop")
    real_row = vertex < n_cap
    k_row = take(bk.k, vertex, 0)
    comm_row = take(comm, vertex, n_cap)

    c = jnp.where(valid, take(comm, d, n_cap), n_cap)
    if group == "shift":
        # group the entries by (i, C(j)) in place: the first entry of each pair in its row is
        # found by comparing with the width[b] - 1 entries before it (rows are contiguous and
        # hold at most width[b] <= shift_max entries; entries further back are in other rows),
        # shift_unroll offsets per loop step (one fused pass); e_{i->c} sums the pair's weights
        # in entry order, as the sort below does, so both give the same bits
        pos = jnp.arange(W, dtype=jnp.int32)
        unroll = cfg.shift_unroll
        pad = -(-(cfg.shift_max - 1) // unroll) * unroll
        cp = jnp.concatenate([jnp.full(pad, -1, c.dtype), c])
        rp = jnp.concatenate([jnp.full(pad, -1, rid.dtype), rid])

        def earlier(t, first):
            for u in range(unroll):                          # larger offsets later: the first copy wins
                k = t * unroll + u + 1
                same = ((lax.dynamic_slice(cp, (pad - k,), (W,)) == c)
                        & (lax.dynamic_slice(rp, (pad - k,), (W,)) == rid))
                first = jnp.where(same, pos - k, first)
            return first

        first = lax.fori_loop(0, (bk.width[b] + unroll - 2) // unroll, earlier, pos)
        sc, srid, jrs = c, rid, jr
        head = valid & (first == pos)
        e_ic = jax.ops.segment_sum(w, first, W)            # at each pair's first entry
    else:
        # group the entries by (C(j), i): one stable sort by C(j) (entries are sorted by i)
        sc, perm = stable_sort_with_positions(c, n_cap)
        srid, sw, sv, jrs = rid[perm], w[perm], sc < n_cap, jr[perm]
        head = sv & ((sc != jnp.concatenate([jnp.full(1, -1, sc.dtype), sc[:-1]]))
                     | (srid != jnp.concatenate([jnp.full(1, -1, srid.dtype), srid[:-1]])))
        run = jnp.cumsum(head, dtype=jnp.int32) - 1
        # the window's unused entries (sorted last) are dropped, not added (0) to the last pair: on
        # a GPU that was millions of atomics on one address, half of an RMAT run (session 14)
        e_ic = jax.ops.segment_sum(sw, jnp.where(sv, jnp.maximum(run, 0), W), W,
                                   indices_are_sorted=True)[jnp.maximum(run, 0)]
    ci = comm_row[srid]
    own = head & (sc == ci)
    e_own = sparse_reduce("add", e_ic, srid, own, W, 0)           # e_{i -> C(i) \ {i}}
    single = size == 1
    blocked = (take(single, ci, False) & take(single, sc, False) & (sc > ci)
               & (jrs >= 0))                                       # the singleton rule
    allowed = head & ~own & ~blocked
    # m * dQ of Eq. (2) = score(target) - stay; score holds the terms that depend on the target
    score = jnp.where(allowed, e_ic - resolution * k_row[srid] * take(tot, sc, 0) * inv2m, -jnp.inf)
    best = sparse_reduce("max", score, srid, allowed, W, -jnp.inf)
    at_best = allowed & (score == best[srid])
    target = sparse_reduce("min", sc, srid, at_best, W, n_cap)         # ties: lowest id
    stay = e_own - resolution * k_row * (take(tot, comm_row, 0) - k_row) * inv2m
    move = real_row & (target < n_cap) & (best > stay) & (inv2m > 0)
    # (a) the interaction bound: half the null-model cost of the other movers in and out
    km = jnp.where(move, k_row, 0)
    k_in = jax.ops.segment_sum(km, jnp.where(move, target, n_cap), n_cap)
    k_out = jax.ops.segment_sum(km, jnp.where(move, comm_row, n_cap), n_cap)
    crowd = take(k_in, target, 0) + take(k_out, comm_row, 0) - 2 * k_row
    gain = best - stay - resolution * k_row * crowd * inv2m / 2
    move = move & (gain > 0)
    # (b) conflicts between neighbours
    move = resolve_conflicts(d, c, jr, rid, vertex, comm_row, target, move, gain, cfg.resolve_rounds)
    # (c) when (a) and (b) leave the bucket no move, the exclusive moves (see exclusive_moves)
    move, target = lax.cond(
        jnp.any(move), lambda: (move, target),
        lambda: exclusive_moves(head & ~own, sc, srid, e_ic, k_row, tot, stay, real_row, comm_row,
                                vertex, inv2m, resolution))
    mover = jnp.where(move, vertex, n_cap)
    new = jnp.where(move, target, comm_row)
    comm = comm.at[mover].set(new, mode="drop")
    km = jnp.where(move, k_row, 0)
    gone = jnp.where(move, comm_row, n_cap)
    came = jnp.where(move, target, n_cap)
    tot = tot.at[gone].add(-km, mode="drop").at[came].add(km, mode="drop")
    one = move.astype(size.dtype)
    size = size.at[gone].add(-one, mode="drop").at[came].add(one, mode="drop")
    return comm, tot, size, jnp.sum(move, dtype=jnp.int32)


def exclusive_moves(allowed, sc, srid, e_ic, k_row, tot, stay, real_row, comm_row, vertex,
                    inv2m, resolution):
    """The moves of a bucket whose rules (a) and (b) left no move: returns (move, target) per row.

    Every vertex with a positive gain (Eq. (2), no singleton rule, no bound) is a
    candidate for its best target. A candidate moves when it is the best one
    (highest gain, ties: smallest id) among all candidates that leave or enter
    either of its two communities. Movers then touch pairwise disjoint
    communities, so no two of them are neighbours through a shared community,
    an edge between two movers is inside none of the four communities before
    or after, and the modularity rises by exactly the sum of their gains; the
    best candidate of the bucket always moves. So a sweep ends with no move
    only when no single vertex move raises Q: the level's partition is a local
    optimum (on a clique, where every simultaneous move cancels, one vertex
    moves per bucket and sweep instead of none).
    """
    n_cap, W = tot.shape[0], k_row.shape[0]
    score = jnp.where(allowed, e_ic - resolution * k_row[srid] * take(tot, sc, 0) * inv2m, -jnp.inf)
    best = sparse_reduce("max", score, srid, allowed, W, -jnp.inf)
    target = sparse_reduce("min", sc, srid, allowed & (score == best[srid]), W, n_cap)
    gain = best - stay
    cand = real_row & (target < n_cap) & (gain > 0) & (inv2m > 0)
    touched = jnp.concatenate([jnp.where(cand, comm_row, n_cap), jnp.where(cand, target, n_cap)])
    g2, v2 = jnp.concatenate([gain, gain]), jnp.concatenate([vertex, vertex])
    top = jnp.full(n_cap, -jnp.inf, gain.dtype).at[touched].max(g2, mode="drop")
    at_top = g2 == take(top, touched, jnp.inf)
    first = jnp.full(n_cap, n_cap, vertex.dtype).at[jnp.where(at_top, touched, n_cap)].min(v2, mode="drop")
    win = cand & (take(first, comm_row, -1) == vertex) & (take(first, target, -1) == vertex)
    return win, jnp.where(win, target, n_cap)


def sparse_reduce(op: str, values, segments, keep, size: int, identity):
    """Segment ``op`` ("add", "min" or "max") of ``values`` where ``keep``, into ``size``
    segments that start at ``identity``.

    Like ``jax.ops.segment_*`` of the values masked to the identity, with
    the same result (every kept value, once), but the entries not kept are
    dropped before the scatter. On a GPU a scatter costs one atomic per
    update, and a row's entries hit one address: where most entries are
    masked (one own community, one best target, few conflicts per row) the
    masked segment ops cost 4-9 ms each on a 25M-entry window (H100
    profile of road 10M, ``experiments/profile_louvain.py``)."""
    base = jnp.full(size, identity, values.dtype)
    return getattr(base.at[jnp.where(keep, segments, size)], op)(values, mode="drop")


def resolve_conflicts(d, c, jr, rid, vertex, comm_row, target, move, gain, rounds: int):
    """The moves (per window row) that survive ``rounds`` rounds of conflict resolution.

    Neighbours i and j conflict when both intend to move and one enters the
    community the other leaves. A round accepts every undecided mover whose
    gain beats (ties: smaller id) all its undecided conflicting neighbours,
    and drops the neighbours of accepted ones. Like a greedy (locally
    dominant) independent set of the conflict graph, weighted by gain.
    Entries (i, j) are the window's: d = j, c = C(j), jr = j's row when j is
    in the bucket (else -1: j does not move now); all lookups are in the
    window's rows.
    """
    j = jnp.maximum(jr, 0)
    m_j = (jr >= 0) & move[j]
    conf = m_j & move[rid] & ((target[rid] == c) | (target[j] == comm_row[rid]))
    g_i, g_j = gain[rid], gain[j]
    sentinel = jnp.iinfo(jnp.int32).max
    rows = vertex.shape[0]
    undecided, accepted = move, jnp.zeros_like(move)
    for _ in range(rounds):                  # unrolled: no loop (and no host sync per round on a GPU)
        live = conf & undecided[j]
        top = sparse_reduce("max", g_j, rid, live, rows, -jnp.inf)
        tie = sparse_reduce("min", d, rid, live & (g_j == g_i), rows, sentinel)
        win = undecided & ~(top > gain) & ~(tie < vertex)
        beaten = sparse_reduce("max", jnp.ones_like(rid), rid, conf & win[j], rows, 0) > 0
        undecided, accepted = undecided & ~win & ~beaten, accepted | win
    return accepted


def intra(bk: Buckets, comm, size: int):
    """sum_i e_{i -> C(i)} (= 2 * weight inside communities) from the first ``size`` bucket entries."""
    n_cap = comm.shape[0]
    s, d, w = bk.s[:size], bk.d[:size], bk.w[:size]
    same = (s < n_cap) & (take(comm, s, -1) == take(comm, d, -2))
    return jnp.sum(jnp.where(same, w, 0)) + bk.loops


def sweep_modularity(bk: Buckets, comm, tot, inv2m, resolution, axis=None, cfg: Config = DEFAULT):
    """Q of ``comm`` (Eq. (1)) on the level's graph; NaN when m = 0."""
    e_cap = bk.s.shape[0]
    used = jnp.sum(bk.count)
    x = tot * inv2m
    inside = by_class(lambda size, bk, comm: intra(bk, comm, size), used, e_cap, bk, comm, axis=axis, cfg=cfg)
    q = inside * inv2m - resolution * jnp.sum(x * x)
    return jnp.where(inv2m > 0, q, jnp.nan)


def bucket_order(count, high):
    """The non-empty degree buckets in sweep order (lowest degrees first, or highest when
    ``high``), then the empty ones; and the number of non-empty ones."""
    empty = count == 0
    order = jnp.where(high, N_BUCKETS - 1 - jnp.argsort(empty[::-1], stable=True),
                      jnp.argsort(empty, stable=True)).astype(jnp.int32)
    return order, jnp.sum(~empty, dtype=jnp.int32)


def optimise(bk: Buckets, comm, opts: Options, threshold, max_iters: int, axis=None, high=False,
             cfg: Config = DEFAULT):
    """Algorithm 1 on one level's graph from communities ``comm`` [N] (N in padding), at most
    ``opts.max_iters`` iterations (``max_iters``: the static length of the ``moves`` record),
    buckets highest degrees first when ``high``;
    another iteration while one raises Q by at least ``t_abs + t_rel * |Q|`` for
    ``threshold = (t_abs, t_rel)``.

    Returns (comm, q, iterations, moves, hit_max_iters).
    """
    n_cap, e_cap = comm.shape[0], bk.s.shape[0]
    t_abs, t_rel = threshold
    k = bk.k
    two_m = jnp.sum(k)
    inv2m = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), 0)
    real = comm < n_cap
    tot = jax.ops.segment_sum(k, comm, n_cap)
    size = jax.ops.segment_sum(real.astype(jnp.int32), comm, n_cap)
    # the non-empty buckets, lowest (or, high, highest) degrees first (see the module
    # docstring): the sweep loops over these only (under vmap: the most any graph of the batch has)
    order, busy = bucket_order(bk.count, high)

    def bucket(j, c):
        comm, tot, size, moved = c
        b = order[j]
        wide = bk.width[b] > cfg.shift_max
        if axis is not None:
            wide = lax.pmax(wide.astype(jnp.int32), axis) > 0
        comm, tot, size, m = lax.cond(
            wide, *[partial(by_class, partial(_run_bucket, group=kind, cfg=cfg), bk.count[b], e_cap,
                            classes=window_classes, axis=axis, cfg=cfg) for kind in ("sort", "shift")],
            bk, comm, tot, size, b, inv2m, opts.resolution)
        return comm, tot, size, moved + m

    def body(st: OptState) -> OptState:
        comm, _, size, moved = lax.fori_loop(0, busy, bucket, (st.comm, st.tot, st.size, jnp.int32(0)))
        tot = jax.ops.segment_sum(k, comm, n_cap)        # exact a_c once per sweep
        q = sweep_modularity(bk, comm, tot, inv2m, opts.resolution, axis, cfg)
        better = q >= st.q
        return OptState(comm=jnp.where(better, comm, st.comm), tot=jnp.where(better, tot, st.tot),
                        size=jnp.where(better, size, st.size), q=jnp.where(better, q, st.q),
                        it=st.it + 1, moves=st.moves.at[st.it].set(moved),
                        go=(moved > 0) & (q - st.q >= t_abs + t_rel * jnp.abs(q)))

    q0 = sweep_modularity(bk, comm, tot, inv2m, opts.resolution, axis, cfg)
    st = OptState(comm, tot, size, q0, jnp.int32(0), jnp.zeros(max_iters, jnp.int32), inv2m > 0)
    st = lax.while_loop(lambda s: s.go & (s.it < jnp.minimum(opts.max_iters, max_iters)), body, st)
    return st.comm, st.q, st.it, st.moves, st.go


def level_sweeps(bk: Buckets, start, opts: Options, threshold, both, max_iters: int, axis=None,
                 cfg: Config = DEFAULT):
    """:func:`optimise` of one level from ``start`` in the bucket order ``opts.order`` (0: lowest
    degrees first, 1: highest first); with ``both``, once in each order, and the run at the
    higher modularity is kept (ties: lowest first). Returns :func:`optimise`'s tuple for the kept
    run (its sweeps only). One compiled copy of :func:`optimise`, in a loop of one or two trips."""
    def trial(t, best):
        run = optimise(bk, start, opts, threshold, max_iters, axis,
                       high=jnp.where(both, t == 1, opts.order == 1), cfg=cfg)
        keep = (t == 0) | (run[1] > best[1])
        return jax.tree_util.tree_map(lambda x, y: jnp.where(keep, x, y), run, best)

    init = (start, jnp.asarray(-jnp.inf, opts.resolution.dtype), jnp.int32(0),
            jnp.zeros(max_iters, jnp.int32), jnp.bool_(False))
    return lax.fori_loop(0, jnp.where(both, 2, 1), trial, init)


def _run_bucket(window, bk, comm, tot, size, b, inv2m, resolution, group="sort", cfg: Config = DEFAULT):
    return move_bucket(bk, comm, tot, size, b, inv2m, resolution, window, group, cfg)


def coarse_ids(comm, real):
    """The non-empty communities renumbered by a prefix sum: (vertex -> coarse vertex, count)."""
    n_cap = comm.shape[0]
    used = jax.ops.segment_sum(real.astype(jnp.int32), comm, n_cap) > 0
    new_id = jnp.cumsum(used, dtype=jnp.int32) - 1
    return jnp.where(real, take(new_id, comm, n_cap), n_cap), jnp.sum(used, dtype=jnp.int32)


def aggregate(gr: Level, to_coarse, n_coarse, size: int, sort_method: str = "auto") -> Level:
    """Algorithm 3 on the first ``size`` entries: the graph of the communities (vertex i
    becomes ``to_coarse[i]``, see :func:`coarse_ids`), padded to e_cap."""
    n_cap, e_cap = to_coarse.shape[0], gr.src.shape[0]
    src, dst = gr.src[:size], gr.dst[:size]
    s = take(to_coarse, src, n_cap)
    d = take(to_coarse, dst, n_cap)
    w = jnp.where((src != dst) & (s == d), gr.w[:size] / 2, gr.w[:size])
    g = pair_groups(s, d, n_cap, sort_method)
    # at each pair's first sorted position; the padding entries (pair (n_cap, n_cap)) are dropped
    # rather than added (0) to one address, millions of GPU atomics on it (session 14)
    total = jax.ops.segment_sum(w, jnp.where(s < n_cap, g.grp, size), size)
    keep = g.head & (g.a < n_cap)
    slot = jnp.where(keep, jnp.cumsum(g.head, dtype=jnp.int32) - 1, e_cap)
    src = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.a, mode="drop")
    dst = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.b, mode="drop")
    w = jnp.zeros(e_cap, gr.w.dtype).at[slot].set(total, mode="drop")
    return Level(src, dst, w, n_coarse)


def buckets_of(gr: Level, n_cap: int, of=None, axis=None, cfg: Config = DEFAULT) -> Buckets:
    """:func:`group_by_bucket` on the smallest window class holding the level's entries."""
    e_cap = gr.src.shape[0]
    used = jnp.sum(gr.src < n_cap)
    return by_class(lambda size, gr: group_by_bucket(gr, n_cap, size, of), used, e_cap, gr, axis=axis, cfg=cfg)


def renumber(comm, real):
    """Communities renumbered 0 .. k-1 in order of their ids; (labels with -1 past n, k)."""
    n_cap = comm.shape[0]
    used = jax.ops.segment_sum(real.astype(jnp.int32), jnp.where(real, comm, n_cap), n_cap) > 0
    new_id = jnp.cumsum(used, dtype=jnp.int32) - 1
    return jnp.where(real, take(new_id, comm, -1), -1), jnp.sum(used, dtype=jnp.int32)


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

    def threshold_of(n):      # (absolute, relative) gain an iteration needs for another one
        large = n > opts.large_graph
        return jnp.where(large, 0, opts.threshold), jnp.where(large, opts.threshold_large, 0)

    def body(st: LouvainState) -> LouvainState:
        gr = st.graph
        real = ids < gr.n
        start = jnp.where(st.refining, jnp.where(real0, st.orig, n_cap), jnp.where(real, ids, n_cap))
        bk = buckets_of(gr, n_cap, axis=axis, cfg=cfg)
        # large or not by the vertices that can move: isolated ones cost nothing in a sweep
        # order 2: the coarse levels and the refinement try both bucket orders (see the docstring)
        both = (opts.order == 2) & (st.refining | (st.level > 0))
        comm, q, iters, moves, hit = level_sweeps(bk, start, opts, threshold_of(bk.movable), both,
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
            hit_max_iters=st.hit_max_iters | (hit & (record | st.refining)),
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

    labels = st.orig
    n_levels = st.level
    rows = jnp.arange(max_levels)[:, None]
    levels = jnp.where(rows < n_levels, st.levels, st.levels[jnp.maximum(n_levels - 1, 0)][None, :])
    last_q = st.level_q[jnp.maximum(n_levels - 1, 0)]
    level_q = jnp.where(jnp.arange(max_levels) < n_levels, st.level_q, last_q)
    lab = jnp.where(real0, labels, n_cap)
    q = entry_modularity(gr0.src, gr0.dst, gr0.w, lab, k0, jax.ops.segment_sum(k0, lab, n_cap),
                         opts.resolution)
    status = jnp.where(st.out_of_levels, Status.MAX_LEVELS,
                       jnp.where(st.hit_max_iters, Status.MAX_ITERS, Status.CONVERGED)).astype(jnp.int32)
    stats = dict(levels=n_levels, iterations=st.iters, moves=st.moves, vertices=st.verts,
                 communities=st.communities, refine_iterations=st.refine_iters,
                 refine_moves=st.refine_moves)
    return labels, levels, q, level_q, status, stats
