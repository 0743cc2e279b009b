"""Cost of one round of the persistent kernels (GPU): a BFS level and a push-relabel round.

A directed path of ``L`` vertices with unit capacities, source at one end
and sink at the other: a BFS from the sink has ``L - 1`` levels of one
vertex each, and with exact heights one unit of excess moves one hop per
push-relabel round: nothing but the fixed cost of a round. Times (median of
``--repeats``, after a warm-up call), for the default knobs and each of
``--configs``:

* ``bfs_levels`` (the BFS kernel) over the path in one launch: us per level;
* ``push_rounds`` (the push kernel) from vertex 1 to the sink in one launch:
  us per round;
* ``max_flow`` end to end on the path with both kernels (the GPU default),
  the BFS kernel only (``Config(push=False)``) and neither
  (``kernel=False``), with its rounds and BFS levels.

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
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def knobs(text):
    """``"push_block=32,width=8"`` -> that jaxmatch.kernels.bfs_level.Config."""
    from jaxmatch.kernels import bfs_level
    return bfs_level.Config(**{k: int(v) for k, v in (x.split("=") for x in text.split(","))})


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
    from jaxmatch.kernels import bfs_level, push_flow

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

    def bfs_time(cfg):   # one launch of all the levels
        launch = jax.jit(partial(bfs_level.bfs_levels, cfg=cfg._replace(levels=L + 1), interpret=interpret))
        out = launch(jnp.asarray(frontier), 1, 1, jnp.asarray(dist), *reads)
        assert int(out[5]) == L and int(out[0][0]) == L - 1, out   # levels run (the last finds nothing)
        return median_time(lambda: launch(jnp.asarray(frontier), 1, 1, jnp.asarray(dist), *reads), args.repeats)

    # the push kernel alone: exact heights, one unit of excess on vertex 1, one launch of L - 2 rounds
    height = jnp.asarray(np.maximum(L - 1 - np.arange(vc), 0), jnp.int32).at[0].set(L)
    rc0 = jnp.asarray(np.asarray(net.res_forward, np.int32))
    first_arc = int(np.asarray(net.res.indptr)[0])   # vertex 0's one residual arc, 0 -> 1
    rc0 = rc0.at[first_arc].set(0).at[int(np.asarray(net.res_rev)[first_arc])].set(1)
    excess = jnp.zeros(vc, jnp.int32).at[0].set(-1).at[1].set(1)
    queue = jnp.full(2 * vc, vc, jnp.int32).at[0].set(1)
    terminal = jnp.zeros(vc, jnp.int32).at[0].set(1).at[L - 1].set(1)
    fwd = jnp.asarray(net.res_forward, jnp.int32)

    def push_time(cfg):
        launch = jax.jit(partial(push_flow.push_rounds, n=L, round_id=1, room=1e9, max_rounds=L, cfg=cfg,
                                 interpret=interpret))

        def run():
            return launch(queue, 1, rc0, excess, height, jnp.full(vc, 2**31 - 1, jnp.int32), net.res.indptr,
                          net.res.indices,
                          net.res_rev, fwd, terminal)
        out = run()
        assert int(out.excess[L - 1]) == 1 and int(out.rounds) == L - 2, out
        return median_time(run, args.repeats)

    configs = [bfs_level.Config()] + [knobs(k) for k in args.configs]
    rows = []
    for name, cfg in zip(["default"] + args.configs, configs):
        tb, tp = bfs_time(cfg), push_time(cfg)
        rows.append(dict(case=name, bfs_s=tb, us_per_level=1e6 * tb / (L - 1), push_s=tp,
                         us_per_round=1e6 * tp / (L - 2)))
        print(json.dumps(rows[-1]), flush=True)
    # end to end: max_flow's rounds and levels with both kernels, the BFS kernel only, neither
    variants = [("max_flow " + k, c) for k, c in (("both kernels", configs[0]),
                                                  ("bfs kernel", configs[0]._replace(push=False)), ("xla", False))]
    for name, kernel in variants:
        r = max_flow(net, 0, L - 1, kernel=kernel)
        assert int(r.flow_value) == 1, r
        t = median_time(lambda: max_flow(net, 0, L - 1, kernel=kernel), args.repeats)
        rows.append(dict(case=name, s=t, rounds=int(r.stats["iterations"]) + int(r.stats["return_iterations"]),
                         bfs_levels=int(r.stats["bfs_levels"]), global_relabels=int(r.stats["global_relabels"])))
        print(json.dumps(rows[-1]), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_rounds.json").write_text(json.dumps(dict(device=jax.devices()[0].device_kind, jax=jax.__version__,
                                                           length=L, rows=rows), indent=1))


if __name__ == "__main__":
    main()
