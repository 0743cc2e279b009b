"""McVitie-Wilson proposals as one lock-free Pallas kernel.

Paper IV of ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``,
Section 4: one GPU thread per man, an atomic on the woman's suitor, and the
thread goes on with the man it displaced. The array version in
:mod:`jaxmatch.stable.gale_shapley` runs each wave as a handful of XLA
kernels with a global barrier between them; on the hard set (one wave per
woman, n waves) that fixed cost per wave sets the time. This kernel keeps a
block of :attr:`Config.block` slots in registers (with each slot's list
start, length and, for a shared women's list, rank) and runs up to
:attr:`Config.steps` proposals per slot inside one launch, with no barrier between blocks:

1. each busy slot looks at the next :attr:`Config.window` candidates of its man and
   takes the first woman w with ``rank < hold[w]`` (the others are sure to
   fail: ``hold`` only falls);
2. the block's lowest-numbered courted woman gets only its best proposal
   (two block reductions; on the hard set every busy man courts her), so
   many men courting one woman do not queue on one address; other
   collisions go to the atomics, which order them;
3. ``old = atomic_min(hold[w], rank)``: the man is held if ``rank < old``,
   and the slot takes over the suitor at rank ``old`` (if any) at once;
   otherwise he goes on with his next candidate.

Every atomic is a step of the sequential algorithm in some order, so the
result is the man-optimal stable matching whatever the blocks' timing, and
the entries considered (the paper's proposal count) are the same too: each
man considers his list in order up to his final partner. The number of
launches is not: it depends on the timing of the blocks on the GPU.

The saved position of a man who is held (``pos``, when no shared lists give
it) is written before his atomic, with a block barrier and the atomic's
release order between them, so the slot that displaces him reads it after.

``_reference`` is the same step in pure JAX: ``steps`` waves of the array
version, which gives the same final answer.

Cost: O(window) per considered entry plus two block reductions per step;
a block runs until its slowest slot is done or ``steps`` run out, so the
caller keeps launches short while the busy count falls fast and compacts
the slots between them.

>>> from jaxmatch.stable import Preferences, stable_marriage
>>> men = Preferences.from_padded([[0, 1], [0, 1]], 2, n_capacity=128)
>>> women = Preferences.from_padded([[1, 0], [0, 1]], 2, n_capacity=128)
>>> stable_marriage(men, women, kernel=Config()).wife.tolist()[:2]
[1, 0]
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import INT_MAX
from jaxmatch.graph import GraphInputError
from jaxmatch.kernels._pallas import _atomic_min, _barrier, _f32, _i32, _load, _store, powers_of_two
from jaxmatch.kernels._stable_wave import DEFAULT_BLOCK, _wave


class Config(NamedTuple):
    """The kernel's static knobs (hashable: a jit static argument)."""

    block: int = 128      # slots per program (a power of two)
    window: int = 1       # candidates looked at per proposal step (a power of two)
    steps: int = 256      # proposal steps per slot per launch, at most
    num_warps: int = 4
    short_steps: int = 16  # the same while the busy count falls fast (see gale_shapley.solve)


def check(cfg: Config, backend: str) -> None:
    """Raise :class:`~jaxmatch.GraphInputError` on knobs the kernel cannot run: ``block`` and
    ``window`` powers of two, and on the GPU a block of at least one slot per thread (32 x
    ``num_warps``). A block of fewer slots than threads holds each slot in several threads; each
    copy loads the woman's held rank on its own while other programs lower it, and an atomic's
    result reaches one copy only (the lesson of the push kernels: ``jaxmatch.kernels._pallas._row_load``)."""
    powers_of_two(cfg, ("block", "window", "num_warps"), "stable_mw.Config")
    if backend == "gpu" and cfg.block < 32 * cfg.num_warps:
        raise GraphInputError(f"stable_mw.Config.block must be at least the {32 * cfg.num_warps} threads of "
                              f"num_warps={cfg.num_warps} on the GPU, got {cfg.block}")


def usable(width: int, cfg: Config = Config()) -> bool:
    """Whether a slot prefix of this width splits into whole blocks."""
    return width % cfg.block == 0


def _kernel(*refs, cfg: Config, m_cap, w_cap, shared_m, use_pos, use_wrank, use_inv_m, interpret):
    window = cfg.window
    refs = list(refs)
    sm_ref, sp_ref, hold_in, *refs = refs
    pos_in = refs.pop(0) if use_pos else None
    men_entries = refs.pop(0)
    if shared_m:
        n_ent_ref = refs.pop(0)
        men_start = men_length = None
    else:
        men_start, men_length = refs.pop(0), refs.pop(0)
    rank_ref = refs.pop(0)                       # wrank [e_cap] or inv_w [m_cap]
    inv_m = refs.pop(0) if use_inv_m else None
    women_entries, women_start = refs.pop(0), refs.pop(0)
    sm_out, sp_out, hold = refs.pop(0), refs.pop(0), refs.pop(0)
    pos = refs.pop(0) if use_pos else None
    it_out = refs.pop(0)
    del hold_in, pos_in                          # aliased: the output refs hold the same data

    cols = jnp.arange(window, dtype=jnp.int32)[None, :]
    n_ent = n_ent_ref[0] if shared_m else None

    def man(m, busy):
        """What a slot keeps of its man: list start, length and (shared women's list) rank."""
        if shared_m:
            start, length = jnp.zeros_like(m), jnp.where(busy, n_ent, 0)
        else:
            start, length = _load(men_start, m, busy, 0), _load(men_length, m, busy, 0)
        rank = jnp.zeros_like(m) if use_wrank else _load(rank_ref, m, busy, INT_MAX)
        return start, length, rank

    def cond(c):
        return (c[-1] < cfg.steps) & c[-2]

    def body(c):
        sm, sp, start, length, rank, _, it = c
        busy = sm < m_cap
        q = sp[:, None] + cols
        inside = busy[:, None] & (q < length[:, None])
        e = start[:, None] + q
        w = _load(men_entries, e, inside, w_cap)
        r = _load(rank_ref, e, inside, INT_MAX) if use_wrank else rank[:, None]
        h = _i32(_load(hold, w, inside, 0.0, volatile=True))
        ok = inside & (r < h)
        j = jnp.min(jnp.where(ok, cols, window), axis=1)
        found = j < window
        prop = busy & found
        e1 = start + sp + j
        w1 = _load(men_entries, e1, prop, w_cap)
        r1 = _load(rank_ref, e1, prop, INT_MAX) if use_wrank else rank
        # the block's first woman gets only her best proposal (all of them, on the hard set);
        # the same reduction says whether any slot was busy (w_cap: busy, none proposed; w_cap + 1: none busy)
        wmin = jnp.min(jnp.where(prop, w1, jnp.where(busy, w_cap, w_cap + 1)))
        at_min = prop & (w1 == wmin)
        rmin = jnp.min(jnp.where(at_min, r1, INT_MAX))
        send = prop & (~at_min | (r1 == rmin))
        p_next = jnp.where(found, sp + j + 1, jnp.minimum(sp + window, length))
        if use_pos:   # where the man resumes if he is held and then displaced
            _store(pos, sm, p_next, send, interpret)
            _barrier(interpret)
        old = _atomic_min(hold, w1, r1, send, interpret)
        won = send & (r1 < old)
        disp = won & (old < INT_MAX)
        f = _load(women_start, w1, disp, 0) + jnp.where(disp, old, 0)
        d = _load(women_entries, f, disp, m_cap)
        if use_inv_m:
            resume = _load(inv_m, w1, disp, 0) + 1
        else:
            _barrier(interpret)
            resume = _load(pos, d, disp, 0, volatile=True)
        out = busy & ~won & (p_next >= length)
        if use_pos:
            _store(pos, sm, p_next, out, interpret)
        sm_new = jnp.where(won, jnp.where(disp, d, m_cap), jnp.where(out, m_cap, sm))
        sp_new = jnp.where(won, resume, p_next)
        d_start, d_length, d_rank = man(d, disp)
        if not use_wrank:
            d_rank = old    # a shared women's list: the displaced man's rank is the one he was held at
        start = jnp.where(disp, d_start, start)
        length = jnp.where(disp, d_length, length)
        rank = jnp.where(disp, d_rank, rank)
        return sm_new, sp_new, start, length, rank, wmin <= w_cap, it + 1

    sm, sp = sm_ref[...], sp_ref[...]
    c = lax.while_loop(cond, body, (sm, sp, *man(sm, sm < m_cap), jnp.bool_(True), jnp.int32(0)))
    sm_out[...] = c[0]
    sp_out[...] = c[1]
    it_out[...] = jnp.full((1,), c[-1] - (~c[-2]).astype(jnp.int32), jnp.int32)  # not the last, idle, step


def mw_steps(t, men, women, sm, sp, hold, pos, *, cfg: Config = Config(), interpret: bool = False):
    """Up to ``cfg.steps`` proposals per busy slot of ``sm``/``sp`` (a prefix of whole blocks).

    ``t`` are the rank tables of :func:`jaxmatch.stable.gale_shapley.rank_tables`.
    Returns the new ``(sm, sp, hold, pos, waves)``, where ``waves`` is the
    most proposal steps any block ran.
    """
    width, block = sm.shape[0], cfg.block
    if not usable(width, cfg):
        raise ValueError(f"slot width {width} is not a multiple of the block {block}")
    use_pos = t.inv_m is None
    use_wrank = t.wrank is not None
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,))
    blk = pl.BlockSpec((block,), lambda i: (i,))
    hold = _f32(hold)   # see _atomic_min
    ins = [sm, sp, hold] + ([pos] if use_pos else []) + [men.entries]
    ins += [jnp.reshape(men.n_entries, (1,)).astype(jnp.int32)] if men.shared else [men.start, men.length]
    ins += [t.wrank if use_wrank else t.inv_w] + ([t.inv_m] if t.inv_m is not None else [])
    ins += [women.entries, women.start]
    grid = width // block
    outs = [jax.ShapeDtypeStruct(sm.shape, jnp.int32), jax.ShapeDtypeStruct(sp.shape, jnp.int32), hold]
    outs += [pos] if use_pos else []
    outs += [jax.ShapeDtypeStruct((grid,), jnp.int32)]
    out_specs = [blk, blk, whole(hold)] + ([whole(pos)] if use_pos else []) + [pl.BlockSpec((1,), lambda i: (i,))]
    aliases = {2: 2, 3: 3} if use_pos else {2: 2}
    kernel = pl.pallas_call(
        partial(_kernel, cfg=cfg, m_cap=men.n_cap, w_cap=women.n_cap, shared_m=men.shared, use_pos=use_pos,
                use_wrank=use_wrank, use_inv_m=t.inv_m is not None, interpret=interpret),
        grid=(grid,),
        in_specs=[blk, blk] + [whole(x) for x in ins[2:]],
        out_specs=out_specs,
        out_shape=[jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs],
        input_output_aliases=aliases,
        compiler_params=plgpu.CompilerParams(num_warps=cfg.num_warps, num_stages=1),
        interpret=interpret,
    )
    res = kernel(*ins)
    sm, sp, hold = res[0], res[1], _i32(res[2])
    pos = res[3] if use_pos else pos
    return sm, sp, hold, pos, jnp.max(res[-1])


def _reference(t, men, women, sm, sp, hold, pos, *, cfg: Config = Config()):
    """The same call in pure JAX: ``steps`` barrier-separated waves of the array version."""
    wave = partial(_wave, t, men, women, cfg.window, DEFAULT_BLOCK)
    sm, sp, hold, pos = lax.fori_loop(0, cfg.steps, lambda _, c: wave(*c),
                                      (sm, sp, hold, pos))
    return sm, sp, hold, pos, jnp.int32(cfg.steps)
