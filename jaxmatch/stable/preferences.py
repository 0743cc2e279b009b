"""The :class:`Preferences` container: rank lists of one side, validated on the host.

A side's lists are stored flat, as CSR on the device: person i's list is
``entries[start[i] : start[i] + length[i]]``, most preferred first, with
``src`` naming the owner of every entry. Arrays are padded to static
capacities (``n_capacity`` people, ``entry_capacity`` entries): padded
people have empty lists, padded entries hold -1 and the owner ``n_cap``, so
instances of equal capacities share one compilation and stack into a batch
for ``jax.vmap``. One list shared by everyone on a side (the "hard" set of
the paper) is stored once (``shared=True``): O(n + L) memory instead of
O(n L).

The constructors take CSR lists, padded rows (also a 3-D batch in one
vectorised pass), lists of lists or a shared list, and validate them with
NumPy before anything reaches the device: integer ids, ids in range, no id
twice in a row, -1 padding only at a row's end. The helpers that do those
checks live here too.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmatch._csr import _i32, _pytree
from jaxmatch._csr import _static as _field_static
from jaxmatch._validate import _count
from jaxmatch._validate import _capacity as _cap
from jaxmatch.graph import GraphInputError

HOST_BROADCAST_MAX = 1 << 24   # entries of a batch's shared owner array built on the host (below: no compile)

__all__ = ["Preferences"]


# --------------------------------------------------------------------------
# validation of raw lists (host side)


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
        complete = bool((want == L).all())                   # no -1 padding: no masking
        step = max(1, (1 << 18) // L)                        # chunks of rows that stay in the L2 cache
        bits = np.empty((step, L), np.int64)
        for i in range(0, rows, step):
            x = flat[i:i + step]
            b = bits[:x.shape[0]]
            if complete:
                np.left_shift(1, x, out=b)
            else:
                np.left_shift(1, np.maximum(x, 0, out=b), out=b)
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
    preferred first; its ids name people on the other side, in ``[0,
    n_other)``. With ``shared=True`` all n people have one list, stored once
    (``start`` = 0): memory O(n + L), not O(n L). Only capacities (array
    lengths) and ``shared`` are static, so instances of equal capacities
    share one compilation and stack into a batch for ``jax.vmap``
    (:func:`jaxmatch.stack_preferences`). Build one with :meth:`from_lists`,
    :meth:`from_padded`, :meth:`from_csr` or :meth:`shared_list`, which
    validate the lists on the host (O(entries) NumPy work) and raise
    :class:`jaxmatch.GraphInputError` on bad input; :func:`jaxmatch.stable_marriage`
    also takes the raw forms and builds these itself.

    Attributes:
        start: int32 ``[n_cap]``: where each person's list starts in
            ``entries`` (``n_entries`` in padding; 0 for a shared list).
        length: int32 ``[n_cap]``: each person's list length (0 in padding).
        entries: int32 ``[e_cap]``: the lists one after another, -1 in padding.
        src: int32 ``[e_cap]``: the owner of each entry (``n_cap`` in padding
            and for a shared list).
        n: int32 scalar: the number of people on this side.
        n_other: int32 scalar: the number of people on the other side.
        n_entries: int32 scalar: the number of stored entries.
        shared: bool, static: all people share one list, stored once.

    Example:
        >>> import jaxmatch
        >>> p = jaxmatch.Preferences.from_padded([[1, 0], [0, -1], [-1, -1]], n_other=2)
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
        """The person capacity (static): the length of ``start`` and ``length``."""
        return self.start.shape[-1]

    @property
    def e_cap(self) -> int:
        """The entry capacity (static): the length of ``entries`` and ``src``."""
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
        """Preferences from CSR lists: person i's list is ``indices[indptr[i]:indptr[i+1]]``.

        Args:
            indptr: int ``[n + 1]``: list offsets, starting at 0,
                non-decreasing, ending at ``len(indices)``.
            indices: int ``[E]``: the ids, most preferred first within each list.
            n_other: the number of people on the other side; None: the
                largest id + 1.
            n_capacity: the person capacity (array length of ``start`` and
                ``length``); None: the next power of two of the number of people.
            entry_capacity: the entry capacity (array length of ``entries``
                and ``src``); None: the next power of two of the entries.
            name: how error messages name these lists.

        Returns:
            The validated :class:`Preferences`.

        Raises:
            GraphInputError: when the arrays are not 1-D integer arrays,
                ``indptr`` is inconsistent, an id is out of ``[0, n_other)``
                or a list holds an id twice, or a capacity is too small.
        """
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
        """Preferences from padded rows of ids, most preferred first, -1 after the last one.

        A numpy broadcast view whose rows are one row (stride 0, as from
        ``np.broadcast_to``) becomes a shared list, stored once. A 3-D array
        ``[B, n, L]`` holds B instances of n people each and gives their batch
        for ``jax.vmap`` in one vectorised pass (the same arrays as
        :func:`jaxmatch.stack_preferences` of the B instances built one by
        one at these capacities).

        Args:
            a: int ``[n, L]`` (one instance) or ``[B, n, L]`` (a batch):
                row i holds person i's ids, then -1 padding.
            n_other: the number of people on the other side (one count for
                all instances of a batch); None: the largest id + 1.
            n_capacity: the person capacity (array length of ``start`` and
                ``length``); None: the next power of two of the number of people.
            entry_capacity: the entry capacity (array length of ``entries``
                and ``src``); None: the next power of two of the entries.
            name: how error messages name these lists.

        Returns:
            The validated :class:`Preferences` (a batch with a leading axis
            of B for a 3-D ``a``).

        Raises:
            GraphInputError: when ``a`` is not an integer array of 2 or 3
                dimensions, an id is below -1 or out of ``[0, n_other)``, -1
                padding is followed by an id, a row lists an id twice, or a
                capacity is too small.
        """
        if np.ndim(a) == 3:
            return cls._batch(_int_array(a, name, 3), n_other, n_capacity, entry_capacity, name)
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
        """:meth:`from_padded` of a 3-D array: B instances validated and laid out in one vectorised pass.

        ``a`` keeps its integer dtype (no int64 copy of what may be 10^8 entries): only int32 ids
        go to the device, and complete lists of a dtype of at most 32 bits go there as they are."""
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
            src = owner.reshape(ec)   # the same owners in every instance: broadcast on the host while the
            src = (_i32(np.broadcast_to(src, (B, ec))) if B * ec <= HOST_BROADCAST_MAX    # copy is small, else
                   else jnp.broadcast_to(_i32(src), (B, ec)))   # on the device (a small program per shape)
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
        """Preferences from a sequence of lists of ids, most preferred first.

        Args:
            lists: a sequence with one 1-D sequence of integer ids per
                person (of any lengths, possibly empty).
            n_other: the number of people on the other side; None: the
                largest id + 1.
            **kw: ``n_capacity``, ``entry_capacity`` and ``name``, as for
                :meth:`from_csr`.

        Returns:
            The validated :class:`Preferences`.

        Raises:
            GraphInputError: when ``lists`` is not a sequence of lists of
                integers, or as for :meth:`from_csr`.
        """
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
        """Preferences of n people who all rank the other side by the same list ``order``.

        The list is stored once: O(n + len(order)) memory. The solver uses
        its inverse as the rank table (the "hard" set of the paper, where
        everyone has the same complete list).

        Args:
            order: int ``[L]``: the shared list, most preferred first.
            n: the number of people on this side.
            n_other: the number of people on the other side; None: the
                largest id + 1.
            n_capacity: the person capacity (array length of ``start`` and
                ``length``); None: the next power of two of the number of people.
            entry_capacity: the entry capacity (array length of ``entries``
                and ``src``); None: the next power of two of the entries.
            name: how error messages name these lists.

        Returns:
            The validated :class:`Preferences`, with ``shared=True``.

        Raises:
            GraphInputError: when ``order`` is not a 1-D integer array, an id
                is out of ``[0, n_other)`` or listed twice, a count is
                negative, or a capacity is too small.
        """
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
        """Host copy as a list of lists of ids (a shared list repeated for everyone)."""
        indptr, ids = self.to_csr()
        return [ids[indptr[i]:indptr[i + 1]].tolist() for i in range(indptr.size - 1)]

    def shared_order(self) -> np.ndarray:
        """The one list of a shared instance (host copy)."""
        if not self.shared:
            raise GraphInputError("shared_order needs a shared list")
        return np.asarray(self.entries)[:int(self.n_entries)]

    def capacities(self) -> dict:
        """The capacities as keyword arguments: ``dict(n_capacity=..., entry_capacity=...)``."""
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
