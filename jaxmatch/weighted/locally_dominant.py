"""Locally-Dominant (LD): half-approximate weighted matching by mutual heaviest neighbours.

Paper I of the thesis in ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``,
Algorithms 1-2 (after Halappanavar et al.; Preis showed that repeatedly
matching locally dominant edges gives the greedy matching).

Every unmatched vertex points at its *candidate*: its first unmatched
neighbour in the edge order of :mod:`jaxmatch.weighted.suitor` (heavier
first, ties by the smaller (min id, max id) pair). An edge whose two ends
point at each other is locally dominant and is matched. Array form of the
queue algorithm: a round recomputes the candidate of every unmatched vertex
whose candidate has been matched (the paper's ``candidate[v] = u`` test on
the neighbours of newly matched vertices), then matches all mutual pairs.
The globally first remaining edge is always mutual, so every round with work
left matches at least one edge, and the loop stops when no unmatched vertex
has an unmatched neighbour; the result equals the greedy matching.

``sorted_adjacency=True`` keeps a pointer into each neighbour list sorted by
rank (the Theta(|V| + |E|) variant the paper mentions): a matched neighbour
is skipped once and never examined again. ``False`` rescans every stale
vertex's whole list each round for its heaviest unmatched neighbour, the
weights' bits as integer keys and the smallest id among equal weights (the
same order at one vertex; no ranking sort: :func:`jaxmatch.weighted.sharded.scan`;
O(|E|) per round, the paper's Algorithm 2).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, MAX_ITERS, take
from jaxmatch.weighted import sharded as _keyed
from jaxmatch.weighted.suitor import INITIAL_BUDGET, edge_order, scan, sorted_adjacency


class LDState(NamedTuple):
    mate: jax.Array       # [V] -1 unmatched
    cand: jax.Array       # [V] candidate, -1 when unknown
    dead: jax.Array       # [V] no unmatched neighbour is left
    ptr: jax.Array        # [V] sorted mode pointer
    budget: jax.Array     # [V] sorted mode window length
    rounds: jax.Array
    proposals: jax.Array  # candidates set
    scanned: jax.Array


def _stale(g, s: LDState):
    ids = jnp.arange(g.vertex_cap, dtype=jnp.int32)
    free = (ids < g.n) & (s.mate < 0) & ~s.dead
    return free & ((s.cand < 0) | (take(s.mate, s.cand, -1) >= 0))


def _match(g, s: LDState, found, cand, dead, **kw) -> LDState:
    ids = jnp.arange(g.vertex_cap, dtype=jnp.int32)
    mutual = (cand >= 0) & (take(cand, cand, -1) == ids)
    return s._replace(mate=jnp.where(mutual, cand, s.mate), cand=cand, dead=dead,
                      proposals=s.proposals + jnp.sum(found, dtype=jnp.int32), **kw)


def dense_step(g, sh, s: LDState) -> LDState:
    stale = _stale(g, s)
    best, arg = _keyed.scan(sh, stale, lambda src, dst, key: take(s.mate, dst, 0) < 0, cap=None)
    found = stale & (best >= 0)
    cand = jnp.where(found, arg, jnp.where(stale, -1, s.cand))
    busy = jnp.any(stale)
    return _match(g, s, found, cand, s.dead | (stale & ~found), rounds=s.rounds + busy,
                  scanned=s.scanned + jnp.where(busy, g.n_entries, 0))


def sorted_step(g, adj, s: LDState, lanes: int) -> LDState:
    V = g.vertex_cap
    stale = _stale(g, s)
    ids = jnp.where(stale, jnp.arange(V, dtype=jnp.int32), V)
    sc = scan(adj, ids, stale, s.ptr, s.budget, lanes, lambda r, v: take(s.mate, v, 0) < 0)
    cand = jnp.where(sc.found, take(adj.nbr, sc.entry, V), jnp.where(stale, -1, s.cand))
    dead = s.dead | (stale & ~sc.found & ~sc.more)
    return _match(g, s, sc.found, cand, dead, ptr=jnp.where(stale, sc.ptr, s.ptr),
                  budget=jnp.where(stale, sc.budget, s.budget), rounds=s.rounds + jnp.any(stale),
                  scanned=s.scanned + sc.scanned)


def locally_dominant_arrays(g, *, sorted_adjacency_: bool, max_iters: int, lanes: int):
    """Run LD; returns (mate [vertex_cap], status, stats dict)."""
    V = g.vertex_cap
    zero = jnp.int32(0)
    s = LDState(mate=jnp.full(V, -1, jnp.int32), cand=jnp.full(V, -1, jnp.int32),
                dead=jnp.zeros(V, bool), ptr=zero, budget=zero, rounds=zero, proposals=zero,
                scanned=zero)
    if sorted_adjacency_:
        adj = sorted_adjacency(g, edge_order(g))
        s = s._replace(ptr=adj.start, budget=jnp.full(V, INITIAL_BUDGET, jnp.int32))
        step = lambda s: sorted_step(g, adj, s, lanes)
    else:
        sh = _keyed.local(g.adj.src, g.adj.indices, g.adj.weights, V=V, R=V, axis=None, rows=g.adj.indptr)
        step = lambda s: dense_step(g, sh, s)
    busy = lambda s: jnp.any(_stale(g, s))
    s = lax.while_loop(lambda s: busy(s) & (s.rounds < max_iters), step, s)
    status = jnp.where(busy(s), MAX_ITERS, CONVERGED).astype(jnp.int32)
    return s.mate, status, dict(rounds=s.rounds, proposals=s.proposals, scanned=s.scanned)
