"""Where the sharded Louvain's time goes, by stage, as the mesh grows (issue 23's weak scaling).

For each device count (1, 2, 4, ... up to the local devices), a planted-partition
graph of ``--edges-per-device`` edges per device (average degree 16, groups
of 1,024, p_in 0.8, as ``bench_multigpu.py --louvain-class planted``; or
``--graph-class`` power_law, rmat, delaunay or road of about as many edges) is
sharded over that many devices and the stages of ``jaxmatch.louvain`` on it
are timed apart (second of two runs, each stage blocked on):

- ``level_one``: the sharded local moving and each device's aggregation;
- ``coarse``: the coarse graph (on the first device, or split over the mesh
  when :func:`jaxmatch.community.sharded.too_big` says so);
- ``rest``: the remaining levels (``jaxmatch.louvain`` on the coarse graph,
  without refinement);
- ``refine``: the sharded moves from the final labels on the input graph;
- ``whole``: the whole default call, for the overhead between the stages;

and the one-device solver on the same graph when it fits (``--no-solo`` skips
it), with its vertices per level: its level one's community count against
``coarse_vertices``, the sharded level one's. Prints one line per device
count and writes ``profile_sharded_louvain.json`` under $OUT (default
experiments/results).

    NCCL_NVLS_ENABLE=0 PYTHONPATH=. python3 experiments/profile_sharded_louvain.py --edges-per-device 16777216
    PYTHONPATH=. python3 experiments/profile_sharded_louvain.py --edges-per-device 65536 --host-devices 4  # CPU
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--edges-per-device", type=int, default=1 << 24)
    p.add_argument("--host-devices", type=int, default=0, help="CPU only: this many host devices")
    p.add_argument("--no-solo", action="store_true", help="skip the one-device solver")
    p.add_argument("--device-counts", type=int, nargs="+", default=None,
                   help="the device counts to profile (default 1, 2, 4, 8 and all, up to the devices present)")
    p.add_argument("--graph-class", default="planted", choices=("planted", "power_law", "rmat", "delaunay", "road"),
                   help="planted partition (default), or a bench_louvain class of about the same edge count")
    p.add_argument("--config", nargs="*", default=[], metavar="KEY=INT",
                   help="Config fields for every stage, e.g. order=0 one_device_entries=4194304")
    args = p.parse_args()
    if args.host_devices:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + f" --xla_force_host_platform_device_count={args.host_devices}")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh

    import jaxmatch
    import scipy.sparse as sp

    from experiments import generators as gen
    from experiments.generators import planted_partition_edges
    from jaxmatch import community as C
    from jaxmatch.community import sharded as shl
    from jaxmatch.community.config import Config

    devs = jax.local_devices()
    counts = sorted({k for k in (args.device_counts or (1, 2, 4, 8, len(devs))) if k <= len(devs)})
    print(f"devices: {len(devs)} x {devs[0].device_kind}, jax {jax.__version__}", flush=True)
    cfg, rows = Config(**{k: int(v) for k, v in (a.split("=") for a in args.config)}), []
    for k in counts:
        m = args.edges_per_device * k
        n = m // 8
        if args.graph_class == "planted":
            u, v = planted_partition_edges(n, m, groups=max(n // 1024, 1), p_in=0.8, seed=k)
        else:
            A = {"power_law": lambda: gen.power_law(m // 8, seed=k),
                 "rmat": lambda: gen.rmat(max(int(np.log2(m / 16)), 1), seed=k),
                 "delaunay": lambda: gen.delaunay(m // 3, seed=k),
                 "road": lambda: gen.road_grid(int(np.sqrt(m / 1.8)), int(np.sqrt(m / 1.8)), seed=k)}[args.graph_class]()
            T = sp.triu(A, 1).tocoo()
            u, v, n, m = T.row, T.col, A.shape[0], T.nnz
        sg = jaxmatch.ShardedGraph.from_edges(u, v, None, n=n, mesh=Mesh(np.array(devs[:k]), ("d",)))
        gains = (jnp.float32(1), jnp.float32(0), jnp.float32(1e-2))   # the defaults past large_graph
        for _ in range(2):
            T = {}
            t = time.perf_counter()
            comm, q1, it, moves, status, *pairs = jax.block_until_ready(
                shl.level_sweeps(sg, *gains, both=False, order=cfg.order, max_iters=100, cfg=cfg))
            T["level_one"] = time.perf_counter() - t
            t = time.perf_counter()
            entries = int(np.sum(np.asarray(pairs[-1])))
            spread = k > 1 and shl.too_big(entries, sg, cfg)
            coarse, dense = (shl.coarse_sharded(sg, *pairs, n) if spread else shl.coarse_graph(*pairs, n))
            jax.block_until_ready(coarse)
            T["coarse"] = time.perf_counter() - t
            del pairs
            t = time.perf_counter()
            more = dict(resolution=1.0, threshold=1e-6, threshold_large=1e-2, large_graph=100_000,
                        max_levels=None, max_iters=None, refine=False, config=cfg)
            # the mesh's coarse levels stop as the solver's do, from level one's Q
            r = jax.block_until_ready(C._louvain_sharded(coarse, coarse=True, throw=False, q_start=float(q1),
                                                         **more) if spread
                                      else C._coarse_levels(coarse, **more))
            T["rest"] = time.perf_counter() - t
            if spread:       # the first coarse level's sweeps on the mesh alone, each bucket order apart
                for name, both, o in (("rest_mesh_level", True, cfg.order), ("rest_mesh_low", False, 0),
                                      ("rest_mesh_high", False, 1)):
                    t = time.perf_counter()
                    out = jax.block_until_ready(shl.level_sweeps(coarse, *gains, both=both, order=o,
                                                                 max_iters=100, cfg=cfg))
                    T[name] = time.perf_counter() - t
                    T[name + "_passes"] = int(out[2])
                    if name == "rest_mesh_level":
                        level = out                           # the default orders' run
                # the levels after it, as _louvain_sharded runs them: its coarse graph, then one device
                t = time.perf_counter()
                entries2 = int(np.sum(np.asarray(level[-1])))
                spread2 = shl.too_big(entries2, coarse, cfg)
                small, _ = jax.block_until_ready(shl.coarse_sharded(coarse, *level[5:], int(coarse.n)) if spread2
                                                 else shl.coarse_graph(*level[5:], int(coarse.n)))
                T["rest_coarse2"], T["rest_coarse2_entries"] = time.perf_counter() - t, entries2
                t = time.perf_counter()
                jax.block_until_ready(C._louvain_sharded(small, coarse=True, throw=False, q_start=float(level[1]),
                                                         **more) if spread2
                                      else C._coarse_levels(small, **more))
                T["rest_small"] = time.perf_counter() - t
            else:            # the first coarse level alone on one device
                t = time.perf_counter()
                jax.block_until_ready(C._coarse_levels(coarse, **dict(more, max_levels=1)))
                T["rest_first_level"] = time.perf_counter() - t
            start = np.full(sg.vertex_cap, sg.vertex_cap, np.int32)
            start[:n] = np.asarray(r.labels)[np.asarray(dense)]
            t = time.perf_counter()
            jax.block_until_ready(shl.level_sweeps(sg, *gains, jax.device_put(start), both=True, order=cfg.order,
                                                   max_iters=100, coarsen=False, cfg=cfg))
            T["refine"] = time.perf_counter() - t
            t = time.perf_counter()
            whole = jax.block_until_ready(jaxmatch.louvain(sg, config=cfg))
            T["whole"] = time.perf_counter() - t
        row = dict(config=args.config, graph_class=args.graph_class, devices=k, edges=int(m), passes=int(it), coarse_vertices=int(coarse.n),
                   coarse_entries=entries,
                   coarse_on_mesh=spread,
                   modularity=float(whole.modularity), levels=np.asarray(whole.stats["vertices"]).tolist(),
                   **{a: round(b, 4) if isinstance(b, float) else b for a, b in T.items()})
        if not args.no_solo:
            g = jaxmatch.Graph.from_edges(u, v, None, n=n)
            jax.block_until_ready(jaxmatch.louvain(g))
            t = time.perf_counter()
            solo = jax.block_until_ready(jaxmatch.louvain(g))
            row.update(one_device_s=round(time.perf_counter() - t, 4), one_device_modularity=float(solo.modularity),
                       one_device_levels=np.asarray(solo.stats["vertices"]).tolist())
            del g
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    tag = "_" + "_".join(args.config).replace("=", "-") if args.config else ""
    tag += "" if args.graph_class == "planted" else "_" + args.graph_class
    (out / f"profile_sharded_louvain{tag}.json").write_text(json.dumps(dict(
        device=devs[0].device_kind, jax=jax.__version__, rows=rows), indent=1))


if __name__ == "__main__":
    main()
