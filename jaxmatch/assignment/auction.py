"""The epsilon-scaling auction for the square assignment problem, in bulk-synchronous (Jacobi) rounds.

Paper: D. P. Bertsekas, "The auction algorithm: a distributed relaxation
method for the assignment problem", Annals of Operations Research 14, 1988
(and "Auction algorithms for network flow problems: a tutorial
introduction", Computational Optimization and Applications 1, 1992):
persons bid for objects; object ``j`` has a price ``p_j``; person ``i``
values object ``j`` at ``A_ij - p_j`` (benefit minus price).

One round (the Jacobi auction, every unassigned person at once, as the
GPU auctions do): each unassigned person ``i`` finds its best object ``j1``
(largest value ``v1``; ties spread, see :func:`_dense_offers`) and the second best
value ``v2`` over its other objects, and bids ``p_j1 + (v1 - v2) + eps`` for
``j1``. Each object that received bids goes to the highest bidder (ties to
the smallest person id) at that price; its previous owner becomes
unassigned. The bids are a ``segment_max`` (the CUDA auctions' atomicMax),
the winner a ``segment_min`` of the ids that bid the maximum.

Each phase ends *one bid at a time* (Bertsekas's original Gauss-Seidel
auction) once at most ``Config.tail`` persons bid: the phase's last rounds
advance chains of displacements one link per round with one or two bidders
each, and a single bid reads one row instead of the whole problem (or, in
the dense layout, its smallest class of bidders' rows; :func:`_tail`). The
sparse layout instead ends its last phase by shortest augmenting paths
(``Config.finish``, :mod:`jaxmatch.assignment.paths`), and its earlier phases
once few persons are left (``Config.early``).

*eps-complementary slackness* (eps-CS) holds throughout: every assigned
person's object is within ``eps`` of its best value. So when every person is
assigned, the assignment's benefit is within ``N * eps`` of the optimum;
with integer benefits and ``eps < 1 / N`` it is optimal. *Epsilon scaling*:
the auction runs in phases with ``eps`` falling by ``Config.theta`` from
about the benefits' range down to 1, keeping the prices and dropping the
assignment between phases, which bounds the price war of each phase. The
caller scales the benefits so that ``eps = 1`` is fine enough (see
:func:`scale`).

A person with one allowed object bids ``v2 = v1 - (range + eps)`` (any
value below every feasible alternative keeps eps-CS). Infeasibility (no
perfect matching on the allowed entries) shows as a person with nothing to
bid for, or as prices that rise past any feasible problem's. In a feasible
problem with perfect matching ``M*``, the bid that set ``p_j`` came from a
person ``i``; eps-CS of ``i`` against ``M*(i)``, of ``M*(i)``'s owner
against its ``M*`` object, and so on, is a chain of distinct persons (it
starts at a person who owned nothing) that ends within N steps at an object
not yet bid for in the phase, at its starting price; each step adds at most
``range + eps`` (a person of one object adds ``range + 2 eps`` once). So every
price stays below the phase's largest starting price plus ``(N + 1) (range +
2 eps)``, and a price ``2 (N + 1) (range + eps)`` above it stops the run as
INFEASIBLE.

A dense float32 problem runs the whole auction one bid at a time instead (``Config.kernel``,
:mod:`jaxmatch.kernels.auction_dense`; the answer of ``tail=N`` bit for bit): on the GPU up to
:data:`KERNEL_MAX` persons in one Pallas program, with no loop step per bid; elsewhere as one XLA
while loop, whose steps cost little there.

Layouts: ``width`` set means a dense square layout (``width = N``), the
entries of person ``i`` at ``[i * N, (i + 1) * N)``, object ``k`` at
``i * N + k`` (row reductions of the bidders' rows); ``width=None`` means any
order, reduced with ``segment_*`` over ``person``.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INFEASIBLE, MAX_ITERS, compact, offsets, smallest_fit, switch, take
from jaxmatch.assignment import paths
from jaxmatch.kernels import auction_dense


class Config(NamedTuple):
    """Static knobs of the auction (part of the jit cache key).

    Attributes:
        theta: eps falls by this factor between phases (Bertsekas suggests
            4-10).
        eps0: the first phase's eps as a fraction of the scaled benefits'
            range.
        min_rows: a round reads the rows of the bidders only, in row counts ``N, N/4, ...`` down
            to this one (see :func:`_offers`); so does a search of :mod:`~jaxmatch.assignment.paths`
            for its front. None (the default): 256, or ``N`` (no ladder) where :func:`resolve` says.
        tail: once this many persons or fewer bid, the phase ends one bid at a time (see
            :func:`_tail`); 0 turns that off (the sparse layout needs its row pointers for it).
            None (the default): the backend's choice (:func:`resolve`).
        tail_width: the entries of the bidder's row that one step of the tail reads at a time in
            the sparse layout (the dense layout reads the whole row).
        kernel: a float32 dense problem's whole auction one bid at a time
            (:mod:`jaxmatch.kernels.auction_dense`: every phase as with ``tail=N``, the same bids):
            None (the default) in one Pallas program a problem on the GPU up to :data:`KERNEL_MAX`
            persons (the Jacobi rounds above it), as one XLA while loop elsewhere; True: in the
            Pallas program always (its interpreter off the GPU); False: never (the Jacobi rounds
            and ``tail``).
        finish: in the sparse layout, once this many persons or fewer are unassigned, the phase
            ends by shortest augmenting paths, one person each (:mod:`jaxmatch.assignment.paths`),
            instead of ``tail``. None (the default): 16 in the sparse layout, 0 (off) in the dense
            one.
        early: where ``finish`` is on, a phase before the last ends once at most this fraction of
            the persons to assign (``real``) is unassigned (only the last phase must assign
            everyone).
    """
    theta: float = 5.0
    eps0: float = 0.2
    min_rows: int | None = None
    tail: int | None = None
    tail_width: int = 16
    kernel: bool | None = None
    finish: int | None = None
    early: float = 0.001


DEFAULT = Config()
# the dense layout starts finer (fewer rounds there, more in the sparse one: RESULTS, session 17)
DENSE = Config(theta=6.0, eps0=0.005)


# the largest dense problem the kernel takes by default (why: experiments/RESULTS.md, sessions 42 and 43)
KERNEL_MAX = 8192
# on the GPU, a sparse problem with fewer entries reads them all every round, cheaper there than a round on the
# row ladder (experiments/RESULTS.md, session 45)
LADDER_ENTRIES = 1 << 20


def one_bid(cfg: Config, n: int, dtype) -> str | None:
    """How a dense problem of ``n`` persons in ``dtype`` runs its whole auction one bid at a time
    (``cfg.kernel``): ``"kernel"`` (the Pallas program), ``"loop"`` (its twin, one XLA while loop:
    off the GPU by default) or None (the Jacobi rounds of this module)."""
    if cfg.kernel is False or jnp.dtype(dtype) != jnp.float32:
        return None
    if cfg.kernel:
        return "kernel"
    if jax.default_backend() != "gpu":
        return "loop"
    return "kernel" if n <= KERNEL_MAX else None


def dense_default(n: int, dtype) -> Config:
    """The dense layout's default knobs for ``n`` persons: :data:`DENSE`, and where the auction runs one
    bid at a time (:func:`one_bid`) ``theta`` 10 and ``eps0`` at most ``0.5 / n`` (RESULTS, session 42)."""
    if not one_bid(DENSE, n, dtype):
        return DENSE
    return DENSE._replace(theta=10.0, eps0=min(DENSE.eps0, 0.5 / max(n, 1)))


def resolve(cfg: Config, dense: bool, n: int, entries: int = 0) -> Config:
    """``cfg`` with ``finish=None`` replaced by the layout's choice, ``min_rows=None`` and
    ``tail=None`` by the backend's for ``n`` persons and ``entries`` entries (static, so a problem
    under ``jax.vmap`` runs as it does alone). ``min_rows``: 256, but ``n`` (no ladder: every round
    reads every entry) in a sparse problem of fewer than :data:`LADDER_ENTRIES` entries on the GPU.
    ``tail``: on the CPU 16 (a round costs a pass over the problem); on the GPU, where a single bid
    costs about as much as a round and under ``vmap`` a step runs both (a batched ``lax.cond``), none
    up to 1,024 persons, else 1 (dense) or 4 (sparse). Measurements: experiments/RESULTS.md, sessions
    24, 25, 44 and 45."""
    gpu = jax.default_backend() == "gpu"
    finish = (0 if dense else 16) if cfg.finish is None else cfg.finish
    rows = (max(n, 1) if gpu and not dense and entries < LADDER_ENTRIES else 256) if cfg.min_rows is None \
        else cfg.min_rows
    tail = cfg.tail if cfg.tail is not None else (0 if n <= 1024 else 1 if dense else 4) if gpu else 16
    return cfg._replace(finish=finish, min_rows=rows, tail=tail)


class Problem(NamedTuple):
    """A square assignment problem over entries (person, object, benefit); N persons, N objects.

    Attributes:
        person: int32 ``[E]``, the person of each entry (N in padding), in
            person order when ``indptr`` is given; None in the dense layout,
            where it is ``e // N``.
        obj: int32 ``[E]``, the object of each entry; None in the dense
            layout, where it is ``e % N``.
        benefit: float ``[E]``, the scaled benefit; ``-inf`` for an entry that
            may not be assigned (see :func:`scale`).
        real: bool ``[N]``, the persons to assign (the others, and the
            objects nobody can take, are padding).
        indptr: int32 ``[N + 1]``, person ``i``'s entries at ``[indptr[i],
            indptr[i + 1])`` (see :func:`by_person`): a round then reads the
            bidders' entries only; None: every round reads every entry.
    """
    person: jax.Array
    obj: jax.Array
    benefit: jax.Array
    real: jax.Array
    indptr: jax.Array | None = None


def by_person(person, obj, benefit, real) -> Problem:
    """The sparse problem with its entries sorted by person (a stable sort, once) and their row
    pointers, so that :func:`_offers` reads only the bidders' rows."""
    n = real.shape[0]
    order = jnp.argsort(person, stable=True)
    counts = jnp.zeros(n, jnp.int32).at[person].add(1, mode="drop")
    return Problem(person[order], obj[order], benefit[order], real, offsets(counts))


class State(NamedTuple):
    price: jax.Array      # [N] object prices
    owner: jax.Array      # [N] object -> person (-1)
    assigned: jax.Array   # [N] person -> object (-1)
    eps: jax.Array        # this phase's eps
    start_max: jax.Array  # the largest price when the phase began
    early: jax.Array      # how many persons a phase before the last may leave unassigned (:func:`_early`)
    rounds: jax.Array
    phases: jax.Array
    bids: jax.Array
    status: jax.Array     # -1 running, else a Status
    done: jax.Array


def scale(benefit, allowed, n_persons, dtype):
    """(scaled benefits, scale, scaled range, shift): benefits minus ``shift`` (their largest) times
    ``scale``, ``-inf`` where not ``allowed``.

    Integer benefits whose range times ``2 (N + 1)`` fits the float's exact
    integers with room for the prices (``2^(mantissa - 2)``) get ``scale = 2 (N
    + 1)``: then ``eps = 1`` is below ``1 / (2 N)`` in the input's units, the
    answer is optimal, and the prices prove it with a gap below 1/2 (room for
    rounding). Others get ``scale = 2^(mantissa - 2) / range``: the answer is
    then within ``N / scale`` (``N`` times the range over ``2^(mantissa - 2)``)
    of optimal."""
    limit = float(2 ** (jnp.finfo(dtype).nmant - 2))
    b = benefit.astype(dtype)
    hi = jnp.max(jnp.where(allowed, b, -jnp.inf))
    lo = jnp.min(jnp.where(allowed, b, jnp.inf))
    hi, lo = jnp.where(jnp.isfinite(hi), hi, 0), jnp.where(jnp.isfinite(lo), lo, 0)
    rng = hi - lo
    integral = jnp.all(jnp.where(allowed, b == jnp.round(b), True))
    n1 = 2 * (n_persons + 1).astype(dtype)
    exact = integral & (rng * n1 <= limit)
    s = jnp.where(exact, n1, jnp.where(rng > 0, limit / jnp.where(rng > 0, rng, 1), 1))
    return jnp.where(allowed, (b - hi) * s, -jnp.inf), s, rng * s, hi


def _top_two(v, key):
    """Per row of ``v``: the best value, the smallest ``key`` among the columns at it, the second best
    value (the best over the other columns), in ONE pass: a variadic ``lax.reduce`` whose operands are
    (value, key, second) and whose merge keeps the top two (a tie's loser becomes the second)."""
    neg = jnp.array(-jnp.inf, v.dtype)
    return lax.reduce((v, key, jnp.full_like(v, -jnp.inf)), (neg, jnp.int32(jnp.iinfo(jnp.int32).max), neg),
                      _merge, (1,))


def _merge(a, b):
    """The top two of two (best value, its key, second value) triples: ties to the smaller key, a
    tie's loser becomes the second."""
    va, ka, sa = a
    vb, kb, sb = b
    a_wins = (va > vb) | ((va == vb) & (ka < kb))
    return (jnp.where(a_wins, va, vb), jnp.where(a_wins, ka, kb),
            jnp.where(a_wins, jnp.maximum(sa, vb), jnp.maximum(sb, va)))


def _dense_offers(b2, price, who, n: int):
    """best, object, second best of the persons ``who`` (n = padding) on the dense ``[n, n]`` benefits.
    Ties go to the first object at or after the person's own id, cyclically (the smallest ``(obj -
    who) mod n``): persons of equal values spread their bids instead of all bidding for the smallest
    id (a price war of one winner per round)."""
    v = b2[jnp.minimum(who, n - 1)] - price[None, :]
    rot = (jnp.arange(n, dtype=jnp.int32)[None, :] - who[:, None]) % n
    best, at, second = _top_two(v, rot)
    return best, ((at + who) % n).astype(jnp.int32), second


def _offers(st: State, p: Problem, bidding, width, cfg: Config):
    """Per person ``[N]``: the best value, its object, the second best value (only bidders' count).

    Dense: only the rows of the bidders are read, on the smallest of the row counts ``N, N/4,
    N/16 ... >= cfg.min_rows`` that holds them (one compiled copy each; a ``lax.switch`` picks one
    per round), so late rounds with few bidders read few rows. Sparse with ``p.indptr``: likewise,
    the bidders' entries laid end to end over ``E, E/4, ...`` lanes (with ``N, N/4, ...`` bidder
    slots); without it, or when the bidders need them all, one pass over the entries. The
    reductions are maxima and minima, so every size gives the same offers bit for bit."""
    n = p.real.shape[0]
    if width is None:
        def full(bidding, price):
            return _sparse_offers(p.benefit - take(price, p.obj, 0), p.obj, p.person, n, n)

        def part(k, rows, bidding, price):
            who, slot, entry, valid = rows
            obj = jnp.where(valid, p.obj[entry], n)
            val = jnp.where(valid, p.benefit[entry] - take(price, obj, 0), -jnp.inf)
            return _to_persons(who, n, *_sparse_offers(val, obj, jnp.where(valid, slot, k), k, n, person=who))
        return paths.on_rows(p, cfg.min_rows, full, part)(bidding, st.price)
    sizes = paths.row_sizes(n, cfg.min_rows)
    b2 = p.benefit.reshape(n, width)

    def rows(k):
        def run(price, bidding):
            who = compact(bidding, jnp.arange(n, dtype=jnp.int32), n, k)[0]
            return _to_persons(who, n, *_dense_offers(b2, price, who, n))
        return run

    if len(sizes) == 1:
        who = jnp.arange(n, dtype=jnp.int32)
        return _dense_offers(b2, st.price, who, n)
    return switch(smallest_fit(sizes, jnp.sum(bidding, dtype=jnp.int32)), [rows(k) for k in sizes],
                  st.price, bidding)


def _to_persons(who, n: int, best, obj1, second):
    """The offers of the persons ``who`` (n = padding) as ``[n]`` arrays: -inf values and object n
    for the others."""
    put = lambda x, fill: jnp.full(n, fill, x.dtype).at[who].set(x, mode="drop")  # noqa: E731
    return put(best, -jnp.inf), put(obj1, n), put(second, -jnp.inf)


def _sparse_offers(val, obj, seg, k: int, n: int, person=None):
    """best, object, second best per segment ``seg`` (k segments; ``person[s]`` the person of
    segment s, the identity when None) of the values ``val`` of entries on objects ``obj`` (n
    objects). Ties as :func:`_dense_offers`: the first object at or after the person's id,
    cyclically."""
    who = jnp.arange(k, dtype=jnp.int32) if person is None else person
    best = jax.ops.segment_max(val, seg, k)
    at_best = (val == take(best, seg, jnp.inf)) & (val > -jnp.inf)
    me = take(who, seg, 0)
    rot = jax.ops.segment_min(jnp.where(at_best, (obj - me) % n, n), seg, k)
    obj1 = jnp.where(rot < n, (rot + who) % n, n)
    others = jnp.where(obj == take(obj1, seg, -1), -jnp.inf, val)
    return best, obj1, jax.ops.segment_max(others, seg, k)


def init(p: Problem, rng, cfg: Config = DEFAULT, width=None) -> State:
    n = p.real.shape[0]
    dt = p.benefit.dtype
    eps0 = jnp.maximum(1, jnp.floor(rng * cfg.eps0))
    none = jnp.full(n, -1, jnp.int32)
    return State(price=jnp.zeros(n, dt), owner=none, assigned=none, eps=eps0.astype(dt),
                 start_max=jnp.zeros((), dt), early=_early(cfg, width, p.real), rounds=jnp.int32(0),
                 phases=jnp.int32(1), bids=jnp.int32(0), status=jnp.int32(-1), done=jnp.bool_(False))


def _row_offer(p: Problem, price, i, chunk: int, width=None):
    """best value, its object, second best value of person ``i`` over its row; ties as
    :func:`_sparse_offers` (the first object at or after ``i``, cyclically). Dense layout: the row
    ``[i * width, (i + 1) * width)`` in one reduction; sparse: the row of ``p.indptr``, ``chunk``
    entries at a time, their top two merged as in :func:`_top_two`, so a second entry of the best
    object could only raise the second best: a bid is never above the round's."""
    n = p.real.shape[0]
    if width is not None:
        val = lax.dynamic_slice(p.benefit, (i * width,), (width,)) - price
        rot = (jnp.arange(n, dtype=jnp.int32) - i) % n
        best, key, second = (x[0] for x in _top_two(val[None, :], rot[None, :]))
    else:
        lo, hi = p.indptr[i], p.indptr[i + 1]
        lanes = jnp.arange(chunk, dtype=jnp.int32)
        neg = jnp.array(-jnp.inf, p.benefit.dtype)

        def body(c):
            start, *top = c
            e = start + lanes
            ok = e < hi
            o = jnp.where(ok, take(p.obj, e, n), n)
            val = jnp.where(ok, take(p.benefit, e, -jnp.inf) - take(price, o, 0), -jnp.inf)
            chunk_top = (x[0] for x in _top_two(val[None, :], jnp.where(ok, (o - i) % n, n)[None, :]))
            return start + chunk, *_merge(tuple(top), tuple(chunk_top))

        _, best, key, second = lax.while_loop(lambda c: c[0] < hi, body, (lo, neg, jnp.int32(n), neg))
    return best, jnp.where(best > -jnp.inf, (key + i) % n, n).astype(jnp.int32), second


def _tail(st: State, p: Problem, rng, max_iters, cfg: Config, on, width=None) -> State:
    """The rest of the phase one bid at a time (Bertsekas's Gauss-Seidel auction), where ``on``.

    In a phase's last rounds few persons bid (RESULTS, session 24), and each displaced owner bids
    in the next. Here the bidder is a scalar: it bids exactly as in a round (same offer and price
    rise, so eps-CS and the price bound hold), the owner it displaces bids next, and after a bid on
    a free object the free person of smallest id. A bid reads one row. Every bid counts as a round
    (``max_iters``, the runaway and stuck tests as in :func:`step`)."""
    n = p.real.shape[0]
    ids = jnp.arange(n, dtype=jnp.int32)

    def first_free(assigned):
        return jnp.min(jnp.where(p.real & (assigned < 0), ids, n))

    def body(c):
        st, i = c
        best, j, second = _row_offer(p, st.price, i, cfg.tail_width, width)
        stuck = best == -jnp.inf
        second = jnp.where(second > -jnp.inf, second, best - (rng + st.eps))
        bid = take(st.price, j, 0) + (best - second) + st.eps
        j = jnp.where(stuck, n, j)
        prev = take(st.owner, j, -1)
        assigned = st.assigned.at[jnp.where(prev >= 0, prev, n)].set(-1, mode="drop")
        assigned = assigned.at[jnp.where(stuck, n, i)].set(j, mode="drop")
        price = st.price.at[j].set(bid, mode="drop")
        rounds = st.rounds + 1
        runaway = ~stuck & (bid > st.start_max + 2 * (n + 1) * (rng + st.eps))
        status = jnp.where(stuck | runaway, INFEASIBLE, jnp.where(rounds >= max_iters, MAX_ITERS, -1))
        st = st._replace(price=price, owner=st.owner.at[j].set(i, mode="drop"), assigned=assigned,
                         rounds=rounds, bids=st.bids + 1, status=status.astype(jnp.int32), done=status >= 0)
        # the displaced owner bids next; else the free person of smallest id (a pass over N, skipped by
        # the cond when there is an owner: most bids displace one)
        return st, lax.cond(prev >= 0, lambda: prev, lambda: first_free(assigned))

    i0 = jnp.where(on, first_free(st.assigned), n)
    st, _ = lax.while_loop(lambda c: (c[1] < n) & ~c[0].done, body, (st, i0))
    return st


def step(st: State, p: Problem, rng, max_iters, width, cfg: Config) -> State:
    """One bidding round, or the end of a phase (next eps, or done). Sparse with ``cfg.finish``: the
    phase's last persons by shortest augmenting paths, and a phase before the last ends early (see
    :class:`Config`). Otherwise the phase's last bids one at a time once at most ``cfg.tail``
    persons bid (dense layout, or sparse with its row pointers)."""
    count = jnp.sum(p.real & (st.assigned < 0), dtype=jnp.int32)
    bid = lambda s: _round(s, p, rng, max_iters, width, cfg)  # noqa: E731
    if width is None and cfg.finish > 0:     # (where a phase ends early, it ends before any path)
        on = (count > 0) & (count <= cfg.finish) & ((st.eps <= 1) | (count > st.early))
        return lax.cond(on, lambda s: paths.augment(s, p, max_iters, on, cfg.min_rows), bid, st)
    if (width is not None or p.indptr is not None) and cfg.tail > 0:
        on = (count > 0) & (count <= cfg.tail)
        return lax.cond(on, lambda s: _tail(s, p, rng, max_iters, cfg, on, width), bid, st)
    return bid(st)


def _early(cfg: Config, width, real):
    """How many persons a phase before the last may leave unassigned (see :class:`Config`), computed once
    a solve (:func:`init`)."""
    if width is not None or cfg.finish == 0:
        return jnp.int32(0)
    # (float32: 1 + 2^-20 keeps a product such as 0.002 x 3,000 from rounding below its integer)
    return (cfg.early * (1 + 2.0 ** -20) * jnp.sum(real, dtype=jnp.int32)).astype(jnp.int32)


def _round(st: State, p: Problem, rng, max_iters, width, cfg: Config) -> State:
    """One bidding round of every unassigned person (Jacobi), or the end of a phase."""
    n = p.real.shape[0]
    ids = jnp.arange(n, dtype=jnp.int32)
    bidding = p.real & (st.assigned < 0)
    best, obj1, second = _offers(st, p, bidding, width, cfg)
    stuck = jnp.any(bidding & (best == -jnp.inf))
    second = jnp.where(second > -jnp.inf, second, best - (rng + st.eps))
    bid = take(st.price, obj1, 0) + (best - second) + st.eps
    target = jnp.where(bidding & (best > -jnp.inf), obj1, n)
    top = jax.ops.segment_max(jnp.where(target < n, bid, -jnp.inf), target, n)
    win = jax.ops.segment_min(jnp.where(bid == take(top, target, jnp.inf), ids, n), target, n)
    got = win < n
    assigned = st.assigned.at[jnp.where(got & (st.owner >= 0), st.owner, n)].set(-1, mode="drop")
    assigned = assigned.at[jnp.where(got, win, n)].set(ids, mode="drop")
    owner = jnp.where(got, win, st.owner)
    price = jnp.where(got, top, st.price)

    last = st.eps <= 1
    free = jnp.sum(bidding, dtype=jnp.int32)
    phase_over = (free == 0) | (~last & (free <= st.early))
    runaway = jnp.max(price) > st.start_max + 2 * (n + 1) * (rng + st.eps)
    rounds = st.rounds + (~phase_over).astype(jnp.int32)
    status = jnp.where(phase_over & last, CONVERGED,
                       jnp.where(stuck | runaway, INFEASIBLE,
                                 jnp.where(rounds >= max_iters, MAX_ITERS, -1))).astype(jnp.int32)
    nxt = phase_over & ~last              # a new phase: smaller eps, prices kept, nobody assigned
    eps = jnp.where(nxt, jnp.maximum(1, jnp.floor(st.eps / cfg.theta)), st.eps)
    none = jnp.full(n, -1, jnp.int32)
    return State(price=jnp.where(phase_over, st.price, price),
                 owner=jnp.where(nxt, none, jnp.where(phase_over, st.owner, owner)),
                 assigned=jnp.where(nxt, none, jnp.where(phase_over, st.assigned, assigned)),
                 eps=eps, start_max=jnp.where(nxt, jnp.max(st.price), st.start_max), early=st.early, rounds=rounds,
                 phases=st.phases + nxt.astype(jnp.int32),
                 bids=st.bids + jnp.where(phase_over, 0, jnp.sum(target < n, dtype=jnp.int32)),
                 status=status, done=status >= 0)


def solve(p: Problem, rng, max_iters, *, width=None, cfg: Config = DEFAULT) -> State:
    """Run the auction to the end (CONVERGED, INFEASIBLE or MAX_ITERS after ``max_iters`` rounds)."""
    n = p.real.shape[0]
    how = one_bid(cfg, n, p.benefit.dtype) if width is not None else None    # dense: every person real
    if how:
        run = (partial(auction_dense.solve, interpret=jax.default_backend() != "gpu") if how == "kernel"
               else auction_dense.sequential)
        price, assigned, rounds, phases, bids, status = run(p.benefit.reshape(n, n), rng, max_iters,
                                                            theta=cfg.theta, eps0=cfg.eps0)
        ids = jnp.arange(n, dtype=jnp.int32)
        owner = jnp.full(n, -1, jnp.int32).at[jnp.where(assigned >= 0, assigned, n)].set(ids, mode="drop")
        zero = jnp.zeros((), price.dtype)
        return State(price, owner, assigned, zero, zero, jnp.int32(0), rounds, phases, bids, status, jnp.bool_(True))
    cfg = resolve(cfg, dense=width is not None, n=n, entries=p.benefit.shape[0])
    st = init(p, rng, cfg, width)
    return lax.while_loop(lambda s: ~s.done, lambda s: step(s, p, rng, max_iters, width, cfg), st)


def profits(p: Problem, price, width=None):
    """Each person's best value ``max_j (A_ij - p_j)`` (-inf for a person with no allowed entry): with
    the prices, dual variables that meet every entry's constraint exactly."""
    if width is not None:
        return jnp.max(p.benefit.reshape(-1, width) - price[None, :], axis=1)
    return jax.ops.segment_max(p.benefit - take(price, p.obj, 0), p.person, p.real.shape[0])
