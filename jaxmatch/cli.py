"""The ``jaxmatch`` command line: the argument parser and one function per subcommand.

Subcommands (``jaxmatch SUBCOMMAND --help`` lists every option)::

    jaxmatch info FILE [--kind K]           sizes and degree statistics
    jaxmatch match FILE [--method pr|apfb|apsb|graft|flow|auto] [--bfs gpubfs_wr] [--no-graft]
                        [--top-down-only] [--init karp_sipser] [--out MATES]
    jaxmatch flow FILE.max [--layout bcsr]  maximum flow / minimum cut (DIMACS)
    jaxmatch suitor FILE [--out MATES]      half-approximate weighted matching
    jaxmatch assign FILE.mtx [--maximize] [--any-size] [--out MATES]   exact weighted bipartite matching
    jaxmatch dm FILE [--out PERMS]          Dulmage-Mendelsohn decomposition (block triangular form)
    jaxmatch louvain|leiden FILE [--out LABELS]   Louvain / Leiden (connected) communities, by level
    jaxmatch stable MEN WOMEN [--method mcvitie_wilson]   stable marriage (rank-list files)
    jaxmatch demo                           every problem on bundled data, checked against CPU peers

The console script ``jaxmatch`` calls :func:`main`. Each subcommand is a
``_cmd_*`` function of the parsed arguments that returns the exit status;
the problems, peers and table of ``demo`` live in :mod:`jaxmatch.demo`.

Files are read with :func:`jaxmatch.io.read` (Matrix Market, DIMACS, KONECT,
SNAP edge lists, GML; ``.gz`` allowed). Where a FILE is expected, the name of
a bundled dataset (``jaxmatch.datasets.names()``, e.g. ``marvel``, ``karate``,
``mesh30``) works too when no file of that name exists. ``--json`` prints the
result as JSON instead of text. Progress goes to stderr (tqdm), only when
stderr is a terminal and ``--json`` is off.

Every run applies the settings of :mod:`jaxmatch._config`: the XLA
command-buffer flags (unless ``JAXMATCH_XLA_FLAGS=0``) and JAX's persistent
compilation cache in ``$XDG_CACHE_HOME/jaxmatch`` or ``~/.cache/jaxmatch``
(unless ``JAXMATCH_NO_CACHE=1``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from jaxmatch import _config, demo, io
from jaxmatch.graph import BipartiteGraph, FlowNetwork, Graph, GraphInputError
from jaxmatch.status import SolverError


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


def info_dict(obj) -> dict:
    """Sizes of a graph (or of a DIMACS ``(net, s, t)`` tuple), for ``info --json``."""
    out = {}
    if isinstance(obj, tuple):
        obj, s, t = obj
        out = {"source": int(s), "sink": int(t)}
    if isinstance(obj, BipartiteGraph):
        r, c, nr, nc = obj.edges()
        return {"kind": "bipartite", "n_rows": nr, "n_cols": nc, "n_edges": int(r.size), **out}
    if isinstance(obj, Graph):
        u, v, w, n = obj.edges()
        return {"kind": "graph", "n": n, "n_edges": int(u.size), "self_loops": int((u == v).sum()),
                "weighted": bool(obj.weighted), **out}
    if isinstance(obj, FlowNetwork):
        t_, h, cap, n = obj.edges()
        return {"kind": "flow", "n": n, "n_arcs": int(t_.size), "total_capacity": int(cap.sum()), **out}
    raise TypeError(type(obj).__name__)


def _load(arg: str, kind: str | None, **kw):
    """Read the file ``arg`` (``kw``: options of :func:`jaxmatch.io.read`); or, when no such file
    exists, the bundled dataset of that name."""
    if not Path(arg).exists():
        from jaxmatch import datasets

        if arg in datasets.names():
            d = datasets.load(arg)
            if kind is None or kind == d.kind:
                return (d.graph, d.source, d.sink) if d.kind == "flow" else d.graph
            return io.read(datasets.path(arg), kind=kind)
        raise FileNotFoundError(f"{arg}: no such file, nor a bundled dataset (one of: "
                                f"{', '.join(datasets.names())})")
    return io.read(arg, kind=kind, **kw)


def _jsonable(x):
    """Arrays, numpy scalars and nested containers as plain JSON values (NaN as null)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return _jsonable(np.asarray(x).tolist())
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def _emit(a, data: dict, text: str) -> None:
    """Print the result: ``text``, or ``data`` as JSON with ``--json``."""
    if getattr(a, "json", False):
        print(json.dumps(_jsonable(data), indent=2, allow_nan=False))
    else:
        print(text)


def _bar(a, total: int, desc: str):
    """A tqdm progress bar on stderr: off with ``--json``, and when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, unit="step",
                disable=True if getattr(a, "json", False) else None)


def _read_step(a, bar, kind, **kw):
    bar.set_postfix_str("reading")
    got = _load(a.file, kind, **kw)
    bar.update()
    return got


def _cmd_info(a) -> int:
    with _bar(a, 1, "info") as bar:
        got = _read_step(a, bar, a.kind)
    _emit(a, info_dict(got), info_text(got))
    return 0


def _cmd_match(a) -> int:
    from jaxmatch.bipartite import maximum_matching

    init = None if a.init == "none" else a.init
    with _bar(a, 3, "match") as bar:
        g = _read_step(a, bar, "bipartite")
        res, warm, first = _timed(lambda: maximum_matching(g, method=a.method, init=init, bfs=a.bfs, graft=a.graft,
                                                           direction_optimizing=a.direction_optimizing), bar)
    text = (f"cardinality {int(res.cardinality)} of {int(g.n_rows)} x {int(g.n_cols)} "
            f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)\n"
            + _stats_text(res))
    _emit(a, {"cardinality": int(res.cardinality), "n_rows": int(g.n_rows), "n_cols": int(g.n_cols),
              **_common(res, warm, first), "row_mate": res.row_mate}, text)
    _write(a, res.row_mate, "row_mate: column of each row (0-based), -1 unmatched")
    return 0


def _timed(fn, bar=None):
    """(result, seconds of a warm call, seconds of the first call with compilation)."""
    import jax
    if bar is not None:
        bar.set_postfix_str("first call (compiles)")
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    t1 = time.perf_counter()
    if bar is not None:
        bar.update()
        bar.set_postfix_str("warm call")
    out = jax.block_until_ready(fn())
    if bar is not None:
        bar.update()
    return out, time.perf_counter() - t1, t1 - t0


def _common(res, warm, first) -> dict:
    """The JSON fields every solver subcommand has."""
    return {"status": res.status_name, "time_s": warm, "first_call_s": first,
            "stats": {k: np.asarray(v).tolist() for k, v in sorted(res.stats.items())}}


def _write(a, values, header: str) -> None:
    """The ``--out`` file: one integer per line, under a comment saying what it holds."""
    if a.out:
        np.savetxt(a.out, np.asarray(values), fmt="%d", header=header)
        print(f"wrote {a.out}", file=sys.stderr if a.json else sys.stdout)


def _stats_text(res) -> str:
    return "stats: " + ", ".join(f"{k} {int(v)}" for k, v in sorted(res.stats.items()))


def _cmd_flow(a) -> int:
    from jaxmatch.flow import max_flow

    with _bar(a, 3, "flow") as bar:
        got = _read_step(a, bar, "flow")
        if not isinstance(got, tuple):
            raise GraphInputError(f"{a.file}: a flow file must name its source and sink "
                                  "(DIMACS 'n ID s' / 'n ID t')")
        net, s, t = got
        res, warm, first = _timed(lambda: max_flow(net, s, t, layout=a.layout), bar)
    side = np.asarray(res.source_side)
    text = (f"flow value {int(res.flow_value)} from {s} to {t} ({res.status_name}); minimum cut: "
            f"{int(side.sum())} vertices on the source side; time {warm:.4f} s "
            f"(first call with compilation {first:.2f} s)\n" + _stats_text(res))
    _emit(a, {"flow_value": int(res.flow_value), "source": int(s), "sink": int(t),
              **_common(res, warm, first),
              "source_side": np.flatnonzero(side), "flow": res.flow}, text)
    _write(a, res.flow, "flow on each arc, in file order")
    return 0


def _cmd_suitor(a) -> int:
    from jaxmatch.weighted import suitor

    with _bar(a, 3, "suitor") as bar:
        g = _read_step(a, bar, "graph")
        res, warm, first = _timed(lambda: suitor(g), bar)
    text = (f"weight {float(res.weight):.6g}, cardinality {int(res.cardinality)} on {int(g.n)} vertices "
            f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)\n"
            + _stats_text(res))
    _emit(a, {"weight": float(res.weight), "cardinality": int(res.cardinality), "n": int(g.n),
              **_common(res, warm, first), "mate": res.mate}, text)
    _write(a, res.mate, "mate of each vertex (0-based), -1 unmatched")
    return 0


def _cmd_assign(a) -> int:
    from jaxmatch.assignment import min_weight_matching
    from jaxmatch.certify import check_assignment

    with _bar(a, 3, "assign") as bar:
        g = _read_step(a, bar, "bipartite", weighted=True)
        if not g.weighted:
            raise GraphInputError(f"{a.file}: assign needs edge weights (a Matrix Market file with values)")
        full = not a.any_size
        res, warm, first = _timed(lambda: min_weight_matching(g, full=full, maximize=a.maximize), bar)
    gap = check_assignment(g, res.row_mate, res.col_potential, full=full, maximize=a.maximize)
    pairs = int((np.asarray(res.row_mate) >= 0).sum())
    text = (f"{'maximum' if a.maximize else 'minimum'} weight {float(res.weight):.9g} with {pairs} pairs of "
            f"{int(g.n_rows)} x {int(g.n_cols)} ({res.status_name}; certified by the dual potentials, gap "
            f"{gap:.3g}); time {warm:.4f} s (first call with compilation {first:.2f} s)\n" + _stats_text(res))
    _emit(a, {"weight": float(res.weight), "pairs": pairs, "n_rows": int(g.n_rows), "n_cols": int(g.n_cols),
              "certified_gap": gap, **_common(res, warm, first), "row_mate": res.row_mate,
              "row_potential": res.row_potential, "col_potential": res.col_potential}, text)
    _write(a, res.row_mate, "row_mate: column of each row (0-based), -1 unmatched")
    return 0


def _cmd_dm(a) -> int:
    from jaxmatch.bipartite.dulmage_mendelsohn import dulmage_mendelsohn
    from jaxmatch.certify import check_dulmage_mendelsohn

    with _bar(a, 3, "dm") as bar:
        g = _read_step(a, bar, "bipartite")
        res, warm, first = _timed(lambda: dulmage_mendelsohn(g), bar)
    check_dulmage_mendelsohn(g, res)
    rr, cc = np.asarray(res.coarse_rows).tolist(), np.asarray(res.coarse_cols).tolist()
    sizes = np.diff(np.asarray(res.row_blocks))
    text = (f"structural rank {int(res.structural_rank)} of {int(g.n_rows)} x {int(g.n_cols)}; "
            f"{int(res.n_blocks)} blocks (largest {int(sizes.max()) if sizes.size else 0} rows); coarse rows {rr}, "
            f"columns {cc} ({res.status_name}, certified); time {warm:.4f} s (first call with compilation "
            f"{first:.2f} s)\n" + _stats_text(res))
    _emit(a, {"structural_rank": int(res.structural_rank), "n_rows": int(g.n_rows), "n_cols": int(g.n_cols),
              "n_blocks": int(res.n_blocks), "coarse_rows": rr, "coarse_cols": cc,
              **_common(res, warm, first), "row_perm": res.row_perm, "col_perm": res.col_perm,
              "row_blocks": res.row_blocks, "col_blocks": res.col_blocks}, text)
    _write(a, res.row_perm, "row_perm: row of A at each position of the permuted matrix (0-based)")
    return 0


def _cmd_communities(a) -> int:   # louvain and leiden (a.command)
    from jaxmatch import community
    with _bar(a, 3, a.command) as bar:
        g = _read_step(a, bar, "graph")
        res, warm, first = _timed(lambda: getattr(community, a.command)(g, resolution=a.resolution), bar)
    st = {k: np.asarray(v) for k, v in res.stats.items()}
    levels = [{"level": lev, "vertices": int(st["vertices"][lev]), "iterations": int(st["iterations"][lev]),
               "modularity": float(res.level_modularity[lev])} for lev in range(int(st["levels"]))]
    text = "\n".join(
        [f"level {v['level']}: {v['vertices']} vertices, {v['iterations']} iterations, "
         f"modularity {v['modularity']:.6f}" for v in levels]
        + [f"{int(st['communities'])} communities, modularity {float(res.modularity):.6f} ({res.status_name}); "
           f"time {warm:.4f} s (first call with compilation {first:.2f} s)"])
    _emit(a, {"communities": int(st["communities"]), "modularity": float(res.modularity), "n": int(g.n),
              "levels": levels, **_common(res, warm, first), "labels": res.labels}, text)
    _write(a, res.labels, "community of each vertex (0-based)")
    return 0


def _cmd_stable(a) -> int:
    from jaxmatch.stable import read_preferences, stable_marriage

    with _bar(a, 3, "stable") as bar:
        bar.set_postfix_str("reading")
        men, women = read_preferences(a.men), read_preferences(a.women)
        bar.update()
        res, warm, first = _timed(lambda: stable_marriage(men, women, method=a.method), bar)
    wife = np.asarray(res.wife)
    couples = int((wife >= 0).sum())
    text = (f"{couples} couples of {wife.size} men and {np.asarray(res.husband).size} women "
            f"({res.status_name}); time {warm:.4f} s (first call with compilation {first:.2f} s)\n"
            + _stats_text(res))
    _emit(a, {"couples": couples, "n_men": int(wife.size), "n_women": int(np.asarray(res.husband).size),
              **_common(res, warm, first), "wife": wife}, text)
    _write(a, wife, "wife of each man (0-based), -1 single")
    return 0


def _cmd_demo(a, problems=None) -> int:
    """``jaxmatch demo``: ``problems`` (label, run) pairs, default :func:`jaxmatch.demo.demo_problems`."""
    import jax

    import jaxmatch

    t0 = time.perf_counter()
    rows = []
    problems = demo.demo_problems(a.repeats) if problems is None else problems
    with _bar(a, len(problems), "demo") as bar:
        for label, run in problems:
            bar.set_postfix_str(label)
            try:
                rows.append(run())
            except Exception as e:   # a solver or peer that crashed is a failed row, not a traceback
                rows.append(demo._row(label, "-", answer="-", value=None, peer="-", peer_answer="-",
                                      peer_value=None, agrees=False, certificate=f"FAIL: {type(e).__name__}: {e}",
                                      compile_s=None, solve_s=None, peer_s=None))
            bar.update()
    wall = time.perf_counter() - t0
    failed = [r for r in rows if r["certificate"] != "ok"]
    disagree = [r for r in rows if r["agrees"] is False]
    ok = not failed and not disagree
    dev = jax.devices()[0]
    data = {"jaxmatch": jaxmatch.__version__, "jax": jax.__version__, "backend": jax.default_backend(),
            "device": dev.device_kind, "wall_s": wall, "ok": ok, "modularity_tol": demo.DEMO_MODULARITY_TOL,
            "rows": rows}
    if a.json:
        _emit(a, data, "")
    else:
        print(f"jaxmatch {jaxmatch.__version__} demo: jax {jax.__version__}, backend {jax.default_backend()} "
              f"({dev.device_kind}); compile s = first call minus warm call, solve s = median of "
              f"{a.repeats} warm calls, peer s = the CPU peer's median of {a.repeats}\n")
        print(demo.demo_table(rows))
        print()
        for r in rows:
            if r["note"]:
                print(f"{r['problem']}, {r['graph']}: {r['note']}")
        print(f"louvain: agrees when Q >= peer's Q - {demo.DEMO_MODULARITY_TOL} (both are heuristics); "
              "matching and flow: equal to the peer and to the published answer")
        for r in failed:
            print(f"certificate FAILED: {r['problem']}, {r['graph']}: {r['certificate']}")
        for r in disagree:
            print(f"answer differs from the peer: {r['problem']}, {r['graph']}: {r['answer']} vs {r['peer_answer']}")
        print(f"{'all certificates ok, all answers agree' if ok else 'FAILED'}; total {wall:.1f} s")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The ``jaxmatch`` argument parser: one subparser per subcommand, each setting ``run`` to its ``_cmd_*``."""
    p = argparse.ArgumentParser(prog="jaxmatch", description="GPU graph matching, flow and clustering in JAX")
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print the result as JSON (no progress bar)")
    file_help = "a graph file, or the name of a bundled dataset (jaxmatch.datasets.names())"
    q = sub.add_parser("demo", parents=[common], help="every problem on bundled data, certified and compared "
                       "with CPU peers (exit code 1 if a check fails)")
    q.add_argument("--repeats", type=int, default=3, help="warm calls timed per problem (median)")
    q.set_defaults(run=_cmd_demo)
    q = sub.add_parser("info", parents=[common], help="sizes and degree statistics of a graph file")
    q.add_argument("file", help=file_help)
    q.add_argument("--kind", choices=["bipartite", "graph", "flow"], default=None)
    q.set_defaults(run=_cmd_info)
    q = sub.add_parser("match", parents=[common], help="maximum cardinality bipartite matching")
    q.add_argument("file", help=file_help)
    q.add_argument("--method", default="pr", choices=["pr", "apfb", "apsb", "graft", "flow", "auto"])
    q.add_argument("--bfs", default="gpubfs_wr", choices=["gpubfs", "gpubfs_wr"], help="BFS of apfb/apsb")
    q.add_argument("--no-graft", dest="graft", action="store_false", help="graft: rebuild the forest each phase")
    q.add_argument("--top-down-only", dest="direction_optimizing", action="store_false",
                   help="graft: no bottom-up BFS levels")
    q.add_argument("--init", default="karp_sipser", choices=["karp_sipser", "cheap", "none"])
    q.add_argument("--out", help="write row_mate, one line per row")
    q.set_defaults(run=_cmd_match)
    q = sub.add_parser("flow", parents=[common], help="maximum flow and minimum cut of a DIMACS max-flow file")
    q.add_argument("file", help=file_help)
    q.add_argument("--layout", choices=["bcsr", "rcsr"], default=None)
    q.add_argument("--out", help="write the flow of each arc, one line per arc")
    q.set_defaults(run=_cmd_flow)
    q = sub.add_parser("suitor", parents=[common],
                       help="half-approximate weighted matching (Suitor = greedy matching)")
    q.add_argument("file", help=file_help)
    q.add_argument("--out", help="write the mate of each vertex, one line per vertex")
    q.set_defaults(run=_cmd_suitor)
    q = sub.add_parser("assign", parents=[common],
                       help="exact minimum-weight bipartite matching (assignment) of a weighted matrix, certified")
    q.add_argument("file", help="a Matrix Market file whose values are the weights")
    q.add_argument("--maximize", action="store_true", help="the maximum total weight instead")
    q.add_argument("--any-size", action="store_true",
                   help="the best matching of any size (default: one that covers the smaller side)")
    q.add_argument("--out", help="write the column of each row, one line per row")
    q.set_defaults(run=_cmd_assign)
    q = sub.add_parser("dm", parents=[common],
                       help="Dulmage-Mendelsohn decomposition: block triangular form of a matrix pattern, certified")
    q.add_argument("file", help=file_help)
    q.add_argument("--out", help="write row_perm, one line per row (col_perm is in --json)")
    q.set_defaults(run=_cmd_dm)
    for name, what in (("louvain", "Louvain"), ("leiden", "Leiden (connected communities)")):
        q = sub.add_parser(name, parents=[common], help=f"{what} community detection, with each level's progress")
        q.add_argument("file", help=file_help)
        q.add_argument("--resolution", type=float, default=1.0)
        q.add_argument("--out", help="write the community of each vertex, one line per vertex")
        q.set_defaults(run=_cmd_communities)
    q = sub.add_parser("stable", parents=[common], help="stable marriage from two rank-list files (one line per person)")
    q.add_argument("men")
    q.add_argument("women")
    q.add_argument("--method", default="mcvitie_wilson", choices=["mcvitie_wilson", "gale_shapley"])
    q.add_argument("--out", help="write the wife of each man, one line per man")
    q.set_defaults(run=_cmd_stable)
    return p


def _cache_enabled() -> bool:
    return os.environ.get("JAXMATCH_NO_CACHE", "").strip().lower() not in ("1", "true", "yes", "on")


def main(argv=None) -> int:
    """Run the ``jaxmatch`` command line: parse ``argv``, run the subcommand, return its exit status.

    The entry point of the ``jaxmatch`` console script, callable in-process
    too. It applies the XLA flags of :mod:`jaxmatch._config` and, unless
    ``JAXMATCH_NO_CACHE=1``, JAX's persistent compilation cache for the run,
    and restores the caller's cache settings afterwards. Bad input and
    solvers stopped by a bound are reported on stderr in one line, without a
    traceback.

    Args:
        argv: the arguments after the program name, a list of strings such as
            ``["match", "marvel", "--json"]``; None (the default) reads
            ``sys.argv[1:]``.

    Returns:
        int: the exit status: 0 on success; 1 when a solver stopped at a
        bound (:class:`jaxmatch.SolverError`) or, for ``demo``, when a
        certificate failed or an answer differs from its peer; 2 on bad
        input (:class:`jaxmatch.GraphInputError`, or an :class:`OSError`
        such as a missing file). An unknown subcommand or option makes
        argparse exit with status 2 (:class:`SystemExit`).

    Example:
        >>> from jaxmatch.cli import main
        >>> main(["info", "karate"])
        undirected graph: 34 vertices, 78 edges (0 self-loops), weighted
          degree: min 1, max 17, mean 4.59, median 3, isolated 0
          weights: min 1, max 1
        0
    """
    args = build_parser().parse_args(argv)
    _config.apply_xla_flags()   # a no-op when `import jaxmatch` did it, or the backend already runs
    saved = None
    if _cache_enabled():
        saved = _config._cache_settings()
        try:
            _config.enable_compilation_cache()
        except OSError as e:
            print(f"jaxmatch: note: no compilation cache ({e})", file=sys.stderr)
    try:
        return args.run(args)
    except (GraphInputError, OSError) as e:
        print(f"jaxmatch: error: {e}", file=sys.stderr)
        return 2
    except SolverError as e:   # a bound stopped the solver: say so, no traceback
        print(f"jaxmatch: {e}", file=sys.stderr)
        return 1
    finally:
        if saved is not None:   # an in-process caller gets its JAX settings back
            _config._set_cache(*saved)


if __name__ == "__main__":
    sys.exit(main())
