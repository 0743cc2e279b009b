"""Graph coarsening by matching, jitted over a batch of graphs (the Graclus / EdgePooling pattern).

A GNN pooling layer halves a graph by matching: every vertex is merged with
its matched partner, and the coarse graph's edge weights are the sums of the
fine edges between the merged pairs. Here the matching is jaxmatch's Suitor
(the greedy half-approximate maximum weight matching), the whole step runs
in one jitted function, and ``jax.vmap`` maps it over a batch of graphs of
different sizes built in one pass with ``Graph.from_edges(graph_index=...)``.

    python examples/coarsen_batch.py                  # 1,000 random graphs, CPU or GPU
    python examples/coarsen_batch.py --graphs 20000

Each graph's coarse sizes are checked against the graph coarsened on its
own (Suitor run eagerly, clusters and weights summed with numpy).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jaxmatch  # noqa: E402


@jax.jit
def coarsen(batch: jaxmatch.Graph):
    """Per graph: the cluster of every vertex (the smaller id of a matched pair, else itself),
    the number of clusters and the total weight of the edges that stay between clusters."""

    def one(g):
        mate = jaxmatch.suitor(g).mate
        ids = jnp.arange(g.vertex_cap)
        real = ids < g.n
        cluster = jnp.where(mate >= 0, jnp.minimum(ids, mate), ids)
        clusters = jnp.sum(real & (cluster == ids))
        a = g.adj
        src, dst = cluster[jnp.minimum(a.src, g.vertex_cap - 1)], cluster[jnp.minimum(a.indices, g.vertex_cap - 1)]
        entry = jnp.arange(g.entry_cap) < g.n_entries
        # every edge {u, v} is stored twice (a loop once); an edge inside a cluster disappears
        between = jnp.sum(jnp.where(entry & (src != dst), a.weights, 0)) / 2
        return jnp.where(real, cluster, -1), clusters, between

    return jax.vmap(one)(batch)


def random_batch(count, rng):
    """``count`` random weighted graphs of 20-200 vertices, as edge arrays and as one batch."""
    sizes = rng.integers(20, 201, count)
    m = (sizes * rng.uniform(1.5, 4.0, count)).astype(int)
    gid = np.repeat(np.arange(count), m)
    u = (rng.random(gid.size) * sizes[gid]).astype(int)
    v = (rng.random(gid.size) * sizes[gid]).astype(int)
    w = rng.integers(1, 100, gid.size).astype(float)
    return (u, v, w, sizes, gid), jaxmatch.Graph.from_edges(u, v, w, sizes, graph_index=gid)


def reference(u, v, w, n, caps):
    """One graph coarsened on its own: (clusters, weight between clusters). ``caps``: the
    capacities to build it with (the batch's: every graph then shares one compiled Suitor)."""
    g = jaxmatch.Graph.from_edges(u, v, w, n, **caps)
    mate = np.asarray(jaxmatch.suitor(g).mate)
    ids = np.arange(n)
    cluster = np.where(mate >= 0, np.minimum(ids, mate), ids)
    key = np.minimum(u, v) * n + np.maximum(u, v)   # the graph's distinct edges, weights summed
    keys, inv = np.unique(key, return_inverse=True)
    ww = np.bincount(inv, weights=w)
    a, b = cluster[keys // n], cluster[keys % n]
    return int(np.sum(cluster == ids)), float(ww[a != b].sum())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", type=int, default=1000)
    p.add_argument("--check", type=int, default=20, help="graphs checked against their own coarsening")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    (u, v, w, sizes, gid), batch = random_batch(args.graphs, rng)
    t1 = time.perf_counter()
    cluster, clusters, between = jax.block_until_ready(coarsen(batch))   # compile and run
    t2 = time.perf_counter()
    jax.block_until_ready(coarsen(batch))
    t3 = time.perf_counter()
    clusters, between = np.asarray(clusters), np.asarray(between)
    for i in rng.choice(args.graphs, min(args.check, args.graphs), replace=False):
        e = gid == i
        want = reference(u[e], v[e], w[e], int(sizes[i]), batch.capacities())
        assert (int(clusters[i]), round(float(between[i]), 3)) == (want[0], round(want[1], 3)), (i, want)
    print(f"{args.graphs} graphs on {jax.default_backend()}: built in {t1 - t0:.2f} s, first call {t2 - t1:.2f} s, "
          f"warm {t3 - t2:.3f} s; vertices {int(sizes.sum())} -> {int(clusters.sum())} clusters "
          f"({clusters.sum() / sizes.sum():.2f}); {min(args.check, args.graphs)} graphs checked")
    return sizes, clusters, between


if __name__ == "__main__":
    main()
