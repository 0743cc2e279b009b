"""APFB and APsB: augmenting-path matching by phases of alternating BFS.

Paper: M. Deveci, K. Kaya, B. Ucar, U. V. Catalyurek, "GPU accelerated
maximum cardinality matching algorithms for bipartite graphs" (Euro-Par 2013;
``shared/papers/gpu-augmenting-path-matching.txt``, its pseudocode restated
in ``shared/papers/NOTES.md``).

One *phase*:

1. BFS (GPUBFS or GPUBFS-WR): a level-synchronous alternating BFS from all
   unmatched columns. A level is one masked pass over the column-major edges:
   every edge (c, r) whose column c is in the frontier reaches row r; if r is
   matched to an unvisited column c2, c2 joins the next level and
   ``predecessor[r] = c``; if r is unmatched it becomes a path end with
   ``predecessor[r] = c``. APsB stops at the first level that finds a path
   (shortest paths, Hopcroft-Karp-like); APFB runs until the frontier is
   empty. GPUBFS-WR carries the root of every column's tree: a tree stops
   growing once it found a path, and APsB keeps one path end per root.
2. Alternate: every path end walks back to its root, flipping the matched
   edges; all walks advance one step per iteration, in lockstep.
3. FixMatching: row mates that their column does not confirm are cleared.

The loop ends after a phase that finds no augmenting path: the matching is
then maximum (Berge). Each phase costs O(|E|) per BFS level plus O(n) per
Alternate step.

Where the array version differs from the CUDA one, and why it stays correct:

* Races. Where CUDA threads race to write ``predecessor`` or a column's
  mate, a scatter-min picks the smallest id, so runs are deterministic.
  Unmatched rows keep the predecessor of the first level that reached them.
* Collisions in Alternate. Two walks that want the same column in the same
  step: the smallest row wins and continues, the other stops. A walk that
  reaches a column another walk already flipped (its mate's predecessor is
  that column: the paper's predecessor check) stops. Walks therefore stay on
  distinct rows, ``col_mate`` stays injective, and a stopped walk only moves
  the loss of a matched edge from its start to where it stopped: the
  cardinality never decreases. The walk that ends at the lowest BFS level
  cannot have been stopped (whoever stopped it went further down), so it
  reached a root: every phase that finds a path augments at least once, and
  ``min(row_cap, col_cap) + 1`` phases always suffice.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import CONVERGED, INT_MAX, MAX_ITERS, mask_ids, take
from jaxmatch.bipartite.push_relabel import consistent_col_mate

METHODS = ("apfb", "apsb")
BFS = ("gpubfs", "gpubfs_wr")


def default_phases(g) -> int:
    """A phase bound that is never hit: each phase but the last augments at least once."""
    return min(g.row_cap, g.col_cap) + 1


class BFSState(NamedTuple):
    lev: jax.Array           # [col_cap] BFS level of each column, -1 unvisited
    root: jax.Array          # [col_cap] root column of each visited column's tree
    done: jax.Array          # [col_cap] root found a path (GPUBFS-WR)
    pred: jax.Array          # [row_cap] column that reached each row, col_cap if none
    end: jax.Array           # [row_cap] row is a path end
    end_of_root: jax.Array   # [col_cap] smallest path end of each root, INT_MAX if none
    level: jax.Array
    grew: jax.Array
    found: jax.Array
    edges: jax.Array


class PhaseState(NamedTuple):
    row_mate: jax.Array
    col_mate: jax.Array
    phase: jax.Array
    found: jax.Array
    levels: jax.Array
    edges: jax.Array
    augs: jax.Array


class WalkState(NamedTuple):
    row_mate: jax.Array
    col_mate: jax.Array
    at: jax.Array            # [row_cap] a walk stands on this row
    step: jax.Array


def reducers(axis):
    """(pmin, psum) over the mesh axis ``axis`` (a graph's edges split over it), or identities."""
    if axis is None:
        return (lambda x: x), (lambda x: x)
    return (lambda x: lax.pmin(x, axis)), (lambda x: lax.psum(x, axis))


def _bfs(g, row_mate, col_mate, *, shortest: bool, with_root: bool, axis=None) -> BFSState:
    """Alternating BFS from all unmatched columns (GPUBFS / GPUBFS-WR).

    ``axis``: inside ``shard_map`` over a graph whose edges are split over that mesh axis (the
    vertex arrays replicated): each device scans its own edges and the predecessors are combined
    by a ``lax.pmin`` (the smallest column per row, as on one device), the edge count by a
    ``lax.psum``; everything else is per vertex and runs identically on every device."""
    pmin, psum = reducers(axis)
    row, col = g.by_col.indices, g.by_col.src
    rc, cc = g.row_cap, g.col_cap
    cols = jnp.arange(cc, dtype=jnp.int32)
    free = (cols < g.n_cols) & (col_mate == -1)
    s = BFSState(jnp.where(free, 0, -1).astype(jnp.int32), jnp.where(free, cols, cc),
                 jnp.zeros(cc, bool), jnp.full(rc, cc, jnp.int32), jnp.zeros(rc, bool),
                 jnp.full(cc, INT_MAX, jnp.int32), jnp.int32(0), jnp.any(free), jnp.bool_(False),
                 jnp.int32(0))

    def step(s: BFSState) -> BFSState:
        c_root = take(s.root, col, cc)
        active = take(s.lev, col, -1) == s.level
        if with_root:
            active &= ~take(s.done, c_root, True)
        mate = take(row_mate, row, -2)
        grow = active & (mate >= 0) & (take(s.lev, mate, 0) == -1)
        hit = active & (mate == -1) & ~take(s.end, row, True)
        # predecessor: the smallest column per row (CUDA: whichever thread wrote last)
        pred = pmin(s.pred.at[mask_ids(row, grow | hit, rc)].min(col, mode="drop"))
        reached = pred < s.pred
        new_end = reached & (row_mate == -1)
        new_col = mask_ids(row_mate, reached & (row_mate >= 0), cc)
        root_of_pred = take(s.root, pred, cc)
        lev = s.lev.at[new_col].set(s.level + 1, mode="drop")
        root = s.root.at[new_col].set(root_of_pred, mode="drop")
        end_root = mask_ids(root_of_pred, new_end, cc)
        done = s.done.at[end_root].set(True, mode="drop")
        end_of_root = s.end_of_root.at[end_root].min(jnp.arange(rc, dtype=jnp.int32), mode="drop")
        return BFSState(lev, root, done, pred, s.end | new_end, end_of_root, s.level + 1,
                        jnp.any(new_col < cc), s.found | jnp.any(new_end),
                        s.edges + psum(jnp.sum(active, dtype=jnp.int32)))

    def more(s: BFSState):
        go = s.grew & (s.level < cc)
        return go & ~s.found if shortest else go

    return lax.while_loop(more, step, s)


def walk_back(g, row_mate, col_mate, pred, start, *, disjoint: bool) -> WalkState:
    """Walk back from the ``start`` rows to the roots in lockstep, flipping matched edges.

    Each walk at row r moves to the column ``pred[r]`` (its BFS predecessor), matches r to it,
    and goes on to the row that column was matched to; all walks take one step per iteration.
    ``disjoint=True`` (MS-BFS-Graft's vertex-disjoint trees) flips every step; otherwise two walks
    may want one column (APFB/APsB): a walk stops at a column another walk already flipped, and
    of two that want the same column in the same step the smallest row wins (scatter-min) and
    the other stops. At most ``col_cap + 1`` steps. Returns the final :class:`WalkState`.
    """
    rc, cc = g.row_cap, g.col_cap
    rows = jnp.arange(rc, dtype=jnp.int32)

    def step(w: WalkState) -> WalkState:
        c = jnp.where(w.at, pred, cc)
        prev = take(w.col_mate, c, -1)          # the row c was matched to: the walk's next row
        if disjoint:
            won, target = w.at, c
        else:
            flipped = (prev >= 0) & (take(pred, prev, -1) == c)  # another walk got here first
            go = w.at & (c < cc) & ~flipped
            claim = jnp.full(cc, INT_MAX, jnp.int32).at[mask_ids(c, go, cc)].min(rows, mode="drop")
            won = go & (take(claim, c, -1) == rows)
            target = mask_ids(c, won, cc)
        col_mate = w.col_mate.at[target].set(rows, mode="drop")
        row_mate = jnp.where(won, c, w.row_mate)
        at = jnp.zeros(rc, bool).at[mask_ids(prev, won & (prev >= 0), rc)].set(True, mode="drop")
        return WalkState(row_mate, col_mate, at, w.step + 1)

    return lax.while_loop(lambda w: jnp.any(w.at) & (w.step <= cc), step,
                          WalkState(row_mate, col_mate, start, jnp.int32(0)))


def _alternate(g, row_mate, col_mate, pred, start):
    """Augment along the paths ending at the ``start`` rows (:func:`walk_back`), then FixMatching."""
    rows = jnp.arange(g.row_cap, dtype=jnp.int32)
    w = walk_back(g, row_mate, col_mate, pred, start, disjoint=False)
    # FixMatching: clear the rows whose column went to another walk
    ok = take(w.col_mate, w.row_mate, -1) == rows
    row_mate = jnp.where(ok, w.row_mate, -1)
    return row_mate, consistent_col_mate(g, row_mate, w.col_mate)


def _phase(g, s: PhaseState, shortest: bool, with_root: bool, axis=None) -> PhaseState:
    b = _bfs(g, s.row_mate, s.col_mate, shortest=shortest, with_root=with_root, axis=axis)
    start = b.end
    if shortest and with_root:  # one walk per root
        start &= take(b.end_of_root, take(b.root, b.pred, g.col_cap), -1) == jnp.arange(g.row_cap)
    row_mate, col_mate = _alternate(g, s.row_mate, s.col_mate, b.pred, start)
    card = lambda m: jnp.sum(m >= 0, dtype=jnp.int32)  # noqa: E731
    return PhaseState(row_mate, col_mate, s.phase + 1, b.found, s.levels + b.level,
                      s.edges + b.edges, s.augs + card(row_mate) - card(s.row_mate))


def augmenting_paths(g, row_mate, col_mate, *, method="apfb", bfs="gpubfs_wr", max_iters=None, axis=None):
    """Run APFB / APsB from a matching; returns (row_mate, col_mate, status, stats dict).

    ``max_iters`` bounds the number of phases (default :func:`default_phases`);
    status is MAX_ITERS when the last phase run still found a path. ``axis``:
    the edges are split over that mesh axis (see :func:`_bfs`;
    :mod:`jaxmatch.bipartite.sharded`).

    >>> from jaxmatch import BipartiteGraph
    >>> from jaxmatch.bipartite.init import empty_matching
    >>> g = BipartiteGraph.from_edges([0, 1, 1, 2], [0, 0, 1, 1])
    >>> row_mate, col_mate, status, stats = augmenting_paths(g, *empty_matching(g), method="apsb")
    >>> int((row_mate >= 0).sum()), int(status), int(stats["augmentations"])
    (2, 0, 2)
    """
    max_iters = default_phases(g) if max_iters is None else max_iters   # may be traced
    shortest, with_root = method == "apsb", bfs == "gpubfs_wr"
    col_mate = consistent_col_mate(g, row_mate, col_mate)
    zero = jnp.int32(0)
    s = PhaseState(row_mate, col_mate, zero, jnp.bool_(True), zero, zero, zero)
    s = lax.while_loop(lambda s: s.found & (s.phase < max_iters),
                       lambda s: _phase(g, s, shortest, with_root, axis), s)
    status = jnp.where(s.found, MAX_ITERS, CONVERGED).astype(jnp.int32)
    stats = dict(iterations=s.phase, phases=s.phase, bfs_levels=s.levels, edges_traversed=s.edges, augmentations=s.augs)
    return s.row_mate, s.col_mate, status, stats
