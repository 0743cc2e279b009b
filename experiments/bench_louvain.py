"""Benchmark: jaxmatch.louvain against igraph and networkx, side by side in one run (issue 8).

Two parts (Paper III of the thesis):

1. **One graph at a time**, the paper's classes from ``experiments/generators.py``:
   Delaunay (mesh-like), random geometric, road-like grid, power-law (Chung-Lu)
   and RMAT (Graph500), in tiers of about ``--sizes`` edges each (default
   5e4, 1e6 and 1.2e7 edges). jaxmatch (jit, warmed up, compile time
   reported apart, median of ``--repeats`` runs, ``jax.block_until_ready``)
   against igraph's ``community_multilevel`` (C, one CPU thread) and, up to
   ``--nx-max-edges``, networkx's ``louvain_communities``. The graphs of a
   tier share one capacity, so jaxmatch compiles once per tier; all the
   variants below run the same executable (their options are traced).
   Variants: one per ``--threshold-large`` value (the paper's 1e-2 while a
   level has more than 100,000 vertices, and a finer one; one variant for
   graphs of at most 100,000 vertices, where they agree), each timed in full
   and for its first level alone (``max_levels=1``, no refinement), which
   gives the first-level throughput: TEPS = stored entries (2m) x sweeps /
   second, the thesis's "traversed edges per second in the first modularity
   optimisation phase". Every answer is checked: partition and modularity by
   ``jaxmatch.certify`` (float64 recomputation), modularity against igraph's
   (target: within 1%).
2. **Many small graphs**: ``--small-graphs`` planted-partition graphs of
   ``--small-n`` vertices (default 100,000 of 20-1,000), grouped by
   capacity (vertex capacity next_pow2(n), one entry capacity per group: one
   compilation per group) and run through ``jax.vmap`` in batches of
   ``--batch-entries`` / entry capacity graphs, each batch timed; against
   igraph in a loop. The batch runs ``louvain(g, axis_name=..., max_iters=
   --small-max-iters)`` under ``jax.vmap(..., axis_name=...)``: the batch
   shares its window sizes, and the cap (default 8 sweeps per level; the
   levels and the refinement go on after it) cuts the long tails of a few
   slow graphs that a vmapped while_loop waits for (on CPU, 256 graphs of
   129-256 vertices: 54 -> 30 sweep trips a batch, 6.7 s -> 2.8 s, the mean
   Q/igraph 1.0075 -> 1.0071; status then counts as max_iters). Every graph's modularity is
   recomputed in numpy from our labels; ``--certify-small`` graphs also go
   through ``jaxmatch.certify``. The graphs are generated in blocks of
   ``SMALL_BLOCK`` by vectorised numpy (the workers rebuild the same blocks
   for igraph), and each batch is built by one sort.

igraph and networkx run in ``--workers`` worker processes (spawned, no JAX),
which also generate the graphs (the same seeds give the same graphs), while
this process drives the device: the peers' times are single-thread times of
each run, taken with other workers busy on other cores. ``--budget`` seconds
bound the whole run: work not started by then is skipped and listed.

Writes JSON to $OUT (or experiments/results/) and prints a table last.
``--small`` is a CPU smoke test (well under a minute).

GPU determinism: XLA's float scatter-adds are unordered on GPUs; pass
``--deterministic`` to set ``--xla_gpu_deterministic_ops=true`` (before JAX
starts) so two runs give identical labels there too.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import pathlib
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from itertools import zip_longest

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from experiments import generators as gen  # noqa: E402  (numpy / scipy only: safe in workers)
from experiments.common import timed  # noqa: E402

CLASSES = ("delaunay", "rgg", "road", "power_law", "rmat")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true", help="CPU smoke test (under a minute)")
    p.add_argument("--sizes", type=float, nargs="+", help="edge counts of the tiers (e.g. 1e6 1.2e7)")
    p.add_argument("--classes", nargs="+", default=list(CLASSES), choices=CLASSES)
    p.add_argument("--threshold-large", type=float, nargs="+", default=[1e-2, 1e-3],
                   help="threshold_large of the jaxmatch variants (1e-2: the paper's / the default)")
    p.add_argument("--repeats", type=int, default=5, help="timed jaxmatch runs per variant (median)")
    p.add_argument("--peer-repeats", type=int, default=3, help="timed igraph / networkx runs (median)")
    p.add_argument("--peer-big-edges", type=float, default=2e6,
                   help="one igraph run only above this many edges")
    p.add_argument("--nx-max-edges", type=float, default=1e5, help="networkx up to this many edges")
    p.add_argument("--small-graphs", type=int, help="number of small graphs (0: skip part 2)")
    p.add_argument("--small-n", type=int, nargs=2, help="vertex range of the small graphs")
    p.add_argument("--batch-entries", type=int, help="entry slots per vmap batch (graphs = this / entry capacity)")
    p.add_argument("--min-cap", type=int,
                   help="smallest vertex capacity of the small graphs (rounded up to a power of two; 256, --small 128)")
    p.add_argument("--small-max-iters", type=int, default=8,
                   help="max_iters (sweeps per level) for the small graphs (a vmapped batch sweeps until "
                        "its slowest graph stops: the cap cuts the long tails; 100: the default)")
    p.add_argument("--certify-small", type=int, default=2000, help="small graphs checked by certify (-1: all)")
    p.add_argument("--small-budget", type=float, help="seconds for part 2's timed pass (default 150; --small 40)")
    p.add_argument("--workers", type=int, help="worker processes for generators and peers")
    p.add_argument("--budget", type=float, help="seconds for the whole run (default 420; --small 100)")
    p.add_argument("--deterministic", action="store_true", help="XLA deterministic GPU scatters")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    a.sizes = [int(x) for x in (a.sizes or ([1e3, 5e3] if a.small else [5e4, 1e6, 1.2e7]))]
    a.small_graphs = (200 if a.small else 100_000) if a.small_graphs is None else a.small_graphs
    a.small_n = a.small_n or ([20, 120] if a.small else [20, 1000])
    a.batch_entries = a.batch_entries or (1 << 14 if a.small else 1 << 24)
    a.min_cap = a.min_cap or (128 if a.small else 256)
    a.workers = a.workers or max(1, min(12, (os.cpu_count() or 2) - 2))
    a.budget = a.budget or (100.0 if a.small else 420.0)
    a.small_budget = a.small_budget or (40.0 if a.small else 150.0)
    return a


# --------------------------------------------------------------------------
# graphs (used by the workers and by the main process)


def vertices_for(cls: str, edges: int) -> int:
    """Vertex count (or RMAT scale) that gives a graph of about ``edges`` edges."""
    if cls == "delaunay":                       # m ~ 3n
        return max(16, round(edges / 3))
    if cls == "rgg":                            # m ~ 0.46 n ln n (DIMACS radius, border losses)
        n = max(16.0, edges / 5)
        for _ in range(30):
            n = edges / (0.46 * math.log(n))
        return max(16, round(n))
    if cls == "road":                           # m ~ 1.8 n (4-grid, 10% deleted)
        side = max(4, round(math.sqrt(edges / 1.8)))
        return side * side
    if cls == "power_law":                      # avg degree 16 less merged duplicates: m ~ 7.6 n
        return max(16, round(edges / 7.6))
    if cls == "rmat":                           # edge factor 16 less duplicates: m ~ 14 n
        return 1 << max(4, round(math.log2(edges / 14)))
    raise ValueError(cls)


def make_graph(cls: str, n: int, seed: int):
    if cls == "delaunay":
        return gen.delaunay(n, seed=seed)
    if cls == "rgg":
        return gen.random_geometric(n, seed=seed)
    if cls == "road":
        side = int(round(math.sqrt(n)))
        return gen.road_grid(side, side, seed=seed)
    if cls == "power_law":
        return gen.power_law(n, avg_degree=16, seed=seed)
    if cls == "rmat":
        return gen.rmat(int(round(math.log2(n))), seed=seed)
    raise ValueError(cls)


SMALL_BLOCK = 1000   # small graphs generated together (one random stream per block)


def small_block(k: int, count: int, n_range, seed: int):
    """Small graphs k * SMALL_BLOCK .. min(count, (k + 1) * SMALL_BLOCK) - 1, generated together
    (vectorised numpy, one random stream per block, so the workers rebuild the same graphs):
    planted partition, 2-8 groups, average degree about 8, 80% of the edges inside; [(u, v, n)]."""
    rng = np.random.default_rng([seed, k])
    b = min(count, (k + 1) * SMALL_BLOCK) - k * SMALL_BLOCK
    n = rng.integers(n_range[0], n_range[1] + 1, b)
    size = -(-n // rng.integers(2, 9, b))
    gid = np.repeat(np.arange(b), 4 * n)                       # m = 4n edge draws per graph
    ng, sg = n[gid], size[gid]
    u = (rng.random(gid.size) * ng).astype(np.int64)
    inside = rng.random(gid.size) < 0.8
    start = (u // sg) * sg
    span = np.minimum(sg, ng - start)
    v = np.where(inside, start + (rng.random(gid.size) * span).astype(np.int64),
                 (rng.random(gid.size) * ng).astype(np.int64))
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    top = int(n_range[1]) + 1
    keys = np.sort(((gid * top + lo) * top + hi)[lo != hi])    # by (graph, lo, hi)
    keys = keys[np.r_[True, keys[1:] != keys[:-1]]]             # no repeats (np.unique hashes: slower)
    g, lo, hi = keys // (top * top), (keys // top) % top, keys % top
    cut = np.cumsum(np.bincount(g, minlength=b))[:-1]
    return [(x.astype(np.int32), y.astype(np.int32), int(nn))
            for x, y, nn in zip(np.split(lo, cut), np.split(hi, cut), n)]


def small_graphs(count: int, n_range, seed: int, blocks=None):
    """All small graphs (or those of ``blocks``), in order."""
    blocks = range(-(-count // SMALL_BLOCK)) if blocks is None else blocks
    return [gr for k in blocks for gr in small_block(k, count, n_range, seed)]


# --------------------------------------------------------------------------
# worker tasks (no JAX)


def optional(name):
    """The module, or None when it is not installed (its column is then skipped)."""
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def peer_graph_task(cls, n, seed, path, repeats, big_edges, nx_max_edges):
    """Generate one graph, hand it to the main process as .npz, then time igraph (and networkx)."""
    ig, nx = optional("igraph"), optional("networkx")
    t = time.perf_counter()
    A = make_graph(cls, n, seed).tocsr()
    gen_s = time.perf_counter() - t
    tmp = path + ".part.npz"
    np.savez(tmp, indptr=A.indptr.astype(np.int64), indices=A.indices.astype(np.int32), n=A.shape[0])
    os.replace(tmp, path)
    coo = A.tocoo()
    up = coo.row < coo.col
    u, v = coo.row[up], coo.col[up]
    out = dict(gen_s=gen_s, n=int(A.shape[0]), edges=int(up.sum()))
    if ig is not None:
        G = ig.Graph(n=A.shape[0], edges=np.c_[u, v])

        def run():
            random.seed(seed)                    # python-igraph draws from Python's `random`
            return G.community_multilevel()

        reps = 1 if out["edges"] > big_edges else repeats
        t_ig, times, c = timed(run, reps)
        out.update(igraph_s=t_ig, igraph_times=times, igraph_q=G.modularity(c.membership),
                   igraph_k=len(set(c.membership)))
    if nx is not None and out["edges"] <= nx_max_edges:
        H = nx.Graph()
        H.add_nodes_from(range(A.shape[0]))
        H.add_edges_from(zip(u.tolist(), v.tolist()))
        t_nx, times, comms = timed(lambda: nx.community.louvain_communities(H, seed=seed), repeats)
        out.update(networkx_s=t_nx, networkx_times=times, networkx_q=nx.community.modularity(H, comms))
    return out


def peer_small_task(blocks, count, n_range, seed):
    """igraph in a loop over the small graphs of ``blocks``; (first graph, loop seconds, Q per graph)."""
    ig = optional("igraph")
    if ig is None:
        return blocks[0] * SMALL_BLOCK, 0.0, np.zeros(0)
    gs = small_graphs(count, n_range, seed, blocks)
    Gs = [ig.Graph(n=n, edges=np.c_[u, v]) for u, v, n in gs]
    random.seed(seed + blocks[0])
    t = time.perf_counter()
    comms = [G.community_multilevel() for G in Gs]
    loop_s = time.perf_counter() - t
    return blocks[0] * SMALL_BLOCK, loop_s, np.array([G.modularity(c.membership) for G, c in zip(Gs, comms)])


# --------------------------------------------------------------------------
# main process (JAX)


class Clock:
    def __init__(self, budget):
        self.t0, self.budget, self.skipped = time.perf_counter(), budget, []

    def left(self):
        return self.budget - (time.perf_counter() - self.t0)

    def over(self, what, need=0.0):
        if self.left() < need:
            self.skipped.append(what)
            print(f"  budget: skipping {what}", flush=True)
            return True
        return False


def graph_from_csr(indptr, indices, n, vcap, ecap):
    """An unweighted jaxmatch Graph straight from a symmetric sorted CSR (numpy only; from_scipy
    sorts again, which takes tens of seconds at 10^7 edges). Checked against from_scipy on the
    first tier."""
    import jax
    from jaxmatch.graph import CSR, Graph
    e = int(indptr[-1])
    ip = np.full(vcap + 1, e, np.int32)
    ip[:n + 1] = indptr
    dst = np.full(ecap, vcap, np.int32)
    dst[:e] = indices
    src = np.full(ecap, vcap, np.int32)
    src[:e] = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    w = np.zeros(ecap, np.float32)
    w[:e] = 1
    loops = int(np.sum(src[:e] == dst[:e]))
    put = jax.device_put
    return Graph(adj=CSR(put(ip), put(dst), put(src), put(w)), n=put(np.int32(n)),
                 n_edges=put(np.int32((e - loops) // 2 + loops)), n_entries=put(np.int32(e)),
                 vertex_cap=vcap, entry_cap=ecap, weighted=False)


def same_graph(a, b):
    import jax
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb)) \
        and (a.vertex_cap, a.entry_cap, a.weighted) == (b.vertex_cap, b.entry_cap, b.weighted)


def time_jaxmatch(g, variant, args):
    """Full run and first level of one variant; returns a dict."""
    import jax
    from jaxmatch import certify
    from jaxmatch.community import _options, _solve
    full, static = _options(g, threshold_large=variant)
    first, static1 = _options(g, threshold_large=variant, max_levels=1, refine=False)
    assert static == static1                     # one executable for both
    solve = lambda o: jax.block_until_ready(_solve(g, o, **static))
    t = time.perf_counter()
    solve(full)
    first_call = time.perf_counter() - t
    t_full, times, out = timed(lambda: solve(full), args.repeats)
    t_l0, times1, out1 = timed(lambda: solve(first), args.repeats)
    n = int(g.n)
    for labels, _, q, *_ in (out1, out):             # every timed answer: the certificate
        labels = np.asarray(labels)[:n]
        certify.check_partition(g, labels)
        # float32 sums over up to 10^7 vertices: 1e-4 of the size of Eq. (1)'s terms
        certify.check_modularity(g, labels, float(q), rtol=1e-4)
    labels, _, q, _, status, stats = out
    q = float(q)
    n_levels = int(stats["levels"])
    it0 = int(np.asarray(out1[5]["iterations"])[0])
    entries = int(g.n_entries)
    return dict(threshold_large=variant, jaxmatch_s=t_full, jaxmatch_times=times,
                first_call_s=first_call, jaxmatch_q=q,
                communities=int(stats["communities"]), levels=n_levels,
                iterations=np.asarray(stats["iterations"])[:n_levels].tolist(),
                refine_iterations=int(stats["refine_iterations"]), status=int(status),
                first_level_s=t_l0, first_level_times=times1, first_level_sweeps=it0,
                first_level_q=float(out1[2]),
                first_level_teps=entries * it0 / t_l0,
                first_level_edges_per_s=int(g.n_edges) * it0 / t_l0)


def run_tier(tier, jobs, args, clock):
    """All classes of one tier: wait for their graphs, one capacity, jaxmatch variants."""
    import jaxmatch
    from jaxmatch.graph import next_pow2
    rows = []
    loaded = []
    for cls, n, path, res in jobs:
        failed = None
        while not os.path.exists(path) and failed is None and clock.left() > 0:
            if res.ready() and not res.successful():
                try:
                    res.get()
                except Exception as e:                      # noqa: BLE001 (reported, the run goes on)
                    failed = repr(e)
            time.sleep(0.2)
        if not os.path.exists(path):
            clock.skipped.append(f"tier {tier:.0e} {cls}: " + (f"generator failed: {failed}" if failed
                                                                  else "graph not generated in time"))
            continue
        z = np.load(path)
        loaded.append((cls, int(z["n"]), z["indptr"], z["indices"], res))
    if not loaded:
        return rows
    vcap = next_pow2(max(n for _, n, _, _, _ in loaded))
    ecap = next_pow2(max(int(ip[-1]) for _, _, ip, _, _ in loaded))
    print(f"tier ~{tier:.0e} edges: capacity {vcap} vertices, {ecap} entries", flush=True)
    compiled = False
    for cls, n, indptr, indices, res in loaded:
        if clock.over(f"tier {tier:.0e} {cls}", 5.0):
            continue
        g = graph_from_csr(indptr, indices, n, vcap, ecap)
        if tier == min(args.sizes):
            import scipy.sparse as sp
            A = sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=(n, n))
            ref = jaxmatch.from_scipy(A, kind="graph", weighted=False, vertex_capacity=vcap, entry_capacity=ecap)
            assert same_graph(g, ref), "graph_from_csr differs from jaxmatch.from_scipy"
        row = dict(graph=cls, tier=tier, n=n, edges=int(g.n_edges), entries=int(g.n_entries),
                   vertex_cap=vcap, entry_cap=ecap, variants=[])

        # threshold_large only acts on levels of more than large_graph (100,000) vertices
        variants = args.threshold_large if n > 100_000 else args.threshold_large[:1]
        for variant in variants:
            if clock.over(f"tier {tier:.0e} {cls} threshold_large={variant}", 2.0):
                continue
            v = time_jaxmatch(g, variant, args)
            v["compile_s"] = max(v["first_call_s"] - v["jaxmatch_s"], 0.0) if not compiled else 0.0
            compiled = True
            row["variants"].append(v)
            print(f"  {cls:9s} n={n:>9} m={row['edges']:>9} tl={variant:g}: {v['jaxmatch_s']:.3f}s "
                  f"Q={v['jaxmatch_q']:.4f} L0 {v['first_level_sweeps']} sweeps "
                  f"{v['first_level_teps']:.2e} TEPS (first call {v['first_call_s']:.1f}s)", flush=True)
        rows.append((row, res))
        del g
    return rows


def attach_peers(rows, clock):
    out = []
    for row, res in rows:
        try:
            peers = res.get(timeout=max(clock.left(), 0.1))
        except mp.TimeoutError:
            clock.skipped.append(f"igraph on {row['graph']} tier {row['tier']:.0e} (not finished in budget)")
            peers = {}
        except Exception as e:                              # noqa: BLE001 (reported, the run goes on)
            clock.skipped.append(f"peers on {row['graph']} tier {row['tier']:.0e} failed: {e!r}")
            peers = {}
        row.update({k: v for k, v in peers.items() if k not in ("n", "edges")})
        for v in row["variants"]:
            if "igraph_q" in peers:
                v["q_ratio_igraph"] = v["jaxmatch_q"] / peers["igraph_q"]
                v["speedup_vs_igraph"] = peers["igraph_s"] / v["jaxmatch_s"]
                v["q_ok"] = bool(v["jaxmatch_q"] >= 0.99 * peers["igraph_q"])
            if "networkx_q" in peers:
                v["q_ratio_networkx"] = v["jaxmatch_q"] / peers["networkx_q"]
                v["speedup_vs_networkx"] = peers["networkx_s"] / v["jaxmatch_s"]
        out.append(row)
    return out


# --------------------------------------------------------------------------
# part 2: many small graphs


def batch_of(graphs, vcap, ecap):
    """A stacked unweighted Graph (as jaxmatch.stack builds it) from (u, v, n) lists, in numpy
    (one sort for the whole batch); also returns the host arrays (src, dst, n) for the numpy
    modularity check."""
    import jax
    from jaxmatch.graph import CSR, Graph
    b = len(graphs)
    ms = np.array([u.size for u, _, _ in graphs], np.int64)
    ns = np.array([n for _, _, n in graphs], np.int32)
    u = np.concatenate([x for x, _, _ in graphs]).astype(np.int64)
    v = np.concatenate([y for _, y, _ in graphs]).astype(np.int64)
    gi = np.repeat(np.arange(b), ms)
    sh = vcap.bit_length() - 1                                  # vcap: a power of two
    assert 1 << sh == vcap
    key = np.sort((np.concatenate([gi, gi]) << (2 * sh)) | (np.concatenate([u, v]) << sh)
                  | np.concatenate([v, u]))                     # by (graph, source, target)
    gi, s, d = key >> (2 * sh), (key >> sh) & (vcap - 1), key & (vcap - 1)
    flat = np.arange(s.size) + np.repeat(np.arange(b) * ecap - (np.cumsum(2 * ms) - 2 * ms), 2 * ms)
    src = np.full(b * ecap, vcap, np.int32)
    dst = np.full(b * ecap, vcap, np.int32)
    w = np.zeros(b * ecap, np.float32)
    src[flat], dst[flat], w[flat] = s, d, 1.0
    src, dst, w = src.reshape(b, ecap), dst.reshape(b, ecap), w.reshape(b, ecap)
    indptr = np.zeros((b, vcap + 1), np.int32)
    indptr[:, 1:] = np.cumsum(np.bincount(gi * vcap + s, minlength=b * vcap).reshape(b, vcap), axis=1)
    put = jax.device_put
    adj = CSR(put(indptr), put(dst), put(src), put(w))
    g = Graph(adj=adj, n=put(ns), n_edges=put(ms.astype(np.int32)), n_entries=put(2 * ms.astype(np.int32)),
              vertex_cap=vcap, entry_cap=ecap, weighted=False)
    return g, (src, dst, ns)


def batch_modularity(host, labels):
    """Q of every graph of a batch from its labels, in float64 numpy (unweighted, no loops)."""
    src, dst, ns = host
    b, ecap = src.shape
    vcap = labels.shape[1]
    valid = src < vcap
    s, d = np.where(valid, src, 0), np.where(valid, dst, 0)
    lab = labels.astype(np.int64)
    same = valid & (np.take_along_axis(lab, s, 1) == np.take_along_axis(lab, d, 1))
    two_m = valid.sum(1).astype(np.float64)
    rows = np.arange(b)[:, None]
    deg = np.bincount((rows * vcap + s)[valid], minlength=b * vcap).reshape(b, vcap).astype(np.float64)
    lab_c = np.where(np.arange(vcap)[None, :] < ns[:, None], lab, vcap)
    tot = np.bincount((rows * (vcap + 1) + lab_c).ravel(), deg.ravel(), minlength=b * (vcap + 1))
    tot = tot.reshape(b, vcap + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return same.sum(1) / two_m - ((tot[:, :vcap] / two_m[:, None]) ** 2).sum(1)


def bench_small_graphs(args, clock, pool):
    import jax
    import jaxmatch
    from jaxmatch import Graph, certify
    from jaxmatch.community import louvain
    from jaxmatch.graph import next_pow2
    count = args.small_graphs
    n_blocks = -(-count // SMALL_BLOCK)
    chunk = max(1, -(-n_blocks // (4 * args.workers)))
    peer = [pool.apply_async(peer_small_task, (list(range(k, min(k + chunk, n_blocks))), count,
                                               args.small_n, args.seed))
            for k in range(0, n_blocks, chunk)]
    t = time.perf_counter()
    graphs = small_graphs(count, args.small_n, args.seed)
    classes = {}
    for i, (u, v, n) in enumerate(graphs):
        classes.setdefault(next_pow2(max(args.min_cap, n)), []).append(i)
    # axis_name: the batch shares its window sizes (see jaxmatch.louvain); max_iters: sweeps per level
    kw = dict(max_iters=args.small_max_iters, axis_name="batch")
    solve = jax.jit(jax.vmap(lambda g: louvain(g, **kw), axis_name="batch"))
    batches, batch_sizes = [], {}
    for vcap, idx in sorted(classes.items()):
        idx = sorted(idx, key=lambda i: graphs[i][0].size)     # similar sizes share a batch
        ecap = next_pow2(max(2 * graphs[i][0].size for i in idx))
        size = max(1, min(args.batch_entries // ecap, len(idx)))
        for s in range(0, len(idx), size):
            part = idx[s:s + size]
            part = part + [part[-1]] * (size - len(part))   # full batches: one shape per capacity
            g, host = batch_of([graphs[i] for i in part], vcap, ecap)
            batches.append((vcap, part, g, host))
        batch_sizes[vcap] = (size, ecap)
        ref = jaxmatch.stack([Graph.from_edges(u, v, n=n, vertex_capacity=vcap, entry_capacity=ecap)
                              for u, v, n in (graphs[i] for i in idx[:3])])
        mine, _ = batch_of([graphs[i] for i in idx[:3]], vcap, ecap)
        assert same_graph(mine, ref), "batch builder differs from jaxmatch.stack"
    build_s = time.perf_counter() - t
    print(f"small graphs: {count} built in {build_s:.1f}s, {len(batches)} batches, vertex capacities "
          f"{sorted(classes)}", flush=True)
    compile_s, seen = {}, set()
    for vcap, part, g, host in batches:                  # one compilation per capacity
        if vcap in seen:
            continue
        seen.add(vcap)
        if clock.over(f"small graphs: compile for capacity {vcap}", 10.0):
            return None
        t = time.perf_counter()
        jax.block_until_ready(solve(g))
        compile_s[vcap] = time.perf_counter() - t
    # the timed pass, capacities interleaved (a pass cut short by --small-budget stays a mix)
    by_cap = {}
    for b in batches:
        by_cap.setdefault(b[0], []).append(b)
    order = [b for group in zip_longest(*by_cap.values()) for b in group if b is not None]
    part_end = time.perf_counter() - clock.t0 + args.small_budget
    labels = [None] * count
    qs = np.full(count, np.nan)
    status = np.zeros(count, np.int32)
    batch_s, done_batches = [], []
    for vcap, part, g, host in order:
        if time.perf_counter() - clock.t0 > part_end or clock.left() < 2.0:
            clock.skipped.append(f"small graphs: {len(order) - len(batch_s)} of {len(order)} batches "
                                 "(past --small-budget or the budget)")
            break
        t = time.perf_counter()
        out = jax.block_until_ready(solve(g))
        batch_s.append(time.perf_counter() - t)
        done_batches.append(vcap)
        lab, q, st = np.asarray(out.labels), np.asarray(out.modularity), np.asarray(out.status)
        del out
        qn = batch_modularity(host, lab)
        assert np.allclose(q, qn, rtol=1e-4, atol=1e-6), "modularity differs from the numpy recomputation"
        for j, i in enumerate(part):
            labels[i] = lab[j, :graphs[i][2]]
            qs[i], status[i] = q[j], st[j]
    # steady-state batch time of each capacity, so the compile time is the first call's excess
    per_cap = {}
    for vcap, s in zip(done_batches, batch_s):
        per_cap.setdefault(vcap, []).append(s)
    compile_s = {c: max(v - statistics.median(per_cap.get(c, [0.0])), 0.0) for c, v in compile_s.items()}
    ran = np.flatnonzero(~np.isnan(qs))
    rng = np.random.default_rng(args.seed)
    check = ran if args.certify_small < 0 else rng.choice(ran, min(args.certify_small, ran.size), replace=False)
    for i in check:
        u, v, n = graphs[i]
        g = Graph.from_edges(u, v, n=n)
        certify.check_partition(g, labels[i])
        certify.check_modularity(g, labels[i], qs[i], rtol=1e-5)
    t_jm = sum(batch_s)
    summary = dict(graph="small planted", count=count, graphs_run=int(ran.size), n_range=list(args.small_n),
                   batches=len(batches), batches_run=len(batch_s),
                   batch_sizes={c: b for c, (b, _) in batch_sizes.items()},
                   entry_caps={c: e for c, (_, e) in batch_sizes.items()},
                   capacity_classes=sorted(classes), build_s=build_s, jaxmatch_s=t_jm,
                   batch_s=batch_s, batch_s_median=statistics.median(batch_s) if batch_s else None,
                   compile_s=compile_s, max_iters=args.small_max_iters, hit_max_iters=int(status.sum()),
                   certified=len(check),
                   graphs_per_s=ran.size / t_jm if t_jm else None)
    return summary, qs, peer


def finish_small(small, clock):
    """Join igraph's loop over the small graphs (run by the workers meanwhile)."""
    if small is None:
        return None
    summary, qs, peer = small
    q_ig = np.full(qs.size, np.nan)
    loop_s, done = 0.0, 0
    for r in peer:
        try:
            start, s, q = r.get(timeout=max(clock.left(), 0.1))
        except mp.TimeoutError:
            clock.skipped.append("igraph on some small graphs (not finished in budget)")
            continue
        except Exception as e:                              # noqa: BLE001 (reported, the run goes on)
            clock.skipped.append(f"igraph on some small graphs failed: {e!r}")
            continue
        q_ig[start:start + q.size] = q
        loop_s += s
        done += q.size
    both = ~np.isnan(q_ig) & ~np.isnan(qs)
    ratio = qs[both] / q_ig[both]
    per_graph = loop_s / done if done else None
    t_jm = summary["jaxmatch_s"]
    summary.update(igraph_graphs=int(done), igraph_loop_s=loop_s,
                   igraph_loop_s_per_100k=per_graph * 100_000 if done else None,
                   speedup_vs_igraph=per_graph * summary["graphs_run"] / t_jm if done and t_jm else None,
                   compared=int(both.sum()),
                   q_ratio_mean=float(ratio.mean()) if ratio.size else None,
                   q_ratio_min=float(ratio.min()) if ratio.size else None,
                   q_within_1pct=float(np.mean(ratio >= 0.99)) if ratio.size else None)
    return summary


# --------------------------------------------------------------------------


def main(args):
    if args.deterministic:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true").strip()
    clock = Clock(args.budget)
    tmp = tempfile.mkdtemp(prefix="bench_louvain_")
    pool = mp.get_context("spawn").Pool(args.workers)
    try:
        # workers: all graphs (small tiers first), each followed by its peers' runs
        tiers = {}
        for tier in sorted(args.sizes, reverse=True):        # the longest peer runs start first
            for cls in args.classes:
                n = vertices_for(cls, tier)
                path = os.path.join(tmp, f"{cls}_{tier}.npz")
                res = pool.apply_async(peer_graph_task, (cls, n, args.seed, path, args.peer_repeats,
                                                         args.peer_big_edges, args.nx_max_edges))
                tiers.setdefault(tier, []).append((cls, n, path, res))
        for name in ("igraph", "networkx"):
            if optional(name) is None:
                print(f"note: {name} is not installed: its columns are skipped")
        import jax
        dev = jax.devices()[0]
        print(f"device: {dev.device_kind} ({dev.platform}), jax {jax.__version__}, "
              f"{args.workers} worker processes, budget {args.budget:.0f}s", flush=True)
        # part 2 first (the workers are still generating the large graphs), then the smallest
        # tier (networkx), the largest (the targets at >= 10^7 edges), the others
        phases = {"start": time.perf_counter() - clock.t0}
        small = bench_small_graphs(args, clock, pool) if args.small_graphs else None
        phases["small graphs done"] = time.perf_counter() - clock.t0
        order = sorted(tiers)
        order = order[:1] + order[1:][::-1][:1] + order[1:-1]
        rows = []
        for tier in order:
            rows += run_tier(tier, tiers[tier], args, clock)
            phases[f"tier {tier:.0e} done"] = time.perf_counter() - clock.t0
        rows.sort(key=lambda r: (r[0]["tier"], CLASSES.index(r[0]["graph"])))
        rows = attach_peers(rows, clock)
        small = finish_small(small, clock)
        phases["peers joined"] = time.perf_counter() - clock.t0
    finally:
        pool.terminate()
        shutil.rmtree(tmp, ignore_errors=True)

    result = dict(device=dev.device_kind, platform=dev.platform, jax_version=jax.__version__,
                  host=platform.node(), cpus=os.cpu_count(), args=vars(args), rows=rows,
                  small_graphs=small, skipped=clock.skipped, phases_s=phases,
                  wall_s=time.perf_counter() - clock.t0, date=time.strftime("%Y-%m-%d %H:%M:%S"))
    out_dir = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"louvain_{dev.platform}_{time.strftime('%Y%m%d_%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=1, default=float))
    print(f"\nwrote {path} ({result['wall_s']:.0f}s)")
    print_table(rows, small, clock.skipped)


def fmt(x):
    return "-" if x is None else f"{x:.4f}"


def print_table(rows, small, skipped):
    head = (f"{'graph':<10}{'n':>9}{'edges':>10} {'t_large':>7} {'jm s':>8} {'compile':>7} {'igraph s':>9} "
            f"{'nx s':>7} {'x ig':>6} {'Q jm':>7} {'Q ig':>7} {'Q nx':>7} {'Q/ig':>6} {'lv':>3} "
            f"{'sw0':>4} {'L0 TEPS':>8} {'ok':>3}")
    print(head)
    missed = []
    for r in rows:
        for v in r["variants"]:
            nx_s = f"{r['networkx_s']:7.2f}" if "networkx_s" in r else f"{'-':>7}"
            nx_q = f"{r['networkx_q']:7.4f}" if "networkx_q" in r else f"{'-':>7}"
            ig_s = f"{r['igraph_s']:9.3f}" if "igraph_s" in r else f"{'-':>9}"
            ig_q = f"{r['igraph_q']:7.4f}" if "igraph_q" in r else f"{'-':>7}"
            x = f"{v['speedup_vs_igraph']:6.1f}" if "speedup_vs_igraph" in v else f"{'-':>6}"
            ratio = f"{v['q_ratio_igraph']:6.3f}" if "q_ratio_igraph" in v else f"{'-':>6}"
            ok = {True: "yes", False: "NO"}.get(v.get("q_ok"), "-")
            if v.get("q_ok") is False:
                missed.append(f"{r['graph']} m={r['edges']} t_large={v['threshold_large']:g}")
            print(f"{r['graph']:<10}{r['n']:>9}{r['edges']:>10} {v['threshold_large']:7.0e} "
                  f"{v['jaxmatch_s']:8.3f} {v['compile_s']:7.1f} {ig_s} {nx_s} {x} {v['jaxmatch_q']:7.4f} "
                  f"{ig_q} {nx_q} {ratio} {v['levels']:>3} {v['first_level_sweeps']:>4} "
                  f"{v['first_level_teps']:8.2e} {ok:>3}")
    if small:
        s = small
        x = f"x{s['speedup_vs_igraph']:.1f}" if s["speedup_vs_igraph"] else "-"
        print(f"{s['graphs_run']} of {s['count']} small graphs (n {s['n_range'][0]}-{s['n_range'][1]}, "
              f"{s['batches_run']} of {s['batches']} vmap batches, graphs per batch by vertex capacity "
              f"{s['batch_sizes']}, max_iters {s['max_iters']}): jaxmatch {s['jaxmatch_s']:.2f}s "
              f"(compile {sum(s['compile_s'].values()):.0f}s), igraph loop {s['igraph_loop_s']:.2f}s for "
              f"{s['igraph_graphs']} graphs, {x}; Q/igraph mean {fmt(s['q_ratio_mean'])}, min {fmt(s['q_ratio_min'])}, "
              f"within 1%: {fmt(s['q_within_1pct'])}")
    if missed:
        print("MODULARITY TARGET MISSED (Q < 0.99 * igraph) on: " + "; ".join(missed))
    if skipped:
        print("SKIPPED or FAILED: " + "; ".join(skipped))


if __name__ == "__main__":
    main(parse_args())
