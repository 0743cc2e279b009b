"""Certificate of optimal assignments (weighted bipartite matchings) by linear-programming duality.

The assignment problem, minimising: ``min sum_{(i,j) in M} c_ij`` over the
matchings ``M`` that cover every row (when rows must be covered: ``full``
with ``n_rows <= n_cols``), every column (``full`` with ``n_cols <=
n_rows``), or anything (``full=False``). Its LP relaxation is integral, and
its dual is ``max sum(u) + sum(v)`` subject to ``u_i + v_j <= c_ij`` on every
edge, with ``u <= 0`` on a side that may stay uncovered and ``v <= 0``
likewise. Weak duality: any feasible ``(u, v)`` bounds every allowed
matching's cost from below. So a matching ``M`` and potentials with
``cost(M) - (sum(u) + sum(v)) <= tol`` prove ``M`` within ``tol`` of the
optimum (and optimal when the costs are integers and ``tol < 1``).

:func:`check_assignment` does not trust the potentials to be feasible: it
keeps the column potentials ``v`` (clipped to ``<= 0`` where the signs
require it) and rebuilds from them, in float64, the best feasible duals they
allow (``u_i = min_j (c_ij - v_j)``, clipped likewise; then, for free
columns, ``v_j = min_i (c_ij - u_i)``), then checks the gap. Maximising is the same on ``-c``. Nothing here imports
a solver.
"""
from __future__ import annotations

import numpy as np

from jaxmatch.certify._common import CertificateError, _mates
from jaxmatch.graph import BipartiteGraph


def _edges(problem):
    """(rows, cols, weights, n_rows, n_cols) of a dense cost matrix (finite entries) or a weighted graph."""
    if isinstance(problem, BipartiteGraph):
        if np.ndim(problem.n_rows) or problem.by_row.weights is None:
            raise TypeError("expected a single weighted BipartiteGraph or a dense cost matrix")
        r, c, nr, nc = problem.edges()
        return r.astype(np.int64), c.astype(np.int64), np.asarray(problem.edge_weights(), np.float64), nr, nc
    a = np.asarray(problem, np.float64)
    if a.ndim != 2:
        raise TypeError(f"expected a 2-D cost matrix or a weighted BipartiteGraph, got shape {a.shape}")
    r, c = np.nonzero(np.isfinite(a))
    return r, c, a[r, c], a.shape[0], a.shape[1]


def _segment_min(values, ids, n):
    out = np.full(n, np.inf)
    np.minimum.at(out, ids, values)
    return out


def check_assignment(problem, row_mate, col_potential, *, full: bool = True, maximize: bool = False,
                     tol: float | None = None) -> float:
    """Check that ``row_mate`` is an optimal assignment, by the dual potentials ``col_potential``.

    Args:
        problem: a dense ``[n, m]`` cost matrix (``inf`` entries, or ``-inf``
            when maximising, are forbidden pairs) or a weighted
            :class:`~jaxmatch.BipartiteGraph`.
        row_mate: ``[n]`` column of each row, -1 for unmatched.
        col_potential: ``[m]`` column potentials ``v`` (as
            :func:`jaxmatch.min_weight_matching` returns them).
        full: the matching must cover the smaller side (default True).
        maximize: the problem maximises the total weight.
        tol: the largest gap allowed between the matching's cost and the
            dual bound. Default: ``0.5`` for integer weights (which proves
            the optimum), else ``1e-4 * (1 + sum |w| of the matching)``.

    Returns:
        The proven gap, ``cost(M) - bound`` (>= 0 up to rounding; for a
        maximisation, ``bound - weight(M)``).

    Raises:
        CertificateError: naming the violation (not a matching, a pair that
            is not an edge, not full, a gap above ``tol``).

    Example:
        >>> import numpy as np
        >>> from jaxmatch import certify
        >>> cost = np.array([[4.0, 1.0], [2.0, 0.0]])
        >>> certify.check_assignment(cost, [1, 0], [2.0, 0.0])   # u = (1, 0): cost 3, bound 3
        0.0
    """
    r, c, w, nr, nc = _edges(problem)
    mate = _mates(row_mate, nr, "row_mate", nc)
    v = np.asarray(col_potential, np.float64)
    if v.shape != (nc,):
        raise CertificateError(f"col_potential has shape {v.shape}, expected ({nc},)")
    if not np.all(np.isfinite(v)):
        raise CertificateError(f"col_potential has a non-finite entry at column {int(np.argmin(np.isfinite(v)))}")
    matched = np.flatnonzero(mate >= 0)
    cols = mate[matched]
    if np.unique(cols).size != cols.size:
        raise CertificateError(f"column {int(cols[np.argmax(np.bincount(cols))])} is matched to two rows")
    key = r * max(nc, 1) + c
    order = np.argsort(key)
    want = matched * max(nc, 1) + cols
    pos = np.minimum(np.searchsorted(key[order], want), max(key.size - 1, 0))
    ok = key[order][pos] == want if key.size else np.zeros(want.size, bool)
    if not ok.all():
        bad = int(matched[np.argmin(ok)])
        raise CertificateError(f"row {bad} is matched to column {int(mate[bad])}, which is not an allowed pair")
    edge = order[pos]                                 # the edge of each matched row
    if full and cols.size != min(nr, nc):
        raise CertificateError(f"the matching has {cols.size} pairs; a full one has min({nr}, {nc}) = {min(nr, nc)}")
    sign = -1.0 if maximize else 1.0
    cost = sign * w                                   # minimise sign * w
    total = float(np.sum(cost[edge]))
    v = sign * v
    rows_free = (not full) or nr > nc
    cols_free = (not full) or nc > nr
    if cols_free:
        v = np.minimum(v, 0.0)
    u = _segment_min(cost - v[c], r, nr)              # the best u for this v
    if rows_free:
        u = np.minimum(u, 0.0)
    if not (rows_free or cols_free):
        v = _segment_min(cost - u[r], c, nc)          # and the best free v for this u
    bound = float(np.sum(u) + np.sum(v))
    gap = total - bound
    if tol is None:
        tol = 1 - 1e-6 if np.all(w == np.round(w)) else 1e-4 * (1.0 + float(np.sum(np.abs(w[edge]))))
    if not gap <= tol:
        raise CertificateError(f"the matching's {'weight' if maximize else 'cost'} {sign * total:.9g} is "
                               f"{gap:.3g} from the dual bound {sign * bound:.9g} (tolerance {tol:.3g})")
    return gap
