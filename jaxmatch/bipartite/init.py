"""Initial matchings: cheap greedy and Karp-Sipser, as rounds of handshakes.

A *handshake* round over a set of candidate edges: every row picks its best
candidate column (lowest priority, then lowest id), every column accepts the
best row among those that picked it. The pairs accepted form a matching, and
a round with candidates always matches at least one pair (the smallest
candidate column is picked by all its rows), so the rounds make progress.

* cheap: all edges between unmatched vertices are candidates, priority 0 —
  a parallel greedy maximal matching (the "cheap matching" of the papers,
  where the sequential version scans columns in order).
* Karp-Sipser: as cheap, but edges at a vertex of residual degree 1 get
  priority 0 and the others priority 1, so the degree-1 rule is applied to
  all degree-1 vertices at once and greedy picks fill in elsewhere in the
  same round.

Both stop when no candidate edge is left (the matching is maximal) or after
``max_rounds`` rounds; the exact solvers complete the matching either way.
Each round costs O(|E|).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, mask_ids, segment_argmin, take

METHODS = ("cheap", "karp_sipser")
DEFAULT_ROUNDS = 64


class InitState(NamedTuple):
    row_mate: jax.Array
    col_mate: jax.Array
    rounds: jax.Array
    changed: jax.Array


def live_edges(g, row_mate, col_mate):
    row, col = g.by_col.indices, g.by_col.src
    return (take(row_mate, row, 0) == -1) & (take(col_mate, col, 0) == -1)


def handshake(g, row_mate, col_mate, cand, prio):
    """One round: rows pick, columns accept; returns the grown mates and the pair count."""
    row, col = g.by_col.indices, g.by_col.src
    rc, cc = g.row_cap, g.col_cap
    _, choice = segment_argmin(jnp.where(cand, prio, INT_MAX), col, mask_ids(row, cand, rc), rc)
    chose = cand & (take(choice, row, -1) == col)
    best, accept = segment_argmin(jnp.where(chose, prio, INT_MAX), row, mask_ids(col, chose, cc), cc)
    new = best < INT_MAX
    col_mate = jnp.where(new, accept, col_mate)
    row_mate = row_mate.at[jnp.where(new, accept, rc)].set(jnp.arange(cc, dtype=jnp.int32), mode="drop")
    return row_mate, col_mate, jnp.sum(new, dtype=jnp.int32)


def _round(g, method, s: InitState) -> InitState:
    live = live_edges(g, s.row_mate, s.col_mate)
    if method == "cheap":
        prio = jnp.zeros_like(g.by_col.src)
    else:
        row, col = g.by_col.indices, g.by_col.src
        deg_c = jax.ops.segment_sum(live.astype(jnp.int32), mask_ids(col, live, g.col_cap), g.col_cap)
        deg_r = jax.ops.segment_sum(live.astype(jnp.int32), mask_ids(row, live, g.row_cap), g.row_cap)
        one = (take(deg_c, col, 0) == 1) | (take(deg_r, row, 0) == 1)
        prio = jnp.where(one, 0, 1).astype(jnp.int32)
    row_mate, col_mate, added = handshake(g, s.row_mate, s.col_mate, live, prio)
    return InitState(row_mate, col_mate, s.rounds + 1, added > 0)


def empty_matching(g):
    return (jnp.full(g.row_cap, -1, jnp.int32), jnp.full(g.col_cap, -1, jnp.int32))


def initial_matching_arrays(g, method: str, max_rounds: int = DEFAULT_ROUNDS):
    """(row_mate, col_mate, rounds) of the cheap or Karp-Sipser matching."""
    row_mate, col_mate = empty_matching(g)
    s = InitState(row_mate, col_mate, jnp.int32(0), jnp.bool_(True))
    s = lax.while_loop(lambda s: s.changed & (s.rounds < max_rounds),
                       lambda s: _round(g, method, s), s)
    return s.row_mate, s.col_mate, s.rounds
