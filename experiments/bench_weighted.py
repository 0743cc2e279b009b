"""Benchmark: Suitor, Locally-Dominant and b-Suitor (jaxmatch.weighted) against CPU peers.

Builds graphs of the classes in shared/BENCHMARKS.md (experiments/generators.py)
with uniform random weights in (0, 1] (float32), runs the jaxmatch solvers
under ``jax.jit`` (compile time reported apart, then the median of
``--repeats`` runs, ``jax.block_until_ready`` before reading the clock),
checks every answer, and times the peers in the same run:

* NetworKit ``SuitorMatcher`` (sortSuitor, adjacency pre-sorted by
  ``sortEdgesByWeight``; the sort is timed apart) and ``BSuitorMatcher``,
  when ``networkit`` is importable (all CPU threads);
* otherwise, and always on small graphs, the numpy/Python greedy reference
  (:mod:`jaxmatch.weighted.greedy`), and networkx ``max_weight_matching``
  (exact) on tiny graphs for the approximation ratio.

Checks: the matching passes :func:`jaxmatch.certify.check_greedy_dominance`
(it is *the* greedy matching of the shared edge order), all jaxmatch
variants return the same mate array, the weight matches NetworKit's within
``--rtol`` (NetworKit breaks ties of equal float32 weights its own way) and
the greedy reference exactly where it runs. b-Suitor: the b-matching
certificate and NetworKit's weight.

Usage::

    python experiments/bench_weighted.py --small            # CPU smoke test, < 1 min
    python experiments/bench_weighted.py --sizes 1e6,1e7,1e8 # GPU run

Writes JSON to $OUT (if set) or experiments/results/, prints a table last.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import pathlib
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from experiments import generators as gen  # noqa: E402
from jaxmatch import certify  # noqa: E402
from jaxmatch.graph import Graph  # noqa: E402
from jaxmatch.weighted import b_suitor, greedy_matching, locally_dominant, suitor  # noqa: E402

try:
    import networkit as nk
except ImportError:  # optional peer
    nk = None

CLASSES = ("rmat", "delaunay", "rgg", "road", "power_law")


# --------------------------------------------------------------------------
# graphs


def make_csr(kind: str, edges: float, seed: int):
    """A symmetric 0/1 adjacency of class ``kind`` with about ``edges`` undirected edges."""
    m = max(int(edges), 16)
    if kind == "rmat":      # Graph500 kron, edge factor 16 (about 12 undirected edges per vertex after merging)
        return gen.rmat(max(4, round(math.log2(m / 12))), seed=seed)
    if kind == "delaunay":  # about 3 edges per vertex
        return gen.delaunay(max(8, m // 3), seed=seed)
    if kind == "rgg":       # average degree about 0.95 ln n
        n = max(64, int(m / 8))
        for _ in range(3):
            n = max(64, int(2 * m / (0.95 * math.log(n))))
        return gen.random_geometric(n, seed=seed)
    if kind == "road":      # about 1.8 edges per vertex
        side = max(4, int(math.sqrt(m / 1.8)))
        return gen.road_grid(side, side, seed=seed)
    if kind == "power_law":
        return gen.power_law(max(64, m // 7), avg_degree=16, seed=seed)
    raise ValueError(f"unknown class {kind!r}; choose from {CLASSES}")


SMALL_CAPS = dict(vertex_capacity=2048, entry_capacity=8192)  # --small: one compilation per solver


def weighted_graph(A, seed: int, caps=None):
    """Graph with uniform (0, 1] float32 weights on the upper-triangle edges of A."""
    T = sp.triu(A, 1).tocoo()
    w = (1.0 - np.random.default_rng(seed).random(T.nnz)).astype(np.float32)
    return Graph.from_edges(T.row, T.col, w, n=A.shape[0], **(caps or {})), (T.row, T.col, w)


# --------------------------------------------------------------------------
# timing


def timed(f, *args, repeats: int):
    t = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    first = time.perf_counter() - t
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = jax.block_until_ready(f(*args))
        runs.append(time.perf_counter() - t)
    med = statistics.median(runs)
    return out, dict(compile_s=max(first - med, 0.0), median_s=med, runs_s=runs)


def host_timed(f, repeats: int):
    runs, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        runs.append(time.perf_counter() - t)
    return out, dict(median_s=statistics.median(runs), runs_s=runs)


def copy_bandwidth():
    """Device copy bandwidth (read + write bytes per second) of a 256 MiB float32 array."""
    x = jnp.ones(1 << 26, jnp.float32)
    f = jax.jit(lambda x: x * 2.0)
    _, t = timed(f, x, repeats=5)
    return 2 * x.nbytes / t["median_s"]


# --------------------------------------------------------------------------
# peers


def nk_graph(n, u, v, w):
    G = nk.Graph(n, weighted=True)
    G.addEdges((w.astype(np.float64), (u.astype(np.uint64), v.astype(np.uint64))))
    return G


def run_networkit(n, u, v, w, b, repeats):
    out = {}
    G = nk_graph(n, u, v, w)
    t = time.perf_counter()
    nk.graphtools.sortEdgesByWeight(G, True)
    out["sort_s"] = time.perf_counter() - t

    def one():
        m = nk.matching.SuitorMatcher(G, True, False)
        m.run()
        return m.getMatching()

    M, tm = host_timed(one, repeats)
    out["suitor"] = dict(tm, weight=float(M.weight(G)), cardinality=int(M.size(G)))

    def bee():
        m = nk.matching.BSuitorMatcher(G, int(b))
        m.run()
        return m.getBMatching()

    BM, tb = host_timed(bee, repeats)
    out["b_suitor"] = dict(tb, weight=float(BM.weight()), cardinality=int(BM.size()))
    out["threads"] = nk.getMaxNumberOfThreads()
    return out


def networkx_optimum(u, v, w):
    import networkx as nx
    G = nx.Graph()
    G.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.astype(float).tolist()))
    return float(sum(G[a][c]["weight"] for a, c in nx.max_weight_matching(G)))


# --------------------------------------------------------------------------
# one graph


def bench_graph(kind, size, args, bandwidth, rows):
    A = make_csr(kind, size, args.seed)
    g, (u, v, w) = weighted_graph(A, args.seed, SMALL_CAPS if args.small else None)
    n, m, ne = int(g.n), int(g.n_edges), int(g.n_entries)
    print(f"\n{kind} n={n} edges={m} entries={ne}", flush=True)
    rec = dict(graph=kind, target_edges=size, n=n, edges=m, entries=ne, seed=args.seed,
               capacities=g.capacities(), algorithms={}, peers={})
    algos = {
        "suitor": lambda g: suitor(g, batch=args.batch, lanes=args.lanes),
        "suitor_dense": lambda g: suitor(g, sorted_adjacency=False),
        "ld": lambda g: locally_dominant(g, lanes=args.lanes),
        "ld_dense": lambda g: locally_dominant(g, sorted_adjacency=False),
    }
    mates = {}
    for name in args.algos:
        if name == "b_suitor":
            continue
        res, t = timed(jax.jit(algos[name]), g, repeats=args.repeats)
        mate = np.asarray(res.mate)[:n]
        mates[name] = mate
        assert int(res.status) == 0, f"{name} did not converge"
        rec["algorithms"][name] = dict(t, weight=float(res.weight), cardinality=int(res.cardinality),
                                       stats={k: int(x) for k, x in res.stats.items()},
                                       edges_per_s=m / t["median_s"])
        print(f"  {name:13s} {t['median_s'] * 1e3:9.2f} ms  compile {t['compile_s']:.1f} s  "
              f"weight {float(res.weight):.6g}  {rec['algorithms'][name]['stats']}", flush=True)
    first = None
    for name, mate in mates.items():  # one certificate, then equality with the certified answer
        if first is None:
            t = time.perf_counter()
            certify.check_greedy_dominance(g, mate)
            rec["certificate_s"] = time.perf_counter() - t
            first = name
        else:
            np.testing.assert_array_equal(mate, mates[first], err_msg=f"{name} differs from {first}")
    if "b_suitor" in args.algos:
        fb = jax.jit(lambda g: b_suitor(g, args.b, batch=args.batch, lanes=args.lanes))
        res, t = timed(fb, g, repeats=args.repeats)
        assert int(res.status) == 0, "b_suitor did not converge"
        certify.check_greedy_b_dominance(g, args.b, np.asarray(res.matched)[:ne])
        rec["algorithms"]["b_suitor"] = dict(t, b=args.b, weight=float(res.weight),
                                             cardinality=int(res.cardinality),
                                             stats={k: int(x) for k, x in res.stats.items()},
                                             edges_per_s=m / t["median_s"])
        print(f"  b_suitor(b={args.b}) {t['median_s'] * 1e3:9.2f} ms  compile {t['compile_s']:.1f} s  "
              f"weight {float(res.weight):.6g}", flush=True)
    rec["bandwidth_floor_s"] = ne * 12 / bandwidth  # one pass over src, dst, weights

    if mates and m <= args.greedy_max_edges:
        ref, tg = host_timed(lambda: greedy_matching(g), 1)
        np.testing.assert_array_equal(next(iter(mates.values())), ref, err_msg="differs from greedy")
        rec["peers"]["numpy_greedy"] = dict(tg)
    if mates and m <= args.networkx_max_edges:
        opt, tx = host_timed(lambda: networkx_optimum(u, v, w), 1)
        wt = next(iter(rec["algorithms"].values()))["weight"]
        rec["peers"]["networkx_optimum"] = dict(tx, weight=opt, ratio=wt / opt if opt else 1.0)
        print(f"  networkx optimum {opt:.6g}: ratio {wt / opt if opt else 1.0:.4f}")
    if nk is not None:
        p = run_networkit(n, u, v, w, args.b, args.repeats)
        rec["peers"]["networkit"] = p
        for ours, theirs in (("suitor", "suitor"), ("b_suitor", "b_suitor")):
            if ours in rec["algorithms"]:
                a, pw = rec["algorithms"][ours]["weight"], p[theirs]["weight"]
                rel = abs(a - pw) / max(pw, 1e-30)
                assert rel <= args.rtol, f"{ours}: weight {a} vs NetworKit {pw} (rel {rel:.2e})"
                rec["algorithms"][ours]["networkit_rel_weight_diff"] = rel
        print(f"  networkit ({p['threads']} threads): suitor {p['suitor']['median_s'] * 1e3:.2f} ms "
              f"(+ sort {p['sort_s'] * 1e3:.1f} ms), b-suitor {p['b_suitor']['median_s'] * 1e3:.2f} ms")
    for name, a in rec["algorithms"].items():
        peer = None
        if nk is not None:
            peer = rec["peers"]["networkit"]["b_suitor" if name == "b_suitor" else "suitor"]["median_s"]
        elif "numpy_greedy" in rec["peers"] and name != "b_suitor":
            peer = rec["peers"]["numpy_greedy"]["median_s"]
        a["speedup_vs_peer"] = peer / a["median_s"] if peer else None
        rows.append((kind, m, name, a["median_s"] * 1e3, a["edges_per_s"] / 1e6,
                     None if peer is None else peer * 1e3, a["speedup_vs_peer"]))
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes for a CPU smoke test")
    ap.add_argument("--sizes", default="1e6,1e7", help="comma-separated target edge counts")
    ap.add_argument("--classes", default=",".join(CLASSES))
    ap.add_argument("--algos", default="suitor,suitor_dense,ld,b_suitor")
    ap.add_argument("--b", type=int, default=2, help="b of b-Suitor (all vertices)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=None, help="Suitor/b-Suitor vertices per round")
    ap.add_argument("--lanes", type=int, default=None, help="adjacency entries examined per round")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=1e-4, help="weight tolerance against NetworKit")
    ap.add_argument("--greedy-max-edges", type=int, default=2_000_000)
    ap.add_argument("--networkx-max-edges", type=int, default=3_000)
    args = ap.parse_args(argv)
    args.repeats = max(args.repeats, 5)
    sizes = [2e3] if args.small else [float(s) for s in args.sizes.split(",")]
    classes = args.classes.split(",")
    args.algos = args.algos.split(",")
    if nk is None:
        print("note: networkit is not installed; peers are the numpy greedy reference "
              "(and networkx on tiny graphs)")
    device = jax.devices()[0]
    bandwidth = copy_bandwidth()
    print(f"device: {device.device_kind} ({device.platform}), jax {jax.__version__}, "
          f"copy bandwidth {bandwidth / 1e9:.1f} GB/s")
    rows, records = [], []
    out_dir = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"weighted-{device.platform}-{stamp}.json"
    for kind in classes:
        for size in sizes:
            records.append(bench_graph(kind, size, args, bandwidth, rows))
            path.write_text(json.dumps(dict(  # after every graph, so a stopped run keeps its results
                benchmark="weighted", date=stamp, device=device.device_kind, platform=device.platform,
                jax_version=jax.__version__, networkit=None if nk is None else nk.__version__,
                copy_bandwidth_Bps=bandwidth, args={k: v for k, v in vars(args).items()}, graphs=records),
                indent=1))
    peer = "NetworKit" if nk is not None else "numpy greedy"
    print(f"\nwrote {path}\n")
    print(f"{'graph':10s} {'edges':>11s} {'algorithm':13s} {'ms':>9s} {'Medges/s':>9s} "
          f"{peer + ' ms':>16s} {'speedup':>8s}")
    for kind, m, name, ms, meps, pms, sp_ in rows:
        print(f"{kind:10s} {m:11d} {name:13s} {ms:9.2f} {meps:9.1f} "
              f"{'-' if pms is None else f'{pms:.2f}':>16s} {'-' if sp_ is None else f'{sp_:.2f}':>8s}")
    with_peer = [r for r in rows if r[6] and r[1] >= 10_000_000 and r[2] == "suitor"]
    if with_peer:
        gm = math.exp(sum(math.log(r[6]) for r in with_peer) / len(with_peer))
        print(f"geometric-mean Suitor speedup at >= 10M edges: {gm:.2f}x")


if __name__ == "__main__":
    main()
