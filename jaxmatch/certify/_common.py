"""What every checker of :mod:`jaxmatch.certify` shares: the error type and the mate-array check.

:class:`CertificateError` is raised by every ``check_*`` function (and caught
by every ``is_*`` one); :func:`_mates` turns a mate array (JAX or numpy, one
entry per vertex, -1 for unmatched) into int64 numpy after checking its
shape. Nothing here imports a solver: the checkers see only containers
(:mod:`jaxmatch.graph`) and numpy/scipy arrays.
"""
from __future__ import annotations

import numpy as np


class CertificateError(AssertionError):
    """An answer failed its certificate.

    Raised by every ``check_*`` function of :mod:`jaxmatch.certify`, with a
    message naming the first violation found (a vertex, an edge, a blocking
    pair, a move). A subclass of :class:`AssertionError`, so a failed check
    reads as a failed assertion in a test.

    Example:
        >>> from jaxmatch import BipartiteGraph, certify
        >>> g = BipartiteGraph.from_edges([0, 0, 1], [0, 1, 0])
        >>> try:
        ...     certify.check_matching(g, [1, 1], [-1, 0])
        ... except certify.CertificateError as e:
        ...     print(e)
        row 1 is matched to column 1, whose col_mate is 0
    """


CertificateError.__module__ = "jaxmatch.certify"   # its public home: tracebacks and pickles name it there


def _mates(x, n: int, name: str, ids: int | None = None) -> np.ndarray:
    """``x`` as int64 numpy of shape ``(n,)``; with ``ids``, every entry -1 or in ``[0, ids)``."""
    a = np.asarray(x)
    if a.shape != (n,):
        raise CertificateError(f"{name} has shape {a.shape}, expected ({n},)")
    a = a.astype(np.int64)
    if ids is not None:
        bad = np.flatnonzero((a < -1) | (a >= ids))
        if bad.size:
            raise CertificateError(f"{name}[{bad[0]}] = {a[bad[0]]} is not -1 or a vertex id")
    return a
