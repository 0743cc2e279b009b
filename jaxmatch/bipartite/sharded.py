"""Maximum matching of a bipartite graph split over several devices (:class:`jaxmatch.ShardedBipartiteGraph`).

APFB / APsB (:mod:`jaxmatch.bipartite.augmenting`) under ``jax.shard_map``:
the edges are split by column ranges (each device holds the rows of its
columns), the vertex arrays (``row_mate``, ``col_mate`` and the BFS state)
are replicated. A BFS level scans each device's own edges; the one
edge-dependent reduction, the predecessor of each reached row (the smallest
column that reached it), is combined by a ``lax.pmin`` over the mesh axis, so
every device holds the same BFS forest as one device would, and the
augmentation (walking back along predecessors) runs on the replicated arrays
identically everywhere. Communication: one all-reduce of ``row_cap`` words
per BFS level (and a scalar for the edge count); work per device O(E / D)
per level plus O(V). The answer is the one-device APFB/APsB's from the same
start, bit for bit. The run starts from the empty matching (the greedy
initialisations are not sharded yet).
"""
from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from jaxmatch.bipartite import augmenting as _ap


@partial(jax.jit, static_argnames=("method", "bfs", "max_iters"))
def solve(sb, *, method: str, bfs: str, max_iters: int):
    """(row_mate, col_mate, status, stats) of APFB/APsB on ``sb``, replicated on every device."""
    def run(rows, cols):
        g = SimpleNamespace(by_col=SimpleNamespace(indices=rows[0], src=cols[0]), row_cap=sb.row_cap,
                            col_cap=sb.col_cap, n_rows=sb.n_rows, n_cols=sb.n_cols)
        empty = jnp.full(sb.row_cap, -1, jnp.int32), jnp.full(sb.col_cap, -1, jnp.int32)
        return _ap.augmenting_paths(g, *empty, method=method, bfs=bfs, max_iters=max_iters, axis=sb.axis)

    # check_vma=False: the loop starts from constants that become per-device values
    return jax.shard_map(run, mesh=sb.mesh, in_specs=(P(sb.axis), P(sb.axis)), out_specs=P(),
                         check_vma=False)(sb.rows, sb.cols)
