"""Peak device memory per edge of every solver (issue 22, item 1), from XLA's compiled memory analysis.

For each solver and size: the graph is built (power-law graphs for the
weighted solvers and Louvain, their bipartite view for matching, the
matching network for max flow), the solver is compiled under ``jax.jit`` for
that graph, and XLA's buffer assignment gives its peak: arguments + outputs
+ temporaries - aliased bytes, the graph itself included. That is an upper
bound on what one call holds on the device (eager calls of G-PR size the
active list to the free columns and hold less). Divided by the stored edges
(matching and flow: the edges or arcs; the others: undirected edges) it is
the figure issue 22 sets targets on (Louvain <= 48 B/edge, others <= 32).
On the GPU the persistent kernels' buffers are in the analysis too. Nothing
is run, so the sizes are not limited by the device's memory.

    python experiments/bench_memory.py --edges 1e6 1e7
    python experiments/bench_memory.py --edges 1e4 --solvers suitor louvain   # a quick CPU check
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import generators as gen  # noqa: E402

SOLVERS = ["matching_pr", "matching_graft", "max_flow", "suitor", "locally_dominant", "b_suitor", "louvain"]


@functools.cache   # one build per size for all the solvers of a kind
def weighted(edges: float):
    """A power-law Graph with about ``edges`` undirected edges and float32 weights; its edge count."""
    import scipy.sparse as sp

    from jaxmatch import Graph
    A = gen.power_law(max(64, int(edges) // 7), avg_degree=16, seed=1)
    T = sp.triu(A, 1).tocoo()
    w = (1.0 - np.random.default_rng(2).random(T.nnz)).astype(np.float32)
    return Graph.from_edges(T.row, T.col, w, n=A.shape[0]), T.nnz


@functools.cache   # one build per size for all the solvers of a kind
def bipartite(edges: float):
    from jaxmatch import BipartiteGraph
    A = gen.bipartite_view(gen.power_law(max(64, int(edges) // 14), avg_degree=16, seed=1)).tocoo()
    return BipartiteGraph.from_edges(A.row, A.col, *A.shape), A.nnz


@functools.cache   # one build per size for all the solvers of a kind
def network(edges: float):
    from jaxmatch import FlowNetwork
    B = gen.random_bipartite(max(16, int(edges) // 6), max(16, int(edges) // 6), 4, seed=1).tocoo()
    nr, nc = B.shape
    t = np.concatenate([B.row, np.full(nr, nr + nc), nr + np.arange(nc)])
    h = np.concatenate([nr + B.col, np.arange(nr), np.full(nc, nr + nc + 1)])
    return FlowNetwork.from_edges(t, h, np.ones(t.size, np.int32), nr + nc + 2), t.size


def case(solver: str, edges: float):
    """(graph, jitted function of the graph, stored edges) for one solver."""
    import jaxmatch
    if solver.startswith("matching"):
        g, m = bipartite(edges)
        method = solver.split("_")[1]
        return g, lambda g: jaxmatch.maximum_matching(g, method=method), m
    if solver == "max_flow":
        net, m = network(edges)
        n = int(net.n)
        return net, lambda net: jaxmatch.max_flow(net, n - 2, n - 1), m
    g, m = weighted(edges)
    fn = {"suitor": jaxmatch.suitor, "locally_dominant": jaxmatch.locally_dominant, "louvain": jaxmatch.louvain,
          "b_suitor": lambda g: jaxmatch.b_suitor(g, 2)}[solver]
    return g, fn, m


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--edges", type=float, nargs="+", default=[1e6, 1e7])
    p.add_argument("--solvers", nargs="+", default=SOLVERS, choices=SOLVERS)
    p.add_argument("--json", default="bench_memory.json")
    args = p.parse_args()
    import jax
    rows = []
    for edges in args.edges:
        for solver in args.solvers:
            t = time.perf_counter()
            g, fn, m = case(solver, edges)
            build = time.perf_counter() - t
            t = time.perf_counter()
            mem = jax.jit(fn).lower(g).compile().memory_analysis()
            row = dict(solver=solver, edges=int(m), build_s=build, compile_s=time.perf_counter() - t)
            if mem is not None:
                peak = mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes \
                    - mem.alias_size_in_bytes
                graph = sum(x.nbytes for x in jax.tree_util.tree_leaves(g))
                row.update(peak_bytes=int(peak), graph_bytes=int(graph), bytes_per_edge=peak / max(m, 1),
                           graph_bytes_per_edge=graph / max(m, 1), temp_bytes=int(mem.temp_size_in_bytes))
            rows.append(row)
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / args.json).write_text(json.dumps(dict(device=str(jax.devices()[0]), jax=jax.__version__, rows=rows),
                                            indent=1))
    print(f"\ndevice {jax.devices()[0]}, jax {jax.__version__}; peak = XLA's arguments + outputs + temporaries "
          "- aliases of one jitted call")
    print(f"{'solver':18} {'edges':>11} {'peak MB':>9} {'B/edge':>7} {'graph B/edge':>13}")
    for r in rows:
        if "peak_bytes" in r:
            print(f"{r['solver']:18} {r['edges']:11d} {r['peak_bytes'] / 2**20:9.1f} {r['bytes_per_edge']:7.1f} "
                  f"{r['graph_bytes_per_edge']:13.1f}")


if __name__ == "__main__":
    main()
