"""Aggregation (Algorithm 3 of Paper III): the graph of one level's communities.

:func:`coarse_ids` renumbers the non-empty communities by a prefix sum;
:func:`aggregate` maps every entry (i, j, w) to (C'(i), C'(j), w), groups the
entries by the new pair (:func:`pair_groups`), sums each group and compacts
the groups to the front of arrays of the input's entry capacity (padding: the
sentinel id). An entry that becomes a diagonal one contributes w/2 (an edge
inside a community is stored twice) and an old diagonal entry w, so the coarse
self-loop holds the community's internal weight, each edge once, and coarse
degrees equal the sums of the members' degrees. Cost: one sort of the level's
entries and O(entries) gathers, one segment sum and three scatters.
:func:`pair_groups` sorts by the backend's fastest route (every route gives
the same groups); the padding entries are dropped before the segment sum
rather than added to one address (on a GPU, updates to one address serialise).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, prefix, take
from jaxmatch.community.buckets import Level, key_value_sorts


def _heads(a, b):
    """True where the pair (a[p], b[p]) differs from the previous one (a run starts)."""
    return jnp.concatenate([jnp.ones(1, bool), (a[1:] != a[:-1]) | (b[1:] != b[:-1])])


class Groups(NamedTuple):
    """Entries grouped by a pair of ids."""
    grp: jax.Array     # [E] per entry (input order): sorted position of its pair's first copy
    a: jax.Array       # [E] the pairs in sorted order
    b: jax.Array
    head: jax.Array    # [E] a sorted position holds the first copy of its pair


def _key_dtype(n_cap: int):
    """Integer type holding the packed pair a * (n_cap + 1) + b, or None."""
    if (n_cap + 1) ** 2 - 1 <= INT_MAX:
        return jnp.int32
    if jax.config.jax_enable_x64:
        return jnp.int64
    return None


def pair_groups(a, b, n_cap: int, sort_method: str = "auto") -> Groups:
    """Group entries by the pair (a, b), ids in [0, n_cap] (n_cap = the sentinel).

    When the pair packs into one integer key (n_cap <= 46339, or any n_cap in
    64-bit mode) it is sorted as one key; otherwise by a stable sort on b
    then a stable sort on a. XLA's fastest sorts differ by backend: on CPU a
    key-only sort (plus a binary search for each entry's group) or one
    two-key sort; on a GPU single-key key-value sorts, which become radix
    sorts (``sort_method`` = "auto" picks by ``jax.default_backend()``).
    Every path gives the same groups. Used once per level (aggregation).
    """
    e_cap = a.shape[0]
    pos = jnp.arange(e_cap, dtype=jnp.int32)
    kdt = _key_dtype(n_cap)
    kv = key_value_sorts(sort_method)
    if kdt is not None:
        key = a.astype(kdt) * (n_cap + 1) + b.astype(kdt)
        if kv:
            srt, perm = lax.sort((key, pos), num_keys=1)
        else:
            srt = lax.sort(key)
        sa, sb = (srt // (n_cap + 1)).astype(jnp.int32), (srt % (n_cap + 1)).astype(jnp.int32)
        if not kv:
            grp = jnp.searchsorted(srt, key).astype(jnp.int32)
            return Groups(grp, sa, sb, _heads(sa, sb))
    elif kv:
        _, p1 = lax.sort((b, pos), num_keys=1, is_stable=True)
        sa, perm = lax.sort((a[p1], p1), num_keys=1, is_stable=True)
        sb = b[perm]
    else:
        sa, sb, perm = lax.sort((a, b, pos), num_keys=2)
    head = _heads(sa, sb)
    first = prefix(jnp.where(head, pos, 0), "max")
    return Groups(jnp.zeros(e_cap, jnp.int32).at[perm].set(first), sa, sb, head)


# --------------------------------------------------------------------------
def coarse_ids(comm, real):
    """The non-empty communities renumbered by a prefix sum: (vertex -> coarse vertex, count)."""
    n_cap = comm.shape[0]
    used = jax.ops.segment_sum(real.astype(jnp.int32), comm, n_cap) > 0
    new_id = prefix(used, dtype=jnp.int32) - 1
    return jnp.where(real, take(new_id, comm, n_cap), n_cap), jnp.sum(used, dtype=jnp.int32)


def aggregate(gr: Level, to_coarse, n_coarse, size: int, sort_method: str = "auto") -> Level:
    """Algorithm 3 on the first ``size`` entries: the graph of the communities (vertex i
    becomes ``to_coarse[i]``, see :func:`coarse_ids`), padded to e_cap."""
    n_cap, e_cap = to_coarse.shape[0], gr.src.shape[0]
    src, dst = gr.src[:size], gr.dst[:size]
    s = take(to_coarse, src, n_cap)
    d = take(to_coarse, dst, n_cap)
    w = jnp.where((src != dst) & (s == d), gr.w[:size] / 2, gr.w[:size])
    g = pair_groups(s, d, n_cap, sort_method)
    # at each pair's first sorted position; the padding entries (pair (n_cap, n_cap)) are dropped
    # rather than added (0) to one address, millions of GPU atomics on it (RESULTS.md, issue 27)
    total = jax.ops.segment_sum(w, jnp.where(s < n_cap, g.grp, size), size)
    keep = g.head & (g.a < n_cap)
    slot = jnp.where(keep, prefix(g.head, dtype=jnp.int32) - 1, e_cap)
    src = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.a, mode="drop")
    dst = jnp.full(e_cap, n_cap, jnp.int32).at[slot].set(g.b, mode="drop")
    w = jnp.zeros(e_cap, gr.w.dtype).at[slot].set(total, mode="drop")
    return Level(src, dst, w, n_coarse)
