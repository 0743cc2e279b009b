"""The epsilon-scaling auction of one small dense assignment problem in one Pallas program.

The array auction (:mod:`jaxmatch.assignment.auction`) runs Jacobi rounds as
XLA loop steps; on the GPU each costs 20-100 us, and a batch of small
problems under ``vmap`` runs as many steps as its slowest problem, each over
the whole batch. Here one program holds one problem's prices, owners and
assignment in registers and runs Bertsekas's Gauss-Seidel auction from the
first phase to the last, one bid at a time, with no barrier and no other
program to wait for. Under ``jax.vmap`` Pallas gives every problem of the
batch its own program (the grid gets the batch axis), so a batch of 10^4
problems is one launch of 10^4 independent programs.

One bid (the same as the array auction's tail, ``auction._tail``):
the bidder ``i`` reads its row of benefits (one load of ``P`` values), finds
its best object ``j`` (largest ``A_ij - p_j``; ties to the first object at or
after ``i``, cyclically) and the second best value, and raises ``p_j`` to
``p_j + (best - second) + eps``; ``j``'s previous owner is displaced and bids
next, else the free person of smallest id. When nobody is free the phase
ends: with ``eps <= 1`` the run has converged, else ``eps`` falls by
``theta`` (at least to 1), the prices stay and every person is free again.
A bidder with no allowed object, or a price past the bound of the array
auction's docstring, stops the run as INFEASIBLE; ``max_iters`` bids as
MAX_ITERS. With the same inputs the kernel makes the same bids in the same
order as the array auction with ``Config(tail=N)`` (every phase one bid at a
time), so it returns the same prices and assignment, bit for bit (the tests
check this in interpret mode).

No atomics and no shared state between programs: nothing here is
concurrent, so the correctness argument is the sequential auction's
(eps-complementary slackness and the price bound, :mod:`jaxmatch.assignment.auction`).

Lowering: Pallas's Triton lowering (``plgpu.CompilerParams``), as the other
kernels of this package; the program is one warp up to 128 objects, so every
reduction of a bid is a warp shuffle.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import CONVERGED, MAX_ITERS
from jaxmatch.kernels._pallas import _load
from jaxmatch.status import Status

INFEASIBLE = int(Status.INFEASIBLE)
NEG = float("-inf")


def _I(x):
    """An int32 constant: the Triton lowering typed weak-typed Python ints in a ``where`` of a loop
    body as i1 (JAX 0.11.2: 6 and -1 as ``true``)."""
    return jnp.asarray(x, jnp.int32)


# problems a program under vmap (experiments/RESULTS.md, session 42)
GROUP = 1


def padded(m: int) -> int:
    """The program's vector length for ``m`` objects: a power of two, at least 32 (one warp)."""
    return max(32, 1 << max(m - 1, 0).bit_length())


def _warps(P: int) -> int:
    return max(1, min(4, P // 128))


def _bid(c, row_of, ids, rng, max_iters, *, m: int, P: int, theta: float):
    """One step of each of a program's ``G`` problems (vectors ``[G, P]``, scalars ``[G, 1]``): a bid
    of the carried bidder, or the end of a phase when nobody is free; a problem that has stopped
    keeps its state. (No bool among the loop's values: the Triton lowering of a while loop carries
    them as i32 and yields i1.)"""
    price, owner, assigned, i, eps, start_max, rounds, phases, status = c
    top = lambda x: jnp.max(x, axis=-1, keepdims=True)  # noqa: E731
    low = lambda x: jnp.min(x, axis=-1, keepdims=True)  # noqa: E731
    real = ids < m
    free = lambda a: low(jnp.where(real & (a < 0), ids, P))  # noqa: E731
    # the bid of i (computed from a clamped row when i == P, then discarded)
    val = row_of(jnp.minimum(i, P - 1)) - price
    best = top(val)
    stuck = best == NEG
    r = low(jnp.where((val == best) & (val > NEG), (ids - i + m) % m, m))
    j = jnp.where(r < m, (r + i) % m, P)
    at_j = ids == j
    second = top(jnp.where(at_j, NEG, val))
    second = jnp.where(second > NEG, second, best - (rng + eps))
    bid = top(jnp.where(at_j, price, NEG)) + (best - second) + eps
    prev = top(jnp.where(at_j, owner, -1))
    b_assigned = jnp.where(ids == prev, -1, assigned)
    b_assigned = jnp.where((ids == i) & ~stuck, j, b_assigned)
    b_rounds = rounds + 1
    runaway = ~stuck & (bid > start_max + 2 * (m + 1) * (rng + eps))
    b_status = jnp.where(stuck | runaway, _I(INFEASIBLE), jnp.where(b_rounds >= max_iters, _I(MAX_ITERS), _I(-1)))
    b_next = jnp.where(prev >= 0, prev, free(b_assigned))
    # the end of a phase
    last = eps <= 1
    run = status < 0
    bidding = run & (i < P)
    reset = run & ~bidding & ~last     # a new phase: every person free, prices kept
    ended = run & ~bidding             # converged (last) or a new phase
    return (jnp.where(bidding & at_j, bid, price),
            jnp.where(reset, -1, jnp.where(bidding & at_j, i, owner)),
            jnp.where(reset, -1, jnp.where(bidding, b_assigned, assigned)),
            jnp.where(bidding, b_next, jnp.where(reset, free(jnp.full_like(assigned, -1)), i)),
            jnp.where(reset, jnp.maximum(1.0, jnp.floor(eps / theta)), eps),
            jnp.where(reset, top(price), start_max),
            jnp.where(bidding, b_rounds, rounds),
            phases + reset.astype(jnp.int32),
            jnp.where(bidding, b_status, jnp.where(ended & last, _I(CONVERGED), status)))


def _run(row_of, rng, max_iters, *, G: int, m: int, P: int, theta: float, eps0: float):
    """The auctions of ``G`` problems (``rng``, ``max_iters``: ``[G, 1]``) to their ends."""
    ids = lax.broadcasted_iota(jnp.int32, (G, P), 1)
    none = jnp.full((G, P), -1, jnp.int32)
    eps = jnp.maximum(1.0, jnp.floor(rng * eps0))
    zero = jnp.zeros((G, 1), jnp.int32)
    c = (jnp.zeros((G, P), jnp.float32), none, none, zero if m > 0 else zero + P, eps,
         jnp.zeros((G, 1), jnp.float32), zero, zero + 1, zero - 1)
    step = partial(_bid, row_of=row_of, ids=ids, rng=rng, max_iters=max_iters, m=m, P=P, theta=theta)
    return lax.while_loop(lambda c: jnp.min(c[-1]) < 0, step, c)


def _kernel(b_ref, rng_ref, it_ref, price_ref, assigned_ref, stats_ref, *, G, m, P, theta, eps0):
    ids = lax.broadcasted_iota(jnp.int32, (G, P), 1)
    base = lax.broadcasted_iota(jnp.int32, (G, 1), 0) * (P * P)
    rng = rng_ref[...].reshape(G, 1)
    max_iters = it_ref[...].reshape(G, 1)
    row_of = lambda i: _load(b_ref, base + i * P + ids, ids < P, NEG)  # noqa: E731
    price, _, assigned, _, _, _, rounds, phases, status = _run(row_of, rng, max_iters, G=G, m=m, P=P,
                                                               theta=theta, eps0=eps0)
    price_ref[...] = price
    assigned_ref[...] = assigned
    k = lax.broadcasted_iota(jnp.int32, (G, 4), 1)
    stats_ref[...] = jnp.where(k == 0, rounds, jnp.where(k == 1, phases, jnp.where(k == 2, rounds, status)))


def _pad(benefit):
    """``[..., m, m]`` -> ``[..., P * P]`` float32, ``-inf`` in the padding."""
    m = benefit.shape[-1]
    P = padded(m)
    full = jnp.full(benefit.shape[:-2] + (P, P), NEG, jnp.float32)
    return full.at[..., :m, :m].set(benefit.astype(jnp.float32)).reshape(benefit.shape[:-2] + (P * P,)), P


def _call(b, rng, it, *, m: int, P: int, G: int, theta: float, eps0: float, interpret: bool):
    """The kernel over ``B`` padded problems (``b [B, P * P]``, ``rng``/``it`` ``[B]``), ``G`` a
    program (``B`` a multiple of ``G``): ``(price [B, P], assigned [B, P], stats [B, 4])``."""
    B = b.shape[0]
    blk = lambda *shape: pl.BlockSpec((None, *shape), lambda k: (k,) + (0,) * len(shape))  # noqa: E731
    outs = [jax.ShapeDtypeStruct((B // G, G, P), jnp.float32), jax.ShapeDtypeStruct((B // G, G, P), jnp.int32),
            jax.ShapeDtypeStruct((B // G, G, 4), jnp.int32)]
    price, assigned, stats = pl.pallas_call(
        partial(_kernel, G=G, m=m, P=P, theta=float(theta), eps0=float(eps0)),
        grid=(B // G,),
        in_specs=[blk(G * P * P), blk(G), blk(G)],
        out_specs=[blk(G, P), blk(G, P), blk(G, 4)],
        out_shape=outs,
        compiler_params=plgpu.CompilerParams(num_warps=_warps(G * P), num_stages=1),
        interpret=interpret,
    )(b.reshape(B // G, G * P * P), rng.reshape(B // G, G), it.reshape(B // G, G))
    return price.reshape(B, P), assigned.reshape(B, P), stats.reshape(B, 4)


def solve(benefit, rng, max_iters, *, theta: float, eps0: float, group: int = GROUP, interpret: bool = False):
    """The auction of the square problem ``benefit`` (``[m, m]`` float32, scaled as
    :func:`jaxmatch.assignment.auction.scale` does: ``-inf`` where forbidden; ``rng`` the scaled
    range) in one program. Returns ``(price [m], assigned [m], rounds, phases, bids, status)``:
    the objects' prices, each person's object (-1: free when the run stopped), the bids
    (``rounds`` and ``bids``: one bid a round), the phases and the status
    (:class:`jaxmatch.Status`: CONVERGED, MAX_ITERS after ``max_iters`` bids, or INFEASIBLE).

    Under ``jax.vmap`` (a ``custom_vmap`` rule) the batch runs ``group`` problems a program (a
    power of two; the batch padded to a multiple of it with copies of its first problem), each
    problem's answer as alone."""
    m = benefit.shape[-1]
    opts = dict(m=m, theta=float(theta), eps0=float(eps0), interpret=interpret)

    @jax.custom_batching.custom_vmap
    def one(benefit, rng, max_iters):
        b, P = _pad(benefit)
        price, assigned, stats = _call(b[None], jnp.reshape(rng, (1,)).astype(jnp.float32),
                                       jnp.reshape(max_iters, (1,)).astype(jnp.int32), P=P, G=1, **opts)
        return price[0, :m], assigned[0, :m], stats[0]

    @one.def_vmap
    def _(axis_size, in_batched, benefit, rng, max_iters):
        benefit, rng, max_iters = (x if bat else jnp.broadcast_to(x, (axis_size,) + jnp.shape(x))
                                   for x, bat in zip((benefit, rng, max_iters), in_batched))
        G = min(group, 1 << max(axis_size - 1, 0).bit_length())
        B = -(-axis_size // G) * G
        more = lambda x: jnp.concatenate([x, jnp.broadcast_to(x[:1], (B - axis_size,) + x.shape[1:])])  # noqa: E731
        b, P = _pad(more(benefit))
        price, assigned, stats = _call(b, more(rng).astype(jnp.float32), more(max_iters).astype(jnp.int32),
                                       P=P, G=G, **opts)
        return (price[:axis_size, :m], assigned[:axis_size, :m], stats[:axis_size]), (True, True, True)

    price, assigned, stats = one(benefit.astype(jnp.float32), jnp.asarray(rng, jnp.float32),
                                 jnp.asarray(max_iters, jnp.int32))
    return price, assigned, stats[..., 0], stats[..., 1], stats[..., 2], stats[..., 3]


def _reference(benefit, rng, max_iters, *, theta: float, eps0: float):
    """The same run in pure JAX (the kernel's step in a ``lax.while_loop``, rows by dynamic slices)."""
    m = benefit.shape[0]
    b, P = _pad(benefit)
    row_of = lambda i: lax.dynamic_slice(b, (i[0, 0] * P,), (P,))[None]  # noqa: E731
    price, _, assigned, _, _, _, rounds, phases, status = _run(
        row_of, jnp.full((1, 1), rng, jnp.float32), jnp.full((1, 1), max_iters, jnp.int32), G=1, m=m, P=P,
        theta=float(theta), eps0=float(eps0))
    return price[0, :m], assigned[0, :m], rounds[0, 0], phases[0, 0], rounds[0, 0], status[0, 0]
