"""Graphs sharded over several devices (issue 22, item 3): jaxmatch.shard, ShardedGraph, and Suitor with
shard_map. The multi-device runs use 4 host CPU devices in a subprocess (the device count is fixed when JAX
starts); the checks in this process use a one-device mesh."""
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.sharding import Mesh

import jaxmatch
from jaxmatch import GraphInputError, ShardedGraph
from jaxmatch.certify import check_greedy_dominance

SHARDED = r"""
import os
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
import jax
import numpy as np
from jax.sharding import Mesh
import jaxmatch
from jaxmatch.certify import check_greedy_dominance

assert len(jax.local_devices()) == 4, jax.local_devices()
rng = np.random.default_rng(7)
line = Mesh(np.array(jax.local_devices()), ("d",))
square = Mesh(np.array(jax.local_devices()).reshape(2, 2), ("x", "y"))
checked = 0
for trial in range(24):
    # one shared capacity (vertex 256, entries 512 per device): the solver compiles once per mesh
    n = int(rng.integers(1, 200))
    m = int(rng.integers(0, 2 * n + 1))
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)          # self-loops and repeated edges included
    kind = trial % 3
    w = (rng.integers(0, 4, m) if kind == 0 else rng.random(m) if kind == 1 else np.ones(m)).astype(np.float32)
    g = jaxmatch.Graph.from_edges(u, v, w, n=n, vertex_capacity=256, entry_capacity=1024)  # solo: one compile
    solo = jaxmatch.suitor(g)
    want = jaxmatch.greedy_matching(g)
    mesh, axis = (line, None) if trial % 4 else (square, "y")
    caps = dict(vertex_capacity=256, entry_capacity=512)
    sg = jaxmatch.ShardedGraph.from_edges(u, v, w, n=n, mesh=mesh, axis=axis, **caps) if trial % 2 \
        else jaxmatch.shard(g, mesh, axis, **caps)
    assert sg.shards == (4 if mesh is line else 2) and (sg.vertex_cap, sg.entry_cap) == (256, 512)
    got = jaxmatch.suitor(sg)
    assert got.status_name == "converged"
    mate = np.asarray(got.mate)
    assert mate.shape == (n,)
    assert np.array_equal(mate, np.asarray(solo.mate)), (trial, mate, np.asarray(solo.mate))
    assert np.array_equal(mate, np.asarray(want)), trial
    assert np.isclose(float(got.weight), float(solo.weight), rtol=1e-5), (float(got.weight), float(solo.weight))
    assert int(got.cardinality) == int(solo.cardinality)
    check_greedy_dominance(g, mate)
    checked += 1
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
from jaxmatch.certify import check_maximum_matching
bottom_up = grafts = 0
for trial in range(12):
    nr, nc = int(rng.integers(1, 120)), int(rng.integers(1, 120))
    m = int(rng.integers(0, 3 * max(nr, nc)))
    r, c = rng.integers(0, nr, m), rng.integers(0, nc, m)
    b = jaxmatch.BipartiteGraph.from_edges(r, c, nr, nc, row_capacity=128, col_capacity=128, edge_capacity=512)
    want = int(np.sum(maximum_bipartite_matching(csr_matrix((np.ones(m), (r, c)), shape=(nr, nc)),
                                                 perm_type="column") >= 0))
    mesh, axis = (line, None) if trial % 4 else (square, "x")
    caps = dict(row_capacity=128, col_capacity=128, entry_capacity=512)
    sb = jaxmatch.shard(b, mesh, axis, **caps) if trial % 2 else \
        jaxmatch.ShardedBipartiteGraph.from_edges(r, c, nr, nc, mesh=mesh, axis=axis, **caps)
    method = ("apfb", "apsb", "graft")[trial % 3]
    opts = dict(graft=trial % 2 == 0, direction_optimizing=trial % 4 != 2) if method == "graft" else \
        dict(bfs=("gpubfs_wr", "gpubfs")[trial % 3 == 0])
    got = jaxmatch.maximum_matching(sb, method=method, **opts)
    solo = jaxmatch.maximum_matching(b, method=method, init=None, **opts)
    assert got.status_name == "converged" and int(got.cardinality) == want, (trial, int(got.cardinality), want)
    assert np.array_equal(np.asarray(got.row_mate), np.asarray(solo.row_mate)), trial
    assert {k: int(v) for k, v in got.stats.items()} == {k: int(v) for k, v in solo.stats.items()}, trial
    check_maximum_matching(b, np.asarray(got.row_mate), np.asarray(got.col_mate))
    if method == "graft":        # the sharded bottom-up levels and graft steps ran, not only top-down
        bottom_up += int(got.stats["bottom_up_levels"])
        grafts += int(got.stats["grafts"])
    checked += 1
assert bottom_up > 0 and grafts > 0, (bottom_up, grafts)
from jaxmatch.certify import check_modularity, check_partition
for name in ("karate", "dolphins", "lesmis"):       # one shared capacity: one compilation
    g = jaxmatch.datasets.load(name).graph
    got = jaxmatch.louvain(jaxmatch.shard(g, line, vertex_capacity=128, entry_capacity=512))
    labels = np.asarray(got.labels)
    check_partition(g, labels)
    check_modularity(g, labels, float(got.modularity), rtol=1e-5)
    solo = jaxmatch.louvain(g.with_capacity(vertex_capacity=128, entry_capacity=512))  # one device, one compile
    assert labels.tolist() == np.asarray(solo.labels).tolist(), name        # the one-device solver's partition
    assert abs(float(got.modularity) - float(solo.modularity)) <= 1e-5, (name, got.modularity, solo.modularity)
    assert got.levels.shape == (got.stats["levels"], int(g.n))
    check_partition(g, np.asarray(got.levels[-1]))        # the last level; labels add the refinement
    assert got.status_name == "converged"
    checked += 1
# on a mesh without the default device the coarse graph, the levels and the answer stay on the mesh's
# first device, with the same answer as on the default device
last = Mesh(np.array(jax.local_devices()[3:]), ("d",))
one_device = Mesh(np.array(jax.local_devices()[:1]), ("d",))
g = jaxmatch.datasets.load("karate").graph
got = jaxmatch.louvain(jaxmatch.shard(g, last, vertex_capacity=128, entry_capacity=512))
one = jaxmatch.louvain(jaxmatch.shard(g, one_device, vertex_capacity=128, entry_capacity=512))
assert got.labels.devices() == got.levels.devices() == {jax.local_devices()[3]}, got.labels.devices()
assert np.array_equal(np.asarray(got.labels), np.asarray(one.labels))
assert np.array_equal(np.asarray(got.levels), np.asarray(one.levels))
checked += 1
# a coarse graph too large for one device (here by Config.one_device_entries) stays on the mesh, split
# by coarse source ranges, entry for entry the ShardedGraph of the communities' edges; the capacities
# of the bundled graphs above (one compilation of level one and of the one-device solver)
import jax.numpy as jnp
from jaxmatch.community import sharded as shl
from jaxmatch.community.config import Config
n, m = 120, 250
u, v = rng.integers(0, n, m), rng.integers(0, n, m)
w = rng.random(m).astype(np.float32)
caps = dict(vertex_capacity=128, entry_capacity=512)
sg = jaxmatch.ShardedGraph.from_edges(u, v, w, n=n, mesh=line, **caps)
comm, *_, to_coarse, n_coarse, pcs, pcd, pw, count = shl.level_one(sg, jnp.float32(1), jnp.float32(0),
                                                                   jnp.float32(0), max_iters=100)
got, dense = shl.coarse_sharded(sg, to_coarse, n_coarse, pcs, pcd, pw, count, n)
ids, want_dense = np.unique(np.asarray(comm)[:n], return_inverse=True)
assert np.array_equal(dense, want_dense) and int(got.n) == ids.size < n
want = jaxmatch.ShardedGraph.from_edges(want_dense[u], want_dense[v], w, n=ids.size, mesh=line,
                                        vertex_capacity=got.vertex_cap)
for d in range(4):
    k = int(np.sum(np.asarray(want.src)[d] < want.vertex_cap))
    for a in ("src", "dst"):
        mine = np.asarray(getattr(got, a))[d]
        assert np.array_equal(mine[:k], np.asarray(getattr(want, a))[d, :k]) and np.all(mine[k:] == got.vertex_cap)
    np.testing.assert_allclose(np.asarray(got.weights)[d, :k], np.asarray(want.weights)[d, :k], rtol=1e-5)
    assert np.all(np.asarray(got.weights)[d, k:] == 0)
g = jaxmatch.Graph.from_edges(u, v, w, n=n, **caps)
from jaxmatch.graph import next_pow2
big = next_pow2(int(np.sum(np.asarray(count)))) - 1     # level one's coarse graph stays on the mesh
solo = jaxmatch.louvain(g)
# level one's coarse graph on the mesh, then one device; and every level on the mesh: the levels end
# where the one-device solver's end (a coarse level that merges nothing or gains under threshold is the
# last), not recorded past it
for entries in (big, 0):
    res = jaxmatch.louvain(sg, config=Config(one_device_entries=entries))
    check_partition(g, np.asarray(res.labels))
    check_modularity(g, np.asarray(res.labels), float(res.modularity), rtol=1e-5)
    assert res.stats["levels"] >= 3 and res.stats["vertices"][1] == ids.size, res.stats   # a level past the mesh's
    assert np.asarray(res.stats["vertices"]).tolist() == np.asarray(solo.stats["vertices"]).tolist(), entries
    assert res.levels.shape == (res.stats["levels"], n) and res.level_modularity.shape == (res.stats["levels"],)
    assert float(res.modularity) >= 0.95 * float(solo.modularity)
checked += 1
print("ok", checked)
"""


def test_sharded_solvers_on_four_devices_equal_one_device(subprocess_env):
    """On 4 host devices (a line mesh, and one axis of a 2 x 2 mesh), Suitor on the sharded graph
    gives the single-device Suitor's matching, the greedy matching and its weight, certified, on random
    graphs with tied, random and unit weights, self-loops, repeated and zero-weight edges; and APFB /
    APsB / MS-BFS-Graft on a sharded bipartite graph give the one-device run's matching and counters from the empty
    matching, scipy's cardinality, Koenig-certified; Louvain on a sharded graph gives a certified
    partition, the one-device solver's (labels and modularity) on three bundled graphs; a coarse graph
    larger than a device's share stays split over the mesh, the same entries as a ShardedGraph of the
    communities' edges, and Louvain through it is certified."""
    out = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, timeout=600,
                         env=subprocess_env)
    assert out.returncode == 0 and out.stdout.strip() == "ok 41", (out.stdout[-500:], out.stderr[-3000:])


@pytest.fixture(scope="module")
def mesh():
    return Mesh(np.array(jax.devices()[:1]), ("d",))


def test_shard_layout(mesh):
    """Entries sorted by (source, target) on the owner's shard, each edge twice, repeats summed, padding at
    the sentinel; and Suitor on one device equals the unsharded run."""
    g = jaxmatch.Graph.from_edges([0, 1, 1, 2, 3], [1, 2, 2, 3, 3], [1.0, 2.0, 0.5, 4.0, 9.0])
    sg = jaxmatch.shard(g, mesh)
    assert (sg.n, sg.vertex_cap, sg.entry_cap, sg.shards) == (4, 4, 8, 1)
    assert sg.src.tolist() == [[0, 1, 1, 2, 2, 3, 3, 4]]
    assert sg.dst.tolist() == [[1, 0, 2, 1, 3, 2, 3, 4]]
    assert sg.weights.tolist() == [[1.0, 1.0, 2.5, 2.5, 4.0, 4.0, 9.0, 0.0]]
    direct = ShardedGraph.from_edges([0, 1, 1, 2, 3], [1, 2, 2, 3, 3], [1.0, 2.0, 0.5, 4.0, 9.0], n=4, mesh=mesh)
    assert direct.weights.tolist() == sg.weights.tolist()
    res, solo = jaxmatch.suitor(sg), jaxmatch.suitor(g)
    assert res.mate.tolist() == solo.mate.tolist() == [1, 0, 3, 2]
    assert float(res.weight) == float(solo.weight) == 5.0 and int(res.cardinality) == 2
    check_greedy_dominance(g, np.asarray(res.mate))
    assert "ShardedGraph(n=4, shards=1" in repr(sg)


def test_size_class():
    """The default entries per device (and a batch union's capacities): the next power of two up to
    2^16, then a multiple of a sixteenth of the next power of two, never below the count and under an
    eighth above it."""
    from jaxmatch._validate import size_class
    assert [size_class(m) for m in (0, 1, 5, 4096, 65536)] == [1, 1, 8, 4096, 65536]
    assert size_class(65537) == 65536 + 8192 and size_class(1 << 26) == 1 << 26
    assert size_class((1 << 26) + 5) == (1 << 26) + (1 << 23)
    for m in np.random.default_rng(3).integers(65537, 1 << 30, 200):
        ec = size_class(int(m))
        assert m <= ec < m * 1.125 and ec % (jaxmatch.graph.next_pow2(int(m)) // 16) == 0, m


def test_shard_bipartite_layout(mesh):
    """Column-major entries on the column's shard, repeats once, sentinels in padding; APFB on one
    device equals the unsharded run; methods other than apfb/apsb/graft are refused."""
    b = jaxmatch.BipartiteGraph.from_edges([0, 1, 1, 2, 1], [0, 0, 1, 1, 1], 3, 2)
    sb = jaxmatch.shard(b, mesh)
    assert (sb.n_rows, sb.n_cols, sb.row_cap, sb.col_cap, sb.entry_cap) == (3, 2, 3, 2, 4)
    assert sb.cols.tolist() == [[0, 0, 1, 1]] and sb.rows.tolist() == [[0, 1, 1, 2]]
    got = jaxmatch.maximum_matching(sb, method="apfb")
    solo = jaxmatch.maximum_matching(b, method="apfb", init=None)
    assert got.row_mate.tolist() == solo.row_mate.tolist() and int(got.cardinality) == 2
    assert "ShardedBipartiteGraph(n_rows=3" in repr(sb)
    for method in ("pr", "auto", "flow"):
        with pytest.raises(GraphInputError, match="apfb"):
            jaxmatch.maximum_matching(sb, method=method)
    with pytest.raises(GraphInputError, match="out of range"):
        jaxmatch.ShardedBipartiteGraph.from_edges([3], [0], 3, 2, mesh=mesh)
    with pytest.raises(GraphInputError, match="col_capacity"):
        jaxmatch.shard(b, mesh, col_capacity=1)


def test_sharded_louvain_on_one_device(mesh):
    """Louvain on a sharded graph: a certified partition; on the largest bundled graph and an RMAT graph
    (hubs: every degree bucket) the one-device solver's modularity (the same moves on one device: see
    jaxmatch.community.sharded);
    max_levels=1 stops after the sharded level; bad options are refused; the labels' renumbering; the rule
    that moves a coarse graph off the mesh."""
    from jaxmatch.certify import check_modularity, check_partition
    from experiments import generators as gen
    fb = jaxmatch.datasets.load("facebook").graph
    caps = dict(vertex_capacity=fb.vertex_cap, entry_capacity=fb.entry_cap)   # one compilation of each solver
    rmat = jaxmatch.from_scipy(gen.rmat(9, edge_factor=8, seed=2), kind="graph", weighted=False, **caps)
    from jaxmatch.community import sharded as shl
    compiled = shl._moves._cache_size()
    for name, g in (("facebook", fb), ("rmat", rmat)):
        sg = jaxmatch.shard(g, mesh, **caps)
        got = jaxmatch.louvain(sg)
        check_partition(g, np.asarray(got.labels))
        check_modularity(g, np.asarray(got.labels), float(got.modularity), rtol=1e-5)
        solo = float(jaxmatch.louvain(g).modularity)
        assert abs(float(got.modularity) - solo) <= 1e-5 * abs(solo), (name, float(got.modularity), solo)
        assert got.stats["vertices"][0] == int(g.n) and got.level_modularity.shape == (got.stats["levels"],)
    # level one and the refinement ran one compiled program of the moves (the coarse levels ran on one device)
    assert shl._moves._cache_size() == compiled + 1
    g = jaxmatch.datasets.load("karate").graph    # in the capacities above: level one compiled once
    caps = dict(vertex_capacity=sg.vertex_cap, entry_capacity=sg.entry_cap)
    first = jaxmatch.louvain(jaxmatch.shard(g, mesh, **caps), max_levels=1, throw=False)
    assert first.stats["levels"] == 1 and first.status_name == "hit max_levels"
    check_modularity(g, np.asarray(first.labels), float(first.modularity), rtol=1e-5)
    with pytest.raises(GraphInputError, match="resolution"):
        jaxmatch.louvain(jaxmatch.shard(g, mesh), resolution=-1.0)
    from jaxmatch.community.config import Config
    with pytest.raises(GraphInputError, match="one_device_entries"):
        jaxmatch.louvain(jaxmatch.shard(g, mesh), config=Config(one_device_entries=-1))
    # when a coarse graph leaves the mesh: by the knob (entries rounded up to a power of two), else by the
    # device's free memory, never where the backend reports none (the CPU)
    rng = np.random.default_rng(2)            # the refinement's labels renumbered on the device, as np.unique
    comm = rng.integers(0, 90, 128).astype(np.int32)
    comm[100:] = 128
    got = np.asarray(shl.dense_labels(jax.numpy.asarray(comm), jax.numpy.int32(100)))
    assert np.array_equal(got[:100], np.unique(comm[:100], return_inverse=True)[1]) and np.all(got[100:] == 128)
    small = Config(one_device_entries=100)
    assert not shl.too_big(64, sg, small) and shl.too_big(65, sg, small)
    assert shl.too_big(shl.MESH_ENTRIES + 1, sg, Config()) and shl.too_big(10**12, sg, Config())
    assert not shl.too_big(shl.MESH_ENTRIES, sg, Config()) or "bytes_limit" in (jax.devices()[0].memory_stats() or {})


def test_shard_bad_input(mesh):
    """Bad input is refused before any tracing, naming the problem."""
    g = jaxmatch.Graph.from_edges([0], [1])
    bad = [
        (lambda: jaxmatch.shard("g", mesh), "Graph or BipartiteGraph"),
        (lambda: jaxmatch.shard(jaxmatch.stack([g, g]), mesh), "not a batch"),
        (lambda: jaxmatch.shard(g, "mesh"), "jax.sharding.Mesh"),
        (lambda: jaxmatch.shard(g, mesh, "z"), "not an axis"),
        (lambda: ShardedGraph.from_edges([0], [2], n=2, mesh=mesh), "out of range"),
        (lambda: ShardedGraph.from_edges([-1], [0], n=2, mesh=mesh), "out of range"),
        (lambda: ShardedGraph.from_edges([0.5], [1], n=2, mesh=mesh), "integer ids"),
        (lambda: ShardedGraph.from_edges([0, 1], [1], n=2, mesh=mesh), "one length"),
        (lambda: ShardedGraph.from_edges([0], [1], [np.nan], n=2, mesh=mesh), "finite"),
        (lambda: ShardedGraph.from_edges([0], [1], [-1.0], n=2, mesh=mesh), ">= 0"),
        (lambda: ShardedGraph.from_edges([0], [1], n=-1, mesh=mesh), "n must be"),
        (lambda: ShardedGraph.from_edges([0, 0, 0], [1, 2, 3], n=4, mesh=mesh, entry_capacity=4), "entry_capacity"),
        (lambda: ShardedGraph.from_edges([0], [1], n=4, mesh=mesh, vertex_capacity=2), "vertex_capacity"),
        (lambda: jaxmatch.suitor(jaxmatch.shard(g, mesh), max_iters=0), "max_iters"),
    ]
    for call, words in bad:
        with pytest.raises(GraphInputError, match=words):
            call()


def test_sharded_suitor_stops_at_max_iters(mesh):
    """A bounded run reports MAX_ITERS (and raises eagerly with throw=True)."""
    u = np.arange(40)
    sg = ShardedGraph.from_edges(u[:-1], u[1:], np.arange(1, 40, dtype=np.float32), n=40, mesh=mesh)
    res = jaxmatch.suitor(sg, max_iters=1, throw=False)
    assert res.status_name == "hit max_iters" and int(res.stats["rounds"]) == 1
    with pytest.raises(jaxmatch.SolverError):
        jaxmatch.suitor(sg, max_iters=1)


def test_coarse_graph_is_the_graph_of_the_communities(mesh):
    """The sharded Louvain's coarse graph, merged on the device, is the graph of level one's
    communities as the host builds it from the input's edges (each edge {u, v} becomes
    {C(u), C(v)}, repeats summed, an intra-community edge a loop), ids dense by rank; same CSR, same
    weights to float32 rounding, and the label of each vertex its community's rank."""
    import jax.numpy as jnp

    from jaxmatch.community import sharded as shl
    rng = np.random.default_rng(4)
    n, m = 90, 400
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.random(m).astype(np.float32)
    sg = ShardedGraph.from_edges(u, v, w, n=n, mesh=mesh)
    comm, *_, to_coarse, n_coarse, pcs, pcd, pw, count = shl.level_one(sg, jnp.float32(1), jnp.float32(0),
                                                                       jnp.float32(0), max_iters=3)
    got, dense = shl.coarse_graph(to_coarse, n_coarse, pcs, pcd, pw, count, n)
    ids, want_dense = np.unique(np.asarray(comm)[:n], return_inverse=True)
    assert np.array_equal(dense, want_dense) and int(got.n) == ids.size < n
    want = jaxmatch.Graph.from_edges(want_dense[u], want_dense[v], w, n=ids.size)
    lo_v, lo_e = shl.COARSE_FLOOR    # small coarse graphs share one size class
    want = want.with_capacity(vertex_capacity=max(want.vertex_cap, lo_v), entry_capacity=max(want.entry_cap, lo_e))
    assert (got.vertex_cap, got.entry_cap, int(got.n_edges), int(got.n_entries)) == \
        (want.vertex_cap, want.entry_cap, int(want.n_edges), int(want.n_entries))
    for a in ("indptr", "indices", "src"):
        assert np.array_equal(np.asarray(getattr(got.adj, a)), np.asarray(getattr(want.adj, a))), a
    np.testing.assert_allclose(np.asarray(got.adj.weights), np.asarray(want.adj.weights), rtol=1e-5)
