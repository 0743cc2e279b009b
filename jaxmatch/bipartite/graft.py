"""MS-BFS-Graft: multi-source alternating BFS with tree grafting and direction optimisation.

Paper: the MS-BFS-Graft paper of A. Azad, A. Buluç and A. Pothen
(``shared/papers/ms-bfs-graft.txt``, Algorithms 3-7; its extracted text lost
the title line, so it is cited by file).

The paper's X side (tree roots, frontier) is the *columns* here, its Y side
(``visited``, ``parent``) the *rows*, as in :mod:`jaxmatch.bipartite.augmenting`.
The forest is kept in four arrays: ``parent[r]`` (the column that claimed row
r), ``root_r[r]`` and ``root_c[c]`` (the root column of the tree holding a
vertex; the sentinel ``col_cap`` when it is in no tree, so ``visited[r]`` is
``root_r[r] < col_cap``) and ``leaf[x]`` (for a root x, the free row ending
its augmenting path; ``row_cap`` while the tree is *active*, i.e. has none).

One *phase* (Algorithm 3):

1. Grow (:func:`grow`): level-synchronous BFS from the frontier F, a set of
   columns of active trees. Top-down (Algorithm 4) when ``|F| * alpha <
   #unvisited rows``: a masked pass over the column-major edges; every
   unvisited row next to a frontier column is claimed by the smallest such
   column (a scatter-min). Bottom-up otherwise (Algorithm 6): every unvisited
   row scans its row-major adjacency and takes the first column in an active
   tree (a segment-min of the edge position). Claiming (Algorithm 5): the row
   joins the column's tree; a matched row's mate joins the tree and the next
   frontier; a free row becomes the tree's leaf (the smallest such row when a
   tree finds several in one level) and the tree stops growing. The level
   loop ends when the frontier is empty.
2. Augment (:func:`augment`): from every leaf, walk ``parent`` and the old
   mates back to the root, flipping the matched edges. Trees are
   vertex-disjoint, so the walks are too; all advance one step per iteration.
3. Graft (:func:`regrow`, Algorithm 7): the rows of *renewable* trees (those
   that had a leaf) become unvisited and their columns leave the forest;
   active trees keep their vertices. If ``|activeX| * alpha > |renewableY|``
   the renewable rows next to an active tree are grafted onto it by one
   bottom-up step and their mates form the next frontier; otherwise all trees
   are dismantled and the next phase grows from all free columns.

The loop ends after a phase whose forest has no leaf; the matching is then
maximum (the paper's Theorem 1, restated below). A phase costs O(|E|) per
level plus O(n) per augmentation step; at most ``min(rows, cols) + 1`` phases
(each phase but the last augments), O(|E| n) in all.

Options: ``graft=False`` dismantles all trees after every phase (MS-BFS with
direction optimisation); ``direction_optimizing=False`` always grows top-down;
``alpha`` (the paper's ~5) sets both switches.

Where the array version differs from the OpenMP code, and why it stays correct:

* Races become scatter-min picks. Where OpenMP threads race on the atomic
  ``visited`` flag, the smallest column id claims the row; where several free
  rows of one tree race to write ``leaf`` (the paper's benign race), the
  smallest row id wins. Runs are therefore deterministic, and the trees stay
  vertex-disjoint because every row gets one parent and a matched row's mate
  can enter a tree only through that row.
* Top-down and bottom-up build the same forest. Invariant: before each level,
  an unvisited row's neighbours in active trees are all in the frontier
  (every level claims all unvisited neighbours of the active frontier; the
  graft step claims every renewable row with an active neighbour; a rebuild
  leaves only the roots, which are the frontier). So the first active
  neighbour in a row's sorted adjacency (bottom-up) is the smallest active
  frontier column next to it (top-down). The direction changes only the
  edges a work-efficient kernel scans, which ``stats`` counts per direction
  (top-down: all edges of the active frontier; bottom-up: each unvisited row's
  edges up to and including its first hit), not the result. Each level here
  is a masked pass over all edges in either direction.
* The frontier holds only columns of trees that are still active after the
  level (the paper's queue also holds columns of trees that turned renewable
  in the same level, which its next level skips), so the level loop ends one
  level earlier and ``|F|`` in the alpha rule counts only them.
* Renewable trees are cleared completely (their columns' roots and their
  roots' leaves too, where the paper leaves stale pointers that its active
  test ignores).
* A graft step can itself find a path (a free row of a renewable tree grafted
  onto an active tree, Algorithm 5's leaf case). That tree is then renewable
  at the start of the next phase and is augmented there; a phase "finds a
  path" when its forest has any leaf at augmentation time, so the loop cannot
  stop with such a path pending.
* Theorem 1 restated for the arrays: when a phase ends with no leaf, every
  tree is active, every free column is the root of one, and by the invariant
  (frontier empty) no unvisited row has a neighbour in a tree. Along any
  alternating path from a free column, every row is therefore visited, hence
  in an active tree, and so is its mate; a free row at the end would have made
  its tree renewable. So no augmenting path exists (Berge).
* Vectorised over a batch, the direction and graft/rebuild choices run both
  branches and select (``lax.cond`` under ``vmap``), and the loops run until
  every graph of the batch is done; the answers are the single-graph answers.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import INT_MAX, mask_ids, take
from jaxmatch.status import Status
from jaxmatch.bipartite.augmenting import default_phases, reducers, walk_back
from jaxmatch.bipartite.push_relabel import consistent_col_mate

DEFAULT_ALPHA = 5.0  # the paper: "alpha ~ 5 performs better for the MS-BFS-Graft algorithm"


class GraftState(NamedTuple):
    row_mate: jax.Array      # [row_cap] column of each row or -1
    col_mate: jax.Array      # [col_cap] row of each column or -1
    parent: jax.Array        # [row_cap] column that claimed the row, col_cap if unvisited
    root_r: jax.Array        # [row_cap] root column of the row's tree, col_cap if none (= unvisited)
    root_c: jax.Array        # [col_cap] root column of the column's tree, col_cap if none
    leaf: jax.Array          # [col_cap] a root's free leaf row, row_cap while the tree is active
    front: jax.Array         # [col_cap] bool, the BFS frontier (columns of active trees)
    phase: jax.Array
    found: jax.Array         # the last phase augmented
    capped: jax.Array        # a level loop stopped at its bound with a frontier left (never expected)
    levels: jax.Array
    bottom_up_levels: jax.Array
    edges_top_down: jax.Array
    edges_bottom_up: jax.Array
    edges_graft: jax.Array
    augs: jax.Array
    grafts: jax.Array


class GrowState(NamedTuple):
    s: GraftState
    level: jax.Array


def _add(count, more):
    """count + more for non-negative int32 counters, saturating at INT_MAX instead of wrapping."""
    return jnp.minimum(count, INT_MAX - more) + more


def _active_cols(g, root_c, leaf):
    """Columns in an active tree (one with no leaf yet)."""
    return (root_c < g.col_cap) & (take(leaf, root_c, -1) == g.row_cap)


def _fresh_forest(g, col_mate):
    """(parent, root_r, root_c, leaf, front): one single-vertex tree per free column, all rows unvisited."""
    rc, cc = g.row_cap, g.col_cap
    cols = jnp.arange(cc, dtype=jnp.int32)
    free = (cols < g.n_cols) & (col_mate == -1)
    return (jnp.full(rc, cc, jnp.int32), jnp.full(rc, cc, jnp.int32), jnp.where(free, cols, cc),
            jnp.full(cc, rc, jnp.int32), free)


def initial_state(g, row_mate, col_mate) -> GraftState:
    """The state before the first phase: consistent mates (FixMatching both ways), a fresh forest."""
    col_mate = consistent_col_mate(g, row_mate, col_mate)
    rows = jnp.arange(g.row_cap, dtype=jnp.int32)
    row_mate = jnp.where(take(col_mate, row_mate, -1) == rows, row_mate, -1)
    zero = jnp.int32(0)
    return GraftState(row_mate, col_mate, *_fresh_forest(g, col_mate), zero, jnp.bool_(True),
                      jnp.bool_(False), zero, zero, zero, zero, zero, zero, zero)


def _top_down(g, s: GraftState, unvisited, axis=None):
    """Algorithm 4: frontier columns claim their unvisited neighbours (smallest column wins).
    Returns (claim [row_cap], edges scanned). ``axis``: see :func:`ms_bfs_graft`."""
    pmin, psum = reducers(axis)
    row, col = g.by_col.indices, g.by_col.src
    scan = take(s.front & _active_cols(g, s.root_c, s.leaf), col, False)
    cand = scan & take(unvisited, row, False)
    claim = jnp.full(g.row_cap, g.col_cap, jnp.int32).at[mask_ids(row, cand, g.row_cap)].min(col, mode="drop")
    return pmin(claim), psum(jnp.sum(scan, dtype=jnp.int32))


def _bottom_up(g, s: GraftState, search, axis=None):
    """Algorithm 6: every row in ``search`` takes its first neighbour (in sorted adjacency: the
    smallest column) that lies in an active tree, and stops scanning there. Returns (claim
    [row_cap], edges scanned: per row, its neighbours up to the one taken, or all of them).

    One device: the row-major edges, the first hit by its position. ``axis`` (see
    :func:`ms_bfs_graft`): each device scans its own column-major edges; a row's adjacency is
    spread over the devices' column ranges, so its first hit is the smallest active column (a
    ``lax.pmin``) and the edges before it are those of smaller columns (a ``lax.psum``): the same
    claims and counts."""
    rc, cc = g.row_cap, g.col_cap
    if axis is None:
        row, col, indptr = g.by_row.src, g.by_row.indices, g.by_row.indptr
        cand = take(search, row, False) & take(_active_cols(g, s.root_c, s.leaf), col, False)
        pos = jnp.arange(g.edge_cap, dtype=jnp.int32)
        first = jax.ops.segment_min(jnp.where(cand, pos, INT_MAX), mask_ids(row, cand, rc), rc)
        hit = first < INT_MAX
        claim = jnp.where(hit, take(col, first, cc), cc)
        scanned = jnp.where(hit, first - indptr[:-1] + 1, indptr[1:] - indptr[:-1])
        return claim, jnp.sum(jnp.where(search, scanned, 0), dtype=jnp.int32)
    pmin, psum = reducers(axis)
    row, col = g.by_col.indices, g.by_col.src
    on = take(search, row, False)
    cand = on & take(_active_cols(g, s.root_c, s.leaf), col, False)
    claim = pmin(jnp.minimum(jax.ops.segment_min(jnp.where(cand, col, cc), mask_ids(row, cand, rc), rc), cc))
    before = psum(jnp.sum(on & (col < take(claim, row, cc)), dtype=jnp.int32))
    return claim, before + jnp.sum(search & (claim < cc), dtype=jnp.int32)


def _claim(g, s: GraftState, claim) -> GraftState:
    """Algorithm 5 for every row with ``claim[r] < col_cap``: join the claiming column's tree;
    the mate joins too and forms the next frontier; a free row becomes its tree's leaf."""
    rc, cc = g.row_cap, g.col_cap
    got = claim < cc
    new_root = take(s.root_c, claim, cc)
    joins = mask_ids(s.row_mate, got & (s.row_mate >= 0), cc)   # distinct columns: mates are unique
    root_c = s.root_c.at[joins].set(new_root, mode="drop")
    ends = mask_ids(new_root, got & (s.row_mate == -1), cc)
    leaf = s.leaf.at[ends].min(jnp.arange(rc, dtype=jnp.int32), mode="drop")
    front = jnp.zeros(cc, bool).at[joins].set(True, mode="drop") & _active_cols(g, root_c, leaf)
    return s._replace(parent=jnp.where(got, claim, s.parent), root_r=jnp.where(got, new_root, s.root_r),
                      root_c=root_c, leaf=leaf, front=front)


def _level(g, s: GraftState, alpha: float, direction_optimizing: bool, axis=None) -> GraftState:
    """One BFS level, top-down or bottom-up by the alpha rule."""
    unvisited = (jnp.arange(g.row_cap) < g.n_rows) & (s.root_r == g.col_cap)
    if direction_optimizing:
        n_front = jnp.sum(s.front, dtype=jnp.int32)
        bottom = n_front.astype(jnp.float32) * alpha >= jnp.sum(unvisited, dtype=jnp.int32).astype(jnp.float32)
        claim, scanned = lax.cond(bottom, lambda: _bottom_up(g, s, unvisited, axis),
                                  lambda: _top_down(g, s, unvisited, axis))
    else:
        bottom = jnp.bool_(False)
        claim, scanned = _top_down(g, s, unvisited, axis)
    s = _claim(g, s, claim)
    zero = jnp.int32(0)
    return s._replace(levels=s.levels + 1, bottom_up_levels=s.bottom_up_levels + bottom.astype(jnp.int32),
                      edges_top_down=_add(s.edges_top_down, jnp.where(bottom, zero, scanned)),
                      edges_bottom_up=_add(s.edges_bottom_up, jnp.where(bottom, scanned, zero)))


def grow(g, s: GraftState, *, alpha: float = DEFAULT_ALPHA, direction_optimizing: bool = True,
         axis=None) -> GraftState:
    """Step 1: grow the forest level by level until the frontier is empty (at most
    ``row_cap + col_cap + 1`` levels; a column joins the forest at most once, so the bound is never hit)."""
    bound = g.row_cap + g.col_cap + 1

    def body(t: GrowState) -> GrowState:
        return GrowState(_level(g, t.s, alpha, direction_optimizing, axis), t.level + 1)

    t = lax.while_loop(lambda t: jnp.any(t.s.front) & (t.level < bound), body, GrowState(s, jnp.int32(0)))
    return t.s._replace(capped=t.s.capped | jnp.any(t.s.front))


def augment(g, s: GraftState) -> GraftState:
    """Step 2: flip every leaf's path to its root, all paths in lockstep (they are vertex-disjoint)."""
    rc = g.row_cap
    start = jnp.zeros(rc, bool).at[s.leaf].set(True, mode="drop")
    w = walk_back(g, s.row_mate, s.col_mate, s.parent, start, disjoint=True)
    paths = jnp.sum(s.leaf < rc, dtype=jnp.int32)
    return s._replace(row_mate=w.row_mate, col_mate=w.col_mate, found=paths > 0, augs=s.augs + paths)


def regrow(g, s: GraftState, *, alpha: float = DEFAULT_ALPHA, graft: bool = True, axis=None) -> GraftState:
    """Step 3 (Algorithm 7): clear the renewable trees, then graft their rows onto active trees
    or dismantle the whole forest, by the alpha rule (always dismantle when ``graft`` is False)."""
    rc, cc = g.row_cap, g.col_cap
    if not graft:
        return s._replace(**dict(zip(("parent", "root_r", "root_c", "leaf", "front"), _fresh_forest(g, s.col_mate))))
    active_c = _active_cols(g, s.root_c, s.leaf)
    renew_r = (s.root_r < cc) & (take(s.leaf, s.root_r, -1) != rc)
    cleared = s._replace(parent=jnp.where(renew_r, cc, s.parent), root_r=jnp.where(renew_r, cc, s.root_r),
                         root_c=jnp.where(active_c, s.root_c, cc), leaf=jnp.full(cc, rc, jnp.int32),
                         front=jnp.zeros(cc, bool))
    n_active = jnp.sum(active_c, dtype=jnp.int32).astype(jnp.float32)
    # after a phase that found nothing the loop ends: no graft step is run (or counted)
    do_graft = s.found & (n_active * alpha > jnp.sum(renew_r, dtype=jnp.int32).astype(jnp.float32))

    def by_graft():
        claim, scanned = _bottom_up(g, cleared, renew_r, axis)
        t = _claim(g, cleared, claim)
        return t._replace(edges_graft=_add(t.edges_graft, scanned), grafts=t.grafts + 1)

    def by_rebuild():
        return s._replace(**dict(zip(("parent", "root_r", "root_c", "leaf", "front"), _fresh_forest(g, s.col_mate))))

    return lax.cond(do_graft, by_graft, by_rebuild)


def phase(g, s: GraftState, *, alpha: float = DEFAULT_ALPHA, graft: bool = True,
          direction_optimizing: bool = True, axis=None) -> GraftState:
    """One phase: grow, augment, regrow."""
    s = grow(g, s, alpha=alpha, direction_optimizing=direction_optimizing, axis=axis)
    s = augment(g, s)
    return regrow(g, s._replace(phase=s.phase + 1), alpha=alpha, graft=graft, axis=axis)


def stats_of(s: GraftState) -> dict:
    """The work counters of a state (``edges_traversed`` sums both directions and the graft steps)."""
    total = _add(_add(s.edges_top_down, s.edges_bottom_up), s.edges_graft)
    return dict(iterations=s.phase, phases=s.phase, bfs_levels=s.levels, edges_traversed=total, augmentations=s.augs,
                grafts=s.grafts, bottom_up_levels=s.bottom_up_levels, edges_top_down=s.edges_top_down,
                edges_bottom_up=s.edges_bottom_up, edges_graft=s.edges_graft)


def ms_bfs_graft(g, row_mate, col_mate, *, graft: bool = True, direction_optimizing: bool = True,
                 alpha: float = DEFAULT_ALPHA, max_iters: int | None = None, max_levels=None, axis=None):
    """Run MS-BFS-Graft from a matching; returns (row_mate, col_mate, status, stats dict).

    ``max_iters`` bounds the phases (default ``min(row_cap, col_cap) + 1``,
    never hit); ``max_levels`` (may be traced; default none) stops it after
    the phase in which the BFS levels reach that many. Status is MAX_ITERS
    when the last phase run still augmented (or a level loop hit its bound). Stats: phases, bfs_levels,
    edges_traversed, augmentations, grafts (phases that grafted rather than
    rebuilt), bottom_up_levels, and edges_top_down / edges_bottom_up /
    edges_graft (edges scanned per kind of step; int32, saturating).
    ``axis``: inside ``shard_map`` over a graph whose column-major edges
    (``g.by_col``) are split over that mesh axis, the vertex arrays
    replicated (:mod:`jaxmatch.bipartite.sharded`): each level's claims, the
    smallest column per row, are combined by a ``lax.pmin`` and the edge
    counts by a ``lax.psum``, so every device grows the one-device forest.

    >>> from jaxmatch import BipartiteGraph
    >>> from jaxmatch.bipartite.init import empty_matching
    >>> g = BipartiteGraph.from_edges([0, 1, 1, 2, 2], [0, 0, 1, 1, 2])
    >>> row_mate, col_mate, status, stats = ms_bfs_graft(g, *empty_matching(g))
    >>> row_mate.tolist()[:3], int(status), int(stats["augmentations"])
    ([0, 1, 2], 0, 3)
    """
    max_iters = default_phases(g) if max_iters is None else max_iters  # may be traced
    alpha = float(alpha)
    s = initial_state(g, row_mate, col_mate)
    more = (lambda s: True) if max_levels is None else (lambda s: s.levels < max_levels)
    s = lax.while_loop(lambda s: s.found & (s.phase < max_iters) & more(s),
                       lambda s: phase(g, s, alpha=alpha, graft=graft, direction_optimizing=direction_optimizing,
                                       axis=axis),
                       s)
    status = jnp.where(s.capped, Status.MAX_BFS_LEVELS,
                       jnp.where(s.found, Status.MAX_ITERS, Status.CONVERGED)).astype(jnp.int32)
    return s.row_mate, s.col_mate, status, stats_of(s)
