"""Pallas kernels in interpret mode (CPU) against their pure-JAX references."""
import re
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
from jaxmatch.kernels import bfs_level, stable_mw
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


def test_kernel_with_slot_compaction():
    """Launches on several slot widths, short launches while the busy count falls fast,
    and compaction steps between them."""
    ladder = gs.Config(min_width=8, width_shrink=4, fine_steps=1)
    assert gs.widths(64, ladder) == (64, 32, 8)
    cfg = Config(block=8, window=1, steps=64, short_steps=2)
    solve = jax.jit(partial(gs.solve, method="mcvitie_wilson", max_iters=10_000, kernel=cfg, interpret=True,
                            cfg=ladder))
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
    """stable_marriage's kernel=: clear errors for the wrong method, a wrong type, knobs that are not
    powers of two and (on the GPU) blocks of fewer slots than threads; True and False both solve."""
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
    with pytest.raises(GraphInputError, match="block must be a power of two"):
        stable_marriage(men, women, kernel=Config(block=24))
    with pytest.raises(GraphInputError, match="window must be a power of two"):
        stable_marriage(men, women, kernel=Config(window=0))
    # on the GPU a block holds at least one slot per thread (copies of a slot's loads could disagree)
    with pytest.raises(GraphInputError, match="block must be at least the 128 threads of num_warps=4"):
        stable_mw.check(Config(block=32), "gpu")
    stable_mw.check(Config(block=32, num_warps=1), "gpu")
    stable_mw.check(Config(block=8), "cpu")


def test_sum_words_is_exact():
    """The device-side word sums add up to numpy's 64-bit sum, past 2^31 in total."""
    rng = np.random.default_rng(3)
    for n in (1, 1000, 70_000):
        x = rng.integers(0, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
        x[:3] = 2**31 - 1
        assert words_total(sum_words(jax.numpy.asarray(x))) == int(x.astype(np.int64).sum())
    assert words_total(sum_words(jax.numpy.zeros(5, jax.numpy.int32))) == 0


# ---------------------------------------------------------------------------
# one BFS level of the flow solver's global relabel (jaxmatch.kernels.bfs_level)

def _residual_case(rng, n, m):
    """A random residual CSR (rows by tail, reverse positions) with some zero residual capacities,
    in one capacity for every n < 45 and m <= 256 (one compilation for all the trials)."""
    from jaxmatch.flow import FlowNetwork
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    net = FlowNetwork.from_edges(tail, head, rng.integers(0, 3, m), n, vertex_capacity=48, arc_capacity=256)
    rc = jax.numpy.asarray(rng.integers(0, 2, net.res_rev.shape[0]), jax.numpy.int32)
    return net, rc


@pytest.mark.parametrize("cfg", [bfs_level.Config(block=4, width=2, programs=3),
                                 bfs_level.Config(block=8, width=4, programs=1)])
def test_bfs_level_equals_reference(cfg):
    """Random residual graphs and frontiers (rows longer than the width, more chunks than programs,
    blocked vertices): the same labels, the same next frontier as a set, the same counts."""
    rng = np.random.default_rng(cfg.block)
    for trial in range(12):
        n = int(rng.integers(2, 40))
        net, rc = _residual_case(rng, n, int(rng.integers(1, min(6 * n, 256))))
        vc = net.vertex_cap
        level = int(rng.integers(1, 5))
        frontier_ids = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)
        dist = np.full(vc, 2**31 - 1, np.int32)
        dist[frontier_ids] = level - 1
        dist[rng.choice(n, size=n // 5, replace=False)] = -1       # blocked (may hide frontier vertices' labels)
        dist[frontier_ids] = level - 1
        frontier = np.full(vc, vc, np.int32)
        frontier[:frontier_ids.size] = frontier_ids
        counted = rng.random(vc) < 0.5
        args = (jax.numpy.asarray(frontier), np.int32(frontier_ids.size), np.int32(level), jax.numpy.asarray(dist),
                net.res.indptr, net.res.indices, net.res_rev, rc, jax.numpy.asarray(counted))
        d, nxt, cnt, found = bfs_level.bfs_level(*args, cfg=cfg, interpret=True)
        rd, rnxt, rcnt, rfound = bfs_level._reference(*args)
        np.testing.assert_array_equal(np.asarray(d), np.asarray(rd))
        assert int(cnt) == int(rcnt) and int(found) == int(rfound)
        assert sorted(np.asarray(nxt)[:int(cnt)].tolist()) == np.asarray(rnxt)[:int(rcnt)].tolist()
        assert int(cnt) == int(np.sum((np.asarray(d) == level) & (dist != level)))


def _abstract_gpu():
    """An abstract H100 for lowering on a CPU-only install: JAX 0.11 lowers Pallas's Triton kernels
    only for a known GPU (it reads the compute capability) and takes an abstract device in its place."""
    from jax._src import mesh as _mesh      # AbstractDevice is not public API
    dev = _mesh.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=132, platform="gpu")
    return jax.sharding.use_abstract_mesh(_mesh.AbstractMesh(
        (1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,), abstract_device=dev))


@pytest.mark.parametrize("x64", [False, True])
def test_bfs_level_lowers_to_triton(x64):
    """The kernel lowers for the GPU (Triton) from a CPU-only install: the lowering rules accept every op,
    also under x64 (int64 residual capacities; the kernel's own sums stay int32), there with the row
    bounds queued (Config.bounds)."""
    with jax.enable_x64(x64), _abstract_gpu():
        net, rc = _residual_case(np.random.default_rng(0), 16, 40)
        vc = net.vertex_cap
        f = jax.jit(lambda *a: bfs_level.bfs_level(*a, cfg=bfs_level.Config(bounds=x64)))   # both BFS forms
        args = (jax.numpy.zeros(vc, jax.numpy.int32), np.int32(1), np.int32(1), jax.numpy.zeros(vc, jax.numpy.int32),
                net.res.indptr, net.res.indices, net.res_rev, rc.astype(net.cap.dtype), jax.numpy.ones(vc, bool))
        text = f.trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    assert "triton" in text


def test_push_kernels_lower_to_triton_with_relaxed_atomics():
    """Both push kernels lower for the GPU (Triton) from a CPU-only install, their in-phase atomics through
    the relaxed primitive of jaxmatch.kernels._pallas (this JAX has the private pieces it needs; without
    them the kernels would fall back to Pallas's fenced atomics), the grid barrier's arrival with release
    order and its last read with acquire order; also with chunks of fewer queued vertices than threads."""
    from jaxmatch.kernels import _pallas, push_flow, push_match
    assert _pallas.RELAXED, "this JAX lacks the pieces of the relaxed atomics: the kernels run fenced"
    i = lambda *a: jax.numpy.array(*a, jax.numpy.int32)  # noqa: E731
    flow_args = (i([1, 3, 3, 3, 3, 3]), 1, i([0, 5, 5, 0]), i([-5, 5, 0]), i([3, 1, 0]), i([-1, -1, -1]),
                 i([0, 1, 3, 4]), i([1, 0, 2, 1]), i([1, 0, 3, 2]), i([1, 0, 1, 0]), i([1, 0, 1]))
    flows = [(lambda *a, c=c: push_flow.push_rounds(*a, n=3, round_id=1, room=100.0, max_rounds=10, cfg=c),
              flow_args) for c in (bfs_level.Config(), bfs_level.Config(relabel_from_push=False, fused=False),
                                   bfs_level.Config(fused=False), bfs_level.Config(push_block=32, push_width=4))]
    match_args = (i([0, 2, 2, 2]), 1, i([1, -1]), i([-1, 0]), i([2, 0]), i([0, 1]), i([0, 1, 3]), i([0, 0, 1]))
    matches = [(lambda *a, c=c: push_match.push_match_rounds(*a, inf=4, max_rounds=10, cfg=c), match_args)
               for c in (bfs_level.Config(), bfs_level.Config(push_block=32),   # chunks of fewer vertices than threads
                         bfs_level.Config(match_small=32))]
    for f, args in (*flows, *matches):
        jaxpr = str(jax.make_jaxpr(f)(*args))
        assert "jaxmatch_relaxed_atomic" in jaxpr
        assert {"order=relaxed", "order=release", "order=acquire"} == set(re.findall(r"order=\w+", jaxpr))
        with _abstract_gpu():
            text = jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
        assert "triton" in text


FLOW_CAPS = dict(vertex_capacity=64, arc_capacity=256)   # max_flow's XLA reference: one compilation for the module


def test_max_flow_with_bfs_kernel():
    """max_flow with its global relabels' BFS in the kernel (interpret mode; one and three levels per
    loop iteration, the latter with the row bounds queued, Config.bounds; the push steps in XLA): the
    same flow, bit for bit, and the same step counts, with one and with several terminals; the
    certificates hold."""
    from experiments.generators import genrmf
    from jaxmatch import certify
    from jaxmatch.flow import FlowNetwork, max_flow
    rng = np.random.default_rng(5)
    tail, head, cap, s, t, n = genrmf(4, 3, seed=1)
    cases = [(tail, head, cap, n, s, t), None]
    n = 30
    tail, head = rng.integers(0, n, 150), rng.integers(0, n, 150)
    cases[1] = (tail, head, rng.integers(0, 9, 150), n, [0, 1, 2], [27, 28, 29])
    for i, (tail, head, cap, n, s, t) in enumerate(cases):
        net = FlowNetwork.from_edges(tail, head, cap, n, **FLOW_CAPS)     # the reference compiles once
        a = max_flow(net, s, t, kernel=False)
        b = max_flow(net, s, t, kernel=bfs_level.Config(block=4, width=2, programs=2, levels=1 + 2 * i, push=False,
                                                        bounds=i == 1))
        np.testing.assert_array_equal(np.asarray(a.flow), np.asarray(b.flow))
        assert {k: int(v) for k, v in a.stats.items()} == {k: int(v) for k, v in b.stats.items()}
        certify.check_flow(net, s, t, b.flow, int(b.flow_value))
        certify.check_min_cut(net, s, t, np.asarray(b.source_side), int(b.flow_value))
    with pytest.raises(GraphInputError, match="kernel"):
        max_flow(net, 0, 1, kernel="yes")


def test_max_flow_with_push_kernel():
    """max_flow with its push-relabel rounds in the persistent kernel too (interpret mode), on
    genrmf, random multi-terminal networks with parallel arcs and self-loops, a long path and
    capacities near 2**31 (the prefix sums' wrap-around): the value equals scipy's, and the flow and
    cut certificates hold; a few rounds per launch and tiles narrower than the rows (the forward
    arcs' priority then per tile) change nothing of that, nor do one-program launches for queues of
    at most 8 vertices (Config.solo), nor chunks of 2 for queues of at most 2 a program
    (Config.push_small), nor rounds of two phases (fused=False), nor a degree bound that
    sends the networks with longer rows (here the random ones) to the XLA steps. A round cap shows as
    MAX_ITERS."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    from experiments.generators import genrmf
    from jaxmatch import Status, certify
    from jaxmatch.flow import FlowNetwork, max_flow
    rng = np.random.default_rng(11)
    cases = [genrmf(3, 3, seed=2)[:3] + (genrmf(3, 3, seed=2)[5], [0], [26])]
    for big in (False, True):
        n, m = 40, 200
        tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
        cap = rng.integers(2**31 - 50, 2**31 - 1, m) if big else rng.integers(0, 9, m)
        cap = np.where(tail < 2, rng.integers(0, 10**6, m), cap)   # what leaves the sources fits int32
        cases.append((tail, head, cap, n, [0, 1], [38, 39]))
    path = np.arange(49)
    cases.append((path, path + 1, np.full(49, 3), 50, [0], [49]))
    knobs = [bfs_level.Config(programs=2, push_block=8, push_width=4, rounds=3, solo=8, push_small=2),
             bfs_level.Config(programs=2, push_block=4, push_width=2, levels=2, push_max_degree=12),
             bfs_level.Config(programs=2, push_block=4, push_width=2, relabel_from_push=False, fused=False),
             bfs_level.Config(programs=2, push_block=4, push_width=2, rounds=3, fused=False)]
    for i, (tail, head, cap, n, s, t) in enumerate(cases):
        net = FlowNetwork.from_edges(tail, head, cap, n, **FLOW_CAPS)
        super_t = np.concatenate([tail, np.full(len(s), n), t]).astype(np.int32)
        super_h = np.concatenate([head, s, np.full(len(t), n + 1)]).astype(np.int32)
        big_cap = np.concatenate([cap, np.full(len(s) + len(t), 10**7)]).astype(np.int32)
        A = sp.coo_array((big_cap, (super_t, super_h)), shape=(n + 2, n + 2)).tocsr()
        want = None if cap.max() > 2**20 else int(maximum_flow(A, n, n + 1).flow_value)   # scipy: int32 sums
        ref = max_flow(net, s, t, kernel=False)
        for cfg in knobs:
            got = max_flow(net, s, t, kernel=cfg)
            assert int(got.flow_value) == int(ref.flow_value) and (want is None or int(got.flow_value) == want)
            assert int(got.status) == Status.CONVERGED
            certify.check_flow(net, s, t, got.flow, int(got.flow_value))
            certify.check_min_cut(net, s, t, np.asarray(got.source_side), int(got.flow_value))
    capped = max_flow(net, s, t, kernel=knobs[0], max_iters=5, throw=False)
    assert int(capped.status) == Status.MAX_ITERS and int(capped.stats["iterations"]) <= 5
    # eagerly only the path the row rule picks is compiled; under jit both, picked at run time: the
    # path graph (short rows: the kernel) and a random case (rows over 12: the steps) give the eager answers
    from jaxmatch.flow import _longest_inner_row
    solve = jax.jit(lambda net, s, t: max_flow(net, s, t, kernel=knobs[1]))
    for (tail, head, cap, n, s, t), short in ((cases[-1], True), (cases[1], False)):
        net = FlowNetwork.from_edges(tail, head, cap, n, **FLOW_CAPS)
        assert (int(_longest_inner_row(net, np.array(s), np.array(t))) <= 12) == short
        padded = [np.array(x + [-1] * (2 - len(x)), np.int32) for x in (s, t)]   # -1: ignored
        eager, traced = max_flow(net, s, t, kernel=knobs[1]), solve(net, *padded)
        assert int(traced.flow_value) == int(eager.flow_value) and int(traced.status) == Status.CONVERGED
        certify.check_flow(net, s, t, np.asarray(traced.flow)[:int(net.n_arcs)], int(traced.flow_value))


def test_bfs_kernel_default():
    """On the GPU the kernel is on by default, except under vmap (where max_flow keeps the XLA levels)."""
    from jaxmatch.flow import FlowNetwork
    cap = FlowNetwork.from_edges([0, 1], [1, 2], [1, 1], 3).cap
    assert bfs_level.choose(None, cap, "cpu") is None
    assert bfs_level.choose(None, cap, "gpu") == bfs_level.Config()
    assert bfs_level.choose(False, cap, "gpu") is None
    assert bfs_level.choose(None, cap) == (bfs_level.Config() if jax.default_backend() == "gpu" else None)
    seen = []

    def inside(c):
        seen.append(bfs_level.choose(None, c, "gpu"))
        return c
    jax.vmap(inside)(jax.numpy.stack([cap, cap]))
    assert seen == [None]
    # a push chunk's tile (queued vertices x arcs a step) holds at least one element per thread
    assert bfs_level.choose(bfs_level.Config(push_warps=2, push_block=64), cap, "gpu").push_warps == 2
    assert bfs_level.choose(bfs_level.Config(push_block=32, push_width=4), cap, "gpu").push_block == 32
    with pytest.raises(GraphInputError, match="push_warps=8, got 128"):
        bfs_level.choose(bfs_level.Config(push_warps=8, push_block=32), cap, "gpu")
    assert bfs_level.choose(bfs_level.Config(push_warps=8, push_block=32), cap, "cpu")   # interpreted: no threads
    with pytest.raises(GraphInputError, match="push_small x push_width must be at least the 128 threads"):
        bfs_level.choose(bfs_level.Config(push_small=8), cap, "gpu")
    with pytest.raises(GraphInputError, match="push_small must be 0 or a power of two"):
        bfs_level.choose(bfs_level.Config(push_small=24), cap, "cpu")
    with pytest.raises(GraphInputError, match="match_small x match_width must be at least the 128 threads"):
        bfs_level.choose(bfs_level.Config(match_small=16), cap, "gpu")
    with pytest.raises(GraphInputError, match="Config.push_warps must be a power of two"):
        bfs_level.choose(bfs_level.Config(push_warps=3), cap, "cpu")


def test_bfs_kernel_is_refused_under_vmap():
    """The persistent kernel asked for explicitly under vmap: a clear error (a batched launch could
    not keep all its programs resident for the grid barrier); the default runs the XLA levels. A
    Config.solo that is not an int >= 0 is refused too, and Config.fused without the push phase's
    minimum."""
    import jaxmatch
    from experiments.generators import genrmf
    from jaxmatch.flow import FlowNetwork, max_flow
    nets, values = [], []
    for seed in range(3):
        tail, head, cap, s, t, n = genrmf(3, 3, seed=seed)
        nets.append(FlowNetwork.from_edges(tail, head, cap, n, **FLOW_CAPS))
        values.append(int(max_flow(nets[-1], s, t, kernel=False).flow_value))
    batch = jaxmatch.stack(nets)
    with pytest.raises(jaxmatch.GraphInputError, match="does not run under jax.vmap"):
        jax.vmap(lambda net: max_flow(net, 0, 26, kernel=bfs_level.Config(block=4, width=2)))(batch)
    out = jax.vmap(lambda net: max_flow(net, 0, 26))(batch)
    assert out.flow_value.tolist() == values and np.all(np.asarray(out.status) == 0)
    for bad in (-1, 2.0, True):      # and a knob out of range, before tracing
        with pytest.raises(jaxmatch.GraphInputError, match="Config.solo"):
            max_flow(nets[0], 0, 26, kernel=bfs_level.Config(solo=bad))
    with pytest.raises(jaxmatch.GraphInputError, match="Config.fused needs relabel_from_push"):
        max_flow(nets[0], 0, 26, kernel=bfs_level.Config(fused=True, relabel_from_push=False))


# ---------------------------------------------------------------------------
# G-PR's global relabel in the persistent kernel (bfs_level.alternating_bfs)

def _random_matching(rng, r, c, n_rows, n_cols):
    """A valid (not maximum) matching of the edges (r, c): row_mate, col_mate."""
    row_mate, col_mate = np.full(n_rows, -1, np.int32), np.full(n_cols, -1, np.int32)
    for i in rng.permutation(r.size):
        if rng.random() < 0.6 and row_mate[r[i]] < 0 and col_mate[c[i]] < 0:
            row_mate[r[i]], col_mate[c[i]] = c[i], r[i]
    return row_mate, col_mate


@pytest.mark.parametrize("cfg", [bfs_level.Config(block=4, width=2, levels=3, bounds=True),
                                 bfs_level.Config(block=8, width=4)])
def test_alternating_bfs_equals_global_relabel(cfg, monkeypatch):
    """Random bipartite graphs and matchings (some stale column mates): the kernel's labels and level
    count equal the level-synchronous global relabel's, across launches of a few levels each (there
    with the row bounds queued, Config.bounds), and the XLA relabel's two forms of a level (the
    CPU's segment maximum, the GPU's scatter) give the same."""
    from jaxmatch import BipartiteGraph
    from jaxmatch.bipartite import push_relabel as pr
    rng = np.random.default_rng(cfg.block)
    relabel = jax.jit(pr.global_relabel, static_argnames=("kernel", "interpret"))
    form = pr.bfs_by_segments()
    other = jax.jit(lambda g, rm, cm, inf: pr.global_relabel(g, rm, cm, inf))   # traced with the other form
    for _ in range(8):
        nr, nc = (int(x) for x in rng.integers(1, 40, 2))
        m = int(rng.integers(0, 120))
        r, c = rng.integers(0, nr, m), rng.integers(0, nc, m)
        g = BipartiteGraph.from_edges(r, c, nr, nc, row_capacity=64, col_capacity=64, edge_capacity=128)
        row_mate, col_mate = _random_matching(rng, r, c, 64, 64)
        stale = rng.random(64) < 0.1                     # col_mate entries row_mate does not confirm
        col_mate = np.where(stale & (col_mate < 0), rng.integers(0, max(nr, 1), 64), col_mate).astype(np.int32)
        inf = jax.numpy.int32(nr + nc)
        want = relabel(g, row_mate, col_mate, inf)
        got = relabel(g, row_mate, col_mate, inf, kernel=cfg, interpret=True)
        with monkeypatch.context() as patch:
            patch.setattr(pr, "bfs_by_segments", lambda: not form)
            third = other(g, row_mate, col_mate, inf)
        for a, b, c in zip(want, got, third):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            np.testing.assert_array_equal(np.asarray(a), np.asarray(c))


MATCH_CAPS = dict(row_capacity=256, col_capacity=256, edge_capacity=1024)   # one compilation for both graphs


def _grid_and_random_bipartite(rng, side=12):
    ids = np.arange(side * side).reshape(side, side)      # a grid: many BFS levels, long augmenting paths
    u = np.r_[ids[:, :-1].ravel(), ids[:-1, :].ravel()]
    v = np.r_[ids[:, 1:].ravel(), ids[1:, :].ravel()]
    return [(np.r_[u, v], np.r_[v, u], side * side, side * side),
            (rng.integers(0, 50, 200), rng.integers(0, 40, 200), 50, 40)]


def test_maximum_matching_with_bfs_kernel():
    """G-PR (and auto's G-PR) with its global relabels in the kernel (the push steps in XLA): the
    same matching and counters as without, certified maximum."""
    from jaxmatch import BipartiteGraph, certify, maximum_matching, stack
    for r, c, nr, nc in _grid_and_random_bipartite(np.random.default_rng(2)):
        g = BipartiteGraph.from_edges(r, c, nr, nc, **MATCH_CAPS)
        for method in ("pr", "auto"):
            a = maximum_matching(g, method=method, init=None, kernel=False, auto_levels=0.2)
            b = maximum_matching(g, method=method, init=None, auto_levels=0.2,
                                 kernel=bfs_level.Config(block=8, width=4, levels=5, push=False))
            np.testing.assert_array_equal(np.asarray(a.row_mate), np.asarray(b.row_mate))
            assert {k: int(x) for k, x in a.stats.items()} == {k: int(x) for k, x in b.stats.items()}
            certify.check_maximum_matching(g, b.row_mate, b.col_mate)
    with pytest.raises(GraphInputError, match="does not run under jax.vmap"):
        jax.vmap(lambda g: maximum_matching(g, kernel=True))(stack([g, g]))


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 44), st.lists(st.tuples(st.integers(0, 43), st.integers(0, 43), st.integers(0, 2)),
                                    min_size=1, max_size=250),
       st.integers(0, 2**16), st.integers(1, 5))
def test_bfs_levels_property(n, arcs, seed, max_levels):
    """Any residual graph, roots and level budget: launches of at most ``max_levels`` levels, run
    until the frontier is empty, label every vertex as the reference run level by level does."""
    from jaxmatch.flow import FlowNetwork
    tail = np.array([a[0] % n for a in arcs])
    head = np.array([a[1] % n for a in arcs])
    net = FlowNetwork.from_edges(tail, head, np.array([a[2] for a in arcs]), n, vertex_capacity=48,
                                 arc_capacity=256)
    rng = np.random.default_rng(seed)
    rc = jax.numpy.asarray(rng.integers(0, 2, net.res_rev.shape[0]), jax.numpy.int32)
    roots = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)
    dist = np.full(48, 2**31 - 1, np.int32)
    dist[roots] = 0
    graph = (net.res.indptr, net.res.indices, net.res_rev, rc, jax.numpy.ones(48, bool))
    buf = np.full(96, 48, np.int32)
    buf[:roots.size] = roots
    d, buf, side, count, level = jax.numpy.asarray(dist), jax.numpy.asarray(buf), 0, roots.size, 1
    while count > 0:
        d, buf, side, count, _, done, stalled = bfs_level.bfs_levels(
            buf, count, level, d, graph[0], graph[1], graph[3][graph[2]], graph[4], side=side,   # back = rc[rev]
            max_levels=max_levels, interpret=True)
        assert 1 <= int(done) <= max_levels and not bool(stalled)
        level, count = level + int(done), int(count)
    first = np.full(48, 48, np.int32)
    first[:roots.size] = roots
    rd, rf, rcount, k = jax.numpy.asarray(dist), jax.numpy.asarray(first), roots.size, 1
    while rcount > 0:
        rd, rf, rcount, _ = bfs_level._reference(rf, rcount, k, rd, *graph)
        rcount, k = int(rcount), k + 1
    np.testing.assert_array_equal(np.asarray(d), np.asarray(rd))
    assert level == k


@pytest.mark.parametrize("from_push", [False, True, "fused"])
def test_push_rounds_keep_the_queue_exact(from_push):
    """The push kernel alone (interpret mode), launches of 1-4 rounds from a global relabel's state
    on genrmf: after each launch the queue holds every active vertex exactly once, excess is
    conserved, and the labels stay valid (h(u) <= h(w) + 1 on every residual arc between
    non-terminals); also with the relabel phase taking the push phase's minimum, and with one phase a
    round (Config.fused: each relabel right after the pushes, by at most 2). With Config.solo the
    launches alternate as the solver's do (one program while the queue holds at most ``solo``
    vertices, the grid otherwise), and each stops by its rule: the one-program launch once the
    queue outgrows ``solo``, the grid's once it falls to ``solo // 2`` (or the queue empties, or the
    launch's rounds ran)."""
    import jax.numpy as jnp

    from experiments.generators import genrmf
    from jaxmatch.flow import FlowNetwork
    from jaxmatch.flow import push_relabel as pr
    from jaxmatch.flow import residual
    from jaxmatch.flow.lanes import ladder
    from jaxmatch.kernels import push_flow
    tail, head, cap, s, t, n = genrmf(3, 3, seed=2)
    net = FlowNetwork.from_edges(tail, head, cap, n, **FLOW_CAPS)
    vc = net.vertex_cap
    src, snk = residual._mask_of(jnp.array([s]), vc), residual._mask_of(jnp.array([t]), vc)
    term = src | snk
    f0 = residual.initial_preflow(net, src)
    zero = jnp.int32(0)
    st = pr.PRState(residual.residual_from_flow(net, f0), residual.excess_of_flow(net, f0),
                    jnp.where(src, n, 0).astype(jnp.int32),
                    jnp.full(vc, vc, jnp.int32), zero, zero, zero, jnp.full(vc, 2**31 - 1, jnp.int32), zero,
                    jnp.float32(0), jnp.float32(0), zero, zero, zero, zero, jnp.zeros(1, jnp.int32), jnp.bool_(False))
    st = pr.global_relabel(net, st, snk, src, term, jnp.int32(n), 0.5, ladder(vc, net.arc_cap, 2 * net.arc_cap),
                           search=False, unroll=1, early=False)
    rc, ex, h, queue, count = st.rc, st.excess, st.height, st.queue, int(st.count)
    src_row, dst_row = np.asarray(net.res.src), np.asarray(net.res.indices)
    inside = (src_row < n) & (dst_row < n)
    src_row, dst_row = np.where(inside, src_row, 0), np.where(inside, dst_row, 0)
    cfg = bfs_level.Config(programs=2, push_block=4, push_width=2, relabel_from_push=bool(from_push), solo=4,
                           fused=from_push == "fused")
    stamp, done, kinds = jnp.full(vc, 2**31 - 1, jnp.int32), 0, set()
    for rounds in (1, 3, 2, 4, 1, 3, 4, 2, 4, 4, 4, 4):
        solo = count <= cfg.solo
        o = push_flow.push_rounds(jnp.concatenate([queue, jnp.full(vc, vc, jnp.int32)]), count, rc, ex, h, stamp,
                                  net.res.indptr, net.res.indices, net.res_rev, net.res_forward.astype(jnp.int32),
                                  term.astype(jnp.int32), n=n, round_id=done + 1, room=1e9, max_rounds=rounds,
                                  cfg=cfg, interpret=True, solo=solo)
        ran = int(o.rounds)
        assert 1 <= ran <= rounds and int(o.count) >= 0
        if ran < rounds and int(o.count) > 0:     # stopped by its rule
            assert int(o.count) > cfg.solo if solo else int(o.count) <= cfg.solo // 2, (solo, int(o.count))
        kinds.add(solo)
        rc, ex, h, stamp, count, done = o.rc, o.excess, o.height, o.stamp, int(o.count), done + ran
        queue = jax.lax.dynamic_slice(o.buf, (o.side * vc,), (vc,))
        e, hh = np.asarray(ex), np.asarray(h)
        active = np.flatnonzero((e > 0) & (hh < n) & ~np.asarray(term))
        assert sorted(np.asarray(queue[:count]).tolist()) == active.tolist()
        assert e[:n].sum() == 0
        real = inside & (np.asarray(rc) > 0) & ~np.asarray(term)[src_row] & ~np.asarray(term)[dst_row]
        assert np.all(hh[src_row[real]] <= hh[dst_row[real]] + 1)
        if count == 0:
            break
    assert kinds == {False, True}, kinds


@pytest.mark.parametrize("from_push", [False, True, "fused"])
def test_push_round_relabel_sees_the_arc_a_push_made(from_push):
    """u (height 1, excess, its one residual arc to x at height 6) and w (height 2) are in one chunk;
    w pushes into u in the push phase, after u read its row, which makes (u, w) residual. u's
    relabel must stay valid for that arc: h(u) <= h(w) + 1 = 3, not 1 + h(x) = 7 (with the push
    phase's minimum, the cap at h + 2 for a vertex that received does it; with one phase a round, the
    cap on every relabel)."""
    import jax.numpy as jnp

    from jaxmatch.kernels import push_flow
    i = lambda *a: jnp.array(*a, jnp.int32)  # noqa: E731
    # arcs u -> x (capacity 5) and w -> u (capacity 5); residual rows: u: (u,x) (u,w); w: (w,u); x: (x,u)
    o = push_flow.push_rounds(i([0, 1, 3, 3, 3, 3]), 2, i([5, 0, 5, 0]), i([3, 3, 0]), i([1, 2, 6]),
                              i([-1, -1, -1]), i([0, 2, 3, 4]), i([2, 1, 0, 0]), i([3, 2, 1, 0]), i([1, 0, 1, 0]),
                              i([0, 0, 0]), n=10, round_id=1, room=100.0, max_rounds=1,
                              cfg=bfs_level.Config(push_block=2, push_width=2, relabel_from_push=bool(from_push),
                                                   fused=from_push == "fused"),
                              interpret=True)
    assert o.rc.tolist() == [5, 3, 2, 0] and o.excess.tolist() == [6, 0, 0]
    assert o.height.tolist() == [3, 2, 6]


def test_gpr_push_rounds_keep_the_queue_exact():
    """G-PR's push kernel alone (interpret mode), launches of 1-4 rounds from a global relabel on a
    grid: after each launch ``row_mate`` is a matching, the queue holds every column that is neither
    matched nor marked unmatchable exactly once, and the labels stay valid (psi_c(v) <= psi_r(u) + 1
    on unmatched edges, psi_r(u) <= psi_c(v) + 1 on matched ones)."""
    import jax.numpy as jnp

    from jaxmatch import BipartiteGraph
    from jaxmatch.bipartite import push_relabel as pr
    from jaxmatch.kernels.push_match import push_match_rounds
    r, c, nr, nc = _grid_and_random_bipartite(np.random.default_rng(0), side=8)[0]
    g = BipartiteGraph.from_edges(r, c, nr, nc)
    inf = jnp.int32(nr + nc)
    cols = jnp.arange(g.col_cap, dtype=jnp.int32)
    zero = jnp.int32(0)
    row_mate, col_mate = jnp.full(g.row_cap, -1, jnp.int32), jnp.full(g.col_cap, -1, jnp.int32)
    active = jnp.where(cols < nc, cols, g.col_cap)
    s = pr.PRState(row_mate, col_mate, jnp.zeros(g.row_cap, jnp.int32), jnp.ones(g.col_cap, jnp.int32), active,
                   jnp.full(g.row_cap, 2**31 - 1, jnp.int32), jnp.int32(nc), jnp.int32(nc), zero, zero, zero, zero,
                   zero, jnp.bool_(False))
    s = pr._relabel_and_shrink(g, s, inf, 0.7)
    queue, count, rm, cm, psi_r, psi_c = s.active, int(s.n_slots), s.row_mate, s.col_mate, s.psi_r, s.psi_c
    cfg = bfs_level.Config(programs=2, push_block=4, match_width=2)
    rows, cols_of = np.asarray(g.by_col.indices)[:len(r)], np.asarray(g.by_col.src)[:len(r)]
    for rounds in (1, 3, 2, 4, 1, 3, 4, 2) * 4:
        o = push_match_rounds(jnp.concatenate([queue, jnp.full(g.col_cap, g.col_cap, jnp.int32)]), count, rm, cm,
                              psi_r, psi_c, g.by_col.indptr, g.by_col.indices, inf=inf, max_rounds=rounds, cfg=cfg,
                              interpret=True)
        rm, cm, psi_r, psi_c, count = o.row_mate, o.col_mate, o.psi_r, o.psi_c, int(o.count)
        queue = jax.lax.dynamic_slice(o.buf, (o.side * g.col_cap,), (g.col_cap,))
        held = np.asarray(rm)[:nr]
        assert len(set(held[held >= 0].tolist())) == int(np.sum(held >= 0))    # a matching
        free = np.setdiff1d(np.flatnonzero(np.asarray(cm)[:nc] != -2), held[held >= 0])
        assert sorted(np.asarray(queue[:count]).tolist()) == free.tolist()
        pr_, pc_ = np.asarray(psi_r), np.asarray(psi_c)
        matched = np.asarray(rm)[rows] == cols_of
        live = np.asarray(cm)[cols_of] != -2
        assert np.all(pc_[cols_of[live & ~matched]] <= pr_[rows[live & ~matched]] + 1)
        assert np.all(pr_[rows[matched]] <= pc_[cols_of[matched]] + 1)
        if count == 0:
            break
    assert count == 0 and int(np.sum(np.asarray(rm)[:nr] >= 0)) == nr    # the grid has a perfect matching


def test_maximum_matching_with_push_kernel():
    """G-PR with its pushes in the kernel too (interpret mode): a maximum matching (scipy's size,
    certified) on a grid and a random graph, eagerly and under jit, from every start; a graph with a
    column longer than ``push_max_degree`` takes the XLA steps instead. ``"auto"`` is G-PR alone
    when the push kernel runs, graft first otherwise."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from jaxmatch import BipartiteGraph, certify, maximum_matching
    cfg = bfs_level.Config(block=8, width=4, levels=5, push_block=8, match_width=2, rounds=7, programs=2)
    for r, c, nr, nc in _grid_and_random_bipartite(np.random.default_rng(5)):
        g = BipartiteGraph.from_edges(r, c, nr, nc, **MATCH_CAPS)
        want = int(np.sum(maximum_bipartite_matching(csr_matrix((np.ones(len(r)), (r, c)), shape=(nr, nc))) >= 0))
        for init in ("cheap", None):
            for knobs in (cfg, cfg._replace(push_max_degree=1)):
                res = maximum_matching(g, method="pr", init=init, kernel=knobs)
                assert int(res.cardinality) == want and res.status_name == "converged"
                certify.check_maximum_matching(g, res.row_mate, res.col_mate)
                res = maximum_matching(g, method="auto", init=init, kernel=knobs)    # G-PR alone on short columns
                assert int(res.cardinality) == want and (int(res.stats["phases"]) == 0) == (knobs is cfg)
                certify.check_maximum_matching(g, res.row_mate, res.col_mate)
        res = jax.jit(lambda g: maximum_matching(g, method="pr", kernel=cfg))(g)
        assert int(res.cardinality) == want
        certify.check_maximum_matching(g, res.row_mate[:nr], res.col_mate[:nc])


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), min_size=0, max_size=200),
       st.sampled_from(["cheap", None]), st.sampled_from([2, 5]), st.sampled_from([0, 2]))
def test_gpr_push_kernel_property(nr, nc, edges, init, rounds, small):
    """Any bipartite graph within one capacity, either start, launches of 2 or 5 rounds, with and
    without chunks of 2 columns for short queues (Config.match_small): G-PR with its pushes in the
    kernel (interpret mode) finds scipy's cardinality, certified."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from jaxmatch import BipartiteGraph, certify, maximum_matching
    r = np.array([e[0] % nr for e in edges], np.int64)
    c = np.array([e[1] % nc for e in edges], np.int64)
    g = BipartiteGraph.from_edges(r, c, nr, nc, row_capacity=64, col_capacity=64, edge_capacity=256)
    A = csr_matrix((np.ones(r.size), (r, c)), shape=(nr, nc))
    want = int(np.sum(maximum_bipartite_matching(A, perm_type="column") >= 0))
    cfg = bfs_level.Config(block=8, width=4, levels=3, push_block=8, match_width=2, rounds=rounds, match_small=small)
    res = maximum_matching(g, method="pr", init=init, kernel=cfg)
    assert int(res.cardinality) == want and res.status_name == "converged"
    certify.check_maximum_matching(g, res.row_mate, res.col_mate)
