"""Compile time against run time of the max-flow solver's push-step unrolling (issue 18, item 5).

``max_flow_arrays`` runs ``unroll`` push-relabel steps per loop iteration, each
a ``lax.switch`` over the step ladder's rungs, so the compiled program holds
``unroll`` copies of every rung. For each unroll value this compiles the
solver (lower + compile, timed) and runs it warm (median of 3) on road
grids at the default capacities, with the persistent BFS kernel on the GPU.
Prints one JSON line per case and writes them to $OUT (or experiments/results).

    python experiments/flow_unroll.py --scales 20 22 --unroll 1 2
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.bench_flow import build  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scales", type=int, nargs="+", default=[20])
    p.add_argument("--unroll", type=int, nargs="+", default=[1, 2])
    p.add_argument("--cls", default="road")
    args = p.parse_args()
    import jax
    import jax.numpy as jnp

    from jaxmatch import FlowNetwork, certify
    from jaxmatch.flow import push_relabel as pr
    from jaxmatch.kernels import bfs_level

    kernel = bfs_level.choose(None, jnp.zeros(1))
    rows = []
    for scale in args.scales:
        tail, head, cap, s, t, n, _ = build(args.cls, scale)
        net = FlowNetwork.from_edges(tail, head, cap, n)
        src, snk = jnp.asarray(s, jnp.int32), jnp.asarray(t, jnp.int32)
        value = None
        for unroll in args.unroll:
            f = jax.jit(partial(pr.max_flow_arrays, max_iters=jnp.int32(16 * net.vertex_cap + 4096), unroll=unroll,
                                kernel=kernel, interpret=kernel is not None and jax.default_backend() != "gpu"))
            t0 = time.perf_counter()
            compiled = f.lower(net, src, snk).compile()
            compile_s = time.perf_counter() - t0
            runs = []
            for _ in range(3):
                t0 = time.perf_counter()
                out = jax.block_until_ready(compiled(net, src, snk))
                runs.append(time.perf_counter() - t0)
            flow, val = out[0], int(out[1])
            certify.check_flow(net, s, t, flow[:int(net.n_arcs)], val)
            assert value is None or val == value
            value = val
            row = dict(graph=f"{args.cls}{scale}", arcs=int(net.n_arcs), unroll=unroll, compile_s=compile_s,
                       run_s=statistics.median(runs), steps=int(out[4]["iterations"]), value=val,
                       device=jax.devices()[0].device_kind, jax=jax.__version__)
            rows.append(row)
            print(json.dumps(row), flush=True)
    out_dir = Path(os.environ.get("OUT", "experiments/results"))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "flow_unroll.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
