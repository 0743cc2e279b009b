"""Tests for experiments/generators.py (small sizes only)."""

import doctest

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

import experiments.generators as gen

GRAPHS = {
    "delaunay": lambda seed: gen.delaunay(500, seed=seed),
    "rmat": lambda seed: gen.rmat(9, seed=seed),
    "rmat_hard": lambda seed: gen.rmat_hard(9, seed=seed),
    "random_geometric": lambda seed: gen.random_geometric(1000, seed=seed),
    "road_grid": lambda seed: gen.road_grid(20, 30, seed=seed),
    "power_law": lambda seed: gen.power_law(1000, seed=seed),
}
SIZES = {"delaunay": 500, "rmat": 512, "rmat_hard": 512, "random_geometric": 1000,
         "road_grid": 600, "power_law": 1000}


def same_csr(A, B):
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))


def test_doctests():
    result = doctest.testmod(gen)
    assert result.attempted > 10 and result.failed == 0


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_is_simple_undirected(name):
    A = GRAPHS[name](0)
    n = SIZES[name]
    assert isinstance(A, sp.csr_array)
    assert A.shape == (n, n)
    assert A.nnz > 0
    assert (A != A.T).nnz == 0  # symmetric
    assert not A.diagonal().any()  # no self loops
    assert A.has_canonical_format  # sorted, no duplicates
    assert np.all(A.data == 1)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_seed_reproducible(name):
    assert same_csr(GRAPHS[name](1), GRAPHS[name](1))
    assert not same_csr(GRAPHS[name](1), GRAPHS[name](2))


def test_delaunay_degree_and_planarity():
    n = 2000
    A = gen.delaunay(n, seed=3)
    # planar triangulation: m = 3n - 3 - h edges (h = hull size, small)
    m = A.nnz // 2
    assert 3 * n - 3 - 100 <= m <= 3 * n - 6


def test_rmat_average_degree():
    scale, ef = 12, 16
    for f in (gen.rmat, gen.rmat_hard):
        A = f(scale, edge_factor=ef, seed=0)
        avg = A.nnz / 2**scale
        # at most 2 * ef; merging duplicates / loops loses a part, not most
        assert 0.5 * 2 * ef < avg <= 2 * ef
    # Graph500 skew: the hardest hub is far above the average
    A = gen.rmat(scale, seed=0)
    assert np.diff(A.indptr).max() > 10 * A.nnz / 2**scale


def test_rmat_relabels_vertices():
    # without relabelling vertex 0 would be the top hub
    deg = np.diff(gen.rmat(12, seed=0).indptr)
    assert np.argmax(deg) != 0


def test_rgg_average_degree():
    n = 20000
    A = gen.random_geometric(n, seed=0)
    r = 0.55 * np.sqrt(np.log(n) / n)
    expected = np.pi * r * r * (n - 1)  # less a few % lost at the border
    avg = A.nnz / n
    assert 0.85 * expected < avg < 1.02 * expected
    # explicit radius
    B = gen.random_geometric(500, radius=0.1, seed=0)
    assert abs(B.nnz / 500 - np.pi * 0.01 * 499) < 3


def test_road_grid():
    A = gen.road_grid(10, 12, p_delete=0.0)
    assert A.nnz == 2 * (10 * 11 + 9 * 12)
    assert np.diff(A.indptr).max() == 4
    B = gen.road_grid(100, 100, p_delete=0.3, seed=0)
    full = 2 * (100 * 99 * 2)
    assert abs(B.nnz / full - 0.7) < 0.03


def test_power_law_heavy_tail():
    A = gen.power_law(5000, avg_degree=16, seed=0)
    deg = np.diff(A.indptr)
    assert 8 < deg.mean() <= 16
    assert deg.max() > 10 * deg.mean()


def test_bipartite_view():
    A = sp.csr_array(np.array([[0.0, 2.5, 0], [3, 0, 0]]))
    B = gen.bipartite_view(A)
    assert B.shape == (2, 3)
    assert B.toarray().tolist() == [[0, 1, 0], [1, 0, 0]]
    # duplicates merged
    C = gen.bipartite_view(sp.coo_array(([1, 1, 1], ([0, 0, 1], [1, 1, 0])), shape=(2, 2)))
    assert C.nnz == 2 and np.all(C.data == 1)


def degree_multisets(A):
    A = sp.csr_array(A)
    return np.sort(np.diff(A.indptr)), np.sort(np.diff(A.tocsc().indptr))


def test_permute_preserves_structure():
    A = gen.bipartite_view(gen.random_bipartite(300, 200, 4, seed=0))
    B = gen.permute(A, seed=1)
    assert B.shape == A.shape and B.nnz == A.nnz
    ra, ca = degree_multisets(A)
    rb, cb = degree_multisets(B)
    assert np.array_equal(ra, rb) and np.array_equal(ca, cb)
    assert not same_csr(A, B)
    assert same_csr(B, gen.permute(A, seed=1))
    # only rows: the column degrees stay in place
    R = gen.permute(A, seed=1, cols=False)
    assert np.array_equal(np.diff(R.tocsc().indptr), np.diff(A.tocsc().indptr))


def test_permute_is_a_true_permutation():
    rng = np.random.default_rng(0)
    M = sp.random_array((30, 20), density=0.2, rng=rng, format="csr")
    B = gen.permute(M, seed=4)
    # the same multiset of values, and every row of B is some row of M
    assert np.allclose(np.sort(B.data), np.sort(M.data))
    rows_m = {tuple(np.sort(M[[i]].data)) for i in range(30)}
    assert all(tuple(np.sort(B[[i]].data)) in rows_m for i in range(30))


def test_permute_symmetric_keeps_graph_undirected():
    A = gen.delaunay(300, seed=0)
    B = gen.permute_symmetric(A, seed=2)
    assert (B != B.T).nnz == 0 and not B.diagonal().any()
    assert np.array_equal(np.sort(np.diff(A.indptr)), np.sort(np.diff(B.indptr)))
    with pytest.raises(ValueError):
        gen.permute_symmetric(sp.csr_array((3, 4)))


def test_random_bipartite():
    B = gen.random_bipartite(2000, 1500, 5, seed=0)
    assert B.shape == (2000, 1500)
    assert abs(B.nnz / 2000 - 5) < 0.2
    assert same_csr(B, gen.random_bipartite(2000, 1500, 5, seed=0))
    assert not same_csr(B, gen.random_bipartite(2000, 1500, 5, seed=1))


def check_flow_instance(tail, head, cap, s, t, n):
    assert tail.shape == head.shape == cap.shape
    assert tail.dtype.kind == head.dtype.kind == cap.dtype.kind == "i"
    assert np.all((tail >= 0) & (tail < n) & (head >= 0) & (head < n))
    assert np.all(tail != head)
    assert np.all(cap > 0)
    assert 0 <= s < n and 0 <= t < n and s != t
    graph = sp.csr_array((cap.astype(np.int32), (tail, head)), shape=(n, n))
    return maximum_flow(graph, s, t).flow_value


def test_washington_rlg():
    rows, cols = 8, 6
    inst = gen.washington_rlg(rows, cols, max_cap=100, seed=0)
    tail, head, cap, s, t, n = inst
    assert n == rows * cols + 2
    assert tail.size == 2 * rows + 3 * rows * (cols - 1)
    assert np.all(cap[(tail != s) & (head != t)] <= 100)
    # arcs go from one level to the next
    lvl = lambda x: (x - 1) // rows
    inner = (tail != s) & (head != t)
    assert np.all(lvl(head[inner]) == lvl(tail[inner]) + 1)
    # 3 distinct heads per inner node
    keys = tail[inner].astype(np.int64) * n + head[inner]
    assert np.unique(keys).size == keys.size
    assert check_flow_instance(*inst) > 0
    assert all(np.array_equal(x, y) for x, y in zip(inst[:3], gen.washington_rlg(rows, cols, 100, seed=0)[:3]))
    assert not np.array_equal(cap, gen.washington_rlg(rows, cols, 100, seed=1)[2])


def test_genrmf():
    a, b, c1, c2 = 4, 5, 1, 100
    inst = gen.genrmf(a, b, c1, c2, seed=0)
    tail, head, cap, s, t, n = inst
    assert n == a * a * b and s == 0 and t == n - 1
    assert tail.size == 4 * a * (a - 1) * b + a * a * (b - 1)
    between = head // (a * a) != tail // (a * a)
    assert np.all(head[between] // (a * a) == tail[between] // (a * a) + 1)
    assert np.all((cap[between] >= c1) & (cap[between] <= c2))
    assert np.all(cap[~between] == c2 * a * a)
    # each frame pair is joined by a permutation: every node of frames 1.. has one in-arc
    assert np.array_equal(np.sort(head[between]), np.arange(a * a, n))
    flow = check_flow_instance(*inst)
    assert 0 < flow <= cap[between].sum()
    assert np.array_equal(cap, gen.genrmf(a, b, c1, c2, seed=0)[2])
    assert not np.array_equal(head, gen.genrmf(a, b, c1, c2, seed=1)[1])


def test_stable_easy_mutual_lists():
    n = 400
    men, women = gen.stable_easy(n, seed=0)
    assert men.dtype == women.dtype == np.int32
    assert men.shape[0] == women.shape[0] == n
    ln = np.log(n)
    k = (men >= 0).sum(axis=1)
    assert k.min() >= np.rint(ln) and k.max() <= np.rint(2 * ln)
    for P in (men, women):
        valid = P >= 0
        # padding only at the end of each list
        assert np.all(valid[:, :-1] | ~valid[:, 1:])
        # no duplicates within a list
        s = np.sort(np.where(valid, P, -np.arange(1, P.shape[1] + 1)[None, :]), axis=1)
        assert np.all(s[:, 1:] != s[:, :-1])
        assert P.max() < n
    pairs = lambda P: {(i, j) for i, row in enumerate(P.tolist()) for j in row if j >= 0}
    mw = pairs(men)
    wm = {(m, w) for (w, m) in pairs(women)}
    assert mw == wm
    # women's lists are in random order, not by man id
    long_lists = women[(women >= 0).sum(axis=1) >= 4]
    ascending = [np.all(np.diff(row[row >= 0]) > 0) for row in long_lists]
    assert np.mean(ascending) < 0.2
    m2, w2 = gen.stable_easy(n, seed=0)
    assert np.array_equal(men, m2) and np.array_equal(women, w2)
    assert not np.array_equal(men, gen.stable_easy(n, seed=1)[0])
    # fixed eps: every man ranks round((1 + eps) ln n) women
    m3, _ = gen.stable_easy(n, eps=0.5, seed=0)
    assert np.all((m3 >= 0).sum(axis=1) == np.rint(1.5 * ln))


def test_stable_easy_tiny():
    for n in (1, 2, 3, 5):
        men, women = gen.stable_easy(n, seed=0)
        assert men.shape[0] == n and (men >= 0).sum() == (women >= 0).sum() >= n


def test_stable_hard():
    men, women = gen.stable_hard(5)
    assert men.shape == women.shape == (5, 5)
    assert np.all(men == np.arange(5)) and np.all(women == np.arange(5))
    men, women = gen.stable_hard(6, seed=0)
    assert np.all(men == men[0]) and np.array_equal(np.sort(men[0]), np.arange(6))
    assert np.all(women == women[0]) and np.array_equal(np.sort(women[0]), np.arange(6))
