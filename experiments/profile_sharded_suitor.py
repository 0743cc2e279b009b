"""Where the sharded Suitor's time goes as the mesh grows (issue 23's weak scaling).

For each device count k (1, 2, 4, ... up to the local devices) a uniform random
graph of ``--edges-per-device`` x k edges (average degree 16, weights uniform in
(0, 1], as ``bench_multigpu.py --families suitor_sharded``) is split over k
devices (weak scaling), and the one-device graph too (strong scaling). On each,
the library's sharded Suitor (``jaxmatch.weighted.sharded.solve``) is timed
whole and stopped after its first round (median of ``--repeats`` warm runs,
each blocked on), which gives the cost of a later round:
``(whole - first) / (rounds - 1)``. With ``--base DIR`` (an older tree's
``jaxmatch`` package, e.g. from ``git archive``) the same runs of its sharded
Suitor are timed in the same process, and the two matchings compared. On one
device the unsharded Suitor, dense and sorted (the default), is timed on the same
graph and its matching compared. With ``--pieces`` the parts of a round are timed apart
on each weak graph, each in its own ``shard_map`` program (median of
``--repeats``): ``local`` (a device's :class:`jaxmatch.weighted.sharded.Shard`),
``scan_fresh`` (round one's scan over all entries), ``scan_dense`` (a later
round's scan over all entries, reading the offers), ``scan_sparse`` (the same
over the rows of 5% of the vertices, E / 32 lanes), ``exchange`` (round one's
proposals settled by the owners and gathered) and ``exchange_few`` (those 5%'s
proposals gathered on every device and applied there). Prints one JSON line per run and writes
``profile_sharded_suitor.json`` under $OUT (default experiments/results).

    NCCL_NVLS_ENABLE=0 PYTHONPATH=. python3 experiments/profile_sharded_suitor.py --edges-per-device 33554432
    PYTHONPATH=. python3 experiments/profile_sharded_suitor.py --edges-per-device 65536 --host-devices 4  # CPU
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _load(path):
    """The sharded Suitor module of another tree (``path``/jaxmatch/weighted/sharded.py)."""
    spec = importlib.util.spec_from_file_location("base_sharded_suitor", Path(path) / "jaxmatch/weighted/sharded.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--edges-per-device", type=int, default=1 << 25)
    p.add_argument("--host-devices", type=int, default=0, help="CPU only: this many host devices")
    p.add_argument("--device-counts", type=int, nargs="+", default=None)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--pieces", action="store_true", help="time the parts of a round apart")
    p.add_argument("--base", default=None, help="an older tree holding jaxmatch/: time its sharded Suitor too")
    args = p.parse_args()
    if args.host_devices:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + f" --xla_force_host_platform_device_count={args.host_devices}")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import jax
    from jax.sharding import Mesh

    import jaxmatch
    from experiments.bench_multigpu import _graph
    from jaxmatch.weighted import sharded as new

    codes = {"new": new.solve}
    if args.base:
        codes["base"] = _load(args.base).solve
    devs = jax.local_devices()
    counts = sorted({k for k in (args.device_counts or (1, 2, 4, 8, len(devs))) if k <= len(devs)})
    print(f"devices: {len(devs)} x {devs[0].device_kind}, jax {jax.__version__}", flush=True)

    def timed(f, *a):
        jax.block_until_ready(f(*a))
        ts = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            jax.block_until_ready(f(*a))
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    rows, one = [], None
    for k in counts:
        graphs = [("weak", _graph(np.random.default_rng(k), args.edges_per_device * k))]
        if k == 1:
            one = graphs[0][1]
        elif one is not None:
            graphs.append(("strong", one))
        for mode, (u, v, w, n) in graphs:
            t = time.perf_counter()
            sg = jaxmatch.ShardedGraph.from_edges(u, v, w, n=n, mesh=Mesh(np.array(devs[:k]), ("d",)))
            build = time.perf_counter() - t
            mates = {}
            for name, solve in codes.items():
                whole = timed(solve, sg, np.int32(2**31 - 1))
                first = timed(solve, sg, np.int32(1))
                res = solve(sg, np.int32(2**31 - 1))
                mates[name] = np.asarray(res[0])
                rounds = int(res[4]["rounds"])
                row = dict(code=name, mode=mode, devices=k, edges=int(u.size), n=int(n), build_s=round(build, 2),
                           whole_s=round(whole, 5), first_round_s=round(first, 5),
                           later_round_ms=round(1e3 * (whole - first) / max(rounds - 1, 1), 3), rounds=rounds,
                           proposals=int(res[4]["proposals"]), weight=float(res[1]), device=devs[0].device_kind)
                base = next((r for r in rows if r["code"] == name and r["devices"] == 1), row)
                row["efficiency"] = round(base["whole_s"] / ((k if mode == "strong" else 1) * whole), 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
            if args.pieces and mode == "weak":
                rows.append(dict(code="pieces", devices=k, edges=int(u.size),
                                 **{a: round(1e3 * b, 3) for a, b in pieces(sg, timed).items()}))
                print(json.dumps(rows[-1]), flush=True)
            if "base" in mates:
                assert np.array_equal(mates["base"], mates["new"]), f"{mode} {k}: the two codes' matchings differ"
            if k == 1:
                g = jaxmatch.Graph.from_edges(u, v, w, n=n)
                for name, sorted_adjacency in (("unsharded dense", False), ("unsharded sorted (default)", True)):
                    solo = jaxmatch.suitor(g, sorted_adjacency=sorted_adjacency)
                    assert np.array_equal(np.asarray(solo.mate), mates["new"][:n]), f"sharded != {name}"
                    rows.append(dict(code=name, mode=mode, devices=1, edges=int(u.size), whole_s=round(
                        timed(lambda: jaxmatch.suitor(g, sorted_adjacency=sorted_adjacency)), 5)))
                    print(json.dumps(rows[-1]), flush=True)
                del g, solo
            del sg
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "profile_sharded_suitor.json").write_text(json.dumps(dict(
        device=devs[0].device_kind, jax=jax.__version__, rows=rows), indent=1))


def pieces(sg, timed):
    """The parts of a round, timed apart on ``sg`` (seconds; see the module's docstring)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    from jaxmatch.weighted import sharded as sh
    D, V, axis = sg.shards, sg.vertex_cap, sg.axis
    R = V // D
    cap = max(sg.entry_cap // 32, 1)
    from jax.sharding import NamedSharding
    everywhere = NamedSharding(sg.mesh, P())                 # replicated: no transfer in the timed calls
    mate = np.asarray(sh.solve(sg, np.int32(2**31 - 1))[0])  # offers of weight 0.5 held by the mates
    held_end = jax.device_put(np.stack([np.full(V, np.float32(0.5)).view(np.int32), mate], axis=1), everywhere)
    some = jax.device_put(np.random.default_rng(0).random(V) < 0.05, everywhere)

    def program(body):
        def run(src, dst, w, held, some):
            shard = sh.local(src[0], dst[0], w[0], V=V, R=R, axis=axis)
            mine = jax.lax.dynamic_slice_in_dim(some, shard.lo, R)
            out = body(shard, held, mine)
            return sum(jnp.sum(x.astype(jnp.int32)) for x in jax.tree_util.tree_leaves(out))[None]
        f = jax.jit(jax.shard_map(run, mesh=sg.mesh, in_specs=(P(axis),) * 3 + (P(), P()), out_specs=P(axis),
                                  check_vma=False))
        return lambda: f(sg.src, sg.dst, sg.weights, held_end, some)

    init = jnp.full((V, 2), -1, jnp.int32)
    T = dict(local=timed(program(lambda shard, held, mine: shard.rows)))
    T["scan_fresh"] = timed(program(lambda shard, held, mine: sh.scan(
        shard, jnp.ones(R, bool), cap=None))) - T["local"]
    T["scan_dense"] = timed(program(lambda shard, held, mine: sh.scan(
        shard, jnp.ones(R, bool), sh.beats(held), cap=None))) - T["local"]
    T["scan_sparse"] = timed(program(lambda shard, held, mine: sh.scan(
        shard, mine, sh.beats(held), cap=cap))) - T["local"]

    def first_round(shard, held, mine):
        best, tgt = sh.scan(shard, jnp.ones(R, bool), cap=None)
        return sh.exchange(shard, best, tgt, init, jnp.full(R, V, jnp.int32), V=V, D=D, axis=axis)
    T["exchange"] = timed(program(first_round)) - T["local"] - T["scan_fresh"]

    def later_round(shard, held, mine):                       # 5% of the vertices propose
        best, tgt = sh.scan(shard, mine, sh.beats(held), cap=cap)
        return sh.exchange_few(shard, best, tgt, held, jnp.full(R, V, jnp.int32), cap=max(R // sh.FEW, 1),
                               V=V, axis=axis)
    T["exchange_few"] = timed(program(later_round)) - T["local"] - T["scan_sparse"]
    return T


if __name__ == "__main__":
    main()
