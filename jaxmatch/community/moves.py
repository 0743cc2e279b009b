"""The local-moving phase (Algorithms 1 and 2 of Paper III): modularity optimisation on one level.

:func:`optimise` (Algorithm 1) starts from a partition of the level's graph
(singletons on a fresh level, the final partition in the refinement) and runs
*iterations* (sweeps). A sweep runs the non-empty buckets (degree buckets,
or hash classes on a level with hubs: ``Config.buckets``) in turn,
lowest degrees first as the paper does (or highest first, ``high``); inside a
bucket all vertices choose a move at once (:func:`move_bucket`, Algorithm 2)
and move together. The community totals a_c and sizes are updated after each
bucket by the movers' degrees (and recomputed exactly once per sweep), so
later buckets see the moves of earlier ones. Sweeps repeat while one raises
the modularity by at least the threshold, at most ``max_iters`` times; a sweep
that still lowers it (float rounding only, after the filters below) is undone
and ends the level. :func:`level_sweeps` runs :func:`optimise` in one bucket
order or in both from the same start, and keeps the run at the higher
modularity.

**Compute move** (Algorithm 2, :func:`move_bucket`). The GPU code accumulates
e_{i->c} in per-vertex hash tables. Here the bucket's entries (i, j) are read
through a window of static length (the smallest size class that holds the
bucket, :func:`jaxmatch.community.size_classes.window_classes`) and grouped by
(vertex, C(j)) pair. In a bucket whose rows hold at most ``Config.shift_max``
entries (every bucket of a mesh or road graph) each entry is compared with
the ``width - 1`` entries before it (rows are contiguous), which finds the
pair's first entry without a sort, ``Config.shift_unroll`` offsets per fused
pass; wider buckets are sorted by C(j) with one stable sort (C(j) as key,
position as value or packed into the key: a radix sort on a GPU): since they
were sorted by i, the result is ordered by (C(j), i), so every pair is one run
of equal keys. A segment sum over the pairs gives e_{i->c} (both ways add a
pair's weights in entry order: the same bits, deterministic). On a GPU the
sorted runs are added by a segmented scan instead (``Config.run_sums``): a
segment sum's atomics pile onto one address for a hub's long runs. The gain of
Eq. (2), with the null-model term scaled by ``resolution``::

    dQ = (e_{i->c} - e_{i->C(i)\\{i}}) / m + k_i (a_{C(i)\\{i}} - a_c) / (2 m^2)

is maximised by a segment max per vertex, ties to the lowest community id by
a segment min; the vertex moves when the best gain is positive. The
singleton rule of the paper (after Lu, Halappanavar and Kalyanaraman,
"Parallel heuristics for scalable community detection", Parallel Computing,
2015): a vertex alone in its community may join another one-vertex community
c only if c < C(i). It is applied, as its purpose is, to the pairs that move at
the same time: c's vertex is in the same bucket. The paper's wording (every
singleton pair) also blocks moves toward singletons of other buckets, which do
not move then, and costs modularity on power-law and RMAT graphs; swaps inside
a bucket are still blocked, and (b) below covers the rest.

**Safe parallel moves.** In a bucket, all vertices move at once on gains
computed as if nobody else moved. On sparse planar graphs (road grids,
Delaunay meshes: every vertex in the first buckets) the paper's rules alone
let neighbours swap or chase each other's communities, and the modularity
ends below the sequential method's. Three O(entries) filters fix that:

- (a) *interaction bound*: Eq. (2) of vertex i is lowered by
  ``resolution * k_i * (K_in(target) + K_out(source) - 2 k_i) / (4 m^2)``,
  half the null-model cost of all other vertices that intend to enter i's
  target or leave i's source in the same bucket; a move whose bounded gain is
  not positive waits for the next iteration.
- (b) *conflict resolution* (:func:`resolve_conflicts`): moves of neighbours
  i and j conflict when one enters the community the other leaves (a swap, or
  i joining C(j) while j leaves it); in ``Config.resolve_rounds`` rounds, a
  move survives when its bounded gain beats (ties: smaller id) every
  undecided conflicting neighbour's, and beaten neighbours drop out; moves
  still undecided wait. Together, (a) and (b) guarantee that the bucket's
  moves raise the modularity at least by the sum of their bounded gains (the
  pairwise interaction terms left are all non-negative), the property the
  sequential method has.
- (c) *exclusive moves* (:func:`exclusive_moves`): where (a) and (b) leave a
  bucket no move (on a clique every vertex's bound cancels its whole gain),
  the candidates that are the best among all candidates touching their source
  or target community move; they touch disjoint communities, so Q rises by
  exactly their gains, and a level ends only at a local optimum of single
  moves (``certify.check_local_optimum``).

**Few atomics.** A scatter costs one atomic per update on a GPU, and updates
to one address serialise. The segment reductions over a row's entries where
few entries count (the own community, the best target, conflicts) scatter
only those (:func:`sparse_reduce`).

Cost, per sweep, per non-empty bucket (a window is at most twice its bucket,
4/3 of it in the largest classes, or ``Config.window_min``): the grouping
(``ceil((width - 1) / shift_unroll)`` passes when the bucket's rows hold at
most ``Config.shift_max`` entries, else a sort: a key-only sort of
``C(j) * W + position`` when that fits an int32, else a stable key-value sort
on a GPU and radix passes of key-only sorts elsewhere (``Config.sort_method``),
then three gathers by the permutation and a cumsum, or on a GPU a segmented
scan in place of the cumsum and the segment sum); about 25 gathers and 18
scatters / segment reductions of window length (neighbour lookups use the rows
of the window, through ``d_rank`` computed once per level); O(n) per sweep for
a_c and Q, and one pass over the level's entries for Q.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import prefix, run_totals, take
from jaxmatch.community.buckets import N_BUCKETS, Buckets, key_value_sorts, stable_sort_with_positions
from jaxmatch.community.config import DEFAULT, Config, Options
from jaxmatch.community.size_classes import by_class, window_classes

class OptState(NamedTuple):
    comm: jax.Array    # [N] community of each vertex (N for padding)
    tot: jax.Array     # [N] a_c
    size: jax.Array    # [N] vertices of each community
    q: jax.Array       # modularity of comm on this level's graph
    it: jax.Array
    moves: jax.Array   # [max_iters] vertices moved per iteration
    go: jax.Array


def move_bucket(bk: Buckets, comm, tot, size, b, inv2m, resolution, window: int,
                group: str = "auto", cfg: Config = DEFAULT, axis=None):
    """Algorithm 2 for every vertex of bucket ``b`` at once; returns (comm, tot, size, moved).

    ``comm`` communities [N], ``tot`` = a_c, ``size`` community sizes,
    ``inv2m`` = 1 / 2m (0 when m = 0: nothing moves). The bucket's entries are
    read through a window of static length ``window`` >= count[b]. All
    per-vertex work is on the window's rows (W-sized arrays); N-sized arrays
    are read by gathers and written by scatters of W values, and two are
    filled (the interaction bound's community sums).

    ``group``: how the entries are grouped by (vertex, C(j)): ``"shift"``
    (:func:`_group_shift`, rows of at most ``shift_max`` entries), ``"sort"``
    (:func:`_group_sort`), or ``"auto"``: by the bucket's widest row, at run
    time, with the rest of the step compiled once (under ``jax.vmap(...,
    axis_name=axis)`` the batch agrees by a ``lax.pmax``). All three give the
    same bits.
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
    rid = jnp.maximum(prefix(row_head, dtype=jnp.int32) - 1, 0)   # sorted; masked entries harmless
    vertex = jnp.full(W, n_cap, jnp.int32).at[jnp.where(row_head, rid, W)].set(s, mode="drop")
    real_row = vertex < n_cap
    k_row = take(bk.k, vertex, 0)
    comm_row = take(comm, vertex, n_cap)

    c = jnp.where(valid, take(comm, d, n_cap), n_cap)
    groups = dict(shift=partial(_group_shift, cfg=cfg, width=bk.width[b]),
                  sort=partial(_group_sort, n_cap=n_cap, scan=scanned_runs(cfg),
                               kv=key_value_sorts(cfg.sort_method)))
    if group == "auto":     # one copy of the step, the grouping picked at run time by the row width
        wide = bk.width[b] > cfg.shift_max
        if axis is not None:
            wide = lax.pmax(wide.astype(jnp.int32), axis) > 0
        sc, srid, jrs, head, e_ic = lax.cond(wide, groups["sort"], groups["shift"], c, rid, w, jr, valid)
    else:
        sc, srid, jrs, head, e_ic = groups[group](c, rid, w, jr, valid)
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


def _group_shift(c, rid, w, jr, valid, *, width, cfg: Config):
    """Group a window's entries by (row, C(j)) in place: (sc, srid, jr, head, e_ic).

    The first entry of each pair in its row is found by comparing with the
    ``width`` - 1 entries before it (rows are contiguous and hold at most
    ``width`` <= ``shift_max`` entries; entries further back are in other
    rows), ``shift_unroll`` offsets per loop step (one fused pass); e_{i->c}
    sums the pair's weights in entry order, as :func:`_group_sort` does, so
    both give the same bits. e_ic is meaningful at the pairs' heads only."""
    W = c.shape[0]
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

    first = lax.fori_loop(0, (width + unroll - 2) // unroll, earlier, pos)
    head = valid & (first == pos)
    return c, rid, jr, head, jax.ops.segment_sum(w, first, W)      # e_ic at each pair's first entry


def scanned_runs(cfg: Config) -> bool:
    """Whether :func:`_group_sort` adds its runs by a segmented scan (``Config.run_sums``)."""
    if cfg.run_sums == "auto":
        return jax.default_backend() == "gpu"
    return cfg.run_sums == "scan"


def _group_sort(c, rid, w, jr, valid, *, n_cap: int, scan: bool = False, kv: bool | None = None):
    """Group a window's entries by (C(j), row) with one stable sort by C(j) (entries are
    sorted by row; ``kv``: see :func:`jaxmatch.community.buckets.stable_sort_with_positions`):
    (sc, srid, jr, head, e_ic), as :func:`_group_shift`; with ``scan``, e_ic by
    :func:`jaxmatch._ops.run_totals` (``Config.run_sums``)."""
    W = c.shape[0]
    sc, perm = stable_sort_with_positions(c, n_cap, kv)
    srid, sw, sv, jrs = rid[perm], w[perm], sc < n_cap, jr[perm]
    head = sv & ((sc != jnp.concatenate([jnp.full(1, -1, sc.dtype), sc[:-1]]))
                 | (srid != jnp.concatenate([jnp.full(1, -1, srid.dtype), srid[:-1]])))
    if scan:   # a run ends before the next head (or the unused entries, sorted last)
        last = jnp.concatenate([head[1:] | ~sv[1:], jnp.ones(1, bool)])
        return sc, srid, jrs, head, run_totals(jnp.where(sv, sw, 0), last)
    run = prefix(head, dtype=jnp.int32) - 1
    # the window's unused entries (sorted last) are dropped, not added (0) to the last pair: on
    # a GPU that was millions of atomics on one address, half of an RMAT run (RESULTS.md, issue 27)
    e_ic = jax.ops.segment_sum(sw, jnp.where(sv, jnp.maximum(run, 0), W), W,
                               indices_are_sorted=True)[jnp.maximum(run, 0)]
    return sc, srid, jrs, head, e_ic


def exclusive_moves(allowed, sc, srid, e_ic, k_row, tot, stay, real_row, comm_row, vertex,
                    inv2m, resolution, axis=None):
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
    moves per bucket and sweep instead of none). ``axis``: the rows are one
    device's share of the bucket's vertices (the sharded solver, under
    ``shard_map``): the best candidates are taken over the mesh.
    """
    n_cap, W = tot.shape[0], k_row.shape[0]
    score = jnp.where(allowed, e_ic - resolution * k_row[srid] * take(tot, sc, 0) * inv2m, -jnp.inf)
    best = sparse_reduce("max", score, srid, allowed, W, -jnp.inf)
    target = sparse_reduce("min", sc, srid, allowed & (score == best[srid]), W, n_cap)
    gain = best - stay
    cand = real_row & (target < n_cap) & (gain > 0) & (inv2m > 0)
    touched = jnp.concatenate([jnp.where(cand, comm_row, n_cap), jnp.where(cand, target, n_cap)])
    g2, v2 = jnp.concatenate([gain, gain]), jnp.concatenate([vertex, vertex])
    over = (lambda x, op: x) if axis is None else (lambda x, op: op(x, axis))   # noqa: E731
    top = over(jnp.full(n_cap, -jnp.inf, gain.dtype).at[touched].max(g2, mode="drop"), lax.pmax)
    at_top = g2 == take(top, touched, jnp.inf)
    first = over(jnp.full(n_cap, n_cap, vertex.dtype).at[jnp.where(at_top, touched, n_cap)].min(v2, mode="drop"),
                 lax.pmin)
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
    masked segment ops serialise on those addresses for nothing
    (``experiments/profile_louvain.py`` profiles them)."""
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
    return settle_conflicts(conf, rid, d, gain[rid], gain[j], vertex, move, gain, rounds, lambda x: x[j])


def settle_conflicts(conf, seg, nbr, g_i, g_j, vertex, move, gain, rounds: int, at_nbr):
    """The rounds of :func:`resolve_conflicts`, shared with the sharded solver
    (:func:`jaxmatch.community.sharded.level_one`): entries (i, j) with ``conf`` (a conflict),
    i's row ``seg``, j's id ``nbr``, the gains ``g_i``, ``g_j``; per row the vertex id, the intended
    ``move`` and its ``gain``; ``at_nbr(x)`` reads a per-row bool state at each entry's j (an index
    on one device, a gather over the mesh on several). A conflict's i and j both intend to move,
    so the first round reads no state."""
    rows = vertex.shape[0]
    undecided, accepted = move, jnp.zeros_like(move)
    for r in range(rounds):                  # unrolled: no loop (and no host sync per round on a GPU)
        live = conf & at_nbr(undecided) if r else conf   # a conflict's two ends both intend to move
        top = sparse_reduce("max", g_j, seg, live, rows, -jnp.inf)
        tie = sparse_reduce("min", nbr, seg, live & (g_j == g_i), rows, jnp.iinfo(jnp.int32).max)
        win = undecided & ~(top > gain) & ~(tie < vertex)
        beaten = sparse_reduce("max", jnp.ones_like(seg), seg, conf & at_nbr(win), rows, 0) > 0
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
        comm, tot, size, m = by_class(partial(_run_bucket, cfg=cfg, axis=axis), bk.count[b], e_cap,
                                      bk, comm, tot, size, b, inv2m, opts.resolution,
                                      classes=window_classes, axis=axis, cfg=cfg)
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
    run (its sweeps only). One compiled copy of :func:`optimise`, in a loop of one or two trips.
    Hash classes (``bk.hashed``) have no degree order, so there ``both`` runs once: a second
    order of the classes was a second arbitrary order at the cost of the level's sweeps again
    (RESULTS.md, session 40)."""
    both = both & ~bk.hashed
    def trial(t, best):
        run = optimise(bk, start, opts, threshold, max_iters, axis,
                       high=jnp.where(both, t == 1, opts.order == 1), cfg=cfg)
        keep = (t == 0) | (run[1] > best[1])
        return jax.tree_util.tree_map(lambda x, y: jnp.where(keep, x, y), run, best)

    init = (start, jnp.asarray(-jnp.inf, opts.resolution.dtype), jnp.int32(0),
            jnp.zeros(max_iters, jnp.int32), jnp.bool_(False))
    return lax.fori_loop(0, jnp.where(both, 2, 1), trial, init)


def _run_bucket(window, bk, comm, tot, size, b, inv2m, resolution, cfg: Config = DEFAULT, axis=None):
    return move_bucket(bk, comm, tot, size, b, inv2m, resolution, window, cfg=cfg, axis=axis)
