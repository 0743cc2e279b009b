"""How a solver stopped: :class:`Status`, and :class:`SolverError` for ``throw=True``.

Every result type has ``status`` (an int32 array, so that it can leave
``jit`` and ``vmap``), ``status_name`` (the status in words) and
``stats["iterations"]``. Eagerly, every public solver raises
:class:`SolverError` when it stops before converging, unless it is called
with ``throw=False``; the error carries the result. Under ``jit`` or
``vmap`` the status cannot be read while tracing, so there ``throw`` has no
effect and the caller reads ``status`` (``jaxmatch.Status(int(s))``).

>>> import jaxmatch
>>> Status(1).message
'stopped at max_iters before converging; raise max_iters, or pass throw=False to get the partial result'
"""
from __future__ import annotations

import enum

import jax
import numpy as np


class Status(enum.IntEnum):
    """Why a solver stopped: 0 is success, every other value names the bound that stopped it first.

    Every result's ``status`` field holds one of these values as an int32
    array, so that it can leave ``jit`` and ``vmap``;
    ``jaxmatch.Status(int(res.status))`` turns it back into the enum and
    ``res.status_name`` gives its label. Each member has a short ``label``
    and a ``message`` that says what to do next (the text of
    :class:`SolverError`).

    Attributes:
        CONVERGED: 0, the solver ran to its end: the answer is the
            algorithm's full answer.
        MAX_ITERS: 1, the iteration bound ``max_iters`` (rounds, phases or
            proposal steps) stopped it first.
        MAX_BFS_LEVELS: 2, a BFS ran out of levels with a frontier left
            (MS-BFS-Graft).
        MAX_LEVELS: 3, Louvain's ``max_levels`` stopped it while a level
            still improved the modularity.
        EXCESS_LEFT: 4, max flow: the flow value and the cut are maximum, but
            ``max_iters`` stopped the return of the excess to the sources
            (the flow is a preflow).
        KERNEL_STALLED: 5, a persistent Pallas kernel gave up waiting at its
            grid barrier; the result is not reliable.
        INFEASIBLE: 6, the problem has no solution (an assignment problem
            without a full matching on its allowed entries).

    Example:
        >>> import jaxmatch
        >>> jaxmatch.Status(0).label, jaxmatch.Status.MAX_ITERS.label, int(jaxmatch.Status.EXCESS_LEFT)
        ('converged', 'hit max_iters', 4)
    """
    CONVERGED = 0
    MAX_ITERS = 1          # the iteration (round, phase, proposal step) bound
    MAX_BFS_LEVELS = 2     # a BFS ran out of levels with a frontier left (graft)
    MAX_LEVELS = 3         # Louvain: the level bound while a level still improved
    EXCESS_LEFT = 4        # max flow: the value and the cut are maximum, the excess not all returned
    KERNEL_STALLED = 5     # a persistent kernel's grid barrier timed out (never seen; results unreliable)
    INFEASIBLE = 6         # no solution exists (assignment: no full matching on the allowed entries)

    @property
    def label(self) -> str:
        """A few words: what ``status_name`` of a result gives."""
        return _LABELS[self]

    @property
    def message(self) -> str:
        """A sentence saying what stopped the solver and what to do about it."""
        return _MESSAGES[self]


_LABELS = {
    Status.CONVERGED: "converged",
    Status.MAX_ITERS: "hit max_iters",
    Status.MAX_BFS_LEVELS: "hit the BFS level bound",
    Status.MAX_LEVELS: "hit max_levels",
    Status.EXCESS_LEFT: "excess not returned",
    Status.KERNEL_STALLED: "kernel stalled",
    Status.INFEASIBLE: "infeasible",
}
_PARTIAL = "pass throw=False to get the partial result"
_MESSAGES = {
    Status.CONVERGED: "converged",
    Status.MAX_ITERS: f"stopped at max_iters before converging; raise max_iters, or {_PARTIAL}",
    Status.MAX_BFS_LEVELS: f"a BFS stopped at its level bound with a frontier left; {_PARTIAL}",
    Status.MAX_LEVELS: f"stopped at max_levels while a level still improved; raise max_levels, or {_PARTIAL}",
    Status.EXCESS_LEFT: ("the flow value and the cut are maximum, but max_iters stopped the return of the "
                         f"excess to the sources (the flow is a preflow); raise max_iters, or {_PARTIAL}"),
    Status.KERNEL_STALLED: ("a program of a persistent Pallas kernel gave up waiting at its grid barrier, so the "
                            "result is not reliable; run with kernel=False and report it; or "
                            f"{_PARTIAL}"),
    Status.INFEASIBLE: ("the problem is infeasible: no matching covers every row (or column) it must, "
                        "on the allowed entries; pass full=False for the best matching of any size, or throw=False to get "
                        "the partial result"),
}


class SolverError(RuntimeError):
    """A solver stopped before converging: raised eagerly by every solver called with ``throw=True`` (the default).

    The message is ``"<solver>: <status message>"`` (:attr:`Status.message`).
    Under ``jit`` or ``vmap`` the status is a traced value, so nothing is
    raised there: read the result's ``status`` instead. A subclass of
    :class:`RuntimeError`.

    Args:
        solver: the solver's name, for the message.
        result: the solver's result, whose ``status`` is not ``CONVERGED``.

    Attributes:
        result: what the solver computed before it stopped (its result
            NamedTuple, as ``throw=False`` returns it).
        status: the :class:`Status` it stopped with.

    Example:
        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 1.0])
        >>> try:
        ...     jaxmatch.suitor(g, max_iters=1)
        ... except jaxmatch.SolverError as e:
        ...     print(e.status.name, e.result.mate.tolist())
        MAX_ITERS [-1, 2, 1, -1]
    """

    def __init__(self, solver: str, result):
        self.result = result
        codes = np.ravel(np.asarray(result.status))   # a batch's statuses: the first that is not CONVERGED
        self.status = Status(int(next((c for c in codes if c != Status.CONVERGED), codes[0])))
        super().__init__(f"{solver}: {self.status.message}")


def with_status_name(cls):
    """Class decorator: give a result NamedTuple a ``status_name`` property (its status in words)."""
    cls.status_name = property(lambda self: Status(int(self.status)).label, doc="The status in words.")
    return cls


def settle(solver: str, result, throw: bool):
    """``result``, or :class:`SolverError` when ``throw`` and the (concrete) status is not CONVERGED."""
    if (throw and not isinstance(result.status, jax.core.Tracer)
            and np.any(np.asarray(result.status) != Status.CONVERGED)):
        raise SolverError(solver, result)
    return result
