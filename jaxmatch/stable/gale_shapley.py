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
is needed. The women's ranks are turned into lookups once
(:func:`rank_tables`): ``wrank[e]`` is, for entry e of a man's list, the
woman's rank of that man, stored beside his ranking of her as the paper
recommends for SMI, or ``INT_MAX`` when she does not list him (such a
proposal is always rejected, so only mutually ranked pairs match);
``wentry[f]`` is the way back, from the woman's entry to the man's, so a
displaced suitor finds where to resume in his list without a per-man
pointer array. When all women share one list (the "hard" set) the rank is
that list's inverse, indexed by the man, and when the men share one list too,
a man resumes after the woman's place in it.

The array form. Men work in *slots*, the array version of the CUDA code's one
thread per man. A *wave* runs all busy slots at once:

1. each slot's man m looks at his next ``window`` candidates and takes the
   first woman w who ranks him better than ``hold[w]``; the others are sure to
   fail and are skipped (counted as considered, as in Algorithm 1, line 5);
2. each woman keeps the best proposal: a scatter-min of the ranks into
   ``hold`` (the segment minimum over the proposals to w, fused with her
   current suitor's rank; it replaces the CAS). Within blocks of ``block``
   slots only the best proposal to each woman is sent, so many men courting
   one woman (the hard set) do not queue on one memory address;
3. a winner leaves his slot, and the suitor he displaced (if any) takes the
   slot over at once; a rejected man stays and goes on with his next
   candidate; a man whose list is exhausted leaves (he stays single).

A man is in at most one slot or held by at most one woman, so every wave is a
valid state of the sequential algorithm run in some order, and both methods
return the man-optimal stable matching, the unique result of every order of
Gale-Shapley proposals (Gale and Shapley; McVitie and Wilson). Every wave
considers at least one new entry, so there are at most E waves.

The two methods differ in where a loop step ends, which is the array
counterpart of queue versus stack:

* ``gale_shapley``: one loop step is one *round*: every free man (the queue:
  the busy slots) proposes once, the rejected and displaced men form the
  queue of the next round, and the loop syncs.
* ``mcvitie_wilson``: one loop step runs ``unroll`` waves back to back: a
  displaced or rejected man proposes again at once, in the same step, in the
  slot that was working on the chain (the paper's stack: the thread goes on
  with the man it just displaced).

A wave and a round propose the same men, so both need the same number of
waves; McVitie-Wilson needs ``unroll`` times fewer loop steps and host syncs.
On the hard set (identical rankings) each wave is won by one man only, so n
waves are inherent to any scheme with one proposal per man per wave; the
skip makes each of them one proposal per free man, and the unrolled steps
bring the loop to about n / ``unroll`` steps.

Work stays proportional to the busy slots: they always lie in a prefix of
static width, one of ``cap, cap/8, cap/64, ...`` (not below
:data:`MIN_WIDTH`); when the busy count fits a smaller width, one loop step
compacts the slots (a prefix sum) instead of proposing, and later steps run
on the smaller prefix (``lax.switch`` over the static widths). Each wave
costs O(width * window); the rank lookup one stable sort of the women's
entries and a binary search per men's entry, O(E log L).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, compact, take

METHODS = ("mcvitie_wilson", "gale_shapley")
DEFAULT_UNROLL = 16
DEFAULT_WINDOW = 4
DEFAULT_BLOCK = 32
MIN_WIDTH = 4096
WIDTH_SHRINK = 8
SEARCH_UNROLL = 8


class Tables(NamedTuple):
    """Rank lookups built once per solve (None where the case does not need one)."""

    wrank: Optional[jax.Array]    # [men e_cap] woman's rank of the man, per men's entry
    wentry: Optional[jax.Array]   # [women e_cap] men's entry of each women's entry, -1 if unmatched
    inv_w: Optional[jax.Array]    # [m_cap] rank of each man in the women's shared list
    inv_m: Optional[jax.Array]    # [w_cap] place of each woman in the men's shared list


class SMState(NamedTuple):
    slot_man: jax.Array    # [m_cap] man worked on by each slot, m_cap = idle
    slot_pos: jax.Array    # [m_cap] next list position of the slot's man
    n_busy: jax.Array      # number of busy slots
    cur: jax.Array         # index of the width whose prefix holds every busy slot
    pos: jax.Array         # [m_cap] saved positions (only when no table gives them)
    hold: jax.Array        # [w_cap] rank of each woman's suitor, INT_MAX for none
    it: jax.Array          # loop steps (proposal rounds and compactions)
    rounds: jax.Array      # loop steps that proposed
    waves: jax.Array       # proposal waves


def widths(cap: int) -> tuple[int, ...]:
    """Static slot widths, largest first: cap, cap/8, ... down to MIN_WIDTH."""
    out = [cap]
    while out[-1] // WIDTH_SHRINK >= MIN_WIDTH:
        out.append(out[-1] // WIDTH_SHRINK)
    return tuple(out)


# --------------------------------------------------------------------------
# rank lookup


def pair_ranks(men, women):
    """``(wrank, wentry)`` for individual lists on both sides.

    ``wrank[e]``: woman ``men.entries[e]``'s rank of the man owning entry e,
    ``INT_MAX`` where she does not list him (and in padding). ``wentry[f]``:
    the men's entry of women's entry f, -1 where he does not list her. The
    women's entries are stably sorted by man (each man's run is then ordered
    by woman), and every men's entry finds its woman in its man's run by a
    binary search (``SEARCH_UNROLL`` halvings fused per loop step): one radix
    sort and O(E log L) gathers, no n x n table.
    """
    m_cap, e_cap = men.n_cap, men.e_cap
    f_valid = jnp.arange(women.e_cap) < women.n_entries
    key = jnp.where(f_valid, women.entries, INT_MAX)
    perm = jnp.argsort(key, stable=True).astype(jnp.int32)
    s_woman = jnp.where(take(f_valid, perm, False), take(women.src, perm, INT_MAX), INT_MAX)
    count = jax.ops.segment_sum(f_valid.astype(jnp.int32), jnp.where(f_valid, women.entries, m_cap), m_cap)
    run_start = jnp.cumsum(count, dtype=jnp.int32) - count

    e_valid = jnp.arange(e_cap) < men.n_entries
    m = jnp.where(e_valid, men.src, m_cap)
    w = men.entries
    lo = take(run_start, m, 0)
    end = lo + take(count, m, 0)

    def step(c):
        lo, hi = c
        for _ in range(SEARCH_UNROLL):
            mid = (lo + hi) // 2
            right = take(s_woman, mid, INT_MAX) < w
            go = lo < hi
            lo, hi = jnp.where(go & right, mid + 1, lo), jnp.where(go & ~right, mid, hi)
        return lo, hi

    lo, _ = lax.while_loop(lambda c: jnp.any(c[0] < c[1]), step, (lo, end))
    found = e_valid & (lo < end) & (take(s_woman, lo, INT_MAX) == w)
    f = take(perm, lo, women.e_cap)
    wrank = jnp.where(found, f - take(women.start, take(women.src, f, 0), 0), INT_MAX)
    wentry = jnp.full(women.e_cap, -1, jnp.int32).at[jnp.where(found, f, women.e_cap)].set(
        jnp.arange(e_cap, dtype=jnp.int32), mode="drop", unique_indices=True)
    return wrank, wentry


def master_inverse(p, other_cap: int):
    """Inverse of a shared list: ``inv[x]`` = place of x in it, INT_MAX if unlisted."""
    k = jnp.arange(p.e_cap, dtype=jnp.int32)
    ids = jnp.where(k < p.n_entries, p.entries, other_cap)
    return jnp.full(other_cap, INT_MAX, jnp.int32).at[ids].set(k, mode="drop")


def rank_tables(men, women) -> Tables:
    """The lookups :func:`solve` needs for these two sides (see :class:`Tables`)."""
    if women.shared:
        inv_m = master_inverse(men, women.n_cap) if men.shared else None
        return Tables(None, None, master_inverse(women, men.n_cap), inv_m)
    if men.shared:
        raise ValueError("a shared men's list needs a shared women's list (unshare it on the host)")
    wrank, wentry = pair_ranks(men, women)
    return Tables(wrank, wentry, None, None)


def _rank_of(t: Tables, e, m):
    return take(t.wrank, e, INT_MAX) if t.inv_w is None else take(t.inv_w, m, INT_MAX)


def _suitor(t: Tables, men, women, w, h):
    """The suitor held by woman w at rank h and where he resumes (None: use saved positions)."""
    f = take(women.start, w, 0) + h
    valid = (w < women.n_cap) & (h < INT_MAX)
    d = jnp.where(valid, take(women.entries, f, men.n_cap), men.n_cap)
    if t.wentry is not None:
        e = take(t.wentry, f, 0)
        return d, e - take(men.start, d, 0) + 1
    if t.inv_m is not None:
        return d, take(t.inv_m, w, 0) + 1
    return d, None


# --------------------------------------------------------------------------
# one wave, one loop step


def _wave(t: Tables, men, women, window: int, block: int, sm, sp, hold, pos):
    """All busy slots propose once (after skipping sure-to-fail candidates)."""
    m_cap, w_cap = men.n_cap, women.n_cap
    busy = sm < m_cap
    length = take(men.length, sm, 0)
    start = take(men.start, sm, 0)
    q = sp[:, None] + jnp.arange(window, dtype=jnp.int32)[None, :]
    inside = busy[:, None] & (q < length[:, None])
    e = start[:, None] + q
    w = jnp.where(inside, take(men.entries, e, w_cap), w_cap)
    r = jnp.where(inside, _rank_of(t, e, sm[:, None]), INT_MAX)
    h = take(hold, w, INT_MAX)
    ok = inside & (r < h)
    found = jnp.any(ok, axis=1)
    j = jnp.argmax(ok, axis=1).astype(jnp.int32)
    w1, r1, h1 = w[:, -1], r[:, -1], h[:, -1]
    for k in range(window - 2, -1, -1):
        w1, r1, h1 = (jnp.where(j == k, a[:, k], b) for a, b in ((w, w1), (r, r1), (h, h1)))
    prop = busy & found
    send = prop
    if block > 1 and sm.shape[0] % block == 0:
        wb = jnp.where(prop, w1, w_cap).reshape(-1, block)
        rb = r1.reshape(-1, block)
        beaten = jnp.any((wb[:, None, :] == wb[:, :, None]) & (rb[:, None, :] < rb[:, :, None]), axis=2)
        send = prop & ~beaten.reshape(-1)
    hold = hold.at[jnp.where(send, w1, w_cap)].min(r1, mode="drop")
    won = prop & (take(hold, w1, INT_MAX) == r1)
    p_next = jnp.where(found, sp + j + 1, jnp.minimum(sp + window, length))
    out = busy & ~won & (p_next >= length)
    # the displaced suitor (if any) takes the slot over at once
    d, resume = _suitor(t, men, women, jnp.where(won, w1, w_cap), h1)
    if resume is None:
        resume = take(pos, d, 0)
        pos = pos.at[jnp.where(won | out, sm, m_cap)].set(p_next, mode="drop", unique_indices=True)
    sp_new = jnp.where(won, resume, p_next)
    sm_new = jnp.where(won, d, jnp.where(out, m_cap, sm))
    return sm_new, sp_new, hold, pos


def _run(t, men, women, window, block, waves, width, s: SMState) -> SMState:
    sm, sp = s.slot_man[:width], s.slot_pos[:width]
    hold, pos = s.hold, s.pos
    for _ in range(waves):
        sm, sp, hold, pos = _wave(t, men, women, window, block, sm, sp, hold, pos)
    n_busy = jnp.sum(sm < men.n_cap, dtype=jnp.int32)
    return s._replace(slot_man=lax.dynamic_update_slice(s.slot_man, sm, (0,)),
                      slot_pos=lax.dynamic_update_slice(s.slot_pos, sp, (0,)), n_busy=n_busy,
                      pos=pos, hold=hold, it=s.it + 1, rounds=s.rounds + 1, waves=s.waves + waves)


def _fitting(table, n_busy):
    """Index of the smallest width that holds n_busy slots."""
    return jnp.sum(table >= n_busy, dtype=jnp.int32) - 1


def _compact(m_cap, table, width, s: SMState) -> SMState:
    sm, sp = s.slot_man[:width], s.slot_pos[:width]
    busy = sm < m_cap
    sm, _ = compact(busy, sm, m_cap)
    sp, _ = compact(busy, sp, 0)
    return s._replace(slot_man=lax.dynamic_update_slice(s.slot_man, sm, (0,)),
                      slot_pos=lax.dynamic_update_slice(s.slot_pos, sp, (0,)),
                      cur=_fitting(table, s.n_busy), it=s.it + 1)


def solve(men, women, *, method: str, max_iters: int, unroll: int = DEFAULT_UNROLL,
          window: int = DEFAULT_WINDOW, block: int = DEFAULT_BLOCK):
    """Run the chosen method; returns (wife, husband, status, considered, stats dict).

    ``wife``/``husband`` have the capacities' lengths (-1 for single and in
    padding); ``considered[m]`` is the number of entries man m considered,
    whose sum is the paper's proposal count.
    """
    m_cap, w_cap = men.n_cap, women.n_cap
    t = rank_tables(men, women)
    waves = 1 if method == "gale_shapley" else unroll
    ws = widths(m_cap)
    table = jnp.asarray(ws, jnp.int32)

    ids = jnp.arange(m_cap, dtype=jnp.int32)
    active = (ids < men.n) & (men.length > 0)
    slot_man, n_busy = compact(active, ids, m_cap)
    zero = jnp.int32(0)
    s = SMState(slot_man, jnp.zeros(m_cap, jnp.int32), n_busy, _fitting(table, n_busy),
                jnp.zeros(m_cap, jnp.int32), jnp.full(w_cap, INT_MAX, jnp.int32), zero, zero, zero)

    runs = [partial(_run, t, men, women, window, block, waves, wd) for wd in ws]
    packs = [partial(_compact, m_cap, table, wd) for wd in ws]

    def body(s: SMState) -> SMState:
        if len(ws) == 1:
            return runs[0](s)
        shrink = _fitting(table, s.n_busy) > s.cur
        return lax.switch(jnp.where(shrink, len(ws) + s.cur, s.cur), runs + packs, s)

    s = lax.while_loop(lambda s: (s.n_busy > 0) & (s.it < max_iters), body, s)
    status = jnp.where(s.n_busy > 0, MAX_ITERS, CONVERGED).astype(jnp.int32)

    wids = jnp.arange(w_cap, dtype=jnp.int32)
    held = (s.hold < INT_MAX) & (wids < women.n)
    husband, resume = _suitor(t, men, women, jnp.where(held, wids, w_cap), jnp.where(held, s.hold, INT_MAX))
    husband = jnp.where(held, husband, -1)
    wife = jnp.full(m_cap, -1, jnp.int32).at[jnp.where(held, husband, m_cap)].set(wids, mode="drop")
    if resume is None:
        considered = s.pos
    else:  # single men not in a slot went through their whole list
        considered = jnp.where(ids < men.n, men.length, 0)
        considered = considered.at[jnp.where(held, husband, m_cap)].set(resume, mode="drop")
    considered = considered.at[s.slot_man].set(s.slot_pos, mode="drop")
    return wife, husband, status, considered, dict(rounds=s.rounds, waves=s.waves, steps=s.it)
