"""Benchmark: jaxmatch.louvain against igraph and networkx, side by side in one run.

Two parts (Paper III of the thesis; issue 8):

1. One graph at a time, on the paper's classes from ``experiments/generators.py``
   (Delaunay = mesh-like, random geometric, road-like grid, power-law), up to
   ``--sizes``. jaxmatch (jit, warmed up, compile time reported apart, median
   of ``--repeats`` runs, ``jax.block_until_ready``) against igraph's
   ``community_multilevel`` (C, CPU) and, below ``--nx-max-edges``,
   networkx's ``louvain_communities``. Every answer is checked: the partition
   and its modularity by ``jaxmatch.certify``, the modularity against the peers'
   (target: within 1% of igraph). Work: the first level (``max_levels=1``) is
   timed apart and gives the first-level throughput, entries x iterations /
   second (the paper's TEPS), next to one pass over the entry arrays at the
   device's measured copy bandwidth.
2. Many small graphs: ``--batch-graphs`` planted-partition graphs of
   ``--batch-n`` vertices (full run: 100,000 graphs of 20-1,000 vertices),
   grouped by capacity and run through ``jax.vmap`` in batches of
   ``--batch-size``, against igraph in a Python loop. Every answer's
   modularity is recomputed by igraph (``Graph.modularity`` of our labels);
   ``--certify`` graphs are also checked by ``jaxmatch.certify``.

Writes JSON to $OUT (or experiments/results/) and prints a table last.
``--small`` runs in well under a minute on a laptop CPU.

GPU determinism: XLA's float scatter-adds are unordered on GPUs; pass
``--deterministic`` to set ``--xla_gpu_deterministic_ops=true`` (before JAX
starts) so two runs give identical labels there too.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true", help="CPU smoke test (under a minute)")
    p.add_argument("--sizes", type=int, nargs="+", help="vertex counts per class")
    p.add_argument("--classes", nargs="+", default=["delaunay", "rgg", "road", "power_law"])
    p.add_argument("--repeats", type=int, default=5, help="timed runs per solver (median)")
    p.add_argument("--peer-repeats", type=int, help="timed runs for igraph / networkx (default: --repeats)")
    p.add_argument("--nx-max-edges", type=int, default=100_000, help="skip networkx above this many edges")
    p.add_argument("--batch-graphs", type=int, help="number of small graphs (0: skip part 2)")
    p.add_argument("--batch-n", type=int, nargs=2, help="vertex range of the small graphs")
    p.add_argument("--batch-size", type=int, help="graphs per vmap batch")
    p.add_argument("--min-cap", type=int, help="smallest vertex capacity class of the small graphs")
    p.add_argument("--batch-repeats", type=int, help="timed passes over all small graphs (median)")
    p.add_argument("--certify", type=int, help="small graphs checked by jaxmatch.certify (-1: all)")
    p.add_argument("--deterministic", action="store_true", help="XLA deterministic GPU scatters")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    small = a.small
    a.sizes = a.sizes or ([2000] if small else [1 << 16, 1 << 18, 1 << 20, 1 << 22])
    a.peer_repeats = a.peer_repeats or (3 if small else a.repeats)
    a.batch_graphs = (160 if small else 100_000) if a.batch_graphs is None else a.batch_graphs
    a.batch_n = a.batch_n or ([20, 120] if small else [20, 1000])
    a.batch_size = a.batch_size or (80 if small else 2048)
    a.min_cap = a.min_cap or (128 if small else 64)
    a.batch_repeats = a.batch_repeats or (3 if small else 5)
    a.certify = a.certify if a.certify is not None else (-1 if small else 2000)
    return a


ARGS = parse_args()
if ARGS.deterministic:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true").strip()

import igraph as ig  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxmatch  # noqa: E402
from experiments import generators as gen  # noqa: E402
from jaxmatch import certify  # noqa: E402
from jaxmatch.community import louvain  # noqa: E402
from jaxmatch.graph import CSR, Graph, next_pow2  # noqa: E402

try:
    import networkx as nx
except ImportError:  # pragma: no cover
    nx = None
    print("note: networkx not installed, its column is skipped")


def median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def copy_bandwidth(small):
    """Device copy bandwidth (bytes read + written per second) of a float32 array."""
    x = jnp.ones(1 << (22 if small else 27), jnp.float32)
    f = jax.jit(lambda x: x * 1.0001)
    jax.block_until_ready(f(x))
    t, _ = median_time(lambda: jax.block_until_ready(f(x)), 5)
    return 2 * x.size * 4 / t


# --------------------------------------------------------------------------
# part 1: one graph at a time


def make_graph(cls, n, seed):
    if cls == "delaunay":
        return gen.delaunay(n, seed=seed)
    if cls == "rgg":
        return gen.random_geometric(n, seed=seed)
    if cls == "road":
        side = int(round(np.sqrt(n)))
        return gen.road_grid(side, side, seed=seed)
    if cls == "power_law":
        return gen.power_law(n, avg_degree=16, seed=seed)
    raise SystemExit(f"unknown class {cls!r}")


def run_peers(A, repeats, nx_max_edges, seed):
    coo = A.tocoo()
    up = coo.row < coo.col
    G = ig.Graph(n=A.shape[0], edges=np.c_[coo.row[up], coo.col[up]])

    def igraph_run():
        random.seed(seed)
        return G.community_multilevel()

    t_ig, c = median_time(igraph_run, repeats)
    out = dict(igraph_s=t_ig, igraph_q=G.modularity(c.membership), igraph_k=len(set(c.membership)))
    if nx is not None and up.sum() <= nx_max_edges:
        H = nx.Graph()
        H.add_nodes_from(range(A.shape[0]))
        H.add_edges_from(zip(coo.row[up].tolist(), coo.col[up].tolist()))
        t_nx, comms = median_time(lambda: nx.community.louvain_communities(H, seed=seed), repeats)
        out.update(networkx_s=t_nx, networkx_q=nx.community.modularity(H, comms))
    return G, out


def bench_graph(cls, n, args, bandwidth):
    t = time.perf_counter()
    A = make_graph(cls, n, args.seed)
    g = jaxmatch.from_scipy(A, kind="graph", weighted=False)
    build_s = time.perf_counter() - t
    entries = int(g.n_entries)
    row = dict(graph=cls, n=int(g.n), edges=int(g.n_edges), entries=entries,
               vertex_cap=g.vertex_cap, entry_cap=g.entry_cap, build_s=build_s)

    solve = jax.jit(lambda g: louvain(g))
    first = jax.jit(lambda g: louvain(g, max_levels=1))
    t = time.perf_counter()
    out = jax.block_until_ready(solve(g))
    first_call = time.perf_counter() - t
    t_jm, out = median_time(lambda: jax.block_until_ready(solve(g)), args.repeats)
    t = time.perf_counter()
    jax.block_until_ready(first(g))
    first_call1 = time.perf_counter() - t
    t_l0, out1 = median_time(lambda: jax.block_until_ready(first(g)), args.repeats)

    labels = np.asarray(out.labels)[: row["n"]]
    q = float(out.modularity)
    certify.check_partition(g, labels)
    # float32 scatter-adds over communities of up to millions of vertices: allow 1e-4 of the
    # size of Eq. (1)'s terms; the float64 value is recorded beside it
    certify.check_modularity(g, labels, q, rtol=1e-4)
    q64 = certify.modularity_numpy(g, labels)[0]
    n_levels = int(out.stats["levels"])
    it0 = int(out1.stats["iterations"][0])
    G, peers = run_peers(A, args.peer_repeats, args.nx_max_edges, args.seed)
    q_ig_of_ours = G.modularity(labels.tolist())
    row.update(
        jaxmatch_s=t_jm, compile_s=max(first_call - t_jm, 0.0), jaxmatch_q=q, jaxmatch_q_float64=q64,
        jaxmatch_q_by_igraph=q_ig_of_ours, jaxmatch_k=int(out.stats["communities"]),
        levels=n_levels, iterations=np.asarray(out.stats["iterations"])[:n_levels].tolist(),
        vertices_per_level=np.asarray(out.stats["vertices"])[:n_levels].tolist(),
        status=int(out.status), first_level_s=t_l0, first_level_compile_s=max(first_call1 - t_l0, 0.0),
        first_level_iterations=it0, first_level_teps=entries * it0 / t_l0,
        edge_pass_floor_s=entries * 12 / bandwidth,
        **peers)
    row["speedup_vs_igraph"] = row["igraph_s"] / t_jm
    row["q_ratio_igraph"] = q / row["igraph_q"]
    row["q_ok"] = bool(q >= 0.99 * row["igraph_q"] and abs(q_ig_of_ours - q64) <= 1e-9)
    if "networkx_s" in row:
        row["speedup_vs_networkx"] = row["networkx_s"] / t_jm
    return row


# --------------------------------------------------------------------------
# part 2: many small graphs


def small_graphs(count, n_range, seed):
    """Planted-partition graphs: (u, v, n) with 2-8 groups, average degree about 8, 80% inside."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        groups = int(rng.integers(2, 9))
        size = -(-n // groups)
        m = 4 * n
        u = rng.integers(0, n, m)
        inside = rng.random(m) < 0.8
        start = (u // size) * size
        span = np.minimum(size, n - start)
        v = np.where(inside, start + (rng.random(m) * span).astype(np.int64), rng.integers(0, n, m))
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        keys = np.unique(lo[lo != hi] * n + hi[lo != hi])
        out.append((keys // n, keys % n, n))
    return out


def batch_of(graphs, vcap, ecap):
    """A stacked unweighted Graph (as jaxmatch.stack builds it) from (u, v, n) lists, in numpy."""
    b = len(graphs)
    indptr = np.zeros((b, vcap + 1), np.int32)
    src = np.full((b, ecap), vcap, np.int32)
    dst = np.full((b, ecap), vcap, np.int32)
    w = np.zeros((b, ecap), np.float32)
    ns, ms, es = np.zeros(b, np.int32), np.zeros(b, np.int32), np.zeros(b, np.int32)
    for i, (u, v, n) in enumerate(graphs):
        s, d = np.concatenate([u, v]), np.concatenate([v, u])
        order = np.lexsort((d, s))
        s, d = s[order], d[order]
        k = s.size
        src[i, :k], dst[i, :k], w[i, :k] = s, d, 1.0
        indptr[i, 1:] = np.cumsum(np.bincount(s, minlength=vcap))
        ns[i], ms[i], es[i] = n, u.size, k
    put = jax.device_put
    adj = CSR(put(indptr), put(dst), put(src), put(w.astype(jnp.dtype(jnp.float32))))
    return Graph(adj=adj, n=put(ns), n_edges=put(ms), n_entries=put(es), vertex_cap=vcap,
                 entry_cap=ecap, weighted=False)


def check_batch_builder(graphs, vcap, ecap):
    """batch_of must give exactly what Graph.from_edges + jaxmatch.stack give."""
    mine = batch_of(graphs, vcap, ecap)
    ref = jaxmatch.stack([Graph.from_edges(u, v, n=n, vertex_capacity=vcap, entry_capacity=ecap)
                          for u, v, n in graphs])
    for a, b in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(ref)):
        assert np.array_equal(np.asarray(a), np.asarray(b)), "batch builder differs from jaxmatch.stack"


def bench_small_graphs(args):
    graphs = small_graphs(args.batch_graphs, args.batch_n, args.seed)
    # capacity classes: vertex capacity next_pow2(n) (at least --min-cap), entry capacity per class
    classes = {}
    for i, (u, v, n) in enumerate(graphs):
        classes.setdefault(max(args.min_cap, next_pow2(n)), []).append(i)
    solve = jax.jit(jax.vmap(lambda g: louvain(g)))
    batches, compile_s = [], 0.0
    for vcap, idx in sorted(classes.items()):
        ecap = next_pow2(max(2 * graphs[i][0].size for i in idx))
        for s in range(0, len(idx), args.batch_size):
            part = idx[s:s + args.batch_size]
            part = part + [part[-1]] * (args.batch_size - len(part))   # full batches: one shape
            batches.append((part, batch_of([graphs[i] for i in part], vcap, ecap)))
        check_batch_builder([graphs[i] for i in idx[:3]], vcap, ecap)
        t = time.perf_counter()
        jax.block_until_ready(solve(batches[-1][1]))
        compile_s += time.perf_counter() - t

    def run_all():
        return [solve(b) for _, b in batches]

    t_jm, outs = median_time(lambda: jax.block_until_ready(run_all()), args.batch_repeats)
    labels = [None] * len(graphs)
    qs = np.zeros(len(graphs))
    status = np.zeros(len(graphs), np.int32)
    for (part, _), out in zip(batches, outs):
        lab, q, st = np.asarray(out.labels), np.asarray(out.modularity), np.asarray(out.status)
        for j, i in enumerate(part):
            labels[i] = lab[j, :graphs[i][2]]
            qs[i], status[i] = q[j], st[j]

    igs = [ig.Graph(n=n, edges=np.c_[u, v]) for u, v, n in graphs]

    def igraph_all():
        random.seed(args.seed)
        return [G.community_multilevel() for G in igs]

    t_ig, comms = median_time(igraph_all, args.peer_repeats)
    q_ig = np.array([G.modularity(c.membership) for G, c in zip(igs, comms)])
    q_ours_by_ig = np.array([G.modularity(lab.tolist()) for G, lab in zip(igs, labels)])
    assert np.allclose(q_ours_by_ig, qs, rtol=1e-5, atol=1e-6), "modularity differs from igraph's recomputation"
    check = range(len(graphs)) if args.certify < 0 else \
        np.random.default_rng(args.seed).choice(len(graphs), min(args.certify, len(graphs)), replace=False)
    for i in check:
        u, v, n = graphs[i]
        g = Graph.from_edges(u, v, n=n)
        certify.check_partition(g, labels[i])
        certify.check_modularity(g, labels[i], qs[i], rtol=1e-5)
    ratio = qs / q_ig
    return dict(graph="small planted", count=len(graphs), n_range=list(args.batch_n),
                batches=len(batches), batch_size=args.batch_size, capacity_classes=sorted(classes),
                jaxmatch_s=t_jm, compile_s=compile_s, igraph_s=t_ig, speedup_vs_igraph=t_ig / t_jm,
                q_ratio_mean=float(ratio.mean()), q_ratio_min=float(ratio.min()),
                q_within_1pct=float(np.mean(ratio >= 0.99)), hit_max_iters=int(status.sum()),
                certified=len(check), graphs_per_s=len(graphs) / t_jm)


# --------------------------------------------------------------------------


def main(args):
    dev = jax.devices()[0]
    print(f"device: {dev.device_kind} ({dev.platform}), jax {jax.__version__}")
    bandwidth = copy_bandwidth(args.small)
    print(f"copy bandwidth: {bandwidth / 1e9:.1f} GB/s")
    rows = []
    for cls in args.classes:
        for n in args.sizes:
            row = bench_graph(cls, n, args, bandwidth)
            rows.append(row)
            print(f"  {cls} n={row['n']}: {row['jaxmatch_s']:.3f}s Q={row['jaxmatch_q']:.4f} "
                  f"igraph {row['igraph_s']:.3f}s Q={row['igraph_q']:.4f}", flush=True)
    small = bench_small_graphs(args) if args.batch_graphs else None

    result = dict(device=dev.device_kind, platform=dev.platform, jax_version=jax.__version__,
                  host=platform.node(), copy_bandwidth_Bps=bandwidth, args=vars(args),
                  rows=rows, small_graphs=small, date=time.strftime("%Y-%m-%d %H:%M:%S"))
    out_dir = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"louvain_{dev.platform}_{time.strftime('%Y%m%d_%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=1, default=float))

    print(f"\nwrote {path}")
    head = (f"{'graph':<10}{'n':>9}{'edges':>10} {'jm s':>8} {'compile':>8} {'igraph s':>9} "
            f"{'nx s':>8} {'x igraph':>8} {'Q jm':>7} {'Q ig':>7} {'Q nx':>7} {'Q/ig':>6} "
            f"{'lvls':>4} {'it0':>4} {'TEPS L0':>8} {'ok':>3}")
    print(head)
    for r in rows:
        nx_s = f"{r['networkx_s']:8.3f}" if "networkx_s" in r else f"{'-':>8}"
        nx_q = f"{r['networkx_q']:7.4f}" if "networkx_q" in r else f"{'-':>7}"
        print(f"{r['graph']:<10}{r['n']:>9}{r['edges']:>10} {r['jaxmatch_s']:8.3f} {r['compile_s']:8.2f} "
              f"{r['igraph_s']:9.3f} {nx_s} {r['speedup_vs_igraph']:8.2f} {r['jaxmatch_q']:7.4f} "
              f"{r['igraph_q']:7.4f} {nx_q} {r['q_ratio_igraph']:6.3f} {r['levels']:>4} "
              f"{r['first_level_iterations']:>4} {r['first_level_teps']:8.2e} {'yes' if r['q_ok'] else 'NO':>3}")
    if small:
        s = small
        print(f"{s['count']} small graphs (n {s['n_range'][0]}-{s['n_range'][1]}, {s['batches']} vmap batches "
              f"of {s['batch_size']}): jaxmatch {s['jaxmatch_s']:.3f}s (compile {s['compile_s']:.1f}s), "
              f"igraph loop {s['igraph_s']:.3f}s, x{s['speedup_vs_igraph']:.2f}; Q/igraph mean "
              f"{s['q_ratio_mean']:.4f} min {s['q_ratio_min']:.4f}, within 1%: {100 * s['q_within_1pct']:.1f}%")
    failed = [r["graph"] for r in rows if not r["q_ok"]]
    if failed:
        print(f"MODULARITY TARGET MISSED (Q < 0.99 * igraph) on: {', '.join(failed)}")


if __name__ == "__main__":
    main(ARGS)
