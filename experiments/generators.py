"""Reproducible generators for the graph classes of the jaxmatch papers.

Only numpy and scipy are used. Every generator takes a ``seed`` and draws from
``np.random.default_rng(seed)``, so the same arguments give the same arrays.
Graphs come back as ``scipy.sparse.csr_array`` with sorted indices and int8
ones as data; vertex ids are int32 wherever the sizes fit.

Everything is vectorised (no Python loop over vertices or edges), so graphs
with 2**24 vertices are made in minutes on a small CPU. Memory is dominated by
the int64 edge keys ``row * n + col`` that are sorted to merge duplicates: the
peak is about 18 bytes per stored (directed) entry of the result; ``rmat`` and
``power_law`` draw their edges in chunks of ``_CHUNK`` and merge them (rmat
scale 24: 268M edges drawn, 521M entries, 9 GB peak, 90 s on 2 cores).

Classes (see ``shared/BENCHMARKS.md``): Delaunay triangulations (DIMACS10
delaunay_nXX), Kronecker/RMAT (Graph500 kron_g500-lognXX and the MS-BFS-Graft
RMAT), random geometric graphs (rgg_n_2_XX), road-like grids, power-law
graphs, random row/column permutations (RCP), DIMACS max-flow families
(Washington RLG, genrmf) and the stable-marriage easy/hard sets.
"""

import numpy as np
import scipy.sparse as sp
from scipy.spatial import Delaunay, cKDTree

__all__ = [
    "delaunay",
    "rmat",
    "rmat_hard",
    "random_geometric",
    "road_grid",
    "power_law",
    "planted_partition_edges",
    "bipartite_view",
    "permute",
    "permute_symmetric",
    "random_bipartite",
    "washington_rlg",
    "genrmf",
    "stable_easy",
    "stable_hard",
]

_CHUNK = 1 << 22  # edges generated per chunk by rmat / power_law / random_bipartite


# --------------------------------------------------------------------------
# helpers


def _unique(keys):
    """Sorted unique values of a temporary int64 array, sorted in place (np.unique is slower)."""
    keys.sort()
    if keys.size:
        keep = np.empty(keys.size, dtype=bool)
        keep[0] = True
        np.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
    return keys


def _csr_from_keys(keys, shape):
    """CSR 0/1 matrix from sorted unique int64 keys ``row * shape[1] + col`` (overwrites keys)."""
    n_rows, n_cols = shape
    idx_dtype = np.int32 if max(n_rows, n_cols, keys.size) < 2**31 else np.int64
    indptr = np.searchsorted(keys, np.arange(n_rows + 1, dtype=np.int64) * n_cols)
    np.remainder(keys, n_cols, out=keys)
    indices = keys.astype(idx_dtype)
    data = np.ones(keys.size, dtype=np.int8)
    return sp.csr_array((data, indices, indptr.astype(idx_dtype)), shape=shape)


def _undirected_keys(u, v, n):
    """Unique keys ``lo * n + hi`` (lo < hi) of the edges u-v, self loops dropped."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    keep = u != v
    u, v = u[keep], v[keep]
    return _unique(np.minimum(u, v) * n + np.maximum(u, v))


def _symmetric_from_keys(keys, n):
    """Symmetric CSR adjacency from unique undirected keys ``lo * n + hi``."""
    lo = keys // n
    hi = lo * n
    np.subtract(keys, hi, out=hi)
    np.multiply(hi, n, out=hi)
    hi += lo  # now the transposed keys hi * n + lo
    del lo
    both = np.concatenate([keys, hi])
    del hi
    both.sort()
    return _csr_from_keys(both, (n, n))


def _symmetric(u, v, n):
    """Symmetric 0/1 adjacency of the undirected edges u-v (loops and duplicates dropped)."""
    return _symmetric_from_keys(_undirected_keys(u, v, n), n)


def _chunked_symmetric(sample, m, n, rng, chunk=_CHUNK):
    """Symmetric graph from ``m`` edges drawn by ``sample(rng, k) -> (u, v)`` in chunks."""
    parts = []
    for start in range(0, m, chunk):
        u, v = sample(rng, min(chunk, m - start))
        parts.append(_undirected_keys(u, v, n))
    keys = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    del parts
    keys = _unique(keys)
    return _symmetric_from_keys(keys, n)


def _has_repeat(rows):
    """Per row of a 2-D int array: does it hold a value twice? (sorted in blocks to bound memory)"""
    out = np.zeros(rows.shape[0], dtype=bool)
    for i in range(0, rows.shape[0], 1 << 20):
        s = np.sort(rows[i:i + (1 << 20)], axis=1)
        out[i:i + (1 << 20)] = (s[:, 1:] == s[:, :-1]).any(axis=1)
    return out


def _distinct_rows(rng, n_rows, k, high):
    """[n_rows, k] int32 array, each row k distinct uniform values of [0, high) in random order.

    Rejection sampling: rows with a repeat are drawn again (rare when k*k << high),
    which keeps every row a uniform random ordered sample without replacement.
    """
    if k * k > high:  # small universe: random permutations instead
        return np.argsort(rng.random((n_rows, high)), axis=1)[:, :k].astype(np.int32)
    out = rng.integers(0, high, size=(n_rows, k), dtype=np.int32)
    bad = np.nonzero(_has_repeat(out))[0]
    while bad.size:
        out[bad] = rng.integers(0, high, size=(bad.size, k), dtype=np.int32)
        bad = bad[_has_repeat(out[bad])]
    return out


# --------------------------------------------------------------------------
# undirected graphs


def delaunay(n, seed=0):
    """Delaunay triangulation of ``n`` uniform random points in the unit square.

    Symmetric 0/1 adjacency without self loops, like DIMACS10 ``delaunay_nXX``
    (average degree just under 6). Points are sorted by a 1024 x 1024 cell grid
    before Qhull (faster, same triangulation), and vertex ``i`` is the ``i``-th
    point drawn. Cost: Qhull, about O(n log n); ~15 s for n = 2**20, ~200 s
    and 13 GB peak for n = 2**24 on 2 cores.

    >>> A = delaunay(1000, seed=1)
    >>> A.shape, (A != A.T).nnz, bool(A.diagonal().any())
    ((1000, 1000), 0, False)
    """
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    g = 1024
    order = np.lexsort(((pts[:, 1] * g).astype(np.int64), (pts[:, 0] * g).astype(np.int64)))
    # Q5 skips outer-plane bookkeeping: much faster, same result on random points
    tri = order[Delaunay(pts[order], qhull_options="Qbb Qc Qz Q12 Q5").simplices]
    u = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    v = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    return _symmetric(u, v, n)


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0):
    """Kronecker / RMAT graph with ``2**scale`` vertices (Graph500 generator).

    ``edge_factor * 2**scale`` edges are drawn; each picks one quadrant of the
    adjacency matrix per bit with probabilities (a, b, c, d = 1 - a - b - c),
    vectorised over all edges (the only loop is over the ``scale`` bits,
    inside chunks of ``_CHUNK`` edges). Vertex labels are then shuffled by one
    random permutation, as the Graph500 reference does. The result is made
    symmetric, duplicates merged to 1 and self loops removed. The defaults are
    Graph500's (kron_g500-lognXX). Cost: O(m * scale) random numbers plus a
    sort of the m edge keys; peak memory about 36 bytes per generated edge.

    >>> A = rmat(10, seed=3)
    >>> A.shape, (A != A.T).nnz
    ((1024, 1024), 0)
    """
    n = 1 << scale
    m = edge_factor * n
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise ValueError("a, b, c and 1 - a - b - c must be non-negative")
    ab, abc = a + b, a + b + c
    rng = np.random.default_rng(seed)
    relabel = rng.permutation(n)

    idx = np.int32 if scale < 31 else np.int64

    def sample(rng, k):
        u = np.zeros(k, dtype=idx)
        v = np.zeros(k, dtype=idx)
        for _ in range(scale):
            # one draw picks the quadrant: [0,a) -> (0,0), [a,a+b) -> (0,1), [a+b,a+b+c) -> (1,0), else (1,1)
            r = rng.random(k, dtype=np.float32)
            ii = r >= ab
            jj = (r >= a) ^ ii
            jj |= r >= abc
            u = (u << 1) | ii
            v = (v << 1) | jj
        return relabel[u], relabel[v]

    return _chunked_symmetric(sample, m, n, rng)


def rmat_hard(scale, edge_factor=16, seed=0):
    """RMAT with (a, b, c, d) = (.45, .15, .15, .25), the MS-BFS-Graft paper's RMAT.

    Same construction and cost as :func:`rmat`.

    >>> rmat_hard(8).shape
    (256, 256)
    """
    return rmat(scale, edge_factor, 0.45, 0.15, 0.15, seed=seed)


def random_geometric(n, radius=None, seed=0):
    """Random geometric graph: ``n`` uniform points in the unit square, an edge when distance < radius.

    The default radius ``0.55 * sqrt(ln n / n)`` is DIMACS10's ``rgg_n_2_XX``
    (expected average degree about ``0.95 ln n``, fewer near the border).
    Cost: a k-d tree, O(n log n + m); ~1 s for n = 2**20.

    >>> A = random_geometric(2000, seed=0)
    >>> A.shape, (A != A.T).nnz
    ((2000, 2000), 0)
    """
    if radius is None:
        radius = 0.55 * np.sqrt(np.log(n) / n) if n > 1 else 0.0
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    pairs = cKDTree(pts).query_pairs(radius, output_type="ndarray")
    return _symmetric(pairs[:, 0], pairs[:, 1], n)


def road_grid(rows, cols, p_delete=0.1, seed=0):
    """Road-like planar graph: a ``rows`` x ``cols`` 4-neighbour grid, each edge deleted with prob. ``p_delete``.

    Vertex ``r * cols + c`` is grid point (r, c). Low degree (<= 4), large
    diameter, planar: the shape of road networks. Cost: O(rows * cols).

    >>> road_grid(3, 4, p_delete=0.0).nnz  # 2 * (3*3 + 2*4) edges
    34
    """
    rng = np.random.default_rng(seed)
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    keep = rng.random(u.size) >= p_delete
    return _symmetric(u[keep], v[keep], rows * cols)


def lattice3d(side, p_delete=0.1, seed=0):
    """A ``side``^3 6-neighbour cubic lattice, each edge deleted with prob. ``p_delete``: a mesh
    class none of the solvers' rules was tuned on (degree <= 6, diameter 3 * side). Cost: O(side^3).

    >>> lattice3d(3, p_delete=0.0).nnz  # 2 * 3 * (2 * 3 * 3) edges
    108
    """
    rng = np.random.default_rng(seed)
    ids = np.arange(side ** 3, dtype=np.int64).reshape(side, side, side)
    u = np.concatenate([ids[:-1].ravel(), ids[:, :-1].ravel(), ids[:, :, :-1].ravel()])
    v = np.concatenate([ids[1:].ravel(), ids[:, 1:].ravel(), ids[:, :, 1:].ravel()])
    keep = rng.random(u.size) >= p_delete
    return _symmetric(u[keep], v[keep], side ** 3)


def power_law(n, avg_degree=16, exponent=2.1, seed=0):
    """Power-law (web / social-like) graph from a Chung-Lu expected-degree model.

    Vertex weights follow ``w_i ~ i**(-1/(exponent-1))`` (degree distribution
    with tail exponent ``exponent``), capped at ``sqrt(sum w)`` as Chung-Lu
    requires and rescaled to mean ``avg_degree``, then given to the vertices
    in random order. ``n * avg_degree / 2`` edges are drawn, both ends
    independently with probability proportional to ``w`` (drawn as multinomial
    counts per vertex, then paired at random); the graph is made
    symmetric, with self loops dropped and duplicates merged (so the final
    average degree is somewhat below ``avg_degree``, mostly at the hubs).
    Cost: O(n + m) for the sampling plus a sort of the m edge keys.

    >>> A = power_law(1000, avg_degree=8, seed=2)
    >>> A.shape, (A != A.T).nnz
    ((1000, 1000), 0)
    """
    rng = np.random.default_rng(seed)
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    total = float(n) * avg_degree
    cap = np.sqrt(total)
    for _ in range(50):  # scale to the target sum, clip at the cap, repeat
        w *= total / w.sum()
        if w[0] <= cap * (1 + 1e-9):
            break
        np.minimum(w, cap, out=w)
    p = rng.permutation(w)
    p /= p.sum()
    m = int(round(total / 2))

    def sample(rng, k):
        # k i.i.d. endpoints ~ p, as per-vertex multinomial counts; shuffling one side pairs them at random
        u = np.repeat(np.arange(n), rng.multinomial(k, p))
        v = np.repeat(np.arange(n), rng.multinomial(k, p))
        rng.shuffle(v)
        return u, v

    return _chunked_symmetric(sample, m, n, rng, chunk=max(_CHUNK, 2 * n))


def planted_partition_edges(n, m, groups, p_in=0.8, seed=0, chunk=1 << 26):
    """Edge arrays ``(u, v)`` (int64, length ``m``) of a planted-partition graph, without a matrix.

    Vertex i belongs to group ``i // ceil(n / groups)`` (the last group holds
    the rest). Each edge takes a uniform end point u; with probability ``p_in``
    the other end is uniform in u's group, otherwise uniform over all vertices.
    (Until session 46 the last, partial group's inner ends past ``n - 1`` were
    clamped onto vertex ``n - 1``: a hub of 500 distinct neighbours at 5x10^7
    vertices, enough to switch Louvain's level to hash classes; RESULTS.) Repeated edges and
    self-loops are left in (the containers' ``from_edges`` sum repeats and the
    solvers ignore loops). Meant for graphs too large for a sorted symmetric
    matrix on the host (10^9 edges in about a minute on one core, 16 bytes
    per edge): every step is O(m), drawn ``chunk`` edges at a time. The planted
    groups have modularity about ``p_in - 1 / groups``.

    >>> u, v = planted_partition_edges(1000, 5000, groups=10, p_in=0.8, seed=1)
    >>> bool(u.max() < 1000 and v.max() < 1000), round(float(np.mean(u // 100 == v // 100)), 1)
    (True, 0.8)
    """
    rng = np.random.default_rng(seed)
    size = -(-n // groups)
    u = np.empty(m, np.int64)
    v = np.empty(m, np.int64)
    for lo in range(0, m, chunk):
        k = min(chunk, m - lo)
        a = rng.integers(0, n, k)
        inside = rng.random(k) < p_in
        start = (a // size) * size
        near = start + rng.integers(0, np.minimum(size, n - start))
        u[lo:lo + k] = a
        v[lo:lo + k] = np.where(inside, near, rng.integers(0, n, k))
    return u, v


# --------------------------------------------------------------------------
# bipartite views and permutations


def bipartite_view(A):
    """Bipartite graph of a sparse matrix: rows x columns, 1 where ``A`` stores an entry.

    Returns an int8 0/1 ``csr_array`` of ``A.shape`` (rectangular allowed),
    duplicates merged; explicitly stored zeros count as entries. This is how
    the matching papers read a matrix as a bipartite graph. Cost: O(nnz log nnz).

    >>> import scipy.sparse as sp
    >>> bipartite_view(sp.csr_array([[0, 2.5], [3, 0], [1, 1]])).toarray().tolist()
    [[0, 1], [1, 0], [1, 1]]
    """
    coo = sp.coo_array(A)
    n_rows, n_cols = coo.shape
    keys = _unique(coo.row.astype(np.int64) * n_cols + coo.col)
    return _csr_from_keys(keys, (n_rows, n_cols))


def _permuted(A, p_rows, p_cols):
    """``B[i, j] = A[p_rows[i], p_cols[j]]`` as a csr_array with sorted indices."""
    coo = sp.coo_array(A)
    n_rows, n_cols = coo.shape
    inv_r = np.empty(n_rows, dtype=np.int64)
    inv_r[p_rows] = np.arange(n_rows)
    inv_c = np.empty(n_cols, dtype=np.int64)
    inv_c[p_cols] = np.arange(n_cols)
    r, c = inv_r[coo.row], inv_c[coo.col]
    order = np.argsort(r * n_cols + c)
    r, c, data = r[order], c[order], coo.data[order]
    idx_dtype = np.int32 if max(n_rows, n_cols, r.size) < 2**31 else np.int64
    indptr = np.zeros(n_rows + 1, dtype=idx_dtype)
    np.cumsum(np.bincount(r, minlength=n_rows), out=indptr[1:])
    return sp.csr_array((data, c.astype(idx_dtype), indptr), shape=(n_rows, n_cols))


def permute(A, seed=0, rows=True, cols=True):
    """Random row and column permutation ("RCP") of a matrix, independent for rows and columns.

    ``B[i, j] = A[p[i], q[j]]`` for random permutations p (rows, identity when
    ``rows=False``) and q (columns, identity when ``cols=False``). Applied to a
    graph read as a bipartite matrix this is the papers' RCP set, harder for
    augmenting-path codes. Values are kept. Cost: O(nnz log nnz).

    >>> B = permute(delaunay(100), seed=1)
    >>> B.shape, B.nnz == delaunay(100).nnz
    ((100, 100), True)
    """
    rng = np.random.default_rng(seed)
    n_rows, n_cols = A.shape
    p = rng.permutation(n_rows) if rows else np.arange(n_rows)
    q = rng.permutation(n_cols) if cols else np.arange(n_cols)
    return _permuted(A, p, q)


def permute_symmetric(A, seed=0):
    """Relabel the vertices of a square matrix by one random permutation: ``B = P A P^T``.

    Keeps an undirected graph undirected. Cost: O(nnz log nnz).

    >>> B = permute_symmetric(road_grid(4, 4), seed=5)
    >>> (B != B.T).nnz
    0
    """
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"permute_symmetric needs a square matrix, got shape {A.shape}")
    p = np.random.default_rng(seed).permutation(A.shape[0])
    return _permuted(A, p, p)


def random_bipartite(n_rows, n_cols, avg_degree, seed=0):
    """Uniform random (Erdos-Renyi) bipartite graph as an ``n_rows`` x ``n_cols`` 0/1 biadjacency.

    ``round(n_rows * avg_degree)`` (row, column) pairs are drawn uniformly with
    replacement and duplicates merged, so each row has about ``avg_degree``
    entries (Poisson). Cost: O(m log m).

    >>> random_bipartite(50, 80, 3).shape
    (50, 80)
    """
    rng = np.random.default_rng(seed)
    m = int(round(n_rows * avg_degree))
    parts = []
    for start in range(0, m, _CHUNK):
        k = min(_CHUNK, m - start)
        r = rng.integers(0, n_rows, size=k, dtype=np.int64)
        c = rng.integers(0, n_cols, size=k, dtype=np.int64)
        parts.append(_unique(r * n_cols + c))
    keys = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    del parts
    return _csr_from_keys(_unique(keys), (n_rows, n_cols))


# --------------------------------------------------------------------------
# DIMACS max-flow families: (tail, head, cap, source, sink, n), 0-based


def washington_rlg(rows, cols, max_cap=10000, seed=0):
    """Washington random level graph (DIMACS max-flow challenge, "RLG").

    Construction used here: ``n = rows * cols + 2`` nodes; node 0 is the
    source, node ``n - 1`` the sink, and node ``1 + l * rows + i`` is node i
    of level l (``cols`` levels of ``rows`` nodes each). The source has an
    arc to every node of level 0, every node of the last level has an arc to
    the sink, and every node of level l < cols - 1 has arcs to
    ``min(3, rows)`` distinct uniformly random nodes of level l + 1. Level
    arcs get capacities uniform in [1, max_cap]; source and sink arcs get
    ``3 * max_cap`` so that the cut lies inside the levels. Arc count:
    ``2 * rows + 3 * rows * (cols - 1)`` (for rows = cols = 512: 262,146 nodes
    and 785,920 arcs, the WBPR paper's Washington-RLG instance). Cost: O(arcs).

    Returns ``(tail, head, cap, source, sink, n)``: int32 arrays and ints.

    >>> tail, head, cap, s, t, n = washington_rlg(4, 5)
    >>> n, tail.size, s, t
    (22, 56, 0, 21)
    """
    if 3 * max_cap >= 2**31:
        raise ValueError("3 * max_cap does not fit in int32")
    rng = np.random.default_rng(seed)
    n = rows * cols + 2
    s, t = 0, n - 1
    deg = min(3, rows)
    first = 1 + np.arange(rows)
    last = 1 + (cols - 1) * rows + np.arange(rows)
    inner = 1 + np.arange(rows * (cols - 1))  # nodes of levels 0..cols-2
    pick = _distinct_rows(rng, inner.size, deg, rows)  # [rows*(cols-1), deg]
    nxt_level_start = 1 + ((inner - 1) // rows + 1) * rows
    tail = np.concatenate([np.full(rows, s), np.repeat(inner, deg), last])
    head = np.concatenate([first, (nxt_level_start[:, None] + pick).ravel(), np.full(rows, t)])
    cap = np.concatenate([
        np.full(rows, 3 * max_cap),
        rng.integers(1, max_cap, size=inner.size * deg, endpoint=True),
        np.full(rows, 3 * max_cap),
    ])
    return tail.astype(np.int32), head.astype(np.int32), cap.astype(np.int32), s, t, n


def dimacs_mesh(rows, cols, max_cap=1_000_000, seed=0):
    """A DIMACS "mesh" max-flow network, as the challenge's ``m10.max`` / ``m30.max``.

    ``n = rows * cols + 2`` nodes: node 0 is the source, node ``n - 1`` the
    sink, node ``1 + c * rows + r`` is row r of column c. Every node of
    column c < cols - 1 has arcs to rows r - 1, r and r + 1 (cyclically) of
    column c + 1, capacities uniform in [0, max_cap]; the source has an arc
    to every node of column 0 and every node of the last column one to the
    sink, each of capacity ``3 * max_cap``. Arc count: ``3 * rows * (cols -
    1) + 2 * rows`` (10 x 10: 102 nodes and 290 arcs, as m10.max; 50 x 50:
    2,502 nodes and 7,450 arcs). Cost: O(arcs).

    Returns ``(tail, head, cap, source, sink, n)``: int32 arrays and ints.

    >>> tail, head, cap, s, t, n = dimacs_mesh(10, 10)
    >>> n, tail.size, s, t
    (102, 290, 0, 101)
    """
    if 3 * max_cap >= 2**31:
        raise ValueError("3 * max_cap does not fit in int32")
    rng = np.random.default_rng(seed)
    n = rows * cols + 2
    s, t = 0, n - 1
    c, r = np.divmod(np.arange(rows * (cols - 1)), rows)
    inner = 1 + c * rows + r
    nxt = np.stack([(r - 1) % rows, r, (r + 1) % rows], axis=1) + (1 + (c + 1) * rows)[:, None]
    tail = np.concatenate([np.full(rows, s), np.repeat(inner, 3), 1 + (cols - 1) * rows + np.arange(rows)])
    head = np.concatenate([1 + np.arange(rows), nxt.ravel(), np.full(rows, t)])
    cap = np.concatenate([np.full(rows, 3 * max_cap), rng.integers(0, max_cap, size=inner.size * 3, endpoint=True),
                          np.full(rows, 3 * max_cap)])
    return tail.astype(np.int32), head.astype(np.int32), cap.astype(np.int32), s, t, n


def genrmf(a, b, c1=1, c2=100, seed=0):
    """Goldfarb-Grigoriadis ``genrmf`` max-flow instance (DIMACS max-flow challenge).

    ``b`` frames, each an ``a`` x ``a`` grid; node ``f * a * a + x * a + y`` is
    (x, y) of frame f. Inside a frame every node has arcs to its (up to 4)
    grid neighbours, capacity ``c2 * a * a``. Between frames f and f + 1,
    node i of frame f has one arc to node ``perm_f[i]`` of frame f + 1 (an
    independent random permutation per frame pair), with capacity uniform
    in [c1, c2]. Source: node 0 (first node of the first frame); sink:
    node ``n - 1`` (last node of the last frame). Arc count:
    ``4 * a * (a - 1) * b + a * a * (b - 1)`` (a = b = 128 gives the WBPR
    paper's 2,097,152 nodes and 10,403,840 arcs). Cost: O(arcs).

    Returns ``(tail, head, cap, source, sink, n)``: int32 arrays and ints.

    >>> tail, head, cap, s, t, n = genrmf(3, 4)
    >>> n, tail.size, s, t
    (36, 123, 0, 35)
    """
    rng = np.random.default_rng(seed)
    aa = a * a
    n = aa * b
    if c2 * aa >= 2**31:
        raise ValueError("in-frame capacity c2 * a * a does not fit in int32")
    ids = np.arange(n, dtype=np.int64).reshape(b, a, a)
    pu = [ids[:, :, :-1], ids[:, :-1, :]]  # right and down neighbours
    pv = [ids[:, :, 1:], ids[:, 1:, :]]
    u = np.concatenate([x.ravel() for x in pu])
    v = np.concatenate([x.ravel() for x in pv])
    frame_u = np.concatenate([u, v])  # both directions
    frame_v = np.concatenate([v, u])
    perm = np.argsort(rng.random((b - 1, aa)), axis=1)  # one permutation per frame pair
    between_u = np.arange(aa * (b - 1), dtype=np.int64)
    between_v = (np.arange(1, b)[:, None] * aa + perm).ravel()
    tail = np.concatenate([frame_u, between_u])
    head = np.concatenate([frame_v, between_v])
    cap = np.concatenate([
        np.full(frame_u.size, c2 * aa),
        rng.integers(c1, c2, size=between_u.size, endpoint=True),
    ])
    return tail.astype(np.int32), head.astype(np.int32), cap.astype(np.int32), 0, n - 1, n


# --------------------------------------------------------------------------
# stable marriage (thesis Paper IV): easy and hard sets


def stable_easy(n, eps=None, seed=0):
    """Easy stable-marriage (SMI) instance of the thesis, Paper IV.

    Each man m gets ``eps_m`` uniform in [0, 1] (or ``eps`` for all men when
    given) and ranks ``k_m = max(1, min(n, round((1 + eps_m) ln n)))``
    distinct uniformly random women in random order. Each woman ranks exactly
    the men who ranked her, in random order, so the lists are mutual.
    Returns ``(men_prefs, women_prefs)``: int32 arrays ``[n, L_men]`` and
    ``[n, L_women]``, most preferred first, padded with -1. Cost:
    O(n ln n) entries plus one sort of them (n = 2**24: ~45 s, 10 GB peak).

    >>> men, women = stable_easy(100, seed=0)
    >>> men.shape[0], women.shape[0], int((men >= 0).sum()) == int((women >= 0).sum())
    (100, 100, True)
    """
    rng = np.random.default_rng(seed)
    ln = np.log(n) if n > 1 else 0.0
    e = rng.random(n) if eps is None else np.full(n, float(eps))
    k = np.clip(np.rint((1.0 + e) * ln).astype(np.int64), 1, n)
    L = int(k.max()) if n else 0
    men = _distinct_rows(rng, n, L, n)
    men[np.arange(L)[None, :] >= k[:, None]] = -1

    # Women's lists: sort the (woman, random, man) triples packed in one int64
    # key, so each woman gets her suitors in random order (ties of the random
    # part, rare, fall back to man id). Built and unpacked in blocks of 2**20
    # to keep temporaries small.
    mbits = max(1, int(n - 1).bit_length())
    rbits = 63 - 2 * mbits
    if rbits < 8:
        raise ValueError(f"stable_easy supports n <= 2**27, got {n}")
    block = 1 << 20
    counts = np.zeros(n, dtype=np.int64)
    keys = np.empty(int(k.sum()), dtype=np.int64)
    off = 0
    for i in range(0, n, block):
        mb = men[i:i + block]
        w = mb[mb >= 0].astype(np.int64)
        counts += np.bincount(w, minlength=n)
        m = np.repeat(np.arange(i, i + mb.shape[0], dtype=np.int64), k[i:i + block])
        r = rng.integers(0, 1 << rbits, size=w.size, dtype=np.int64)
        keys[off:off + w.size] = (w << (rbits + mbits)) | (r << mbits) | m
        off += w.size
    keys.sort()
    start = np.cumsum(counts) - counts
    women = np.full((n, int(counts.max()) if n else 0), -1, dtype=np.int32)
    for i in range(0, keys.size, block):
        kb = keys[i:i + block]
        w = kb >> (rbits + mbits)
        women[w, np.arange(i, i + kb.size) - start[w]] = kb & ((1 << mbits) - 1)
    return men, women


def stable_hard(n, seed=None):
    """Hard stable-marriage instance of the thesis, Paper IV: identical complete rankings.

    Every man ranks all women in the same order and every woman ranks all men
    in the same order: ``0, 1, ..., n-1`` when ``seed`` is None, otherwise one
    shared random order for the men and one for the women (the thesis's
    version). Gale-Shapley then needs n(n+1)/2 proposals. Returns
    ``(men_prefs, women_prefs)``, int32 ``[n, n]`` read-only broadcast views of
    one length-n row each (O(n) memory; ``np.array(x)`` materialises them).

    >>> men, women = stable_hard(3)
    >>> men.tolist()
    [[0, 1, 2], [0, 1, 2], [0, 1, 2]]
    """
    if seed is None:
        rw = rm = np.arange(n, dtype=np.int32)
    else:
        rng = np.random.default_rng(seed)
        rw = rng.permutation(n).astype(np.int32)
        rm = rng.permutation(n).astype(np.int32)
    return np.broadcast_to(rw, (n, n)), np.broadcast_to(rm, (n, n))
