"""Certificate of a Dulmage-Mendelsohn decomposition, in numpy and scipy.

A result of :func:`jaxmatch.dulmage_mendelsohn` (or any object with its
fields, MATLAB ``dmperm``'s p, q, r, s and CSparse's rr, cc) is right when:

1. p and q are permutations, the fine boundaries r and s run from 0 to m and
   n, the coarse ones rr and cc are ``[0, ., ., ., m]`` and ``[0, ., ., ., n]``;
2. ``A[p][:, q]`` has no entry below the block diagonal of the fine blocks;
3. the matching the decomposition implies (row ``rr[0] + t`` with column
   ``cc[1] + t`` in H, ``rr[1] + t`` with ``cc[2] + t`` in S, ``rr[2] + t``
   with ``cc[3] + t`` in V) consists of entries, agrees with the result's
   mates, and is maximum, proved by a Koenig vertex cover of its size
   (:func:`jaxmatch.certify.check_maximum_matching`): the structural rank;
4. with that maximum matching, the rows and columns reachable by alternating
   paths from the unmatched columns are exactly H's, and those reachable from
   the unmatched rows exactly V's (the coarse parts are unique, so any maximum
   matching decides them);
5. H and V are one fine block each (as in ``cs_dmperm``), S's blocks tile it
   with square blocks, and the matched digraph of each S block is strongly
   connected: one :func:`scipy.sparse.csgraph.connected_components` over the
   matched digraph of all S blocks (no arc leaves a block) must find one
   component per block. With 2, that makes them exactly the strongly
   connected components.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from jaxmatch.certify._common import CertificateError, _mates
from jaxmatch.certify.matching import _biadjacency, check_maximum_matching


def _ids(x, n: int, name: str) -> np.ndarray:
    """A permutation of ``range(n)`` (entries past n, as a padded result holds, must be -1)."""
    a = np.asarray(x).astype(np.int64).ravel()
    if a.size < n or np.any(a[n:] != -1):
        raise CertificateError(f"{name} has {a.size} entries, expected {n}")
    a = a[:n]
    if not np.array_equal(np.sort(a), np.arange(n)):
        raise CertificateError(f"{name} is not a permutation of 0..{n - 1}")
    return a


def _bounds(x, size: int, count: int, name: str) -> np.ndarray:
    a = np.asarray(x).astype(np.int64).ravel()
    if a.size < count:
        raise CertificateError(f"{name} has {a.size} entries, expected {count}")
    a = a[:count]
    if a[0] != 0 or a[-1] != size or np.any(np.diff(a) < 0):
        raise CertificateError(f"{name} = {a.tolist()} must rise from 0 to {size}")
    return a


def _reached(a: sp.csr_array, mate_of_row: np.ndarray, start_cols: np.ndarray):
    """Rows and columns reachable from ``start_cols`` by alternating paths (column -> row by an
    entry, row -> its matched column), by one BFS of scipy on a digraph with a super source."""
    m, n = a.shape
    coo = a.tocoo()
    matched = np.flatnonzero(mate_of_row >= 0)
    src = np.concatenate([m + coo.col, matched, np.full(start_cols.size, m + n)])
    dst = np.concatenate([coo.row, m + mate_of_row[matched], m + start_cols])
    d = sp.csr_array((np.ones(src.size, np.int8), (src, dst)), shape=(m + n + 1, m + n + 1))
    seen = np.zeros(m + n + 1, bool)
    seen[breadth_first_order(d, m + n, directed=True, return_predecessors=False)] = True
    return seen[:m], seen[m:m + n]


def check_dulmage_mendelsohn(g, result) -> None:
    """Raise unless ``result`` is a Dulmage-Mendelsohn decomposition of ``g``'s pattern.

    The checks are those of the module docstring: permutations, no entry
    below the fine block diagonal, a maximum matching on the block diagonal,
    the coarse parts by alternating reachability, strongly connected square
    blocks. ``O(|E| + (m + n))`` (no maximum matching is recomputed).

    Args:
        g: a :class:`jaxmatch.BipartiteGraph`, or a scipy sparse matrix whose
            nonzeros are the entries.
        result: a :class:`jaxmatch.bipartite.dulmage_mendelsohn.DMResult`
            (eager, or one graph's padded result under ``jit``).

    Raises:
        CertificateError: naming the first property that fails.
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse matrix.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
        >>> d = jaxmatch.dulmage_mendelsohn(g)
        >>> jaxmatch.certify.check_dulmage_mendelsohn(g, d)
        >>> try:
        ...     jaxmatch.certify.check_dulmage_mendelsohn(g, d._replace(col_perm=d.col_perm[::-1]))
        ... except jaxmatch.certify.CertificateError as e:
        ...     print(e)
        entry (0, 0) of A lies in fine block row 1 and column 0: below the block diagonal
    """
    a = _biadjacency(g)
    m, n = a.shape
    p, q = _ids(result.row_perm, m, "row_perm"), _ids(result.col_perm, n, "col_perm")
    nb = int(result.n_blocks)
    if nb < 0:
        raise CertificateError(f"n_blocks = {nb} is negative")
    r = _bounds(result.row_blocks, m, nb + 1, "row_blocks")
    s = _bounds(result.col_blocks, n, nb + 1, "col_blocks")
    if np.asarray(result.coarse_rows).size != 5 or np.asarray(result.coarse_cols).size != 5:
        raise CertificateError("coarse_rows and coarse_cols must have 5 entries")
    rr = _bounds(result.coarse_rows, m, 5, "coarse_rows")
    cc = _bounds(result.coarse_cols, n, 5, "coarse_cols")

    # 2. block upper triangular
    pinv, qinv = np.empty(m, np.int64), np.empty(n, np.int64)
    pinv[p], qinv[q] = np.arange(m), np.arange(n)
    coo = a.tocoo()
    bi = np.searchsorted(r, pinv[coo.row], side="right") - 1
    bj = np.searchsorted(s, qinv[coo.col], side="right") - 1
    bad = np.flatnonzero(bi > bj)
    if bad.size:
        e = bad[0]
        raise CertificateError(f"entry ({coo.row[e]}, {coo.col[e]}) of A lies in fine block row {bi[e]} and "
                               f"column {bj[e]}: below the block diagonal")

    # 3. the block diagonal's matching: entries, the result's mates, maximum
    h, sq, v = rr[1] - rr[0], rr[2] - rr[1], rr[3] - rr[2]
    if (cc[2] - cc[1], cc[3] - cc[2], cc[4] - cc[3]) != (h, sq, v):
        raise CertificateError(f"coarse_rows {rr.tolist()} and coarse_cols {cc.tolist()} do not pair matched "
                               "rows with matched columns (H, S and V need equal matched counts)")
    pr = np.concatenate([p[rr[0]:rr[1]], p[rr[1]:rr[2]], p[rr[2]:rr[3]]])
    pc = np.concatenate([q[cc[1]:cc[2]], q[cc[2]:cc[3]], q[cc[3]:cc[4]]])
    missing = np.flatnonzero(~np.isin(pr * n + pc, coo.row.astype(np.int64) * n + coo.col))
    if missing.size:
        raise CertificateError(f"the diagonal pairs row {pr[missing[0]]} with column {pc[missing[0]]}, not an entry")
    mate = np.full(m, -1, np.int64)
    mate[pr] = pc
    rm = _mates(np.asarray(result.row_mate).ravel()[:m], m, "row_mate")
    if not np.array_equal(rm, mate):
        i = int(np.flatnonzero(rm != mate)[0])
        raise CertificateError(f"row_mate[{i}] = {rm[i]}, but the permuted diagonal matches row {i} to {mate[i]}")
    cm = _mates(np.asarray(result.col_mate).ravel()[:n], n, "col_mate")
    col_mate = np.full(n, -1, np.int64)
    col_mate[pc] = pr
    if not np.array_equal(cm, col_mate):
        j = int(np.flatnonzero(cm != col_mate)[0])
        raise CertificateError(f"col_mate[{j}] = {cm[j]}, but the permuted diagonal matches column {j} to "
                               f"{col_mate[j]}")
    try:       # maximum by a Koenig cover of its size, O(|V| + |E|), not by recomputing a matching
        check_maximum_matching(a, mate, col_mate)
    except CertificateError as e:
        raise CertificateError(f"the diagonal matching is not maximum: {e}") from None
    if int(result.structural_rank) != pr.size:
        raise CertificateError(f"structural_rank is {int(result.structural_rank)}, but the diagonal (maximum) "
                               f"matching has {pr.size} entries")

    # 4. the coarse parts by alternating reachability from the unmatched columns and rows
    rows_h, cols_h = _reached(a, mate, np.flatnonzero(col_mate < 0))
    cols_v, rows_v = _reached(a.T.tocsr(), col_mate, np.flatnonzero(mate < 0))
    for name, got, want in (("horizontal rows", p[:rr[1]], rows_h), ("horizontal columns", q[:cc[2]], cols_h),
                            ("vertical rows", p[rr[2]:], rows_v), ("vertical columns", q[cc[3]:], cols_v)):
        if not np.array_equal(np.sort(got), np.flatnonzero(want)):
            raise CertificateError(f"the {name} are {np.sort(got).tolist()}, but alternating paths reach "
                                   f"{np.flatnonzero(want).tolist()}")
    if cc[2] > 0 and cc[2] <= rr[1] or rr[2] < m and m - rr[2] <= n - cc[3]:
        raise CertificateError("the horizontal part needs more columns than rows, the vertical part more rows")

    # 5. fine blocks: H one block, S tiled by square strongly connected blocks, V one block
    k = 0
    if cc[2] > 0:
        if (r[1], s[1]) != (rr[1], cc[2]):
            raise CertificateError(f"fine block 0 must be the horizontal part (rows 0:{rr[1]}, columns 0:{cc[2]})")
        k = 1
    first = k
    while k < nb and r[k] < rr[2]:
        lo, hi, clo, chi = r[k], r[k + 1], s[k], s[k + 1]
        if lo < rr[1] or hi > rr[2] or clo - cc[2] != lo - rr[1] or chi - clo != hi - lo or hi == lo:
            raise CertificateError(f"fine block {k} (rows {lo}:{hi}, columns {clo}:{chi}) is not a square "
                                   "block of the square part")
        k += 1
    # the matched digraph of all square blocks at once (diagonal t's row reaches column t' of its
    # block; no arc leaves a block): one strongly connected component per block iff every block is
    # irreducible (each block holds at least one)
    inside = (bi == bj) & (bi >= first) & (bi < k)
    t_from, t_to = pinv[coo.row[inside]] - rr[1], qinv[coo.col[inside]] - cc[2]
    ncomp, label = connected_components(sp.csr_array((np.ones(t_from.size, np.int8), (t_from, t_to)),
                                                     shape=(sq, sq)), directed=True, connection="strong")
    if ncomp != k - first:              # a block holding two components: the first such
        block = np.searchsorted(r[first:k + 1] - rr[1], np.arange(sq), side="right") - 1
        pairs = np.unique(block * max(ncomp, 1) + label) // max(ncomp, 1)
        at = first + int(pairs[np.flatnonzero(pairs[1:] == pairs[:-1])[0]])
        raise CertificateError(f"fine block {at} (rows {r[at]}:{r[at + 1]}) is reducible: the square part has "
                               f"{ncomp} strongly connected components in {k - first} blocks")
    if r[k] != rr[2] or s[k] != cc[3]:
        raise CertificateError(f"the square blocks end at ({r[k]}, {s[k]}), not at the square part's end "
                               f"({rr[2]}, {cc[3]})")
    if nb - k != int(rr[2] < m):
        raise CertificateError(f"after the square part there are {nb - k} fine blocks; the vertical part "
                               "is one block when it has rows, else none")
