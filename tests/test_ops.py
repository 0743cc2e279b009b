"""The shared array primitives of jaxmatch._ops against plain numpy versions."""
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxmatch._ops import INT_MAX, compact, expand, segment_argmin

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


def test_segment_argmin_ties_to_smallest_id_and_ignores_sentinel():
    keys = jnp.array([3, 1, 1, 2, 0], jnp.int32)
    ids = jnp.array([9, 7, 5, 1, 4], jnp.int32)
    seg = jnp.array([0, 0, 0, 1, 3], jnp.int32)  # 3 is the sentinel of 3 segments
    best, arg = segment_argmin(keys, ids, seg, 3)
    np.testing.assert_array_equal(best, [1, 2, INT_MAX])
    np.testing.assert_array_equal(arg, [5, 1, INT_MAX])
