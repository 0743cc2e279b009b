"""Where the flow solver's time goes on the GPU (issue 5): one traced run per graph.

For each instance (``bench_flow.py``'s generators and sizes, ``--sizes
CLASS:SCALE``), ``max_flow`` (BCSR, stored reverse index, the GPU defaults)
is warmed up, timed (median of ``--repeats``), then run once under
``jax.profiler.trace``. The trace's GPU kernels are summed by HLO
instruction and traced back to the jaxmatch line that made each one, or
to its shape where XLA inserted it (a copy; see
:func:`experiments.profile_louvain.hlo_sources`). Prints the top ``--top``
instructions, the kernels' share of the wall time and the kernel launches
and kernel time per loop step (push-relabel steps plus BFS levels); writes
JSON under $OUT (or experiments/results/).

Run it with ``XLA_FLAGS=--xla_gpu_enable_command_buffer=`` to see single
kernels (with command buffers, a trace may show whole graphs). A profile,
not a benchmark: compare shares, not times, with ``bench_flow.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.bench_flow import build, parse_sizes  # noqa: E402
from experiments.common import timed  # noqa: E402
from experiments.profile_louvain import hlo_sources, traced_kernel_times  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", default=["rlg:18", "road:20"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--top", type=int, default=30)
    a = p.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from jaxmatch.flow import FlowNetwork, _prepare, _solve_jit
    from jaxmatch.kernels import bfs_level
    rows = []
    for cls, scales in parse_sizes(a.sizes).items():
        for scale in scales:
            t, h, c, sources, sinks, n, _ = build(cls, scale)
            net = FlowNetwork.from_edges(t, h, c, n)
            src = jnp.asarray(np.resize(sources, 20), jnp.int32)
            snk = jnp.asarray(np.resize(sinks, 20), jnp.int32)
            net, src, snk, opts, _ = _prepare(net, src, snk, None, "index", None, 0.5, 1 << 18)
            opts.update(kernel=bfs_level.choose(None, net.cap), interpret=False)
            run = lambda: jax.block_until_ready(_solve_jit(net, src, snk, **opts))  # noqa: E731
            t0 = time.perf_counter()
            run()
            compile_s = time.perf_counter() - t0
            wall, _, out = timed(run, a.repeats)
            st = {k: int(np.asarray(v).sum()) for k, v in out[4].items()}
            steps = st["iterations"] + st["return_iterations"] + st["bfs_levels"]
            src_lines = hlo_sources(_solve_jit.lower(net, src, snk, **opts).compile().as_text())
            ns, calls, total = traced_kernel_times(run)
            top = [dict(op=op, ms=v / 1e6, launches=calls[op], per_step_us=v / 1e3 / max(steps, 1),
                        source=src_lines.get(op, "?")) for op, v in ns.most_common(a.top)]
            launches = sum(calls.values())
            rows.append(dict(graph=f"{cls}{scale}", n=int(n), arcs=int(t.size), steps=steps, stats=st, wall_s=wall,
                             compile_s=compile_s, kernel_s=total / 1e9, launches=launches, top=top,
                             kernel=str(opts["kernel"])))
            print(f"\n{cls}{scale}: n={n} arcs={t.size} steps={steps} (BFS levels {st['bfs_levels']}) wall "
                  f"{wall * 1e3:.1f} ms = {1e6 * wall / steps:.1f} us/step; kernels {total / 1e6:.1f} ms "
                  f"({total / 1e9 / wall:.0%} of wall), {launches / steps:.1f} launches and "
                  f"{total / 1e3 / steps:.1f} us of kernels per step; compile {compile_s:.1f} s", flush=True)
            for r in top:
                print(f"  {r['ms']:8.2f} ms {r['launches']:7d}x {r['per_step_us']:6.2f} us/step  "
                      f"{r['op'][:36]:36s} {r['source'][:90]}")
    out_dir = os.environ.get("OUT") or str(ROOT / "experiments" / "results")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"profile_flow_{time.strftime('%Y%m%d_%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump(dict(device=str(jax.devices()[0]), jax=jax.__version__, xla_flags=os.environ.get("XLA_FLAGS", ""),
                       rows=rows), f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
