"""The Dulmage-Mendelsohn decomposition of a sparse matrix's pattern, on the device.

For a maximum matching M of the bipartite graph of an ``m x n`` pattern A,
alternating paths split rows and columns into three coarse parts, the same
for every maximum matching (Dulmage and Mendelsohn, "Coverings of bipartite
graphs", Canad. J. Math. 10, 1958):

- horizontal (underdetermined) H: the columns reachable from an unmatched
  column by an alternating path (column -> row by an entry, row -> its
  matched column), with the rows reached; H has more columns than rows
  when it is not empty;
- vertical (overdetermined) V: the rows reachable from an unmatched row
  (row -> column by an entry, column -> its matched row), with the columns
  reached; more rows than columns;
- square S: the rest, perfectly matched. No S or V row has an entry in an
  H column (it would be reached from an unmatched column) and no S column
  has an entry in a V row (it would be reached from an unmatched row), so
  ``A(p, q)`` with H first, S next and V last is block upper triangular.

The fine decomposition splits S into the strongly connected components of
its matched digraph: one node per S column c, and an arc ``c -> c'`` when
the row matched to c has an entry in column c' (the permuted matrix has the
matching on its diagonal, so node c is diagonal position c and the arc is
the entry in row c, column c'). Ordered topologically (arcs from earlier
to later blocks), the entries fall on or above the block diagonal: the
permuted matrix is block upper triangular with irreducible square diagonal
blocks. The output follows CSparse's ``cs_dmperm`` (MATLAB's ``dmperm``):
``p = [R1 R2 R3 R0]``, ``q = [C0 C1 C2 C3]`` (C0 the unmatched columns, R0
the unmatched rows; H = (R1, C0 C1), S = (R2, C2), V = (R3 R0, C3)),
``rr`` / ``cc`` the coarse boundaries, ``r`` / ``s`` the fine ones. As
``cs_dmperm`` does, H and V are one fine block each (when not empty); their
connected components are not split further.

Steps, each a bounded ``lax.while_loop`` over the padded CSR entries, and why:

1. Maximum matching: :func:`jaxmatch.maximum_matching` with the caller's
   ``method`` (default ``"pr"``, the library's default: G-PR with its
   persistent kernels on the GPU, which matter on the long alternating
   paths of block triangular matrices); any maximum matching gives the same
   parts and blocks. Its status is the decomposition's first.
2. Coarse: both alternating searches at once, level-synchronous: a step is
   one ``segment_max`` over the entries of each CSR direction plus a
   scatter through the mates. Each step that changes anything adds a
   matched column, so ``min(row_cap, col_cap) + 2`` steps bound it.
3. Fine: strongly connected components by trimming and colouring (the
   Multistep/Orzan scheme without its pivot phase), every round three
   phases of one loop: trim removes every node with no in- or no out-arc
   among the live nodes (a singleton component; one step trims a whole
   layer, which takes triangular parts apart fast); colouring propagates two
   min-labels to their fixed points, the least live id that reaches a node
   (forward) and the least one it reaches (backward); then every forward
   root (label == id) collects, backwards inside its label, the nodes that
   reach it, and every backward root, forwards inside its label, the nodes
   it reaches: exactly the root's component, for all roots at once (a root
   is the least id of its component, so both find a component under the
   same name). The least live id is a root both ways, so every round ends
   at least one component; the two labels together take a chain of cycles
   apart in one round whichever way its ids run (the forward label alone
   needs a round per cycle when the ids rise along the chain). Fixed points
   of array steps, with no DFS (Tarjan's is sequential), so they run under
   ``vmap``.
4. Order: longest-path levels of the condensation (a component's level is 1
   + the largest level of a component with an arc into it), by the same
   bounded propagation, on the condensation's own arcs (:func:`levels`);
   sorting components by (level, root id) is a topological order,
   deterministic. Then one ``lax.sort`` of the columns by
   (part, level, component, id) gives ``q``; the rows follow their matched
   columns, the unmatched rows last; block boundaries by compaction.

Cost: O(``|E|``) per step of the coarse and component loops, O(blocks + arcs
between blocks) per step of the order loop; the coarse steps are bounded by
the alternating depth, the colouring by O(n) rounds of O(n) steps in the
worst case (each round ends at least one component; few rounds in
practice), the levels by the condensation's longest path.
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxmatch._ops import (CONVERGED, INT_MAX, MAX_ITERS, compact, is_traced, prefix,
                           smallest_fit, switch, take, trim)
from jaxmatch._validate import INT32_MAX, check_flag, check_not_batch, check_positive, check_type
from jaxmatch.bipartite import maximum_matching
from jaxmatch.graph import BipartiteGraph, GraphInputError
from jaxmatch.status import settle, with_status_name

__all__ = ["DMResult", "dulmage_mendelsohn"]

TRIM, COLOUR, REACH = 0, 1, 2   # phases of the component loop
ORDER_MIN = 1 << 12   # the smallest static length of the component and order loops
SCC_FACTOR = 4        # between the component loop's lengths
ORDER_FACTOR = 8      # between the order loop's lengths


@with_status_name
class DMResult(NamedTuple):
    """A Dulmage-Mendelsohn decomposition, as returned by :func:`dulmage_mendelsohn`.

    ``A[row_perm][:, col_perm]`` is block upper triangular: fine block k is
    rows ``row_blocks[k]:row_blocks[k+1]`` by columns
    ``col_blocks[k]:col_blocks[k+1]``. Eagerly the arrays have the true sizes
    (``row_blocks`` and ``col_blocks`` ``n_blocks + 1`` entries); under
    ``jit``/``vmap`` the capacities: the permutations hold -1 past the true
    sizes, the block boundaries ``min(row_cap, col_cap) + 3`` entries, those
    past ``n_blocks`` repeating the last (``n_rows`` and ``n_cols``).

    Attributes:
        row_perm: int32 ``[n_rows]``, MATLAB ``dmperm``'s p: row
            ``row_perm[k]`` of A is row k of the permuted matrix.
        col_perm: int32 ``[n_cols]``, ``dmperm``'s q.
        row_blocks: int32 ``[n_blocks + 1]``, ``dmperm``'s r.
        col_blocks: int32 ``[n_blocks + 1]``, ``dmperm``'s s.
        coarse_rows: int32 ``[5]``, ``cs_dmperm``'s rr: ``[0, r1, r2, r3, m]``;
            rows ``0:r1`` are the horizontal part, ``r1:r2`` the square part,
            ``r2:m`` the vertical part (``r2:r3`` matched, ``r3:m`` unmatched).
        coarse_cols: int32 ``[5]``, cc: ``[0, c1, c2, c3, n]``; columns
            ``0:c1`` unmatched and ``c1:c2`` matched (horizontal part),
            ``c2:c3`` square, ``c3:n`` vertical.
        n_blocks: int32 scalar, the number of fine blocks (H and V one each).
        structural_rank: int32 scalar, the size of a maximum matching.
        row_mate: int32 ``[n_rows]``, the maximum matching used (-1 unmatched).
        col_mate: int32 ``[n_cols]``.
        status: int32 :class:`jaxmatch.Status`: CONVERGED, or MAX_ITERS when
            a loop bound stopped it (the decomposition is then not valid).
        stats: ``iterations`` (the decomposition's loop steps, all loops),
            ``matching_iterations`` (the matching solver's loop steps), ``coarse_steps``,
            ``scc_steps``, ``order_steps``, ``square_blocks``.
    """

    row_perm: jax.Array
    col_perm: jax.Array
    row_blocks: jax.Array
    col_blocks: jax.Array
    coarse_rows: jax.Array
    coarse_cols: jax.Array
    n_blocks: jax.Array
    structural_rank: jax.Array
    row_mate: jax.Array
    col_mate: jax.Array
    status: jax.Array
    stats: dict[str, Any]


class CoarseState(NamedTuple):
    col_h: jax.Array     # [col_cap] column reached from an unmatched column
    row_h: jax.Array     # [row_cap]
    row_v: jax.Array     # [row_cap] row reached from an unmatched row
    col_v: jax.Array     # [col_cap]
    changed: jax.Array
    it: jax.Array


class SCCState(NamedTuple):
    live: jax.Array      # [col_cap] square column not yet in a component
    comp: jax.Array      # [col_cap] component (its root's id); col_cap outside the square part
    fcol: jax.Array      # [col_cap] forward label: the least live id that reaches the node
    bcol: jax.Array      # [col_cap] backward label: the least live id the node reaches
    freach: jax.Array    # [col_cap] reaches its forward root inside its forward label
    breach: jax.Array    # [col_cap] reached from its backward root inside its backward label
    phase: jax.Array
    it: jax.Array


class LevelState(NamedTuple):
    level: jax.Array     # [col_cap] longest-path level of each node's component
    changed: jax.Array
    it: jax.Array


def _reach(csr, start, seen_tgt, mate, n_tgt: int, n_src: int):
    """One alternating step: targets with an entry from a ``start`` source, and their mates."""
    hit = take(start, csr.src, False).astype(jnp.int32)
    tgt = jax.ops.segment_max(hit, csr.indices, n_tgt) > 0
    tgt = tgt | seen_tgt
    new_src = jnp.zeros(n_src, bool).at[jnp.where(tgt & (mate >= 0), mate, n_src)].set(True, mode="drop")
    return tgt, new_src


def coarse(g, row_mate, col_mate, max_steps: int) -> CoarseState:
    """Both alternating searches (from unmatched columns, from unmatched rows), level-synchronous."""
    cols = jnp.arange(g.col_cap) < g.n_cols
    rows = jnp.arange(g.row_cap) < g.n_rows

    def step(s):
        row_h, gain_h = _reach(g.by_col, s.col_h, s.row_h, row_mate, g.row_cap, g.col_cap)
        col_v, gain_v = _reach(g.by_row, s.row_v, s.col_v, col_mate, g.col_cap, g.row_cap)
        col_h, row_v = s.col_h | gain_h, s.row_v | gain_v
        changed = (jnp.any(col_h != s.col_h) | jnp.any(row_h != s.row_h)
                   | jnp.any(row_v != s.row_v) | jnp.any(col_v != s.col_v))
        return CoarseState(col_h, row_h, row_v, col_v, changed, s.it + 1)

    s = CoarseState(cols & (col_mate < 0), jnp.zeros(g.row_cap, bool), rows & (row_mate < 0),
                    jnp.zeros(g.col_cap, bool), jnp.bool_(True), jnp.int32(0))
    return lax.while_loop(lambda s: s.changed & (s.it < max_steps), step, s)


def _arcs(g, row_mate, square):
    """The square part's matched digraph: arc ``row_mate[i] -> j`` for every entry (i, j) of S."""
    u = take(row_mate, g.by_row.src, -1)
    w = g.by_row.indices
    ok = take(square, u, False) & take(square, w, False) & (u != w)
    return jnp.where(ok, u, g.col_cap), jnp.where(ok, w, g.col_cap)


def _min_along(label, a, b, on, n: int):
    """Per node, the least ``label[a]`` over the live arcs ``a -> b`` into it."""
    return jax.ops.segment_min(jnp.where(on, take(label, a, INT_MAX), INT_MAX), b, n)


def _any_along(flag, label, a, b, on, n: int):
    """Per node, whether a live arc ``a -> b`` into it, inside one label, starts at a ``flag`` node."""
    same = on & (take(label, a, -1) == take(label, b, -2)) & take(flag, a, False)
    return jax.ops.segment_max(same.astype(jnp.int32), b, n) > 0


def _scc_step(s: SCCState, u, w, n: int) -> SCCState:
    ids = jnp.arange(n, dtype=jnp.int32)
    on = take(s.live, u, False) & take(s.live, w, False)

    def trim_(s):
        deg_in = jax.ops.segment_sum(on.astype(jnp.int32), w, n)
        deg_out = jax.ops.segment_sum(on.astype(jnp.int32), u, n)
        cut = s.live & ((deg_in == 0) | (deg_out == 0))
        nothing = ~jnp.any(cut)
        return s._replace(live=s.live & ~cut, comp=jnp.where(cut, ids, s.comp), fcol=ids, bcol=ids,
                          phase=jnp.where(nothing, COLOUR, TRIM).astype(jnp.int32))

    def colour(s):       # both labels to their fixed points
        fcol = jnp.where(s.live, jnp.minimum(s.fcol, _min_along(s.fcol, u, w, on, n)), s.fcol)
        bcol = jnp.where(s.live, jnp.minimum(s.bcol, _min_along(s.bcol, w, u, on, n)), s.bcol)
        still = jnp.all(fcol == s.fcol) & jnp.all(bcol == s.bcol)
        return s._replace(fcol=fcol, bcol=bcol, freach=s.live & (fcol == ids), breach=s.live & (bcol == ids),
                          phase=jnp.where(still, REACH, COLOUR).astype(jnp.int32))

    def reach(s):        # every root's component: back to a forward root, on from a backward root
        freach = s.freach | (_any_along(s.freach, s.fcol, w, u, on, n) & s.live)
        breach = s.breach | (_any_along(s.breach, s.bcol, u, w, on, n) & s.live)
        still = jnp.all(freach == s.freach) & jnp.all(breach == s.breach)
        done = (freach | breach) & still      # both find the same component with the same root
        comp = jnp.where(done, jnp.where(freach, s.fcol, s.bcol), s.comp)
        return s._replace(live=s.live & ~done, comp=comp, freach=freach, breach=breach,
                          phase=jnp.where(still, TRIM, REACH).astype(jnp.int32))

    s = switch(s.phase, [trim_, colour, reach], s)
    return s._replace(it=s.it + 1)


def components(u, w, square, n: int, max_steps) -> SCCState:
    """Strongly connected components of the arcs ``u -> w`` on the ``square`` nodes (see the module).

    The arcs between live nodes shrink as components are found, so the loop
    runs on the smallest of a ladder of static lengths (a factor
    ``SCC_FACTOR`` apart, ``lax.switch``) that holds them: the live arcs are
    compacted to the front, the steps run on that length until the live arcs
    fit the next one, and so on; a step costs O(live arcs' length)."""
    ids = jnp.arange(n, dtype=jnp.int32)
    no = jnp.zeros(n, bool)
    s = SCCState(square, jnp.full(n, n, jnp.int32), ids, ids, no, no, jnp.int32(TRIM), jnp.int32(0))
    going = lambda s: jnp.any(s.live) & (s.it < max_steps)   # noqa: E731
    sizes = _ladder(u.shape[0], SCC_FACTOR)

    def live_arcs(s, a=u, b=w):
        return take(s.live, a, False) & take(s.live, b, False)

    def run(i, s):
        on = live_arcs(s)
        (a, _), (b, _) = compact(on, u, n), compact(on, w, n)
        a, b = a[:sizes[i]], b[:sizes[i]]
        floor = sizes[i + 1] if i + 1 < len(sizes) else -1

        def body(c):
            s, _ = c
            return _scc_step(s, a, b, n), jnp.sum(live_arcs(s, a, b), dtype=jnp.int32)
        return lax.while_loop(lambda c: going(c[0]) & (c[1] > floor), body, (s, jnp.int32(sizes[i])))[0]

    if len(sizes) == 1:
        return lax.while_loop(going, lambda s: _scc_step(s, u, w, n), s)
    return lax.while_loop(going, lambda s: switch(smallest_fit(sizes, jnp.sum(live_arcs(s), dtype=jnp.int32)),
                                                  [partial(run, i) for i in range(len(sizes))], s), s)


def _ladder(top: int, factor: int) -> list[int]:
    """Static lengths ``top, top / factor, ...`` down to ``ORDER_MIN``."""
    sizes = [top]
    while sizes[-1] // factor >= ORDER_MIN:
        sizes.append(sizes[-1] // factor)
    return sizes


def levels(u, w, comp, n: int, max_steps: int) -> LevelState:
    """Longest-path levels of the condensation, every node carrying its component's level.

    The loop runs on the condensation itself: the components renumbered
    ``0 .. blocks - 1`` and their distinct arcs (one sort), compacted to the
    front, on the smallest of a ladder of static lengths (``ORDER_FACTOR`` apart,
    ``lax.switch``) that holds both. A step then costs O(blocks + arcs
    between blocks), not O(``|E|``): the loop takes as many steps as the
    condensation's longest path, tens of thousands on a block triangular
    matrix with many small blocks."""
    e = u.shape[0]
    ids = jnp.arange(n, dtype=jnp.int32)
    dense = prefix(comp == ids, dtype=jnp.int32) - 1        # a component's number: its root's rank
    blocks = jnp.sum(comp == ids, dtype=jnp.int32)
    cid = jnp.where(comp < n, take(dense, comp, 0), n)
    a, b = take(cid, u, n), take(cid, w, n)
    cross = (a < n) & (b < n) & (a != b)
    a, b = lax.sort((jnp.where(cross, a, n), jnp.where(cross, b, n)), num_keys=2)
    first = (a < n) & ((jnp.arange(e) == 0) | (a != jnp.roll(a, 1)) | (b != jnp.roll(b, 1)))
    (a, arcs), (b, _) = compact(first, a, n), compact(first, b, n)

    def run(size):
        sa, sn = min(size, e), min(size, n)
        src, dst = a[:sa], b[:sa]

        def step(s):
            cand = jax.ops.segment_max(jnp.where(src < sn, take(s.level, src, -1) + 1, 0), dst, sn)
            level = jnp.maximum(s.level, cand)
            return LevelState(level, jnp.any(level != s.level), s.it + 1)

        s = lax.while_loop(lambda s: s.changed & (s.it < max_steps), step,
                           LevelState(jnp.zeros(sn, jnp.int32), jnp.bool_(True), jnp.int32(0)))
        return s._replace(level=jnp.zeros(n, jnp.int32).at[:sn].set(s.level))

    sizes = _ladder(max(e, n), ORDER_FACTOR)
    s = switch(smallest_fit(sizes, jnp.maximum(arcs, blocks)), [partial(run, z) for z in sizes])
    return s._replace(level=jnp.where(comp < n, take(s.level, cid, 0), 0))


@jax.jit
def _coarse(g: BipartiteGraph, row_mate, col_mate) -> CoarseState:
    """Step 2 (the module docstring) from a maximum matching at the graph's capacities."""
    return coarse(g, row_mate, col_mate, min(g.row_cap, g.col_cap) + 2)


@jax.jit
def _fine(g: BipartiteGraph, row_mate, col_mate, cs: CoarseState, m_status, m_iters, scc_steps):
    """Steps 3 and 4 (components, order) and the result, from the matching and the coarse parts."""
    rc, cc_ = g.row_cap, g.col_cap
    k = min(rc, cc_)
    nr, nc = g.n_rows, g.n_cols
    cols, rows = jnp.arange(cc_, dtype=jnp.int32), jnp.arange(rc, dtype=jnp.int32)
    real_col, real_row = cols < nc, rows < nr

    square = real_col & ~cs.col_h & ~cs.col_v
    u, w = _arcs(g, row_mate, square)
    sc = components(u, w, square, cc_, scc_steps)
    lv = levels(u, w, sc.comp, cc_, k + 2)

    # columns by (part, level, component, id); parts C0 C1 C2 C3 as cs_dmperm, padding last
    part = jnp.where(~real_col, 4, jnp.where(col_mate < 0, 0, jnp.where(cs.col_h, 1,
                     jnp.where(square, 2, 3)))).astype(jnp.int32)
    root = jnp.where(square, sc.comp, 0)
    _, _, root_sorted, col_order = lax.sort((part, lv.level, root, cols), num_keys=4)
    col_pos = jnp.zeros(cc_, jnp.int32).at[col_order].set(cols)
    row_key = jnp.where(row_mate >= 0, take(col_pos, row_mate, 0), cc_ + rows)   # unmatched rows last
    _, row_order = lax.sort((jnp.where(real_row, row_key, INT_MAX), rows), num_keys=2)

    count = lambda x: jnp.sum(x, dtype=jnp.int32)
    n0, n1, n2 = count(real_col & (col_mate < 0)), count(part == 1), count(square)
    n3 = count(part == 3)
    coarse_cols = jnp.stack([jnp.int32(0), n0, n0 + n1, n0 + n1 + n2, nc.astype(jnp.int32)])
    coarse_rows = jnp.stack([jnp.int32(0), n1, n1 + n2, n1 + n2 + n3, nr.astype(jnp.int32)])
    c2, c3, r1, r2 = n0 + n1, n0 + n1 + n2, n1, n1 + n2

    # fine blocks: H, the square components in sorted order, V
    starts = (cols >= c2) & (cols < c3) & ((cols == c2) | (root_sorted != jnp.roll(root_sorted, 1)))
    nb1 = count(starts)
    slot = jnp.where(starts, prefix(starts, dtype=jnp.int32) - 1, cc_)
    sq_start = jnp.zeros(cc_, jnp.int32).at[slot].set(cols, mode="drop")
    lead, trail = (c2 > 0).astype(jnp.int32), (r2 < nr).astype(jnp.int32)
    n_blocks = lead + nb1 + trail
    b = jnp.arange(k + 3, dtype=jnp.int32)
    sq = take(sq_start, b - lead, 0)
    in_sq, in_trail = (b >= lead) & (b < lead + nb1), b == lead + nb1
    col_blocks = jnp.where(b < lead, 0, jnp.where(in_sq, sq, jnp.where(in_trail & (trail > 0), c3, nc)))
    row_blocks = jnp.where(b < lead, 0, jnp.where(in_sq, sq - c2 + r1, jnp.where(in_trail & (trail > 0), r2, nr)))
    col_blocks = jnp.where(b > n_blocks, nc, col_blocks).astype(jnp.int32)
    row_blocks = jnp.where(b > n_blocks, nr, row_blocks).astype(jnp.int32)

    hit = (cs.changed & (cs.it >= k + 2)) | jnp.any(sc.live) | (lv.changed & (lv.it >= k + 2))
    status = jnp.where(m_status != CONVERGED, m_status, jnp.where(hit, MAX_ITERS, CONVERGED)).astype(jnp.int32)
    stats = dict(iterations=cs.it + sc.it + lv.it, matching_iterations=m_iters,
                 coarse_steps=cs.it, scc_steps=sc.it, order_steps=lv.it, square_blocks=nb1)
    return DMResult(jnp.where(real_row, row_order, -1), jnp.where(real_col, col_order, -1), row_blocks,
                    col_blocks, coarse_rows, coarse_cols, n_blocks, count(row_mate >= 0), row_mate, col_mate,
                    status, stats)


def matching(g: BipartiteGraph, method: str):
    """Step 1: ``(row_mate, col_mate, status, iterations)`` of :func:`jaxmatch.maximum_matching`,
    the mates at the graph's capacities (-1 past the true sizes)."""
    m = maximum_matching(g, method=method, throw=False)

    def pad(mate, cap):
        return mate if mate.shape[-1] == cap else jnp.full(cap, -1, jnp.int32).at[:mate.shape[0]].set(mate)
    return pad(m.row_mate, g.row_cap), pad(m.col_mate, g.col_cap), m.status, m.stats["iterations"]


def default_scc_steps(g) -> int:
    """The component loop's bound: O(n^2) steps for n square nodes (never hit)."""
    k = min(g.row_cap, g.col_cap) + 2
    return min(3 * k * k + 16, INT32_MAX)


def dulmage_mendelsohn(g: BipartiteGraph, *, method: str = "pr", max_iters: int | None = None,
                       throw: bool = True) -> DMResult:
    """The Dulmage-Mendelsohn decomposition of a matrix's pattern: MATLAB's ``dmperm``, on the device.

    Finds permutations p, q such that ``A[p][:, q]`` is block upper
    triangular with the coarse parts H (more columns than rows), S (square,
    perfectly matched) and V (more rows than columns) on the diagonal, and S
    split into irreducible square blocks (the strongly connected components
    of its matched digraph). A maximum matching lies on the block diagonal,
    so ``structural_rank`` is its size. Same conventions as CSparse's
    ``cs_dmperm`` (T. A. Davis, *Direct Methods for Sparse Linear Systems*,
    SIAM 2006, ch. 7; A. Pothen and C.-J. Fan, "Computing the block
    triangular form of a sparse matrix", ACM TOMS 16, 1990); the algorithm
    (maximum matching, alternating BFS, components by colouring, topological
    order by levels) is in :mod:`jaxmatch.bipartite.dulmage_mendelsohn`. The
    coarse parts and the fine blocks are unique; their order within S and
    the order inside a block may differ from ``dmperm``'s. Cost: the
    matching, then O(``|E|``) per loop step. Works eagerly, under ``jax.jit``
    and under ``jax.vmap`` over a batch from :func:`jaxmatch.stack`.
    :func:`jaxmatch.certify.check_dulmage_mendelsohn` checks a result.

    Args:
        g: the :class:`jaxmatch.BipartiteGraph` of the pattern (rows x columns).
        method: the maximum matching's method, as in
            :func:`jaxmatch.maximum_matching` (default ``"pr"``); every
            method gives the same decomposition.
        max_iters: bound on the component loop's steps (default
            ``3 (k + 2)^2 + 16``, k the smaller capacity: never hit); a
            traced value, changing it does not recompile.
        throw: eagerly, raise :class:`jaxmatch.SolverError` when a bound
            stopped it (default True); under ``jit``/``vmap`` read ``status``.

    Returns:
        A :class:`DMResult`.

    Raises:
        GraphInputError: when ``g`` is not a single BipartiteGraph (a batch
            only inside ``vmap``), ``method`` is not a matching method or
            ``max_iters`` is not a positive int.
        SolverError: eagerly with ``throw=True``, when a bound stopped it.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 0, 1, 2, 2], [0, 1, 1, 1, 2])
        >>> d = jaxmatch.dulmage_mendelsohn(g)
        >>> int(d.structural_rank), int(d.n_blocks), d.status_name
        (3, 3, 'converged')
        >>> d.row_perm.tolist(), d.col_perm.tolist(), d.row_blocks.tolist()
        ([0, 2, 1], [0, 2, 1], [0, 1, 2, 3])
        >>> jaxmatch.certify.check_dulmage_mendelsohn(g, d)
    """
    check_type(g, BipartiteGraph, "BipartiteGraph.from_edges or jaxmatch.from_scipy")
    check_not_batch(g.n_rows, "graphs (from jaxmatch.stack)", "jax.vmap(jaxmatch.dulmage_mendelsohn)(batch)")
    if g.row_cap + g.col_cap + 2 > INT32_MAX:
        raise GraphInputError("row_cap + col_cap must stay below 2**31 - 2 (keys are int32)")
    check_positive(max_iters, "max_iters")
    check_flag(throw, "throw")
    steps = default_scc_steps(g) if max_iters is None else min(int(max_iters), INT32_MAX)
    row_mate, col_mate, m_status, m_iters = matching(g, method)
    cs = _coarse(g, row_mate, col_mate)
    res = _fine(g, row_mate, col_mate, cs, m_status, m_iters, jnp.int32(steps))
    if not is_traced(g.n_rows):
        nr, nc, nb = int(g.n_rows), int(g.n_cols), int(res.n_blocks)
        res = res._replace(row_perm=trim(res.row_perm, nr), col_perm=trim(res.col_perm, nc),
                           row_blocks=trim(res.row_blocks, nb + 1), col_blocks=trim(res.col_blocks, nb + 1),
                           row_mate=trim(res.row_mate, nr), col_mate=trim(res.col_mate, nc))
    return settle("dulmage_mendelsohn", res, throw)
