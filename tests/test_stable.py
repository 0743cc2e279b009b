"""Stable marriage: Gale-Shapley and McVitie-Wilson against a sequential queue-based reference."""
from collections import deque
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxmatch
from experiments.generators import stable_easy, stable_hard
from jaxmatch.certify import CertificateError, check_stable, is_stable
from jaxmatch.graph import GraphInputError
from jaxmatch.stable import (Preferences, as_instance, read_preferences, stable_marriage,
                             stack_preferences)
from jaxmatch.stable import gale_shapley as gs
from jaxmatch.kernels import _stable_wave as wave

METHODS = ("mcvitie_wilson", "gale_shapley")
CAPS = dict(n_capacity=16, entry_capacity=256)


# --------------------------------------------------------------------------
# the reference: Gale-Shapley with a queue of free men, plain Python


def gs_reference(men, women, n_women):
    """(wife, husband, proposals) of the man-optimal stable matching."""
    rank = [{m: i for i, m in enumerate(lst)} for lst in women]
    nxt = [0] * len(men)
    husband = [-1] * n_women
    queue = deque(range(len(men)))
    while queue:
        m = queue.popleft()
        while nxt[m] < len(men[m]):
            w = men[m][nxt[m]]
            nxt[m] += 1
            r = rank[w].get(m)
            if r is None:
                continue
            h = husband[w]
            if h == -1 or rank[w][h] > r:
                husband[w] = m
                if h != -1:
                    queue.append(h)
                break
    wife = [-1] * len(men)
    for w, h in enumerate(husband):
        if h >= 0:
            wife[h] = w
    return wife, husband, sum(nxt)


def random_instance(rng, n_men, n_women, complete=False, p=None):
    p = rng.random() if p is None else p
    if complete:
        men = [rng.permutation(n_women).tolist() for _ in range(n_men)]
        women = [rng.permutation(n_men).tolist() for _ in range(n_women)]
    else:
        men = [[int(w) for w in rng.permutation(n_women) if rng.random() < p] for _ in range(n_men)]
        women = [[int(m) for m in rng.permutation(n_men) if rng.random() < p] for _ in range(n_women)]
    return men, women


def built(men, women, **caps):
    return (Preferences.from_lists(men, len(women), **caps), Preferences.from_lists(women, len(men), **caps))


def check_against_reference(men, women, res):
    wife, husband, proposals = gs_reference(men, women, len(women))
    assert int(res.status) == 0
    assert np.asarray(res.wife).tolist() == wife
    assert np.asarray(res.husband).tolist() == husband
    assert res.stats["proposals"] == proposals
    check_stable(men, women, np.asarray(res.wife))


# --------------------------------------------------------------------------
# random SM and SMI instances, one capacity: compiled once per method


def test_random_instances_equal_reference():
    rng = np.random.default_rng(7)
    count = 0
    for it in range(330):
        complete = it % 3 == 0
        n_men = int(rng.integers(0, 13))
        n_women = n_men if complete and it % 2 else int(rng.integers(0, 13))
        men, women = random_instance(rng, n_men, n_women, complete)
        M, W = built(men, women, **CAPS)
        for method in METHODS:
            check_against_reference(men, women, stable_marriage(M, W, method=method))
        count += 1
    assert count >= 300


def test_window_and_unroll_do_not_change_the_answer():
    rng = np.random.default_rng(8)
    for _ in range(30):
        men, women = random_instance(rng, 10, 9)
        M, W = built(men, women, **CAPS)
        for window, unroll in ((1, 3), (4, 1), (4, 16)):   # 16: the GPU's default unroll
            check_against_reference(men, women, stable_marriage(M, W, window=window, unroll=unroll))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_equal_reference_and_stable(data):
    n_men = data.draw(st.integers(0, 10))
    n_women = data.draw(st.integers(0, 10))
    men = [data.draw(st.permutations(range(n_women)).flatmap(
        lambda perm: st.integers(0, len(perm)).map(lambda k: list(perm[:k])))) for _ in range(n_men)]
    women = [data.draw(st.permutations(range(n_men)).flatmap(
        lambda perm: st.integers(0, len(perm)).map(lambda k: list(perm[:k])))) for _ in range(n_women)]
    method = data.draw(st.sampled_from(METHODS))
    M, W = built(men, women, **CAPS)
    res = stable_marriage(M, W, method=method)
    check_against_reference(men, women, res)
    # only mutually ranked pairs marry
    for m, w in enumerate(np.asarray(res.wife).tolist()):
        if w >= 0:
            assert w in men[m] and m in women[w]


# --------------------------------------------------------------------------
# the paper's data sets


@pytest.mark.parametrize("n", [1, 2, 5, 40, 100])
@pytest.mark.parametrize("seed", [None, 3])
def test_hard_instances(n, seed):
    men_np, women_np = stable_hard(n, seed=seed)
    men, women = np.array(men_np).tolist(), np.array(women_np).tolist()
    M, W = as_instance(men_np, women_np)          # broadcast views: one shared list per side
    assert M.shared == W.shared == (n > 1)
    M, W = (P.with_capacity(n_capacity=128, entry_capacity=128 if P.shared else 16384) for P in (M, W))
    wife, _, _ = gs_reference(men, women, n)
    for method in METHODS:
        res = stable_marriage(M, W, method=method)
        assert res.stats["proposals"] == n * (n + 1) // 2
        assert int(res.stats["waves"]) >= n                     # one woman settles per wave
        assert np.asarray(res.wife).tolist() == wife
        check_stable(men_np, women_np, np.asarray(res.wife))   # the O(n log n) shared-list check
        check_stable(men, women, np.asarray(res.wife))         # the general check
    # the same instance with one list per person gives the same answer
    M, W = (Preferences.from_padded(np.array(P), n, n_capacity=128, entry_capacity=16384)
            for P in (men_np, women_np))
    dense = stable_marriage(M, W)
    assert not M.shared and np.asarray(dense.wife).tolist() == wife


HARD_CAPS = dict(n_capacity=128, entry_capacity=128)


def test_hard_gale_shapley_rounds_equal_n():
    M, W = (P.with_capacity(**HARD_CAPS) for P in as_instance(*stable_hard(64, seed=1)))
    res = stable_marriage(M, W, method="gale_shapley")
    assert int(res.stats["rounds"]) == int(res.stats["waves"]) == 64
    res = stable_marriage(M, W, method="mcvitie_wilson", unroll=8)
    assert int(res.stats["rounds"]) == 8   # one slot width: no one-wave steps


@pytest.mark.parametrize("n", [60, 1500])
def test_easy_instances(n):
    men_np, women_np = stable_easy(n, seed=n)
    men = [[int(x) for x in row if x >= 0] for row in men_np]
    women = [[int(x) for x in row if x >= 0] for row in women_np]
    M, W = (P.with_capacity(n_capacity=2048, entry_capacity=32768) for P in as_instance(men_np, women_np))
    for method in METHODS:
        res = stable_marriage(M, W, method=method)
        check_against_reference(men, women, res)
        check_stable(men_np, women_np, np.asarray(res.wife))
        assert (np.asarray(res.wife) >= 0).mean() > 0.9


# --------------------------------------------------------------------------
# input forms, degenerate inputs


def test_input_forms_agree(tmp_path):
    rng = np.random.default_rng(11)
    men, women = random_instance(rng, 7, 5, p=0.7)
    ref = gs_reference(men, women, 5)[0]
    pad = lambda lists, width: np.array([r + [-1] * (width - len(r)) for r in lists])
    csr = lambda lists: (np.concatenate([[0], np.cumsum([len(r) for r in lists])]),
                         np.array([x for r in lists for x in r], dtype=np.int64))
    for m_in, w_in in ((men, women), (pad(men, 6), pad(women, 9)), (csr(men), csr(women)),
                       built(men, women), (csr(men), pad(women, 7))):
        assert np.asarray(stable_marriage(m_in, w_in).wife).tolist() == ref
    for path, lists in (("men.txt", men), ("women.txt", women)):
        (tmp_path / path).write_text("# rank lists\n" + "\n".join(" ".join(map(str, r)) for r in lists) + "\n")
    res = stable_marriage(read_preferences(tmp_path / "men.txt"), read_preferences(tmp_path / "women.txt"))
    assert np.asarray(res.wife).tolist() == ref


@pytest.mark.parametrize("men, women", [
    ([], []),
    ([], [[], []]),
    ([[], [], []], []),
    ([[], []], [[], [], []]),
    ([[0, 1], [1]], [[], []]),          # no woman lists anyone: nobody marries
    ([[0]], [[0]]),
])
def test_degenerate(men, women):
    M, W = built(men, women, **CAPS)
    for method in METHODS:
        res = stable_marriage(M, W, method=method)
        check_against_reference(men, women, res)
        assert res.wife.shape == (len(men),) and res.husband.shape == (len(women),)


def test_unequal_sides():
    rng = np.random.default_rng(3)
    for n_men, n_women in ((9, 3), (3, 9), (12, 1), (1, 12)):
        men, women = random_instance(rng, n_men, n_women, complete=True)
        M, W = built(men, women, **CAPS)
        res = stable_marriage(M, W)
        check_against_reference(men, women, res)
        assert int((np.asarray(res.wife) >= 0).sum()) == min(n_men, n_women)


def test_shared_men_with_individual_women():
    rng = np.random.default_rng(4)
    order = rng.permutation(6)
    women = [rng.permutation(5).tolist()[:4] for _ in range(6)]
    men_np = np.broadcast_to(order, (5, 6))
    res = stable_marriage(men_np, women)
    check_against_reference(np.array(men_np).tolist(), women, res)


def test_shared_women_with_individual_men():
    rng = np.random.default_rng(12)
    for _ in range(5):
        order = rng.permutation(7)[:6]
        men = [[int(w) for w in rng.permutation(5) if rng.random() < 0.7] for _ in range(7)]
        women_np = np.broadcast_to(order, (5, 6))
        M, W = as_instance(men, women_np)
        assert W.shared and not M.shared
        res = stable_marriage(M.with_capacity(**CAPS), W)
        check_against_reference(men, np.array(women_np).tolist(), res)


def check_compacting_solve(solve, cases):
    """``solve`` (gs.solve, jitted) at capacity 64 equals the sequential reference, with
    steps beyond the proposal rounds (compactions or one-wave steps)."""
    for men, women in cases:
        M, W = built(men, women, n_capacity=64, entry_capacity=4096)
        wife, husband, status, considered, stats = solve(M, W)
        ref_wife, ref_husband, proposals = gs_reference(men, women, len(women))
        assert int(status) == 0 and int(stats["steps"]) > int(stats["rounds"])
        assert np.asarray(wife)[:len(men)].tolist() == ref_wife
        assert np.asarray(husband)[:len(women)].tolist() == ref_husband
        assert int(np.asarray(considered).sum()) == proposals
        check_stable(men, women, np.asarray(wife)[:len(men)])


def test_slot_compaction_to_smaller_widths():
    """With tiny widths the busy slots move to smaller prefixes (compaction steps)."""
    cfg = gs.Config(min_width=4, width_shrink=4, fine_steps=0)
    assert gs.widths(64, cfg) == (64, 16, 4) and gs.widths(256, cfg)[:3] == (256, 64, 16)
    assert gs.widths(64) == (64,)                                   # the default: one width
    rng = np.random.default_rng(13)
    solve = jax.jit(partial(gs.solve, method="mcvitie_wilson", max_iters=10_000, unroll=2, cfg=cfg))
    cases = [random_instance(rng, int(rng.integers(20, 60)), int(rng.integers(20, 60)), p=0.3) for _ in range(6)]
    cases.append((np.array(stable_hard(50)[0]).tolist(), np.array(stable_hard(50)[1]).tolist()))
    check_compacting_solve(solve, cases)
    M, W = (P.with_capacity(n_capacity=64, entry_capacity=64) for P in as_instance(*stable_hard(50, seed=2)))
    wife, _, status, considered, stats = solve(M, W)
    assert int(stats["steps"]) > int(stats["rounds"]) and int(np.asarray(considered).sum()) == 50 * 51 // 2
    check_stable(*stable_hard(50, seed=2), np.asarray(wife)[:50])


def test_slot_compaction_fine_ladder():
    """The default ladder (halvings, then coarse steps) and McVitie-Wilson's one-wave steps."""
    cfg = gs.Config(min_width=4, width_shrink=4)
    assert gs.widths(64, cfg) == (64, 32, 16, 8)
    solve = jax.jit(partial(gs.solve, method="mcvitie_wilson", max_iters=10_000, unroll=4, cfg=cfg))
    rng = np.random.default_rng(21)
    cases = [random_instance(rng, 60, 55, p=0.3), (np.array(stable_hard(60)[0]).tolist(),
                                                  np.array(stable_hard(60)[1]).tolist())]
    check_compacting_solve(solve, cases)


def test_second_level_filter_keeps_each_womans_best():
    """The two-level filter sends fewer proposals and never the wrong winner."""
    rng = np.random.default_rng(5)
    block, w_cap = gs.DEFAULT_BLOCK, 50
    slots = block * wave.GROUP * 2
    for n_women in (1, 3, 40):
        w = jnp.asarray(np.where(rng.random(slots) < 0.7, rng.integers(0, n_women, slots), w_cap), jnp.int32)
        r = jnp.asarray(rng.permutation(slots), jnp.int32)
        prop = w < w_cap
        wb, rb = w.reshape(-1, block), r.reshape(-1, block)
        send1 = prop & ~wave._beaten(wb, rb).reshape(-1)
        send2 = wave._second_level(send1, wb, rb, block, w_cap, wave.GROUP)
        assert not bool(jnp.any(send2 & ~send1))
        for x in range(n_women):
            mine = np.asarray(w) == x
            best = np.asarray(r)[mine].min()
            assert np.asarray(r)[np.asarray(send2) & mine].min() == best
        if n_women == 1:  # one woman: one proposal per group of blocks
            assert int(send2.sum()) == 2 and int(send1.sum()) == 2 * wave.GROUP


def test_max_iters_status():
    M, W = (P.with_capacity(**HARD_CAPS) for P in as_instance(*stable_hard(40)))
    res = stable_marriage(M, W, method="gale_shapley", max_iters=5, throw=False)
    assert int(res.status) == 1 and res.status_name == "hit max_iters"
    wife = np.asarray(res.wife)
    assert np.array_equal(wife[:5], np.arange(5)) and (wife[5:] == -1).all()
    assert res.stats["proposals"] == sum(range(1, 6)) + 35 * 5
    assert stable_marriage(M, W).status_name == "converged"


# --------------------------------------------------------------------------
# jit and vmap


def test_jit_equals_eager():
    rng = np.random.default_rng(5)
    men, women = random_instance(rng, 11, 9)
    M, W = built(men, women, **CAPS)
    for method in METHODS:
        eager = stable_marriage(M, W, method=method)
        jitted = jax.jit(lambda a, b: stable_marriage(a, b, method=method))(M, W)
        assert jitted.wife.shape == (16,)
        assert np.array_equal(np.asarray(jitted.wife)[:11], np.asarray(eager.wife))
        assert (np.asarray(jitted.wife)[11:] == -1).all()
        assert np.array_equal(np.asarray(jitted.husband)[:9], np.asarray(eager.husband))
        assert int(jitted.stats["proposals"]) == eager.stats["proposals"]


def test_vmap_over_batch(monkeypatch):
    """vmap over a stacked batch equals each instance's sequential Gale-Shapley; the batch given eagerly
    equals the vmap on both of its routes (lax.map off the GPU, a jitted vmap on it), and one side given
    as a batch with the other not, or of another size, is refused."""
    rng = np.random.default_rng(6)
    instances = [random_instance(rng, int(rng.integers(0, 12)), int(rng.integers(0, 12))) for _ in range(8)]
    instances.append(random_instance(rng, 10, 10, complete=True))
    Ms = stack_preferences([Preferences.from_lists(m, len(w)) for m, w in instances])
    Ws = stack_preferences([Preferences.from_lists(w, len(m)) for m, w in instances])
    for method in METHODS:
        out = jax.vmap(lambda a, b: stable_marriage(a, b, method=method))(Ms, Ws)
        assert out.wife.shape == (len(instances), Ms.n_cap)
        for i, (men, women) in enumerate(instances):
            wife, husband, proposals = gs_reference(men, women, len(women))
            assert np.asarray(out.wife[i, :len(men)]).tolist() == wife
            assert np.asarray(out.husband[i, :len(women)]).tolist() == husband
            assert int(out.stats["proposals"][i]) == proposals and int(out.status[i]) == 0
    for route in ("union", "vmap"):   # graph.batch_map: lax.map, or one jitted vmap
        monkeypatch.setattr(jaxmatch.graph, "batch_route", lambda: route)
        eager = stable_marriage(Ms, Ws, method=method)   # the last method's vmap above
        for x, y in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(out)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    with pytest.raises(GraphInputError, match="n_other"):
        stable_marriage(Ms, Preferences.from_lists(instances[0][1], len(instances[0][0])))
    with pytest.raises(GraphInputError, match="n_other"):
        stable_marriage(Ms, stack_preferences([Preferences.from_lists(w, len(m)) for m, w in instances[:3]]))


def test_padded_3d_array_is_a_batch_in_one_pass():
    """Preferences.from_padded of a [B, n, L] array: the same arrays as stacking the B instances built one
    by one (truncated lists, empty lists, one empty instance); vmapped stable marriage on it equals the
    sequential Gale-Shapley of each instance; bad lists are named by instance and person."""
    rng = np.random.default_rng(12)
    B, n = 5, 6
    men, women = np.full((B, n, n), -1), np.full((B, n, n), -1)
    for b in range(1, B):                                # instance 0: nobody lists anyone
        for side in (men, women):
            for i in range(n):
                k = int(rng.integers(0, n + 1))
                side[b, i, :k] = rng.permutation(n)[:k]
    Ms, Ws = Preferences.from_padded(men, n), Preferences.from_padded(women, n)
    caps = dict(n_capacity=Ms.n_cap, entry_capacity=Ms.e_cap)
    solo = stack_preferences([Preferences.from_padded(men[b], n, **caps) for b in range(B)])
    for x, y in zip(jax.tree_util.tree_leaves(Ms), jax.tree_util.tree_leaves(solo)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    out = jax.vmap(stable_marriage)(Ms, Ws)
    for b in range(B):
        lists = lambda a: [[int(x) for x in row if x >= 0] for row in a]  # noqa: E731
        wife, husband, _ = gs_reference(lists(men[b]), lists(women[b]), n)
        assert np.asarray(out.wife[b, :n]).tolist() == wife and np.asarray(out.husband[b, :n]).tolist() == husband
    bad = men.copy()
    bad[2, 3, :2] = [1, 1]
    with pytest.raises(GraphInputError, match="instance 2, person 3 lists id 1 twice"):
        Preferences.from_padded(bad, n)
    bad = men.copy()
    bad[1, 4, :3] = [0, -1, 2]
    with pytest.raises(GraphInputError, match="instance 1, row 4 has id 2 after -1 padding"):
        Preferences.from_padded(bad, n)
    bad = men.copy()
    bad[3, 0, 0] = 9
    with pytest.raises(GraphInputError, match="instance 3, person 0 lists id 9"):
        Preferences.from_padded(bad, n)


def test_vmap_shared_batch():
    pairs = [stable_hard(n, seed=n) for n in (3, 7, 12)]
    Ms = stack_preferences([Preferences.from_padded(m, m.shape[0]) for m, w in pairs])
    Ws = stack_preferences([Preferences.from_padded(w, w.shape[0]) for m, w in pairs])
    out = jax.vmap(stable_marriage)(Ms, Ws)
    for i, (m, w) in enumerate(pairs):
        n = m.shape[0]
        assert int(out.stats["proposals"][i]) == n * (n + 1) // 2
        check_stable(m, w, np.asarray(out.wife[i, :n]))


# --------------------------------------------------------------------------
# Lemma 3.1: greedy matching of a weighted graph = the SMI solution built from it


def lemma_instance(rng, n, p):
    """Random graph with distinct weights, and its SMI instance (Paper IV, Section 3)."""
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < p
    u, v = iu[keep], ju[keep]
    wts = rng.permutation(u.size) + 1.0
    nbrs = [[] for _ in range(n)]
    for a, b, x in zip(u, v, wts):
        nbrs[a].append((-x, int(b)))
        nbrs[b].append((-x, int(a)))
    lists = [[j for _, j in sorted(nb)] for nb in nbrs]
    return u, v, wts, lists


def greedy_reference(u, v, wts, n):
    mate = [-1] * n
    for k in np.argsort(-wts, kind="stable"):
        if mate[u[k]] < 0 and mate[v[k]] < 0:
            mate[u[k]], mate[v[k]] = int(v[k]), int(u[k])
    return mate


def test_lemma_3_1_against_local_greedy():
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(1, 14))
        u, v, wts, lists = lemma_instance(rng, n, rng.random())
        M, W = built(lists, lists, **CAPS)
        res = stable_marriage(M, W)
        assert np.asarray(res.wife).tolist() == greedy_reference(u, v, wts, n)
        assert np.array_equal(np.asarray(res.wife), np.asarray(res.husband))


def test_lemma_3_1_against_weighted_greedy_matching():
    try:
        from jaxmatch.weighted import greedy_matching
    except ImportError:
        pytest.skip("needs the Suitor issue (jaxmatch.weighted)")
    from jaxmatch.graph import Graph
    rng = np.random.default_rng(10)
    for _ in range(40):
        n = int(rng.integers(1, 14))
        u, v, wts, lists = lemma_instance(rng, n, rng.random())
        g = Graph.from_edges(u, v, wts, n=n)
        mate = np.asarray(getattr(greedy_matching(g), "mate", greedy_matching(g)))
        M, W = built(lists, lists, **CAPS)
        assert np.asarray(stable_marriage(M, W).wife).tolist() == mate.tolist()


# --------------------------------------------------------------------------
# bad input and the certificate


@pytest.mark.parametrize("men, women, match", [
    ([[0, 2]], [[0], [0]], "out of range"),
    ([[0, 0]], [[0]], "twice"),
    ([[0, -1, 1]], [[0], [0]], "after -1"),
    ([[0, -2]], [[0]], "-1 is padding"),
    ([[0.0]], [[0]], "integer"),
    (np.zeros((2, 2, 2), int), [[0]], "2-D"),
    (([0, 2], [0]), [[0]], "indptr"),
    (([1, 1], [0]), [[0]], "indptr"),
])
def test_bad_input(men, women, match):
    with pytest.raises(GraphInputError, match=match):
        stable_marriage(men, women)


def test_bad_options_and_mismatched_sides():
    M, W = built([[0]], [[0]])
    with pytest.raises(GraphInputError, match="method"):
        stable_marriage(M, W, method="irving")
    for kw in (dict(max_iters=0), dict(unroll=-1), dict(window=0), dict(max_iters=2.5)):
        with pytest.raises(GraphInputError, match="positive"):
            stable_marriage(M, W, **kw)
    other = Preferences.from_lists([[0], [0]], 1)
    with pytest.raises(GraphInputError, match="n_other"):
        stable_marriage(M, other)
    with pytest.raises(GraphInputError, match="traced"):
        jax.jit(lambda a: stable_marriage(a, [[0]]).wife)(jnp.zeros((1, 1), jnp.int32))
    with pytest.raises(GraphInputError, match="capacity"):
        Preferences.from_lists([[0], [0]], 1, n_capacity=1)
    with pytest.raises(GraphInputError, match="shared list"):
        Preferences.from_lists([[0, 1]]).shared_order()


def test_certificate_rejects():
    men = [[0, 1], [0, 1]]
    women = [[0, 1], [0, 1]]
    check_stable(men, women, [0, 1])
    for wife, match in (([1, 0], "blocking pair"), ([0, 0], "more than one"), ([0, 5], "not -1"),
                        ([0], "shape"), ([0, -1], "blocking pair")):
        with pytest.raises(CertificateError, match=match):
            check_stable(men, women, wife)
        assert not is_stable(men, women, wife)
    with pytest.raises(CertificateError, match="does not rank"):
        check_stable([[0], [1]], [[0], []], [0, 1])
    # shared lists: the O(n log n) path finds the same blocking pair
    order = np.arange(3)
    shared = np.broadcast_to(order, (3, 3))
    assert is_stable(shared, shared, [0, 1, 2])
    with pytest.raises(CertificateError, match="blocking pair: man 0 and woman 0"):
        check_stable(shared, shared, [1, 0, 2])
    with pytest.raises(CertificateError, match="do not rank"):
        check_stable(np.broadcast_to(np.array([0, 1]), (3, 2)), shared, [0, 1, 2])


@pytest.mark.parametrize("n_other", [5, 64, 65, 300])
def test_repeat_check_of_padded_rows(n_other):
    """The repeat check of padded rows (one bit per id up to 64 ids, a scatter or a sort beyond)
    raises exactly when some row lists an id twice, and names that row; rows with and without -1
    padding, one and several instances."""
    rng = np.random.default_rng(n_other)
    for trial in range(40):
        B, n, L = int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(2, min(n_other, 12) + 1))
        a = np.full((B, n, L), -1)
        for b in range(B):
            for i in range(n):
                k = int(rng.integers(0, L + 1)) if trial % 2 else L
                a[b, i, :k] = rng.choice(n_other, k, replace=False)
        if trial % 3 == 0:                                # one repeat in a random row of length >= 2
            b, i = int(rng.integers(0, B)), int(rng.integers(0, n))
            k = int(np.sum(a[b, i] >= 0))
            if k >= 2:
                a[b, i, k - 1] = a[b, i, 0]
        repeated = [(b, i) for b in range(B) for i in range(n)
                    if len(set(a[b, i][a[b, i] >= 0].tolist())) < int(np.sum(a[b, i] >= 0))]
        arrays = [a] + ([a[0]] if B == 1 else [])
        for x in arrays:
            if repeated:
                b, i = repeated[0]
                where = f"instance {b}, person {i}" if x.ndim == 3 else f"person {i}"
                with pytest.raises(GraphInputError, match=f"{where} lists id .* twice"):
                    Preferences.from_padded(x, n_other)
            else:
                Preferences.from_padded(x, n_other)


def test_complete_lists_batch_equals_the_solo_builds():
    """Complete lists that fill the entry capacity take the batch constructor's shortest route (rows
    as they are, owners broadcast on the device): the same arrays as the instances built one by one
    and stacked, and the same answers."""
    rng = np.random.default_rng(8)
    B, n = 3, 4
    men, women = rng.random((B, n, n)).argsort(axis=2), rng.random((B, n, n)).argsort(axis=2)
    Ms, Ws = Preferences.from_padded(men, n), Preferences.from_padded(women, n)
    caps = dict(n_capacity=Ms.n_cap, entry_capacity=Ms.e_cap)
    assert Ms.e_cap == n * n
    solo = stack_preferences([Preferences.from_padded(men[b], n, **caps) for b in range(B)])
    for x, y in zip(jax.tree_util.tree_leaves(Ms), jax.tree_util.tree_leaves(solo)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    out = jax.vmap(stable_marriage)(Ms, Ws)
    for b in range(B):
        wife, _, _ = gs_reference(men[b].tolist(), women[b].tolist(), n)
        assert np.asarray(out.wife[b, :n]).tolist() == wife


def test_a_new_max_iters_does_not_recompile():
    """The step bound is traced: another max_iters runs the same compiled solver."""
    from jaxmatch.stable import _solve
    men, women = stable_easy(30, seed=4)
    stable_marriage(men, women, max_iters=3, throw=False)
    before = _solve._cache_size()
    for bound in (4, 7):
        res = stable_marriage(men, women, max_iters=bound, throw=False)
        assert int(res.stats["iterations"]) <= bound
    assert _solve._cache_size() == before
