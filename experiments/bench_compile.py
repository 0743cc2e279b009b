"""Benchmark: what the first call of every jaxmatch solver costs (compilation), cold and with
JAX's persistent compilation cache warm.

For each solver and size the script starts a fresh Python process (so nothing
is compiled yet in it) that builds the input (untimed), turns on the
persistent compilation cache in a new, empty directory
(:func:`jaxmatch.enable_compilation_cache`, the library's defaults: what the
``jaxmatch`` command line does), and times

* ``first``: the first call, tracing + compilation + one run, outputs
  waited for (``jax.block_until_ready``);
* ``warm``: the median of ``--repeats`` further calls;

then a second fresh process does the same with the *same* cache directory,
now filled by the first: its ``first`` is what a user pays on the second run
of a program. ``compile`` = first - warm. JAX's monitoring events give the
seconds spent in XLA's backend compiler and the persistent cache hits. The
answers of both processes are recorded and must be equal (a cached
executable must compute what a compiled one does).

Solvers: ``maximum_matching`` (default, then each ``method``), ``max_flow``,
``min_cut``, ``suitor``, ``locally_dominant``, ``b_suitor`` (b = 2),
``stable_marriage``, ``louvain``, ``leiden``, and ``jax.vmap`` of ``maximum_matching``
and of ``louvain`` over a batch of ``--batch`` graphs (the batch holds the
size's edges in all). Inputs (experiments/generators.py), with about the
size's number of edges (arcs, list entries): uniform random bipartite
graphs (average degree 8), Washington RLG networks (3 arcs per node), Chung-Lu
power-law graphs (average degree 16) with uniform random weights in (0, 1],
and the thesis's easy stable-marriage instances.

Sizes: ``small`` (10^3 edges), ``medium`` (10^5), ``large`` (10^7: for the
GPU), or numbers (``--sizes 1e3,3e5``). The XLA flags are the library's own
(``import jaxmatch`` sets them; they act on the GPU only).

Usage::

    python3 experiments/bench_compile.py --sizes small,medium            # CPU, about 10 min on 2 cores
    python3 experiments/bench_compile.py --sizes small,large --out $OUT/bench_compile_gpu.json

Writes JSON to ``--out`` (default experiments/results/bench_compile_<backend>.json)
and prints a table last.

``--sweep``: instead, each solver runs in one process over every size of ``--sizes``
in turn (each size a new shape, so a new compilation; no persistent cache), and the
first and warm call of each size are printed and written: a size at which XLA's
compile is pathological stands out (session 21 found 25-35 s kernels at some sizes)::

    python3 experiments/bench_compile.py --sweep --solvers max_flow,suitor \
        --sizes 1e3,4e3,8e3,16e3,32e3,64e3,256e3 --out $OUT/sweep.json
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

SIZES = {"small": 1_000, "medium": 100_000, "large": 10_000_000}
SOLVERS = ["matching", "matching_apfb", "matching_apsb", "matching_graft", "matching_flow", "matching_auto",
           "max_flow", "min_cut", "suitor", "locally_dominant", "b_suitor", "stable_marriage", "louvain",
           "leiden", "vmap_matching", "vmap_louvain"]


# --------------------------------------------------------------------------
# inputs (built in the child; cached as .npz in the work directory, shared by the two runs)


def _edges_file(work: pathlib.Path, family: str, m: int, batch: int) -> pathlib.Path:
    return work / f"{family}_{m}_{batch}.npz"


def _build(family: str, m: int, seed: int, batch: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import scipy.sparse as sp

    from experiments import generators as gen

    if family == "bipartite":
        n = max(8, m // 8)
        A = sp.coo_array(gen.random_bipartite(n, n, 8, seed=seed))
        return dict(rows=A.row.astype(np.int32), cols=A.col.astype(np.int32), n=np.int64(n))
    if family == "flow":
        side = max(4, int(round(math.sqrt(m / 3))))
        tail, head, cap, s, t, n = gen.washington_rlg(side, side, seed=seed)
        return dict(tail=tail, head=head, cap=cap, s=np.int64(s), t=np.int64(t), n=np.int64(n))
    if family == "graph":
        n = max(16, m // 8)
        A = sp.triu(gen.power_law(n, avg_degree=16, seed=seed), k=1).tocoo()
        w = np.random.default_rng(seed).uniform(0.0, 1.0, A.nnz).astype(np.float32)
        w = np.maximum(w, np.float32(1e-6))   # in (0, 1]
        return dict(u=A.row.astype(np.int32), v=A.col.astype(np.int32), w=w, n=np.int64(n))
    if family == "stable":
        n = 16   # entries ~ n (1 + eps) ln n with eps ~ U[0, 1]: mean 1.5 n ln n
        while 1.5 * n * math.log(n) < m:
            n = int(n * 1.25) + 1
        men, women = gen.stable_easy(n, seed=seed)
        return dict(men=men, women=women)
    if family.startswith("batch_"):
        parts = [_build(family[len("batch_"):], max(1, m // batch), seed + i, 1) for i in range(batch)]
        return {f"{k}_{i}": v for i, p in enumerate(parts) for k, v in p.items()}
    raise ValueError(family)


FAMILY = {"max_flow": "flow", "min_cut": "flow", "suitor": "graph", "locally_dominant": "graph",
          "b_suitor": "graph", "louvain": "graph", "leiden": "graph", "stable_marriage": "stable",
          "vmap_matching": "batch_bipartite", "vmap_louvain": "batch_graph"}


def _family(solver: str) -> str:
    return "bipartite" if solver.startswith("matching") else FAMILY[solver]


def _inputs(solver: str, m: int, batch: int, work: pathlib.Path) -> dict:
    import numpy as np

    family = _family(solver)
    f = _edges_file(work, family, m, batch)
    if not f.exists():
        arrays = _build(family, m, 0, batch)
        tmp = f.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(f)
    with np.load(f) as z:
        return {k: z[k] for k in z.files}


def _solver(solver: str, d: dict, batch: int):
    """(fn, edges, answer-of-result function) for a solver on its inputs."""
    import jax

    import jaxmatch as jm

    if solver.startswith("matching"):
        g = jm.BipartiteGraph.from_edges(d["rows"], d["cols"], int(d["n"]), int(d["n"]))
        method = solver.split("_", 1)[1] if "_" in solver else None
        opts = {} if method is None else {"method": method}
        return (lambda: jm.maximum_matching(g, **opts)), int(g.n_edges), lambda r: int(r.cardinality)
    if solver in ("max_flow", "min_cut"):
        net = jm.FlowNetwork.from_edges(d["tail"], d["head"], d["cap"], int(d["n"]))
        s, t = int(d["s"]), int(d["t"])
        if solver == "max_flow":
            return (lambda: jm.max_flow(net, s, t)), int(net.n_arcs), lambda r: int(r.flow_value)
        return (lambda: jm.min_cut(net, s, t)), int(net.n_arcs), lambda r: int(r.value)
    if solver in ("suitor", "locally_dominant", "b_suitor", "louvain", "leiden"):
        g = jm.Graph.from_edges(d["u"], d["v"], d["w"], int(d["n"]))
        fn = {"suitor": lambda: jm.suitor(g), "locally_dominant": lambda: jm.locally_dominant(g),
              "b_suitor": lambda: jm.b_suitor(g, 2), "louvain": lambda: jm.louvain(g),
              "leiden": lambda: jm.leiden(g)}[solver]
        answer = (lambda r: round(float(r.modularity), 6)) if solver in ("louvain", "leiden") else \
            (lambda r: round(float(r.weight), 3))
        return fn, int(g.n_edges), answer
    if solver == "stable_marriage":
        men, women = jm.Preferences.from_padded(d["men"], n_other=d["women"].shape[0]), \
            jm.Preferences.from_padded(d["women"], n_other=d["men"].shape[0])
        return (lambda: jm.stable_marriage(men, women)), int(men.n_entries), \
            lambda r: int((r.wife >= 0).sum())
    if solver == "vmap_matching":
        gs = [jm.BipartiteGraph.from_edges(d[f"rows_{i}"], d[f"cols_{i}"], int(d[f"n_{i}"]), int(d[f"n_{i}"]))
              for i in range(batch)]
        b = jm.stack(gs)
        f = jax.jit(jax.vmap(lambda h: jm.maximum_matching(h).cardinality))
        return (lambda: f(b)), sum(int(h.n_edges) for h in gs), lambda r: [int(x) for x in r]
    if solver == "vmap_louvain":
        gs = [jm.Graph.from_edges(d[f"u_{i}"], d[f"v_{i}"], d[f"w_{i}"], int(d[f"n_{i}"])) for i in range(batch)]
        b = jm.stack(gs)
        f = jax.jit(jax.vmap(lambda h: jm.louvain(h, axis_name="b").modularity, axis_name="b"))
        return (lambda: f(b)), sum(int(h.n_edges) for h in gs), lambda r: [round(float(x), 6) for x in r]
    raise ValueError(solver)


# --------------------------------------------------------------------------
# the child: one solver, one size, one process


def child(spec: dict) -> dict:
    t_start = time.perf_counter()
    import collections
    import statistics

    import jax
    from jax._src import monitoring

    import jaxmatch as jm

    work = pathlib.Path(spec["work"])
    d = _inputs(spec["solver"], spec["m"], spec["batch"], work)
    fn, edges, answer = _solver(spec["solver"], d, spec["batch"])
    if spec.get("min_compile_time") is None:
        jm.enable_compilation_cache(spec["cache"])   # the library's default threshold
    else:
        jm.enable_compilation_cache(spec["cache"], min_compile_time_secs=spec["min_compile_time"])
    durations, events = collections.Counter(), collections.Counter()
    monitoring.register_event_duration_secs_listener(lambda ev, secs, **kw: durations.update({ev: secs}))
    monitoring.register_event_listener(lambda ev, **kw: events.update({ev: 1}))
    t = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t
    first_durations, first_events = dict(durations), dict(events)
    times, out = [], None
    for _ in range(spec["repeats"]):
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    warm = statistics.median(times)
    dev = jax.devices()[0]
    return dict(
        solver=spec["solver"], size=spec["size"], edges=edges, backend=jax.default_backend(),
        device=dev.device_kind, jax=jax.__version__, first_s=first, warm_s=warm, warm_runs_s=times,
        compile_s=max(first - warm, 0.0),
        backend_compile_s=first_durations.get("/jax/core/compile/backend_compile_duration", 0.0),
        trace_s=first_durations.get("/jax/core/compile/jaxpr_trace_duration", 0.0),
        lower_s=first_durations.get("/jax/core/compile/jaxpr_to_mlir_module_duration", 0.0),
        cache_retrieval_s=first_durations.get("/jax/compilation_cache/cache_retrieval_time_sec", 0.0),
        cache_hits=first_events.get("/jax/compilation_cache/cache_hits", 0),
        cache_misses=first_events.get("/jax/compilation_cache/cache_misses", 0),
        answer=answer(out), process_s=time.perf_counter() - t_start, loadavg_1min=os.getloadavg()[0],
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        cache_min_compile_time_s=jax.config.jax_persistent_cache_min_compile_time_secs)


def sweep(spec: dict) -> list:
    """``--sweep``'s child: one solver over many sizes in this process; a row per size."""
    import jax

    rows = []
    for size, m in spec["sizes"]:
        fn, edges, answer = _solver(spec["solver"], _build(_family(spec["solver"]), m, 0, spec["batch"]),
                                    spec["batch"])
        t = time.perf_counter()
        jax.block_until_ready(fn())
        first = time.perf_counter() - t
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        rows.append(dict(solver=spec["solver"], size=size, edges=edges, first_s=first,
                         warm_s=time.perf_counter() - t, answer=answer(out), device=jax.devices()[0].device_kind))
    return rows   # the parent prints them


# --------------------------------------------------------------------------
# the parent: never imports JAX (on a GPU it would hold device memory the children need)


def _run_child(spec: dict, timeout: float) -> dict:
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", json.dumps(spec)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(("{", "["))]
    if p.returncode != 0 or not lines:
        return {"error": f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1:] or p.stdout[-300:]}"}
    return json.loads(lines[-1])


def _size(text: str) -> tuple[str, int]:
    return (text, SIZES[text]) if text in SIZES else (text, int(float(text)))


def _fmt(x, digits=3) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:.{digits}f}" if x < 100 else f"{x:.0f}"


def table(rows) -> str:
    cols = ["solver", "size", "edges", "first cold s", "warm s", "compile cold s", "XLA compile s",
            "first cached s", "compile cached s", "cache hits", "same answer"]
    out = [cols]
    for r in rows:
        c, w = r.get("cold", {}), r.get("cached", {})
        if "error" in c or "error" in w:
            out.append([r["solver"], r["size"], "-", "error: " + (c.get("error") or w.get("error"))[:60]]
                       + [""] * (len(cols) - 4))
            continue
        out.append([r["solver"], r["size"], str(c["edges"]), _fmt(c["first_s"]), _fmt(c["warm_s"], 4),
                    _fmt(c["compile_s"]), _fmt(c["backend_compile_s"]), _fmt(w["first_s"]),
                    _fmt(w["compile_s"]), str(w["cache_hits"]), "yes" if r["same_answer"] else "NO"])
    widths = [max(len(x[i]) for x in out) for i in range(len(cols))]
    lines = ["  ".join(x.ljust(wd) if i < 2 else x.rjust(wd) for i, (x, wd) in enumerate(zip(row, widths)))
             for row in out]
    lines.insert(1, "  ".join("-" * wd for wd in widths))
    return "\n".join(lines)


def _out_path(a, backend: str) -> pathlib.Path:
    return pathlib.Path(a.out) if a.out else ROOT / "experiments" / "results" / f"bench_compile_{backend}.json"


def _earlier_rows(a) -> list:
    """With ``--append``: the rows already in the ``--out`` file (replaced where this run redoes them)."""
    if not (a.append and a.out and pathlib.Path(a.out).exists()):
        return []
    return json.loads(pathlib.Path(a.out).read_text())["rows"]


def _save(a, kept, rows, t0):
    first = next((r["cold"] for r in rows if "error" not in r["cold"]), {})
    backend = first.get("backend", "unknown")
    done = {(r["solver"], r["size"]) for r in rows}
    all_rows = [r for r in kept if (r["solver"], r["size"]) not in done] + rows
    result = dict(
        benchmark="bench_compile", date=_dt.datetime.now().isoformat(timespec="seconds"), backend=backend,
        device=first.get("device"), jax=first.get("jax"), cpu_count=os.cpu_count(),
        xla_flags=first.get("xla_flags"), cache_min_compile_time_s=first.get("cache_min_compile_time_s"),
        repeats=a.repeats, batch=a.batch, sizes={r["size"]: r["m"] for r in all_rows}, wall_s=time.perf_counter() - t0,
        loadavg_1min_end=os.getloadavg()[0], rows=all_rows)
    out = _out_path(a, backend)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    return out, result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="small,medium", help="small (1e3), medium (1e5), large (1e7) or numbers")
    p.add_argument("--solvers", default=",".join(SOLVERS), help="comma-separated subset of: " + ",".join(SOLVERS))
    p.add_argument("--repeats", type=int, default=3, help="warm calls per process (median)")
    p.add_argument("--batch", type=int, default=8, help="graphs in the vmapped batches")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per child process")
    p.add_argument("--min-compile-time", type=float, default=None,
                   help="cache only compilations this slow (default: enable_compilation_cache's)")
    p.add_argument("--work", default=None, help="directory for inputs and caches (default: a temporary one)")
    p.add_argument("--out", default=None, help="JSON file (default experiments/results/bench_compile_<backend>.json)")
    p.add_argument("--append", action="store_true",
                   help="keep the rows already in --out (a run split over several calls)")
    p.add_argument("--sweep", action="store_true", help="each solver over all sizes in one process (no cache)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        spec = json.loads(a.child)
        print(json.dumps(sweep(spec) if "sizes" in spec else child(spec)), flush=True)
        return 0
    solvers = [s for s in a.solvers.split(",") if s]
    bad = sorted(set(solvers) - set(SOLVERS))
    if bad:
        p.error(f"unknown solvers {bad}")
    sizes = [_size(s) for s in a.sizes.split(",") if s]
    work = pathlib.Path(a.work or tempfile.mkdtemp(prefix="bench_compile_"))
    work.mkdir(parents=True, exist_ok=True)
    rows, t0 = [], time.perf_counter()
    if a.sweep:
        for solver in solvers:
            got = _run_child(dict(solver=solver, sizes=sizes, batch=a.batch), a.timeout)
            rows += got if isinstance(got, list) else [dict(solver=solver, **got)]
        out = pathlib.Path(a.out or ROOT / "experiments" / "results" / "bench_compile_sweep.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(dict(benchmark="bench_compile --sweep", date=_dt.datetime.now().isoformat(
            timespec="seconds"), rows=rows), indent=1))
        for r in rows:
            print(r.get("error") or f"{r['solver']:18s} {r['size']:>8s} {r['edges']:9d} edges: first "
                  f"{r['first_s']:6.2f} s, warm {r['warm_s']:.4f} s")
        return 0 if all("error" not in r for r in rows) else 1
    kept = _earlier_rows(a)
    try:
        for size, m in sizes:
            for solver in solvers:
                cache = work / f"cache_{solver}_{size}"
                shutil.rmtree(cache, ignore_errors=True)
                spec = dict(solver=solver, size=size, m=m, batch=a.batch, repeats=a.repeats, work=str(work),
                            cache=str(cache), min_compile_time=a.min_compile_time)
                cold = _run_child(spec, a.timeout)
                cached = _run_child(spec, a.timeout) if "error" not in cold else {"error": "cold run failed"}
                same = "error" not in cold and "error" not in cached and cold["answer"] == cached["answer"]
                rows.append(dict(solver=solver, size=size, m=m, cold=cold, cached=cached, same_answer=same))
                c = cold if "error" in cold else {k: cold[k] for k in ("edges", "first_s", "warm_s", "answer")}
                w = cached if "error" in cached else {k: cached[k] for k in ("first_s", "cache_hits")}
                print(f"{solver} {size}: cold {c}; cached {w}", flush=True)
                shutil.rmtree(cache, ignore_errors=True)
                out, result = _save(a, kept, rows, t0)   # after every row: a cut-short run keeps its rows
    finally:
        if a.work is None:
            shutil.rmtree(work, ignore_errors=True)
    out, result = _save(a, kept, rows, t0)
    backend, rows = result["backend"], result["rows"]
    print(f"\nbench_compile on {backend} ({result['device']}), jax {result['jax']}, {os.cpu_count()} CPUs; "
          f"first = first call (trace + compile + run), warm = median of {a.repeats} later calls, "
          f"cached = a second process with the persistent cache filled by the first; wrote {out}\n")
    print(table(rows))
    return 0 if all(r["same_answer"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
