"""Stable marriage (SM and SMI): Gale-Shapley and McVitie-Wilson in array form.

Paper IV of the thesis in ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``
(Manne, Naim, Lerring, Halappanavar, "On stable marriages and greedy
matchings"). This module holds the public solver, :func:`stable_marriage`,
its result, and the accepted input forms (:func:`stack_preferences` for a
batch, :func:`read_preferences` for files); the algorithms are in
:mod:`jaxmatch.stable.gale_shapley`, the rank-list container
:class:`Preferences` and its validation in :mod:`jaxmatch.stable.preferences`.

Preferences are rank lists, most preferred first: a padded int array
``[n, L]`` with -1 after the last id of each row, CSR lists ``(indptr,
indices)``, a list of lists, or a validated :class:`Preferences`. Lists may be
incomplete (SMI) and of any lengths, including empty; there may be more men
than women or the other way round. A pair can only marry if each lists the
other. One list shared by everyone on a side (the "hard" set of the paper) is
stored once: :meth:`Preferences.shared_list`, or a numpy broadcast view such
as ``np.broadcast_to(order, (n, len(order)))``, which is recognised as such.
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._ops import is_traced, sum_words, trim, words_total
from jaxmatch.status import settle, with_status_name
from jaxmatch._validate import INT32_MAX, check_flag, check_not_batch, check_positive, next_pow2
from jaxmatch.graph import GraphInputError, batch_map, eager_batch
from jaxmatch.kernels import stable_mw as _stable_mw
from jaxmatch.stable import gale_shapley as _gs
from jaxmatch.stable.preferences import Preferences, _int_array

__all__ = ["Preferences", "StableMarriageResult", "stable_marriage", "stack_preferences",
           "read_preferences"]

METHODS = _gs.METHODS
MAX_UNROLL = 1024   # the largest unroll and window: both are Python loops when the solver is traced


# --------------------------------------------------------------------------
# input forms


def _kind(x) -> str:
    if isinstance(x, Preferences):
        return "prefs"
    if isinstance(x, tuple) and len(x) == 2:
        return "csr"
    if isinstance(x, list) and (not x or (all(np.ndim(r) == 1 for r in x) and len({len(r) for r in x}) > 1)):
        return "lists"
    return "padded"


def _size_of(x, name: str):
    kind = _kind(x)
    if kind == "prefs":
        return None if is_traced(x.n) else x.n
    if kind == "csr":
        return _int_array(x[0], f"{name} indptr", 1).size - 1
    if kind == "lists":
        return len(x)
    return _int_array(x, name, 2).shape[0]


def _as_prefs(x, n_other, name: str) -> Preferences:
    kind = _kind(x)
    if kind == "prefs":
        return x
    if n_other is None or np.ndim(n_other):
        raise GraphInputError(f"{name}: raw lists need the other side as a single, concrete instance")
    n_other = int(n_other)
    if kind == "csr":
        return Preferences.from_csr(x[0], x[1], n_other, name=name)
    if kind == "lists":
        return Preferences.from_lists(x, n_other, name=name)
    return Preferences.from_padded(x, n_other, name=name)


def as_instance(men_prefs, women_prefs, *, batch: bool = False) -> tuple[Preferences, Preferences]:
    """Validated ``(men, women)`` Preferences from any accepted input form.

    Raw forms are checked against each other (men's ids must be women and
    the other way round); Preferences built earlier are checked for the same
    agreement when their sizes are concrete.
    """
    n_men, n_women = _size_of(men_prefs, "men_prefs"), _size_of(women_prefs, "women_prefs")
    men = _as_prefs(men_prefs, n_women, "men_prefs")
    women = _as_prefs(women_prefs, n_men, "women_prefs")
    for p, side in ((men, "men_prefs"), (women, "women_prefs")):
        if not batch:   # (batch=True: two eager batches, checked against each other instance by instance)
            check_not_batch(p.n, f"preferences in {side} (from stack_preferences)",
                            "jax.vmap(lambda m, w: stable_marriage(m, w).wife)(men, women)")
    for p, q, side, other in ((men, women, "men_prefs", "women"), (women, men, "women_prefs", "men")):
        if is_traced(p.n_other) or is_traced(q.n):
            continue
        if np.shape(p.n_other) != np.shape(q.n) or np.any(np.asarray(p.n_other) != np.asarray(q.n)):
            raise GraphInputError(
                f"{side} was built for n_other = {np.asarray(p.n_other).tolist()} {other}, "
                f"but there are {np.asarray(q.n).tolist()}")
    return men, women


def stack_preferences(prefs) -> Preferences:
    """Pad Preferences to common capacities (powers of two) and stack them for ``jax.vmap``.

    Every instance is rebuilt at the same capacities (the next powers of two
    of the largest person and entry capacities), so the batch compiles once;
    the arrays gain a leading batch axis. Solve a men's batch and a women's
    batch with ``jax.vmap(lambda m, w: stable_marriage(m, w).wife)(men,
    women)``. A 3-D padded array gives the same batch in one vectorised pass
    (:meth:`Preferences.from_padded`). O(total entries) host work.

    Args:
        prefs: a non-empty sequence of single (not stacked) :class:`Preferences`,
            all with a shared list or all without.

    Returns:
        A :class:`Preferences` whose array fields are stacked along a new
        first axis (``n``, ``n_other`` and ``n_entries`` of shape ``[B]``).

    Raises:
        GraphInputError: when ``prefs`` is empty, holds anything but
            Preferences, mixes shared and non-shared lists, or holds a batch.

    Example:
        >>> import jaxmatch
        >>> P = jaxmatch.Preferences
        >>> b = jaxmatch.stack_preferences([P.from_lists([[0], [0, 1]]), P.from_lists([[1]])])
        >>> b.n.tolist(), b.n_cap
        ([2, 1], 2)
    """
    prefs = list(prefs)
    if not prefs or not all(isinstance(p, Preferences) for p in prefs):
        raise GraphInputError("stack_preferences needs a non-empty sequence of Preferences")
    if len({p.shared for p in prefs}) > 1:
        raise GraphInputError("stack_preferences needs all shared or all non-shared lists")
    if any(np.ndim(p.n) for p in prefs):
        raise GraphInputError("stack_preferences takes single instances, not batches")
    caps = dict(n_capacity=next_pow2(max(p.n_cap for p in prefs)),
                entry_capacity=next_pow2(max(p.e_cap for p in prefs)))
    padded = [p.with_capacity(**caps) for p in prefs]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *padded)


def read_preferences(path):
    r"""Rank lists from a text file: line i holds person i's ids (0-based), best first.

    Ids are separated by spaces or commas; an empty line is an empty list;
    lines starting with ``#`` are comments. One pass over the file.

    Args:
        path: the file's path (str or :class:`os.PathLike`).

    Returns:
        CSR lists ``(indptr, indices)``, int64 NumPy arrays of lengths
        ``n + 1`` and the total list length, to pass to :func:`stable_marriage`
        or :meth:`Preferences.from_csr`.

    Raises:
        GraphInputError: when a line holds anything but integer ids.
        OSError: when the file cannot be read.

    Example:
        >>> import os, tempfile, jaxmatch
        >>> with tempfile.TemporaryDirectory() as d:
        ...     path = os.path.join(d, "men.txt")
        ...     _ = open(path, "w").write("# best first\n1 0\n\n0\n")
        ...     indptr, indices = jaxmatch.read_preferences(path)
        >>> indptr.tolist(), indices.tolist()
        ([0, 2, 2, 3], [1, 0, 0])
    """
    rows = []
    with open(path) as fh:
        for line in fh:
            s = line.strip()
            if s.startswith("#"):
                continue
            toks = s.replace(",", " ").split()
            try:
                rows.append([int(t) for t in toks])
            except ValueError:
                raise GraphInputError(f"{path}: line {len(rows) + 1} is not a list of integer ids") from None
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    return indptr, np.array([i for r in rows for i in r], dtype=np.int64)


# --------------------------------------------------------------------------
# the solver


@with_status_name
class StableMarriageResult(NamedTuple):
    """The man-optimal stable matching, as returned by :func:`stable_marriage`.

    Eagerly the arrays have the true sizes; under ``jit``/``vmap`` they keep
    the capacities, with -1 in padding. ``status_name`` gives the status in
    words.

    Attributes:
        wife: int32 ``[n_men]``: man m's wife, or -1 when he is single.
        husband: int32 ``[n_women]``: woman w's husband, or -1 when she is single.
        status: int32 scalar, a :class:`jaxmatch.Status`: CONVERGED (the
            matching is stable) or MAX_ITERS (then it is a matching of
            mutually ranked pairs, not necessarily stable).
        stats: dict of work counters: ``proposals`` (women considered,
            summed over the men: the paper's count, including proposals
            skipped as sure to fail; an exact Python int eagerly), ``rounds``
            (loop steps that proposed), ``waves`` (proposal waves) and
            ``steps`` (all loop steps: rounds and slot compactions; also as
            ``iterations``).
    """

    wife: jax.Array
    husband: jax.Array
    status: jax.Array
    stats: dict[str, Any]




def stable_marriage(men_prefs, women_prefs, *, method: str = "mcvitie_wilson", max_iters: int | None = None,
                    unroll: int | None = None, window: int | None = _gs.DEFAULT_WINDOW,
                    kernel=None, config: _gs.Config | None = None, throw: bool = True) -> StableMarriageResult:
    """Man-optimal stable matching of a stable marriage instance (SM or SMI).

    Men and women rank people of the other side, most preferred first. A
    matching is *stable* when no man m and woman w who list each other both
    prefer each other to their partners (being single ranks below every
    listed person). Of all stable matchings, the man-optimal one gives every
    man the best wife he has in any stable matching; every order of
    Gale-Shapley proposals finds it. Lists may be incomplete and of any
    lengths (SMI): a pair can only marry if each lists the other, and people
    may stay single; the sides may differ in size.

    Papers: D. Gale and L. S. Shapley, "College admissions and the stability
    of marriage", American Mathematical Monthly 69(1), 1962 (free men propose
    from a queue); D. G. McVitie and L. B. Wilson, "The stable marriage
    problem", Communications of the ACM 14(7), 1971 (a displaced man
    proposes again at once: a stack); F. Manne, Md. Naim, H. Lerring and M.
    Halappanavar, "On stable marriages and greedy matchings", SIAM Workshop
    on Combinatorial Scientific Computing (CSC), 2016 (both on the GPU, a man
    skipping the women who already hold a better proposal). The array form
    (men in slots, proposal waves, a scatter-min in place of the CUDA
    compare-and-swap) is described in :mod:`jaxmatch.stable.gale_shapley`.

    Cost: the women's ranks become a lookup once (a sort and a binary search,
    O(E log L) for E list entries and lists of at most L ids); then
    O(``window``) per considered entry, with work proportional to the free
    men in each wave, at most E waves, and one loop step per wave
    (Gale-Shapley) or per ``unroll`` waves (McVitie-Wilson; one wave while
    the busy count falls fast, so the slots compact after it). Works
    eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch from
    :func:`stack_preferences` (raw lists are converted eagerly only). A
    men's and a women's batch given eagerly are solved instance by instance
    (:func:`jaxmatch.graph.batch_map`: one jitted ``vmap`` on the GPU, a
    jitted ``lax.map`` elsewhere) and the result has a batch axis.

    Args:
        men_prefs: the men's rank lists, ids of women: a :class:`Preferences`,
            a padded int array ``[n_men, L]`` with -1 after the last id of
            each row, CSR lists ``(indptr, indices)``, or a list of lists.
        women_prefs: the women's rank lists, ids of men, in the same forms.
        method: ``"mcvitie_wilson"`` (the default: a rejected or displaced
            man proposes again at once, ``unroll`` proposal waves per loop
            step) or ``"gale_shapley"`` (one round of proposals per loop
            step, the queue of free men rebuilt each round). Both skip
            proposals that are sure to fail and return the same matching.
        max_iters: bound on the loop steps; None (the default): enough for
            any instance of these capacities. Traced: another bound does not
            recompile.
        unroll: McVitie-Wilson's proposal waves per loop step (at most 1024,
            unrolled at compile time). None (the default): 16 on the GPU,
            where a loop step costs tens of microseconds, and 1 elsewhere (on
            the CPU a step costs little and unrolling lengthens the compile).
        window: candidates a man looks at per wave, skipping the women who
            hold a better proposal (default 4; None: the default; at most 1024).
        kernel: run McVitie-Wilson's proposals in the lock-free Pallas kernel
            of :mod:`jaxmatch.kernels.stable_mw` (many proposals per slot per
            launch, no barrier between blocks; the same matching and proposal
            count, while ``rounds`` and ``waves`` then depend on the GPU's
            timing). True, False, a :class:`jaxmatch.kernels.stable_mw.Config`
            (the kernel's knobs), or None (the default: on the GPU for
            McVitie-Wilson, off elsewhere). Off the GPU the kernel runs in
            Pallas's interpret mode, which is for tests only.
        config: the array solver's static knobs, a
            :class:`jaxmatch.stable.gale_shapley.Config` (part of the ``jit``
            cache key); None: the defaults.
        throw: eagerly, raise :class:`jaxmatch.SolverError` (holding the
            result) when ``max_iters`` stops the solver first (default True);
            under ``jit``/``vmap`` it has no effect: read ``status`` instead.

    Returns:
        A :class:`StableMarriageResult`: ``wife``, ``husband``, ``status`` and
        ``stats`` (the proposal count among them).

    Raises:
        GraphInputError: when a list is malformed (an id out of range or
            listed twice, -1 padding inside a row, not integers), the two
            sides disagree on their sizes, an option is out of range, the
            kernel is asked for with ``method="gale_shapley"``, or one side is
            a batch and the other not (or of another size). Raw lists are
            checked before tracing.
        SolverError: eagerly with ``throw=True``, when ``max_iters`` stopped
            the solver before the matching was stable.

    Example:
        >>> import jaxmatch
        >>> men = [[0, 1], [0, 1]]
        >>> women = [[1, 0], [0, 1]]
        >>> res = jaxmatch.stable_marriage(men, women)
        >>> res.wife.tolist(), res.husband.tolist(), res.stats["proposals"]
        ([1, 0], [1, 0], 3)
    """
    if method not in METHODS:
        raise GraphInputError(f"method must be one of {METHODS}, got {method!r}")
    check_positive(max_iters, "max_iters")
    check_flag(throw, "throw")
    if config is None:
        config = _gs.DEFAULT
    if not isinstance(config, _gs.Config) or min(config) < 1:
        raise GraphInputError(f"config must be None or a jaxmatch.stable.gale_shapley.Config of positive ints, "
                              f"got {config!r}")
    check_positive(unroll, "unroll")
    check_positive(window, "window")
    if unroll is None:
        unroll = _gs.DEFAULT_UNROLL if jax.default_backend() == "gpu" else 1
    unroll = int(unroll)
    window = _gs.DEFAULT_WINDOW if window is None else int(window)
    for value, name in ((unroll, "unroll"), (window, "window")):  # unrolled at trace time
        if value > MAX_UNROLL:
            raise GraphInputError(f"{name} = {value} is above the supported {MAX_UNROLL} "
                                  "(it is unrolled when the solver is compiled)")
    if any(eager_batch(p, Preferences) for p in (men_prefs, women_prefs)):
        as_instance(men_prefs, women_prefs, batch=True)   # eager batches: graph.batch_map
        return settle("stable_marriage", batch_map(stable_marriage, (men_prefs, women_prefs), dict(
            method=method, max_iters=max_iters, unroll=unroll, window=window, kernel=kernel, config=config)), throw)
    men, women = as_instance(men_prefs, women_prefs)
    if men.shared and not women.shared:
        if is_traced(men.n):
            raise GraphInputError("a shared men's list with non-shared women's lists must be unshared "
                                  "outside jit (Preferences.unshared)")
        men = men.unshared()
    if kernel is None:
        kernel = method == "mcvitie_wilson" and jax.default_backend() == "gpu"
    if kernel is True:
        kernel = _stable_mw.Config()
    elif kernel is not False and not isinstance(kernel, _stable_mw.Config):
        raise GraphInputError(f"kernel must be None, a bool or a stable_mw.Config, got {kernel!r}")
    if kernel:
        _stable_mw.check(kernel, jax.default_backend())
    if kernel and method != "mcvitie_wilson":
        raise GraphInputError("the kernel runs McVitie-Wilson only; use method='mcvitie_wilson'")
    steps = 1 if method == "gale_shapley" or kernel else unroll
    if max_iters is None:
        total = men.n_cap * men.e_cap if men.shared else men.e_cap
        max_iters = min(-(-(total + 1) // steps) + 2 + len(_gs.widths(men.n_cap, config)) + _gs.short_steps(men.n_cap, config),
                        INT32_MAX - 1)
    max_iters = min(int(max_iters), INT32_MAX - 1)   # an int32 loop counter
    wife, husband, status, pos, words, stats = _solve(men, women, method=method, max_iters=int(max_iters),
                                                      unroll=int(unroll), window=int(window), kernel=kernel or None,
                                                      config=config)
    if is_traced(men.n) or is_traced(wife):
        dt = jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
        return StableMarriageResult(wife, husband, status, dict(stats, proposals=jnp.sum(pos, dtype=dt)))
    n_men, n_women = int(men.n), int(women.n)
    # considered entries are 0 past n; the total comes back as a few words, not the n counts
    proposals = words_total(words)
    return settle("stable_marriage", StableMarriageResult(trim(wife, n_men), trim(husband, n_women), status,
                                                          dict(stats, proposals=proposals)), throw)


@partial(jax.jit, static_argnames=("method", "unroll", "window", "kernel", "config"))   # max_iters traced
def _solve(men, women, *, method, max_iters, unroll, window, kernel, config=_gs.DEFAULT):
    wife, husband, status, pos, stats = _gs.solve(
        men, women, method=method, max_iters=max_iters, unroll=unroll, window=window, kernel=kernel,
        interpret=kernel is not None and jax.default_backend() != "gpu", cfg=config)
    return wife, husband, status, pos, sum_words(pos), stats
