"""The ``jaxmatch`` command line.

    jaxmatch info FILE [--kind K]           sizes and degree statistics
    jaxmatch match FILE [--method pr|apfb|apsb|graft|flow|auto] [--bfs gpubfs_wr] [--no-graft]
                        [--top-down-only] [--init karp_sipser] [--out MATES]
    jaxmatch flow FILE.max [--layout bcsr]  maximum flow / minimum cut (DIMACS)
    jaxmatch suitor FILE [--out MATES]      half-approximate weighted matching
    jaxmatch louvain FILE [--out LABELS]    Louvain communities, with each level's progress
    jaxmatch stable MEN WOMEN [--method mcvitie_wilson]   stable marriage (rank-list files)
    jaxmatch demo                           every problem on bundled data, checked against CPU peers

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
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from jaxmatch import _config, io
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


def _load(arg: str, kind: str | None):
    """Read the file ``arg``; or, when no such file exists, the bundled dataset of that name."""
    if not Path(arg).exists():
        from jaxmatch import datasets

        if arg in datasets.names():
            d = datasets.load(arg)
            if kind is None or kind == d.kind:
                return (d.graph, d.source, d.sink) if d.kind == "flow" else d.graph
            return io.read(datasets.path(arg), kind=kind)
        raise FileNotFoundError(f"{arg}: no such file, nor a bundled dataset (one of: "
                                f"{', '.join(datasets.names())})")
    return io.read(arg, kind=kind)


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


def _read_step(a, bar, kind):
    bar.set_postfix_str("reading")
    got = _load(a.file, kind)
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


def _cmd_louvain(a) -> int:
    from jaxmatch.community import louvain

    with _bar(a, 3, "louvain") as bar:
        g = _read_step(a, bar, "graph")
        res, warm, first = _timed(lambda: louvain(g, resolution=a.resolution), bar)
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


# --------------------------------------------------------------------------
# jaxmatch demo: every problem family on bundled data, certified, against CPU peers

#: Louvain is a heuristic: the demo accepts a modularity at most this far below the peer's.
DEMO_MODULARITY_TOL = 0.02
DEMO_STABLE_N = 500   # men, and as many women, in the demo's random stable-marriage instance
DEMO_SEED = 0


def _median_time(fn, repeats: int):
    """(last answer, median seconds) of ``repeats`` calls; JAX outputs waited for."""
    import jax
    times, out = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def _bench(fn, repeats: int):
    """(answer, compile seconds = first call minus warm median, warm median seconds)."""
    import jax
    t = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t
    out, warm = _median_time(fn, repeats)
    return out, max(first - warm, 0.0), warm


def _certificate(*checks) -> str:
    """The string "ok" when every check passes, else "FAIL: " and the first error."""
    try:
        for check in checks:
            check()
    except Exception as e:  # a CertificateError, or a checker that could not run
        return f"FAIL: {type(e).__name__}: {e}"
    return "ok"


def _row(problem, graph, *, answer, value, peer, peer_answer, peer_value, agrees, certificate,
         compile_s, solve_s, peer_s, note=""):
    return dict(problem=problem, graph=graph, answer=answer, peer=peer, peer_answer=peer_answer,
                agrees=agrees, certificate=certificate, compile_s=compile_s, solve_s=solve_s,
                peer_s=peer_s, value=value, peer_value=peer_value, note=note)


def _optional(module: str):
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _demo_matching(name: str, repeats: int):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from jaxmatch import certify, datasets
    from jaxmatch.bipartite import maximum_matching

    d = datasets.load(name)
    g = d.graph
    res, comp, warm = _bench(lambda: maximum_matching(g), repeats)
    card = int(res.cardinality)
    cert = _certificate(lambda: certify.check_maximum_matching(g, res.row_mate, res.col_mate))
    r, c, nr, nc = g.edges()
    A = sp.csr_array((np.ones(r.size, np.int8), (r, c)), shape=(nr, nc))
    mate, peer_s = _median_time(lambda: maximum_bipartite_matching(A, perm_type="column"), repeats)
    peer_card = int((mate >= 0).sum())
    known = d.answer.get("cardinality", card)
    return _row("maximum matching", name, answer=f"{card}", value=card, peer="scipy", peer_answer=f"{peer_card}",
                peer_value=peer_card, agrees=card == peer_card == known, certificate=cert,
                compile_s=comp, solve_s=warm, peer_s=peer_s)


def _demo_flow(name: str, repeats: int):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    from jaxmatch import certify, datasets
    from jaxmatch.flow import max_flow

    d = datasets.load(name)
    net, s, t = d.graph, d.source, d.sink
    res, comp, warm = _bench(lambda: max_flow(net, s, t), repeats)
    value = int(res.flow_value)
    cert = _certificate(lambda: certify.check_flow(net, s, t, res.flow, value=value),
                        lambda: certify.check_min_cut(net, s, t, np.asarray(res.source_side), value))
    tail, head, cap, n = net.edges()
    keep = tail != head   # scipy rejects self-loops; they never carry flow
    A = sp.csr_array((cap[keep].astype(np.int32), (tail[keep], head[keep])), shape=(n, n))  # parallel arcs add up
    peer, peer_s = _median_time(lambda: maximum_flow(A, s, t), repeats)
    peer_value = int(peer.flow_value)
    known = d.answer.get("flow_value", value)
    return _row("max flow + min cut", name, answer=f"{value}", value=value, peer="scipy",
                peer_answer=f"{peer_value}", peer_value=peer_value, agrees=value == peer_value == known,
                certificate=cert, compile_s=comp, solve_s=warm, peer_s=peer_s)


def _matching_weight(u, v, w, mate) -> float:
    mate = np.asarray(mate)
    w = np.ones(u.size) if w is None else np.asarray(w, np.float64)
    return float(w[(u != v) & (mate[u] == v)].sum())


def _demo_suitor(name: str, repeats: int):
    from jaxmatch import certify, datasets
    from jaxmatch.weighted import greedy_matching, suitor

    g = datasets.load(name).graph
    res, comp, warm = _bench(lambda: suitor(g), repeats)
    u, v, w, n = g.edges()
    weight = _matching_weight(u, v, w, res.mate)
    greedy = _matching_weight(u, v, w, greedy_matching(g))
    cert = _certificate(lambda: certify.check_greedy_dominance(g, res.mate))
    same = abs(weight - greedy) <= 1e-6 * max(1.0, abs(greedy))
    nx = _optional("networkx")
    if nx is None:
        peer, peer_answer, opt, peer_s, agrees = "-", "-", None, None, same
    else:
        G = nx.Graph()
        G.add_weighted_edges_from((int(a), int(b), float(c)) for a, b, c in
                                  zip(u, v, np.ones(u.size) if w is None else w) if a != b)
        pairs, peer_s = _median_time(lambda: nx.max_weight_matching(G), repeats)
        opt = float(sum(G[a][b]["weight"] for a, b in pairs))
        peer, peer_answer = "networkx (max)", f"{opt:.6g}"
        agrees = same and weight >= opt / 2 - 1e-9 * opt
    return _row("weighted matching (suitor)", name, answer=f"{weight:.6g}", value=weight, peer=peer,
                peer_answer=peer_answer, peer_value=opt, agrees=agrees, certificate=cert, compile_s=comp,
                solve_s=warm, peer_s=peer_s,
                note=f"suitor's weight equals the greedy matching's ({greedy:.6g}), at least half the maximum")


def random_preferences(n: int, seed: int = 0):
    """A random complete stable-marriage instance: (men, women), each int32 [n, n] of permutations."""
    rng = np.random.default_rng(seed)
    men = np.argsort(rng.random((n, n)), axis=1).astype(np.int32)
    women = np.argsort(rng.random((n, n)), axis=1).astype(np.int32)
    return men, women


def gale_shapley(men, women) -> np.ndarray:
    """Man-optimal stable matching of complete rank lists, sequentially (the textbook loop): wife per man."""
    men, women = np.asarray(men), np.asarray(women)
    n_men, n_women = men.shape[0], women.shape[0]
    rank = np.empty((n_women, n_men), np.int64)   # rank[w, m]: place of man m in woman w's list
    rank[np.arange(n_women)[:, None], women] = np.arange(n_men)[None, :]
    lists, rank = men.tolist(), rank.tolist()
    nxt, husband, free = [0] * n_men, [-1] * n_women, list(range(n_men - 1, -1, -1))
    while free:
        m = free.pop()
        if nxt[m] == len(lists[m]):
            continue   # went through his whole list
        w = lists[m][nxt[m]]
        nxt[m] += 1
        h = husband[w]
        if h < 0:
            husband[w] = m
        elif rank[w][m] < rank[w][h]:
            husband[w] = m
            free.append(h)
        else:
            free.append(m)
    wife = np.full(n_men, -1, np.int64)
    for w, m in enumerate(husband):
        if m >= 0:
            wife[m] = w
    return wife


def _demo_stable(n: int, repeats: int):
    from jaxmatch import certify
    from jaxmatch.stable import stable_marriage

    men, women = random_preferences(n, DEMO_SEED)
    res, comp, warm = _bench(lambda: stable_marriage(men, women), repeats)
    wife = np.asarray(res.wife)
    cert = _certificate(lambda: certify.check_stable(men, women, wife))
    peer, peer_s = _median_time(lambda: gale_shapley(men, women), repeats)
    couples, peer_couples = int((wife >= 0).sum()), int((peer >= 0).sum())
    return _row("stable marriage", f"random {n}+{n}", answer=f"{couples} couples", value=couples,
                peer="sequential GS", peer_answer=f"{peer_couples} couples", peer_value=peer_couples,
                agrees=bool(np.array_equal(wife, peer)), certificate=cert, compile_s=comp, solve_s=warm,
                peer_s=peer_s, note=f"complete random lists, seed {DEMO_SEED}; the same man-optimal matching")


def _louvain_peer(u, v, w, n, repeats: int):
    """(name, labels, seconds) of networkx's Louvain, else igraph's, else None."""
    w = np.ones(u.size) if w is None else np.asarray(w, np.float64)
    nx = _optional("networkx")
    if nx is not None:
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.tolist()))
        comms, secs = _median_time(lambda: nx.community.louvain_communities(G, weight="weight", seed=DEMO_SEED),
                                   repeats)
        labels = np.empty(n, np.int64)
        for k, c in enumerate(comms):
            labels[list(c)] = k
        return "networkx", labels, secs
    ig = _optional("igraph")
    if ig is not None:
        G = ig.Graph(n=n, edges=list(zip(u.tolist(), v.tolist())))
        G.es["weight"] = w.tolist()
        part, secs = _median_time(lambda: G.community_multilevel(weights="weight"), repeats)
        return "igraph", np.asarray(part.membership), secs
    return None


def _demo_louvain(name: str, repeats: int, caps=None, note=""):
    """Louvain on a dataset; with ``caps``, padded to them and stored as weighted (unit weights
    where it had none, as :func:`jaxmatch.stack` does), so graphs of one size class share a compilation."""
    import dataclasses

    from jaxmatch import certify, datasets
    from jaxmatch.community import louvain

    g = datasets.load(name).graph
    if caps is not None:
        g = dataclasses.replace(g.with_capacity(**caps), weighted=True)
    res, comp, warm = _bench(lambda: louvain(g), repeats)
    q = float(res.modularity)
    cert = _certificate(lambda: certify.check_partition(g, res.labels),
                        lambda: certify.check_modularity(g, res.labels, res.modularity),
                        lambda: certify.check_local_optimum(g, res.labels))
    u, v, w, n = g.edges()
    found = _louvain_peer(u, v, w, n, repeats)
    if found is None:
        return _row("louvain", name, answer=f"Q {q:.4f}", value=q, peer="-", peer_answer="-", peer_value=None,
                    agrees=None, certificate=cert, compile_s=comp, solve_s=warm, peer_s=None, note=note)
    peer, labels, peer_s = found
    peer_q = certify.modularity_numpy(g, labels)[0]
    return _row("louvain", name, answer=f"Q {q:.4f}", value=q, peer=peer, peer_answer=f"Q {peer_q:.4f}",
                peer_value=peer_q, agrees=q >= peer_q - DEMO_MODULARITY_TOL, certificate=cert,
                compile_s=comp, solve_s=warm, peer_s=peer_s, note=note)


def _shared_caps(names):
    """Capacities that hold every named dataset's graph (already powers of two)."""
    from jaxmatch import datasets
    graphs = [datasets.load(n).graph for n in names]
    return {k: max(g.capacities()[k] for g in graphs) for k in graphs[0].capacities()}


def demo_problems(repeats: int = 3):
    """The demo's problems: a list of (label, thunk returning a table row)."""
    louvain_caps = _shared_caps(["karate", "dolphins"])
    shared = "padded to karate's capacities, so it reuses karate's compilation"
    return [
        ("matching marvel", lambda: _demo_matching("marvel", repeats)),
        ("flow mesh30", lambda: _demo_flow("mesh30", repeats)),
        ("suitor lesmis", lambda: _demo_suitor("lesmis", repeats)),
        ("stable marriage", lambda: _demo_stable(DEMO_STABLE_N, repeats)),
        ("louvain karate", lambda: _demo_louvain("karate", repeats, louvain_caps)),
        ("louvain dolphins", lambda: _demo_louvain("dolphins", repeats, louvain_caps, shared)),
    ]


def _seconds(x) -> str:
    return "-" if x is None else f"{x:.2g}" if x < 0.01 else f"{x:.3f}" if x < 10 else f"{x:.1f}"


DEMO_COLUMNS = [("problem", "problem"), ("graph", "graph"), ("answer", "answer"), ("peer", "peer"),
                ("peer answer", "peer_answer"), ("agrees", "agrees"), ("certificate", "certificate"),
                ("compile s", "compile_s"), ("solve s", "solve_s"), ("peer s", "peer_s")]


def demo_table(rows) -> str:
    """The demo's rows as a text table."""
    def cell(row, key):
        x = row[key]
        if key.endswith("_s"):
            return _seconds(x)
        if key == "agrees":
            return "-" if x is None else "yes" if x else "NO"
        if key == "certificate":
            return "ok" if x == "ok" else "FAIL"
        return str(x)
    cells = [[h for h, _ in DEMO_COLUMNS]] + [[cell(r, k) for _, k in DEMO_COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(DEMO_COLUMNS))]
    right = {i for i, (_, k) in enumerate(DEMO_COLUMNS) if k.endswith("_s")}
    lines = ["  ".join(c.rjust(wd) if i in right else c.ljust(wd) for i, (c, wd) in enumerate(zip(r, widths)))
             .rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * wd for wd in widths))
    return "\n".join(lines)


def _cmd_demo(a, problems=None) -> int:
    """``jaxmatch demo``: ``problems`` (label, run) pairs, default :func:`demo_problems`."""
    import jax

    import jaxmatch

    t0 = time.perf_counter()
    rows = []
    problems = demo_problems(a.repeats) if problems is None else problems
    with _bar(a, len(problems), "demo") as bar:
        for label, run in problems:
            bar.set_postfix_str(label)
            try:
                rows.append(run())
            except Exception as e:   # a solver or peer that crashed is a failed row, not a traceback
                rows.append(_row(label, "-", answer="-", value=None, peer="-", peer_answer="-", peer_value=None,
                                 agrees=False, certificate=f"FAIL: {type(e).__name__}: {e}", compile_s=None,
                                 solve_s=None, peer_s=None))
            bar.update()
    wall = time.perf_counter() - t0
    failed = [r for r in rows if r["certificate"] != "ok"]
    disagree = [r for r in rows if r["agrees"] is False]
    ok = not failed and not disagree
    dev = jax.devices()[0]
    data = {"jaxmatch": jaxmatch.__version__, "jax": jax.__version__, "backend": jax.default_backend(),
            "device": dev.device_kind, "wall_s": wall, "ok": ok, "modularity_tol": DEMO_MODULARITY_TOL,
            "rows": rows}
    if a.json:
        _emit(a, data, "")
    else:
        print(f"jaxmatch {jaxmatch.__version__} demo: jax {jax.__version__}, backend {jax.default_backend()} "
              f"({dev.device_kind}); compile s = first call minus warm call, solve s = median of "
              f"{a.repeats} warm calls, peer s = the CPU peer's median of {a.repeats}\n")
        print(demo_table(rows))
        print()
        for r in rows:
            if r["note"]:
                print(f"{r['problem']}, {r['graph']}: {r['note']}")
        print(f"louvain: agrees when Q >= peer's Q - {DEMO_MODULARITY_TOL} (both are heuristics); "
              "matching and flow: equal to the peer and to the published answer")
        for r in failed:
            print(f"certificate FAILED: {r['problem']}, {r['graph']}: {r['certificate']}")
        for r in disagree:
            print(f"answer differs from the peer: {r['problem']}, {r['graph']}: {r['answer']} vs {r['peer_answer']}")
        print(f"{'all certificates ok, all answers agree' if ok else 'FAILED'}; total {wall:.1f} s")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
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
    q = sub.add_parser("louvain", parents=[common], help="Louvain community detection, with each level's progress")
    q.add_argument("file", help=file_help)
    q.add_argument("--resolution", type=float, default=1.0)
    q.add_argument("--out", help="write the community of each vertex, one line per vertex")
    q.set_defaults(run=_cmd_louvain)
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
