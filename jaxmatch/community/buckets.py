"""One level's graph (:class:`Level`) and its entries grouped by degree bucket (:class:`Buckets`).

Every level of the Louvain solver stores its graph in arrays of the input's
vertex and entry capacity, padded with the sentinel id (the vertex capacity):
:class:`Level` holds the entries (source, target, weight) sorted by (source,
target) and the true vertex count. The degree buckets of the paper
(Section 4.1 of Paper III: vertices with 1-4, 5-8, 9-16, 17-32, 33-84, 85-319
and >= 320 stored entries), or on a level whose vertices of >= 320 entries
hold at least 1 / ``HUB_SHARE`` of its entries seven classes by a hash of
the vertex id (:func:`vertex_buckets`,
``Config.buckets``), do not change during a level, so
:func:`group_by_bucket` sorts the non-loop entries once per level by the
bucket of their source, with one stable sort: inside a bucket they stay sorted
by (source, target), and bucket b's entries are the contiguous range
``start[b] .. start[b] + count[b]``. It also records, per entry, the row of the
target inside the bucket when the target may move in the same step
(``d_rank``, used by the bucket step's neighbour lookups), and per bucket the
longest row (``width``), which picks the bucket step's grouping method.
Per-bucket counts use run lengths and one masked reduction per bucket rather
than a scatter into a few addresses (on a GPU, updates to one address
serialise). Cost per level: one sort of the level's entries and O(entries + n)
gathers and reductions.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, prefix, take
from jaxmatch.community.config import DEFAULT, Config
from jaxmatch.community.modularity import degrees
from jaxmatch.community.size_classes import by_class

# Degree buckets of the paper (Section 4.1): bucket b holds the vertices whose
# number of stored entries d satisfies BUCKETS[b] < d <= BUCKETS[b + 1].
BUCKETS = (0, 4, 8, 16, 32, 84, 319, int(INT_MAX))
N_BUCKETS = len(BUCKETS) - 1

#: ``Config.buckets="auto"`` takes the hash classes on a level whose hubs (vertices of more than
#: ``BUCKETS[-2]`` stored entries) hold at least 1 / HUB_SHARE of its entries: RMAT and power-law
#: graphs' hubs hold 23-47% and the bundled facebook's 2%, where the hash classes were measured
#: better; one hub among millions of low-degree vertices (a mesh's junction) keeps the degree
#: buckets (until session 46 any one vertex past 319 entries switched the whole level; RESULTS)
HUB_SHARE = 256


class Level(NamedTuple):
    """The graph of one level, in the input's capacities (sentinel = vertex_cap)."""
    src: jax.Array     # [E] entry sources, sorted by (src, dst)
    dst: jax.Array     # [E]
    w: jax.Array       # [E] weights, 0 in padding
    n: jax.Array       # vertices at this level


class Buckets(NamedTuple):
    """A level's non-loop entries grouped by the degree bucket of their source."""
    s: jax.Array       # [E] sources: bucket 0's entries, then bucket 1's ...; n_cap after the last
    d: jax.Array       # [E] targets (n_cap in padding)
    w: jax.Array       # [E] weights (0 in padding)
    d_rank: jax.Array  # [E] row of d inside the bucket when d is in s's bucket, else -1
    start: jax.Array   # [N_BUCKETS] first position of each bucket
    count: jax.Array   # [N_BUCKETS] entries of each bucket
    width: jax.Array   # [N_BUCKETS] most entries of one vertex (row) in each bucket
    of: jax.Array      # [N] bucket of each vertex (-1: no stored entry, or padding)
    k: jax.Array       # [N] weighted degrees (a loop counts twice)
    loops: jax.Array   # sum of the diagonal entries' contributions to sum_i e_{i -> C(i)}
    movable: jax.Array  # vertices with a non-loop entry (the ones that can move)
    hashed: jax.Array  # bool: the buckets are hash classes (vertex_buckets), not degree buckets


def _pad(a, e_cap, fill):
    return jnp.pad(a, (0, e_cap - a.shape[0]), constant_values=fill)


def key_value_sorts(sort_method: str = "auto") -> bool:
    """Whether to sort with key-value sorts (radix sorts on a GPU) rather than key-only ones
    (``Config.sort_method``; "auto": key-value on a GPU only)."""
    if sort_method == "auto":
        return jax.default_backend() not in ("cpu", "tpu")
    return sort_method == "kv"


def stable_sort_with_positions(key, key_max: int, kv: bool | None = None):
    """(sorted key, positions in stable order) for int32 keys in [0, key_max].

    Packed into one int32 key-only sort (key * len + position) when it fits:
    on CPU a key-only sort is faster than a key-value one, and on a GPU it
    moves half the bytes. Otherwise, with ``kv`` (default :func:`key_value_sorts`),
    a stable key-value sort (a radix sort of pairs on a GPU); without, a least
    significant digit radix sort of key-only sorts, each of a uint32 packing a digit
    of the key above the position in the previous pass's order: XLA's CPU sorts 2^18
    int32 keys in 10 ms and key-value pairs in 58 ms, so two such passes cost a third
    (experiments/RESULTS.md, session 53).
    """
    size = key.shape[0]
    pos = jnp.arange(size, dtype=jnp.int32)
    if (key_max + 1) * size - 1 <= INT_MAX:
        packed = lax.sort(key * size + pos)
        return packed // size, packed % size
    if key_value_sorts() if kv is None else kv:
        return lax.sort((key, pos), num_keys=1, is_stable=True)
    bits = max(size - 1, 1).bit_length()        # a position's bits; a digit takes the rest of 32
    digit = 32 - bits
    perm = pos
    for shift in range(0, key_max.bit_length(), digit):   # stable passes, lowest digit first
        d = ((key[perm] >> shift) & ((1 << digit) - 1)).astype(jnp.uint32)
        packed = lax.sort((d << bits) | pos.astype(jnp.uint32))
        perm = perm[(packed & ((1 << bits) - 1)).astype(jnp.int32)]
    return key[perm], perm


def vertex_buckets(deg, ids=None, rule: str = "auto", totals=None):
    """Bucket of each vertex (-1 when it has no stored entry).

    ``rule="degree"``: by its number of stored entries ``deg``, the paper's
    buckets. ``"hash"``: by bits 16-31 of the vertex id ``ids`` (default
    ``arange``) times Knuth's multiplicative constant 2654435761 (mod 2^32),
    modulo ``N_BUCKETS``, so that hubs and low-degree vertices move in every
    step. ``"auto"``: ``"hash"`` when the level's vertices of more than
    ``BUCKETS[-2]`` (319) stored entries hold at least 1 / ``HUB_SHARE`` of its
    entries (``totals``: :func:`hub_entries` of the level, default of ``deg``;
    a sharded graph passes its mesh's sums), else ``"degree"``.
    """
    upper = jnp.asarray(BUCKETS[1:-1], deg.dtype)
    by_degree = jnp.sum(deg[:, None] > upper[None, :], axis=1, dtype=jnp.int32)
    ids = jnp.arange(deg.shape[0]) if ids is None else ids
    h = (ids.astype(jnp.uint32) * jnp.uint32(2654435761)) >> jnp.uint32(16)
    by_hash = (h % jnp.uint32(N_BUCKETS)).astype(jnp.int32)
    b = jnp.where(hash_rule(deg, rule, totals), by_hash, by_degree)
    return jnp.where(deg > 0, b, -1)


def hub_entries(deg):
    """(the stored entries of the vertices with more than ``BUCKETS[-2]`` of them, all stored
    entries), as float32 sums (no int32 overflow past 2^31 entries on a mesh): what
    :func:`hash_rule` compares."""
    deg = deg.astype(jnp.float32)
    return jnp.sum(jnp.where(deg > BUCKETS[-2], deg, 0)), jnp.sum(deg)


def hash_rule(deg, rule: str = "auto", totals=None):
    """Whether :func:`vertex_buckets` takes the hash classes (a bool array): always for
    ``rule="hash"``, never for ``"degree"``, and for ``"auto"`` when the hubs' entries are at
    least 1 / ``HUB_SHARE`` of all (``totals``, default :func:`hub_entries` of ``deg``)."""
    if rule in ("degree", "hash"):
        return jnp.bool_(rule == "hash")
    hub, total = hub_entries(deg) if totals is None else totals
    return (hub > 0) & (hub * HUB_SHARE >= total)


def run_lengths(ids, n_cap: int):
    """[n_cap] entries of each id, for ``ids`` whose equal values are contiguous (id n_cap:
    padding, not counted). By the distance between run heads, where a segment sum of ones over
    sorted ids costs one atomic per entry on one address per run (on a GPU)."""
    size = ids.shape[0]
    pos = jnp.arange(size, dtype=jnp.int32)
    head = ids != jnp.concatenate([jnp.full(1, -1, ids.dtype), ids[:-1]])
    nxt = prefix(jnp.where(head, pos, size), "min", reverse=True)
    nxt = jnp.concatenate([nxt[1:], jnp.full(1, size, nxt.dtype)])
    return jnp.zeros(n_cap, jnp.int32).at[jnp.where(head, ids, n_cap)].set(nxt - pos, mode="drop")


def per_bucket(values, bucket, reduce):
    """[N_BUCKETS] ``reduce`` (jnp.sum or jnp.max, of non-negative values; 0 when none) of the
    values of each bucket id (others ignored): one masked reduction per bucket, where a scatter
    into N_BUCKETS addresses would serialise on a GPU."""
    return jnp.stack([reduce(jnp.where(bucket == b, values, 0)) for b in range(N_BUCKETS)])


def group_by_bucket(gr: Level, n_cap: int, size: int, of=None, rule: str = "auto") -> Buckets:
    """Sort the first ``size`` entries of ``gr`` (all its valid ones) by bucket; arrays padded to e_cap.

    ``of`` (the bucket of each vertex) defaults to :func:`vertex_buckets` of
    the stored-entry counts by ``rule``; a vertex with ``of = -1`` never moves.
    ``hashed`` records whether :func:`hash_rule` chose the hash classes (False for a given
    ``of``). One stable key-value sort (the key has N_BUCKETS + 1 values).
    """
    e_cap = gr.src.shape[0]
    src, dst, w = gr.src[:size], gr.dst[:size], gr.w[:size]
    k = degrees(src, dst, w, n_cap)
    hashed = jnp.bool_(False)
    if of is None:
        entries = run_lengths(src, n_cap)
        of, hashed = vertex_buckets(entries, rule=rule), hash_rule(entries, rule)
    loop = src == dst
    key = jnp.where(loop | (src >= n_cap), N_BUCKETS, take(of, src, N_BUCKETS))
    key = jnp.where(key < 0, N_BUCKETS, key)
    _, perm = stable_sort_with_positions(key, N_BUCKETS)
    count = per_bucket(jnp.ones_like(key), key, jnp.sum)
    start = prefix(count) - count
    keep = jnp.arange(size) < jnp.sum(count)
    s = jnp.where(keep, src[perm], n_cap)
    d = jnp.where(keep, dst[perm], n_cap)
    ww = jnp.where(keep, w[perm], 0)
    kb = key[perm]
    # rows: the vertices with entries, numbered inside their bucket in id order (the numbering
    # move_bucket's windows use); d_rank: the row of the entry's target when it is in the same
    # bucket (it may move in the same step), else -1
    head = keep & (s != jnp.concatenate([jnp.full(1, n_cap, s.dtype), s[:-1]]))
    row = prefix(head, dtype=jnp.int32) - 1
    rows = per_bucket(head.astype(jnp.int32), kb, jnp.sum)
    rank_here = row - take(prefix(rows) - rows, kb, 0)
    rank = jnp.full(n_cap, -1, jnp.int32).at[jnp.where(head, s, n_cap)].set(rank_here, mode="drop")
    d_rank = jnp.where(keep & (take(of, d, -1) == kb), take(rank, d, -1), -1)
    row_len = run_lengths(s, n_cap)
    width = per_bucket(row_len, of, jnp.max)
    loops = 2 * jnp.sum(jnp.where(loop & (src < n_cap), w, 0))
    return Buckets(_pad(s, e_cap, n_cap), _pad(d, e_cap, n_cap), _pad(ww, e_cap, 0),
                   _pad(d_rank, e_cap, -1), start.astype(jnp.int32), count.astype(jnp.int32),
                   width.astype(jnp.int32), of, k, loops,
                   jnp.sum(row_len > 0, dtype=jnp.int32), hashed)


def buckets_of(gr: Level, n_cap: int, of=None, axis=None, cfg: Config = DEFAULT) -> Buckets:
    """:func:`group_by_bucket` on the smallest window class holding the level's entries."""
    e_cap = gr.src.shape[0]
    used = jnp.sum(gr.src < n_cap)
    return by_class(lambda size, gr: group_by_bucket(gr, n_cap, size, of, cfg.buckets), used, e_cap, gr, axis=axis, cfg=cfg)
