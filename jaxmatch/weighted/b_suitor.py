"""b-Suitor: half-approximate maximum weight b-matching by proposals, in array form.

Paper II of the thesis in ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``
(b-matching on GPUs, generalising Paper I's Suitor; Khan, Pothen et al.'s
b-Suitor) and Paper IV, which shows that a vertex accepting its b(v) best
offers at any time (many-to-many stable assignment) yields the greedy
b-matching: scan edges in the order of :mod:`jaxmatch.weighted.suitor`, keep
an edge while both ends have fewer than b edges.

Every vertex v holds up to b(v) proposals, ``held[v]`` (their ranks,
ascending; ``INT_MAX`` for an empty place). A proposal of rank r is accepted
by v while ``r < thr[v]``, the rank of its b(v)-th held proposal (``INT_MAX``
while v holds fewer than b(v); -1 when b(v) = 0). ``deficit[u]`` is b(u)
minus the number of u's proposals being held; a vertex with a deficit waits
in a ring queue. A round takes up to ``batch`` queued vertices; each
advances its pointer in its rank-sorted neighbour list to its next accepting
neighbour (:func:`jaxmatch.weighted.suitor.scan`) and proposes there. The
proposals of a round are sorted by (target, rank); each target merges its
held row with its group's best new offers, keeps the first b(v), and the
proposers it drops get their deficit back and rejoin the queue. As in
Suitor, thresholds only fall, so a skipped, rejected or displaced edge is
never usable again and the pointers only move forward (O(|E|) in total).

At the end an edge is matched when each end holds the other's proposal
(both ends hold the same rank).

:func:`dense_arrays` runs the same proposals in dense rounds with no ranking
sort (every vertex short of partners rescans its row each round; the
default of :func:`jaxmatch.b_suitor` for small graphs, as in batches).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, claim_first, prefix, take
from jaxmatch.weighted import sharded as _keyed
from jaxmatch.weighted.suitor import (
    INITIAL_BUDGET,
    edge_order,
    initial_queue,
    pop,
    push,
    rank_endpoints,
    rank_table_size,
    scan,
    sorted_adjacency,
)


#: :func:`jaxmatch.b_suitor`'s default form: :func:`dense_arrays` up to this entry capacity, the
#: queued rounds over rank-sorted lists above it (its ``sorted_adjacency``; RESULTS, session 32)
DENSE_MAX = 1 << 12


class BState(NamedTuple):
    held: jax.Array      # [V, B] ranks of held proposals, ascending, INT_MAX empty
    thr: jax.Array       # [V] a proposal is accepted while its rank < thr
    deficit: jax.Array   # [V] b(v) minus v's proposals held elsewhere
    ptr: jax.Array       # [V]
    budget: jax.Array    # [V]
    queue: jax.Array     # [V] ring queue of vertices with a deficit and entries left
    in_queue: jax.Array  # [V]
    claim: jax.Array     # [V] scratch for de-duplicating pushes, INT_MAX between rounds
    head: jax.Array
    size: jax.Array
    rounds: jax.Array
    proposals: jax.Array
    scanned: jax.Array


def _rows(a, idx, fill):
    """a[idx] row-wise ([K, B]) with ``fill`` for out-of-range idx."""
    ok = (idx >= 0) & (idx < a.shape[0])
    return jnp.where(ok[:, None], a[jnp.where(ok, idx, 0)], fill)


def _threshold(rows, b):
    """Rank of the b-th place of each row (INT_MAX if empty), -1 where b = 0."""
    at = jnp.clip(b - 1, 0, rows.shape[1] - 1)
    return jnp.where(b >= 1, jnp.take_along_axis(rows, at[:, None], axis=1)[:, 0], -1)


def step(g, adj, ends, bvec, s: BState, batch: int, lanes: int) -> BState:
    V, B = g.vertex_cap, s.held.shape[1]
    ids, live, popped = pop(s.queue, s.head, s.size, batch)
    K = ids.shape[0]
    ptr, budget = take(s.ptr, ids, 0), take(s.budget, ids, INITIAL_BUDGET)
    sc = scan(adj, ids, live, ptr, budget, lanes, lambda r, v: r < take(s.thr, v, -1))
    tgt = jnp.where(sc.found, take(adj.nbr, sc.entry, V), V)
    r = jnp.where(sc.found, take(adj.rank, sc.entry, INT_MAX), INT_MAX)

    # proposals grouped by target, best first
    k = jnp.arange(K, dtype=jnp.int32)
    ts, rs, ks = lax.sort((tgt, r, k), num_keys=2)
    lead = ts != jnp.concatenate([jnp.full(1, -1, jnp.int32), ts[:-1]])
    j = k - prefix(jnp.where(lead, k, 0), "max")            # place within the target's group
    lead = lead & (ts < V)
    bt = take(bvec, ts, 0)
    hrow = _rows(s.held, ts, INT_MAX)                      # [K, B]
    accepted = (ts < V) & (jnp.sum(hrow < rs[:, None], axis=1) + j < bt)

    # each group's leader merges the held row with the group's B best offers
    gi = k[:, None] + jnp.arange(B, dtype=jnp.int32)[None, :]
    new = jnp.where(take(ts, gi, V) == ts[:, None], take(rs, gi, INT_MAX), INT_MAX)
    merged = jnp.sort(jnp.concatenate([hrow, new], axis=1), axis=1)[:, :B]
    merged = jnp.where(jnp.arange(B)[None, :] < bt[:, None], merged, INT_MAX)
    thr_new = _threshold(merged, bt)
    dropped = lead[:, None] & (hrow < INT_MAX) & (hrow > thr_new[:, None])
    loser = jnp.where(dropped, take(ends, hrow, 2 * V) - ts[:, None], V).reshape(-1)
    rows_at = jnp.where(lead, ts, V)
    held = s.held.at[rows_at].set(merged, mode="drop")
    thr = s.thr.at[rows_at].set(thr_new, mode="drop")

    acc = jnp.zeros(K, bool).at[ks].set(accepted)
    deficit = s.deficit.at[jnp.where(acc, ids, V)].add(-1, mode="drop")
    deficit = deficit.at[loser].add(1, mode="drop")
    ptr_all = s.ptr.at[ids].set(sc.ptr, mode="drop")
    budget_all = s.budget.at[ids].set(sc.budget, mode="drop")

    # back to the queue: popped vertices still short of partners, and dropped
    # proposers not queued yet (each once)
    again = live & (take(deficit, ids, 0) > 0) & sc.more
    idx = jnp.arange(loser.shape[0], dtype=jnp.int32)
    want = ((loser < V) & ~take(s.in_queue, loser, True) & (take(deficit, loser, 0) > 0)
            & (take(ptr_all, loser, 0) < take(adj.end, loser, 0)))
    want, claim = claim_first(s.claim, loser, idx, want)
    in_queue = s.in_queue.at[jnp.where(live & ~again, ids, V)].set(False, mode="drop")
    in_queue = in_queue.at[jnp.where(want, loser, V)].set(True, mode="drop")
    values = jnp.concatenate([jnp.where(again, ids, V), jnp.where(want, loser, V)])
    queue, head, size = push(s.queue, s.head, s.size, popped, values)
    return BState(held, thr, deficit, ptr_all, budget_all, queue, in_queue, claim, head, size,
                  rounds=s.rounds + (s.size > 0),
                  proposals=s.proposals + jnp.sum(sc.found, dtype=jnp.int32),
                  scanned=s.scanned + sc.scanned)


def b_suitor_arrays(g, bvec, *, max_b: int, max_iters: int, batch: int, lanes: int):
    """Run b-Suitor with per-vertex bounds ``bvec`` [vertex_cap] (<= max_b).

    Returns (matched [entry_cap] bool, partners [vertex_cap, max_b], status, stats).
    """
    V, B = g.vertex_cap, max_b
    ids = jnp.arange(V, dtype=jnp.int32)
    bvec = jnp.where(ids < g.n, jnp.clip(bvec.astype(jnp.int32), 0, B), 0)
    order = edge_order(g)
    rank = order.rank
    adj = sorted_adjacency(g, order)
    ends = rank_endpoints(g, rank)
    live = (bvec > 0) & (adj.end > adj.start)
    queue, head, size = initial_queue(g, live)
    zero = jnp.int32(0)
    s = BState(held=jnp.full((V, B), INT_MAX, jnp.int32),
               thr=jnp.where(bvec > 0, INT_MAX, -1).astype(jnp.int32),
               deficit=bvec, ptr=adj.start, budget=jnp.full(V, INITIAL_BUDGET, jnp.int32),
               queue=queue, in_queue=live & (ids < g.n), claim=jnp.full(V, INT_MAX, jnp.int32),
               head=head, size=size, rounds=zero, proposals=zero, scanned=zero)
    s = lax.while_loop(lambda s: (s.size > 0) & (s.rounds < max_iters),
                       lambda s: step(g, adj, ends, bvec, s, batch, lanes), s)
    status = jnp.where(s.size > 0, MAX_ITERS, CONVERGED).astype(jnp.int32)

    # an edge is matched when both ends hold its rank
    count = jnp.zeros(rank_table_size(g), jnp.int32).at[s.held.reshape(-1)].add(1, mode="drop")
    matched = take(count, rank, 0) == 2
    key = jnp.sort(jnp.where(take(count, s.held, 0) == 2, s.held, INT_MAX), axis=1)
    partners = jnp.where(key < INT_MAX, take(ends, key, 0) - ids[:, None], -1)
    stats = dict(rounds=s.rounds, proposals=s.proposals, scanned=s.scanned)
    return matched, partners, status, stats


def dense_arrays(g, bvec, *, max_b: int, max_iters):
    """b-Suitor in dense rounds, no ranking sort: :func:`b_suitor_arrays`'s result.

    Every round, each vertex u short of partners (``b(u)`` minus the
    vertices holding its proposal) scans its whole row for its first
    neighbour v in the edge order whose ``b(v)``-th held offer it beats and
    that does not hold u's proposal yet (keys: the weight's bits, heavier
    first, then the smaller id: :func:`jaxmatch.weighted.sharded.scan`, as
    Suitor's and LD's default rounds); each target keeps the ``b(v)`` best of its held offers and the
    round's ``max_b`` best new ones (``max_b`` segment maxima, then each of
    the ``2 max_b`` offers of a row placed by comparisons with the others:
    with ``lax.sort`` a vmapped batch took 2.3x as long, RESULTS, session
    32). The best proposal to a target always beats its threshold, so every
    round with a proposal places one, and thresholds only rise: the loop
    ends with the greedy b-matching, as the queued form. Cost per round
    O(|E| max_b + V max_b^2), no sort: the form for batches of small graphs
    under ``vmap``; every round rescans every entry, so a chain of single
    proposals (b = 1 on a path of increasing weights) costs O(|E|) rounds
    of O(|E|)."""
    V, B = g.vertex_cap, max_b
    ids = jnp.arange(V, dtype=jnp.int32)
    bvec = jnp.where(ids < g.n, jnp.clip(bvec.astype(jnp.int32), 0, B), 0)
    src, dst = g.adj.src, g.adj.indices
    sh = _keyed.local(src, dst, g.adj.weights, V=V, R=V, axis=None, rows=g.adj.indptr)
    valid, kt = sh.key >= 0, sh.key.dtype
    top = jnp.iinfo(kt).max
    slot = jnp.clip(bvec - 1, 0, B - 1)[:, None]

    def body(st):
        hk, hid, it, proposals, _ = st
        cnt = jnp.zeros(V, jnp.int32).at[hid.reshape(-1)].add(1, mode="drop")
        short = bvec - cnt > 0
        tk = jnp.where(bvec > 0, jnp.take_along_axis(hk, slot, axis=1)[:, 0], top)   # the b(v)-th offer
        ti = jnp.where(bvec > 0, jnp.take_along_axis(hid, slot, axis=1)[:, 0], -1)
        def eligible(u, v, key):     # u's offer beats v's b(v)-th, and v does not hold u's proposal
            return (((key > tk[v]) | ((key == tk[v]) & (u < ti[v])))
                    & ~jnp.any(hid[v] == u[:, None], axis=1))

        best, tgt = _keyed.scan(sh, short, eligible, cap=None)
        prop = best >= 0
        tgt = jnp.where(prop, tgt, V)
        pk = jnp.where(prop, best, -1)
        left, nk, ni = prop, [], []
        for _ in range(B):                 # each target's B best new offers, best first
            at = jnp.where(left, tgt, V)
            mk = jax.ops.segment_max(jnp.where(left, pk, -1), at, V)
            mi = jax.ops.segment_min(jnp.where(left & (pk == take(mk, at, -1)), ids, V), at, V)
            nk.append(jnp.where(mi < V, mk, -1))
            ni.append(mi)
            left = left & (ids != take(mi, at, V))
        allk = jnp.concatenate([hk, jnp.stack(nk, 1)], axis=1)          # [V, 2B]: held, then new
        alli = jnp.concatenate([hid, jnp.stack(ni, 1)], axis=1)
        # each offer's place: the offers before it in the order (a rank by comparisons: no sort)
        kj, ki = allk[:, :, None], allk[:, None, :]
        ij, ii = alli[:, :, None], alli[:, None, :]
        pos = jnp.arange(2 * B)
        before = (kj > ki) | ((kj == ki) & ((ij < ii) | ((ij == ii) & (pos[:, None] < pos[None, :]))))
        place = jnp.sum(before, axis=1, dtype=jnp.int32)                    # [V, 2B]
        pick = place[:, :, None] == jnp.arange(B)[None, None, :]            # [V, 2B, B]
        keep = (jnp.arange(B)[None, :] < bvec[:, None])
        hk = jnp.where(keep, jnp.max(jnp.where(pick, allk[:, :, None], -1), axis=1), -1)
        hid = jnp.where(keep & (hk >= 0), jnp.min(jnp.where(pick, alli[:, :, None], V), axis=1), V)
        go = jnp.any(prop)
        return hk, hid, it + go, proposals + jnp.sum(prop, dtype=jnp.int32), go

    st = (jnp.full((V, B), -1, kt), jnp.full((V, B), V, jnp.int32), jnp.int32(0), jnp.int32(0), jnp.bool_(True))
    hk, hid, it, proposals, go = lax.while_loop(lambda s: s[4] & (s[2] < max_iters), body, st)
    status = jnp.where(go, MAX_ITERS, CONVERGED).astype(jnp.int32)
    # an edge is matched when each end holds the other's proposal; partners in u's held order (the edge order)
    mutual = (hid < V) & jnp.any(_rows(hid, hid.reshape(-1), V).reshape(V, B, B) == ids[:, None, None], axis=2)
    rank = jnp.cumsum(mutual, axis=1, dtype=jnp.int32) - 1
    partners = jnp.full((V, B), -1, jnp.int32).at[
        jnp.where(mutual, ids[:, None], V), jnp.where(mutual, rank, 0)].set(hid, mode="drop")
    holds_d = jnp.any(_rows(hid, src, V) == dst[:, None], axis=1)
    holds_s = jnp.any(_rows(hid, dst, V) == src[:, None], axis=1)
    matched = valid & holds_d & holds_s
    stats = dict(rounds=it, proposals=proposals, scanned=it * jnp.sum(valid, dtype=jnp.int32))
    return matched, partners, status, stats
