"""Certificates of stable marriages (SM with complete lists, SMI with incomplete ones).

A matching is stable when no man and woman who rank each other both prefer
each other to their partners (a *blocking pair*; D. Gale, L. S. Shapley,
"College admissions and the stability of marriage", The American
Mathematical Monthly 69(1), 1962). Rank lists come in any of the forms
:func:`jaxmatch.stable_marriage` accepts and are brought to CSR
(``indptr``, ``ids``, best first) by ``_rank_lists``. The check then
marks, for each side, the entries ranked above the partner, and a blocking
pair is a key ``(woman, man)`` present in both sets (one sort-based
intersection); when both sides share one list each it runs on the two lists
alone, O(n log n), without expanding n copies.
"""
from __future__ import annotations

import numpy as np

from jaxmatch.certify._common import CertificateError


def _rank_lists(x, name: str):
    """("shared", order, n) for one list shared by n people, else ("csr", indptr, ids).

    Accepts jaxmatch ``Preferences`` (duck-typed: ``shared``, ``to_csr``),
    ``(indptr, indices)``, a list of lists, or a padded array with -1 after
    each row's last id (a numpy broadcast view of one row counts as shared).
    """
    if hasattr(x, "to_csr") and hasattr(x, "shared"):
        if x.shared:
            return "shared", np.asarray(x.shared_order()).astype(np.int64), int(x.n)
        indptr, ids = x.to_csr()
        return "csr", np.asarray(indptr, np.int64), np.asarray(ids, np.int64)
    if isinstance(x, tuple) and len(x) == 2:
        return "csr", np.asarray(x[0], np.int64), np.asarray(x[1], np.int64)
    if isinstance(x, list) and (not x or len({len(r) for r in x}) > 1):
        rows = [np.asarray(r, np.int64).reshape(-1) for r in x]
        indptr = np.concatenate([[0], np.cumsum([r.size for r in rows], dtype=np.int64)]).astype(np.int64)
        return "csr", indptr, np.concatenate(rows) if rows else np.zeros(0, np.int64)
    a = np.asarray(x)
    if a.ndim != 2:
        raise CertificateError(f"{name} must be padded [n, L], (indptr, indices) or lists, got shape {a.shape}")
    if a.shape[0] > 1 and a.strides[0] == 0:
        row = a[0].astype(np.int64)
        return "shared", row[row >= 0], a.shape[0]
    a = a.astype(np.int64)
    keep = a >= 0
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int64)
    return "csr", indptr, a[keep]


def _to_csr(lists):
    if lists[0] == "csr":
        return lists[1], lists[2]
    _, order, n = lists
    return np.arange(n + 1, dtype=np.int64) * order.size, np.tile(order, n)


def _people(lists) -> int:
    return lists[2] if lists[0] == "shared" else lists[1].size - 1


def _partner_pos(indptr, ids, partner, who: str, other: str):
    """Position of each person's partner in their own list (-1 if single); raises if unlisted."""
    n = indptr.size - 1
    owner = np.repeat(np.arange(n), np.diff(indptr))
    pos = np.arange(ids.size) - indptr[owner]
    hit = ids == partner[owner]
    out = np.full(n, -1, np.int64)
    out[owner[hit]] = pos[hit]
    bad = np.flatnonzero((partner >= 0) & (out < 0))
    if bad.size:
        p = int(bad[0])
        raise CertificateError(f"{who} {p} is married to {other} {int(partner[p])}, whom {who} {p} does not rank")
    return owner, pos, out


def check_stable(men_prefs, women_prefs, wife) -> None:
    """Raise unless ``wife`` is a stable matching of the SM/SMI instance.

    A matching of men to women is stable when it has no blocking pair: a
    man m and a woman w who rank each other, with m single or preferring w
    to his wife, and w single or preferring m to her husband (Gale and
    Shapley, 1962). With incomplete lists (SMI) only mutually ranked pairs
    may marry. The check needs no stable matching to compare with (stable
    matchings are not unique): it verifies the definition directly.
    O(E + B log B) for E list entries and B the entries ranked above a
    partner; O(n log n) when both sides share one list each.

    Args:
        men_prefs: the men's rank lists, best first, in any form of
            :func:`jaxmatch.stable_marriage`: a :class:`jaxmatch.Preferences`,
            a padded int array [n_men, L] with -1 after each list's end, a
            list of lists, or ``(indptr, indices)`` in CSR form (a numpy
            broadcast view of one row counts as one shared list).
        women_prefs: the women's rank lists (ids of men), in the same forms.
        wife: int array [n_men] (JAX or numpy), each man's wife, -1 single.

    Raises:
        CertificateError: when a rank-list argument has no accepted form,
            ``wife`` has the wrong shape or an id out of range, a woman has
            two husbands, a married pair do not rank each other, or a
            blocking pair exists (the message names one).

    Example:
        >>> from jaxmatch import certify
        >>> men = [[0, 1], [0, 1]]      # both men prefer woman 0
        >>> women = [[1, 0], [1, 0]]    # both women prefer man 1
        >>> certify.check_stable(men, women, [1, 0])
        >>> certify.check_stable(men, women, [0, 1])
        Traceback (most recent call last):
        ...
        jaxmatch.certify.CertificateError: blocking pair: man 1 and woman 0 rank each other and prefer each other to their partners
    """
    men, women = _rank_lists(men_prefs, "men_prefs"), _rank_lists(women_prefs, "women_prefs")
    n_men, n_women = _people(men), _people(women)
    wf = np.asarray(wife)
    if wf.shape != (n_men,):
        raise CertificateError(f"wife has shape {wf.shape}, expected ({n_men},)")
    wf = wf.astype(np.int64)
    bad = np.flatnonzero((wf < -1) | (wf >= n_women))
    if bad.size:
        raise CertificateError(f"wife[{bad[0]}] = {wf[bad[0]]} is not -1 or a woman in [0, {n_women})")
    married = np.flatnonzero(wf >= 0)
    husband = np.full(n_women, -1, np.int64)
    husband[wf[married]] = married
    if np.count_nonzero(husband >= 0) != married.size:
        w = int(np.flatnonzero(np.bincount(wf[married], minlength=n_women) > 1)[0])
        raise CertificateError(f"woman {w} is married to more than one man")
    if men[0] == "shared" and women[0] == "shared":
        _check_stable_shared(men[1], women[1], n_men, n_women, wf, husband)
        return
    m_ptr, m_ids = _to_csr(men)
    w_ptr, w_ids = _to_csr(women)
    m_own, m_pos, wife_pos = _partner_pos(m_ptr, m_ids, wf, "man", "woman")
    w_own, w_pos, hus_pos = _partner_pos(w_ptr, w_ids, husband, "woman", "man")
    # pairs each side prefers to its partner; a blocking pair is in both sets
    q = (wife_pos[m_own] < 0) | (m_pos < wife_pos[m_own])
    f = (hus_pos[w_own] < 0) | (w_pos < hus_pos[w_own])
    nm = max(n_men, 1)
    keys_m = m_ids[q] * nm + m_own[q]
    keys_w = w_own[f] * nm + w_ids[f]
    common = np.intersect1d(keys_m, keys_w, assume_unique=True)
    if common.size:
        w, m = divmod(int(common[0]), nm)
        raise CertificateError(f"blocking pair: man {m} and woman {w} rank each other and prefer each other "
                               "to their partners")


def _check_stable_shared(order_m, order_w, n_men, n_women, wf, husband) -> None:
    """The check when all men share one list and all women share one list, O(n log n)."""
    big = np.iinfo(np.int64).max
    inv_m = np.full(n_women, big, np.int64)
    inv_m[order_m] = np.arange(order_m.size)
    inv_w = np.full(n_men, big, np.int64)
    inv_w[order_w] = np.arange(order_w.size)
    married = np.flatnonzero(wf >= 0)
    for m in married[(inv_m[wf[married]] == big) | (inv_w[married] == big)][:1]:
        raise CertificateError(f"man {m} and woman {wf[m]} are married but do not rank each other")
    # a[m]: rank (in the men's list) of m's wife, past the end if single; b[w] likewise
    a = np.where(wf >= 0, inv_m[np.maximum(wf, 0)], order_m.size)
    b = np.where(husband >= 0, inv_w[np.maximum(husband, 0)], order_w.size)
    # best[k] = max of b over the first k women of the men's list
    best = np.concatenate([[-1], np.maximum.accumulate(b[order_m])]) if order_m.size else np.array([-1])
    listed = inv_w < big
    block = listed & (best[np.minimum(a, order_m.size)] > inv_w)
    if block.any():
        m = int(np.flatnonzero(block)[0])
        k = int(np.flatnonzero(b[order_m][:a[m]] > inv_w[m])[0])
        raise CertificateError(f"blocking pair: man {m} and woman {int(order_m[k])} rank each other and "
                               "prefer each other to their partners")


def is_stable(men_prefs, women_prefs, wife) -> bool:
    """True when ``wife`` is a stable matching (see :func:`check_stable`).

    The boolean form of :func:`check_stable`: a valid matching of mutually
    ranked pairs with no blocking pair.

    Args:
        men_prefs: the men's rank lists, best first (forms as in :func:`check_stable`).
        women_prefs: the women's rank lists, in the same forms.
        wife: int array [n_men], each man's wife, -1 single.

    Returns:
        bool: True when :func:`check_stable` passes, False when it raises
        :class:`CertificateError`.

    Example:
        >>> from jaxmatch import certify
        >>> men, women = [[0, 1], [0, 1]], [[1, 0], [1, 0]]
        >>> certify.is_stable(men, women, [1, 0]), certify.is_stable(men, women, [0, 1])
        (True, False)
    """
    try:
        check_stable(men_prefs, women_prefs, wife)
    except CertificateError:
        return False
    return True
