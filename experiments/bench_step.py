"""Fixed cost of a ``lax.while_loop`` step on the device, and of the pieces of a G-PR step.

Each probe runs a jitted while loop of ``--steps`` steps whose body does one
operation on arrays of a given size (the loop carry depends on the result, so
nothing is hoisted) and reports microseconds per step (median of 5 after a
warm-up). Then G-PR is solved on mesh-like graphs, where thousands of steps
make the per-step cost matter, with several numbers of push steps per round of
the outer loop (``push_relabel.SUBSTEPS``; 1 is one push step per round).

    python experiments/bench_step.py                 # XLA command buffers on
    python experiments/bench_step.py --default-flags
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

from experiments.common import FAST_FLAGS  # noqa: E402


def cumsum_expand(offsets, starts, first, lanes):
    """A variant of :func:`jaxmatch._ops.expand` by a cumulative sum of slot starts instead of
    a running maximum (measured slower inside G-PR; kept here as the probe's comparison)."""
    import jax.numpy as jnp
    n_slots = offsets.shape[0] - 1
    rel = offsets[:-1] - first
    before = jnp.sum(rel <= 0, dtype=jnp.int32) - 1
    marks = jnp.zeros(lanes, jnp.int32).at[jnp.where(rel > 0, rel, lanes)].add(1, mode="drop")
    slot = jnp.minimum(before + jnp.cumsum(marks, dtype=jnp.int32), n_slots - 1)
    p = first + jnp.arange(lanes, dtype=jnp.int32)
    return slot, starts[slot] + p - offsets[slot], p < offsets[-1]


def per_step(body, x, steps, repeats=5):
    """Microseconds per step of a while loop applying ``body`` to ``x``."""
    import jax
    from jax import lax

    @jax.jit
    def loop(x):
        return lax.fori_loop(0, steps, lambda i, x: body(x), x)

    jax.block_until_ready(loop(x))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(loop(x))
        times.append(time.perf_counter() - t)
    return 1e6 * statistics.median(times) / steps


def probes(lanes, slots, steps):
    import jax.numpy as jnp
    from jax import lax

    from jaxmatch import _ops
    rng = np.random.default_rng(0)
    deg = rng.integers(0, 8, slots).astype(np.int32)
    offsets = jnp.asarray(np.concatenate([[0], np.cumsum(deg)]).astype(np.int32))
    starts = jnp.asarray(rng.integers(0, 1 << 20, slots).astype(np.int32))
    keys = jnp.asarray(rng.integers(0, 100, lanes).astype(np.int32))
    seg = jnp.asarray(rng.integers(0, slots, lanes).astype(np.int32))
    v = jnp.zeros(lanes, jnp.int32)
    out = {}
    out[f"cumsum {lanes}"] = per_step(lambda x: jnp.cumsum(x + 1, dtype=jnp.int32) % 7, v, steps)
    out[f"cummax {lanes}"] = per_step(lambda x: lax.cummax(x + 1) % 7, v, steps)
    for name, fn in (("expand (cummax)", _ops.expand), ("expand (cumsum)", cumsum_expand)):
        out[f"{name} {slots}->{lanes}"] = per_step(
            lambda f: f + fn(offsets, starts, f % 4, lanes)[1][7] % 2, jnp.int32(0), steps)
    out[f"segment_argmin {lanes}->{slots}"] = per_step(
        lambda x: x + _ops.segment_argmin(keys + x, seg, seg, slots)[0][3] % 2, jnp.int32(0), steps)
    out[f"scatter-min {lanes}->{slots}"] = per_step(
        lambda x: x.at[seg].min(keys, mode="drop") + 1, jnp.zeros(slots, jnp.int32), steps)
    return out


def solve_meshes(scale, classes, substeps):
    import jax

    import jaxmatch
    from experiments.bench_matching import CLASSES
    from experiments import generators as gen
    from jaxmatch import certify
    from jaxmatch.bipartite import push_relabel
    rows = []
    for cls in classes:
        a = gen.bipartite_view(CLASSES[cls](scale, 1)).tocoo()
        g = jaxmatch.BipartiteGraph.from_edges(a.row, a.col, a.shape[0], a.shape[1])
        for sub in substeps:
            push_relabel.push_relabel.__kwdefaults__["substeps"] = sub
            jax.clear_caches()
            t = time.perf_counter()
            jax.block_until_ready(jaxmatch.maximum_matching(g))
            first = time.perf_counter() - t
            times = []
            for _ in range(5):
                t = time.perf_counter()
                res = jax.block_until_ready(jaxmatch.maximum_matching(g))
                times.append(time.perf_counter() - t)
            certify.check_maximum_matching(a.tocsr(), res.row_mate, res.col_mate)
            it = int(res.stats["iterations"])
            med = statistics.median(times)
            rows.append(dict(graph=f"{cls}{scale}", substeps=sub, time_s=med, first_call_s=first,
                             iterations=it, global_relabels=int(res.stats["global_relabels"]),
                             us_per_iter=1e6 * med / max(it, 1), cardinality=int(res.cardinality)))
            print(json.dumps(rows[-1]), flush=True)
    push_relabel.push_relabel.__kwdefaults__["substeps"] = push_relabel.SUBSTEPS
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--default-flags", action="store_true")
    p.add_argument("--lanes", type=int, default=1 << 18)
    p.add_argument("--slots", type=int, default=1 << 16)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--classes", nargs="*", default=["delaunay", "rgg", "road"])
    p.add_argument("--substeps", type=int, nargs="+", default=[1, 4, 16, 64])
    p.add_argument("--json", default=None)
    args = p.parse_args()
    if not args.default_flags and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = FAST_FLAGS
    import jax
    flags = "default" if args.default_flags else "command buffers"
    res = dict(device=str(jax.devices()[0]), jax=jax.__version__, flags=flags,
               xla_flags=os.environ.get("XLA_FLAGS", ""), date=time.strftime("%Y-%m-%d"),
               probes=probes(args.lanes, args.slots, args.steps),
               solves=solve_meshes(args.scale, args.classes, args.substeps))
    out_dir = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    name = args.json or f"bench_step_{'default' if args.default_flags else 'cmdbuf'}.json"
    (out_dir / name).write_text(json.dumps(res, indent=1))
    print(f"\n{res['device']}, jax {res['jax']}, {flags}")
    for k, us in res["probes"].items():
        print(f"  {k:36s} {us:8.1f} us/step")
    for r in res["solves"]:
        print(f"  G-PR {r['graph']:12s} substeps {r['substeps']:3d} {r['time_s']:.4f} s  "
              f"{r['iterations']:6d} steps  {r['us_per_iter']:6.1f} us/step")


if __name__ == "__main__":
    main()
