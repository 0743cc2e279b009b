"""``jaxmatch demo``: every problem family on bundled data, certified, and compared with CPU peers.

What lives here is everything behind the ``demo`` subcommand of
:mod:`jaxmatch.cli` except the subcommand itself: the list of demo problems
(:func:`demo_problems`: maximum matching on ``marvel``, max flow on
``mesh30``, Suitor on ``lesmis``, a random stable-marriage instance, Louvain
on ``karate`` and ``dolphins``), one function per problem that solves it,
checks the answer with :mod:`jaxmatch.certify` and runs a CPU peer (scipy,
networkx or igraph, and the sequential Gale-Shapley reference
:func:`gale_shapley`), the timing helpers (compile time = first call minus
the warm median), and :func:`demo_table`, which prints the rows. Each
problem returns one row (a dict, see ``_row``); a check that fails marks its
row, it does not raise. Solvers are imported inside the functions, so
importing this module starts no JAX backend.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

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
    """A random complete stable-marriage instance: (men, women), each int32 [n, n] of permutations.

    Row i of ``men`` is man i's ranking of the n women, best first (a
    uniformly random permutation), and likewise for ``women``; the demo's
    instance is ``random_preferences(DEMO_STABLE_N, DEMO_SEED)``.

    Args:
        n: the number of men, and of women.
        seed: the seed of :func:`numpy.random.default_rng`; default 0.

    Returns:
        ``(men, women)``: two numpy int32 arrays of shape [n, n].

    Example:
        >>> men, women = random_preferences(3, seed=0)
        >>> men.shape, sorted(men[0].tolist())
        ((3, 3), [0, 1, 2])
    """
    rng = np.random.default_rng(seed)
    men = np.argsort(rng.random((n, n)), axis=1).astype(np.int32)
    women = np.argsort(rng.random((n, n)), axis=1).astype(np.int32)
    return men, women


def gale_shapley(men, women) -> np.ndarray:
    """Man-optimal stable matching of complete rank lists, sequentially (the textbook loop): wife per man.

    The demo's CPU peer for :func:`jaxmatch.stable_marriage`: D. Gale and
    L. S. Shapley's proposal algorithm ("College admissions and the
    stability of marriage", The American Mathematical Monthly 69(1), 1962),
    with a stack of free men (McVitie and Wilson's order; every order gives
    the same man-optimal matching). ``O(n**2)`` proposals at most, in Python.

    Args:
        men: int array [n_men, n_women], row m is man m's ranking of the
            women, best first.
        women: int array [n_women, n_men], row w is woman w's ranking of the men.

    Returns:
        numpy int64 array [n_men]: the wife of each man, -1 single.

    Example:
        >>> gale_shapley([[0, 1], [0, 1]], [[1, 0], [1, 0]]).tolist()   # both want woman 0; she takes man 1
        [1, 0]
    """
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
    """The demo's problems: a list of (label, thunk returning a table row).

    Maximum matching on ``marvel``, max flow and min cut on ``mesh30``,
    Suitor on ``lesmis``, stable marriage on a random complete instance of
    ``DEMO_STABLE_N`` men and women, and Louvain on ``karate`` and
    ``dolphins`` (both padded to one set of capacities, so they share one
    compilation). Nothing runs until a thunk is called.

    Args:
        repeats: warm calls timed per problem (the median is reported); default 3.

    Returns:
        A list of ``(label, run)`` pairs; ``run()`` solves, certifies and runs
        the peer, and returns the row (a dict with the keys of ``_row``).
    """
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
    """The demo's rows as a text table.

    One line per row under a header (``DEMO_COLUMNS``); times in seconds,
    right-aligned; ``agrees`` as yes / NO / -; a certificate as ok / FAIL
    (the failure's message is printed under the table by the CLI).

    Args:
        rows: the row dicts that the thunks of :func:`demo_problems` return.

    Returns:
        str: the table, lines joined by newlines.
    """
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
