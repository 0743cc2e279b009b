"""Maximum flow benchmark (issue 5): jaxmatch WBPR push-relabel on the GPU against OR-Tools and scipy on its CPU.

One run covers the issue's set, every instance with at least 1M arcs except
the paper's own Washington-RLG size (for the comparison with its Table 1):

* Washington RLG (``rlg``) and Goldfarb-Grigoriadis genrmf (``genrmf``), the
  DIMACS generators of the paper's S0 and S1, at 1M-10M arcs (rlg18 is the
  paper's S0, genrmf21 its S1);
* road-like grids (``road``) and power-law graphs (``power_law``) with 20
  sources and 20 sinks (unit capacities, as the paper's SNAP runs; the peers
  get an explicit super source and super sink);
* bipartite matching as unit-capacity flow (``matching``), also against
  jaxmatch's G-PR matching (``maximum_matching(method="pr")``) and scipy's
  Hopcroft-Karp.

jaxmatch runs in both residual layouts (``bcsr``, ``rcsr``; ``bcsr-search``
finds reverse arcs by the paper's binary search instead of the stored index,
on request), every instance padded to one shared capacity so that the solver
compiles once. Each variant: a warm-up call (its extra time is the compile
time), then the median of ``--repeats`` runs. Every answer is checked by the
flow and cut certificates (a feasible flow and a cut of the same value prove
both optimal) and against the peers' values. OR-Tools ``SimpleMaxFlow``
(push-relabel, C++) runs alone in a forked process, limited to
``--ortools-limit`` seconds; scipy's ``maximum_flow`` (Dinic) runs in a forked
process beside the GPU runs, given up after ``--peer-limit`` seconds. A time
budget (``--budget``) keeps the whole run inside one device call: instances
that would not fit are skipped, and a variant whose warm-up shows that five
runs would not fit gets fewer (recorded; one whose warm-up took more than half
of the budget left, when an earlier instance compiled the shared capacity,
is timed by that warm-up alone). Writes JSON to $OUT (or
experiments/results) and prints the table last, with the geometric-mean
speed-up over OR-Tools on the instances with at least 1M arcs and the
paper's published GPU times (Tables 1 and 2; RTX 3090) for the instances of
the same class and size.

    python experiments/bench_flow.py                          # the issue-5 set (GPU, < 8 min)
    python experiments/bench_flow.py --sizes rlg:19,21 genrmf:18
    python experiments/bench_flow.py --sizes genrmf:18,21 --variants bcsr --repeats 1 --budget 540
    python experiments/bench_flow.py --small                  # CPU smoke test (< 1 min)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import generators as gen  # noqa: E402
from experiments.common import FAST_FLAGS, Forked, knobs, timed  # noqa: E402


# class: scales (log2 of the vertex count), cheapest first so that the budget cuts the most expensive
SIZES = {"matching": [18], "power_law": [20], "rlg": [18, 21], "genrmf": [18, 21], "road": [20]}
# DIMACS meshes (``mesh:50`` is a 50 x 50 mesh: its "scale" is the side, not a log2), on request only
SIDES = {"mesh"}
SMALL = {"matching": [9], "power_law": [10], "rlg": [10], "genrmf": [9], "road": [10]}
ORDER = ["matching18", "power_law20", "rlg18", "genrmf18", "road20", "rlg21", "genrmf21"]
POWER_LAW_DEGREE = 5  # 2^20 vertices give about 5.2M arcs, web-Google's size

# WBPR paper (RTX 3090), execution times in ms of its four variants: Table 1 (max flow) for the same
# generator and size (S0, S1) or the SNAP graph of the same class and size; Table 2 (matching) for the
# KONECT bipartite graph of about the same size (a real graph, not a random one)
PAPER = {
    ("rlg", 18): dict(table=1, graph="Washington-RLG (S0)", vertices=262_146, edges=785_920,
                      ms={"TC+RCSR": 162_792, "TC+BCSR": 132_482, "VC+RCSR": 287_390, "VC+BCSR": 99_410}),
    ("genrmf", 21): dict(table=1, graph="Genrmf (S1)", vertices=2_097_152, edges=10_403_840,
                         ms={"TC+RCSR": 2_138, "TC+BCSR": 2_900, "VC+RCSR": 2_685, "VC+BCSR": 2_503}),
    ("road", 20): dict(table=1, graph="roadNet-PA (R2)", vertices=1_088_092, edges=1_541_898,
                       ms={"TC+RCSR": 27_667, "TC+BCSR": 14_822, "VC+RCSR": 43_283, "VC+BCSR": 18_078}),
    ("road", 21): dict(table=1, graph="roadNet-CA (R1)", vertices=1_965_206, edges=2_766_607,
                       ms={"TC+RCSR": 57_966, "TC+BCSR": 70_468, "VC+RCSR": 74_707, "VC+BCSR": 32_842}),
    ("power_law", 20): dict(table=1, graph="web-Google (R4)", vertices=875_713, edges=5_105_039,
                            ms={"TC+RCSR": 28_053, "TC+BCSR": 12_165, "VC+RCSR": 17_664, "VC+BCSR": 7_927}),
    ("matching", 18): dict(table=2, graph="BookCrossing (B9)", vertices=445_801, edges=1_149_739,
                           ms={"TC+RCSR": 184_985, "TC+BCSR": 128_079, "VC+RCSR": 64_337, "VC+BCSR": 70_531}),
}


def parse_sizes(tokens):
    """``["rlg:19,21", "road:20"]`` -> {"rlg": [19, 21], "road": [20]}."""
    out = {}
    for tok in tokens:
        cls, _, scales = tok.partition(":")
        if (cls not in SIZES and cls not in SIDES) or not scales:
            raise SystemExit(f"--sizes takes CLASS:SCALE[,SCALE...] with CLASS in {sorted([*SIZES, *SIDES])}, "
                             f"got {tok!r}")
        out[cls] = [int(x) for x in scales.split(",")]
    return out


def terminals(A, k, seed):
    """k sources near a root and k sinks among the 25% farthest vertices (BFS hops), as the paper picks pairs."""
    from scipy.sparse.csgraph import breadth_first_order, connected_components
    rng = np.random.default_rng(seed)
    _, comp = connected_components(A, directed=False)
    big = np.flatnonzero(comp == np.bincount(comp).argmax())
    root = int(rng.choice(big))
    order, pred = breadth_first_order(A, root, directed=False)
    depth = np.zeros(A.shape[0], np.int64)
    for v in order[1:]:  # order is BFS order, so the predecessor's depth is final
        depth[v] = depth[pred[v]] + 1
    far = order[depth[order] >= np.quantile(depth[order], 0.75)]
    near = order[depth[order] <= np.quantile(depth[order], 0.25)]
    sinks = rng.choice(far, min(k, far.size), replace=False)
    sources = rng.choice(np.setdiff1d(near, sinks), min(k, near.size), replace=False)
    return np.sort(sources), np.sort(sinks)


def build(cls, scale, seed=1):
    """(tail, head, cap, sources, sinks, n, extra) for one instance."""
    if cls == "rlg":
        t, h, c, s, tt, n = gen.washington_rlg(2 ** (scale // 2), 2 ** (scale - scale // 2), seed=seed)
        return t, h, c, np.array([s]), np.array([tt]), n, {}
    if cls == "genrmf":
        a = 2 ** round(scale / 3)
        t, h, c, s, tt, n = gen.genrmf(a, max(2, 2 ** scale // (a * a)), seed=seed)
        return t, h, c, np.array([s]), np.array([tt]), n, {}
    if cls == "mesh":
        t, h, c, s, tt, n = gen.dimacs_mesh(scale, scale, seed=seed)
        return t, h, c, np.array([s]), np.array([tt]), n, {}
    if cls in ("power_law", "road"):
        A = gen.power_law(2 ** scale, avg_degree=POWER_LAW_DEGREE, seed=seed) if cls == "power_law" else \
            gen.road_grid(2 ** (scale // 2), 2 ** (scale - scale // 2), seed=seed)
        coo = A.tocoo()
        sources, sinks = terminals(A, 20, seed)
        return (coo.row.astype(np.int32), coo.col.astype(np.int32), np.ones(coo.nnz, np.int32),
                sources, sinks, A.shape[0], {})
    if cls == "matching":
        B = gen.random_bipartite(2 ** scale, 2 ** scale, 4, seed=seed).tocoo()
        nr, nc = B.shape
        t = np.concatenate([B.row, np.full(nr, nr + nc), nr + np.arange(nc)])
        h = np.concatenate([nr + B.col, np.arange(nr), np.full(nc, nr + nc + 1)])
        return (t.astype(np.int32), h.astype(np.int32), np.ones(t.size, np.int32),
                np.array([nr + nc]), np.array([nr + nc + 1]), nr + nc + 2, dict(bipartite=B))
    raise ValueError(cls)


def with_super_terminals(t, h, c, sources, sinks, n):
    """Single-terminal copy for the peers: S = n joined to every source, every sink to T = n + 1."""
    if sources.size == 1 and sinks.size == 1:
        return t, h, c, int(sources[0]), int(sinks[0]), n
    out_cap = np.bincount(t, c.astype(np.int64), minlength=n)
    in_cap = np.bincount(h, c.astype(np.int64), minlength=n)
    S, T = n, n + 1
    t2 = np.concatenate([t, np.full(sources.size, S), sinks]).astype(np.int32)
    h2 = np.concatenate([h, sources, np.full(sinks.size, T)]).astype(np.int32)
    c2 = np.concatenate([c, np.maximum(out_cap[sources], 1), np.maximum(in_cap[sinks], 1)]).astype(np.int32)
    return t2, h2, c2, S, T, n + 2


def scipy_flow(t, h, c, s, tt, n):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow
    A = sp.csr_array((c.astype(np.int32), (t, h)), shape=(n, n))
    A.sum_duplicates()

    def run():
        t0 = time.perf_counter()
        v = int(maximum_flow(A, s, tt, method="dinic").flow_value)
        return time.perf_counter() - t0, v
    return run


def ortools_flow(t, h, c, s, tt):
    from ortools.graph.python import max_flow

    def run():
        t0 = time.perf_counter()
        smf = max_flow.SimpleMaxFlow()
        smf.add_arcs_with_capacity(t.astype(np.int32), h.astype(np.int32), c.astype(np.int64))
        t1 = time.perf_counter()
        if smf.solve(int(s), int(tt)) != smf.OPTIMAL:
            raise RuntimeError("OR-Tools SimpleMaxFlow did not reach OPTIMAL")
        return time.perf_counter() - t1, int(smf.optimal_flow()), t1 - t0
    return run


def hopcroft_karp(B):
    from scipy.sparse.csgraph import maximum_bipartite_matching
    A = B.tocsr()

    def run():
        t0 = time.perf_counter()
        v = int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum())
        return time.perf_counter() - t0, v
    return run


# --------------------------------------------------------------------------


def geomean(xs):
    xs = [x for x in xs if x and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", nargs="+", default=None,
                   help="CLASS:SCALE[,SCALE...] (log2 vertex counts; for mesh the side), e.g. rlg:19,21 "
                   "genrmf:18 mesh:30,50; "
                   "default: the issue-5 set")
    p.add_argument("--variants", nargs="+", default=["bcsr", "rcsr"],
                   help="bcsr, rcsr (stored reverse index) or bcsr-search (binary search); a '+xla' suffix runs "
                   "the global relabels' BFS levels without the Pallas kernel (the GPU default), "
                   "'+kernel:levels=4,width=16' with those knobs of jaxmatch.kernels.bfs_level.Config")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--peers", nargs="*", default=["scipy", "ortools"])
    p.add_argument("--peer-limit", type=float, default=30.0, help="seconds before scipy is given up")
    p.add_argument("--ortools-limit", type=float, default=60.0, help="seconds before OR-Tools is given up")
    p.add_argument("--budget", type=float, default=440.0, help="seconds for the whole run (instances that "
                   "would not fit are skipped)")
    p.add_argument("--k", type=float, default=None, help="global relabel frequency factor")
    p.add_argument("--max-iters", type=int, default=None, help="push-relabel steps per phase, at most: a run "
                   "stopped there is recorded as unfinished (its time a lower bound), not checked")
    p.add_argument("--no-shared-capacity", action="store_true", help="pad each instance on its own")
    p.add_argument("--small", action="store_true", help="tiny sizes for a CPU smoke test")
    p.add_argument("--min-cut", action="store_true", help="also time min_cut (phase one only) beside each "
                   "variant's max_flow, as many runs, its cut certified")
    p.add_argument("--default-flags", action="store_true", help="do not set XLA command-buffer flags")
    args = p.parse_args()
    t_start = time.perf_counter()
    if not args.default_flags and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = FAST_FLAGS
    if args.small:
        args.repeats = min(args.repeats, 3)
    sizes = parse_sizes(args.sizes) if args.sizes else (SMALL if args.small else SIZES)

    import jax
    import jax.numpy as jnp

    from jaxmatch import BipartiteGraph, FlowNetwork, certify
    from jaxmatch.bipartite import maximum_matching
    from jaxmatch.flow import max_flow, min_cut
    from jaxmatch.flow import push_relabel as pr
    from jaxmatch.graph import next_pow2

    ortools_ok = "ortools" in args.peers
    if ortools_ok:
        try:
            import ortools.graph.python.max_flow  # noqa: F401  (only whether it imports)
        except ImportError:
            ortools_ok = False
            print("note: ortools is not importable; its column is skipped and scipy is the reference peer")
    device = jax.devices()[0]
    print(f"device {device} ({device.platform}), jax {jax.__version__}, {os.cpu_count()} CPUs", flush=True)

    # build every instance first: one shared capacity, so the solver compiles once
    names = [f"{c}{s}" for c in sizes for s in sizes[c]]
    names.sort(key=lambda x: ORDER.index(x) if x in ORDER else len(ORDER))
    instances = {}
    for name in names:
        cls = name.rstrip("0123456789")
        scale = int(name[len(cls):])
        t0 = time.perf_counter()
        instances[name] = (cls, scale, build(cls, scale), time.perf_counter() - t0)
        print(f"built {name}: {instances[name][2][5]:,} vertices, {instances[name][2][0].size:,} arcs "
              f"({instances[name][3]:.1f} s)", flush=True)
    caps = {}
    if not args.no_shared_capacity:
        caps = dict(vertex_capacity=next_pow2(max(x[2][5] for x in instances.values())),
                    arc_capacity=next_pow2(max(x[2][0].size for x in instances.values())))
        print(f"shared capacity: {caps}", flush=True)
    kw = {} if args.k is None else dict(k=args.k)
    if args.max_iters is not None:
        kw["max_iters"] = args.max_iters

    rows_out = []
    out_dir = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    out_dir.mkdir(parents=True, exist_ok=True)

    def save():
        meta = dict(device=str(device), platform=device.platform, jax=jax.__version__, cpus=os.cpu_count(),
                    xla_flags=os.environ.get("XLA_FLAGS", ""), date=time.strftime("%Y-%m-%d"),
                    repeats=args.repeats, peer_limit_s=args.peer_limit, ortools_limit_s=args.ortools_limit,
                    capacity=caps,
                    k=args.k if args.k is not None else f"{pr.KERNEL_K} with the push kernel, else {pr.DEFAULT_K}",
                    unroll=pr.DEFAULT_UNROLL,
                    results=rows_out, elapsed_s=time.perf_counter() - t_start)
        (out_dir / "bench_flow.json").write_text(json.dumps(meta, indent=1))

    compiled = False  # the solver has run once at the shared capacity (later warm-ups do not compile)
    for name in names:
        cls, scale, (t, h, c, sources, sinks, n, extra), build_s = instances[name]
        elapsed = time.perf_counter() - t_start
        rec = dict(graph=name, cls=cls, scale=scale, n=int(n), arcs=int(t.size), sources=int(sources.size),
                   sinks=int(sinks.size), build_s=build_s)
        if rows_out and elapsed > 0.8 * args.budget:
            rec["skipped"] = f"time budget ({elapsed:.0f} s of {args.budget:.0f} s used)"
            print(f"skip {name}: {rec['skipped']}", flush=True)
            rows_out.append(rec)
            continue
        try:
            single = with_super_terminals(t, h, c, sources, sinks, n)
            values = {}
            if ortools_ok:
                got = Forked(ortools_flow(*single[:5])).result(args.ortools_limit)
                rec["ortools_s"], rec["ortools_add_arcs_s"] = (got[0], got[2]) if got else (None, None)
                rec["ortools_timeout"] = got is None
                if got:
                    values["ortools"] = got[1]
            scipy_job = Forked(scipy_flow(*single)) if "scipy" in args.peers else None
            hk_job = None
            if cls == "matching":
                B = extra["bipartite"]
                hk_job = Forked(hopcroft_karp(B)) if "scipy" in args.peers else None
                g = BipartiteGraph.from_edges(B.row, B.col, *B.shape)
                t1 = time.perf_counter()
                jax.block_until_ready(maximum_matching(g, method="pr"))
                first = time.perf_counter() - t1
                med, runs, res = timed(lambda: jax.block_until_ready(maximum_matching(g, method="pr")), args.repeats)
                certify.check_maximum_matching(g, res.row_mate, res.col_mate)
                values["gpr"] = int(res.cardinality)
                rec["gpr"] = dict(time_s=med, runs=runs, compile_s=max(0.0, first - med),
                                  iterations=int(res.stats["iterations"]))
            src = jnp.asarray(np.resize(sources, 20), jnp.int32)  # one terminal-array shape: one compilation
            snk = jnp.asarray(np.resize(sinks, 20), jnp.int32)
            for variant in args.variants:
                base, _, tag = variant.partition("+")   # "+xla": the global relabels' BFS without the kernel
                layout, reverse = (base.split("-") + ["index"])[:2]
                vkw = dict(kw, kernel=False) if tag == "xla" else kw
                if tag.startswith("kernel:"):   # "+kernel:levels=4,width=16": the kernel with those knobs
                    from jaxmatch.kernels.bfs_level import Config as BFSConfig
                    vkw = dict(kw, kernel=BFSConfig(**knobs(tag[7:])))
                t1 = time.perf_counter()
                net = FlowNetwork.from_edges(t, h, c, n, layout=layout, **caps)
                layout_s = time.perf_counter() - t1
                run = lambda: jax.block_until_ready(max_flow(net, src, snk, reverse=reverse, **vkw))  # noqa: E731
                t1 = time.perf_counter()
                warm = run()
                first = time.perf_counter() - t1
                left = args.budget - (time.perf_counter() - t_start)
                if compiled and first > 0.5 * left:
                    # no time for a second run: the warm-up is the one timed run (this capacity compiled before)
                    runs, res = [first], warm
                else:
                    probe, _, res = timed(run, 1)
                    # the remaining runs must leave half of the remaining budget to the rest
                    left = args.budget - (time.perf_counter() - t_start)
                    repeats = max(1, min(args.repeats, 1 + int(0.5 * left / max(probe, 1e-9)) // len(args.variants)))
                    med, runs, res = timed(run, repeats - 1) if repeats > 1 else (probe, [], res)
                    runs = [probe] + runs
                compiled = compiled or (bool(caps) and reverse == "index")
                med = statistics.median(runs)
                value = int(res.flow_value)
                unfinished = int(res.status) != 0
                assert not unfinished or args.max_iters is not None, (name, variant, res.status_name)
                if not unfinished:
                    certify.check_flow(net, sources, sinks, res.flow, value)
                    certify.check_min_cut(net, sources, sinks, np.asarray(res.source_side), value)
                    values[variant] = value
                st = {k: (int(v) if np.ndim(v) == 0 else np.asarray(v).tolist()) for k, v in res.stats.items()}
                steps = st["iterations"] + st["return_iterations"] + st["bfs_levels"]
                rec[variant] = dict(time_s=med, runs=runs, repeats=len(runs), compile_s=max(0.0, first - med),
                                    layout_build_s=layout_s, arcs_per_s=t.size / med,
                                    us_per_step=1e6 * med / max(1, steps), steps=steps, unfinished=unfinished, **st)
                if args.min_cut and not unfinished:
                    cut_run = lambda: jax.block_until_ready(min_cut(net, src, snk, reverse=reverse, **vkw))  # noqa: E731
                    cut_run()
                    cut_med, cut_runs, cut = timed(cut_run, len(runs))
                    certify.check_min_cut(net, sources, sinks, np.asarray(cut.source_side), int(cut.value))
                    assert int(cut.value) == value, (name, variant, int(cut.value), value)
                    rec[variant].update(min_cut_s=cut_med, min_cut_runs=cut_runs, min_cut_over_max_flow=cut_med / med)
            if scipy_job is not None:
                got = scipy_job.result(args.peer_limit)
                rec["scipy_s"] = got[0] if got else None
                if got:
                    values["scipy"] = got[1]
            if hk_job is not None:
                got = hk_job.result(args.peer_limit)
                rec["hopcroft_karp_s"] = got[0] if got else None
                if got:
                    values["hopcroft_karp"] = got[1]
            assert len(set(values.values())) == 1, (name, values)
            rec["value"] = next(iter(values.values()), None)
            done = [v for v in args.variants if v in rec]
            best = min(done, key=lambda v: rec[v]["time_s"])
            rec["best_variant"] = best
            bound = "_at_most" if rec[best]["unfinished"] else ""   # an unfinished run's time is a lower bound
            if "bcsr" in rec and "rcsr" in rec:
                rec["rcsr_over_bcsr"] = rec["rcsr"]["time_s"] / rec["bcsr"]["time_s"]
            if rec.get("ortools_s"):
                rec["speedup_vs_ortools" + bound] = rec["ortools_s"] / rec[best]["time_s"]
            elif rec.get("ortools_timeout"):
                rec["speedup_vs_ortools_at_least"] = args.ortools_limit / rec[best]["time_s"]
            if rec.get("scipy_s"):
                rec["speedup_vs_scipy"] = rec["scipy_s"] / rec[best]["time_s"]
            if (cls, scale) in PAPER:
                paper = PAPER[(cls, scale)]
                rec["paper"] = dict(paper, best_ms=min(paper["ms"].values()))
                rec["paper_best_over_ours" + bound] = rec["paper"]["best_ms"] / (1e3 * rec[best]["time_s"])
        except Exception as e:  # keep the rest of a one-shot device run; the error is in the JSON and the table
            import traceback
            traceback.print_exc()
            rec["error"] = repr(e)
        rows_out.append(rec)
        print(json.dumps(rec), flush=True)
        save()

    save()
    # ---------------------------------------------------------------- table
    def f(x, fmt):
        return format(x, fmt) if isinstance(x, (int, float)) and x is not None and math.isfinite(x) else "-"

    print(f"\ndevice {device}, jax {jax.__version__}, median of {args.repeats}, capacity {caps or 'per instance'}; "
          f"peers on the host CPU (OR-Tools alone, limit {args.ortools_limit:.0f} s; scipy beside the GPU runs, "
          f"limit {args.peer_limit:.0f} s)")
    hdr = f"{'graph':12s} {'vertices':>9s} {'arcs':>10s} {'value':>10s} {'scipy s':>8s} {'OR-T s':>8s}"
    for v in args.variants:
        hdr += f" {v + ' s':>9s}"
    vs_name = "vs OR-T" if ortools_ok else "vs scipy"
    hdr += (f" {'steps':>7s} {'GRs':>4s} {'us/step':>7s} {'rcsr/bcsr':>9s} {vs_name:>8s}"
            f" {'paper ms':>9s} {'paper/us':>8s}")
    print(hdr)
    ratios, lay = [], []
    for r in rows_out:
        if "skipped" in r or "error" in r:
            why = f"skipped: {r['skipped']}" if "skipped" in r else f"FAILED: {r['error']}"
            print(f"{r['graph']:12s} {r['n']:9d} {r['arcs']:10d}  {why}")
            continue
        best = r[r["best_variant"]]
        ort = r.get("ortools_s")
        vs = r.get("speedup_vs_ortools") if ortools_ok else r.get("speedup_vs_scipy")
        vs_txt = f(vs, "8.2f") if vs else (f">{r['speedup_vs_ortools_at_least']:.1f}".rjust(8)
                                           if "speedup_vs_ortools_at_least" in r else
                                           f"<{r['speedup_vs_ortools_at_most']:.2f}".rjust(8)
                                           if "speedup_vs_ortools_at_most" in r else "-".rjust(8))
        ort_txt = f(ort, "8.3f") if ort else (f">{args.ortools_limit:.0f}" if r.get("ortools_timeout") else "-")
        paper_txt = ("<" + f(r["paper_best_over_ours_at_most"], ".3f") if "paper_best_over_ours_at_most" in r
                     else f(r.get("paper_best_over_ours"), "8.1f"))
        line = (f"{r['graph']:12s} {r['n']:9d} {r['arcs']:10d} {f(r['value'], '10d'):>10s} "
                f"{f(r.get('scipy_s'), '8.3f'):>8s} "
                f"{ort_txt:>8s}")
        for v in args.variants:
            mark = ">" if v in r and r[v]["unfinished"] else ""
            line += f" {mark + f(r[v]['time_s'], '.4f'):>9s}" if v in r else f" {'-':>9s}"
        line += (f" {best['steps']:7d} {best['global_relabels']:4d} {best['us_per_step']:7.1f} "
                 f"{f(r.get('rcsr_over_bcsr'), '9.2f'):>9s} {vs_txt:>8s} "
                 f"{f(r['paper']['best_ms'], '9.0f') if 'paper' in r else '-':>9s} "
                 f"{paper_txt:>8s}")
        print(line)
        if r["arcs"] >= 1_000_000 and not best["unfinished"]:   # an unfinished run gives only a bound
            ratios.append(vs if vs else r.get("speedup_vs_ortools_at_least"))
        if "rcsr_over_bcsr" in r:
            lay.append(r["rcsr_over_bcsr"])
    for r in rows_out:
        if r.get("cls") == "matching" and "gpr" in r and "best_variant" in r:
            print(f"{r['graph']}: as a flow {r[r['best_variant']]['time_s']:.4f} s; G-PR maximum_matching(method='pr') "
                  f"{r['gpr']['time_s']:.4f} s; scipy Hopcroft-Karp {f(r.get('hopcroft_karp_s'), '.3f')} s")
    for r in rows_out:
        if "paper" in r and "best_variant" in r:
            pp = r["paper"]
            print(f"{r['graph']} against the paper's Table {pp['table']} {pp['graph']} ({pp['vertices']:,} vertices, "
                  f"{pp['edges']:,} edges): best published {pp['best_ms']:,} ms, ours "
                  f"{1e3 * r[r['best_variant']]['time_s']:.1f} ms: "
                  + (f"{r['paper_best_over_ours']:.1f}x" if "paper_best_over_ours" in r else
                     f"unfinished, so at most {r['paper_best_over_ours_at_most']:.3f}x"))
    if lay:
        print(f"RCSR / BCSR time, geometric mean over {len(lay)} graphs: {geomean(lay):.2f}")
    peer = "OR-Tools" if ortools_ok else "scipy"
    print(f"geometric-mean speed-up of the best layout over {peer} on the graphs with >= 1M arcs: "
          f"{geomean(ratios):.2f}x over {len([x for x in ratios if x])} graphs "
          f"(a '>' entry counts at the OR-Tools time limit)")


if __name__ == "__main__":
    main()
