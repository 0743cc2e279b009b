"""Input checks done on the host before anything is traced, and the error they raise.

:class:`GraphInputError` is the one error type of bad input, raised by the
graph constructors and by every solver's Python wrapper before tracing
(traced code never raises). The helpers here turn user input into NumPy
arrays of known dtype and shape (``_ids``, ``_values``), check that counts
fit int32 and that capacities hold their sizes (``_count``, ``_capacity``),
and check the solvers' common options (``check_type``, ``check_positive``,
``check_flag``, ``check_not_batch``). Each failure names the argument and,
for an array, the first offending position. This module is the bottom layer
of the package: it imports nothing of jaxmatch.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

INT32_MAX = int(np.iinfo(np.int32).max)


class GraphInputError(ValueError):
    """Bad input to a graph constructor or a solver, found on the host before tracing.

    Raised by the ``from_edges`` constructors, the adapters and readers of
    :mod:`jaxmatch.io`, :func:`~jaxmatch.stack` and every solver's Python
    wrapper: ids out of range or not integers, counts that do not fit int32,
    negative or non-finite weights, non-integer capacities, repeated edges
    under ``duplicates="error"``, a wrong container type, or a bad option
    value. The message names the argument and, for arrays, the first bad
    position. A subclass of :class:`ValueError`.

    Example:
        >>> import jaxmatch
        >>> try:
        ...     jaxmatch.BipartiteGraph.from_edges([0, 1], [1, 0], n_rows=1)
        ... except jaxmatch.GraphInputError as e:
        ...     print(e)
        rows[1] = 1 is out of range [0, 1) for n_rows = 1
    """


GraphInputError.__module__ = "jaxmatch.graph"   # its public home: tracebacks and pickles name it there


def next_pow2(n: int) -> int:
    """The smallest power of two >= max(n, 1), clipped to the int32 maximum: the default capacity.

    Rounding capacities up to powers of two bounds the number of distinct
    array shapes, so a solver compiles once per size class rather than once
    per graph.

    Args:
        n: a size (an int).

    Returns:
        An int, ``2**k >= max(n, 1)`` for the least such k, at most ``2**31 - 1``.

    Example:
        >>> from jaxmatch.graph import next_pow2
        >>> next_pow2(0), next_pow2(5), next_pow2(8)
        (1, 8, 8)
    """
    n = max(int(n), 1)
    return min(1 << (n - 1).bit_length(), INT32_MAX)


def size_class(n: int) -> int:
    """A capacity for ``n`` with little padding: :func:`next_pow2` up to 2^16, above that ``n``
    rounded up to a multiple of a sixteenth of its next power of two (padding under an eighth, 16
    classes an octave). For arrays whose every slot each step passes over: a sharded graph's entries
    per device (one power of two doubled a device's arrays in a weak-scaling series whenever one
    device held a few entries more than 2^k: RESULTS, session 30) and a batch's disjoint union (on
    a 2-core CPU the union of 20,000 matching graphs solved 1.45x faster than at powers of two:
    RESULTS, session 37)."""
    p = next_pow2(n)
    if p <= 1 << 16:
        return p
    return min(-(-int(n) // (p // 16)) * (p // 16), INT32_MAX)


def _count(n, name: str) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise GraphInputError(f"{name} must be an integer, got {n!r}")
    n = int(n)
    if n < 0:
        raise GraphInputError(f"{name} must be >= 0, got {n}")
    if n > INT32_MAX:
        raise GraphInputError(
            f"{name} = {n} does not fit int32 (at most {INT32_MAX}): jaxmatch "
            "uses int32 ids and offsets")
    return n


def check_type(g, cls, hint: str) -> None:
    """Raise unless ``g`` is a ``cls``; ``hint`` says how to build one."""
    if not isinstance(g, cls):
        raise GraphInputError(f"expected a jaxmatch.{cls.__name__}, got {type(g).__name__}; build one with {hint}")


def check_positive(value, name: str, kind=int) -> None:
    """Raise unless ``value`` is None or a positive int (``kind=float``: a positive real); bools are rejected."""
    if value is None:
        return
    types = (int, np.integer) if kind is int else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, types) or not value > 0:
        raise GraphInputError(f"{name} must be a positive {kind.__name__}, got {value!r}")


def check_flag(value, name: str) -> bool:
    """``value`` as a bool; GraphInputError unless it is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise GraphInputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_not_batch(size, what: str, example: str) -> None:
    """Raise unless ``size`` (a container's true-size field) is a scalar: a batch made by
    :func:`stack` must go through ``jax.vmap``. Works eagerly and on tracers (a tracer has its
    per-graph shape under vmap, the batch shape under jit)."""
    if np.ndim(size) != 0:
        raise GraphInputError(f"got a batch of {what}; map over it with jax.vmap, e.g. {example}")


def _capacity(n: int, given, name: str) -> int:
    if given is None:
        return next_pow2(n)
    cap = _count(given, name)
    if cap < max(n, 1):
        raise GraphInputError(f"{name} = {cap} is smaller than the size {n} it must hold")
    return cap


def _array(x, name: str) -> np.ndarray:
    """``np.asarray(x)``, with ragged or otherwise unconvertible input reported by name."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError):
        raise GraphInputError(f"{name} must be a 1-D array of numbers, got a ragged or nested sequence") from None


def _ids(x, name: str) -> np.ndarray:
    a = _array(x, name)
    if a.ndim != 1:
        raise GraphInputError(f"{name} must be a 1-D array, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise GraphInputError(f"{name} must be an integer array, got dtype {a.dtype}")
    if a.size and a.dtype.kind == "u" and a.max() > INT32_MAX:  # would wrap in the int64 cast
        i = int(np.argmax(a))
        raise GraphInputError(f"{name}[{i}] = {int(a[i])} does not fit int32 (at most {INT32_MAX})")
    return a.astype(np.int64, copy=False)


def _in_range(a: np.ndarray, n: int, name: str, size_name: str) -> None:
    bad = np.flatnonzero((a < 0) | (a >= n))
    if bad.size:
        i = int(bad[0])
        raise GraphInputError(
            f"{name}[{i}] = {int(a[i])} is out of range [0, {n}) for {size_name} = {n}")


def _size(a: np.ndarray, given, name: str) -> int:
    n = max(int(a.max()) + 1, 0) if given is None and a.size else given  # negative ids: named by _in_range
    return _count(0 if n is None else n, name)


def _values(x, m: int, name: str, *, integer: bool, signed: bool = False) -> np.ndarray:
    """The 1-D array of ``m`` real values ``x`` (integers if ``integer``, else finite; negative ones only
    if ``signed``)."""
    a = _array(x, name)
    if a.shape != (m,):
        raise GraphInputError(f"{name} must have shape ({m},) like the edge arrays, got {a.shape}")
    if a.size == 0:
        return a.astype(np.int64 if integer else np.float64)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise GraphInputError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if integer and not np.issubdtype(a.dtype, np.integer):
        raise GraphInputError(
            f"{name} must be an integer array, got dtype {a.dtype}: convert "
            "capacities to integers first (scipy's maximum_flow has the same rule)")
    if not integer:
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise GraphInputError(f"{name}[{int(bad[0])}] = {a[bad[0]]} is not finite")
    bad = np.flatnonzero(a < 0)
    if bad.size and not signed:
        raise GraphInputError(f"{name}[{int(bad[0])}] = {a[bad[0]]} is negative")
    return a


def _float_dtype():
    return jnp.dtype(jnp.float64) if jax.config.jax_enable_x64 else jnp.dtype(jnp.float32)


def _check_rule(rule: str, allowed: tuple[str, ...]) -> None:
    if rule not in allowed:
        raise GraphInputError(f"duplicates must be one of {allowed}, got {rule!r}")


def batch_terminals(source, sink, n: np.ndarray):
    """The source and sink of each of a batch's networks (``n``: their vertex counts) as two int64
    arrays: each an int or one id per network, in range, the two different in every network."""
    count, ends = n.shape[0], []
    for ids, name in ((source, "source"), (sink, "sink")):
        if np.ndim(ids) != 0 and np.shape(ids) != (count,):
            raise GraphInputError(f"a batch of {count} networks takes one {name} id per network (an int or a "
                                  f"[{count}] array), got shape {np.shape(ids)}")
        ids = np.broadcast_to(np.asarray(ids), (count,))
        if ids.dtype.kind not in "iu":
            raise GraphInputError(f"{name} ids must be integers, got {ids.dtype}")
        bad = np.flatnonzero((ids < 0) | (ids >= n))
        if bad.size:
            b = int(bad[0])
            raise GraphInputError(f"{name} {int(ids[b])} of network {b} is out of range [0, {int(n[b])})")
        ends.append(ids.astype(np.int64))
    same = np.flatnonzero(ends[0] == ends[1])
    if same.size:
        raise GraphInputError(f"source and sink of network {int(same[0])} are both vertex {int(ends[0][same[0]])}")
    return ends
