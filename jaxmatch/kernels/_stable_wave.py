"""One wave of the array McVitie-Wilson / Gale-Shapley step, in pure JAX.

Shared by :mod:`jaxmatch.stable.gale_shapley` (the algorithm, which runs it
in its loop) and :mod:`jaxmatch.kernels.stable_mw` (whose ``_reference`` is
``steps`` of these waves). A leaf module: it imports only :mod:`jaxmatch._ops`.
See :mod:`jaxmatch.stable.gale_shapley` for the algorithm and the meaning of
the slots (``sm``, ``sp``), ``hold`` and ``pos``.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from jaxmatch._ops import INT_MAX, take

DEFAULT_BLOCK = 32
GROUP = 32        # default blocks per group of the second filter level (1: one level only)


class Tables(NamedTuple):
    """Rank lookups built once per solve (None where the case does not need one)."""

    wrank: Optional[jax.Array]    # [men e_cap] woman's rank of the man, per men's entry
    inv_w: Optional[jax.Array]    # [m_cap] rank of each man in the women's shared list
    inv_m: Optional[jax.Array]    # [w_cap] place of each woman in the men's shared list


def _rank_of(t: Tables, e, m):
    return take(t.wrank, e, INT_MAX) if t.inv_w is None else take(t.inv_w, m, INT_MAX)


def _suitor(t: Tables, men, women, w, h):
    """The suitor held by woman w at rank h and where he resumes (None: use saved positions)."""
    f = take(women.start, w, 0) + h
    valid = (w < women.n_cap) & (h < INT_MAX)
    d = jnp.where(valid, take(women.entries, f, men.n_cap), men.n_cap)
    if t.inv_m is not None:
        return d, take(t.inv_m, w, 0) + 1
    return d, None


def _wave(t: Tables, men, women, window: int, block: int, sm, sp, hold, pos, group: int = GROUP):
    """All busy slots propose once (after skipping sure-to-fail candidates)."""
    m_cap, w_cap = men.n_cap, women.n_cap
    busy = sm < m_cap
    if men.shared:  # one list: no per-man lookups (busy men are real men, sm < n)
        length = jnp.where(busy, men.n_entries, 0)
        start = jnp.zeros_like(sm)
    else:
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
        send = prop & ~_beaten(wb, rb).reshape(-1)
        if group > 1 and sm.shape[0] % (block * group) == 0:
            send = _second_level(send, wb, rb, block, w_cap, group)
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


def _beaten(w, r):
    """Per row of ``w``/``r`` [groups, k]: whether another entry of the row courts
    the same woman with a better (lower) rank."""
    return jnp.any((w[:, None, :] == w[:, :, None]) & (r[:, None, :] < r[:, :, None]), axis=2)


def _second_level(send, wb, rb, block: int, w_cap: int, group: int):
    """The same filter over groups of ``group`` blocks, on each block's first sender.

    A block's first sender is held back when another block's first sender in
    its group courts the same woman with a better rank. On the hard set, where
    every busy man courts one woman, this sends one proposal per ``block *
    group`` slots instead of one per ``block``. The best proposal to each woman
    is never held back, so the scatter-min gives the same ``hold``.
    """
    sb = send.reshape(-1, block)
    has = jnp.any(sb, axis=1)
    first = jnp.argmax(sb, axis=1).astype(jnp.int32)
    wf = jnp.where(has, jnp.take_along_axis(wb, first[:, None], axis=1)[:, 0], w_cap).reshape(-1, group)
    rf = jnp.take_along_axis(rb, first[:, None], axis=1)[:, 0].reshape(-1, group)
    drop = has & _beaten(wf, rf).reshape(-1)
    held = drop[:, None] & (jnp.arange(block, dtype=jnp.int32)[None, :] == first[:, None])
    return send & ~held.reshape(-1)
