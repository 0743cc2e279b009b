"""The ``jaxmatch`` command line.

    jaxmatch info FILE [--kind K]           sizes and degree statistics
    jaxmatch match FILE [--method pr|apfb|apsb|graft|flow|auto] [--bfs gpubfs_wr] [--no-graft]
                        [--top-down-only] [--init karp_sipser] [--out MATES]
    jaxmatch flow FILE.max [--layout bcsr]  maximum flow / minimum cut (DIMACS)
    jaxmatch suitor FILE [--out MATES]      half-approximate weighted matching
    jaxmatch louvain FILE [--out LABELS]    Louvain communities, with each level's progress
    jaxmatch stable MEN WOMEN [--method mcvitie_wilson]   stable marriage (rank-list files)

Files are read with :func:`jaxmatch.io.read` (Matrix Market, DIMACS, KONECT,
SNAP edge lists, GML; ``.gz`` allowed).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from jaxmatch import io
from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError


def _stats(name: str, deg: np.ndarray) -> str:
    if deg.size == 0:
        return f"  {name}: none"
    return (f"  {name}: min {deg.min()}, max {deg.max()}, mean {deg.mean():.2f}, "
            f"median {np.median(deg):g}, isolated {int((deg == 0).sum())}")


def info_text(obj) -> str:
    """Sizes and degree statistics of a graph (or of a DIMACS ``(net, s, t)`` tuple)."""
    extra = ""
    if isinstance(obj, tuple):
        obj, s, t = obj
        extra = f"\n  source {s}, sink {t} (0-based)"
    if isinstance(obj, BipartiteGraph):
        r, c, nr, nc = obj.edges()
        return (f"bipartite graph: {nr} rows x {nc} columns, {r.size} edges\n"
                + _stats("row degree", np.bincount(r, minlength=nr)) + "\n"
                + _stats("column degree", np.bincount(c, minlength=nc)))
    if isinstance(obj, Graph):
        u, v, w, n = obj.edges()
        deg = np.bincount(u, minlength=n) + np.bincount(v, minlength=n)
        loops = int((u == v).sum())
        text = (f"undirected graph: {n} vertices, {u.size} edges ({loops} self-loops), "
                f"{'weighted' if obj.weighted else 'unweighted'}\n" + _stats("degree", deg))
        if w is not None and w.size:
            text += f"\n  weights: min {w.min():g}, max {w.max():g}"
        return text
    if isinstance(obj, FlowNetwork):
        t_, h, cap, n = obj.edges()
        return (f"flow network: {n} vertices, {t_.size} arcs, total capacity {int(cap.sum())}\n"
                + _stats("out-degree", np.bincount(t_, minlength=n)) + "\n"
                + _stats("in-degree", np.bincount(h, minlength=n)) + extra)
    raise TypeError(type(obj).__name__)


def _cmd_info(a) -> int:
    print(info_text(io.read(a.file, kind=a.kind)))
    return 0


def _cmd_match(a) -> int:
    from jaxmatch.bipartite import maximum_matching

    g = io.read(a.file, kind="bipartite")
    init = None if a.init == "none" else a.init
    res, warm, first = _timed(lambda: maximum_matching(g, method=a.method, init=init, bfs=a.bfs, graft=a.graft,
                                                       direction_optimizing=a.direction_optimizing))
    print(f"cardinality {int(res.cardinality)} of {int(g.n_rows)} x {int(g.n_cols)} "
          f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)")
    _print_stats(res)
    _write(a.out, res.row_mate, "row_mate: column of each row (0-based), -1 unmatched")
    return 0


def _timed(fn):
    """(result, seconds of a warm call, seconds of the first call with compilation)."""
    import jax
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    t1 = time.perf_counter()
    out = jax.block_until_ready(fn())
    return out, time.perf_counter() - t1, t1 - t0


def _write(path, values, header: str) -> None:
    """The ``--out`` file: one integer per line, under a comment saying what it holds."""
    if path:
        np.savetxt(path, np.asarray(values), fmt="%d", header=header)
        print(f"wrote {path}")


def _print_stats(res) -> None:
    print("stats: " + ", ".join(f"{k} {int(v)}" for k, v in sorted(res.stats.items())))


def _cmd_flow(a) -> int:
    from jaxmatch.flow import max_flow

    got = io.read(a.file, kind="flow")
    if not isinstance(got, tuple):
        raise GraphInputError(f"{a.file}: a flow file must name its source and sink (DIMACS 'n ID s' / 'n ID t')")
    net, s, t = got
    res, warm, first = _timed(lambda: max_flow(net, s, t, layout=a.layout))
    side = np.asarray(res.source_side)
    print(f"flow value {int(res.flow_value)} from {s} to {t} ({res.status_name}); minimum cut: "
          f"{int(side.sum())} vertices on the source side; time {warm:.4f} s "
          f"(first call with compilation {first:.2f} s)")
    _print_stats(res)
    _write(a.out, res.flow, "flow on each arc, in file order")
    return 0


def _cmd_suitor(a) -> int:
    from jaxmatch.weighted import suitor

    g = io.read(a.file, kind="graph")
    res, warm, first = _timed(lambda: suitor(g))
    print(f"weight {float(res.weight):.6g}, cardinality {int(res.cardinality)} on {int(g.n)} vertices "
          f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)")
    _print_stats(res)
    _write(a.out, res.mate, "mate of each vertex (0-based), -1 unmatched")
    return 0


def _cmd_louvain(a) -> int:
    from jaxmatch.community import louvain

    g = io.read(a.file, kind="graph")
    res, warm, first = _timed(lambda: louvain(g, resolution=a.resolution))
    st = {k: np.asarray(v) for k, v in res.stats.items()}
    for lev in range(int(st["levels"])):
        print(f"level {lev}: {int(st['vertices'][lev])} vertices, {int(st['iterations'][lev])} iterations, "
              f"modularity {float(res.level_modularity[lev]):.6f}")
    print(f"{int(st['communities'])} communities, modularity {float(res.modularity):.6f} ({res.status_name}); "
          f"time {warm:.4f} s (first call with compilation {first:.2f} s)")
    _write(a.out, res.labels, "community of each vertex (0-based)")
    return 0


def _cmd_stable(a) -> int:
    from jaxmatch.stable import read_preferences, stable_marriage

    men, women = read_preferences(a.men), read_preferences(a.women)
    res, warm, first = _timed(lambda: stable_marriage(men, women, method=a.method))
    wife = np.asarray(res.wife)
    print(f"{int((wife >= 0).sum())} couples of {wife.size} men and {np.asarray(res.husband).size} women "
          f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)")
    _print_stats(res)
    _write(a.out, wife, "wife of each man (0-based), -1 single")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxmatch", description="GPU graph matching, flow and clustering in JAX")
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("info", help="sizes and degree statistics of a graph file")
    q.add_argument("file")
    q.add_argument("--kind", choices=["bipartite", "graph", "flow"], default=None)
    q.set_defaults(run=_cmd_info)
    q = sub.add_parser("match", help="maximum cardinality bipartite matching")
    q.add_argument("file")
    q.add_argument("--method", default="pr", choices=["pr", "apfb", "apsb", "graft", "flow", "auto"])
    q.add_argument("--bfs", default="gpubfs_wr", choices=["gpubfs", "gpubfs_wr"], help="BFS of apfb/apsb")
    q.add_argument("--no-graft", dest="graft", action="store_false", help="graft: rebuild the forest each phase")
    q.add_argument("--top-down-only", dest="direction_optimizing", action="store_false",
                   help="graft: no bottom-up BFS levels")
    q.add_argument("--init", default="karp_sipser", choices=["karp_sipser", "cheap", "none"])
    q.add_argument("--out", help="write row_mate, one line per row")
    q.set_defaults(run=_cmd_match)
    q = sub.add_parser("flow", help="maximum flow and minimum cut of a DIMACS max-flow file")
    q.add_argument("file")
    q.add_argument("--layout", choices=["bcsr", "rcsr"], default=None)
    q.add_argument("--out", help="write the flow of each arc, one line per arc")
    q.set_defaults(run=_cmd_flow)
    q = sub.add_parser("suitor", help="half-approximate weighted matching (Suitor = greedy matching)")
    q.add_argument("file")
    q.add_argument("--out", help="write the mate of each vertex, one line per vertex")
    q.set_defaults(run=_cmd_suitor)
    q = sub.add_parser("louvain", help="Louvain community detection, with progress per level")
    q.add_argument("file")
    q.add_argument("--resolution", type=float, default=1.0)
    q.add_argument("--out", help="write the community of each vertex, one line per vertex")
    q.set_defaults(run=_cmd_louvain)
    q = sub.add_parser("stable", help="stable marriage from two rank-list files (one line per person)")
    q.add_argument("men")
    q.add_argument("women")
    q.add_argument("--method", default="mcvitie_wilson", choices=["mcvitie_wilson", "gale_shapley"])
    q.add_argument("--out", help="write the wife of each man, one line per man")
    q.set_defaults(run=_cmd_stable)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (GraphInputError, OSError) as e:
        print(f"jaxmatch: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
