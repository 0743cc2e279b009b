"""G-PR: push-relabel maximum cardinality matching in bulk-synchronous array form.

Paper: the atomic- and lock-free GPU push-relabel matching paper (G-PR),
``shared/papers/gpu-push-relabel-matching.txt``, Algorithms 1-9.

Labels ``psi_r`` (rows) and ``psi_c`` (columns) are lower bounds on the
alternating distance to an unmatched row; ``inf = n_rows + n_cols``. Active
columns are unmatched columns not yet proven unmatchable. One loop step:

1. if the step is the scheduled one, a *global relabel* (Algorithms 4-5):
   a level-synchronous BFS from all unmatched rows over alternating paths
   sets exact labels (two levels per BFS step), columns it does not reach are
   unmatchable (mate -2), the next global relabel is scheduled ``k *
   maxLevel`` steps later (the adaptive strategy; the paper's best k = 0.7),
   and the active-column list is compacted by a prefix sum (the shrink kernel).
2. every active column v of the list finds the row u of minimum psi among its
   neighbours (ties to the smallest row id) — all active columns at once,
   their edges spread evenly over fixed-size lanes (:func:`jaxmatch._ops.expand`);
   if psi(u) >= inf, v is unmatchable; otherwise v pushes to u:
   ``psi(v) = psi(u) + 1``, ``psi(u) = psi(u) + 2``, and u's old mate
   becomes active in v's slot of the list (Algorithm 9).

Where the array version differs from the CUDA one, and why it stays correct:

* Concurrent pushes to one row. CUDA lets the writers race and repairs the
  matching afterwards (the Ac/Ap roll-back of Algorithm 8 and FixMatching).
  Here a scatter-min picks one winner per row, the smallest column id, so
  ``row_mate`` is always consistent and no roll-back is needed: a losing
  column keeps its slot and stays active, and it still relabels
  ``psi(v) = psi(u) + 1``, which is a valid relabel because psi(u) was the
  minimum over its neighbours when the step began (the paper's argument for
  its racing threads). FixMatching then only clears stale ``col_mate`` entries.
* Early exit. A CUDA thread stops scanning at a row with psi = psi(v) - 1; the
  array version takes the full minimum, which has the same value (psi(v) - 1
  is the infimum), and breaks ties by row id, so runs are deterministic.
* The iA check of Algorithm 9 (do not displace a column that is active in the
  same launch) guards against the races above and is not needed.
* The shrink runs after every global relabel (the paper: only when the list
  has >= 512 entries), because a prefix sum costs little next to the BFS.

On the GPU the push steps run instead as rounds of a persistent kernel, many
per launch (:mod:`jaxmatch.kernels.push_match`: the same pushes, with an
atomic exchange on ``row_mate`` where the array form takes a scatter-min).

The result is maximum when the loop ends with no active column: every
unmatched column then has psi >= inf, so no augmenting path starts at it.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, claim_first, compact, expand, mask_ids, offsets, segment_argmin, take
from jaxmatch.kernels.bfs_level import alternating_bfs
from jaxmatch.kernels.push_match import push_match_rounds
from jaxmatch.status import Status

DEFAULT_K = 0.7
DEFAULT_LANES = 1 << 18
SUBSTEPS = 16  # push steps per round of the outer loop (see push_relabel)


def cpu_lanes(edge_cap: int) -> int:
    """G-PR's default lanes off the GPU: an edge capacity over 128, between 2**10 and ``DEFAULT_LANES``.

    On the GPU a push step's cost is mostly fixed and 2**18 lanes cost little more than fewer; on
    the CPU a step costs its lanes' work, plus, per window of lanes a step's edges need, a pass over
    the active list. About the edges a typical step has active is best: on this repository's CPU
    1.3-5.3x faster than 2**18 lanes at edge capacities 2**16-2**20 (the same steps), 1.1x at 2**23
    (experiments/RESULTS.md, session 35).
    """
    return min(max(int(edge_cap) >> 7, 1 << 10), DEFAULT_LANES)


class PRState(NamedTuple):
    row_mate: jax.Array      # [row_cap] column of each row or -1
    col_mate: jax.Array      # [col_cap] row, -1 unmatched, -2 unmatchable (may be stale)
    psi_r: jax.Array         # [row_cap]
    psi_c: jax.Array         # [col_cap]
    active: jax.Array        # [slots] active-column list, col_cap marks an empty slot
    claim: jax.Array         # [row_cap] scratch for the winner of each row, INT_MAX when unclaimed
    n_slots: jax.Array       # slots in use (a prefix of ``active``)
    n_live: jax.Array        # non-empty slots after the last push step
    it: jax.Array
    next_gr: jax.Array
    n_gr: jax.Array
    pushes: jax.Array
    levels: jax.Array        # BFS levels run by all global relabels
    stalled: jax.Array       # a launch of the BFS kernel reported a stalled grid barrier


class GRState(NamedTuple):
    psi_r: jax.Array
    psi_c: jax.Array
    level: jax.Array
    added: jax.Array


def consistent_col_mate(g, row_mate, col_mate):
    """col_mate with entries that row_mate does not confirm set to -1 (FixMatching)."""
    ok = (col_mate >= 0) & (take(row_mate, col_mate, -1) == jnp.arange(g.col_cap, dtype=jnp.int32))
    return jnp.where(ok, col_mate, -1)


def bfs_by_segments() -> bool:
    """How the XLA global relabel finds a level's columns: off the GPU by a sorted segment maximum of
    one byte an entry; on the GPU by a scatter of the label from the entries that hit (few atomics).
    The same labels; each form is the faster one on its backend (experiments/RESULTS.md,
    session 48)."""
    return jax.default_backend() != "gpu"


def global_relabel(g, row_mate, col_mate, inf, kernel=None, interpret=False, run=True):
    """Exact labels by a BFS from the unmatched rows; returns (psi_r, psi_c, levels, stalled).
    ``run`` False (a traced bool): no XLA BFS level runs (:func:`push_relabel`'s loop under vmap,
    where the kernel is refused; a kernel launch ignores it).

    With ``kernel`` (a :class:`jaxmatch.kernels.bfs_level.Config`) the BFS runs
    in the persistent kernel (many levels per launch, work proportional to
    the frontier); the same labels and level count either way."""
    row, col = g.by_col.indices, g.by_col.src
    real_row = jnp.arange(g.row_cap) < g.n_rows
    mate = consistent_col_mate(g, row_mate, col_mate)
    psi_r = jnp.where(real_row & (row_mate == -1), 0, inf).astype(jnp.int32)
    if kernel is not None:
        psi_r, psi_c, steps, stalled = alternating_bfs(g.by_row.indptr, g.by_row.indices, mate, psi_r, g.n_rows,
                                                       cfg=kernel, interpret=interpret)
        return psi_r, jnp.where(psi_c == INT_MAX, inf, psi_c), 2 * steps, stalled
    psi_c = jnp.full(g.col_cap, inf, jnp.int32)

    segments = bfs_by_segments()

    def step(s: GRState) -> GRState:
        # a column is reached when any of its rows is on the level
        if not segments:
            hit = (take(s.psi_r, row, inf) == s.level) & (take(s.psi_c, col, 0) == inf)
            psi_c = s.psi_c.at[mask_ids(col, hit, g.col_cap)].set(s.level + 1, mode="drop")
            new = (psi_c == s.level + 1) & (s.psi_c == inf)
        else:
            hit = (take(s.psi_r, row, inf) == s.level).astype(jnp.int8)
            new = (jax.ops.segment_max(hit, col, num_segments=g.col_cap, indices_are_sorted=True) > 0) & \
                (s.psi_c == inf)
            psi_c = jnp.where(new, s.level + 1, s.psi_c)
        psi_r = s.psi_r.at[mask_ids(mate, new & (mate >= 0), g.row_cap)].min(s.level + 2, mode="drop")
        return GRState(psi_r, psi_c, s.level + 2, jnp.any(new))

    s = lax.while_loop(lambda s: s.added & (s.level < inf),
                       step, GRState(psi_r, psi_c, jnp.int32(0), jnp.asarray(run)))
    return s.psi_r, s.psi_c, s.level, jnp.bool_(False)


def _is_active(g, s: PRState, v):
    """Column v (or the sentinel) still needs a push."""
    mate = take(s.col_mate, v, -2)
    return (v < g.col_cap) & ((mate == -1) | ((mate >= 0) & (take(s.row_mate, mate, -1) != v)))


def _relabel_and_shrink(g, s: PRState, inf, k, kernel=None, interpret=False, run=True):
    psi_r, psi_c, levels, stalled = global_relabel(g, s.row_mate, s.col_mate, inf, kernel, interpret, run)
    v = s.active
    live = _is_active(g, s, v)
    reach = take(psi_c, v, inf) < inf
    col_mate = s.col_mate.at[mask_ids(v, live & ~reach, g.col_cap)].set(-2, mode="drop")
    active, n = compact(live & reach, v, g.col_cap)
    gap = jnp.maximum(1, jnp.ceil(k * levels).astype(jnp.int32))
    return s._replace(psi_r=psi_r, psi_c=psi_c, col_mate=col_mate, active=active, n_slots=n, n_live=n,
                      next_gr=s.it + gap, n_gr=s.n_gr + 1, levels=s.levels + levels // 2,
                      stalled=s.stalled | stalled)


def _min_rows(g, s: PRState, lanes: int, inf):
    """For every slot, the minimum row label over its column's rows and that row."""
    v = s.active
    slots = v.shape[0]
    ok = (jnp.arange(slots) < s.n_slots) & (v < g.col_cap)
    start = take(g.by_col.indptr, v, 0)
    deg = jnp.where(ok, take(g.by_col.indptr, v + 1, 0) - start, 0)
    bounds = offsets(deg)

    def chunk(c):
        first, best, arg = c
        slot, e, valid = expand(bounds, start, first, lanes)
        r = take(g.by_col.indices, e, g.row_cap)
        key = jnp.where(valid, take(s.psi_r, r, inf), INT_MAX)
        b, a = segment_argmin(key, r, mask_ids(slot, valid, slots), slots)
        better = (b < best) | ((b == best) & (a < arg))
        return first + lanes, jnp.where(better, b, best), jnp.where(better, a, arg)

    init = (jnp.int32(0), jnp.full(slots, INT_MAX, jnp.int32), jnp.full(slots, INT_MAX, jnp.int32))
    # one window covers the usual step; only a step with more edges than lanes loops on from it
    # (under vmap both branches run: they share the first window, which XLA computes once)
    first = chunk(init)
    _, best, arg = lax.cond(bounds[-1] <= lanes, lambda c: c,
                            lambda c: lax.while_loop(lambda c: c[0] < bounds[-1], chunk, c), first)
    return best, arg


def _push(g, s: PRState, lanes: int, inf) -> PRState:
    v = s.active
    live = (jnp.arange(v.shape[0]) < s.n_slots) & _is_active(g, s, v)
    best, u = _min_rows(g, s, lanes, inf)
    push = live & (best < inf)
    dead = live & (best >= inf)
    won, claim = claim_first(s.claim, u, v, push)
    old = take(s.row_mate, u, -1)
    row_mate = s.row_mate.at[mask_ids(u, won, g.row_cap)].set(v, mode="drop")
    col_mate = s.col_mate.at[mask_ids(v, won, g.col_cap)].set(u, mode="drop")
    col_mate = col_mate.at[mask_ids(v, dead, g.col_cap)].set(-2, mode="drop")
    psi_c = s.psi_c.at[mask_ids(v, push, g.col_cap)].set(best + 1, mode="drop")
    psi_r = s.psi_r.at[mask_ids(u, won, g.row_cap)].set(best + 2, mode="drop")
    nxt = jnp.where(won, jnp.where(old >= 0, old, g.col_cap), jnp.where(push, v, g.col_cap))
    return s._replace(row_mate=row_mate, col_mate=col_mate, psi_r=psi_r, psi_c=psi_c,
                      active=nxt, claim=claim, it=s.it + 1, pushes=s.pushes + jnp.sum(won, dtype=jnp.int32),
                      n_live=jnp.sum(nxt < g.col_cap, dtype=jnp.int32))


def _any_active(g, s: PRState):
    return jnp.any((jnp.arange(s.active.shape[0]) < s.n_slots) & (s.active < g.col_cap))


def push_kernel_runs(g, kernel):
    """Whether the push rounds take the kernel (a traced bool): no column has more than
    ``kernel.push_max_degree`` rows (one lane walks a column's rows there; the XLA steps spread a
    long column over all lanes)."""
    return jnp.max(g.by_col.indptr[1:] - g.by_col.indptr[:-1]) <= kernel.push_max_degree


def push_relabel(g, row_mate, col_mate, *, max_iters, k=DEFAULT_K, lanes=DEFAULT_LANES, slots=None,
                 substeps=SUBSTEPS, kernel=None, interpret=False):
    """Run G-PR from a matching; returns (row_mate, col_mate, status, stats dict).

    ``slots`` (static) is the length of the active-column list: at least the
    number of free columns of the starting matching (the list never grows,
    each slot holds at most one active column); default ``col_cap``. A step
    costs O(slots + lanes), so a short list makes steps cheap. Each round of
    the outer loop runs a global relabel when one is due, then up to
    ``substeps`` push steps in an inner loop (``iterations`` counts push
    steps, so the schedule and the bound are those of one step per round).
    ``kernel``: run the global relabels in the persistent BFS kernel of
    :mod:`jaxmatch.kernels.bfs_level` and, with ``kernel.push`` and
    :func:`push_kernel_runs`, each round's push steps as one launch of
    :mod:`jaxmatch.kernels.push_match` (up to the next global relabel;
    ``interpret``: in Pallas's interpreter).
    """
    slots = g.col_cap if slots is None else int(slots)
    inf = (g.n_rows + g.n_cols).astype(jnp.int32)
    lanes = int(min(lanes, g.edge_cap))
    cols = jnp.arange(g.col_cap, dtype=jnp.int32)
    free = (cols < g.n_cols) & (col_mate == -1)
    active, n = compact(free, cols, g.col_cap)
    active = active[:slots]
    zero = jnp.int32(0)
    s = PRState(row_mate, col_mate, jnp.zeros(g.row_cap, jnp.int32), jnp.ones(g.col_cap, jnp.int32),
                active, jnp.full(g.row_cap, INT_MAX, jnp.int32), n, n, zero, zero, zero, zero, zero, jnp.bool_(False))

    def more(s: PRState):
        return (s.n_live > 0) & (s.it < max_iters)

    def steps(s: PRState) -> PRState:
        stop = jnp.minimum(s.next_gr, s.it + substeps)
        return lax.while_loop(lambda s: more(s) & (s.it < stop), lambda s: _push(g, s, lanes, inf), s)

    if kernel is not None and kernel.push:   # the push rounds in the persistent kernel, many per launch
        short = push_kernel_runs(g, kernel)

        def launch(s: PRState) -> PRState:
            rounds = jnp.minimum(kernel.rounds, jnp.minimum(s.next_gr, max_iters) - s.it)   # to the next relabel
            o = push_match_rounds(jnp.concatenate([s.active, jnp.full(slots, g.col_cap, jnp.int32)]), s.n_slots,
                                  s.row_mate, s.col_mate, s.psi_r, s.psi_c, g.by_col.indptr, g.by_col.indices,
                                  inf=inf, max_rounds=rounds, cfg=kernel, interpret=interpret)
            q = lax.dynamic_slice(o.buf, (o.side * slots,), (slots,))
            return s._replace(row_mate=o.row_mate, col_mate=o.col_mate, psi_r=o.psi_r, psi_c=o.psi_c,
                              active=jnp.where(jnp.arange(slots) < o.count, q, g.col_cap), n_slots=o.count,
                              n_live=o.count, it=s.it + o.rounds, pushes=s.pushes + o.pushes,
                              stalled=s.stalled | o.stalled)

        push = lambda s: lax.cond(short, launch, steps, s)  # noqa: E731  (one of the two for the whole run)
    else:
        push = steps

    def body(s: PRState) -> PRState:
        # under vmap the cond runs both branches for every graph: the BFS runs only where it is due
        # (else each round ran a whole global relabel for every graph of the batch)
        due = s.it >= s.next_gr
        s = lax.cond(due, lambda s: _relabel_and_shrink(g, s, inf, k, kernel, interpret, due), lambda s: s, s)
        return push(s)

    s = lax.while_loop(more, body, s)
    status = jnp.where(s.stalled, Status.KERNEL_STALLED,
                       jnp.where(_any_active(g, s), Status.MAX_ITERS, Status.CONVERGED)).astype(jnp.int32)
    col_mate = consistent_col_mate(g, s.row_mate, s.col_mate)
    stats = dict(iterations=s.it, global_relabels=s.n_gr, pushes=s.pushes, bfs_levels=s.levels)
    return s.row_mate, col_mate, status, stats
