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
auction's docstring, stops the run as INFEASIBLE; ``max_iters`` steps as
MAX_ITERS.

Several bidders a step (``lanes``, default :func:`lanes_for`: 4 at 1,024
objects, 8 up to 512, 1 from 4,096). A bid's time is a chain of dependent
steps (the row's load, then four reductions); most of a phase's bids are made
while many persons are free, so a step takes up to ``lanes`` of them at once
(a ``[lanes, P]`` tile: the rows load together and the reductions run side by
side), as a Jacobi round of that many bidders: every bid is computed from the
prices at the step's start, an object bid for twice goes to the higher bid
(a tie to the lower lane), and the losers bid again in the next step, after
the persons the step displaced, and then the free persons of smallest ids.
This is Bertsekas's Jacobi auction on a window of the free persons, so the
sequential argument holds as it is: a winner's bid leaves it within ``eps``
of its best value at the step's prices, and prices only rise, so
eps-complementary slackness holds for every assigned person, and the price
bound's chain argument uses nothing else. Random dense problems of 1,000
persons take 3.1x fewer steps with 4 lanes and 4.3x with 8, for about as
many bids (``experiments/RESULTS.md``, session 54). With ``lanes=1`` the
kernel makes the same bids in the same order as the array auction with
``Config(tail=N)`` (every phase one bid at a time), so it returns the same
prices and assignment, bit for bit; with any ``lanes`` it returns those of
its pure-JAX twin :func:`sequential` (the tests check both in interpret mode).

No atomics and no shared state between programs: nothing here is
concurrent, so the correctness argument is the sequential auction's
(eps-complementary slackness and the price bound, :mod:`jaxmatch.assignment.auction`).

Lowering: Pallas's Triton lowering (``plgpu.CompilerParams``), as the other
kernels of this package; a program has one warp per 128 values of its step's
tile (one warp up to 128, where every reduction of a bid is a warp shuffle; at most eight).
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
LANE_ELEMENTS = 4096   # a step's rows of benefits hold at most this many values (lanes_for)
MAX_LANES = 8


def _I(x):
    """An int32 constant: the Triton lowering typed weak-typed Python ints in a ``where`` of a loop
    body as i1 (JAX 0.11.2: 6 and -1 as ``true``)."""
    return jnp.asarray(x, jnp.int32)


def padded(m: int) -> int:
    """The program's vector length for ``m`` objects: a power of two, at least 32 (one warp)."""
    return max(32, 1 << max(m - 1, 0).bit_length())


def _warps(P: int) -> int:
    return max(1, min(8, P // 128))


def lanes_for(P: int) -> int:
    """Persons bidding at once in a program of ``P`` objects (a power of two): ``LANE_ELEMENTS // P``
    rows a step, between 1 and ``MAX_LANES``."""
    return max(1, min(MAX_LANES, LANE_ELEMENTS // P))


def _first(m: int, K: int, lane):
    """The persons of a phase's first step, when every person is free: 0 .. K - 1 (P: none past m)."""
    return jnp.where(lane < m, lane, _I(-1))


def _bid(c, row_of, ids, lane, rng, max_iters, *, m: int, P: int, theta: float):
    """One step: the bids of the carried bidders (``take``, -1 on an empty lane), or the end of a phase
    when nobody is free. (No bool among the loop's values: the Triton lowering of a while loop carries
    them as i32 and yields i1.)"""
    price, owner, assigned, take, nxt, eps, start_max, rounds, bids, phases, status = c
    on = take >= 0
    # every lane's bid (a lane without a bidder computes one from row 0 and drops it)
    i = jnp.maximum(take, 0)
    val = row_of(i) - price[None, :]
    best = jnp.max(val, axis=1)
    stuck = on & (best == NEG)
    d = ids[None, :] - i[:, None]      # (k - i) mod m without the modulo (on the bid's critical path)
    rot = jnp.where((val == best[:, None]) & (val > NEG), jnp.where(d < 0, d + m, d), m)
    r = jnp.min(rot, axis=1)
    ok = on & ~stuck
    j = jnp.where(ok & (r < m), jnp.where(r + i >= m, r + i - m, r + i), _I(P))
    at_j = ids[None, :] == j[:, None]
    second = jnp.max(jnp.where(at_j, NEG, val), axis=1)
    second = jnp.where(second > NEG, second, best - (rng + eps))
    bid = jnp.max(jnp.where(at_j, price[None, :], NEG), axis=1) + (best - second) + eps
    # two lanes bidding for one object: the higher bid wins it, a tie the lower lane
    beaten = ((j[None, :] == j[:, None]) & (lane[None, :] != lane[:, None]) & ok[None, :]
              & ((bid[None, :] > bid[:, None]) | ((bid[None, :] == bid[:, None]) & (lane[None, :] < lane[:, None]))))
    win = ok & (jnp.max(beaten.astype(jnp.int32), axis=1) == 0)
    got = at_j & win[:, None]                              # [lanes, P]: at most one lane an object
    hit = jnp.max(got.astype(jnp.int32), axis=0) > 0
    prev = jnp.where(win, jnp.max(jnp.where(at_j, owner[None, :], _I(-1)), axis=1), _I(-1))   # displaced
    gone = jnp.max((ids[None, :] == prev[:, None]).astype(jnp.int32), axis=0) > 0
    mine = (ids[None, :] == i[:, None]) & win[:, None]
    b_assigned = jnp.where(gone, _I(-1), assigned)
    b_assigned = jnp.where(jnp.max(mine.astype(jnp.int32), axis=0) > 0, jnp.max(jnp.where(mine, j[:, None], _I(-1)), axis=0),
                           b_assigned)
    n_bids = jnp.sum(on.astype(jnp.int32))
    b_bids = bids + n_bids
    runaway = jnp.max((ok & (bid > start_max + 2 * (m + 1) * (rng + eps))).astype(jnp.int32)) > 0
    fail = runaway | (jnp.max(stuck.astype(jnp.int32)) > 0)
    b_status = jnp.where(fail, _I(INFEASIBLE), jnp.where(rounds + 1 >= max_iters, _I(MAX_ITERS), _I(-1)))
    # the next bidders: the displaced persons, then the lanes' losers, then the free persons of smallest
    # ids from ``nxt`` (every person below it has bid in this phase: it holds an object or is carried)
    shown = prev >= 0
    lost = on & ~win
    before = lane[None, :] < lane[:, None]                 # [r, s]: s before r
    at_shown = jnp.sum((before & shown[None, :]).astype(jnp.int32), axis=1)
    n_shown = jnp.sum(shown.astype(jnp.int32))
    at_lost = n_shown + jnp.sum((before & lost[None, :]).astype(jnp.int32), axis=1)
    carried = n_shown + jnp.sum(lost.astype(jnp.int32))
    pick_shown = (at_shown[None, :] == lane[:, None]) & shown[None, :]
    pick_lost = (at_lost[None, :] == lane[:, None]) & lost[None, :]
    fresh = nxt + lane - carried
    b_take = jnp.maximum(jnp.max(jnp.where(pick_shown, prev[None, :], _I(-1)), axis=1),
                         jnp.max(jnp.where(pick_lost, take[None, :], _I(-1)), axis=1))
    b_take = jnp.where(lane < carried, b_take, jnp.where(fresh < m, fresh, _I(-1)))
    b_nxt = jnp.minimum(jnp.maximum(nxt + lane.shape[0] - carried, nxt), jnp.maximum(nxt, m))
    # the end of a phase
    last = eps <= 1
    bidding = n_bids > 0
    reset = ~bidding & ~last           # a new phase: every person free, prices kept
    K = lane.shape[0]
    return (jnp.where(bidding & hit, jnp.max(jnp.where(got, bid[:, None], NEG), axis=0), price),
            jnp.where(reset, _I(-1), jnp.where(bidding & hit, jnp.max(jnp.where(got, i[:, None], _I(-1)), axis=0), owner)),
            jnp.where(reset, _I(-1), jnp.where(bidding, b_assigned, assigned)),
            jnp.where(bidding, b_take, jnp.where(last, _I(-1), _first(m, K, lane))),
            jnp.where(bidding, b_nxt, _I(min(K, m))),
            jnp.where(bidding | last, eps, jnp.maximum(1.0, jnp.floor(eps / theta))),
            jnp.where(bidding | last, start_max, jnp.max(price)),
            rounds + bidding.astype(jnp.int32),
            jnp.where(bidding, b_bids, bids),
            phases + reset.astype(jnp.int32),
            jnp.where(bidding, b_status, jnp.where(last, _I(CONVERGED), _I(-1))))


def _run(row_of, rng, max_iters, *, m: int, P: int, K: int, theta: float, eps0: float):
    ids = lax.broadcasted_iota(jnp.int32, (P,), 0)
    lane = lax.broadcasted_iota(jnp.int32, (K,), 0)
    none = jnp.full((P,), -1, jnp.int32)
    eps = jnp.maximum(1.0, jnp.floor(rng * eps0))
    zero = jnp.zeros((), jnp.int32)
    c = (jnp.zeros((P,), jnp.float32), none, none, _first(m, K, lane), zero + min(K, m), eps,
         jnp.zeros((), jnp.float32), zero, zero, zero + 1, zero - 1)
    step = partial(_bid, row_of=row_of, ids=ids, lane=lane, rng=rng, max_iters=max_iters, m=m, P=P, theta=theta)
    return lax.while_loop(lambda c: c[-1] < 0, step, c)


def _kernel(b_ref, rng_ref, it_ref, price_ref, assigned_ref, stats_ref, *, m, P, K, theta, eps0):
    ids = lax.broadcasted_iota(jnp.int32, (P,), 0)
    rng = jnp.max(rng_ref[...])
    max_iters = jnp.max(it_ref[...])
    row_of = lambda i: _load(b_ref, i[:, None] * P + ids[None, :], (ids < P)[None, :], NEG)  # noqa: E731
    price, _, assigned, _, _, _, _, rounds, bids, phases, status = _run(row_of, rng, max_iters, m=m, P=P, K=K,
                                                                        theta=theta, eps0=eps0)
    price_ref[...] = price
    assigned_ref[...] = assigned
    k = lax.broadcasted_iota(jnp.int32, (4,), 0)
    stats_ref[...] = jnp.where(k == 0, rounds, jnp.where(k == 1, phases, jnp.where(k == 2, bids, status)))


def _pad(benefit):
    m = benefit.shape[0]
    P = padded(m)
    return jnp.full((P, P), NEG, jnp.float32).at[:m, :m].set(benefit.astype(jnp.float32)).reshape(P * P), P


def solve(benefit, rng, max_iters, *, theta: float, eps0: float, lanes: int | None = None,
          interpret: bool = False):
    """The auction of the square problem ``benefit`` (``[m, m]`` float32, scaled as
    :func:`jaxmatch.assignment.auction.scale` does: ``-inf`` where forbidden; ``rng`` the scaled
    range) in one program, ``lanes`` persons bidding at once (default :func:`lanes_for`). Returns
    ``(price [m], assigned [m], rounds, phases, bids, status)``: the objects' prices, each person's
    object (-1: free when the run stopped), the steps (``rounds``) and the bids, the phases and the
    status (:class:`jaxmatch.Status`: CONVERGED, MAX_ITERS after ``max_iters`` rounds, or
    INFEASIBLE)."""
    m = benefit.shape[0]
    b, P = _pad(benefit)
    K = lanes_for(P) if lanes is None else int(lanes)
    rng = jnp.reshape(rng, (1,)).astype(jnp.float32)
    it = jnp.reshape(max_iters, (1,)).astype(jnp.int32)
    whole = lambda x: pl.BlockSpec(x.shape, lambda: (0,) * len(x.shape))  # noqa: E731
    outs = [jax.ShapeDtypeStruct((P,), jnp.float32), jax.ShapeDtypeStruct((P,), jnp.int32),
            jax.ShapeDtypeStruct((4,), jnp.int32)]
    price, assigned, stats = pl.pallas_call(
        partial(_kernel, m=m, P=P, K=K, theta=float(theta), eps0=float(eps0)),
        in_specs=[whole(b), whole(rng), whole(it)],
        out_specs=[whole(o) for o in outs],
        out_shape=outs,
        compiler_params=plgpu.CompilerParams(num_warps=_warps(K * P), num_stages=1),
        interpret=interpret,
    )(b, rng, it)
    return price[:m], assigned[:m], stats[0], stats[1], stats[2], stats[3]


def sequential(benefit, rng, max_iters, *, theta: float, eps0: float, lanes: int | None = None):
    """The same run as :func:`solve` as one XLA ``lax.while_loop`` (the kernel's step, rows by a
    gather): the kernel's reference, and the dense auction off the GPU, where a loop step costs little."""
    m = benefit.shape[0]
    b, P = _pad(benefit)
    K = lanes_for(P) if lanes is None else int(lanes)
    rows = b.reshape(P, P)
    price, _, assigned, _, _, _, _, rounds, bids, phases, status = _run(
        lambda i: rows[i], jnp.asarray(rng, jnp.float32), jnp.asarray(max_iters, jnp.int32), m=m, P=P, K=K,
        theta=float(theta), eps0=float(eps0))
    return price[:m], assigned[:m], rounds, phases, bids, status


_reference = sequential   # the pure-JAX twin every kernel module has
