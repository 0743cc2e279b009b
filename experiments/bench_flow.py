"""Maximum flow benchmark: jaxmatch WBPR push-relabel (GPU) against OR-Tools and scipy (CPU).

Graph classes: Washington RLG and genrmf (DIMACS generators, the WBPR paper's
S0 and S1), power-law and road-like graphs with 20 sources and 20 sinks
(unit capacities, as the paper's SNAP runs; the peers get an explicit super
source and super sink), and bipartite matching as unit-capacity flow
(against jaxmatch's G-PR matching and scipy's Hopcroft-Karp). Every jaxmatch
answer is checked: flow value equal to scipy's (Dinic) and OR-Tools', and
the flow and cut certificates. Each variant (residual layout RCSR / BCSR;
"bcsr-search" finds reverse arcs by the paper's binary search instead of the
stored index) is timed after a warm-up (median of ``--repeats`` runs; the first call's
extra time is reported as compile time). Writes JSON to $OUT (or
experiments/results) and prints a table last.

    python experiments/bench_flow.py                      # GPU run, default scales
    python experiments/bench_flow.py --classes rlg --scales 18 20
    python experiments/bench_flow.py --small              # CPU smoke test
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import generators as gen  # noqa: E402

# Command buffers turn each while-loop step into one CUDA graph launch (BENCHMARKS.md).
FAST_FLAGS = ("--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,COLLECTIVES,WHILE,CONDITIONAL "
              "--xla_gpu_graph_min_graph_size=1")

# default scales (log2 of the vertex count) per class, and the --small ones
SCALES = {"rlg": [18, 20, 22], "genrmf": [18, 21], "power_law": [18, 20], "road": [18, 20], "matching": [18, 20]}
SMALL = {"rlg": [10], "genrmf": [9], "power_law": [10], "road": [10], "matching": [10]}

# WBPR paper, Table 1 (RTX 3090), best of its four variants, ms; same generator and size,
# or for power_law / road the SNAP graph of that class and size it is compared with
PAPER_MS = {("rlg", 18): ("Washington-RLG S0", 99_410), ("genrmf", 21): ("Genrmf S1", 2_138),
            ("road", 20): ("roadNet-PA R2 (1.1M V, 1.5M E)", 14_822),
            ("power_law", 20): ("web-Google R4 (0.9M V, 5.1M E)", 7_927)}


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
    if cls in ("power_law", "road"):
        A = gen.power_law(2 ** scale, avg_degree=8, seed=seed) if cls == "power_law" else \
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


def timed(fn, repeats):
    times, out = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def scipy_flow(t, h, c, s, tt, n):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow
    A = sp.csr_array((c.astype(np.int32), (t, h)), shape=(n, n))
    A.sum_duplicates()
    return lambda: int(maximum_flow(A, s, tt, method="dinic").flow_value)


def ortools_flow(t, h, c, s, tt):
    from ortools.graph.python import max_flow

    def run():
        smf = max_flow.SimpleMaxFlow()
        smf.add_arcs_with_capacity(t.astype(np.int32), h.astype(np.int32), c.astype(np.int64))
        if smf.solve(int(s), int(tt)) != smf.OPTIMAL:
            raise RuntimeError("OR-Tools SimpleMaxFlow did not reach OPTIMAL")
        return int(smf.optimal_flow())
    return run


def device_bytes(net, sources, sinks, reverse):
    import jax.numpy as jnp

    from jaxmatch import flow
    kw = dict(max_iters=jnp.int32(16 * net.vertex_cap + 4096), k=flow._pr.DEFAULT_K,
              width=flow._window_width(net, flow._pr.DEFAULT_LANES), search=reverse == "search")
    try:
        m = flow._solve.lower(net, sources, sinks, **kw).compile().memory_analysis()
    except Exception:
        return None
    if m is None:
        return None
    return m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--classes", nargs="+", default=list(SCALES))
    p.add_argument("--scales", type=int, nargs="+", default=None, help="log2 vertex counts (all classes)")
    p.add_argument("--variants", nargs="+", default=["bcsr", "rcsr", "bcsr-search"],
                   help="bcsr, rcsr (stored reverse index) or bcsr-search (binary search)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--peer-repeats", type=int, default=1)
    p.add_argument("--peers", nargs="*", default=["scipy", "ortools"])
    p.add_argument("--k", type=float, default=None, help="global relabel period factor")
    p.add_argument("--small", action="store_true", help="tiny sizes for a CPU smoke test")
    p.add_argument("--default-flags", action="store_true", help="do not set XLA command-buffer flags")
    args = p.parse_args()
    if not args.default_flags and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = FAST_FLAGS
    if args.small:
        args.repeats = min(args.repeats, 3)

    import jax
    import jax.numpy as jnp

    from jaxmatch import FlowNetwork, certify
    from jaxmatch.flow import max_flow

    ortools_ok = "ortools" in args.peers
    if ortools_ok:
        try:
            import ortools.graph.python.max_flow  # noqa: F401  (only whether it imports)
        except ImportError:
            ortools_ok = False
            print("note: ortools not importable, its column is skipped")

    device = jax.devices()[0]
    rows_out = []
    for cls in args.classes:
        scales = args.scales or (SMALL if args.small else SCALES)[cls]
        for scale in scales:
            t0 = time.perf_counter()
            t, h, c, sources, sinks, n, extra = build(cls, scale)
            name = f"{cls}{scale}"
            rec = dict(graph=name, n=int(n), arcs=int(t.size), sources=int(sources.size), sinks=int(sinks.size),
                       build_s=time.perf_counter() - t0)
            single = with_super_terminals(t, h, c, sources, sinks, n)
            ref_t, ref = timed(scipy_flow(*single), args.peer_repeats if "scipy" in args.peers else 1)
            rec.update(value=ref, scipy_s=ref_t if "scipy" in args.peers else None)
            if ortools_ok:
                rec["ortools_s"], v = timed(ortools_flow(*single[:5]), args.peer_repeats)
                assert v == ref, (name, "ortools", v, ref)
            if cls == "matching":
                from scipy.sparse.csgraph import maximum_bipartite_matching

                from jaxmatch import BipartiteGraph
                from jaxmatch.bipartite import maximum_matching
                B = extra["bipartite"]
                rec["hopcroft_karp_s"], rm = timed(lambda: maximum_bipartite_matching(B.tocsr(), perm_type="column"),
                                                   args.peer_repeats)
                assert int((rm >= 0).sum()) == ref
                g = BipartiteGraph.from_edges(B.row, B.col, *B.shape)
                jax.block_until_ready(maximum_matching(g))
                rec["gpr_s"], res = timed(lambda: jax.block_until_ready(maximum_matching(g)), args.repeats)
                assert int(res.cardinality) == ref
            # 1-D terminal arrays of one length (ids may repeat), so that equal capacities compile once
            src = jnp.asarray(np.resize(sources, 20), jnp.int32)
            snk = jnp.asarray(np.resize(sinks, 20), jnp.int32)
            for variant in args.variants:
                layout, reverse = (variant.split("-") + ["index"])[:2]
                caps = dict(vertex_capacity=4096, arc_capacity=16384) if args.small else {}
                net = FlowNetwork.from_edges(t, h, c, n, layout=layout, **caps)
                kw = dict(reverse=reverse) if args.k is None else dict(reverse=reverse, k=args.k)
                t1 = time.perf_counter()
                jax.block_until_ready(max_flow(net, src, snk, **kw))
                first = time.perf_counter() - t1
                med, res = timed(lambda: jax.block_until_ready(max_flow(net, src, snk, **kw)), args.repeats)
                value = int(res.flow_value)
                assert int(res.status) == 0, (name, variant, res.status_name)
                assert value == ref, (name, variant, value, ref)
                certify.check_flow(net, sources, sinks, res.flow, value)
                certify.check_min_cut(net, sources, sinks, np.asarray(res.source_side), value)
                st = {k: int(v) for k, v in res.stats.items()}
                steps = st["iterations"] + st["return_iterations"] + st["bfs_levels"]
                rec[variant] = dict(time_s=med, compile_s=max(0.0, first - med), arcs_per_s=t.size / med,
                                    us_per_loop_step=1e6 * med / max(1, steps),
                                    device_bytes=device_bytes(net, src, snk, reverse), **st)
            if (cls, scale) in PAPER_MS:
                rec["paper_graph"], rec["paper_ms"] = PAPER_MS[(cls, scale)]
            rows_out.append(rec)
            print(json.dumps(rec), flush=True)

    meta = dict(device=str(device), platform=device.platform, jax=jax.__version__,
                xla_flags=os.environ.get("XLA_FLAGS", ""), date=time.strftime("%Y-%m-%d"), results=rows_out)
    out_dir = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "bench_flow.json").write_text(json.dumps(meta, indent=1))

    print(f"\ndevice {device} jax {jax.__version__}")
    hdr = f"{'graph':13s} {'n':>9s} {'arcs':>9s} {'value':>10s} {'scipy s':>8s} {'ortools s':>9s}"
    for v in args.variants:
        hdr += f" {v + ' s':>12s} {'steps':>6s} {'GRs':>4s} {'levels':>6s}"
    print(hdr + f" {'best/ort':>8s} {'paper ms':>8s}")
    ratios = []
    for r in rows_out:
        line = (f"{r['graph']:13s} {r['n']:9d} {r['arcs']:9d} {r['value']:10d} "
                f"{r['scipy_s'] or float('nan'):8.3f} {r.get('ortools_s', float('nan')):9.3f}")
        for v in args.variants:
            x = r[v]
            line += f" {x['time_s']:12.4f} {x['iterations'] + x['return_iterations']:6d} " \
                    f"{x['global_relabels']:4d} {x['bfs_levels']:6d}"
        best = min(r[v]["time_s"] for v in args.variants)
        peer = r.get("ortools_s", r["scipy_s"] or float("nan"))
        ratio = peer / best
        if r["arcs"] >= 1_000_000 and np.isfinite(ratio):
            ratios.append(ratio)
        print(line + f" {ratio:8.2f} {r.get('paper_ms', float('nan')):8.0f}")
    peer_name = "OR-Tools" if ortools_ok else "scipy"
    if ratios:
        print(f"geometric mean speed-up of the best variant over {peer_name} on graphs with >= 1M arcs: "
              f"{np.exp(np.mean(np.log(ratios))):.2f}x over {len(ratios)} graphs")
    for r in rows_out:
        if "paper_ms" in r:
            best = min(r[v]["time_s"] for v in args.variants)
            print(f"{r['graph']}: {1e3 * best:.1f} ms against the paper's {r['paper_ms']} ms on "
                  f"{r['paper_graph']}: {r['paper_ms'] / (1e3 * best):.1f}x")


if __name__ == "__main__":
    main()
