"""Gale-Shapley and McVitie-Wilson stable marriage in bulk-synchronous array form.

Paper: F. Manne, Md. Naim, H. Lerring, M. Halappanavar, "On stable marriages
and greedy matchings" (Paper IV of
``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``), Section 2
(Algorithm 1, the queue-based Gale-Shapley with sure-to-fail proposals
skipped; McVitie-Wilson as the same algorithm with a stack) and Section 4
(one GPU thread per man, a compare-and-swap on the woman's suitor).

Data. ``hold[w]`` is the woman's rank of her current suitor (``suitor(r_j)``
of Algorithm 1, stored as a rank; ``INT_MAX`` for none), so the suitor
himself is ``women.entries[women.start[w] + hold[w]]`` and no separate array
is needed. ``pos[m]`` counts the entries of m's list he has considered
(``nextCandidate`` of the paper). The women's ranks are turned into a lookup
once (:func:`pair_ranks`): ``wrank[e]`` is, for entry e of a man's list, the
woman's rank of that man, stored beside his ranking of her as the paper
recommends for SMI, or ``INT_MAX`` when she does not list him (such a
proposal is always rejected, so only mutually ranked pairs match). When all
women share one list (the "hard" set) the lookup is that list's inverse,
indexed by the man.

The array form. Men work in *slots*, the array version of the CUDA code's one
thread per man. A *wave* runs all busy slots at once:

1. each slot's man m looks at his next ``window`` candidates and takes the
   first woman w who ranks him better than ``hold[w]``; the others are sure to
   fail and are skipped (counted as considered, as in Algorithm 1, line 5);
2. each woman keeps the best proposal: a scatter-min of the ranks into
   ``hold`` (the segment minimum over the proposals to w, fused with her
   current suitor's rank, which replaces the CAS);
3. a winner leaves his slot, and the suitor he displaced (if any) takes the
   slot over at once; a rejected man stays and goes on with his next
   candidate; a man whose list is exhausted leaves (he stays single).

A man is in at most one slot or held by at most one woman, so every wave is a
valid state of the sequential algorithm run in some order, and both methods
return the man-optimal stable matching, the unique result of every order of
Gale-Shapley proposals (Gale and Shapley; McVitie and Wilson).

The two methods differ in where a loop step ends, which is the array
counterpart of queue versus stack:

* ``gale_shapley``: one step is one *round*: every free man proposes once;
  then the rejected and displaced men are compacted into the queue of the
  next round (a prefix sum), and the loop syncs.
* ``mcvitie_wilson``: one step runs ``unroll`` waves back to back: a displaced
  or rejected man proposes again at once, in the same step, in the slot that
  was working on the chain (the stack of the paper: the thread goes on with
  the man it just displaced). Slots are compacted once per step only.

A wave and a round propose the same men, so both need the same number of
waves; McVitie-Wilson needs ``unroll`` times fewer loop steps, host syncs and
compactions. On the hard set (identical rankings) every wave is won by one man
only, so n waves are inherent to any one-proposal-per-man-per-wave scheme;
the skip makes each wave a single proposal per free man, and the unrolled
steps bring the loop to about n / ``unroll`` steps.

Work stays proportional to the busy slots: after each compaction the busy
slots form a prefix, and the step runs on a prefix of static width, the
smallest of ``cap, cap/4, cap/16, ...`` (not below :data:`MIN_WIDTH`) that
holds them, picked by ``lax.switch``. Each wave costs O(busy * window);
the whole solve O(total considered entries * window + waves), plus the rank
lookup: one stable sort of the women's entries and a binary search per
men's entry, O(E log L).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, compact, take

METHODS = ("mcvitie_wilson", "gale_shapley")
DEFAULT_UNROLL = 8
DEFAULT_WINDOW = 2
DEFAULT_BLOCK = 0
MIN_WIDTH = 2048
WIDTH_SHRINK = 4


class SMState(NamedTuple):
    slot_man: jax.Array    # [m_cap] man worked on by each slot, m_cap = idle
    slot_pos: jax.Array    # [m_cap] next list position of the slot's man
    n_busy: jax.Array      # busy slots (they form a prefix after each compaction)
    pos: jax.Array         # [m_cap] entries considered, saved when a man leaves his slot
    hold: jax.Array        # [w_cap] rank of each woman's suitor, INT_MAX for none
    it: jax.Array          # loop steps
    waves: jax.Array       # waves run (rounds of proposals)


def widths(cap: int) -> tuple[int, ...]:
    """Static slot widths, largest first: cap, cap/4, ... down to MIN_WIDTH."""
    out = [cap]
    while out[-1] // WIDTH_SHRINK >= MIN_WIDTH:
        out.append(out[-1] // WIDTH_SHRINK)
    return tuple(out)


# --------------------------------------------------------------------------
# rank lookup


def pair_ranks(men, women):
    """``wrank[e]``: woman ``men.entries[e]``'s rank of the man owning entry e.

    ``INT_MAX`` where she does not list him (and in padding). The women's
    entries are stably sorted by man (so each man's run is ordered by woman),
    then every men's entry finds its woman in its man's run by binary search:
    one radix sort and O(E log L) gathers, no n x n table.
    """
    m_cap, e_cap = men.n_cap, men.e_cap
    f_valid = jnp.arange(women.e_cap) < women.n_entries
    key = jnp.where(f_valid, women.entries, INT_MAX)
    perm = jnp.argsort(key, stable=True).astype(jnp.int32)
    s_woman = take(women.src, perm, INT_MAX)
    s_woman = jnp.where(take(f_valid, perm, False), s_woman, INT_MAX)
    s_rank = perm - take(women.start, s_woman, 0)
    count = jax.ops.segment_sum(f_valid.astype(jnp.int32), jnp.where(f_valid, women.entries, m_cap), m_cap)
    run_start = jnp.cumsum(count, dtype=jnp.int32) - count

    e_valid = jnp.arange(e_cap) < men.n_entries
    m = jnp.where(e_valid, men.src, m_cap)
    w = men.entries
    lo = take(run_start, m, 0)
    end = lo + take(count, m, 0)

    def step(c):
        lo, hi = c
        mid = (lo + hi) // 2
        right = take(s_woman, mid, INT_MAX) < w
        go = lo < hi
        return jnp.where(go & right, mid + 1, lo), jnp.where(go & ~right, mid, hi)

    lo, _ = lax.while_loop(lambda c: jnp.any(c[0] < c[1]), step, (lo, end))
    found = e_valid & (lo < end) & (take(s_woman, lo, INT_MAX) == w)
    return jnp.where(found, take(s_rank, lo, INT_MAX), INT_MAX)


def master_ranks(women, m_cap: int):
    """Inverse of the women's shared list: ``inv[m]`` = rank of man m, INT_MAX if unlisted."""
    k = jnp.arange(women.e_cap, dtype=jnp.int32)
    ids = jnp.where(k < women.n_entries, women.entries, m_cap)
    return jnp.full(m_cap, INT_MAX, jnp.int32).at[ids].set(k, mode="drop")


# --------------------------------------------------------------------------
# one wave


def _wave(men, women, rank_of, window: int, block: int, sm, sp, hold, pos):
    """All busy slots propose once (after skipping sure-to-fail candidates)."""
    m_cap, w_cap = men.n_cap, women.n_cap
    busy = sm < m_cap
    length = take(men.length, sm, 0)
    start = take(men.start, sm, 0)
    q = sp[:, None] + jnp.arange(window, dtype=jnp.int32)[None, :]
    inside = busy[:, None] & (q < length[:, None])
    e = start[:, None] + q
    w = jnp.where(inside, take(men.entries, e, w_cap), w_cap)
    r = jnp.where(inside, rank_of(e, sm[:, None]), INT_MAX)
    h = take(hold, w, INT_MAX)
    ok = inside & (r < h)
    found = jnp.any(ok, axis=1)
    j = jnp.argmax(ok, axis=1).astype(jnp.int32)
    pick = lambda a: jnp.take_along_axis(a, j[:, None], axis=1)[:, 0]
    w1, r1, h1 = pick(w), pick(r), pick(h)
    prop = busy & found
    send = prop
    if block > 1 and sm.shape[0] % block == 0:
        # pre-reduce within blocks of slots: only the best proposal to each woman in a
        # block reaches the scatter (fewer atomics on one address when many men court one woman)
        wb = jnp.where(prop, w1, w_cap).reshape(-1, block)
        rb = r1.reshape(-1, block)
        beaten = jnp.any((wb[:, None, :] == wb[:, :, None]) & (rb[:, None, :] < rb[:, :, None]), axis=2)
        send = prop & ~beaten.reshape(-1)
    hold = hold.at[jnp.where(send, w1, w_cap)].min(r1, mode="drop")
    won = prop & (take(hold, w1, INT_MAX) == r1)
    p_next = jnp.where(found, sp + j + 1, jnp.minimum(sp + window, length))
    out = busy & ~won & (p_next >= length)
    leave = won | out
    # the displaced suitor (if any) takes the slot over at once
    d = jnp.where(won & (h1 < INT_MAX), take(women.entries, take(women.start, w1, 0) + h1, m_cap), m_cap)
    sp_new = jnp.where(won, take(pos, d, 0), p_next)
    sm_new = jnp.where(won, d, jnp.where(out, m_cap, sm))
    pos = pos.at[jnp.where(leave, sm, m_cap)].set(p_next, mode="drop", unique_indices=True)
    return sm_new, sp_new, hold, pos


def _step(men, women, rank_of, window: int, block: int, waves: int, width: int, s: SMState) -> SMState:
    m_cap = men.n_cap
    sm, sp = s.slot_man[:width], s.slot_pos[:width]
    hold, pos = s.hold, s.pos
    for _ in range(waves):
        sm, sp, hold, pos = _wave(men, women, rank_of, window, block, sm, sp, hold, pos)
    busy = sm < m_cap
    sm, n_busy = compact(busy, sm, m_cap)
    sp, _ = compact(busy, sp, 0)
    slot_man = lax.dynamic_update_slice(s.slot_man, sm, (0,))
    slot_pos = lax.dynamic_update_slice(s.slot_pos, sp, (0,))
    return SMState(slot_man, slot_pos, n_busy, pos, hold, s.it + 1, s.waves + waves)


# --------------------------------------------------------------------------
# driver


def solve(men, women, *, method: str, max_iters: int, unroll: int = DEFAULT_UNROLL,
          window: int = DEFAULT_WINDOW, block: int = DEFAULT_BLOCK):
    """Run the chosen method; returns (wife, husband, status, pos, stats dict).

    ``wife``/``husband`` have the capacities' lengths (-1 for single and in
    padding); ``pos[m]`` is the number of entries man m considered, whose sum
    is the paper's proposal count.
    """
    m_cap, w_cap = men.n_cap, women.n_cap
    if women.shared:
        inv = master_ranks(women, m_cap)
        rank_of = lambda e, m: take(inv, m, INT_MAX)
    else:
        wrank = pair_ranks(men, women)
        rank_of = lambda e, m: take(wrank, e, INT_MAX)
    waves = 1 if method == "gale_shapley" else unroll

    ids = jnp.arange(m_cap, dtype=jnp.int32)
    active = (ids < men.n) & (men.length > 0)
    slot_man, n_busy = compact(active, ids, m_cap)
    slot_pos = jnp.zeros(m_cap, jnp.int32)
    zero = jnp.int32(0)
    s = SMState(slot_man, slot_pos, n_busy, jnp.zeros(m_cap, jnp.int32),
                jnp.full(w_cap, INT_MAX, jnp.int32), zero, zero)

    ws = widths(m_cap)
    branches = [partial(_step, men, women, rank_of, window, block, waves, wd) for wd in ws]
    table = jnp.asarray(ws, jnp.int32)

    def body(s: SMState) -> SMState:
        if len(branches) == 1:
            return branches[0](s)
        idx = jnp.sum(table >= s.n_busy, dtype=jnp.int32) - 1
        return lax.switch(idx, branches, s)

    s = lax.while_loop(lambda s: (s.n_busy > 0) & (s.it < max_iters), body, s)
    status = jnp.where(s.n_busy > 0, MAX_ITERS, CONVERGED).astype(jnp.int32)
    # men still in a slot (only after max_iters) keep their progress
    pos = s.pos.at[s.slot_man].set(s.slot_pos, mode="drop")
    wids = jnp.arange(w_cap, dtype=jnp.int32)
    held = (s.hold < INT_MAX) & (wids < women.n)
    husband = jnp.where(held, take(women.entries, take(women.start, wids, 0) + s.hold, -1), -1)
    wife = jnp.full(m_cap, -1, jnp.int32).at[jnp.where(held, husband, m_cap)].set(wids, mode="drop")
    return wife, husband, status, pos, dict(rounds=s.it, waves=s.waves)
