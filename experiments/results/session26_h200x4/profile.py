import time, sys, numpy as np, jax, jax.numpy as jnp, jaxmatch
from jax.sharding import Mesh
from experiments.generators import planted_partition_edges
from jaxmatch.community import sharded as _sh
from jaxmatch.community.config import Config
m = 1 << 24; n = m // 8
u, v = planted_partition_edges(n, m, groups=n // 1024, p_in=0.8, seed=1)
mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
sg = jaxmatch.ShardedGraph.from_edges(u, v, None, n=n, mesh=mesh)
g = jaxmatch.Graph.from_edges(u, v, None, n=n)
for sm in (32, 64):
    cfg = Config(shift_max=sm)
    for rep in range(2):
        T = {}
        t = time.perf_counter()
        out = _sh.level_one(sg, jnp.float32(1), jnp.float32(0), jnp.float32(1e-2), max_iters=100, cfg=cfg); jax.block_until_ready(out)
        T["level_one"] = time.perf_counter() - t
        comm, q1, it, moves, status1, *pairs = out
        t = time.perf_counter(); coarse, dense = _sh.coarse_graph(*pairs, n); jax.block_until_ready(coarse); T["coarse_graph"] = time.perf_counter() - t
        t = time.perf_counter(); r = jaxmatch.louvain(coarse, refine=False); jax.block_until_ready(r); T["rest"] = time.perf_counter() - t
        start = np.full(sg.vertex_cap, sg.vertex_cap, np.int32); start[:n] = np.asarray(r.labels)[dense]
        t = time.perf_counter(); o2 = _sh.level_one(sg, jnp.float32(1), jnp.float32(0), jnp.float32(1e-2), jax.device_put(start), max_iters=100, coarsen=False, cfg=cfg); jax.block_until_ready(o2); T["refine"] = time.perf_counter() - t
        t = time.perf_counter(); rr = jaxmatch.louvain(sg, config=cfg); jax.block_until_ready(rr); T["whole"] = time.perf_counter() - t
        print("shift_max", sm, {k: round(x, 3) for k, x in T.items()}, "passes", int(it), int(o2[2]), "coarse n", int(coarse.n), "entries", int(coarse.n_entries), "Q", float(rr.modularity), flush=True)
t = time.perf_counter(); r = jaxmatch.louvain(g); jax.block_until_ready(r); t = time.perf_counter()
r = jaxmatch.louvain(g); jax.block_until_ready(r); print("unsharded", round(time.perf_counter() - t, 3), float(r.modularity), np.asarray(r.stats["iterations"]).tolist(), flush=True)
