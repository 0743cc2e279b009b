"""Where a round of the persistent flow kernels goes (GPU; issue 20): phase work against grid barriers.

``profile_flow.py`` gives the time per push round and per BFS level; it
cannot tell a round's work from its grid barriers (``ncu`` did not start
under JAX: RESULTS, session 23). Here the kernels' grid barrier
(:func:`jaxmatch.kernels._pallas._grid_sync`) is replaced, for this process
only, by one that reads the GPU's global nanosecond timer (``%globaltimer_lo``,
one clock for all SMs) when a program's arrival is acknowledged and when it
leaves, and logs both per program and barrier in extra words of the
kernel's state. After each launch the log is reduced on the device and
added up on the host. Per barrier i (all programs p):

* ``phase``: ``max_p arrive[p, i] - min_p leave[p, i - 1]``, the phase's
  critical path (the slowest program's work, plus one atomic's round trip);
* ``p0``: program 0's own share of it (it holds the queue's first chunk);
* ``barrier``: ``min_p leave[p, i] - max_p arrive[p, i]``, from the last
  arrival to the first program seeing it;
* ``skew``: ``max_p leave - min_p leave``, how far apart the programs leave.

Push launches have two barriers a round (push, relabel; one with
``Config.fused``), BFS launches one a level; the first barrier of a launch
has no phase before it in the log and is left out. Then ``max_flow`` is
timed (median of ``--repeats``) with the plain barrier, for the rounds' share of
the wall time. A diagnostic, not a benchmark: the timer reads cost a little.

    python experiments/time_rounds.py --sizes genrmf:21 rlg:21 road:21 mesh:50
    python experiments/time_rounds.py --sizes genrmf:18 --configs fused=1
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
from experiments.common import knobs as parse_knobs  # noqa: E402

MAX_BARRIERS = 2 * 1024 + 4     # a push launch: 2 x Config.rounds; a BFS launch: Config.levels
TOTALS: dict = {}
CHUNK_WORDS = 8
# the stretches of a push chunk between push_flow._mark's points, the chunks, the busiest program's sum
CHUNK_NAMES = ("vertex_loads", "row_bounds", "tiles", "finish", "chunks", "busiest")


def install():
    """Swap the timed barrier into the push and BFS kernels (module globals read when they trace)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    from jaxmatch.kernels import _pallas as P, bfs_level, push_flow

    def now(dep):
        """The global timer's low word, read once ``dep`` is known (the asm is pure: it needs an operand)."""
        two = jnp.full((2,), dep, jnp.int32)    # Triton's inline asm wants a tensor operand
        [t] = plgpu.elementwise_inline_asm("mov.u32 $0, %globaltimer_lo;", args=[two], constraints="=r,r",
                                           pack=1, result_shape_dtypes=[jax.ShapeDtypeStruct((2,), jnp.int32)])
        return jnp.max(t)

    def timed_sync(base):
        def sync(state, arrived, target, spin, interpret):
            grid = pl.num_programs(0)
            i = target // grid - 1                        # barriers of this launch before this one
            slot = base + (pl.program_id(0) * MAX_BARRIERS + jnp.minimum(i, MAX_BARRIERS - 1)) * 2
            P._barrier(interpret)
            seen = P._atomic_add(state, arrived, 1, interpret, "release") + 1
            t_arrive = now(seen)
            seen, _ = lax.while_loop(lambda v: (v[0] < target) & (v[1] < spin),
                                     lambda v: (P._read(state, arrived, interpret), v[1] + 1), (seen, jnp.int32(0)))
            seen = P._atomic_add(state, arrived, 0, interpret, "acquire")
            t_leave = now(seen)
            P._barrier(interpret)
            P._put(state, slot, t_arrive, interpret)     # a scalar store as the kernels make them
            P._put(state, slot + 1, t_leave, interpret)
            return seen >= target
        return sync

    def summary(st, base, grid, per_round, kind):
        log = st[base:base + grid * MAX_BARRIERS * 2].reshape(grid, MAX_BARRIERS, 2)
        arrive, leave = log[..., 0], log[..., 1]
        ran = jnp.all(leave != 0, axis=0)                       # barriers this launch passed
        ok = ran & jnp.concatenate([jnp.zeros(1, bool), ran[:-1]])   # ... with one before it
        first_leave, last_leave = jnp.min(leave, 0), jnp.max(leave, 0)
        last_arrive = jnp.max(arrive, 0)
        prev = jnp.concatenate([first_leave[:1], first_leave[:-1]])
        p0_prev = jnp.concatenate([leave[0, :1], leave[0, :-1]])
        parts = dict(phase=last_arrive - prev, p0=arrive[0] - p0_prev, barrier=first_leave - last_arrive,
                     skew=last_leave - first_leave)
        kinds = jnp.arange(MAX_BARRIERS) % per_round
        out = []
        for k in range(per_round):
            sel = ok & (kinds == k)
            out.append(jnp.sum(sel).astype(jnp.float32))
            out += [jnp.sum(jnp.where(sel, v, 0).astype(jnp.float32)) / 1e3 for v in parts.values()]
        jax.debug.callback(partial_add(kind, per_round, list(parts)), jnp.stack(out))

    def partial_add(kind, per_round, names):
        def add(vec):
            vec = np.asarray(vec, np.float64).reshape(per_round, 1 + len(names))
            for k in range(per_round):
                row = TOTALS.setdefault(f"{kind}[{k}]", dict(barriers=0.0, **{n: 0.0 for n in names}))
                row["barriers"] += vec[k, 0]
                for j, n in enumerate(names):
                    row[n] += vec[k, 1 + j]
        return add

    def chunk_summary(st, base, grid):
        """The push chunks' stretches of one launch (``push_flow._mark``), added up on the host: per
        stretch the nanoseconds over all programs' chunks, the chunks, and the busiest program's time."""
        log = st[base:base + grid * CHUNK_WORDS].reshape(grid, CHUNK_WORDS).astype(jnp.float32)
        per_program = jnp.sum(log[:, :4], axis=1)
        vec = jnp.concatenate([jnp.sum(log[:, :5], axis=0), jnp.max(per_program)[None]])

        def add(v):
            row = TOTALS.setdefault("chunk", dict(zip(CHUNK_NAMES, [0.0] * len(CHUNK_NAMES))))
            for name, x in zip(CHUNK_NAMES, np.asarray(v, np.float64)):
                row[name] += x
        jax.debug.callback(add, vec)

    sms = getattr(jax.devices()[0], "core_count", None) or 132   # the grid's programs, at most
    chunk_base = {}
    for mod, kind in ((push_flow, "push"), (bfs_level, "bfs")):
        base = mod._STATE
        mod._STATE = base + sms * MAX_BARRIERS * 2
        mod._grid_sync = timed_sync(base)
        orig = mod._persistent_call

        def call(kernel, reads, alias, *, grid, cfg, interpret, warps=None, _orig=orig, _base=base, _kind=kind):
            out = _orig(kernel, reads, alias, grid=grid, cfg=cfg, interpret=interpret, warps=warps)
            st = out[5] if _kind == "push" else out[-3 if cfg.bounds else -1]   # bounds: two arrays after it
            per = (1 if cfg.fused else 2) if _kind == "push" else 1
            if grid > 1:      # a one-program launch (Config.solo) has no grid barrier
                summary(st, _base, grid, per, _kind)
            if _kind == "push":
                chunk_summary(st, chunk_base["push"], grid)
            return out
        mod._persistent_call = call

    # the push chunks' probe points (push_flow._mark): per program, the nanoseconds of each stretch
    # between them (the timer read once the stretch's loads are known) and its chunks
    chunk_base["push"] = push_flow._STATE
    push_flow._STATE += sms * CHUNK_WORDS
    marks = []

    def mark(point, dep, state):
        marks.append(now(dep()))
        if point == 4:
            t = marks[-5:]
            marks.clear()
            slot = chunk_base["push"] + pl.program_id(0) * CHUNK_WORDS
            for j in range(4):
                P._atomic_add(state, slot + j, t[j + 1] - t[j], False)
            P._atomic_add(state, slot + 4, 1, False)
    push_flow._mark = mark
    jax.clear_caches()   # the solvers traced before this must trace again with the timed barrier


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", default=["genrmf:21", "rlg:21", "road:21", "mesh:50"])
    p.add_argument("--configs", nargs="*", default=[""], help="Config knobs per run, e.g. fused=1 ('' the defaults)")
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from jaxmatch.flow import FlowNetwork, max_flow
    from jaxmatch.kernels import bfs_level
    if jax.default_backend() != "gpu":
        sys.exit("time_rounds.py reads the GPU's timer: run it on a GPU")
    plain = {}
    for cls, scales in parse_sizes(a.sizes).items():
        for scale in scales:
            t, h, c, sources, sinks, n, _ = build(cls, scale)
            net = FlowNetwork.from_edges(t, h, c, n)
            src = jnp.asarray(sources, jnp.int32)
            snk = jnp.asarray(sinks, jnp.int32)
            for knobs in a.configs:
                cfg = bfs_level.Config(**parse_knobs(knobs))
                run = lambda: jax.block_until_ready(max_flow(net, src, snk, kernel=cfg))  # noqa: E731
                run()
                times = []
                for _ in range(a.repeats):
                    t0 = time.perf_counter()
                    res = run()
                    times.append(time.perf_counter() - t0)
                plain[(cls, scale, knobs)] = (float(np.median(times)), {k: int(v) for k, v in res.stats.items()},
                                              (net, src, snk, cfg))
    install()
    rows = []
    for (cls, scale, knobs), (wall, stats, (net, src, snk, cfg)) in plain.items():
        TOTALS.clear()
        t0 = time.perf_counter()
        res = jax.block_until_ready(max_flow(net, src, snk, kernel=cfg))
        timed_wall = time.perf_counter() - t0
        jax.effects_barrier()
        row = dict(graph=f"{cls}{scale}", config=knobs or "default", wall_s=wall, timed_wall_s=timed_wall,
                   value=float(res.flow_value), stats=stats, parts={k: dict(v) for k, v in TOTALS.items()})
        rows.append(row)
        print(f"\n{row['graph']} [{row['config']}]: wall {wall:.4f} s (median of {a.repeats}), "
              f"{stats.get('iterations')} push rounds, {stats.get('bfs_levels')} BFS levels")
        print(f"  {'barrier kind':<10} {'count':>9} {'phase us':>9} {'p0 us':>8} {'barrier us':>10} {'skew us':>8} "
              f"{'total s':>8}")
        for k, v in sorted(TOTALS.items()):
            if k == "chunk":
                continue
            m = max(v["barriers"], 1.0)
            total = (v["phase"] + v["barrier"]) / 1e6
            print(f"  {k:<10} {int(v['barriers']):>9} {v['phase'] / m:>9.2f} {v['p0'] / m:>8.2f} "
                  f"{v['barrier'] / m:>10.2f} {v['skew'] / m:>8.2f} {total:>8.3f}")
        if "chunk" in TOTALS:     # the push chunks' stretches (us per chunk), and chunks per push phase
            c, rounds = TOTALS["chunk"], max(TOTALS.get("push[0]", {}).get("barriers", 1.0), 1.0)
            n = max(c["chunks"], 1.0)
            print("  push chunks: " + ", ".join(f"{k} {c[k] / n / 1e3:.2f} us" for k in CHUNK_NAMES[:4])
                  + f"; {c['chunks'] / rounds:.1f} chunks a push phase; the busiest program's chunks "
                  f"{c['busiest'] / rounds / 1e3:.2f} us a launch's round (approx.)")
    out = Path(os.environ.get("OUT", ROOT / "experiments" / "results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "time_rounds.json").write_text(json.dumps(dict(device=str(jax.devices()[0].device_kind),
                                                          jax=jax.__version__, date=time.strftime("%Y-%m-%d"),
                                                          rows=rows), indent=1))


if __name__ == "__main__":
    main()
