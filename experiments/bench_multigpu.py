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

Weak scaling of the sharded Suitor (``--families suitor_sharded``): one
random graph of ``--edges-per-device`` x k edges (uniform random end points,
average degree 16, weights uniform in (0, 1)) split over the first k devices
(:meth:`jaxmatch.ShardedGraph.from_edges`, from host arrays); likewise APFB
(or ``--matching-method graft``: MS-BFS-Graft)
on a random bipartite graph of 4 edges per row (``matching_sharded``,
:meth:`jaxmatch.ShardedBipartiteGraph.from_edges`); first call and
warm median (the compile is timed apart, as ``compile_s``: the memory analysis
compiles first), per-device bytes per edge from XLA's compiled memory analysis;
and Louvain (``louvain_sharded``, a ``--louvain-class`` graph of
``bench_louvain.py``, unit weights: modularity against the one-device
solver's); on one device the same graph also runs unsharded (``jaxmatch.suitor`` on a
``Graph``, both adjacency modes; APFB from the empty matching, and the
default ``maximum_matching``) and must give the same matching. Strong
scaling: the weak series' one-device graph over each larger device count
(``--strong-only``: that series alone, without the larger weak graphs).

    python -m experiments.bench_multigpu                      # B = 100,000, the batch families
    NCCL_NVLS_ENABLE=0 python -m experiments.bench_multigpu --graphs 20000 --families matching
    python -m experiments.bench_multigpu --families suitor_sharded --edges-per-device 33554432 --one-device-weak
    # issue 23's 10^9-edge Louvain (planted partition: the host builds it in about 5 minutes, RMAT would
    # take an hour; level one needs 4 x H200: on 4 x H100 it did not fit, RESULTS session 26)
    python -m experiments.bench_multigpu --families louvain_sharded --louvain-class planted \
        --louvain-edges-per-device 262144 --louvain-big 1000000000 --louvain-big-repeats 0 --repeats 1
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

FAMILIES = ("matching", "suitor", "louvain", "suitor_sharded", "matching_sharded", "louvain_sharded")


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
    p.add_argument("--families", nargs="+", default=list(FAMILIES[:3]), choices=FAMILIES)
    p.add_argument("--edges-per-device", type=int, default=1 << 25, help="*_sharded: edges per device")
    p.add_argument("--louvain-class", default="rmat",
                   help="louvain_sharded: a bench_louvain.py class, or planted (planted partition, groups of 1,024)")
    p.add_argument("--one-device-weak", action="store_true",
                   help="*_sharded: also run the unsharded solver on one device on every weak-series graph "
                        "(how much of the weak-scaling loss the larger graph alone costs)")
    p.add_argument("--louvain-big", type=int, default=0,
                   help="louvain_sharded: then one graph of this many edges on all devices (0: none)")
    p.add_argument("--louvain-big-repeats", type=int, default=1,
                   help="louvain_sharded: warm runs of the --louvain-big graph (0: the first call's time)")
    p.add_argument("--louvain-edges-per-device", type=int, default=None,
                   help="louvain_sharded: edges per device (default --edges-per-device)")
    p.add_argument("--louvain-one-device-entries", type=int, default=None,
                   help="louvain_sharded: Config.one_device_entries (coarse graphs of more entries stay on the "
                        "mesh; default: the first device's free memory decides)")
    p.add_argument("--device-counts", type=int, nargs="+", default=None,
                   help="the device counts to run (default 1, 2, 4, 8 and all, up to the devices present)")
    p.add_argument("--matching-method", default="apfb", choices=("apfb", "apsb", "graft"),
                   help="matching_sharded: the method")
    p.add_argument("--side", type=int, default=64)
    p.add_argument("--degree", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--strong-only", action="store_true",
                   help="*_sharded: the one-device graph on every device count, no weak graphs beyond it")
    args = p.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")   # no NVLink multicast (the device machines' advice)
    import jax

    import jaxmatch
    devs = jax.local_devices()
    counts = sorted({k for k in (args.device_counts or (1, 2, 4, 8, len(devs))) if k <= len(devs)})
    print(f"devices: {len(devs)} x {devs[0].device_kind}, jax {jax.__version__}; device counts {counts}", flush=True)
    rows = []
    for family in args.families:
        if family.endswith("_sharded"):
            rows += sharded(family, args, devs, counts)
            continue
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
            _show(row)
    print(f"\n{'family':9} {'graphs':>7} {'devices':>7} {'first s':>8} {'warm s':>8} {'M graphs/min':>13} "
          f"{'speed-up':>9} {'efficiency':>10}")
    for r in rows:
        if r["family"].endswith("_sharded"):
            continue
        print(f"{r['family']:9} {r['graphs']:7d} {r['devices']:7d} {r['first_s']:8.2f} {r['warm_s']:8.4f} "
              f"{r['graphs_per_min'] / 1e6:13.2f} {r['speedup']:9.2f} {r['efficiency']:10.2f}")
    done = [r for r in rows if r["family"].endswith("_sharded")]
    if done:
        print(f"\n{'family, mode':24} {'edges':>12} {'devices':>7} {'first s':>8} {'warm s':>8} {'M edges/s':>10} "
              f"{'B/edge/dev':>10} {'efficiency':>10} {'unsharded s':>28}")
        for r in done:
            un = r.get("unsharded_s", {})
            print(f"{r['family'] + ', ' + r['mode']:24} {r['edges']:12,d} {r['devices']:7d} {r['first_s']:8.2f} {r['warm_s']:8.4f} "
                  f"{r['edges'] / r['warm_s'] / 1e6:10.1f} {r['bytes_per_edge_per_device']:10.1f} "
                  f"{r['efficiency']:10.2f} {' / '.join(f'{a} {x:.4f}' for a, x in un.items()):>28}"
                  + (f"  Q {r['modularity']:.4f}" if "modularity" in r else ""))


_DONE = []   # every row so far, saved after each one: a run stopped by its time limit keeps what it measured


def _show(row):
    """One result row as a line of JSON (floats rounded, the individual runs left out); every row so
    far is written to ``$OUT/bench_multigpu.json`` (default ``experiments/results``)."""
    import jax
    _DONE.append(row)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    devs = jax.local_devices()
    (out / "bench_multigpu.json").write_text(json.dumps(dict(
        device=devs[0].device_kind, devices=len(devs), jax=jax.__version__, date=time.strftime("%Y-%m-%d"),
        rows=_DONE), indent=1))
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items() if k != "warm_runs_s"}),
          flush=True)


def _graph(rng, m):
    """Uniform random edges (average degree 16) with weights uniform in (0, 1): (u, v, w, n)."""
    n = max(m // 8, 2)
    return (rng.integers(0, n, m, dtype=np.int64), rng.integers(0, n, m, dtype=np.int64),
            rng.random(m, dtype=np.float32) + np.float32(1e-7), n)


def sharded(family, args, devs, counts):
    """Weak scaling of Suitor (``suitor_sharded``) or APFB (``matching_sharded``) on a sharded graph,
    and strong scaling of the one-device graph when there are several devices; on one device the
    unsharded solver checks the answer (Suitor both adjacency modes; APFB or graft (``--matching-method``) from the empty matching, and
    the default ``maximum_matching`` for reference)."""
    import jax
    from jax.sharding import Mesh

    import jaxmatch
    from jaxmatch.bipartite import sharded as _shb
    from jaxmatch.community import sharded as _shl
    from jaxmatch.weighted import sharded as _shw
    rows, base = [], None
    suitor, louvain = family == "suitor_sharded", family == "louvain_sharded"

    def graph(rng, m):
        if suitor:
            return _graph(rng, m)
        if louvain and args.louvain_class == "planted":   # edge arrays directly: fast enough for 10^9 edges
            from experiments.generators import planted_partition_edges
            n = max(m // 8, 2)                            # average degree 16
            u, v = planted_partition_edges(n, m, groups=max(n // 1024, 1), p_in=0.8,
                                           seed=int(rng.integers(1 << 30)))
            return u, v, None, n
        if louvain:
            import scipy.sparse as sp

            from experiments.bench_louvain import make_graph, vertices_for
            A = make_graph(args.louvain_class, vertices_for(args.louvain_class, m), int(rng.integers(1 << 30)))
            up = sp.triu(A, 1).tocoo()
            return up.row.astype(np.int64), up.col.astype(np.int64), np.ones(up.nnz, np.float32), A.shape[0]
        side = max(m // 4, 2)          # bipartite, 4 edges per row
        return rng.integers(0, side, m, dtype=np.int64), rng.integers(0, side, m, dtype=np.int64), None, side

    def solve(g):
        if louvain:
            from jaxmatch.community.config import Config
            return jaxmatch.louvain(g, config=Config(one_device_entries=args.louvain_one_device_entries))
        return jaxmatch.suitor(g) if suitor else jaxmatch.maximum_matching(g, method=args.matching_method)

    def run(u, v, w, n, k, mode, repeats=None):
        mesh = Mesh(np.array(devs[:k]), ("d",))
        t = time.perf_counter()
        sg = jaxmatch.ShardedGraph.from_edges(u, v, w, n=n, mesh=mesh) if suitor or louvain else \
            jaxmatch.ShardedBipartiteGraph.from_edges(u, v, n, n, mesh=mesh)
        build_s = time.perf_counter() - t
        print(f"{mode}: {u.size:,} edges on {k} devices built in {build_s:.1f} s", flush=True)
        t = time.perf_counter()
        if louvain:      # level one's two programs, the moves and the aggregation: the larger peak
            start = jax.numpy.zeros(sg.vertex_cap, jax.numpy.int32)
            lows = [_shl._moves.lower(sg, np.float32(1), np.float32(0), np.float32(1e-2), start, False,
                                      max_iters=100, cfg=_shl.Config()), _shl._coarsen.lower(sg, start)]
        else:
            lows = [_shw.solve.lower(sg, np.int32(2**31 - 1)) if suitor else
                    _shb.solve.lower(sg, method=args.matching_method, bfs="gpubfs_wr", max_iters=n + 1)]
        mems = [low.compile().memory_analysis() for low in lows]            # per device
        compile_s = time.perf_counter() - t
        per_dev = max(sum(getattr(mem, a, 0) or 0 for a in ("argument_size_in_bytes", "output_size_in_bytes",
                                                            "temp_size_in_bytes")) for mem in mems)
        t = time.perf_counter()
        res = solve(sg)
        jax.block_until_ready(res)
        first = time.perf_counter() - t
        warm = []
        for _ in range(args.repeats if repeats is None else repeats):
            t = time.perf_counter()
            jax.block_until_ready(solve(sg))
            warm.append(time.perf_counter() - t)
        row = dict(family=family, mode=mode, edges=int(u.size), n=int(n), devices=k, build_s=build_s,
                   compile_s=compile_s, first_s=first, warm_s=statistics.median(warm or [first]), warm_runs_s=warm,
                   bytes_per_edge_per_device=per_dev / (u.size / k))
        if louvain:
            row.update(modularity=float(res.modularity), levels=int(res.stats["levels"]),
                       iterations=np.asarray(res.stats["iterations"]).tolist(),
                       vertices=np.asarray(res.stats["vertices"]).tolist(), cardinality=int(res.stats["communities"]))
        else:
            row.update(cardinality=int(res.cardinality), stats={a: int(b) for a, b in res.stats.items()})
            if not suitor:
                row["method"] = args.matching_method
        if suitor:
            row["weight"] = float(res.weight)
        return row, res

    def unsharded(u, v, w, n, res):
        out = {}
        if louvain:
            g = jaxmatch.Graph.from_edges(u, v, w, n=n)
            solo = jax.block_until_ready(jaxmatch.louvain(g))
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                jax.block_until_ready(jaxmatch.louvain(g))
                times.append(time.perf_counter() - t)
            out["louvain"] = statistics.median(times)
            out["modularity"] = float(solo.modularity)
            return out
        if suitor:
            g = jaxmatch.Graph.from_edges(u, v, w, n=n)
            calls = {"sorted": lambda: jaxmatch.suitor(g), "dense": lambda: jaxmatch.suitor(g, sorted_adjacency=False)}
        else:
            g = jaxmatch.BipartiteGraph.from_edges(u, v, n, n)
            calls = {args.matching_method: lambda: jaxmatch.maximum_matching(g, method=args.matching_method, init=None),
                     "default": lambda: jaxmatch.maximum_matching(g)}
        for name, call in calls.items():
            solo = jax.block_until_ready(call())
            if suitor or name == args.matching_method:
                mine = res.mate if suitor else res.row_mate
                theirs = solo.mate if suitor else solo.row_mate
                assert np.array_equal(np.asarray(theirs), np.asarray(mine)), f"{family}: sharded != unsharded"
            assert int(solo.cardinality) == int(res.cardinality)
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                jax.block_until_ready(call())
                times.append(time.perf_counter() - t)
            out[name] = statistics.median(times)
        return out

    per_device = args.louvain_edges_per_device if louvain and args.louvain_edges_per_device else args.edges_per_device
    for k in counts[:1] if args.strong_only else counts:
        u, v, w, n = graph(np.random.default_rng(k), per_device * k)
        row, res = run(u, v, w, n, k, "weak")
        if k == 1:
            base = (u, v, w, n)
        if k == 1 or args.one_device_weak:   # the one-device solver on the same graph (its answer checked)
            row["unsharded_s"] = unsharded(u, v, w, n, res)
        row["efficiency"] = rows[0]["warm_s"] / row["warm_s"] if rows else 1.0
        rows.append(row)
        _show(row)
        del res
    for k in counts[1:]:
        row, _ = run(*base, k, "strong")
        row["efficiency"] = rows[0]["warm_s"] / row["warm_s"] / k
        rows.append(row)
        _show(row)
    if louvain and args.louvain_big:   # one large graph on every device, against the one-device solver's Q above
        t = time.perf_counter()
        u, v, w, n = graph(np.random.default_rng(99), args.louvain_big)
        gen_s = time.perf_counter() - t
        print(f"big: generated in {gen_s:.1f} s", flush=True)
        row, _ = run(u, v, w, n, len(devs), "big", args.louvain_big_repeats)
        # the one-device solver's Q on the largest weak graph it ran (--one-device-weak: all of them)
        small_q = [r for r in rows if "unsharded_s" in r][-1]["unsharded_s"]["modularity"]
        row.update(generate_s=gen_s, one_device_modularity_smaller_graph=small_q, efficiency=float("nan"),
                   modularity_vs_one_device=row["modularity"] / small_q - 1)
        rows.append(row)
        _show(row)
    return rows


if __name__ == "__main__":
    main()
