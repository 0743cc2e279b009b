"""Batch build time against _build.BUILD_RUN and the thread count, alternated, median of 3."""
import json, os, sys, time
import numpy as np
import jax
import jaxmatch
from jaxmatch import _build

def gen(B, n=64, m=256, seed=0):
    rng = np.random.default_rng(seed)
    gid = np.repeat(np.arange(B), m)
    r, c = rng.integers(0, n, B * m), rng.integers(0, n, B * m)
    tail = rng.integers(0, n, B * m); head = (tail + rng.integers(1, n, B * m)) % n
    cap = rng.integers(1, 101, B * m); w = rng.random(B * m)
    return dict(
        bip=lambda: jaxmatch.BipartiteGraph.from_edges(r, c, np.full(B, n), np.full(B, n), graph_index=gid),
        flow=lambda: jaxmatch.FlowNetwork.from_edges(tail, head, cap, np.full(B, n), graph_index=gid),
        graph=lambda: jaxmatch.Graph.from_edges(r, c, w, np.full(B, n), graph_index=gid))

runs = [int(x) for x in os.environ.get("RUNS", "16,17,18,20").split(",")]
threads = [int(x) for x in os.environ.get("THREADS", "0").split(",")]
sizes = [int(x) for x in sys.argv[1:]] or [10000, 100000]
orig = _build.cores
out = []
for B in sizes:
    fns = gen(B)
    for name, fn in fns.items():
        jax.block_until_ready(fn())   # warm
        times = {}
        for rep in range(3):
            for lr in runs:
                for th in threads:
                    _build.BUILD_RUN = 1 << lr
                    _build.cores = (lambda th=th: th) if th else orig
                    t = time.perf_counter(); jax.block_until_ready(fn()); dt = time.perf_counter() - t
                    times.setdefault((lr, th), []).append(dt)
        for (lr, th), ts in times.items():
            row = dict(B=B, kind=name, run_log2=lr, threads=th or orig(), median_s=float(np.median(ts)), runs=ts)
            out.append(row); print(row, flush=True)
_build.cores = orig
if os.environ.get("OUT"):
    json.dump(out, open(os.path.join(os.environ["OUT"], "probe_build.json"), "w"), indent=1)

# the vmapped flow solve of a batch built as RCSR (the batch default) and as BCSR, alternated, median of 5
if os.environ.get("SOLVE"):
    _build.BUILD_RUN = 1 << 16
    for B in sizes:
        rng = np.random.default_rng(1); n, m = 64, 256
        gid = np.repeat(np.arange(B), m)
        tail = rng.integers(0, n, B * m); head = (tail + rng.integers(1, n, B * m)) % n
        cap = rng.integers(1, 101, B * m)
        nets = {lay: jaxmatch.FlowNetwork.from_edges(tail, head, cap, np.full(B, n), graph_index=gid, layout=lay)
                for lay in ("rcsr", "bcsr")}
        for what, f in (("max_flow", jaxmatch.max_flow), ("min_cut", jaxmatch.min_cut)):
            fn = jax.jit(jax.vmap(lambda net, f=f: f(net, 0, n - 1)))
            vals = {lay: np.asarray(jax.tree_util.tree_leaves(fn(net))[0]) for lay, net in nets.items()}
            assert np.array_equal(vals["rcsr"], vals["bcsr"])
            ts = {lay: [] for lay in nets}
            for rep in range(5):
                for lay, net in nets.items():
                    t = time.perf_counter(); jax.block_until_ready(fn(net)); ts[lay].append(time.perf_counter() - t)
            for lay in nets:
                row = dict(B=B, solve=what, layout=lay, median_s=float(np.median(ts[lay])), runs=ts[lay])
                out.append(row); print(row, flush=True)
    if os.environ.get("OUT"):
        json.dump(out, open(os.path.join(os.environ["OUT"], "probe_build.json"), "w"), indent=1)
