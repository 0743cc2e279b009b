"""The residual BFS of the global relabel: distances to a set of roots over residual arcs.

The global relabel heuristic (Goldberg and Tarjan; line 23 of WBPR's
Algorithm 1) sets every vertex's height to its residual distance to the
sinks: a level-synchronous BFS backwards from the roots over the residual
arcs, done on the device with no host round trip (:func:`residual_bfs`).
Level 1 is found by one pass over all residual arcs, so the roots' rows,
which can be long, never enter the lanes; the further levels expand a
frontier queue built like the active vertex queue, on the same ladder of
step sizes (:mod:`jaxmatch.flow.lanes`), so a level costs O(frontier + its
arcs) work. With a kernel config (the default on the GPU) the further levels
run instead in the persistent Pallas kernel of
:mod:`jaxmatch.kernels.bfs_level`, up to ``Config.levels`` levels per
launch. The BFS may stop early, once every vertex of interest (the active
vertices, for the global relabel) is labelled; the lowest unexpanded level
is then a lower bound on the distance of every vertex it did not reach.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, compact, switch, take
from jaxmatch.flow.lanes import Rung, _lanes, _requeue, _rung
from jaxmatch.flow.residual import reverse_position
from jaxmatch.kernels.bfs_level import bfs_levels


class BFSState(NamedTuple):
    """The loop state of a residual BFS."""

    dist: jax.Array      # [vertex_cap] level, INT_MAX unreached, -1 blocked
    frontier: jax.Array  # [vertex_cap] its first `count` entries, in level order
    count: jax.Array
    arcs: jax.Array
    longest: jax.Array
    owner: jax.Array
    found: jax.Array     # vertices of interest labelled so far
    levels: jax.Array


def _bfs_step(net, rc, counted, b: BFSState, *, rung: Rung, search: bool) -> BFSState:
    """One BFS step: the first frontier vertices whose rows fit the lanes label their unlabelled in-neighbours."""
    vc, size = net.vertex_cap, 2 * net.arc_cap
    y = jnp.where(jnp.arange(rung.slots) < b.count, b.frontier[:rung.slots], vc)
    ok = y < vc
    ln = _lanes(y, ok, net.res.indptr, size, rung)
    x = take(net.res.indices, ln.entry, vc)
    back = take(rc, reverse_position(net, ln.entry, search), 0) > 0   # x -> y is residual
    level = take(b.dist, y, INT_MAX)[ln.slot] + 1
    hit = ln.valid & back & (take(b.dist, x, -1) > level)
    x = jnp.where(hit, x, vc)
    dist = b.dist.at[x].min(level, mode="drop")
    cand = jnp.concatenate([jnp.where(ok & ~ln.fit, y, vc), x])
    frontier, count, arcs, longest, owner, keep = _requeue(b.frontier, b.owner, cand, cand < vc, net.res.indptr)
    new = keep & (jnp.arange(cand.shape[0]) >= rung.slots) & take(counted, cand, False)
    return BFSState(dist, frontier, count, arcs, longest, owner, b.found + jnp.sum(new, dtype=jnp.int32),
                    b.levels + 1)


def residual_bfs(net, rc, roots, blocked, counted, rungs, *, search: bool, unroll: int, early: bool, owner,
                 kernel=None, interpret=False, run=True):
    """Residual distance to the set ``roots`` by a level-synchronous BFS over residual arcs (backwards).

    Level 1 is found by one pass over all residual arcs (so the roots' rows,
    which can be long, never enter the lanes), the next levels from a
    frontier queue. ``blocked`` vertices are never labelled or passed
    through. With ``early``, the BFS stops once every ``counted`` vertex is
    labelled. With ``kernel`` (a :class:`jaxmatch.kernels.bfs_level.Config`;
    the stored reverse index only), the further levels run in that
    persistent kernel (many levels per launch, a grid barrier between
    them), with ``interpret`` in Pallas's interpreter. Returns (dist
    [vertex_cap]: INT_MAX where not labelled, -1 where blocked; the lowest
    unexpanded level, or -1 when the frontier ran empty; the number of BFS
    levels; the owner scratch; whether a kernel launch stalled). ``run`` False
    (a traced bool): the first level only.
    """
    vc = net.vertex_cap
    ids = jnp.arange(vc, dtype=jnp.int32)
    deg = net.res.indptr[1:] - net.res.indptr[:-1]
    dist = jnp.where(roots, 0, jnp.where(blocked, -1, INT_MAX)).astype(jnp.int32)
    x = net.res.src
    one = (rc > 0) & take(roots, net.res.indices, False) & (take(dist, x, -1) == INT_MAX)
    dist = dist.at[jnp.where(one, x, vc)].set(1, mode="drop")
    first = dist == 1
    frontier, count = compact(first, ids, vc)
    count = jnp.where(run, count, 0)             # run False: no level after the first
    want = jnp.sum(counted & ~roots, dtype=jnp.int32)
    b = BFSState(dist, frontier, count, jnp.sum(jnp.where(first, deg, 0), dtype=jnp.int32),
                 jnp.max(jnp.where(first, deg, 0)), owner, jnp.sum(first & counted, dtype=jnp.int32), jnp.int32(1))
    steps = [lambda b: b] + [partial(_bfs_step, net, rc, counted, rung=r, search=search) for r in rungs]

    def going(b: BFSState):
        go = b.count > 0
        return go & (b.found < want) if early else go

    def body(b: BFSState) -> BFSState:
        for _ in range(unroll):
            b = switch(_rung(rungs, b.count, b.arcs, b.longest, going(b)), steps, b)
        return b

    if kernel is not None and not search:   # many levels per launch of the persistent kernel
        wanted = counted.astype(jnp.int32)
        back = take(rc, net.res_rev, 0)    # each arc's reverse capacity: one trip a level in the kernel

        def launch(c):
            b, buf, side, stalled = c
            dist, buf, side, count, found, done, halt = bfs_levels(
                buf, b.count, b.levels + 1, b.dist, net.res.indptr, net.res.indices, back, wanted,
                side=side, want=want - b.found if early else INT_MAX, cfg=kernel, interpret=interpret)
            return (b._replace(dist=dist, frontier=lax.dynamic_slice(buf, (side * vc,), (vc,)), count=count,
                               found=b.found + found, levels=b.levels + done), buf, side, stalled | halt)

        buf = jnp.concatenate([b.frontier, jnp.full(vc, vc, jnp.int32)])
        b, _, _, stalled = lax.while_loop(lambda c: going(c[0]), launch, (b, buf, jnp.int32(0), jnp.bool_(False)))
    else:
        b, stalled = lax.while_loop(going, body, b), jnp.bool_(False)
    lowest = jnp.where(b.count > 0, take(b.dist, b.frontier[0], INT_MAX), -1)
    return b.dist, lowest, b.levels, b.owner, stalled
