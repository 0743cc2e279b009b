"""Pallas kernels in interpret mode (CPU) against their pure-JAX references."""
from functools import partial

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.generators import stable_hard
from jaxmatch._ops import sum_words, words_total
from jaxmatch.certify import check_stable
from jaxmatch.graph import GraphInputError
from jaxmatch.kernels import stable_mw
from jaxmatch.kernels.stable_mw import Config
from jaxmatch.stable import as_instance, stable_marriage
from jaxmatch.stable import gale_shapley as gs
from tests.test_stable import built, check_against_reference, check_compacting_solve, gs_reference, random_instance

CAPS = dict(n_capacity=16, entry_capacity=256)
# blocks of 8 slots: two programs at capacity 16, so blocks race for the same women
SMALL = [Config(block=8, window=1, steps=256), Config(block=8, window=2, steps=3, short_steps=1),
         Config(block=16, window=4, steps=5)]


@pytest.mark.parametrize("cfg", SMALL)
def test_kernel_equals_sequential_reference(cfg):
    """Random SM and SMI instances, unequal sides and empty lists: the same matching and
    proposal count as the plain sequential Gale-Shapley."""
    rng = np.random.default_rng(hash(cfg) % 2**32)
    for k in range(30):
        n_men, n_women = int(rng.integers(1, 17)), int(rng.integers(1, 17))
        men, women = random_instance(rng, n_men, n_women, complete=k % 5 == 0)
        res = stable_marriage(*built(men, women, **CAPS), kernel=cfg)
        check_against_reference(men, women, res)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_property_kernel_equals_reference(data):
    """Any SMI instance within the capacities: the kernel's answer is the sequential one."""
    n_men = data.draw(st.integers(0, 16))
    n_women = data.draw(st.integers(0, 16))
    lists = lambda n, m: st.lists(st.lists(st.integers(0, max(m - 1, 0)), max_size=m, unique=True)
                                  if m else st.just([]), min_size=n, max_size=n)
    men, women = data.draw(lists(n_men, n_women)), data.draw(lists(n_women, n_men))
    res = stable_marriage(*built(men, women, **CAPS), kernel=SMALL[1])
    check_against_reference(men, women, res)


@pytest.mark.parametrize("cfg", SMALL[:2])
def test_kernel_shared_lists(cfg):
    """Hard instances (both sides share a list: resume from the men's list) and a shared
    women's list with individual men's lists (resume from the saved positions)."""
    for n in (1, 7, 16):
        men, women = stable_hard(n, seed=n)
        M, W = (P.with_capacity(n_capacity=16, entry_capacity=16) for P in as_instance(men, women))
        res = stable_marriage(M, W, kernel=cfg)
        assert res.stats["proposals"] == n * (n + 1) // 2
        check_against_reference(np.array(men).tolist(), np.array(women).tolist(), res)
    rng = np.random.default_rng(4)
    order = rng.permutation(12)
    men = [[int(w) for w in rng.permutation(9) if rng.random() < 0.6] for _ in range(12)]
    women = np.broadcast_to(order, (9, 12))
    M, W = as_instance(men, women)
    assert W.shared and not M.shared
    check_against_reference(men, np.array(women).tolist(), stable_marriage(M.with_capacity(**CAPS), W, kernel=cfg))


def test_kernel_call_equals_reference_call():
    """One kernel call and its ``_reference`` (barrier-separated waves), each run to the end
    from the same start, leave the same holds (the unique man-optimal matching)."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        men, women = random_instance(rng, 16, 16, p=0.5)
        M, W = built(men, women, **CAPS)
        t = gs.rank_tables(M, W)
        sm = jax.numpy.arange(16, dtype=jax.numpy.int32)
        sm = jax.numpy.where((sm < M.n) & (M.length > 0), sm, 16)
        start = (sm, jax.numpy.zeros(16, jax.numpy.int32), jax.numpy.full(16, gs.INT_MAX, jax.numpy.int32),
                 jax.numpy.zeros(16, jax.numpy.int32))
        cfg = Config(block=8, window=2, steps=512)
        k_sm, _, k_hold, _, waves = stable_mw.mw_steps(t, M, W, *start, cfg=cfg, interpret=True)
        r_sm, _, r_hold, _, _ = stable_mw._reference(t, M, W, *start, cfg=cfg)
        assert (np.asarray(k_sm) == 16).all() and (np.asarray(r_sm) == 16).all()
        assert np.array_equal(np.asarray(k_hold), np.asarray(r_hold))
        assert 0 < int(waves) < cfg.steps
        _, husband, _ = gs_reference(men, women, 16)
        held = [int(women[w][h]) if h < gs.INT_MAX else -1 for w, h in enumerate(np.asarray(k_hold)[:16])]
        assert held == husband


def test_kernel_with_slot_compaction(monkeypatch):
    """Launches on several slot widths, short launches while the busy count falls fast,
    and compaction steps between them."""
    monkeypatch.setattr(gs, "MIN_WIDTH", 8)
    monkeypatch.setattr(gs, "WIDTH_SHRINK", 4)
    monkeypatch.setattr(gs, "FINE_STEPS", 1)
    assert gs.widths(64) == (64, 32, 8)
    cfg = Config(block=8, window=1, steps=64, short_steps=2)
    solve = jax.jit(partial(gs.solve, method="mcvitie_wilson", max_iters=10_000, kernel=cfg, interpret=True))
    rng = np.random.default_rng(17)
    cases = [random_instance(rng, int(rng.integers(30, 64)), int(rng.integers(30, 64)), p=0.3) for _ in range(3)]
    check_compacting_solve(solve, cases)


def test_kernel_jit_and_vmap():
    """Under jit and under vmap (a batch from stack_preferences) each answer is its own run's."""
    from jaxmatch.stable import stack_preferences
    rng = np.random.default_rng(9)
    cases = [random_instance(rng, 10, 12, p=0.5) for _ in range(4)]
    built_cases = [built(m, w, **CAPS) for m, w in cases]
    cfg = SMALL[0]
    f = jax.vmap(lambda m, w: stable_marriage(m, w, kernel=cfg).wife)
    out = np.asarray(f(stack_preferences([b[0] for b in built_cases]), stack_preferences([b[1] for b in built_cases])))
    g = jax.jit(lambda m, w: stable_marriage(m, w, kernel=cfg).wife)
    for k, (men, women) in enumerate(cases):
        wife = gs_reference(men, women, len(women))[0]
        assert out[k][:len(men)].tolist() == wife
        assert np.asarray(g(*built_cases[k]))[:len(men)].tolist() == wife
        check_stable(men, women, out[k][:len(men)])


def test_kernel_options():
    men, women = [[0]], [[0]]
    with pytest.raises(GraphInputError, match="McVitie-Wilson only"):
        stable_marriage(men, women, method="gale_shapley", kernel=True)
    with pytest.raises(GraphInputError, match="kernel must be"):
        stable_marriage(men, women, kernel="yes")
    with pytest.raises(ValueError, match="not a multiple"):
        M, W = as_instance(men, women)
        stable_mw.mw_steps(gs.rank_tables(M, W), M, W, M.start, M.start, W.start, M.start, cfg=Config(block=8))
    assert stable_marriage(men, women, kernel=False).wife.tolist() == [0]
    assert stable_marriage(men, women, kernel=True).wife.tolist() == [0]


def test_sum_words_is_exact():
    """The device-side word sums add up to numpy's 64-bit sum, past 2^31 in total."""
    rng = np.random.default_rng(3)
    for n in (1, 1000, 70_000):
        x = rng.integers(0, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
        x[:3] = 2**31 - 1
        assert words_total(sum_words(jax.numpy.asarray(x))) == int(x.astype(np.int64).sum())
    assert words_total(sum_words(jax.numpy.zeros(5, jax.numpy.int32))) == 0
