"""Maximum cardinality matching benchmark: jaxmatch (GPU) against scipy and igraph (CPU).

One run builds the graphs, checks every timed answer (cardinality equal to
scipy's, Koenig certificate), times jaxmatch after a warm-up (median of
``--repeats`` runs, compile time reported apart), times the CPU peers (one run
each, in forked processes that run beside jaxmatch's GPU runs, each on its own
core; a peer not done ``--peer-limit`` seconds after jaxmatch's runs end is
stopped and loses its column: scipy's Hopcroft-Karp can take minutes on
permuted meshes, and the certificate proves jaxmatch's answer maximum on its
own), prints a table and writes JSON to $OUT (or experiments/results).

    python experiments/bench_matching.py --scales 20 22 --classes kron rgg
    python experiments/bench_matching.py --small      # CPU smoke test
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import generators as gen  # noqa: E402
from experiments.common import FAST_FLAGS, Forked, clock_started, timed  # noqa: E402

CLASSES = {
    "kron": lambda s, seed: gen.rmat(s, seed=seed),
    "rmat_hard": lambda s, seed: gen.rmat_hard(s, seed=seed),
    "delaunay": lambda s, seed: gen.delaunay(2 ** s, seed=seed),
    "rgg": lambda s, seed: gen.random_geometric(2 ** s, seed=seed),
    "road": lambda s, seed: gen.road_grid(2 ** (s // 2), 2 ** (s - s // 2), seed=seed),
    "power_law": lambda s, seed: gen.power_law(2 ** s, seed=seed),
    "random": lambda s, seed: gen.random_bipartite(2 ** s, 2 ** s, 4, seed=seed),
    "lattice3d": lambda s, seed: gen.lattice3d(round(2 ** (s / 3)), seed=seed),   # held out of auto's rule
}


def build(job):
    cls, scale, permuted = job
    a = gen.bipartite_view(CLASSES[cls](scale, 1))
    if permuted:
        a = gen.permute(a, seed=2)
    a = a.tocsr()
    return job, (a.indptr, a.indices, a.shape)


def method_options(spec: str) -> dict:
    """``"graft:graft=False,alpha=2"`` -> dict(method="graft", graft=False, alpha=2.0): a method
    with options, for the ablations (values parsed as Python literals); ``kernel=push=False;rounds=64``
    is a kernel :class:`jaxmatch.kernels.bfs_level.Config` with those knobs."""
    import ast
    from jaxmatch.kernels.bfs_level import Config

    def literal(value):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    name, _, rest = spec.partition(":")
    opts = dict(method=name)
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key == "kernel" and "=" in value:
            value = Config(**{k: literal(v) for k, v in (x.split("=") for x in value.split(";"))})
        opts[key] = value if isinstance(value, Config) else literal(value)
    return opts


def device_bytes(g, method):
    """Peak device memory of one solve from XLA's buffer assignment (arguments + outputs +
    temporaries), compiled under ``jit``: an upper bound, as the active list then has
    the column capacity instead of the eager run's free-column count."""
    import jax
    from jaxmatch.bipartite import maximum_matching
    m = jax.jit(lambda g: maximum_matching(g, **method_options(method))).lower(g).compile().memory_analysis()
    if m is None:
        return None
    return m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes


def timed_after(setup, fn):
    """A peer's job for :class:`Forked`: (seconds, fn(setup())), the set-up (building the
    peer's own graph) not timed."""
    def job():
        x = setup()
        clock_started()
        t = time.perf_counter()
        out = fn(x)
        return time.perf_counter() - t, out
    return job


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scales", type=int, nargs="+", default=[20, 22])
    p.add_argument("--classes", nargs="+", default=["kron", "rmat_hard", "delaunay", "rgg", "road", "power_law"])
    p.add_argument("--methods", nargs="+", default=["pr"],
                   help="methods, each optionally with options: apfb:bfs=gpubfs graft:graft=False")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--peers", nargs="*", default=["scipy", "igraph"])
    p.add_argument("--orders", nargs="+", choices=["orig", "rcp"], default=["orig", "rcp"],
                   help="original vertex order, random row and column permutation (RCP), or both")
    p.add_argument("--small", action="store_true", help="tiny sizes for a CPU smoke test")
    p.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1))
    p.add_argument("--peer-limit", type=float, default=30.0,
                   help="seconds a CPU peer may run on after jaxmatch's runs of the graph end "
                        "(or, if it is still building its input then, after it starts its clock)")
    p.add_argument("--untimed-after", type=float, default=float("inf"),
                   help="a method whose first call (compilation included) takes longer is run once, not timed")
    p.add_argument("--json", default="bench_matching.json")
    p.add_argument("--no-memory", action="store_true",
                   help="skip the peak-memory measurement (a second, jitted compile per method)")
    p.add_argument("--default-flags", action="store_true", help="do not set XLA command-buffer flags")
    args = p.parse_args()
    if not args.default_flags and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = FAST_FLAGS
    if args.small:
        args.scales, args.repeats = [10], 3

    import jax
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    import jaxmatch
    from jaxmatch import certify
    from jaxmatch.bipartite import maximum_matching

    try:
        import igraph as ig
    except ImportError:
        ig = None
        print("note: igraph not importable, its column is skipped")

    jobs = [(c, s, perm) for s in args.scales for c in args.classes
            for perm in [o == "rcp" for o in args.orders]]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(args.workers, len(jobs))) as pool:
        built = dict(pool.map(build, jobs))
    print(f"built {len(jobs)} graphs in {time.perf_counter() - t0:.1f} s", flush=True)

    device = jax.devices()[0]
    rows_out = []

    def log(what):   # progress on stderr, seconds since the graphs began to build
        print(f"  [{time.perf_counter() - t0:7.1f} s] {what}", file=sys.stderr, flush=True)

    for job in jobs:
        cls, scale, perm = job
        indptr, indices, shape = built[job]
        a = sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=shape)
        name = f"{cls}{scale}{'-rcp' if perm else ''}"
        rec = dict(graph=name, n_rows=shape[0], n_cols=shape[1], edges=int(a.nnz))
        coo = a.tocoo()
        g = jaxmatch.BipartiteGraph.from_edges(coo.row, coo.col, shape[0], shape[1])
        del coo
        log(f"{name}: on the device")
        # peers: one timed run each, in forked processes while jaxmatch runs; their sizes must agree
        peers, sizes = {}, {}
        if "scipy" in args.peers:
            peers["scipy"] = Forked(timed_after(
                lambda: a, lambda a: int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum())))
        if ig is not None and "igraph" in args.peers:
            def igraph_input():
                coo = a.tocoo()
                types = np.concatenate([np.zeros(shape[0], bool), np.ones(shape[1], bool)]).tolist()
                return ig.Graph(n=shape[0] + shape[1], edges=np.column_stack([coo.row, shape[0] + coo.col])), types
            peers["igraph"] = Forked(timed_after(igraph_input, lambda x: len(x[0].maximum_bipartite_matching(x[1]))))
        rec["slots"] = jaxmatch.bipartite.active_slots(g, jaxmatch.bipartite._start(
            g, init="karp_sipser", init_rounds=jaxmatch.bipartite._init.DEFAULT_ROUNDS)[1])
        for method in args.methods:
            t = time.perf_counter()
            opts = method_options(method)
            res = jax.block_until_ready(maximum_matching(g, **opts))
            compile_s = time.perf_counter() - t
            log(f"{name} {method}: first call {compile_s:.1f} s")
            untimed = compile_s > args.untimed_after   # too slow to time here: one run (with compilation) only
            if not untimed:
                med, _, res = timed(lambda: jax.block_until_ready(maximum_matching(g, **opts)), args.repeats)
            if not sizes:   # the first method's answer: proved maximum on its own
                certify.check_maximum_matching(a, res.row_mate, res.col_mate)
            else:           # the others: valid, and (assert below) of the same, maximum, size
                certify.check_matching(a, res.row_mate, res.col_mate)
            sizes[method] = int(res.cardinality)
            log(f"{name} {method}: {'checked' if untimed else 'timed and checked'}")
            if untimed:
                rec[method] = dict(time_s=None, first_call_s=compile_s, untimed=True)
                print(f"note: {name} {method}: first call {compile_s:.1f} s > --untimed-after, not timed", flush=True)
                continue
            st = {k: int(v) for k, v in res.stats.items()}
            steps = st.get("iterations", st.get("phases", 1))
            peak = None if args.no_memory else device_bytes(g, method)
            rec[method] = dict(time_s=med, first_call_s=compile_s, edges_per_s=a.nnz / med,
                               us_per_step=1e6 * med / max(1, steps), peak_device_bytes=peak,
                               bytes_per_edge=peak / a.nnz if peak else None, **st)
        log(f"{name}: methods done")
        for peer, run in peers.items():  # a peer gets --peer-limit seconds more once jaxmatch is done
            rec[f"{peer}_s"], size = run.result_after(args.peer_limit) or (None, None)
            if run.ran_for is not None:   # stopped: its time is more than this
                rec[f"{peer}_more_than_s"] = run.ran_for
            if size is not None:
                sizes[peer] = size
        assert len(set(sizes.values())) == 1, (name, sizes)  # every method and peer agree
        rec["maximum"] = sizes[args.methods[0]]
        rows_out.append(rec)
        print(json.dumps(rec), flush=True)
        meta = dict(device=str(device), platform=device.platform, jax=jax.__version__,
                    xla_flags=os.environ.get("XLA_FLAGS", ""), date=time.strftime("%Y-%m-%d"),
                    peer_runs=1, repeats=args.repeats, results=rows_out)
        out_dir = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / args.json).write_text(json.dumps(meta, indent=1))  # after every graph

    print(f"\ndevice {device} jax {jax.__version__}")
    hdr = f"{'graph':18s} {'rows':>9s} {'edges':>10s} {'max':>9s} {'scipy s':>8s} {'igraph s':>8s}"
    for m in args.methods:  # steps: push-relabel iterations, or augmenting-path phases
        hdr += f" {m + ' s':>9s} {'steps':>6s} {'us/st':>6s} {'vs ig':>6s} {'B/e':>5s}"
    print(hdr)
    ratios = {m: [] for m in args.methods}
    lower = {m: [] for m in args.methods}   # igraph stopped: speed-up at least this

    def secs(r, peer):
        if r.get(f"{peer}_s") is not None:
            return f"{r[f'{peer}_s']:8.3f}"
        more = r.get(f"{peer}_more_than_s")
        return f"{'>' + format(more, '.1f') if more else 'nan':>8s}"

    for r in rows_out:
        line = f"{r['graph']:18s} {r['n_rows']:9d} {r['edges']:10d} {r['maximum']:9d} {secs(r, 'scipy')} {secs(r, 'igraph')}"
        for m in args.methods:
            x = r[m]
            if x.get("untimed"):
                line += f" {'1st ' + format(x['first_call_s'], '.0f') + 's':>9s} {'untimed':>6s} {'':6s} {'':6s} {'':5s}"
                continue
            if r.get("igraph_s"):
                ratio = r["igraph_s"] / x["time_s"]
                ratios[m].append(ratio)
                shown = f"{ratio:6.2f}"
            elif r.get("igraph_more_than_s"):
                ratio = r["igraph_more_than_s"] / x["time_s"]
                lower[m].append(ratio)
                shown = f"{'>' + format(ratio, '.1f'):>6s}"
            else:
                shown = f"{'nan':>6s}"
            line += (f" {x['time_s']:9.4f} {x.get('iterations', x.get('phases', 0)):6d} "
                     f"{x['us_per_step']:6.0f} {shown} {x['bytes_per_edge'] or float('nan'):5.1f}")
        print(line)
    for m, rs in ratios.items():
        if rs:
            print(f"{m}: geometric mean speed-up over igraph {np.exp(np.mean(np.log(rs))):.2f}x "
                  f"(min {min(rs):.2f}x) on {len(rs)} graphs with an igraph time"
                  + (f"; at least {min(lower[m]):.1f}x on {len(lower[m])} where igraph was stopped"
                     if lower[m] else ""))
    plain = [m for m in args.methods if m != "auto"]
    if "auto" in args.methods and plain:
        both = [r for r in rows_out if r["auto"]["time_s"] and any(r[m]["time_s"] for m in plain)]
        if both:
            worst = max(r["auto"]["time_s"] / min(r[m]["time_s"] for m in plain if r[m]["time_s"]) for r in both)
            print(f"auto / best other timed method: at most {worst:.2f}x over {len(both)} graphs")


if __name__ == "__main__":
    main()
