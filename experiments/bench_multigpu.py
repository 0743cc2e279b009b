"""Several GPUs of one host (issue 23): what runs on them today, timed against one GPU.

Today that is the data-parallel part: a batch of ``--graphs`` small graphs
(built in one pass with ``from_edges(graph_index=...)``, as in
``bench_batch.py``) solved by :func:`jaxmatch.solve_batch` over the first k
local devices, k = 1, 2, 4, ... up to all of them; every k's answers equal
the one-device answers exactly. Families: ``matching`` (G-PR cardinality of
``side`` x ``side`` bipartite graphs, ``degree`` edges per row), ``suitor``
(matching weight) and ``louvain`` (modularity) of random weighted graphs of
``side`` vertices. Per k: first call (compile included), warm solve (median
of ``--repeats``, answers back as NumPy), graphs per minute, speed-up over
one device and its efficiency (speed-up / k).

Not run yet: weak and strong scaling of the sharded solvers (Louvain, Suitor,
graft/APFB over one graph split across GPUs), which wait for issue 22's
``jaxmatch.shard``; the script says so in its output.

    python -m experiments.bench_multigpu                      # B = 100,000, all families
    NCCL_NVLS_ENABLE=0 python -m experiments.bench_multigpu --graphs 20000 --families matching
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from experiments.bench_batch import _weighted

FAMILIES = ("matching", "suitor", "louvain")


def build(family, rng, B, side, degree):
    """(batch, fn): one-pass batch of B random graphs and the per-graph answer to compute."""
    import jaxmatch
    m = side * degree
    gid = np.repeat(np.arange(B), m)
    u, v = rng.integers(0, side, B * m), rng.integers(0, side, B * m)
    if family == "matching":
        batch = jaxmatch.BipartiteGraph.from_edges(u, v, np.full(B, side), np.full(B, side), graph_index=gid)
        return batch, lambda g: jaxmatch.maximum_matching(g).cardinality
    n, _, gid, u, v, w = _weighted(rng, B, SimpleNamespace(side=side, degree=degree))  # bench_batch's graphs
    batch = jaxmatch.Graph.from_edges(u, v, w, np.full(B, n), graph_index=gid)
    if family == "suitor":
        return batch, lambda g: jaxmatch.suitor(g).weight
    return batch, lambda g: jaxmatch.louvain(g).modularity


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, default=100_000)
    p.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    p.add_argument("--side", type=int, default=64)
    p.add_argument("--degree", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")   # no NVLink multicast (the device machines' advice)
    import jax

    import jaxmatch
    devs = jax.local_devices()
    counts = sorted({k for k in (1, 2, 4, 8, len(devs)) if k <= len(devs)})
    print(f"devices: {len(devs)} x {devs[0].device_kind}, jax {jax.__version__}; device counts {counts}", flush=True)
    rows = []
    for family in args.families:
        t = time.perf_counter()
        batch, fn = build(family, np.random.default_rng(0), args.graphs, args.side, args.degree)
        build_s = time.perf_counter() - t
        one = None
        for k in counts:
            t = time.perf_counter()
            got = jaxmatch.solve_batch(fn, batch, devices=devs[:k])
            first = time.perf_counter() - t
            warm = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                jaxmatch.solve_batch(fn, batch, devices=devs[:k])
                warm.append(time.perf_counter() - t)
            one = got if one is None else one
            assert np.array_equal(got, one), f"{family}: answers on {k} devices differ from one device's"
            row = dict(family=family, graphs=args.graphs, devices=k, build_s=build_s, first_s=first,
                       warm_s=statistics.median(warm), warm_runs_s=warm)
            row["graphs_per_min"] = 60 * args.graphs / row["warm_s"]
            base = next(r for r in rows + [row] if r["family"] == family and r["devices"] == 1)
            row["speedup"] = base["warm_s"] / row["warm_s"]
            row["efficiency"] = row["speedup"] / k
            rows.append(row)
            print(json.dumps({k_: round(v, 4) if isinstance(v, float) else v for k_, v in row.items()
                              if k_ != "warm_runs_s"}), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_multigpu.json").write_text(json.dumps(dict(
        device=devs[0].device_kind, devices=len(devs), jax=jax.__version__, date=time.strftime("%Y-%m-%d"),
        rows=rows, not_run="weak/strong scaling of sharded solvers: jaxmatch.shard (issue 22) does not exist yet"),
        indent=1))
    print(f"\n{'family':9} {'graphs':>7} {'devices':>7} {'first s':>8} {'warm s':>8} {'M graphs/min':>13} "
          f"{'speed-up':>9} {'efficiency':>10}")
    for r in rows:
        print(f"{r['family']:9} {r['graphs']:7d} {r['devices']:7d} {r['first_s']:8.2f} {r['warm_s']:8.4f} "
              f"{r['graphs_per_min'] / 1e6:13.2f} {r['speedup']:9.2f} {r['efficiency']:10.2f}")
    print("\nnot run: weak and strong scaling of the sharded solvers (they wait for issue 22's jaxmatch.shard)")


if __name__ == "__main__":
    main()
