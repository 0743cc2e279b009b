"""The shared array primitives of jaxmatch._ops against plain numpy versions."""
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxmatch._ops import INT_MAX, compact, expand, prefix, run_totals, segment_argmin

LANES = 16


@jax.jit
def _expand(offsets, starts, first):
    return expand(offsets, starts, first, LANES)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.integers(0, 40), st.data())
def test_expand_matches_searchsorted(sizes, first, data):
    sizes = np.array(sizes + [0] * (12 - len(sizes)), np.int32)  # one shape: one compilation
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    starts = np.array(data.draw(st.lists(st.integers(0, 100), min_size=12, max_size=12)), np.int32)
    slot, entry, valid = map(np.asarray, _expand(jnp.asarray(offsets), jnp.asarray(starts), jnp.int32(first)))
    p = first + np.arange(LANES)
    want_valid = p < offsets[-1]
    np.testing.assert_array_equal(valid, want_valid)
    want_slot = np.minimum(np.searchsorted(offsets, p, side="right") - 1, 11)  # the slot holding item p
    np.testing.assert_array_equal(slot[want_valid], want_slot[want_valid])
    np.testing.assert_array_equal(entry[want_valid], (starts[want_slot] + p - offsets[want_slot])[want_valid])
    assert (slot >= 0).all() and (slot < 12).all()  # invalid lanes still index in range


def test_compact_is_stable():
    keep = np.array([0, 1, 1, 0, 1], bool)
    out, n = compact(jnp.asarray(keep), jnp.arange(5) * 10, -1)
    assert int(n) == 3
    np.testing.assert_array_equal(out, [10, 20, 40, -1, -1])


def test_compact_to_a_size_is_nonzero():
    """compact(keep, ids, fill, size): the first ``size`` kept ids, as ``jnp.nonzero(keep, size=,
    fill_value=)`` gives them (which the auction's ladders used to call), more kept than slots,
    fewer, none; the count is all the kept entries."""
    rng = np.random.default_rng(3)
    f = jax.jit(lambda k: compact(k, jnp.arange(40, dtype=jnp.int32), 40, 6))
    for p in (0.0, 0.05, 0.2, 0.9):
        keep = rng.random(40) < p
        out, n = f(jnp.asarray(keep))
        np.testing.assert_array_equal(out, np.asarray(jnp.nonzero(jnp.asarray(keep), size=6, fill_value=40)[0]))
        assert out.shape == (6,) and int(n) == keep.sum()


def test_compact_of_nothing_and_of_an_empty_array():
    out, n = compact(jnp.zeros(4, bool), jnp.arange(4), -1)
    assert int(n) == 0 and out.tolist() == [-1] * 4
    out, n = jax.jit(lambda k, v: compact(k, v, 7))(jnp.zeros(0, bool), jnp.zeros(0, jnp.int32))
    assert int(n) == 0 and out.shape == (0,)


def test_prefix_matches_numpy_eagerly_under_jit_and_vmap():
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 6, (3, 9)).astype(np.int32)
    want = {("sum", False): np.cumsum(x, 1), ("sum", True): np.cumsum(x[:, ::-1], 1)[:, ::-1],
            ("max", False): np.maximum.accumulate(x, 1), ("max", True): np.maximum.accumulate(x[:, ::-1], 1)[:, ::-1],
            ("min", False): np.minimum.accumulate(x, 1), ("min", True): np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]}
    for (op, rev), w in want.items():
        np.testing.assert_array_equal(prefix(jnp.asarray(x), op, axis=1, reverse=rev), w)
        np.testing.assert_array_equal(jax.jit(lambda a: prefix(a, op, axis=1, reverse=rev))(x), w)
        np.testing.assert_array_equal(jax.vmap(lambda a: prefix(a, op, reverse=rev))(x), w)
    flags = jnp.asarray(x > 0)
    total = prefix(flags, dtype=jnp.int32)
    assert total.dtype == jnp.int32
    np.testing.assert_array_equal(total, np.cumsum(x > 0, 0))   # along axis 0 by default


def test_segment_argmin_ties_to_smallest_id_and_ignores_sentinel():
    keys = jnp.array([3, 1, 1, 2, 0], jnp.int32)
    ids = jnp.array([9, 7, 5, 1, 4], jnp.int32)
    seg = jnp.array([0, 0, 0, 1, 3], jnp.int32)  # 3 is the sentinel of 3 segments
    best, arg = segment_argmin(keys, ids, seg, 3)
    np.testing.assert_array_equal(best, [1, 2, INT_MAX])
    np.testing.assert_array_equal(arg, [5, 1, INT_MAX])


def test_run_totals_are_each_runs_remaining_sums():
    """run_totals: within each run (ending at a ``last``) the sum from each entry to the run's end,
    against a sequential loop, so a run's first entry holds its total (under jit, as the solvers call it)."""
    rng = np.random.default_rng(0)
    fn = jax.jit(run_totals)
    for size in (1, 7, 300):
        last = rng.random(size) < 0.3
        last[-1] = bool(rng.integers(0, 2))                # a last entry without the flag ends a run too
        w = rng.integers(0, 9, size).astype(np.float32)
        want = np.empty(size, np.float32)
        acc = 0.0
        for i in reversed(range(size)):
            acc = w[i] if last[i] or i == size - 1 else acc + w[i]
            want[i] = acc
        np.testing.assert_array_equal(np.asarray(fn(jnp.asarray(w), jnp.asarray(last))), want)
