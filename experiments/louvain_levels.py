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

``--variants`` times other settings of the same run on the same graphs (no
level cuts for them): each ``name:key=value;key=value`` with keys of
``louvain()`` (``threshold``, ``threshold_large``, ``large_graph``,
``max_iters``, ``refine``) or of its ``Config`` (``order``), e.g.
``--variants rel:large_graph=0 lowfirst:order=0``. Their modularity is
reported against the default run's.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.bench_louvain import make_graph, vertices_for  # noqa: E402
from experiments.common import warm_timed  # noqa: E402


def variant(spec):
    """``name:key=value;...`` -> (name, louvain() keywords, Config or None)."""
    from jaxmatch.community.config import Config
    name, _, body = spec.partition(":")
    kw, cfg = {}, {}
    for item in filter(None, body.split(";")):
        key, _, value = item.partition("=")
        value = {"True": True, "False": False}.get(value, value)
        for kind in (int, float):       # a number where it parses as one, else the string
            if isinstance(value, str):
                try:
                    value = kind(value)
                except ValueError:
                    pass
        (cfg if key in Config._fields else kw)[key] = value
    return name, kw, (Config(**cfg) if cfg else None)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--classes", nargs="+", default=["rmat", "power_law", "delaunay"])
    p.add_argument("--edges", type=float, default=1e7)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--variants", nargs="*", default=[], help="name:key=value;key=value (see above)")
    p.add_argument("--no-cut", action="store_true", help="skip the per-level cuts of the default run")
    args = p.parse_args()
    import jax

    from jaxmatch import Graph, certify, louvain
    rows = []
    for cls in args.classes:
        A = make_graph(cls, vertices_for(cls, int(args.edges)), seed=0).tocoo()
        keep = A.row < A.col
        g = Graph.from_edges(A.row[keep], A.col[keep], n=A.shape[0])
        m = int(g.n_edges)
        total, _, res = warm_timed(lambda: louvain(g), args.repeats)
        certify.check_partition(g, res.labels)
        certify.check_modularity(g, res.labels, res.modularity, rtol=1e-4)
        q = float(res.modularity)
        levels = int(res.stats["levels"])
        row = dict(graph=f"{cls}", n=int(g.n), edges=m, total_s=total, edges_per_s=m / total, modularity=float(q),
                   levels=levels, iterations=np.asarray(res.stats["iterations"]).tolist(),
                   vertices=np.asarray(res.stats["vertices"]).tolist(), cut=[])
        row["variants"] = []
        for spec in args.variants:
            name, kw, cfg = variant(spec)
            t, _, out = warm_timed(lambda: louvain(g, config=cfg, throw=False, **kw), args.repeats)
            certify.check_partition(g, out.labels)
            certify.check_modularity(g, out.labels, out.modularity, rtol=1e-4)
            v = dict(name=name, spec=spec, total_s=t, edges_per_s=m / t, modularity=float(out.modularity),
                     q_ratio=float(out.modularity) / q, speedup=total / t, status=out.status_name,
                     levels=int(out.stats["levels"]), iterations=np.asarray(out.stats["iterations"]).tolist(),
                     refine_iterations=int(out.stats["refine_iterations"]))
            row["variants"].append(v)
            print(json.dumps(v), flush=True)
        before = 0.0
        for k in range(1, 0 if args.no_cut else levels + 1):
            t, _, cut = warm_timed(lambda: louvain(g, max_levels=k, refine=False, throw=False), args.repeats)
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
        for v in r["variants"]:
            print(f"   variant {v['name']:>12}: {v['total_s']:.3f} s ({v['speedup']:.2f}x), {v['edges_per_s']:.2e} edges/s, "
                  f"Q {v['modularity']:.4f} ({v['q_ratio']:.4f} of default), iterations {v['iterations']}")


if __name__ == "__main__":
    main()
