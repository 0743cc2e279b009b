"""The end of an auction phase by shortest augmenting paths (the Hungarian step, with eps-CS kept).

In a phase's last rounds few persons are unassigned, and each one's chain of
displacements walks the problem one object a round until it happens on a free
object (in the sparse layout, tens of thousands of rounds of one or two bidders:
experiments/RESULTS.md, session 44). This module instead finds, for the free
persons together, a shortest augmenting path over the reduced costs of the
current prices, assigns along it and raises the prices of the objects it came
near, as the Hungarian method and the JV algorithm do: each step assigns one
more person, in as many Bellman-Ford rounds as the path has links.

The reduced costs. With ``pi_i = a_{i,o(i)} - p_{o(i)}`` for an assigned person
``i`` (its object ``o(i)``) and ``pi_s = max_k (a_sk - p_k)`` for a free person,
``r_ik = pi_i + p_k - a_ik`` is at least ``-eps`` on every entry (eps-CS) and 0
on the assignment. The search uses the lengths ``l_ik = max(r_ik, 0)`` from
person to object and 0 from an object to its owner, with every free person a
source at distance 0; ``d`` is the distance and ``D`` the least distance of a
free object ``j*``. The step assigns along the path to ``j*`` and raises the
price of every object ``k`` with ``d_k < D`` by ``D - d_k``. Then every entry of
a person the search reached keeps ``r >= -eps`` (an arc ``ik``: ``d_k <= d_i +
l_ik``, so the new ``r_ik`` is at least ``r_ik - l_ik >= -eps``), the path's
entries get ``r`` in ``[-eps, 0]`` (a person's new object is within eps of its
best), and the persons it did not reach keep their prices and objects: eps-CS
holds, and with it every bound of :mod:`jaxmatch.assignment.auction`. Prices only
rise, as in bidding. No free object within reach means no perfect matching on
the allowed entries (the assignment is a maximum matching then): INFEASIBLE.

The lengths are nonnegative, so the synchronous Bellman-Ford rounds end within
N rounds, and an object's predecessor set only on a strict improvement gives a
forest (a cycle of predecessors would have to be shorter than itself): the walk
back from ``j*`` reaches a free person.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INFEASIBLE, MAX_ITERS, compact, expand, offsets, smallest_fit, switch, take


def row_sizes(n: int, min_rows: int) -> list[int]:
    """The ladder's row counts ``n, n/4, n/16, ... >= min_rows`` (largest first)."""
    sizes = [n]
    while sizes[-1] // 4 >= min_rows:
        sizes.append(sizes[-1] // 4)
    return sizes


def on_rows(p, min_rows: int, full, part):
    """``run(mask, *ops)``: ``part(k, rows, mask, *ops)`` on the rows of the persons ``mask`` only, laid
    end to end over ``E, E/4, ...`` lanes with ``N, N/4, ... >= min_rows`` person slots (one compiled
    copy each, the smallest that holds them picked per call by a ``lax.switch``), where ``rows =
    (who, slot, entry, valid)``: the slots' persons (N in padding) and each lane's slot, entry (0 where
    not valid) and validity; ``full(mask, *ops)`` (one pass over every entry) when they need more, or
    without row pointers. The auction's offers and this module's searches both read their rows so."""
    n, e = p.real.shape[0], p.benefit.shape[0]
    sizes = row_sizes(n, min_rows)
    if p.indptr is None or len(sizes) == 1:
        return full
    lo, deg = p.indptr[:-1], p.indptr[1:] - p.indptr[:-1]
    lanes = [max(1, e * k // n) for k in sizes]

    def rung(k, width):
        def run(mask, *ops):
            who = compact(mask, jnp.arange(n, dtype=jnp.int32), n, k)[0]
            slot, entry, valid = expand(offsets(take(deg, who, 0)), take(lo, who, 0), jnp.int32(0), width)
            return part(k, (who, slot, jnp.where(valid, entry, 0), valid), mask, *ops)
        return run

    def run(mask, *ops):
        arcs = jnp.sum(jnp.where(mask, deg, 0), dtype=jnp.int32)
        pick = jnp.minimum(smallest_fit(sizes, jnp.sum(mask, dtype=jnp.int32)), smallest_fit(lanes, arcs))
        return switch(pick, [full] + [rung(k, w) for k, w in zip(sizes[1:], lanes[1:])], mask, *ops)
    return run


def _relax(p, length, min_rows: int):
    """``relax(front, dp) -> (best, at)``: per object, the least ``dp[i] + length`` over the entries of
    the persons ``front`` and the first entry at it (``inf`` and E where none). With row pointers
    only the front's rows are read (:func:`on_rows`); the minima are the same on every size."""
    n, e = p.real.shape[0], p.benefit.shape[0]
    entries = jnp.arange(e, dtype=jnp.int32)

    def argmin(cand, obj, entry):
        best = jax.ops.segment_min(cand, obj, n)
        return best, jax.ops.segment_min(jnp.where(cand == take(best, obj, -jnp.inf), entry, e), obj, n)

    def full(front, dp):
        return argmin(jnp.where(take(front, p.person, False), take(dp, p.person, jnp.inf) + length, jnp.inf),
                      p.obj, entries)

    def part(k, rows, front, dp):
        who, slot, entry, valid = rows
        cand = jnp.where(valid, take(dp, take(who, slot, n), jnp.inf) + length[entry], jnp.inf)
        return argmin(cand, jnp.where(valid, p.obj[entry], n), entry)
    return on_rows(p, min_rows, full, part)


def augment(st, p, max_iters, on, min_rows: int = 256):
    """One shortest augmenting path from the free persons of ``st`` (an auction ``State``) on the
    sparse problem ``p``: the state with one more person assigned and the prices raised, INFEASIBLE
    when no free object is within reach; the state as it was where not ``on`` (under ``vmap``, whose
    ``lax.cond`` runs both branches, the search then stops at once). A round of the search counts as
    a round of ``max_iters``."""
    n = p.real.shape[0]
    e_count = p.benefit.shape[0]
    allowed = (p.benefit > -jnp.inf) & (p.person < n)
    price, own = st.price, st.assigned
    value = jnp.where(allowed, p.benefit - take(price, p.obj, 0), -jnp.inf)
    mine = allowed & (p.obj == take(own, p.person, -1))
    free = p.real & (own < 0)
    pi = jnp.where(free, jax.ops.segment_max(value, p.person, n),
                   jax.ops.segment_max(jnp.where(mine, value, -jnp.inf), p.person, n))
    length = jnp.where(allowed, jnp.maximum(take(pi, p.person, 0) - value, 0), jnp.inf)
    relax = _relax(p, length, min_rows)
    inf = jnp.array(jnp.inf, price.dtype)

    def person_dist(d_obj):
        return jnp.where(free, 0, jnp.where(own >= 0, take(d_obj, own, inf), inf)).astype(price.dtype)

    def search(c):
        d_obj, pred, front, k = c
        best, at = relax(front, person_dist(d_obj))
        better = best < d_obj
        d_obj, pred = jnp.where(better, best, d_obj), jnp.where(better, at, pred)
        # only a person whose distance fell, and is below the nearest free object's, can shorten a path
        far = jnp.min(jnp.where(st.owner < 0, d_obj, inf))
        front = (own >= 0) & take(better, own, False) & (take(d_obj, own, inf) < far)
        return d_obj, pred, front, k + 1

    d_obj, pred, _, k = lax.while_loop(lambda c: jnp.any(c[2]) & (c[3] < n), search,
                                       (jnp.full(n, inf), jnp.full(n, e_count, jnp.int32), free & on, jnp.int32(0)))
    target = jnp.where(st.owner < 0, d_obj, inf)
    far = jnp.min(target)
    found = (far < inf) & on
    j_star = jnp.argmin(target).astype(jnp.int32)

    def walk(c):        # back along the predecessors to a free person: at most N links
        j, own_, owner, links = c
        i = take(p.person, take(pred, j, e_count), n)
        old = take(own_, i, -1)
        return old, own_.at[i].set(j, mode="drop"), owner.at[j].set(i, mode="drop"), links + 1

    j0 = jnp.where(found, j_star, -1)
    _, own, owner, _ = lax.while_loop(lambda c: (c[0] >= 0) & (c[3] < n), walk, (j0, own, st.owner, jnp.int32(0)))
    price = jnp.where(found & (d_obj < far), price + (far - d_obj), price)
    rounds = st.rounds + k
    status = jnp.where(on & ~found, INFEASIBLE, jnp.where(rounds >= max_iters, MAX_ITERS, -1)).astype(jnp.int32)
    status = jnp.where(on, status, st.status)
    return st._replace(price=price, owner=owner, assigned=own, rounds=rounds, bids=st.bids + found.astype(jnp.int32),
                       status=status, done=status >= 0)
