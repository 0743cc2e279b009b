"""Batches of small graphs end to end (issue 21), so far the matching family: build, stack, solve.

B random bipartite graphs of 64 x 64 with about 4 edges per row (the issue's
measurement), timed step by step: B x ``from_scipy`` then ``jaxmatch.stack``
(the per-graph route), the same batch from concatenated edge arrays with
``BipartiteGraph.from_edges(graph_index=...)`` (the one-pass route), the
vmapped ``maximum_matching`` (first call and warm), the answers back as
NumPy, against a plain loop of scipy's ``maximum_bipartite_matching`` over
the same graphs. Every cardinality is checked against scipy's.

    python experiments/bench_batch.py                    # B = 2,000 and 20,000 (CPU: about a minute)
    python experiments/bench_batch.py --graphs 100000
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, nargs="+", default=[2000, 20000])
    p.add_argument("--side", type=int, default=64)
    p.add_argument("--degree", type=int, default=4)
    p.add_argument("--per-graph-limit", type=int, default=5000,
                   help="the per-graph route (from_scipy + stack) only up to this many graphs")
    args = p.parse_args()
    import jax
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    import jaxmatch
    rows = []
    solve = jax.jit(jax.vmap(lambda g: jaxmatch.maximum_matching(g).cardinality))
    for B in args.graphs:
        rng = np.random.default_rng(B)
        n, m = args.side, args.side * args.degree
        gid = np.repeat(np.arange(B), m)
        r, c = rng.integers(0, n, B * m), rng.integers(0, n, B * m)
        row = dict(graphs=B, side=n, edges_per_graph=m, backend=jax.default_backend())
        t = time.perf_counter()
        mats = [sp.csr_array((np.ones(m), (r[i * m:(i + 1) * m], c[i * m:(i + 1) * m])), shape=(n, n))
                for i in range(B)]
        row["scipy_build_s"] = time.perf_counter() - t
        t = time.perf_counter()
        want = np.array([int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum()) for A in mats])
        row["scipy_loop_s"] = time.perf_counter() - t
        if B <= args.per_graph_limit:
            t = time.perf_counter()
            gs = [jaxmatch.from_scipy(A) for A in mats]
            row["from_scipy_s"] = time.perf_counter() - t
            t = time.perf_counter()
            jax.block_until_ready(jaxmatch.stack(gs))
            row["stack_s"] = time.perf_counter() - t
        t = time.perf_counter()
        batch = jaxmatch.BipartiteGraph.from_edges(r, c, np.full(B, n), np.full(B, n), graph_index=gid)
        jax.block_until_ready(batch)
        row["graph_index_build_s"] = time.perf_counter() - t
        t = time.perf_counter()
        got = np.asarray(solve(batch))
        row["first_solve_s"] = time.perf_counter() - t
        t = time.perf_counter()
        got = np.asarray(solve(batch))
        row["warm_solve_s"] = time.perf_counter() - t
        assert np.array_equal(got, want), "cardinalities differ from scipy's"
        row["end_to_end_s"] = row["graph_index_build_s"] + row["warm_solve_s"]
        row["graphs_per_min_end_to_end"] = 60 * B / row["end_to_end_s"]
        rows.append(row)
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    out = Path(os.environ.get("OUT", "experiments/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_batch.json").write_text(json.dumps(dict(device=str(jax.devices()[0]), jax=jax.__version__,
                                                          rows=rows), indent=1))


if __name__ == "__main__":
    main()
