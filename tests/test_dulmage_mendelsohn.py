"""Dulmage-Mendelsohn decomposition: against a plain scipy reference, certified, under jit and vmap.

The reference (:func:`_reference`) is written from the definitions: scipy's
``maximum_bipartite_matching``, alternating reachability by a Python BFS from
the unmatched columns and rows, and ``connected_components(connection="strong")``
on the square part's matched digraph. The coarse parts, the structural rank
and the number of square blocks are the same for every maximum matching, so
they are compared exactly; the permutations are proved right by
:func:`jaxmatch.certify.check_dulmage_mendelsohn`. Almost every graph has the
capacities ``CAPS``, so the solver compiles once for the eager calls, once
under ``jit`` and once under ``vmap`` (and once for an empty graph at its own,
smallest capacities): about 10 s on one CPU core.
"""
from collections import deque

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching, structural_rank

import jaxmatch
from jaxmatch import certify, dulmage_mendelsohn

CAPS = dict(row_capacity=16, col_capacity=16, edge_capacity=64)


def _graph(a, caps=CAPS):
    return jaxmatch.from_scipy(sp.csr_array(a), **caps)


def _reference(a):
    """(rank, rr, cc, square SCC count) of the pattern ``a`` from the definitions."""
    a = sp.csr_array(a)
    m, n = a.shape
    rm = maximum_bipartite_matching(a, perm_type="column") if m and n else np.full(m, -1)
    cm = np.full(n, -1)
    cm[rm[rm >= 0]] = np.flatnonzero(rm >= 0)
    at = a.T.tocsr()

    def reach(adj, mate, roots):          # alternating: vertex -> neighbour by an entry -> its mate
        seen_src, seen_dst, queue = set(roots), set(), deque(roots)
        while queue:
            x = queue.popleft()
            for y in adj.indices[adj.indptr[x]:adj.indptr[x + 1]]:
                if y not in seen_dst:
                    seen_dst.add(y)
                    if mate[y] >= 0 and mate[y] not in seen_src:
                        seen_src.add(mate[y])
                        queue.append(mate[y])
        return seen_src, seen_dst

    cols_h, rows_h = reach(at, rm, [j for j in range(n) if cm[j] < 0])
    rows_v, cols_v = reach(a, cm, [i for i in range(m) if rm[i] < 0])
    sq = [j for j in range(n) if j not in cols_h and j not in cols_v]
    c0 = int(np.sum(cm < 0))
    rank = int(np.sum(rm >= 0))
    cc = [0, c0, len(cols_h), len(cols_h) + len(sq), n]
    rr = [0, len(rows_h), len(rows_h) + len(sq), rank, m]
    nsq = 0
    if sq:
        pos = {j: k for k, j in enumerate(sq)}
        u, w = [], []
        for k, j in enumerate(sq):
            i = cm[j]
            for j2 in a.indices[a.indptr[i]:a.indptr[i + 1]]:
                if j2 in pos:
                    u.append(k)
                    w.append(pos[j2])
        d = sp.csr_array((np.ones(len(u)), (u, w)), shape=(len(sq), len(sq)))
        nsq = connected_components(d, directed=True, connection="strong")[0]
    return rank, rr, cc, nsq


def _check(a, res):
    a = sp.csr_array(a)
    rank, rr, cc, nsq = _reference(a)
    assert int(res.structural_rank) == rank
    if min(a.shape):
        assert rank == structural_rank(a)
    assert np.asarray(res.coarse_rows).tolist() == rr
    assert np.asarray(res.coarse_cols).tolist() == cc
    assert int(res.stats["square_blocks"]) == nsq
    lead, trail = int(cc[2] > 0), int(rr[2] < a.shape[0])
    assert int(res.n_blocks) == lead + nsq + trail
    assert res.status_name == "converged"
    certify.check_dulmage_mendelsohn(a, res)


def _permuted(a, seed):
    rng = np.random.default_rng(seed)
    a = sp.csr_array(a)
    return a[rng.permutation(a.shape[0])][:, rng.permutation(a.shape[1])]


def _cycle(k):
    """An irreducible k x k pattern: the diagonal and a cycle through all k columns."""
    i = np.arange(k)
    return sp.csr_array((np.ones(2 * k), (np.r_[i, i], np.r_[i, (i + 1) % k])), shape=(k, k))


def _block_triangular(sizes, seed, extra=6):
    """Irreducible diagonal blocks of the given sizes, random entries above them, permuted."""
    rng = np.random.default_rng(seed)
    a = sp.block_diag([_cycle(k) if k > 1 else sp.csr_array(np.ones((1, 1))) for k in sizes]).tolil()
    start = np.cumsum([0] + list(sizes))
    for _ in range(extra if len(sizes) > 1 else 0):
        b1, b2 = sorted(rng.choice(len(sizes), 2, replace=False))
        a[rng.integers(start[b1], start[b1 + 1]), rng.integers(start[b2], start[b2 + 1])] = 1
    return _permuted(a.tocsr(), seed + 1)


def _random(m, n, nnz, seed):
    rng = np.random.default_rng(seed)
    r, c = rng.integers(0, m, nnz), rng.integers(0, n, nnz)
    return sp.csr_array((np.ones(nnz), (r, c)), shape=(m, n))


def _singular(seed):
    """12 x 12 with rows 0..4 confined to columns 0..2: at least two rows left unmatched."""
    rng = np.random.default_rng(seed)
    a = _random(12, 12, 30, seed).tolil()
    a[:5, :] = 0
    for i in range(5):
        a[i, rng.integers(0, 3, 2)] = 1
    return _permuted(a.tocsr(), seed)


CASES = {
    "random_square": _random(14, 14, 30, 0),
    "random_sparse": _random(16, 16, 20, 1),
    "random_dense": _random(10, 10, 60, 2),
    "wide": _random(6, 15, 24, 3),
    "tall": _random(15, 6, 24, 4),
    "singular": _singular(5),
    "singular2": _singular(6),
    "reducible": _block_triangular([3, 2, 4, 1, 5], 7),
    "reducible_singletons": _block_triangular([1] * 12, 8, extra=20),
    "irreducible": _permuted(_cycle(16), 9),
    "identity": sp.eye_array(9, format="csr"),
    "upper_triangular": sp.csr_array(np.triu(np.ones((8, 8)))),
    "edgeless_rows": sp.csr_array((5, 7)),
    "one_entry": sp.csr_array(([1.0], ([2], [3])), shape=(4, 5)),
}


@pytest.fixture(scope="module")
def eager():
    return {name: dulmage_mendelsohn(_graph(a)) for name, a in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_reference_and_certified(name, eager):
    _check(CASES[name], eager[name])


def test_shapes_and_known_answers(eager):
    d = eager["reducible"]
    assert d.row_perm.shape == (15,) and d.col_perm.shape == (15,)
    assert d.row_blocks.shape == d.col_blocks.shape == (int(d.n_blocks) + 1,) == (6,)
    assert d.row_blocks.tolist() == d.col_blocks.tolist()          # all square, no H or V part
    assert sorted(np.diff(d.row_blocks).tolist()) == [1, 2, 3, 4, 5]
    d = eager["irreducible"]
    assert int(d.n_blocks) == 1 and d.row_blocks.tolist() == [0, 16]
    d = eager["edgeless_rows"]      # 5 x 7, no entry: H = the 7 columns alone, V = the 5 rows alone
    assert d.coarse_cols.tolist() == [0, 7, 7, 7, 7] and d.coarse_rows.tolist() == [0, 0, 0, 0, 5]
    assert d.row_blocks.tolist() == [0, 0, 5] and d.col_blocks.tolist() == [0, 7, 7]
    d = eager["singular"]
    assert int(d.structural_rank) < 12 and int(d.coarse_rows[4] - d.coarse_rows[2]) > 0


def test_permutation_matches_dense_block_form(eager):
    a = CASES["reducible"].toarray()
    d = eager["reducible"]
    b = a[np.asarray(d.row_perm)][:, np.asarray(d.col_perm)]
    r = np.asarray(d.row_blocks)
    for k in range(len(r) - 1):
        assert not b[r[k + 1]:, r[k]:r[k + 1]].any()       # nothing below diagonal block k
    assert np.all(np.diag(b) != 0)                         # the matching on the diagonal


@pytest.mark.parametrize("name", ["reducible", "singular", "wide", "tall"])
def test_certificate_rejects_wrong_results(name, eager):
    a, d = CASES[name], eager[name]
    certify.check_dulmage_mendelsohn(a, d)
    q = np.asarray(d.col_perm).copy()
    s = np.asarray(d.col_blocks)
    # swap the first and last columns of the permutation (different fine blocks)
    q[[0, -1]] = q[[-1, 0]]
    with pytest.raises(certify.CertificateError):
        certify.check_dulmage_mendelsohn(a, d._replace(col_perm=q))
    with pytest.raises(certify.CertificateError):
        certify.check_dulmage_mendelsohn(a, d._replace(row_perm=np.asarray(d.row_perm)[::-1].copy()))
    with pytest.raises(certify.CertificateError, match="permutation"):
        certify.check_dulmage_mendelsohn(a, d._replace(col_perm=np.zeros_like(q)))
    if len(s) > 2:     # merging two fine blocks: a reducible block, or broken boundaries
        keep = np.r_[0:1, 2:len(s)]
        with pytest.raises(certify.CertificateError):
            certify.check_dulmage_mendelsohn(a, d._replace(
                row_blocks=np.asarray(d.row_blocks)[keep], col_blocks=s[keep], n_blocks=d.n_blocks - 1))
    with pytest.raises(certify.CertificateError):
        certify.check_dulmage_mendelsohn(a, d._replace(structural_rank=d.structural_rank + 1))


def test_certificate_rejects_wrong_coarse_split():
    a = CASES["wide"]
    d = dulmage_mendelsohn(_graph(a))
    rr = np.asarray(d.coarse_rows).copy()
    cc = np.asarray(d.coarse_cols).copy()
    cc[1] -= 1             # claim an unmatched column is matched
    with pytest.raises(certify.CertificateError):
        certify.check_dulmage_mendelsohn(a, d._replace(coarse_cols=cc))
    with pytest.raises(certify.CertificateError, match="5 entries"):
        certify.check_dulmage_mendelsohn(a, d._replace(coarse_rows=rr[:4]))


def _padded(eager_res, traced_res, g):
    nr, nc, nb = int(g.n_rows), int(g.n_cols), int(eager_res.n_blocks)
    assert int(traced_res.n_blocks) == nb
    for f in ("row_perm", "row_mate"):
        assert np.asarray(getattr(traced_res, f))[:nr].tolist() == np.asarray(getattr(eager_res, f)).tolist()
        assert np.all(np.asarray(getattr(traced_res, f))[nr:] == -1)
    for f in ("col_perm", "col_mate"):
        assert np.asarray(getattr(traced_res, f))[:nc].tolist() == np.asarray(getattr(eager_res, f)).tolist()
    rb, cb = np.asarray(traced_res.row_blocks), np.asarray(traced_res.col_blocks)
    assert rb.shape == (min(g.row_cap, g.col_cap) + 3,)
    assert rb[:nb + 1].tolist() == eager_res.row_blocks.tolist() and np.all(rb[nb + 1:] == nr)
    assert cb[:nb + 1].tolist() == eager_res.col_blocks.tolist() and np.all(cb[nb + 1:] == nc)
    for f in ("coarse_rows", "coarse_cols", "structural_rank", "status"):
        assert np.asarray(getattr(traced_res, f)).tolist() == np.asarray(getattr(eager_res, f)).tolist()


def test_jit_gives_the_eager_answer(eager):
    names = ["reducible", "singular", "wide"]
    f = jax.jit(dulmage_mendelsohn)
    for name in names:
        g = _graph(CASES[name])
        out = f(g)
        _padded(eager[name], out, g)
        certify.check_dulmage_mendelsohn(CASES[name], out)    # a padded result is accepted too


def test_vmap_over_a_stack(eager):
    names = ["reducible", "tall", "singular2"]
    graphs = [_graph(CASES[n]) for n in names]
    out = jax.vmap(dulmage_mendelsohn)(jaxmatch.stack(graphs))
    assert out.n_blocks.shape == (3,)
    for b, (name, g) in enumerate(zip(names, graphs)):
        _padded(eager[name], jax.tree.map(lambda x: x[b], out), g)


@pytest.mark.parametrize("method", ["apfb", "graft"])
def test_every_matching_method_gives_the_same_decomposition(method, eager):
    """The parts and blocks do not depend on which maximum matching is used (another method may find
    another matching; the permutations then differ but stay certified)."""
    for name in ["reducible", "singular", "wide", "tall"]:
        d = dulmage_mendelsohn(_graph(CASES[name]), method=method)
        _check(CASES[name], d)
        for f in ("coarse_rows", "coarse_cols", "row_blocks", "col_blocks", "n_blocks", "structural_rank"):
            assert np.asarray(getattr(d, f)).tolist() == np.asarray(getattr(eager[name], f)).tolist(), (name, f)


def test_bundled_bipartite_data():
    """The bundled bipartite graphs (one shared capacity: one compilation): the reference's rank,
    coarse parts and square blocks, certified."""
    caps = dict(row_capacity=256, col_capacity=1024, edge_capacity=2048)
    for name in ("corporate_leadership", "revolution", "unicodelang"):
        g = jaxmatch.datasets.load(name).graph
        r, c, m, n = g.edges()
        a = sp.csr_array((np.ones(r.size), (r, c)), shape=(m, n))
        _check(a, dulmage_mendelsohn(_graph(a, caps)))


def test_empty_graphs():
    for shape in [(0, 0), (0, 4), (3, 0)]:
        d = dulmage_mendelsohn(_graph(sp.csr_array(shape)))
        assert d.row_perm.shape == (shape[0],) and d.col_perm.shape == (shape[1],)
        _check(sp.csr_array(shape), d)
    d = dulmage_mendelsohn(jaxmatch.from_scipy(sp.csr_array((0, 0))))     # its own (smallest) capacities
    assert int(d.n_blocks) == 0 and d.row_blocks.tolist() == [0] and d.col_blocks.tolist() == [0]
    assert int(d.structural_rank) == 0 and d.status_name == "converged"


def test_bad_input():
    a = CASES["wide"]
    with pytest.raises(jaxmatch.GraphInputError, match="BipartiteGraph"):
        dulmage_mendelsohn(a)
    with pytest.raises(jaxmatch.GraphInputError, match="BipartiteGraph"):
        dulmage_mendelsohn(jaxmatch.Graph.from_edges([0], [1], [1.0]))
    with pytest.raises(jaxmatch.GraphInputError, match="vmap"):
        dulmage_mendelsohn(jaxmatch.stack([_graph(a), _graph(a)]))
    with pytest.raises(jaxmatch.GraphInputError, match="max_iters"):
        dulmage_mendelsohn(_graph(a), max_iters=0)
    with pytest.raises(jaxmatch.GraphInputError, match="method"):
        dulmage_mendelsohn(_graph(a), method="hungarian")
    with pytest.raises(jaxmatch.GraphInputError, match="throw"):
        dulmage_mendelsohn(_graph(a), throw=1)


def test_max_iters_status():
    g = _graph(CASES["irreducible"])
    with pytest.raises(jaxmatch.SolverError) as e:
        dulmage_mendelsohn(g, max_iters=2)
    assert e.value.status == jaxmatch.Status.MAX_ITERS
    d = dulmage_mendelsohn(g, max_iters=2, throw=False)
    assert d.status_name == "hit max_iters" and int(d.stats["scc_steps"]) == 2
    assert int(dulmage_mendelsohn(g).stats["iterations"]) > 2


@pytest.mark.parametrize("reverse", [False, True])
def test_chain_of_cycles_takes_one_colouring_round(reverse):
    """8 two-cycles in a chain, ids rising (or falling) along it: the two labels find all 8 in one
    round (about 20 steps); a round per cycle would take at least 5 steps each (trim, 2 colour, 2 reach)."""
    a = sp.csr_array(sp.block_diag([_cycle(2)] * 8) + sp.eye_array(16, k=1))
    a = sp.csr_array(a[::-1][:, ::-1]) if reverse else a
    d = dulmage_mendelsohn(_graph(a))
    _check(a, d)
    assert int(d.n_blocks) == 8 and np.diff(d.row_blocks).tolist() == [2] * 8
    assert int(d.stats["scc_steps"]) <= 24


def _longest_path_levels(u, w, comp, n):
    """Plain reference: each node's component level, 1 + the largest level of a component with an arc
    into it, by Kahn's order on the condensation."""
    arcs = {(comp[x], comp[y]) for x, y in zip(u, w) if x < n and y < n and comp[x] < n and comp[y] < n
            and comp[x] != comp[y]}
    nodes = {c for c in comp if c < n}
    level, indeg = {c: 0 for c in nodes}, {c: 0 for c in nodes}
    for _, b in arcs:
        indeg[b] += 1
    ready = deque(c for c in nodes if indeg[c] == 0)
    while ready:
        a = ready.popleft()
        for x, b in arcs:
            if x == a:
                level[b] = max(level[b], level[a] + 1)
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
    return [level[c] if c < n else 0 for c in comp]


@pytest.mark.parametrize("seed, dag, frac, small", [(0, False, 0.8, False), (1, True, 0.8, False),
                                                    (2, True, 0.15, True)])
def test_levels_on_the_condensation_in_every_length_class(seed, dag, frac, small, monkeypatch):
    """The order loop on the condensation, with a ladder of small lengths (``ORDER_MIN`` lowered): the
    levels equal a plain longest-path reference in the longest length and in a shorter one."""
    from jaxmatch.bipartite import dulmage_mendelsohn as dm
    monkeypatch.setattr(dm, "ORDER_MIN", 2)
    rng = np.random.default_rng(seed)
    n, e = 80, 160
    u, w = rng.integers(0, n, e), rng.integers(0, n, e)
    keep = (u < w) & (rng.random(e) < (0.1 if small else 1.0)) if dag else rng.random(e) < 0.3
    u, w = np.where(keep, u, n), np.where(keep, w, n)      # n: no arc
    square = rng.random(n) < frac
    d = sp.csr_array((np.ones(int(keep.sum())), (u[keep], w[keep])), shape=(n, n))
    _, lab = connected_components(d, directed=True, connection="strong")
    root = np.array([np.flatnonzero(lab == lab[i]).min() for i in range(n)])
    comp = np.where(square & square[root], root, n)        # components inside the square nodes
    on = (u < n) & (w < n)
    on[on] &= (comp[u[on]] < n) & (comp[w[on]] < n)
    u, w = np.where(on, u, n), np.where(on, w, n)
    pairs = {(comp[x], comp[y]) for x, y in zip(u, w) if x < n and comp[x] != comp[y]}
    used = max(len(pairs), len(set(comp[comp < n])))
    sizes = dm._ladder(max(e, n), dm.ORDER_FACTOR)
    assert len(sizes) > 2 and (used <= sizes[1]) == small   # which length the loop runs in
    lv = jax.jit(dm.levels, static_argnums=(3, 4))(u.astype(np.int32), w.astype(np.int32), comp.astype(np.int32), n, 10 * n)
    assert np.asarray(lv.level).tolist() == _longest_path_levels(u, w, comp, n)
    assert not bool(lv.changed)


@pytest.mark.parametrize("seed", range(3))
def test_components_through_every_length_class(seed, monkeypatch):
    """The component loop with a ladder of small lengths (``ORDER_MIN`` lowered: 160, 40, 10, 2), the
    live arcs compacted as components are found: scipy's strongly connected components, each named by
    its least node."""
    from jaxmatch.bipartite import dulmage_mendelsohn as dm
    monkeypatch.setattr(dm, "ORDER_MIN", 2)
    rng = np.random.default_rng(seed)
    n, e = 40, 160
    u, w = rng.integers(0, n, e), rng.integers(0, n, e)
    keep = rng.random(e) < 0.5
    square = rng.random(n) < 0.9
    keep &= square[u] & square[w]
    d = sp.csr_array((np.ones(int(keep.sum())), (u[keep], w[keep])), shape=(n, n))
    _, lab = connected_components(d, directed=True, connection="strong")
    want = np.array([np.flatnonzero(lab == lab[i]).min() if square[i] else n for i in range(n)])
    u, w = np.where(keep, u, n).astype(np.int32), np.where(keep, w, n).astype(np.int32)
    sc = jax.jit(dm.components, static_argnums=(3,))(u, w, square, n, 10 * n * n)
    assert np.asarray(sc.comp).tolist() == want.tolist() and not np.asarray(sc.live).any()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 16), st.integers(0, 16), st.integers(0, 64), st.integers(0, 2**31 - 1))
def test_property_random_patterns(m, n, nnz, seed):
    a = _random(m, n, nnz if m and n else 0, seed)
    _check(a, dulmage_mendelsohn(_graph(a)))
