"""Certificates of bipartite matchings: validity, and maximality by a Kőnig vertex cover.

A matching is given as two mate arrays, ``row_mate[r]`` (the column of row r,
-1 when unmatched) and ``col_mate[c]`` (the row of column c, -1), as every
solver of :mod:`jaxmatch.bipartite` returns it. Validity is checked with
vectorised numpy gathers; maximality by building the Kőnig cover from one
alternating breadth-first search (:func:`scipy.sparse.csgraph.breadth_first_order`
on a directed graph of rows, columns and a super source), so no maximum
matching is recomputed. The graph may be a :class:`jaxmatch.BipartiteGraph`
or a scipy sparse matrix (rows x columns, an edge per nonzero).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from jaxmatch.certify._common import CertificateError, _mates
from jaxmatch.graph import BipartiteGraph


def _biadjacency(g) -> sp.csr_array:
    if isinstance(g, BipartiteGraph):
        rows, cols, nr, nc = g.edges()
        return sp.csr_array((np.ones(rows.size, np.int8), (rows, cols)), shape=(nr, nc))
    if sp.issparse(g):
        a = sp.csr_array(g, copy=True)
        a.eliminate_zeros()
        a.data[:] = 1
        return a
    raise TypeError(f"expected a BipartiteGraph or a scipy sparse matrix, got {type(g).__name__}")


def check_matching(g, row_mate, col_mate) -> None:
    """Raise unless ``row_mate``/``col_mate`` describe one valid matching of ``g``.

    A matching is a set of edges no two of which share a vertex. In mate form
    it is valid when every entry is -1 or a vertex id of the other side, the
    two arrays agree (``col_mate[row_mate[r]] == r`` for every matched row r,
    and the same from the columns), and every matched pair (r, ``row_mate[r]``)
    is an edge of ``g``. ``O(|V| + |E|)``.

    Args:
        g: a :class:`jaxmatch.BipartiteGraph`, or a scipy sparse matrix of
            shape (rows, columns) whose nonzeros are the edges.
        row_mate: int array [n_rows] (JAX or numpy), the column matched to each
            row, -1 for an unmatched row.
        col_mate: int array [n_cols], the row matched to each column, -1 for
            an unmatched column.

    Raises:
        CertificateError: when a mate array has the wrong shape, holds an
            entry that is neither -1 nor a vertex id, disagrees with the other
            array, or pairs two vertices that share no edge.
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse
            matrix.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])   # 2 rows, 2 columns, 3 edges
        >>> certify.check_matching(g, [1, 0], [1, 0])               # rows 0-1 take columns 1-0
        >>> certify.check_matching(g, [0, 1], [0, 1])               # (row 1, column 1) is no edge
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: matched pair (row 1, column 1) is not an edge
    """
    a = _biadjacency(g)
    nr, nc = a.shape
    rm, cm = _mates(row_mate, nr, "row_mate", ids=nc), _mates(col_mate, nc, "col_mate", ids=nr)
    r = np.flatnonzero(rm >= 0)
    bad = r[cm[rm[r]] != r]
    if bad.size:
        raise CertificateError(
            f"row {bad[0]} is matched to column {rm[bad[0]]}, whose col_mate is {cm[rm[bad[0]]]}")
    c = np.flatnonzero(cm >= 0)
    bad = c[rm[cm[c]] != c]
    if bad.size:
        raise CertificateError(
            f"column {bad[0]} is matched to row {cm[bad[0]]}, whose row_mate is {rm[cm[bad[0]]]}")
    if r.size:
        present = np.asarray(a[r, rm[r]]).ravel() != 0
        if not present.all():
            k = r[np.flatnonzero(~present)[0]]
            raise CertificateError(f"matched pair (row {k}, column {rm[k]}) is not an edge")


def is_matching(g, row_mate, col_mate) -> bool:
    """True when the mates describe a valid matching of ``g``.

    The boolean form of :func:`check_matching`: mates in range, the two
    arrays agreeing, every matched pair an edge.

    Args:
        g: a :class:`jaxmatch.BipartiteGraph` or a scipy sparse matrix (rows x columns).
        row_mate: int array [n_rows], the column of each row, -1 unmatched.
        col_mate: int array [n_cols], the row of each column, -1 unmatched.

    Returns:
        bool: True when :func:`check_matching` passes, False when it raises
        :class:`CertificateError`.

    Raises:
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse matrix.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
        >>> certify.is_matching(g, [0, -1], [0, -1]), certify.is_matching(g, [-1, 1], [-1, 1])
        (True, False)
    """
    try:
        check_matching(g, row_mate, col_mate)
    except CertificateError:
        return False
    return True


def koenig_cover(g, row_mate, col_mate):
    """Kőnig vertex cover ``(row_in_cover, col_in_cover)`` built from a matching.

    Let Z be the vertices reachable from the unmatched rows by alternating
    paths (row to column over any edge, column to row over its matched edge).
    The Kőnig set is (rows not in Z) ∪ (columns in Z). Kőnig's theorem
    (D. Kőnig, "Gráfok és mátrixok", Matematikai és Fizikai Lapok 38, 1931)
    says that in a bipartite graph a maximum matching and a minimum vertex
    cover have the same size; this construction is its proof. When the
    matching is maximum, the set covers every edge and has exactly as many
    vertices as the matching has edges; when it is not, an augmenting path
    (Berge) ends at an unmatched column in Z and the set fails one of the two
    tests (:func:`check_maximum_matching` runs them). ``O(|V| + |E|)``: one
    scipy breadth-first search on a directed graph of rows, columns and a
    super source that points at every unmatched row.

    Args:
        g: a :class:`jaxmatch.BipartiteGraph` or a scipy sparse matrix (rows x columns).
        row_mate: int array [n_rows], the column of each row, -1 unmatched.
        col_mate: int array [n_cols], the row of each column, -1 unmatched.
            The mates are assumed consistent (see :func:`check_matching`).

    Returns:
        ``(row_in_cover, col_in_cover)``: numpy bool arrays of shape [n_rows]
        and [n_cols] marking the vertices of the Kőnig set.

    Raises:
        CertificateError: when a mate array has the wrong shape.
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse matrix.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
        >>> rows, cols = certify.koenig_cover(g, [1, 0], [1, 0])   # a maximum matching
        >>> rows.tolist(), cols.tolist()                            # 2 vertices cover all 3 edges
        ([True, True], [False, False])
    """
    a = _biadjacency(g)
    nr, nc = a.shape
    rm, cm = _mates(row_mate, nr, "row_mate"), _mates(col_mate, nc, "col_mate")
    # nodes: rows 0..nr-1, columns nr..nr+nc-1, super source nr+nc
    coo = a.tocoo()
    matched_cols = np.flatnonzero(cm >= 0)
    free_rows = np.flatnonzero(rm < 0)
    src = np.concatenate([coo.row, nr + matched_cols, np.full(free_rows.size, nr + nc)])
    dst = np.concatenate([nr + coo.col, cm[matched_cols], free_rows])
    n = nr + nc + 1
    d = sp.csr_array((np.ones(src.size, np.int8), (src, dst)), shape=(n, n))
    reached = np.zeros(n, bool)
    reached[breadth_first_order(d, nr + nc, directed=True, return_predecessors=False)] = True
    return ~reached[:nr], reached[nr:nr + nc]


def check_maximum_matching(g, row_mate, col_mate) -> None:
    """Raise unless the mates are a maximum matching of ``g``.

    Checks validity (:func:`check_matching`), builds the Kőnig set of
    :func:`koenig_cover`, and checks that it covers every edge and has as
    many vertices as the matching has edges. Every vertex cover C bounds every
    matching M by ``|M| <= |C|`` (each matched edge needs its own covering
    vertex), so a cover with ``|C| = |M|`` proves M maximum (Kőnig's theorem
    for bipartite graphs); an uncovered edge exposes an augmenting path.
    ``O(|V| + |E|)``, without recomputing a maximum matching.

    Args:
        g: a :class:`jaxmatch.BipartiteGraph` or a scipy sparse matrix (rows x columns).
        row_mate: int array [n_rows], the column of each row, -1 unmatched.
        col_mate: int array [n_cols], the row of each column, -1 unmatched.

    Raises:
        CertificateError: when the mates are not a valid matching (see
            :func:`check_matching`), when an edge is not covered by the Kőnig
            set (an augmenting path exists), or when the set's size differs
            from the matching's.
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse matrix.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
        >>> certify.check_maximum_matching(g, [1, 0], [1, 0])
        >>> certify.check_maximum_matching(g, [0, -1], [0, -1])   # row 1 - col 0 - row 0 - col 1 augments
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: not maximum: Koenig cover has 2 vertices, matching has 1 edges
    """
    check_matching(g, row_mate, col_mate)
    a = _biadjacency(g).tocoo()
    rows_c, cols_c = koenig_cover(g, row_mate, col_mate)
    uncovered = np.flatnonzero(~rows_c[a.row] & ~cols_c[a.col])
    if uncovered.size:
        k = uncovered[0]
        raise CertificateError(
            f"not maximum: edge (row {a.row[k]}, column {a.col[k]}) is not covered by the Koenig "
            "cover, so an augmenting path exists")
    size = int((np.asarray(row_mate) >= 0).sum())
    cover = int(rows_c.sum() + cols_c.sum())
    if cover != size:
        raise CertificateError(f"not maximum: Koenig cover has {cover} vertices, matching has {size} edges")


def is_maximum_matching(g, row_mate, col_mate) -> bool:
    """True when the mates are a maximum matching of ``g``.

    The boolean form of :func:`check_maximum_matching` (valid, and certified
    maximum by a Kőnig vertex cover of the same size).

    Args:
        g: a :class:`jaxmatch.BipartiteGraph` or a scipy sparse matrix (rows x columns).
        row_mate: int array [n_rows], the column of each row, -1 unmatched.
        col_mate: int array [n_cols], the row of each column, -1 unmatched.

    Returns:
        bool: True when :func:`check_maximum_matching` passes, False when it
        raises :class:`CertificateError`.

    Raises:
        TypeError: when ``g`` is neither a BipartiteGraph nor a scipy sparse matrix.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
        >>> certify.is_maximum_matching(g, [1, 0], [1, 0]), certify.is_maximum_matching(g, [0, -1], [0, -1])
        (True, False)
    """
    try:
        check_maximum_matching(g, row_mate, col_mate)
    except CertificateError:
        return False
    return True
