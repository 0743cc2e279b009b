"""Benchmark: jaxmatch.leiden against jaxmatch.louvain and igraph's Leiden (issue 26).

For each graph class of ``experiments/generators.py`` (as ``bench_louvain.py``
builds them, about ``--edges`` edges): ``jaxmatch.louvain`` and
``jaxmatch.leiden`` with their defaults, the first call (compile + run) and the
median of ``--repeats`` later calls; every answer certified (partition, its
modularity recomputed in float64, and for Leiden every community connected);
for Louvain the communities that induce a disconnected subgraph are counted.
igraph's ``community_leiden(objective_function="modularity", n_iterations=2)``
(one CPU thread) runs where igraph is installed and the graph has at most
``--peer-max-edges`` edges.

Writes JSON to $OUT (or experiments/results/) and prints a table last.
``python3 -m experiments.bench_leiden --edges 2e5 --repeats 1`` is a CPU smoke test.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from experiments.bench_louvain import graph_from_csr, make_graph, vertices_for
from experiments.common import timed

CLASSES = ("delaunay", "road", "rgg", "power_law", "rmat")


def disconnected(A, labels) -> int:
    """Communities of ``labels`` that induce a disconnected subgraph of the symmetric ``A``."""
    coo = A.tocoo()
    keep = labels[coo.row] == labels[coo.col]
    inner = sp.csr_array((np.ones(int(keep.sum())), (coo.row[keep], coo.col[keep])), shape=A.shape)
    _, piece = connected_components(inner, directed=False)
    pairs = np.unique(np.stack([labels, piece]), axis=1)       # (community, piece) pairs
    return int(np.sum(np.bincount(pairs[0]) > 1))


def run_solver(solve, g, A, repeats):
    import jax
    from jaxmatch import certify
    t = time.perf_counter()
    jax.block_until_ready(solve(g))
    first = time.perf_counter() - t
    med, times, res = timed(lambda: jax.block_until_ready(solve(g)), repeats)
    labels = np.asarray(res.labels)
    certify.check_partition(g, labels)
    certify.check_modularity(g, labels, float(res.modularity), rtol=1e-4)
    return dict(s=med, times=times, first_call_s=first, q=float(res.modularity),
                communities=int(labels.max()) + 1 if labels.size else 0, status=int(res.status),
                levels=int(res.stats["levels"]), disconnected=disconnected(A, labels)), labels


def igraph_leiden(A):
    try:
        import igraph
    except ImportError:
        return None
    coo = sp.triu(A, k=1).tocoo()
    G = igraph.Graph(n=A.shape[0], edges=np.stack([coo.row, coo.col], 1).tolist())
    t = time.perf_counter()
    c = G.community_leiden(objective_function="modularity", n_iterations=2)
    return dict(s=time.perf_counter() - t, q=G.modularity(c.membership))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--edges", type=float, default=1e7)
    p.add_argument("--classes", nargs="+", default=list(CLASSES), choices=CLASSES)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--peer-max-edges", type=float, default=2e7)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threshold-large", type=float, default=None,
                   help="threshold_large of both solvers (default: theirs, 1e-2)")
    p.add_argument("--buckets", choices=("auto", "degree", "hash"), default=None,
                   help="Config.buckets of both solvers (default: theirs, 'auto')")
    args = p.parse_args(argv)
    import jax
    import jaxmatch
    from jaxmatch import certify
    rows = []
    out = pathlib.Path(os.environ.get("OUT") or pathlib.Path(__file__).parent / "results")
    out.mkdir(parents=True, exist_ok=True)
    tag = ("" if args.threshold_large is None else f"_tl{args.threshold_large:g}") + \
        ("" if args.buckets is None else f"_{args.buckets}")
    path = out / f"bench_leiden_{jax.default_backend()}{tag}_{'_'.join(args.classes)}.json"
    for cls in args.classes:
        A = sp.csr_array(make_graph(cls, vertices_for(cls, int(args.edges)), args.seed))
        A.sort_indices()
        n, e = A.shape[0], int(A.nnz)
        g = graph_from_csr(A.indptr.astype(np.int32), A.indices.astype(np.int32), n,
                           1 << max(4, (n - 1).bit_length()), 1 << max(4, (e - 1).bit_length()))
        row = dict(graph=cls, n=n, edges=int(g.n_edges))
        kw = {} if args.threshold_large is None else dict(threshold_large=args.threshold_large)
        if args.buckets is not None:
            from jaxmatch.community.config import Config
            kw["config"] = Config(buckets=args.buckets)
        row["louvain"], _ = run_solver(lambda g: jaxmatch.louvain(g, throw=False, **kw), g, A, args.repeats)
        row["leiden"], labels = run_solver(lambda g: jaxmatch.leiden(g, throw=False, **kw), g, A, args.repeats)
        certify.check_partition(g, labels, connected=True)
        row["leiden_over_louvain"] = row["leiden"]["s"] / row["louvain"]["s"]
        if row["edges"] <= args.peer_max_edges:
            row["igraph_leiden"] = igraph_leiden(A)
        rows.append(row)
        print(cls, json.dumps(row), flush=True)
        path.write_text(json.dumps(dict(device=str(jax.devices()[0].device_kind), jax=jax.__version__,
                                        args=vars(args), rows=rows), indent=1))     # after every graph
    print(f"\nwrote {path}; seconds are medians of {args.repeats} after a first call")
    head = ("graph", "n", "edges", "louvain s", "leiden s", "leiden/louvain", "Q louvain", "Q leiden",
            "igraph leiden s", "Q igraph", "x igraph", "disconnected (louvain)", "first call leiden s")
    print(" | ".join(head))
    for r in rows:
        ig = r.get("igraph_leiden") or {}
        lo, ld = r["louvain"], r["leiden"]
        print(" | ".join(str(x) for x in (
            r["graph"], r["n"], r["edges"], f"{lo['s']:.3f}", f"{ld['s']:.3f}", f"{r['leiden_over_louvain']:.2f}",
            f"{lo['q']:.4f}", f"{ld['q']:.4f}", f"{ig['s']:.2f}" if ig else "-", f"{ig['q']:.4f}" if ig else "-",
            f"{ig['s'] / ld['s']:.1f}" if ig else "-", lo["disconnected"], f"{ld['first_call_s']:.1f}")))


if __name__ == "__main__":
    main()
