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
kernels of this package; a program has one warp per 128 objects (one warp up to
128, where every reduction of a bid is a warp shuffle; at most eight).
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from jaxmatch._ops import CONVERGED, INFEASIBLE, MAX_ITERS
from jaxmatch.kernels._pallas import _load

NEG = float("-inf")


def _I(x):
    """An int32 constant: the Triton lowering typed weak-typed Python ints in a ``where`` of a loop
    body as i1 (JAX 0.11.2: 6 and -1 as ``true``)."""
    return jnp.asarray(x, jnp.int32)


def padded(m: int) -> int:
    """The program's vector length for ``m`` objects: a power of two, at least 32 (one warp)."""
    return max(32, 1 << max(m - 1, 0).bit_length())


def _warps(P: int) -> int:
    return max(1, min(8, P // 128))


def _first(m: int, P: int) -> int:
    """The first bidder of a phase, when every person is free: person 0, or P (none) for m = 0."""
    return 0 if m > 0 else P


def _bid(c, row_of, ids, rng, max_iters, *, m: int, P: int, theta: float):
    """One step: a bid of the carried bidder, or the end of a phase when nobody is free. (No bool
    among the loop's values: the Triton lowering of a while loop carries them as i32 and yields i1.)"""
    price, owner, assigned, i, nxt, eps, start_max, rounds, phases, status = c
    # the bid of i (computed from a clamped row when i == P, then discarded)
    val = row_of(jnp.minimum(i, P - 1)) - price
    best = jnp.max(val)
    stuck = best == NEG
    d = ids - i                        # (k - i) mod m without the modulo (on the bid's critical path)
    rot = jnp.where((val == best) & (val > NEG), jnp.where(d < 0, d + m, d), m)
    r = jnp.min(rot)
    j = jnp.where(r < m, jnp.where(r + i >= m, r + i - m, r + i), P)
    at_j = ids == j
    second = jnp.max(jnp.where(at_j, NEG, val))
    second = jnp.where(second > NEG, second, best - (rng + eps))
    bid = jnp.max(jnp.where(at_j, price, NEG)) + (best - second) + eps
    prev = jnp.max(jnp.where(at_j, owner, -1))
    b_assigned = jnp.where(ids == prev, -1, assigned)
    b_assigned = jnp.where((ids == i) & ~stuck, j, b_assigned)
    b_rounds = rounds + 1
    runaway = ~stuck & (bid > start_max + 2 * (m + 1) * (rng + eps))
    b_status = jnp.where(stuck | runaway, _I(INFEASIBLE), jnp.where(b_rounds >= max_iters, _I(MAX_ITERS), _I(-1)))
    # the free person of smallest id, when the bid displaced nobody: ``nxt``, as every person below it
    # has bid in this phase and holds an object (a displaced one bids at once)
    b_next = jnp.where(prev >= 0, prev, jnp.where(nxt < m, nxt, _I(P)))
    # the end of a phase
    last = eps <= 1
    bidding = i < P
    reset = ~bidding & ~last           # a new phase: every person free, prices kept
    return (jnp.where(bidding & at_j, bid, price),
            jnp.where(reset, -1, jnp.where(bidding & at_j, i, owner)),
            jnp.where(reset, -1, jnp.where(bidding, b_assigned, assigned)),
            jnp.where(bidding, b_next, jnp.where(last, _I(P), _I(_first(m, P)))),
            jnp.where(bidding, nxt + (prev < 0).astype(jnp.int32), _I(1)),
            jnp.where(bidding | last, eps, jnp.maximum(1.0, jnp.floor(eps / theta))),
            jnp.where(bidding | last, start_max, jnp.max(price)),
            jnp.where(bidding, b_rounds, rounds),
            phases + reset.astype(jnp.int32),
            jnp.where(bidding, b_status, jnp.where(last, _I(CONVERGED), _I(-1))))


def _run(row_of, rng, max_iters, *, m: int, P: int, theta: float, eps0: float):
    ids = lax.broadcasted_iota(jnp.int32, (P,), 0)
    none = jnp.full((P,), -1, jnp.int32)
    eps = jnp.maximum(1.0, jnp.floor(rng * eps0))
    zero = jnp.zeros((), jnp.int32)
    c = (jnp.zeros((P,), jnp.float32), none, none, zero + _first(m, P), zero + 1, eps, jnp.zeros((), jnp.float32),
         zero, zero + 1, zero - 1)
    step = partial(_bid, row_of=row_of, ids=ids, rng=rng, max_iters=max_iters, m=m, P=P, theta=theta)
    return lax.while_loop(lambda c: c[-1] < 0, step, c)


def _kernel(b_ref, rng_ref, it_ref, price_ref, assigned_ref, stats_ref, *, m, P, theta, eps0):
    ids = lax.broadcasted_iota(jnp.int32, (P,), 0)
    rng = jnp.max(rng_ref[...])
    max_iters = jnp.max(it_ref[...])
    row_of = lambda i: _load(b_ref, i * P + ids, ids < P, NEG)  # noqa: E731
    price, _, assigned, _, _, _, _, rounds, phases, status = _run(row_of, rng, max_iters, m=m, P=P, theta=theta,
                                                                  eps0=eps0)
    price_ref[...] = price
    assigned_ref[...] = assigned
    k = lax.broadcasted_iota(jnp.int32, (4,), 0)
    stats_ref[...] = jnp.where(k == 0, rounds, jnp.where(k == 1, phases, jnp.where(k == 2, rounds, status)))


def _pad(benefit):
    m = benefit.shape[0]
    P = padded(m)
    return jnp.full((P, P), NEG, jnp.float32).at[:m, :m].set(benefit.astype(jnp.float32)).reshape(P * P), P


def solve(benefit, rng, max_iters, *, theta: float, eps0: float, interpret: bool = False):
    """The auction of the square problem ``benefit`` (``[m, m]`` float32, scaled as
    :func:`jaxmatch.assignment.auction.scale` does: ``-inf`` where forbidden; ``rng`` the scaled
    range) in one program. Returns ``(price [m], assigned [m], rounds, phases, bids, status)``:
    the objects' prices, each person's object (-1: free when the run stopped), the bids
    (``rounds`` and ``bids``: one bid a round), the phases and the status
    (:class:`jaxmatch.Status`: CONVERGED, MAX_ITERS after ``max_iters`` bids, or INFEASIBLE)."""
    m = benefit.shape[0]
    b, P = _pad(benefit)
    rng = jnp.reshape(rng, (1,)).astype(jnp.float32)
    it = jnp.reshape(max_iters, (1,)).astype(jnp.int32)
    whole = lambda x: pl.BlockSpec(x.shape, lambda: (0,) * len(x.shape))  # noqa: E731
    outs = [jax.ShapeDtypeStruct((P,), jnp.float32), jax.ShapeDtypeStruct((P,), jnp.int32),
            jax.ShapeDtypeStruct((4,), jnp.int32)]
    price, assigned, stats = pl.pallas_call(
        partial(_kernel, m=m, P=P, theta=float(theta), eps0=float(eps0)),
        in_specs=[whole(b), whole(rng), whole(it)],
        out_specs=[whole(o) for o in outs],
        out_shape=outs,
        compiler_params=plgpu.CompilerParams(num_warps=_warps(P), num_stages=1),
        interpret=interpret,
    )(b, rng, it)
    return price[:m], assigned[:m], stats[0], stats[1], stats[2], stats[3]


def sequential(benefit, rng, max_iters, *, theta: float, eps0: float):
    """The same run as :func:`solve` as one XLA ``lax.while_loop`` (the kernel's step, rows by dynamic
    slices): the kernel's reference, and the dense auction off the GPU, where a loop step costs little."""
    m = benefit.shape[0]
    b, P = _pad(benefit)
    row_of = lambda i: lax.dynamic_slice(b, (i * P,), (P,))  # noqa: E731
    price, _, assigned, _, _, _, _, rounds, phases, status = _run(
        row_of, jnp.asarray(rng, jnp.float32), jnp.asarray(max_iters, jnp.int32), m=m, P=P, theta=float(theta),
        eps0=float(eps0))
    return price[:m], assigned[:m], rounds, phases, rounds, status


_reference = sequential   # the pure-JAX twin every kernel module has
