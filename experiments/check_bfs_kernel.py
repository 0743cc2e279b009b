"""GPU check of the persistent kernels (jaxmatch.kernels.bfs_level, push_flow, push_match): answers and counters.

Runs ``max_flow`` and G-PR ``maximum_matching`` with the BFS kernel (many BFS levels per launch, a grid
barrier between levels) and without it (XLA levels) on random networks and
on the benchmark generators' classes at small sizes; the global relabels'
BFS is deterministic, so both must give the same flow value, the same
counters (steps, global relabels, BFS levels) and pass the certificates.
``max_flow`` and G-PR also run with their push kernels (the default on the GPU),
which must give the same flow value or cardinality and pass the certificates;
G-PR's push kernel also runs on random graphs of up to 3,000 vertices a side
(many columns to few rows, short launches) against scipy.
Also runs the kernel alone against its pure-JAX reference, level by level
and many levels per launch, and checks that no program stalled at a barrier.

    python experiments/check_bfs_kernel.py            # GPU, < 2 min
    python experiments/check_bfs_kernel.py --small    # a few cases (under compute-sanitizer)
    python experiments/check_bfs_kernel.py --knobs push_block=32,push_width=4   # other kernel knobs
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.bench_flow import build  # noqa: E402
from experiments.common import knobs  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true")
    p.add_argument("--knobs", default="", help="Config knobs under every kernel run, e.g. push_block=32,push_width=4")
    args = p.parse_args()
    import jax
    import jax.numpy as jnp

    from jaxmatch import FlowNetwork, certify, max_flow
    from jaxmatch.kernels import bfs_level

    interpret = jax.default_backend() != "gpu"
    base = bfs_level.Config(**knobs(args.knobs))
    knob = lambda **kw: base._replace(**kw)   # noqa: E731  (the kernel runs' Config: --knobs, then the case's)
    rng = np.random.default_rng(0)
    rows = []

    # the kernel alone: many levels per launch equal the reference run level by level
    for trial in range(3 if args.small else 20):
        n = int(rng.integers(2, 200))
        m = int(rng.integers(1, 6 * n))
        t, h = rng.integers(0, n, m), rng.integers(0, n, m)
        net = FlowNetwork.from_edges(t, h, rng.integers(0, 3, m), n, vertex_capacity=256, arc_capacity=1024)
        rc = jnp.asarray(rng.integers(0, 2, net.res_rev.shape[0]), jnp.int32)
        vc = net.vertex_cap
        dist = np.full(vc, 2**31 - 1, np.int32)
        roots = rng.choice(n, size=int(rng.integers(1, min(n, 8) + 1)), replace=False)
        dist[roots] = 0
        frontier = np.full(2 * vc, vc, np.int32)
        frontier[:roots.size] = roots
        counted = jnp.ones(vc, bool)
        args_ = (net.res.indptr, net.res.indices, net.res_rev, rc, counted)
        d, buf, side, cnt, found, done, stalled = bfs_level.bfs_levels(
            jnp.asarray(frontier), roots.size, 1, jnp.asarray(dist), net.res.indptr, net.res.indices, rc[net.res_rev],
            counted, interpret=interpret)
        rd, rf, rcount, level = jnp.asarray(dist), jnp.asarray(frontier[:vc]), roots.size, 1
        while rcount > 0:
            rd, rf, rcount, _ = bfs_level._reference(rf, rcount, level, rd, *args_)
            rcount, level = int(rcount), level + 1
        ok = np.array_equal(np.asarray(d), np.asarray(rd)) and int(cnt) == 0 and not bool(stalled)
        ok &= int(done) == level - 1
        rows.append(dict(case=f"levels{trial}", n=n, m=m, ok=bool(ok), levels=int(done)))

    # max_flow with the BFS kernel alone (the same counters as without it), with the push kernel too
    # (the same value; its counters differ: see jaxmatch.kernels.push_flow) and without kernels
    scale = 8 if args.small else 14
    for name in ("road", "rlg", "genrmf", "matching", "power_law"):   # power_law: hubs, so the XLA push steps
        tail, head, cap, s, t, n, _ = build(name, scale)
        net = FlowNetwork.from_edges(tail, head, cap, n)
        res = {}
        for key, kernel in (("push", knob()), ("push_reread", knob(relabel_from_push=False, fused=False)),
                            ("push_phases", knob(fused=False)), ("bfs", knob(push=False)),
                            ("xla", False)):
            jax.block_until_ready(max_flow(net, s, t, kernel=kernel))     # compile
            t0 = time.perf_counter()
            r = jax.block_until_ready(max_flow(net, s, t, kernel=kernel))
            res[key] = (r, time.perf_counter() - t0)
        keys = ("iterations", "global_relabels", "bfs_levels")
        for key in ("push", "push_reread", "push_phases", "bfs"):
            (a, ta), (b, tb) = res[key], res["xla"]
            certify.check_flow(net, s, t, a.flow, a.flow_value)
            certify.check_min_cut(net, s, t, np.asarray(a.source_side), a.flow_value)
            same = int(a.flow_value) == int(b.flow_value) and int(a.status) == 0
            if key == "bfs":
                same &= all(int(a.stats[k]) == int(b.stats[k]) for k in keys)
            rows.append(dict(case=f"{name}-{key}", n=int(n), m=int(tail.size), ok=bool(same),
                             value=int(a.flow_value), kernel_s=ta, xla_s=tb, **{k: int(a.stats[k]) for k in keys},
                             xla_iterations=int(b.stats["iterations"])))
    # G-PR matching with the BFS kernel alone (the same matching and counters as without kernels), and
    # with the push kernel too (its default on the GPU: the same cardinality, certified)
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from experiments import generators as gen
    from jaxmatch import from_scipy, maximum_matching
    side = 16 if args.small else 256
    for name, A in (("road_grid", gen.road_grid(side, side, seed=1)),
                    ("delaunay", gen.delaunay(side * side, seed=2))):
        g = from_scipy(A)
        res = {}
        for key, kernel in (("push", knob()), ("bfs", knob(push=False)), ("xla", False)):
            for method in ("pr", "auto"):
                jax.block_until_ready(maximum_matching(g, method=method, kernel=kernel))
                t0 = time.perf_counter()
                r = jax.block_until_ready(maximum_matching(g, method=method, kernel=kernel))
                res[key, method] = (r, time.perf_counter() - t0)
        for key in ("push", "bfs"):
            for method in ("pr", "auto"):
                (a, ta), (b, tb) = res[key, method], res["xla", method]
                certify.check_maximum_matching(g, a.row_mate, a.col_mate)
                same = int(a.cardinality) == int(b.cardinality) and int(a.status) == 0
                if key == "bfs":
                    same &= np.array_equal(np.asarray(a.row_mate), np.asarray(b.row_mate)) and \
                        {k: int(v) for k, v in a.stats.items()} == {k: int(v) for k, v in b.stats.items()}
                rows.append(dict(case=f"{name}-{method}-{key}", n=int(A.shape[0]), m=int(A.nnz), ok=bool(same),
                                 value=int(a.cardinality), kernel_s=ta, xla_s=tb,
                                 **{k: int(v) for k, v in a.stats.items() if "levels" in k or "iterations" in k}))
    # the push kernel under contention: random graphs, many columns to few rows and the reverse, short
    # launches (rounds=3), against scipy's cardinality and the Koenig certificate
    from jaxmatch import BipartiteGraph
    configs = (knob(), knob(rounds=3), knob(programs=4, levels=2))
    for trial in range(6 if args.small else 60):
        nr, nc = (int(x) for x in rng.integers(1, 3000 if not args.small else 200, 2))
        if trial % 3 == 1:
            nr = max(1, nr // 50)
        m = int(rng.integers(1, min(8 * max(nr, nc), 32768)))
        r_, c_ = rng.integers(0, nr, m), rng.integers(0, nc, m)
        g = BipartiteGraph.from_edges(r_, c_, nr, nc, row_capacity=4096, col_capacity=4096,
                                      edge_capacity=32768)    # one compilation per knob set
        A = sp.csr_array((np.ones(m), (r_, c_)), shape=(nr, nc))
        want = int(np.sum(maximum_bipartite_matching(A, perm_type="column") >= 0))
        ok = True
        for kernel in configs:
            for init in ("cheap", None):
                a = maximum_matching(g, method="pr", init=init, kernel=kernel)
                certify.check_maximum_matching(g, a.row_mate, a.col_mate)
                ok &= int(a.cardinality) == want and int(a.status) == 0
        rows.append(dict(case=f"gpr-random{trial}", n_rows=nr, n_cols=nc, m=m, ok=bool(ok), value=want))
    # a barrier that gives up at once (spin=0) must be reported, not hidden: on the GPU the programs
    # that arrive before the last one stall, and the solvers' status says so (interpreted: one program)
    from jaxmatch import Status
    tail, head, cap, s, t, n, _ = build("road", scale)
    net = FlowNetwork.from_edges(tail, head, cap, n)
    r = max_flow(net, s, t, kernel=knob(spin=0), throw=False)
    rows.append(dict(case="stall-reported", ok=(int(r.status) == Status.KERNEL_STALLED) != interpret,
                     status=r.status_name))
    for r in rows:
        print(json.dumps(r))
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    name = "check_bfs_kernel" + ("_small" if args.small else "") + (f"_{args.knobs}" if args.knobs else "")
    (out / (name.replace(",", "_").replace("=", "") + ".json")).write_text(
        json.dumps(dict(device=jax.devices()[0].device_kind, jax=jax.__version__, knobs=args.knobs, rows=rows),
                   indent=1))
    bad = [r["case"] for r in rows if not r["ok"]]
    print("FAILED: " + ", ".join(bad) if bad else "all ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
