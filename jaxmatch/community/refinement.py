"""Leiden's refinement phase, and the split of communities into their connected pieces.

:func:`refine_partition` splits every community C of a partition P of one
level's graph into well-connected subcommunities (the partition R that the
Leiden method aggregates by; V. A. Traag, L. Waltman, N. J. van Eck, "From
Louvain to Leiden: guaranteeing well-connected communities", Sci. Rep. 9,
5233, 2019, Algorithm A.2 ``RefinePartition`` / ``MergeNodesSubset``), in the
deterministic limit theta -> 0 of the paper's randomised merge (greedy), in
bulk-synchronous rounds. With k the weighted degrees, 2m their sum, K_X the
degree sum of a vertex set X, w(X, Y) the weight between two sets and gamma
the resolution:

* R starts as singletons. A vertex v *may move* when it is still alone in
  its subcommunity and is well connected to its community C:
  ``w(v, C - v) >= gamma * k_v * (K_C - k_v) / 2m``.
* It considers the subcommunities S inside C that it has an edge to
  (``w(v, S) > 0``) and that are well connected,
  ``w(S, C - S) >= gamma * K_S * (K_C - K_S) / 2m``, and picks the one of
  largest gain ``w(v, S) - gamma * k_v * K_S / 2m`` (ties: the smallest
  label), if that gain is >= 0.
* Conflicts, the array form of the atomics with which sequential and
  GVE-Leiden merge: a vertex that any other candidate targets this round does
  not move ("targeted vertices stay"), except in a mutual pair (u targets v,
  v targets u, v has no other targeter), where the smaller id moves into the
  larger one's subcommunity.

Rounds repeat until no vertex moves (at most ``max_rounds``).

**Every subcommunity stays connected.** By induction over the rounds: old
members leave a subcommunity S only when it is a singleton {u} and u moves,
which the rule forbids when any vertex joins S (the mutual pair's larger id,
the one that is joined, is targeted and stays); so when vertices join S, all
of S's old members stay, and every joiner has an edge to one of them.

**A round with a candidate moves a vertex.** The gain of a singleton {u}
toward a singleton {t} is symmetric in u and t (computed as
``w(u, t) - gamma * (k_u * k_t) / 2m``: the same bits both ways wherever the
two stored directions of an edge hold the same weight). If every candidate
were targeted, the targeting among candidates would be a permutation; its
cycles of length >= 3 would need each vertex to prefer its successor to its
predecessor, which symmetric gains with smallest-label ties exclude; so they
are mutual pairs, and the smaller id of each moves. So the rounds end when
no singleton has a non-negative move left (else, at worst, one round early:
the subcommunities are connected either way).

:func:`split_components` is the safety net of :func:`jaxmatch.leiden`: it
splits every community into its connected pieces (label propagation of the
smallest vertex id over the edges inside communities, with pointer jumping).
Splitting a community whose parts share no edge never lowers the modularity
(the parts' edge term is unchanged and the null-model term drops by
``2 gamma K_A K_B / (2m)^2``).

Cost: per refinement round one sort of the round's candidates' entries (grouping the
(vertex, subcommunity) pairs, :func:`jaxmatch.community.aggregation.pair_groups`, in a
static class that holds them: :func:`candidate_classes`) and O(entries + n) gathers and
segment sums; per split iteration O(entries + n).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import prefix, take
from jaxmatch.community.aggregation import pair_groups
from jaxmatch.community.buckets import Level
from jaxmatch.community.config import DEFAULT, Config
from jaxmatch.community.modularity import degrees
from jaxmatch.community.moves import sparse_reduce
from jaxmatch.community.size_classes import by_class


class RefineState(NamedTuple):
    sub: jax.Array      # [N] subcommunity of each vertex: the id of its founding vertex (N in padding)
    rounds: jax.Array   # rounds run
    merges: jax.Array   # vertices moved in all rounds
    go: jax.Array       # the last round moved a vertex


def candidate_classes(size: int, cfg: Config = DEFAULT) -> list[int]:
    """Static lengths of a round's candidate entries: ``size``, and past ``cfg.single_class_max``
    also size / 4, size / 16 ... >= ``cfg.window_min`` (few copies: the rounds after the first
    two merge few vertices, whose entries fit a small class)."""
    sizes = [size]
    while size > cfg.single_class_max and sizes[-1] // 4 >= cfg.window_min:
        sizes.append(sizes[-1] // 4)
    return sizes


def refine_partition(gr: Level, comm, resolution, max_rounds, size: int, axis=None, cfg: Config = DEFAULT):
    """Leiden's refinement R of the partition ``comm`` [N] (N in padding) of the level's graph
    ``gr``, from its first ``size`` entries (all its valid ones).

    Returns (sub, rounds, merges, hit): ``sub`` [N], the subcommunity of every vertex, named by
    the id of a member (N in padding); the rounds run, the vertices merged, and whether
    ``max_rounds`` stopped the rounds while a vertex still moved. Every subcommunity lies inside
    one community and induces a connected subgraph (see the module docstring).

    A round groups only its candidates' entries, moved in entry order to the front and sorted
    in the smallest of :func:`candidate_classes` that holds them (under ``jax.vmap(...,
    axis_name=axis)`` the batch's largest), so the late rounds, with few candidates left, sort
    few entries; the groups and their sums are those of the whole level's entries (the same bits).
    """
    n_cap = comm.shape[0]
    src, dst, w = gr.src[:size], gr.dst[:size], gr.w[:size]
    ids = jnp.arange(n_cap, dtype=jnp.int32)
    real = ids < gr.n
    k = degrees(src, dst, w, n_cap)
    two_m = jnp.sum(k)
    inv2m = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), 0)
    comm = jnp.where(real, comm, n_cap)
    k_comm = jax.ops.segment_sum(k, comm, n_cap)                        # K_C
    inner = (src < n_cap) & (src != dst) & (take(comm, src, n_cap) == take(comm, dst, -1))

    def body(st: RefineState) -> RefineState:
        sub = st.sub
        members = jax.ops.segment_sum(real.astype(jnp.int32), sub, n_cap)
        k_sub = jax.ops.segment_sum(k, sub, n_cap)                      # K_S, at S's label
        r_s, r_d = take(sub, src, n_cap), take(sub, dst, n_cap)
        cross = inner & (r_s != r_d)
        ext = jax.ops.segment_sum(jnp.where(cross, w, 0), jnp.where(cross, r_s, n_cap), n_cap)  # w(S, C - S)
        k_c = take(k_comm, comm, 0)                                     # K_C of S's founder's community
        well = (members > 0) & (ext >= resolution * (k_sub * (k_c - k_sub)) * inv2m)
        cand = real & (sub == ids) & (members == 1) & well & (inv2m > 0)
        # the (v, S) pairs of candidates v and well-connected subcommunities S of C(v) - v
        use = cross & take(cand, src, False) & take(well, r_d, False)
        slot = jnp.where(use, prefix(use, dtype=jnp.int32) - 1, size)     # in entry order
        cv = jnp.full(size, n_cap, jnp.int32).at[slot].set(src, mode="drop")
        cs = jnp.full(size, n_cap, jnp.int32).at[slot].set(r_d, mode="drop")
        cw = jnp.zeros(size, w.dtype).at[slot].set(w, mode="drop")

        def pick(length, cv, cs, cw, k_sub):     # (best score, target) of each candidate
            cv, cs, cw = cv[:length], cs[:length], cw[:length]
            grp = pair_groups(cv, cs, n_cap, cfg.sort_method)
            e = jax.ops.segment_sum(cw, jnp.where(cv < n_cap, grp.grp, length), length)  # w(v, S)
            ok = grp.head & (grp.a < n_cap)
            v, s = grp.a, grp.b
            score = jnp.where(ok, e - resolution * (take(k, v, 0) * take(k_sub, s, 0)) * inv2m, -jnp.inf)
            best = sparse_reduce("max", score, v, ok, n_cap, -jnp.inf)
            return best, sparse_reduce("min", s, v, ok & (score == take(best, v, jnp.inf)), n_cap, n_cap)

        best, target = by_class(pick, jnp.sum(use, dtype=jnp.int32), size, cv, cs, cw, k_sub,
                                classes=lambda size, shared, cfg: candidate_classes(size, cfg),
                                axis=axis, cfg=cfg)
        want = cand & (target < n_cap) & (best >= 0)
        # targeted vertices stay; in a mutual pair the smaller id moves into the larger
        hits = jax.ops.segment_sum(want.astype(jnp.int32), jnp.where(want, target, n_cap), n_cap)
        t = jnp.where(want, target, 0)
        mutual = (hits == 1) & take(want, t, False) & (take(target, t, n_cap) == ids) & (ids < t)
        move = want & ((hits == 0) | mutual) & st.go & (st.rounds < max_rounds)
        moved = jnp.sum(move, dtype=jnp.int32)
        live = st.go & (st.rounds < max_rounds)     # a no-op once finished (vmap runs the body on)
        return RefineState(sub=jnp.where(move, target, sub), rounds=st.rounds + live.astype(jnp.int32),
                           merges=st.merges + moved, go=live & (moved > 0))

    st = RefineState(jnp.where(real, ids, n_cap), jnp.int32(0), jnp.int32(0), inv2m > 0)
    st = lax.while_loop(lambda s: s.go & (s.rounds < max_rounds), body, st)
    return st.sub, st.rounds, st.merges, st.go


def split_components(gr: Level, labels, size: int):
    """Every community of ``labels`` [N] (any ids for the vertices < ``gr.n``) split into the
    connected pieces it induces, from the first ``size`` entries of ``gr``.

    Returns (pieces, iterations): ``pieces`` [N] names each piece by its smallest vertex id (N
    in padding). Label propagation of the smallest id over the edges inside communities, each
    iteration followed by a pointer jump (every label is the id of a vertex of the same piece,
    so ``pieces[pieces]`` is too); it stops when nothing changes, within n iterations.
    """
    n_cap = labels.shape[0]
    src, dst = gr.src[:size], gr.dst[:size]
    ids = jnp.arange(n_cap, dtype=jnp.int32)
    real = ids < gr.n
    lab = jnp.where(real, labels, -1)
    inner = (src < n_cap) & (src != dst) & (take(lab, src, -1) == take(lab, dst, -2))

    def body(c):
        piece, it, _ = c
        low = sparse_reduce("min", take(piece, dst, n_cap), src, inner, n_cap, n_cap)
        new = jnp.minimum(piece, low)
        new = jnp.where(real, take(new, new, n_cap), n_cap)
        return new, it + 1, jnp.any(new != piece)

    init = (jnp.where(real, ids, n_cap), jnp.int32(0), jnp.bool_(True))
    piece, it, _ = lax.while_loop(lambda c: c[2] & (c[1] <= gr.n), body, init)
    return piece, it
