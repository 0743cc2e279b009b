import time, numpy as np, jax, jax.numpy as jnp, scipy.sparse as sp, sys, json, os
sys.path.insert(0, ".")
import jaxmatch
from jax.sharding import Mesh
from experiments.bench_louvain import make_graph, vertices_for
from jaxmatch.community import sharded as S
mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
out = []
for cls in ["power_law", "rmat"]:
    A = make_graph(cls, vertices_for(cls, 8_388_608), 1)
    up = sp.triu(A, 1).tocoo()
    sg = jaxmatch.ShardedGraph.from_edges(up.row, up.col, np.ones(up.nnz, np.float32), n=A.shape[0], mesh=mesh)
    for split in (False, True):
        ts = []
        for rep in range(3):
            t = time.perf_counter(); o = S.level_one(sg, jnp.float32(1), jnp.float32(0), jnp.float32(1e-2), max_iters=100, split_sorts=split); jax.block_until_ready(o); t1 = time.perf_counter()
            coarse, dense = S.coarse_graph(*o[5:], np.asarray(o[0])[:sg.n]); t2 = time.perf_counter()
            r = jaxmatch.louvain(coarse, refine=False, throw=False); jax.block_until_ready(r.labels); t3 = time.perf_counter()
            start = np.full(sg.vertex_cap, sg.vertex_cap, np.int32); start[:sg.n] = np.asarray(r.labels)[dense]
            o2 = S.level_one(sg, jnp.float32(1), jnp.float32(0), jnp.float32(1e-2), jax.device_put(start), max_iters=100, coarsen=False, split_sorts=split); jax.block_until_ready(o2); t4 = time.perf_counter()
            ts.append(dict(level_one=t1-t, coarse_build=t2-t1, coarse_louvain=t3-t2, refine=t4-t3, passes=int(o[2]), refine_passes=int(o2[2]), q1=float(o[1]), q=float(o2[1]), coarse_n=int(coarse.n), coarse_edges=int(coarse.n_edges)))
        row = dict(cls=cls, edges=int(up.nnz), split_sorts=split, runs=ts)
        out.append(row); print(json.dumps(dict(cls=cls, split=split, **{k: round(v, 3) if isinstance(v, float) else v for k, v in ts[-1].items()})), flush=True)
json.dump(out, open(os.environ.get("OUT", ".") + "/lv_split.json", "w"), indent=1)
