import os, sys, time, statistics
from functools import partial
import numpy as np
import jax, jax.numpy as jnp
sys.path.insert(0, '.')
def med(f, r=3):
    ts=[]
    for _ in range(r):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return statistics.median(ts)
print(jax.devices()[0].device_kind, os.environ.get("XLA_FLAGS",""))
n=1<<19; k=1<<18
idx_same = jnp.zeros(k, jnp.int32); idx_rand = jax.random.randint(jax.random.PRNGKey(0),(k,),0,n)
val = jax.random.randint(jax.random.PRNGKey(1),(k,),0,1<<30)
f = jax.jit(lambda h,i,v: h.at[i].min(v, mode="drop"))
h = jnp.full(n, 1<<30, jnp.int32)
for nm, ix in (("same", idx_same), ("rand", idx_rand)):
    jax.block_until_ready(f(h, ix, val))
    print("scatter-min %s target k=%d: %.1f us" % (nm, k, 1e6*med(lambda: jax.block_until_ready(f(h, ix, val)), 7)))
from experiments.generators import stable_easy, stable_hard
from jaxmatch.stable import as_instance
from jaxmatch.stable import gale_shapley as gs
def go(tag, M, W, **kw):
    fn = jax.jit(partial(gs.solve, max_iters=2**30, **kw))
    t=time.perf_counter(); r=jax.block_until_ready(fn(M,W)); first=time.perf_counter()-t
    t=med(lambda: jax.block_until_ready(fn(M,W)))
    waves=int(r[4]['waves']); print(f"{tag} {kw}: {t*1e3:.1f} ms ({t/waves*1e6:.2f} us/wave) compile+run {first:.1f}s waves {waves} rounds {int(r[4]['rounds'])} status {int(r[2])}", flush=True)
    return r
nh=int(sys.argv[2])
M,W = as_instance(*stable_hard(nh, seed=1))
for kw in (dict(method="mcvitie_wilson",unroll=8,window=1,block=0), dict(method="mcvitie_wilson",unroll=8,window=1,block=32),
           dict(method="mcvitie_wilson",unroll=32,window=1,block=32), dict(method="gale_shapley",window=1,block=32)):
    go(f"hard {nh}", M, W, **kw)
n=int(sys.argv[1])
t=time.perf_counter(); men,women=stable_easy(n, seed=0); print("gen", time.perf_counter()-t, flush=True)
t=time.perf_counter(); M,W = as_instance(men,women); jax.block_until_ready(M); print("build", time.perf_counter()-t, flush=True)
del men, women
f=jax.jit(gs.pair_ranks)
t=time.perf_counter(); jax.block_until_ready(f(M,W)); first=time.perf_counter()-t
print(f"pair_ranks {med(lambda: jax.block_until_ready(f(M,W)),5)*1e3:.1f} ms first {first:.1f}", flush=True)
for kw in (dict(method="mcvitie_wilson",unroll=8,window=1), dict(method="mcvitie_wilson",unroll=8,window=2), dict(method="mcvitie_wilson",unroll=8,window=4),
           dict(method="mcvitie_wilson",unroll=8,window=2,block=32), dict(method="gale_shapley",window=2)):
    go(f"easy {n}", M, W, **kw)
