"""Maximum matching of a bipartite graph split over several devices (:class:`jaxmatch.ShardedBipartiteGraph`).

APFB / APsB (:mod:`jaxmatch.bipartite.augmenting`) and MS-BFS-Graft
(:mod:`jaxmatch.bipartite.graft`) under ``jax.shard_map``:
the edges are split by column ranges (each device holds the rows of its
columns), the vertex arrays (``row_mate``, ``col_mate`` and the BFS state)
are replicated. A BFS level scans each device's own edges; the one
edge-dependent reduction, the predecessor of each reached row (the smallest
column that reached it), is combined by a ``lax.pmin`` over the mesh axis, so
every device holds the same BFS forest as one device would, and the
augmentation (walking back along predecessors) runs on the replicated arrays
identically everywhere. Communication: one all-reduce of ``row_cap`` words
per BFS level (and a scalar for the edge count); work per device O(E / D)
per level plus O(V). MS-BFS-Graft likewise: a top-down level's claims (the
smallest frontier column per unvisited row) and a bottom-up level's or graft
step's (the smallest active column per row: a row's adjacency, sorted by
column, is spread over the devices in column ranges, so the first hit is the
smallest column) are each one ``lax.pmin`` of ``row_cap`` words; grafting,
augmenting and the alpha rule work on the replicated vertex arrays. The
answer is the one-device APFB/APsB/MS-BFS-Graft's from the same start, bit
for bit, counters included. The run starts from the empty matching (the
greedy initialisations are not sharded yet).
"""
from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from jaxmatch.bipartite import augmenting as _ap
from jaxmatch.bipartite import graft as _graft


@partial(jax.jit, static_argnames=("method", "bfs", "max_iters", "graft", "direction_optimizing", "alpha"))
def solve(sb, *, method: str, bfs: str, max_iters: int, graft: bool = True, direction_optimizing: bool = True,
          alpha: float = _graft.DEFAULT_ALPHA):
    """(row_mate, col_mate, status, stats) of APFB/APsB (``bfs``) or MS-BFS-Graft (``method="graft"``,
    with ``graft``, ``direction_optimizing``, ``alpha``) on ``sb``, replicated on every device."""
    def run(rows, cols, n_rows, n_cols):
        g = SimpleNamespace(by_col=SimpleNamespace(indices=rows[0], src=cols[0]), row_cap=sb.row_cap,
                            col_cap=sb.col_cap, n_rows=n_rows, n_cols=n_cols)
        empty = jnp.full(sb.row_cap, -1, jnp.int32), jnp.full(sb.col_cap, -1, jnp.int32)
        if method == "graft":
            return _graft.ms_bfs_graft(g, *empty, graft=graft, direction_optimizing=direction_optimizing,
                                       alpha=alpha, max_iters=max_iters, axis=sb.axis)
        return _ap.augmenting_paths(g, *empty, method=method, bfs=bfs, max_iters=max_iters, axis=sb.axis)

    # check_vma=False: the loop starts from constants that become per-device values
    return jax.shard_map(run, mesh=sb.mesh, in_specs=(P(sb.axis), P(sb.axis), P(), P()), out_specs=P(),
                         check_vma=False)(sb.rows, sb.cols, sb.n_rows, sb.n_cols)
