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
is needed. The women's ranks are turned into a lookup once
(:func:`rank_tables`): ``wrank[e]`` is, for entry e of a man's list, the
woman's rank of that man, stored beside his ranking of her as the paper
recommends for SMI, or ``INT_MAX`` when she does not list him (such a
proposal is always rejected, so only mutually ranked pairs match). A
displaced suitor resumes at his saved list position (``pos``, one entry per
man, written when he wins or gives up). When all women share one list (the
"hard" set) the rank is that list's inverse, indexed by the man, and when the
men share one list too, a man resumes after the woman's place in it.

The array form. Men work in *slots*, the array version of the CUDA code's one
thread per man. A *wave* runs all busy slots at once:

1. each slot's man m looks at his next ``window`` candidates and takes the
   first woman w who ranks him better than ``hold[w]``; the others are sure to
   fail and are skipped (counted as considered, as in Algorithm 1, line 5);
2. each woman keeps the best proposal: a scatter-min of the ranks into
   ``hold`` (the segment minimum over the proposals to w, fused with her
   current suitor's rank; it replaces the CAS). Within blocks of ``block``
   slots only the best proposal to each woman is sent, and a second level
   does the same over groups of ``Config.group`` blocks for each block's first
   sender, so many men courting one woman (the hard set) do not queue on one
   memory address (one proposal per 1024 slots instead of per 32);
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
static width, one of ``cap, cap/2, cap/4, cap/8, cap/64, ...`` (not below
``Config.min_width``, see :func:`widths`); when the busy count fits a smaller
width, one loop step compacts the slots (a prefix sum) instead of proposing,
and later steps run on the smaller prefix (``lax.switch`` over the static
widths). McVitie-Wilson runs a step of one wave instead of ``unroll`` while
the busy count is falling fast (by more than 1/``Config.fall`` in the last
step, as in the first waves of the easy set), so the compaction follows it
instead of running ``unroll`` waves on a prefix far wider than the busy men.
With ``kernel`` (the default on the GPU, see :mod:`jaxmatch.kernels.stable_mw`),
McVitie-Wilson's loop steps are launches of one lock-free Pallas kernel
instead: each block of slots runs many proposals per launch with an atomic
min on ``hold`` and no barrier between blocks; the widths, compaction and
short steps above stay as they are.
Each wave costs O(width * window); the rank lookup one stable radix sort of
the women's entries by man and a branchless binary search per men's entry,
O(E log L) (:func:`pair_ranks`).
"""
from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, compact, smallest_fit, switch, take
from jaxmatch.kernels import stable_mw
# the array wave is shared with the kernel's _reference, so it lives in a kernels leaf module
from jaxmatch.kernels._stable_wave import DEFAULT_BLOCK, GROUP, Tables, _suitor, _wave

METHODS = ("mcvitie_wilson", "gale_shapley")
DEFAULT_UNROLL = 16    # McVitie-Wilson's waves per loop step on the GPU (stable_marriage: 1 elsewhere)
DEFAULT_WINDOW = 4


class Config(NamedTuple):
    """The array solver's static knobs (hashable: a ``jit`` static argument, part of the cache key).

    * ``min_width``, ``fine_steps``, ``width_shrink``: the slot widths
      (:func:`widths`): ``fine_steps`` halvings of the capacity, then steps
      of ``width_shrink``, none below ``min_width``.
    * ``fall``: a McVitie-Wilson step runs one wave after a step in which
      the busy count fell by more than 1/``fall`` of what was left.
    * ``search_unroll``: binary-search steps per loop step (:func:`pair_ranks`).
    * ``group``: blocks per group of the second proposal filter (1: one level).
    """
    min_width: int = 4096
    width_shrink: int = 8
    fine_steps: int = 3
    fall: int = 8
    search_unroll: int = 8
    group: int = GROUP


DEFAULT = Config()


class SMState(NamedTuple):
    slot_man: jax.Array    # [m_cap] man worked on by each slot, m_cap = idle
    slot_pos: jax.Array    # [m_cap] next list position of the slot's man
    n_busy: jax.Array      # number of busy slots
    cur: jax.Array         # index of the width whose prefix holds every busy slot
    prev: jax.Array        # n_busy before the last proposing step (INT_MAX at the start)
    pos: jax.Array         # [m_cap] saved positions (only when no table gives them)
    hold: jax.Array        # [w_cap] rank of each woman's suitor, INT_MAX for none
    it: jax.Array          # loop steps (proposal rounds and compactions)
    rounds: jax.Array      # loop steps that proposed
    waves: jax.Array       # proposal waves


def widths(cap: int, cfg: Config = DEFAULT) -> tuple[int, ...]:
    """Static slot widths, largest first, not below ``cfg.min_width``.

    ``cfg.fine_steps`` halvings first (cap, cap/2, cap/4, cap/8), then steps of
    ``cfg.width_shrink``. While many men are busy a wave costs in proportion to
    the width, so there the prefix follows the busy count closely (at most 2x;
    on the hard set, whose busy count falls by one per wave, the slot work
    drops by a quarter against steps of 8); below cap/8 coarse steps keep the
    number of compiled widths small.
    """
    out = [cap]
    for _ in range(cfg.fine_steps):
        if out[-1] // 2 < cfg.min_width:
            break
        out.append(out[-1] // 2)
    while out[-1] // cfg.width_shrink >= cfg.min_width:
        out.append(out[-1] // cfg.width_shrink)
    return tuple(out)


# --------------------------------------------------------------------------
# rank lookup


def pair_ranks(men, women, search_unroll: int = DEFAULT.search_unroll):
    """``wrank`` for individual lists on both sides.

    ``wrank[e]``: woman ``men.entries[e]``'s rank of the man owning entry e,
    ``INT_MAX`` where she does not list him (and in padding). The women's
    entries are stably sorted by man (one radix sort of (man, entry) pairs:
    the paper's transpose of the women's lists, each man's run then ordered
    by woman); the runs' bounds come from the sorted keys in one sequential
    pass, and every men's entry finds its woman in its man's run by a
    branchless binary search (power-of-two steps, ``search_unroll`` per loop
    step, the loop bounded by the longest run, a scalar). Passes over the
    entries: the sort, one gather of the women by the sorted order, the run
    bounds, ceil(log2(longest run) / search_unroll) search steps and one
    final step; O(E log L) work, no atomics, no n x n table.
    """
    m_cap = men.n_cap
    fk = jnp.arange(women.e_cap, dtype=jnp.int32)
    key = jnp.where(fk < women.n_entries, women.entries, INT_MAX)
    skey, perm = lax.sort((key, fk), num_keys=1, is_stable=True)
    s_woman = take(women.src, perm, INT_MAX)
    # run of man m in the sorted order: [run_lo[m], run_hi[m]); empty (0, 0) when no woman lists him
    head = skey != jnp.concatenate([jnp.full(1, -1, jnp.int32), skey[:-1]])
    tail = skey != jnp.concatenate([skey[1:], jnp.full(1, INT_MAX, jnp.int32)])
    zeros = jnp.zeros(m_cap, jnp.int32)
    run_lo = zeros.at[jnp.where(head, skey, m_cap)].set(fk, mode="drop", unique_indices=True)
    run_hi = zeros.at[jnp.where(tail, skey, m_cap)].set(fk + 1, mode="drop", unique_indices=True)
    longest = jnp.max(run_hi - run_lo, initial=0)
    top = jnp.where(longest > 0, jnp.left_shift(1, 31 - lax.clz(longest)), 0)

    m = jnp.where(jnp.arange(men.e_cap) < men.n_entries, men.src, m_cap)
    w = men.entries

    def step(c):
        off, size = c   # off: entries of the run known to sort before w; size: the next step
        lo, hi = take(run_lo, m, 0), take(run_hi, m, 0)
        for _ in range(search_unroll):
            k = lo + off + size - 1
            off = jnp.where((k < hi) & (take(s_woman, k, INT_MAX) < w), off + size, off)
            size = size // 2
        return off, size

    off, _ = lax.while_loop(lambda c: c[1] > 0, step, (jnp.zeros(men.e_cap, jnp.int32), top))
    k = take(run_lo, m, 0) + off
    found = (k < take(run_hi, m, 0)) & (take(s_woman, k, INT_MAX) == w)
    return jnp.where(found, take(perm, k, 0) - take(women.start, w, 0), INT_MAX)


def master_inverse(p, other_cap: int):
    """Inverse of a shared list: ``inv[x]`` = place of x in it, INT_MAX if unlisted."""
    k = jnp.arange(p.e_cap, dtype=jnp.int32)
    ids = jnp.where(k < p.n_entries, p.entries, other_cap)
    return jnp.full(other_cap, INT_MAX, jnp.int32).at[ids].set(k, mode="drop")


def rank_tables(men, women, cfg: Config = DEFAULT) -> Tables:
    """The lookups :func:`solve` needs for these two sides (see :class:`Tables`)."""
    if women.shared:
        inv_m = master_inverse(men, women.n_cap) if men.shared else None
        return Tables(None, master_inverse(women, men.n_cap), inv_m)
    if men.shared:
        raise ValueError("a shared men's list needs a shared women's list (unshare it on the host)")
    return Tables(pair_ranks(men, women, cfg.search_unroll), None, None)


# --------------------------------------------------------------------------
# one wave, one loop step


def _run(t, men, women, window, block, waves, group, width, s: SMState) -> SMState:
    sm, sp = s.slot_man[:width], s.slot_pos[:width]
    hold, pos = s.hold, s.pos
    for _ in range(waves):
        sm, sp, hold, pos = _wave(t, men, women, window, block, sm, sp, hold, pos, group)
    return _proposed(men.n_cap, s, sm, sp, hold, pos, waves)


def _run_kernel(t, men, women, cfg, interpret, width, s: SMState) -> SMState:
    """One launch of the lock-free kernel on the first ``width`` slots."""
    sm, sp, hold, pos, waves = stable_mw.mw_steps(t, men, women, s.slot_man[:width], s.slot_pos[:width],
                                                  s.hold, s.pos, cfg=cfg, interpret=interpret)
    return _proposed(men.n_cap, s, sm, sp, hold, pos, waves)


def _proposed(m_cap, s: SMState, sm, sp, hold, pos, waves) -> SMState:
    """The state after a proposing loop step that left the slot prefix ``sm``/``sp``."""
    n_busy = jnp.sum(sm < m_cap, dtype=jnp.int32)
    return s._replace(slot_man=lax.dynamic_update_slice(s.slot_man, sm, (0,)),
                      slot_pos=lax.dynamic_update_slice(s.slot_pos, sp, (0,)), n_busy=n_busy, prev=s.n_busy,
                      pos=pos, hold=hold, it=s.it + 1, rounds=s.rounds + 1, waves=s.waves + waves)


def short_steps(cap: int, cfg: Config = DEFAULT) -> int:
    """A bound on the one-wave steps of McVitie-Wilson for ``cap`` men.

    A step runs one wave only after a step in which the busy count fell by
    more than 1/``cfg.fall`` of what is left, which can happen at most
    log(cap) / log(1 + 1/fall) times.
    """
    return int(math.ceil(math.log(max(cap, 2)) / math.log1p(1 / cfg.fall))) + 1


def _fitting(table, n_busy):
    """Index of the smallest width that holds n_busy slots."""
    return smallest_fit(table, n_busy)


def _compact(m_cap, table, width, s: SMState) -> SMState:
    sm, sp = s.slot_man[:width], s.slot_pos[:width]
    busy = sm < m_cap
    sm, _ = compact(busy, sm, m_cap)
    sp, _ = compact(busy, sp, 0)
    return s._replace(slot_man=lax.dynamic_update_slice(s.slot_man, sm, (0,)),
                      slot_pos=lax.dynamic_update_slice(s.slot_pos, sp, (0,)),
                      cur=_fitting(table, s.n_busy), it=s.it + 1)


def solve(men, women, *, method: str, max_iters: int, unroll: int = DEFAULT_UNROLL,
          window: int = DEFAULT_WINDOW, block: int = DEFAULT_BLOCK, kernel=None,
          interpret: bool = False, tables: Optional[Tables] = None, cfg: Config = DEFAULT):
    """Run the chosen method; returns (wife, husband, status, considered, stats dict).

    ``kernel``: a :class:`jaxmatch.kernels.stable_mw.Config` to run
    McVitie-Wilson's proposals in that kernel (``interpret``: in Pallas's
    interpret mode), or None for the array version. ``tables``: the rank
    lookups, if already built (:func:`rank_tables`). ``cfg``: the knobs (:class:`Config`).

    ``wife``/``husband`` have the capacities' lengths (-1 for single and in
    padding); ``considered[m]`` is the number of entries man m considered,
    whose sum is the paper's proposal count.
    """
    m_cap, w_cap = men.n_cap, women.n_cap
    t = rank_tables(men, women, cfg) if tables is None else tables
    waves = 1 if method == "gale_shapley" else unroll
    ws = widths(m_cap, cfg)
    table = jnp.asarray(ws, jnp.int32)

    ids = jnp.arange(m_cap, dtype=jnp.int32)
    active = (ids < men.n) & (men.length > 0)
    slot_man, n_busy = compact(active, ids, m_cap)
    zero = jnp.int32(0)
    s = SMState(slot_man, jnp.zeros(m_cap, jnp.int32), n_busy, _fitting(table, n_busy), jnp.int32(INT_MAX),
                jnp.zeros(m_cap, jnp.int32), jnp.full(w_cap, INT_MAX, jnp.int32), zero, zero, zero)

    runs = [partial(_run, t, men, women, window, block, waves, cfg.group, wd) for wd in ws]
    packs = [partial(_compact, m_cap, table, wd) for wd in ws]
    shorts = [partial(_run, t, men, women, window, block, 1, cfg.group, wd) for wd in ws[:-1]] if waves > 1 else []
    if kernel:  # McVitie-Wilson in the lock-free kernel, on every width that splits into its blocks
        def launch(cfg, r, wd):
            return partial(_run_kernel, t, men, women, cfg, interpret, wd) if stable_mw.usable(wd, cfg) else r
        short = kernel._replace(steps=kernel.short_steps)
        # a block runs until its slowest slot is done, so while the busy count falls fast the
        # launches are short and the slots compact between them (the one-wave steps' rule);
        # a width the blocks do not split keeps the array version's step
        shorts = [launch(short, r, wd) for wd, r in zip(ws, shorts or runs)][:len(ws) - 1]
        runs = [launch(kernel, r, wd) for wd, r in zip(ws, runs)]

    def body(s: SMState) -> SMState:
        k = s.cur
        if shorts:  # the busy count is falling fast: one wave, so compaction can follow it
            fast = (s.prev - s.n_busy > s.n_busy // cfg.fall) & (s.cur < len(shorts))
            k = jnp.where(fast, len(ws) + k, k)
        if len(ws) > 1:
            k = jnp.where(_fitting(table, s.n_busy) > s.cur, len(ws) + len(shorts) + s.cur, k)
        branches = runs + shorts + (packs if len(ws) > 1 else [])
        return switch(k, branches, s)

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
    return wife, husband, status, considered, dict(iterations=s.it, rounds=s.rounds, waves=s.waves, steps=s.it)
