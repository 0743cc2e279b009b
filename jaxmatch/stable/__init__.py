"""Stable marriage (SM and SMI): Gale-Shapley and McVitie-Wilson in array form.

Paper IV of the thesis in ``shared/papers/gpu-suitor-louvain-stable-marriage-thesis.txt``
(Manne, Naim, Lerring, Halappanavar, "On stable marriages and greedy
matchings"). The algorithms are in :mod:`jaxmatch.stable.gale_shapley`.

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
from jaxmatch.graph import INT32_MAX, GraphInputError, _count, _i32, _pytree, check_flag, check_not_batch, check_positive, next_pow2
from jaxmatch.graph import _capacity as _cap
from jaxmatch.graph import _static as _field_static
from jaxmatch.kernels import stable_mw as _stable_mw
from jaxmatch.stable import gale_shapley as _gs

__all__ = ["Preferences", "StableMarriageResult", "stable_marriage", "stack_preferences",
           "read_preferences"]

METHODS = _gs.METHODS
MAX_UNROLL = 1024   # the largest unroll and window: both are Python loops when the solver is traced


# --------------------------------------------------------------------------
# the container












def _int_array(x, name: str, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(x)
    except jax.errors.TracerArrayConversionError:
        raise GraphInputError(
            f"{name} is traced: build Preferences (or stack_preferences) outside jit/vmap and "
            "pass those in") from None
    except (ValueError, TypeError):
        raise GraphInputError(f"{name} must be a {ndim}-D integer array, got a ragged or nested sequence "
                              "(give lists of different lengths as a list of lists)") from None
    if a.ndim != ndim:
        raise GraphInputError(f"{name} must be a {ndim}-D array, got shape {a.shape}")
    if a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer)):
        raise GraphInputError(f"{name} must be an integer array, got dtype {a.dtype}")
    return a


def _row_ids(x, name: str, i: int) -> np.ndarray:
    """Person i's list as int64 ids: a 1-D sequence of integers (possibly empty)."""
    try:
        a = np.asarray(x)
    except (ValueError, TypeError):
        a = None
    if a is None or a.ndim != 1 or (a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer))):
        import reprlib
        raise GraphInputError(f"{name}: person {i}'s list must be a 1-D sequence of integer ids, "
                              f"got {reprlib.repr(x)}")
    return a.astype(np.int64)


def _check_rows(indptr: np.ndarray, ids: np.ndarray, n_other: int, name: str) -> None:
    """ids in [0, n_other) and no row listing an id twice."""
    bad = np.flatnonzero((ids < 0) | (ids >= n_other))
    if bad.size:
        k = int(bad[0])
        row = int(np.searchsorted(indptr, k, side="right") - 1)
        raise GraphInputError(
            f"{name}: person {row} lists id {int(ids[k])}, out of range [0, {n_other}) for the "
            f"{n_other} people on the other side")
    if ids.size < 2:
        return
    rows = np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))
    keys = rows * max(n_other, 1) + ids
    keys.sort()
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        k = int(keys[dup[0]])
        raise GraphInputError(f"{name}: person {k // max(n_other, 1)} lists id {k % max(n_other, 1)} twice")


def _who(a, idx) -> str:
    """'person r' of a padded id array, with its instance first for a batch ([B, n, L])."""
    return (f"instance {idx[0]}, " if a.ndim == 3 else "") + f"person {idx[-1]}"


def _check_padding(a, name: str):
    """Validate a padded id array ([n, L] or a batch [B, n, L]): ids >= -1, the -1 padding only at a
    row's end. Returns the padding mask."""
    if a.size and a.min() < -1:
        idx = tuple(int(x) for x in np.argwhere(a < -1)[0])
        raise GraphInputError(f"{name}{list(idx)} = {a[idx]}: ids are >= 0, -1 is padding")
    pad = a < 0
    late = ~pad[..., 1:] & pad[..., :-1]
    if late.any():
        idx = tuple(int(x) for x in np.argwhere(late)[0])
        row = _who(a, idx[:-1]).replace("person", "row")
        raise GraphInputError(f"{name}: {row} has id {a[idx[:-1] + (idx[-1] + 1,)]} after -1 padding: "
                              "-1 may only end a row")
    return pad


def _check_repeats(a, lengths, n_other: int, name: str) -> None:
    """Raise if a row of the padded id array ``a`` ([n, L] or [B, n, L]) lists an id twice: with at
    most 64 ids, one bit per id OR-ed along each row (NumPy >= 2); else one scatter of every id into a
    [rows, n_other] table where that fits in 8 entries per id; else (or to name a repeat) a sort per row."""
    rows, L = a.size // max(a.shape[-1], 1), a.shape[-1]
    if L < 2:
        return
    if n_other <= 64 and hasattr(np, "bitwise_count"):   # a bit per id: a row's OR has a bit per distinct id
        flat, want = a.reshape(rows, L), lengths.reshape(rows)
        step = max(1, (1 << 16) // L)                        # chunks of rows that stay in the caches
        bits = np.empty((step, L), np.int64)
        for i in range(0, rows, step):
            x = flat[i:i + step]
            b = bits[:x.shape[0]]
            np.left_shift(1, np.maximum(x, 0, out=b), out=b)
            if (want[i:i + step] != L).any():
                b[x < 0] = 0
            if not np.array_equal(np.bitwise_count(np.bitwise_or.reduce(b, axis=1).view(np.uint64)),
                                  want[i:i + step]):
                break
        else:
            return
    elif rows * n_other <= 8 * a.size:
        seen = np.zeros((rows, n_other + 1), bool)
        seen[np.repeat(np.arange(rows), L), a.reshape(-1)] = True      # -1 padding lands in the last column
        if np.array_equal(seen[:, :-1].sum(axis=1), lengths.reshape(-1)):
            return
    srt = np.sort(a, axis=-1)
    rep = (srt[..., 1:] == srt[..., :-1]) & (srt[..., 1:] >= 0)
    if rep.any():
        idx = tuple(int(x) for x in np.argwhere(rep)[0])
        raise GraphInputError(f"{name}: {_who(a, idx[:-1])} lists id {srt[idx]} twice")


@_pytree
class Preferences:
    """Rank lists of one side (men or women), validated on the host, padded on the device.

    Person i's list is ``entries[start[i] : start[i] + length[i]]``, most
    preferred first. ``src[k]`` is the owner of entry k (``n_cap`` in padding
    and for a shared list). ``n`` people, ids on the other side in ``[0,
    n_other)``, ``n_entries`` stored entries. With ``shared=True`` all n
    people have one list, stored once (``start`` = 0): memory O(n + L), not
    O(n L). Only capacities (array lengths) and ``shared`` are static, so
    instances of equal capacities share one compilation and stack for vmap.

    >>> p = Preferences.from_padded([[1, 0], [0, -1], [-1, -1]], n_other=2)
    >>> int(p.n), int(p.n_entries), p.shared, p.to_lists()
    (3, 3, False, [[1, 0], [0], []])
    """

    start: jax.Array
    length: jax.Array
    entries: jax.Array
    src: jax.Array
    n: jax.Array
    n_other: jax.Array
    n_entries: jax.Array
    shared: bool = _field_static()

    @property
    def n_cap(self) -> int:
        return self.start.shape[-1]

    @property
    def e_cap(self) -> int:
        return self.entries.shape[-1]

    # ---- constructors (host side, validated)

    @classmethod
    def _build(cls, indptr, ids, n_other, *, n_capacity=None, entry_capacity=None, name="preferences",
               checked=False):
        n = _count(indptr.size - 1, f"{name}: number of people")
        n_other = _count(n_other, f"{name}: n_other")
        e = _count(ids.size, f"{name}: total list length")
        if not checked:
            _check_rows(indptr, ids, n_other, name)
        nc = _cap(n, n_capacity, "n_capacity")
        ec = _cap(e, entry_capacity, "entry_capacity")
        start = np.full(nc, e, np.int64)
        length = np.zeros(nc, np.int64)
        start[:n], length[:n] = indptr[:-1], np.diff(indptr)
        entries = np.full(ec, -1, np.int64)
        entries[:e] = ids
        src = np.full(ec, nc, np.int64)
        src[:e] = np.repeat(np.arange(n), np.diff(indptr))
        return cls(_i32(start), _i32(length), _i32(entries), _i32(src), _i32(n), _i32(n_other),
                   _i32(e), False)

    @classmethod
    def from_csr(cls, indptr, indices, n_other=None, *, n_capacity=None, entry_capacity=None,
                 name="preferences"):
        """Lists ``indices[indptr[i]:indptr[i+1]]``; ``n_other`` defaults to max id + 1."""
        indptr = _int_array(indptr, f"{name} indptr", 1).astype(np.int64)
        ids = _int_array(indices, f"{name} indices", 1).astype(np.int64)
        if indptr.size == 0 or indptr[0] != 0 or indptr[-1] != ids.size or np.any(np.diff(indptr) < 0):
            raise GraphInputError(
                f"{name}: indptr must start at 0, never decrease and end at len(indices) = {ids.size}")
        if n_other is None:
            n_other = int(ids.max()) + 1 if ids.size else 0
        return cls._build(indptr, ids, _count(n_other, "n_other"), n_capacity=n_capacity,
                          entry_capacity=entry_capacity, name=name)

    @classmethod
    def from_padded(cls, a, n_other=None, *, n_capacity=None, entry_capacity=None, name="preferences"):
        """Rows of ids, most preferred first, -1 after the last one.

        A numpy broadcast view whose rows are one row (stride 0, as from
        ``np.broadcast_to``) becomes a shared list, stored once. A 3-D array
        ``[B, n, L]`` holds B instances of n people each and gives their batch
        for ``jax.vmap`` in one pass (the same arrays as
        :func:`stack_preferences` of the B instances built one by one at these
        capacities; ``n_other`` then one count for all).
        """
        if np.ndim(a) == 3:
            return cls._batch(_int_array(a, name, 3).astype(np.int64, copy=False), n_other, n_capacity,
                              entry_capacity, name)
        if isinstance(a, np.ndarray) and a.ndim == 2 and a.shape[0] > 1 and a.strides[0] == 0:
            row = a[0]
            k = int(np.sum(row >= 0))
            if np.any(row[k:] != -1):
                raise GraphInputError(f"{name}: -1 padding must come after the last id of a row")
            return cls.shared_list(row[:k], a.shape[0], n_other, n_capacity=n_capacity,
                                   entry_capacity=entry_capacity, name=name)
        a = _int_array(a, name, 2).astype(np.int64, copy=False)
        pad = _check_padding(a, name)
        lengths = a.shape[1] - pad.sum(axis=1)
        indptr = np.zeros(a.shape[0] + 1, np.int64)
        np.cumsum(lengths, out=indptr[1:])
        ids = a[~pad]
        if n_other is None:
            n_other = int(ids.max()) + 1 if ids.size else 0
        n_other = _count(n_other, "n_other")
        if ids.size and ids.max() >= n_other:
            _check_rows(indptr, ids, n_other, name)   # raises, naming the row
        _check_repeats(a, lengths, n_other, name)
        return cls._build(indptr, ids, n_other, n_capacity=n_capacity, entry_capacity=entry_capacity,
                          name=name, checked=True)

    @classmethod
    def _batch(cls, a, n_other, n_capacity, entry_capacity, name):
        """:meth:`from_padded` of a 3-D array: B instances validated and laid out in one vectorised pass."""
        B, n, L = a.shape
        lo, hi = (int(a.min()), int(a.max())) if a.size else (0, -1)
        complete = lo >= 0                                               # no -1 padding: no padding checks
        pad = None if complete else _check_padding(a, name)
        if n_other is None:
            n_other = hi + 1
        n_other = _count(n_other, "n_other")
        if hi >= n_other:
            b, r, c = np.argwhere(a >= n_other)[0]
            raise GraphInputError(f"{name}: instance {b}, person {r} lists id {a[b, r, c]}, out of range "
                                  f"[0, {n_other})")
        lengths = np.full((B, n), L, np.int64) if complete else L - pad.sum(axis=-1)   # [B, n]
        _check_repeats(a, lengths, n_other, name)
        e = lengths.sum(axis=1)                                          # entries per instance
        nc = _cap(_count(n, f"{name}: number of people"), n_capacity, "n_capacity")
        ec = _cap(int(e.max()) if B else 0, entry_capacity, "entry_capacity")
        start = np.repeat(e[:, None], nc, axis=1)
        length = np.zeros((B, nc), np.int64)
        start[:, :n] = np.cumsum(lengths, axis=1) - lengths
        length[:, :n] = lengths
        owner = np.broadcast_to(np.arange(n, dtype=np.int32)[:, None], (n, L))
        full = lambda x: _i32(np.full(B, x))  # noqa: E731
        if ec == n * L and complete:        # complete lists filling the capacity: the rows as they are
            entries = _i32(a.reshape(B, ec))
            src = jnp.broadcast_to(_i32(owner.reshape(ec)), (B, ec))     # built on the device
            return cls(_i32(start), _i32(length), entries, src, full(n), full(n_other), _i32(e), False)
        entries = np.full((B, ec), -1, np.int32)
        src = np.full((B, ec), nc, np.int32)
        if complete:                                                     # complete lists: no compaction
            entries[:, :n * L] = a.reshape(B, n * L)
            src[:, :n * L] = owner.reshape(n * L)
        else:                                                            # each instance's entries in row order
            slots = np.arange(ec) < e[:, None]
            entries[slots] = a[~pad]
            src[slots] = np.broadcast_to(owner, a.shape)[~pad]
        return cls(_i32(start), _i32(length), _i32(entries), _i32(src), full(n), full(n_other), _i32(e), False)

    @classmethod
    def from_lists(cls, lists, n_other=None, **kw):
        """From a sequence of sequences of ids."""
        name = kw.get("name", "preferences")
        if isinstance(lists, (str, bytes, dict)) or not hasattr(lists, "__len__"):
            raise GraphInputError(f"{name} must be a sequence of lists of ids, got {type(lists).__name__}")
        lists = [_row_ids(x, name, i) for i, x in enumerate(lists)]
        indptr = np.zeros(len(lists) + 1, np.int64)
        np.cumsum([x.size for x in lists], out=indptr[1:])
        ids = np.concatenate(lists) if lists else np.zeros(0, np.int64)
        return cls.from_csr(indptr, ids, n_other, **kw)

    @classmethod
    def shared_list(cls, order, n, n_other=None, *, n_capacity=None, entry_capacity=None,
                    name="preferences"):
        """n people who all rank the other side by the same list ``order``."""
        ids = _int_array(order, f"{name} order", 1).astype(np.int64)
        n = _count(n, "n")
        if n_other is None:
            n_other = int(ids.max()) + 1 if ids.size else 0
        n_other = _count(_count(n_other, "n_other"), f"{name}: n_other")
        _check_rows(np.array([0, ids.size]), ids, n_other, name)
        nc = _cap(n, n_capacity, "n_capacity")
        ec = _cap(ids.size, entry_capacity, "entry_capacity")
        length = np.zeros(nc, np.int64)
        length[:n] = ids.size
        entries = np.full(ec, -1, np.int64)
        entries[:ids.size] = ids
        return cls(_i32(np.zeros(nc)), _i32(length), _i32(entries), _i32(np.full(ec, nc)), _i32(n),
                   _i32(n_other), _i32(ids.size), True)

    # ---- host views

    def to_csr(self):
        """Host copy ``(indptr int64 [n+1], indices int32)``; a shared list is materialised."""
        n = int(self.n)
        length = np.asarray(self.length)[:n].astype(np.int64)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(length, out=indptr[1:])
        if self.shared:
            row = np.asarray(self.entries)[:int(self.n_entries)]
            return indptr, np.tile(row, n).astype(np.int32)
        return indptr, np.asarray(self.entries)[:int(self.n_entries)].astype(np.int32)

    def to_lists(self) -> list[list[int]]:
        indptr, ids = self.to_csr()
        return [ids[indptr[i]:indptr[i + 1]].tolist() for i in range(indptr.size - 1)]

    def shared_order(self) -> np.ndarray:
        """The one list of a shared instance (host copy)."""
        if not self.shared:
            raise GraphInputError("shared_order needs a shared list")
        return np.asarray(self.entries)[:int(self.n_entries)]

    def capacities(self) -> dict:
        return dict(n_capacity=self.n_cap, entry_capacity=self.e_cap)

    def with_capacity(self, **caps) -> "Preferences":
        """The same lists at other capacities (``n_capacity``, ``entry_capacity``)."""
        if self.shared:
            return Preferences.shared_list(self.shared_order(), int(self.n), int(self.n_other), **caps)
        indptr, ids = self.to_csr()
        return Preferences.from_csr(indptr, ids, int(self.n_other), **caps)

    def unshared(self) -> "Preferences":
        """A shared list materialised as one list per person (O(n L) memory)."""
        if not self.shared:
            return self
        indptr, ids = self.to_csr()
        return Preferences.from_csr(indptr, ids, int(self.n_other))

    def __repr__(self):
        try:
            n, e = int(self.n), int(self.n_entries)
        except Exception:  # traced or batched
            n = e = "?"
        return f"Preferences(n={n}, n_entries={e}, shared={self.shared}, capacities=({self.n_cap}, {self.e_cap}))"




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


def as_instance(men_prefs, women_prefs) -> tuple[Preferences, Preferences]:
    """Validated ``(men, women)`` Preferences from any accepted input form.

    Raw forms are checked against each other (men's ids must be women and
    the other way round); Preferences built earlier are checked for the same
    agreement when their sizes are concrete.
    """
    n_men, n_women = _size_of(men_prefs, "men_prefs"), _size_of(women_prefs, "women_prefs")
    men = _as_prefs(men_prefs, n_women, "men_prefs")
    women = _as_prefs(women_prefs, n_men, "women_prefs")
    for p, side in ((men, "men_prefs"), (women, "women_prefs")):
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

    >>> b = stack_preferences([Preferences.from_lists([[0], [0, 1]]), Preferences.from_lists([[1]])])
    >>> b.n.shape, b.n_cap
    ((2,), 2)
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
    """Rank lists from a text file: line i holds person i's ids (0-based), best first.

    Ids are separated by spaces or commas; an empty line is an empty list;
    lines starting with ``#`` are comments. Returns CSR lists ``(indptr,
    indices)`` for :func:`stable_marriage`.
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
    """The man-optimal stable matching.

    ``wife[m]`` is man m's wife or -1, ``husband[w]`` woman w's husband or -1.
    ``status`` (:class:`jaxmatch.Status`) is CONVERGED (the matching is
    stable) or MAX_ITERS (then it is a matching of mutually ranked pairs, not
    necessarily stable). ``stats``: ``proposals`` (women considered,
    summed over the men: the paper's count, including proposals skipped as
    sure to fail; an exact Python int eagerly), ``rounds`` (loop steps that
    proposed), ``waves`` (proposal waves) and ``steps`` (all loop steps:
    rounds and slot compactions; also as ``iterations``). Eagerly the arrays have the true sizes;
    under ``jit``/``vmap`` they keep the capacities, with -1 in padding.
    """

    wife: jax.Array
    husband: jax.Array
    status: jax.Array
    stats: dict[str, Any]




def stable_marriage(men_prefs, women_prefs, *, method: str = "mcvitie_wilson", max_iters: int | None = None,
                    unroll: int | None = _gs.DEFAULT_UNROLL, window: int | None = _gs.DEFAULT_WINDOW,
                    kernel=None, config: _gs.Config | None = None, throw: bool = True) -> StableMarriageResult:
    """Man-optimal stable matching of an SM or SMI instance.

    ``method``: ``"mcvitie_wilson"`` (a displaced man proposes again at once,
    ``unroll`` proposal waves per loop step) or ``"gale_shapley"`` (one round
    of proposals per loop step, the queue of free men rebuilt each round).
    Both skip proposals that are sure to fail (the woman holds a better one),
    looking ``window`` candidates ahead per wave, and both return the unique
    man-optimal stable matching; see :mod:`jaxmatch.stable.gale_shapley` for
    the array form. ``max_iters`` bounds the loop steps (default: enough for
    any instance of these capacities). ``unroll=None`` and ``window=None``
    take the defaults (the values in the signature). ``config``: the array
    solver's static knobs (:class:`jaxmatch.stable.gale_shapley.Config`;
    None: the defaults). ``throw``: eagerly,
    raise :class:`jaxmatch.SolverError` (holding the result) when
    ``max_iters`` stops the solver first; under ``jit``/``vmap`` read
    ``status`` instead.

    Cost: the women's ranks become a lookup once (a sort and a binary search,
    O(E log L) for E list entries); then O(window) per considered entry, with
    work proportional to the free men in each wave, and one loop step per
    wave (Gale-Shapley) or per ``unroll`` waves (McVitie-Wilson; one wave
    while the busy count falls fast, so the slots compact after it). Works
    eagerly, under ``jax.jit`` and under ``jax.vmap`` over a batch from
    :func:`stack_preferences` (raw arrays are converted eagerly only).

    ``kernel``: run McVitie-Wilson's proposals in the lock-free Pallas kernel
    of :mod:`jaxmatch.kernels.stable_mw` (many proposals per slot per launch,
    no barrier between blocks; the same answer and proposal count, while
    ``rounds`` and ``waves`` then depend on the GPU's timing). ``None``: on
    the GPU, for McVitie-Wilson. Elsewhere the kernel runs in Pallas's
    interpret mode, which is for tests only. A
    :class:`jaxmatch.kernels.stable_mw.Config` sets the kernel's knobs.

    >>> men = [[0, 1], [0, 1]]
    >>> women = [[1, 0], [0, 1]]
    >>> res = stable_marriage(men, women)
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
    unroll = _gs.DEFAULT_UNROLL if unroll is None else int(unroll)   # None: the default
    window = _gs.DEFAULT_WINDOW if window is None else int(window)
    for value, name in ((unroll, "unroll"), (window, "window")):  # unrolled at trace time
        if value > MAX_UNROLL:
            raise GraphInputError(f"{name} = {value} is above the supported {MAX_UNROLL} "
                                  "(it is unrolled when the solver is compiled)")
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


@partial(jax.jit, static_argnames=("method", "max_iters", "unroll", "window", "kernel", "config"))
def _solve(men, women, *, method, max_iters, unroll, window, kernel, config=_gs.DEFAULT):
    wife, husband, status, pos, stats = _gs.solve(
        men, women, method=method, max_iters=max_iters, unroll=unroll, window=window, kernel=kernel,
        interpret=kernel is not None and jax.default_backend() != "gpu", cfg=config)
    return wife, husband, status, pos, sum_words(pos), stats
