"""Cost of one round of the persistent kernels (GPU): a BFS level and a push-relabel round.

A directed path of ``L`` vertices with unit capacities, source at one end
and sink at the other: after the first global relabel the one unit of excess
moves one hop per push-relabel round, so ``max_flow`` runs about ``L``
rounds with one active vertex each, and its global relabel a BFS of ``L``
levels with one vertex each: nothing but the fixed cost of a round. Times
(median of ``--repeats``, after a warm-up call):

* ``bfs_levels`` alone over the path (the BFS kernel): us per level;
* ``max_flow`` with both kernels (the default on the GPU), with the BFS
  kernel only (``Config(push=False)``) and with neither (``kernel=False``):
  us per push-relabel round, the BFS levels' share (from the first line)
  taken off.

    python experiments/bench_rounds.py                 # GPU, < 1 min
    python experiments/bench_rounds.py --configs push_block=32,width=8 num_warps=1
    python experiments/bench_rounds.py --length 512    # CPU smoke test (interpreted kernels)
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


def median_time(fn, repeats):
    import jax
    jax.block_until_ready(fn())
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--length", type=int, default=1 << 12)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--configs", nargs="*", default=[],
                   help="more runs with both kernels and these Config knobs, e.g. push_block=32,width=8")
    args = p.parse_args()
    import jax
    import jax.numpy as jnp

    from jaxmatch import FlowNetwork, max_flow
    from jaxmatch.kernels import bfs_level

    L = args.length
    interpret = jax.default_backend() != "gpu"
    tail = np.arange(L - 1, dtype=np.int32)
    net = FlowNetwork.from_edges(tail, tail + 1, np.ones(L - 1, np.int32), L)
    vc = net.vertex_cap
    dist = np.full(vc, 2**31 - 1, np.int32)
    dist[L - 1] = 0
    frontier = np.full(2 * vc, vc, np.int32)
    frontier[0] = L - 1
    rc = jnp.asarray(np.asarray(net.res_forward, np.int32))   # the forward arcs residual: a BFS back to 0
    reads = (net.res.indptr, net.res.indices, net.res_rev, rc, jnp.ones(vc, bool))

    def bfs():
        out, levels = None, 0
        buf, count, d, side = jnp.asarray(frontier), 1, jnp.asarray(dist), 0
        while count > 0:   # launches of Config.levels levels until the path is done
            d, buf, side, count, _, done, _ = bfs_level.bfs_levels(buf, count, 1 + levels, d, *reads, side=side,
                                                                   interpret=interpret)
            count, levels, out = int(count), levels + int(done), d
        return out
    rows = [dict(case="bfs_levels", levels=L - 1, s=median_time(bfs, args.repeats))]
    per_level = rows[0]["s"] / (L - 1)
    rows[0]["us_per_level"] = 1e6 * per_level
    print(json.dumps(rows[0]), flush=True)
    variants = [("both kernels", True), ("bfs kernel", bfs_level.Config(push=False)), ("xla", False)]
    for knobs in args.configs:
        variants.append((knobs, bfs_level.Config(**{k: int(v) for k, v in (x.split("=") for x in knobs.split(","))})))
    for name, kernel in variants:
        r = max_flow(net, 0, L - 1, kernel=kernel)
        assert int(r.flow_value) == 1, r
        t = median_time(lambda: max_flow(net, 0, L - 1, kernel=kernel), args.repeats)
        it = int(r.stats["iterations"]) + int(r.stats["return_iterations"])
        levels = int(r.stats["bfs_levels"])
        bfs_share = levels * per_level if kernel is not False else 0.0
        rows.append(dict(case=name, s=t, rounds=it, bfs_levels=levels, global_relabels=int(r.stats["global_relabels"]),
                         us_per_round=1e6 * (t - bfs_share) / max(it, 1)))
        print(json.dumps(rows[-1]), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_rounds.json").write_text(json.dumps(dict(device=jax.devices()[0].device_kind, jax=jax.__version__,
                                                           length=L, rows=rows), indent=1))


if __name__ == "__main__":
    main()
