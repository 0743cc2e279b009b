"""The certificates accept right answers and reject wrong ones."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

from jaxmatch import BipartiteGraph, FlowNetwork, certify
from jaxmatch.certify import CertificateError


def scipy_matching(a):
    a = sp.csr_array(a)
    row_mate = maximum_bipartite_matching(a, perm_type="column")
    col_mate = np.full(a.shape[1], -1)
    r = np.flatnonzero(row_mate >= 0)
    col_mate[row_mate[r]] = r
    return row_mate, col_mate


def random_bipartite(rng, nr, nc, density):
    a = sp.random_array((nr, nc), density=density, rng=rng, format="csr")
    a.data[:] = 1
    return a


@pytest.mark.parametrize("seed", range(20))
def test_accepts_maximum_matchings(seed):
    rng = np.random.default_rng(seed)
    a = random_bipartite(rng, int(rng.integers(1, 40)), int(rng.integers(1, 40)), rng.uniform(0.02, 0.3))
    g = BipartiteGraph.from_scipy(a)
    rm, cm = scipy_matching(a)
    certify.check_maximum_matching(g, rm, cm)
    certify.check_maximum_matching(a, rm, cm)  # scipy input too
    rc, cc = certify.koenig_cover(g, rm, cm)
    assert rc.sum() + cc.sum() == (rm >= 0).sum()


def test_rejects_maximal_but_not_maximum():
    # path r1 - c0 - r0 - c1: {r0-c0} is maximal, {r1-c0, r0-c1} is maximum
    g = BipartiteGraph.from_edges([0, 1, 0], [0, 0, 1])
    rm, cm = np.array([0, -1]), np.array([0, -1])
    assert certify.is_matching(g, rm, cm)
    assert not certify.is_maximum_matching(g, rm, cm)
    with pytest.raises(CertificateError, match="not maximum"):
        certify.check_maximum_matching(g, rm, cm)
    certify.check_maximum_matching(g, np.array([1, 0]), np.array([1, 0]))


@pytest.mark.parametrize("rm, cm, match", [
    ([1, -1], [-1, -1], "whose col_mate"),
    ([0, 0], [0, -1], "whose col_mate"),
    ([-1, -1], [1, -1], "whose row_mate"),
    ([2, -1], [-1, -1], "not -1 or a vertex id"),
    ([0], [0, -1], "shape"),
])
def test_rejects_non_matchings(rm, cm, match):
    g = BipartiteGraph.from_edges([0, 1, 0], [0, 0, 1])
    with pytest.raises(CertificateError, match=match):
        certify.check_matching(g, np.array(rm), np.array(cm))
    assert not certify.is_matching(g, np.array(rm), np.array(cm))


def test_rejects_matched_non_edge():
    g = BipartiteGraph.from_edges([0, 1], [0, 0], n_cols=2)
    with pytest.raises(CertificateError, match="not an edge"):
        certify.check_matching(g, np.array([1, -1]), np.array([-1, 0]))


def scipy_flow(tail, head, cap, n, s, t):
    a = sp.csr_array((cap.astype(np.int32), (tail, head)), shape=(n, n))
    res = maximum_flow(a, s, t)
    f = res.flow.toarray()
    return res.flow_value, np.maximum(f[tail, head], 0)  # no parallel/antiparallel arcs here


def residual_source_side(tail, head, cap, flow, n, s):
    side = np.zeros(n, bool)
    side[s] = True
    frontier = [s]
    while frontier:
        v = frontier.pop()
        nxt = np.concatenate([head[(tail == v) & (flow < cap)], tail[(head == v) & (flow > 0)]])
        for w in nxt:
            if not side[w]:
                side[w] = True
                frontier.append(w)
    return side


@pytest.mark.parametrize("seed", range(10))
def test_flow_and_cut_certificates(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    pairs = {(int(u), int(v)) for u, v in rng.integers(0, n, (4 * n, 2)) if u != v}
    pairs = sorted((u, v) for u, v in pairs if (v, u) not in pairs or u < v)
    tail, head = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    cap = rng.integers(0, 20, tail.size)
    net = FlowNetwork.from_edges(tail, head, cap, n=n)
    value, flow = scipy_flow(tail, head, cap, n, 0, n - 1)
    certify.check_flow(net, 0, n - 1, flow, value=value)
    side = residual_source_side(tail, head, cap, flow, n, 0)
    certify.check_min_cut(net, 0, n - 1, side, value)
    if value > 0:
        with pytest.raises(CertificateError, match="cut capacity"):
            certify.check_min_cut(net, 0, n - 1, side, value + 1)
        with pytest.raises(CertificateError, match="flow value"):
            certify.check_flow(net, 0, n - 1, flow, value=value - 1)


def test_flow_violations():
    net = FlowNetwork.from_edges([0, 1, 1], [1, 2, 3], [5, 3, 3], n=4)
    certify.check_flow(net, 0, [2, 3], np.array([4, 2, 2]), value=4)
    with pytest.raises(CertificateError, match="not conserved at vertex 1"):
        certify.check_flow(net, 0, 2, np.array([4, 3, 0]))
    with pytest.raises(CertificateError, match="outside"):
        certify.check_flow(net, 0, [2, 3], np.array([6, 3, 3]))
    with pytest.raises(CertificateError, match="outside"):
        certify.check_flow(net, 0, [2, 3], np.array([-1, 0, -1]))
    with pytest.raises(CertificateError, match="share"):
        certify.check_flow(net, 0, [0, 2], np.zeros(3, int))
    with pytest.raises(CertificateError, match="not a set of vertices"):
        certify.check_flow(net, 7, 2, np.zeros(3, int))
    with pytest.raises(CertificateError, match="shape"):
        certify.check_flow(net, 0, 2, np.zeros(2, int))
    side = np.array([True, False, False, False])
    certify.check_min_cut(net, 0, [2, 3], side, 5)
    with pytest.raises(CertificateError, match="sink 2 is on the source side"):
        certify.check_min_cut(net, 0, 2, np.array([True, True, True, False]), 0)
    with pytest.raises(CertificateError, match="source 0 is not"):
        certify.check_min_cut(net, 0, 2, ~side, 0)
    with pytest.raises(CertificateError, match="bool mask"):
        certify.check_min_cut(net, 0, 2, side.astype(int), 5)
