"""Where a whole Louvain run's time goes, level by level (issue 27: measure first).

For each class of ``bench_louvain.py`` at about ``--edges`` edges: the whole
default run ``louvain(g)`` (warmed up, median of ``--repeats``), its
throughput the way nu-Louvain and GVE-Louvain report it (|E| / total time),
and the same run cut after 1, 2, ... levels (``max_levels``, no refinement
for the cut runs, then the default run with refinement), so the differences
give each level's time, with its sweeps (iterations) and vertices. Every
default run's partition is checked by :func:`jaxmatch.certify.check_partition` and its
modularity recomputed by :func:`jaxmatch.certify.check_modularity`.

    python experiments/louvain_levels.py --classes rmat power_law --edges 1e7
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

from experiments.bench_louvain import make_graph, vertices_for  # noqa: E402


def timed(fn, repeats):
    import jax
    jax.block_until_ready(fn())
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        runs.append(time.perf_counter() - t)
    return out, float(np.median(runs))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--classes", nargs="+", default=["rmat", "power_law", "delaunay"])
    p.add_argument("--edges", type=float, default=1e7)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    import jax

    from jaxmatch import Graph, certify, louvain
    rows = []
    for cls in args.classes:
        A = make_graph(cls, vertices_for(cls, int(args.edges)), seed=0).tocoo()
        keep = A.row < A.col
        g = Graph.from_edges(A.row[keep], A.col[keep], n=A.shape[0])
        m = int(g.n_edges)
        res, total = timed(lambda: louvain(g), args.repeats)
        certify.check_partition(g, res.labels)
        certify.check_modularity(g, res.labels, res.modularity, rtol=1e-4)
        q = float(res.modularity)
        levels = int(res.stats["levels"])
        row = dict(graph=f"{cls}", n=int(g.n), edges=m, total_s=total, edges_per_s=m / total, modularity=float(q),
                   levels=levels, iterations=np.asarray(res.stats["iterations"]).tolist(),
                   vertices=np.asarray(res.stats["vertices"]).tolist(), cut=[])
        before = 0.0
        for k in range(1, levels + 1):
            cut, t = timed(lambda: louvain(g, max_levels=k, refine=False, throw=False), args.repeats)
            row["cut"].append(dict(levels=k, total_s=t, level_s=t - before,
                                   modularity=float(cut.modularity)))
            before = t
        row["refine_s"] = total - before
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "louvain_levels.json").write_text(json.dumps(dict(device=str(jax.devices()[0]), jax=jax.__version__,
                                                             rows=rows), indent=1))
    print(f"\ndevice {jax.devices()[0]}, jax {jax.__version__}")
    for r in rows:
        print(f"{r['graph']}: {r['edges']:,} edges, whole run {r['total_s']:.3f} s = {r['edges_per_s']:.2e} edges/s, "
              f"Q {r['modularity']:.4f}, iterations per level {r['iterations']}, vertices {r['vertices']}")
        for c in r["cut"]:
            print(f"   level {c['levels']}: {c['level_s'] * 1e3:8.1f} ms (cumulative {c['total_s']:.3f} s, "
                  f"Q {c['modularity']:.4f})")
        print(f"   refinement and the rest: {r['refine_s'] * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
