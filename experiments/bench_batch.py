"""Batches of small graphs end to end (issue 21): build, solve, answers back, against a per-graph loop.

``--families`` (default: all):

- ``matching``: B random bipartite graphs of ``side`` x ``side`` with ``degree``
  edges per row (the issue's measurement), timed step by step: B x
  ``from_scipy`` then ``jaxmatch.stack`` (the per-graph route), the same batch
  from concatenated edge arrays with ``BipartiteGraph.from_edges(graph_index=...)``
  (the one-pass route), the vmapped ``maximum_matching`` (first call and warm),
  against a loop of scipy's ``maximum_bipartite_matching``; every cardinality
  equal to scipy's; then ``unstack`` of the batch and ``stack`` of its graphs
  (equal to the batch, array for array).
- ``flow``: random networks of ``side`` vertices (no self-loops, capacities
  1-100), source 0, sink ``side - 1``, ``FlowNetwork.from_edges(graph_index=...)``
  and the vmapped ``max_flow``, against a loop of scipy's ``maximum_flow``;
  every value equal to scipy's.
- ``suitor`` and ``louvain``: random weighted graphs of ``side`` vertices,
  ``Graph.from_edges(graph_index=...)``, the vmapped ``suitor`` (matching
  weight) and ``louvain`` (modularity); each checked against the graph's own
  eager run for ``--check`` graphs (built at the batch's capacities: one
  compile), and timed against networkx (``max_weight_matching``,
  ``louvain_communities``) on at most ``--peer-graphs`` graphs, reported per
  graph and scaled to B.
- ``b_suitor``: the same graphs, the vmapped ``b_suitor(g, 2)``, checked against
  the graph's own eager run for ``--check`` graphs; the peer is a plain
  sequential greedy b-matching in Python on at most ``--peer-graphs``
  graphs, scaled to B (networkx has no b-matching).
- ``stable``: B stable-marriage instances of ``side`` men and women with
  complete random lists, ``Preferences.from_padded`` of the [B, side, side]
  arrays (one pass) and the vmapped ``stable_marriage``; ``--check``
  instances equal their own eager run and pass ``check_stable``; the peer is
  ``bench_stable.py``'s sequential Gale-Shapley (numba where importable, else
  plain Python) on at most ``--peer-graphs`` instances, scaled to B.

"End to end" is the one-pass build plus the warm solve with the answers back
as NumPy, each the median of ``--repeats`` runs (default 5; compile reported
apart, as ``first_solve_s``, and the first build as ``graph_index_build_first_s``). For matching, flow,
Louvain and stable marriage the same batch is also given to the solver
eagerly, on the route it takes off the GPU, forced on every backend
(``eager_*`` columns; ``--no-eager`` skips them): matching and flow solve
disjoint unions of runs of the batch's graphs (``jaxmatch.graph.solve_union``,
the host-side builds and splits included), Louvain and stable marriage run
instance by instance in one ``lax.map`` (``jaxmatch.graph.batch_map``);
against the peer's loop with its per-graph builds (``peer e2e``; Louvain's
peer builds networkx graphs).

    python experiments/bench_batch.py                    # B = 2,000 and 20,000
    python experiments/bench_batch.py --graphs 100000 --families matching
    python experiments/bench_batch.py --graphs 20000 100000 --families matching flow --vmap-limit 20000
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

FAMILIES = ["matching", "flow", "suitor", "b_suitor", "louvain", "stable"]


REPEATS = 5   # --repeats: timed steps but first calls are the median of this many runs (BENCHMARKS.md)


def _timed(fn, repeats=1):
    """``fn()``'s output and its time, the median of ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, float(np.median(times))


def _build(row, fn):
    """The batch's build, run ``REPEATS`` times: the first run's time (a user's first build, memory
    fresh) as ``graph_index_build_first_s``, the median as ``graph_index_build_s``."""
    t = time.perf_counter()
    fn()
    row["graph_index_build_first_s"] = time.perf_counter() - t
    out, row["graph_index_build_s"] = _timed(fn, REPEATS)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, nargs="+", default=[2000, 20000])
    p.add_argument("--families", nargs="+", default=FAMILIES, choices=FAMILIES)
    p.add_argument("--side", type=int, default=64)
    p.add_argument("--degree", type=int, default=4)
    p.add_argument("--check", type=int, default=20, help="graphs checked against their own eager run")
    p.add_argument("--peer-graphs", type=int, default=500, help="graphs the networkx peers run on")
    p.add_argument("--per-graph-limit", type=int, default=5000,
                   help="the per-graph route (from_scipy + stack) only up to this many graphs")
    p.add_argument("--vmap-limit", type=int, default=None,
                   help="the jitted vmap solve of matching, flow, Louvain and stable marriage only up to this "
                        "many graphs (on the CPU their vmap takes minutes past 10^4, and stable marriage's "
                        "does not fit 24 GB at 10^5; the eager call's route, a union or lax.map, is run at "
                        "every size); end to end is then the eager route's")
    p.add_argument("--no-eager", action="store_true",
                   help="skip the eager call's off-GPU route (unions, or lax.map for Louvain and stable), which is "
                        "forced on every backend; on the GPU the eager call takes the vmap route anyway")
    p.add_argument("--repeats", type=int, default=REPEATS,
                   help="runs of each timed step but first calls, reported as their median (the build's first "
                        "run apart); the networkx and Python peers, sampled and scaled, run once")
    args = p.parse_args()
    globals()["REPEATS"] = args.repeats
    import jax

    jax.block_until_ready(jax.device_put(np.zeros(1)))   # the backend's start-up, not in the first build's time
    rows = []
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    for family in args.families:
        for B in args.graphs:
            row = dict(family=family, graphs=B, side=args.side, edges_per_graph=args.side * args.degree,
                       backend=jax.default_backend())
            globals()["_" + family](row, np.random.default_rng(B), B, args)
            solve = row.get("warm_solve_s", row.get("eager_warm_s"))
            if solve is not None:
                row["end_to_end_s"] = row["graph_index_build_s"] + solve
                row["graphs_per_min_end_to_end"] = 60 * B / row["end_to_end_s"]
            rows.append(row)
            print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
            # after every row, so that a run stopped by a time limit keeps what it measured
            (out / "bench_batch.json").write_text(json.dumps(dict(device=str(jax.devices()[0]), jax=jax.__version__,
                                                                  rows=rows), indent=1))
    print(f"\n{'family':9} {'graphs':>7} {'build s':>8} {'first s':>8} {'warm s':>8} {'end-to-end /min':>17} "
          f"{'peer loop s':>12} {'eager first s':>14} {'eager warm s':>13} {'eager e2e s':>12} {'peer e2e s':>11}")
    fmt = lambda r, k, f: format(r[k], f) if k in r else "-"
    for r in rows:
        print(f"{r['family']:9} {r['graphs']:7d} {r['graph_index_build_s']:8.3f} {fmt(r, 'first_solve_s', '8.2f')} "
              f"{fmt(r, 'warm_solve_s', '8.4f')} {fmt(r, 'graphs_per_min_end_to_end', '17.0f')} "
              f"{r['peer_loop_s']:12.3f} "
              f"{fmt(r, 'eager_first_s', '14.2f')} {fmt(r, 'eager_warm_s', '13.4f')} "
              f"{fmt(r, 'eager_end_to_end_s', '12.3f')} {fmt(r, 'peer_end_to_end_s', '11.3f')}")


def _solve_twice(row, solve, batch, args=None):
    """The jitted solve's first and warm call; None where the batch is past ``--vmap-limit``."""
    import jax
    if args is not None and args.vmap_limit is not None and row["graphs"] > args.vmap_limit:
        return None
    row["first_solve_s"] = _timed(lambda: jax.tree_util.tree_map(np.asarray, solve(batch)))[1]
    got, row["warm_solve_s"] = _timed(lambda: jax.tree_util.tree_map(np.asarray, solve(batch)), REPEATS)
    return got


def _eager_twice(row, solve, args):
    """The eager batch call on the route off the GPU (batch_route "union": graph.solve_union's unions of
    runs of the batch's graphs, or graph.batch_map's lax.map; forced on every backend, where the GPU's
    default route is vmap): first call and warm; None with ``--no-eager``."""
    import jaxmatch
    if args.no_eager:
        return None
    route = jaxmatch.graph.batch_route
    jaxmatch.graph.batch_route = lambda: "union"
    try:
        row["eager_first_s"] = _timed(lambda: np.asarray(solve()))[1]
        got, row["eager_warm_s"] = _timed(lambda: np.asarray(solve()), REPEATS)
    finally:
        jaxmatch.graph.batch_route = route
    row["eager_end_to_end_s"] = row["graph_index_build_s"] + row["eager_warm_s"]
    return got


def _matching(row, rng, B, args):
    import jax
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    import jaxmatch
    n, m = args.side, args.side * args.degree
    gid = np.repeat(np.arange(B), m)
    r, c = rng.integers(0, n, B * m), rng.integers(0, n, B * m)
    mats, row["scipy_build_s"] = _timed(lambda: [
        sp.csr_array((np.ones(m), (r[i * m:(i + 1) * m], c[i * m:(i + 1) * m])), shape=(n, n)) for i in range(B)],
        REPEATS)
    want, row["peer_loop_s"] = _timed(lambda: np.array(
        [int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum()) for A in mats]), REPEATS)
    row["peer"] = "scipy maximum_bipartite_matching"
    if B <= args.per_graph_limit:
        gs, row["from_scipy_s"] = _timed(lambda: [jaxmatch.from_scipy(A) for A in mats])
        row["stack_s"] = _timed(lambda: jax.block_until_ready(jaxmatch.stack(gs)))[1]
    batch = _build(row, lambda: jax.block_until_ready(
        jaxmatch.BipartiteGraph.from_edges(r, c, np.full(B, n), np.full(B, n), graph_index=gid)))
    got = _solve_twice(row, jax.jit(jax.vmap(lambda g: jaxmatch.maximum_matching(g).cardinality)), batch, args)
    assert got is None or np.array_equal(got, want), "cardinalities differ from scipy's"
    row["peer_end_to_end_s"] = row["scipy_build_s"] + row["peer_loop_s"]
    got = _eager_twice(row, lambda: jaxmatch.maximum_matching(batch).cardinality, args)
    assert got is None or np.array_equal(got, want), "the union route's cardinalities differ from scipy's"
    gs, row["unstack_s"] = _timed(lambda: jaxmatch.unstack(batch))
    again, row["restack_s"] = _timed(lambda: jax.block_until_ready(jaxmatch.stack(gs)))
    for x, y in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(batch)):
        assert np.array_equal(np.asarray(x), np.asarray(y)), "stack(unstack(batch)) differs from the batch"


def _flow(row, rng, B, args):
    import jax
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    import jaxmatch
    n, m = args.side, args.side * args.degree
    gid = np.repeat(np.arange(B), m)
    tail = rng.integers(0, n, B * m)
    head = (tail + rng.integers(1, n, B * m)) % n                 # no self-loops
    cap = rng.integers(1, 101, B * m)

    def peer():
        out = []
        for i in range(B):
            sl = slice(i * m, (i + 1) * m)
            A = sp.csr_array((cap[sl].astype(np.int32), (tail[sl], head[sl])), shape=(n, n))
            out.append(int(maximum_flow(A, 0, n - 1).flow_value))
        return np.array(out)
    want, row["peer_loop_s"] = _timed(peer, REPEATS)
    row["peer"] = "scipy maximum_flow (building each CSR included)"
    batch = _build(row, lambda: jax.block_until_ready(
        jaxmatch.FlowNetwork.from_edges(tail, head, cap, np.full(B, n), graph_index=gid)))
    got = _solve_twice(row, jax.jit(jax.vmap(lambda net: jaxmatch.max_flow(net, 0, n - 1).flow_value)), batch,
                       args)
    assert got is None or np.array_equal(got, want), "flow values differ from scipy's"
    row["peer_end_to_end_s"] = row["peer_loop_s"]
    got = _eager_twice(row, lambda: jaxmatch.max_flow(batch, 0, n - 1).flow_value, args)
    assert got is None or np.array_equal(got, want), "the union route's flow values differ from scipy's"


def _weighted(rng, B, args):
    n, m = args.side, args.side * args.degree // 2
    gid = np.repeat(np.arange(B), m)
    u = rng.integers(0, n, B * m)
    v = (u + rng.integers(1, n, B * m)) % n
    w = rng.integers(1, 100, B * m).astype(float)
    return n, m, gid, u, v, w


def _check_solo(row, rng, B, args, batch, got, solo, parts):
    """``solo(g)`` of ``--check`` graphs, each built alone at the batch's capacities, equals the batch's answer
    (to float32 rounding: a modularity summed in another order may differ in its last bit)."""
    import jaxmatch
    n, m, gid, u, v, w = parts
    for i in rng.choice(B, min(args.check, B), replace=False):
        sl = slice(i * m, (i + 1) * m)
        g = jaxmatch.Graph.from_edges(u[sl], v[sl], w[sl], n, **batch.capacities())
        want = float(solo(g))
        assert abs(want - float(got[i])) <= 1e-6 * max(1.0, abs(want)), (i, want, float(got[i]))


def _networkx_loop(row, B, args, parts, fn, name):
    import networkx as nx
    n, m, gid, u, v, w = parts
    k = min(B, args.peer_graphs)
    t = time.perf_counter()
    for i in range(k):
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_weighted_edges_from(zip(u[i * m:(i + 1) * m].tolist(), v[i * m:(i + 1) * m].tolist(),
                                      w[i * m:(i + 1) * m].tolist()))
        fn(G)
    row["peer_loop_s"] = (time.perf_counter() - t) * B / k
    row["peer"] = f"networkx {name} on {k} graphs, scaled to {B}"


def _suitor(row, rng, B, args):
    import jax
    import networkx as nx

    import jaxmatch
    parts = _weighted(rng, B, args)
    n, m, gid, u, v, w = parts
    _networkx_loop(row, B, args, parts, nx.max_weight_matching, "max_weight_matching (exact)")
    batch = _build(row, lambda: jax.block_until_ready(
        jaxmatch.Graph.from_edges(u, v, w, np.full(B, n), graph_index=gid)))
    got = _solve_twice(row, jax.jit(jax.vmap(lambda g: jaxmatch.suitor(g).weight)), batch)
    _check_solo(row, rng, B, args, batch, got, lambda g: jaxmatch.suitor(g).weight, parts)


def _greedy_b_weight(n, u, v, w, b):
    """Weight of a greedy b-matching (heaviest edge first, parallel edges summed as ``Graph`` does):
    plain sequential Python, the per-graph peer."""
    best = {}
    for a, c, x in zip(u.tolist(), v.tolist(), w.tolist()):
        if a != c:
            key = (min(a, c), max(a, c))
            best[key] = best.get(key, 0.0) + x
    left, total = [b] * n, 0.0
    for (a, c), x in sorted(best.items(), key=lambda kv: (-kv[1], kv[0])):
        if left[a] and left[c]:
            left[a] -= 1
            left[c] -= 1
            total += x
    return total


def _b_suitor(row, rng, B, args):
    import jax

    import jaxmatch
    parts = _weighted(rng, B, args)
    n, m, gid, u, v, w = parts
    k = min(B, args.peer_graphs)
    t = time.perf_counter()
    greedy = [_greedy_b_weight(n, u[i * m:(i + 1) * m], v[i * m:(i + 1) * m], w[i * m:(i + 1) * m], 2)
              for i in range(k)]
    row["peer_loop_s"] = (time.perf_counter() - t) * B / k
    row["peer"] = f"sequential greedy b-matching (Python, b = 2) on {k} graphs, scaled to {B}"
    batch = _build(row, lambda: jax.block_until_ready(
        jaxmatch.Graph.from_edges(u, v, w, np.full(B, n), graph_index=gid)))
    got = _solve_twice(row, jax.jit(jax.vmap(lambda g: jaxmatch.b_suitor(g, 2, max_b=2).weight)), batch)
    del greedy   # the peer's answers: ties (integer weights) may be broken another way, so no equality
    _check_solo(row, rng, B, args, batch, got, lambda g: jaxmatch.b_suitor(g, 2).weight, parts)


def _louvain(row, rng, B, args):
    import jax
    import networkx as nx

    import jaxmatch
    parts = _weighted(rng, B, args)
    n, m, gid, u, v, w = parts
    _networkx_loop(row, B, args, parts, lambda G: nx.community.louvain_communities(G, seed=0),
                   "louvain_communities")
    batch = _build(row, lambda: jax.block_until_ready(
        jaxmatch.Graph.from_edges(u, v, w, np.full(B, n), graph_index=gid)))
    got = _solve_twice(row, jax.jit(jax.vmap(lambda g: jaxmatch.louvain(g).modularity)), batch, args)
    if got is not None:
        _check_solo(row, rng, B, args, batch, got, lambda g: jaxmatch.louvain(g).modularity, parts)
    eager = _eager_twice(row, lambda: jaxmatch.louvain(batch).modularity, args)
    if eager is not None:
        _check_solo(row, rng, B, args, batch, eager, lambda g: jaxmatch.louvain(g).modularity, parts)
    row["peer_end_to_end_s"] = row["peer_loop_s"]   # its loop builds each networkx graph


def _stable(row, rng, B, args):
    import jax

    import jaxmatch
    from experiments.bench_stable import make_peer
    from jaxmatch.certify import check_stable
    from jaxmatch.stable import Preferences
    n = args.side
    men, women = np.empty((B, n, n), np.int32), np.empty((B, n, n), np.int32)   # int32, in parts: 10^5 fit 24 GB
    for lo in range(0, B, 10_000):
        for x in (men, women):
            x[lo:lo + 10_000] = rng.random((min(10_000, B - lo), n, n)).argsort(axis=2)
    name, pair_ranks, gale_shapley, _, _ = make_peer()
    k = min(B, args.peer_graphs)
    ptr = np.arange(0, n * n + 1, n)
    t = time.perf_counter()
    for i in range(k):
        rank = pair_ranks(ptr, men[i].ravel(), ptr, women[i].ravel(), n, n)
        gale_shapley(ptr, men[i].ravel(), rank, n, n, ptr, women[i].ravel())
    row["peer_loop_s"] = (time.perf_counter() - t) * B / k
    row["peer"] = f"sequential Gale-Shapley ({name}) on {k} instances, scaled to {B}"
    batch = _build(row, lambda: jax.block_until_ready(
        (Preferences.from_padded(men, n), Preferences.from_padded(women, n))))
    solve = jax.jit(jax.vmap(lambda a, b: jaxmatch.stable_marriage(a, b).wife))
    got = _solve_twice(row, lambda ab: solve(*ab), batch, args)
    eager = _eager_twice(row, lambda: jaxmatch.stable_marriage(*batch).wife, args)
    row["peer_end_to_end_s"] = row["peer_loop_s"]
    caps = dict(n_capacity=batch[0].n_cap, entry_capacity=batch[0].e_cap)
    for i in rng.choice(B, min(args.check, B), replace=False):
        solo = jaxmatch.stable_marriage(Preferences.from_padded(men[i], n, **caps),
                                        Preferences.from_padded(women[i], n, **caps))
        for ans in (got, eager):
            if ans is not None:
                assert np.array_equal(np.asarray(solo.wife), ans[i, :n]), i
                check_stable(men[i], women[i], ans[i, :n])


if __name__ == "__main__":
    main()
