"""Dump the lowered StableHLO of each family's default solver on small fixed inputs (run with PYTHONPATH=<tree>)."""
import hashlib, sys, re
import numpy as np, jax, jax.numpy as jnp
import jaxmatch
from jaxmatch import datasets
out = sys.argv[1]
rng = np.random.default_rng(0)
def norm(t):
    return re.sub(r'loc\([^)]*\)|#loc[0-9]*( = .*)?', '', t)
res = {}
def dump(name, fn, *a):
    txt = norm(jax.jit(fn).lower(*a).as_text())
    res[name] = txt
g = jaxmatch.BipartiteGraph.from_edges(rng.integers(0, 200, 1000), rng.integers(0, 150, 1000), n_rows=200, n_cols=150)
dump("matching_pr", lambda g: jaxmatch.maximum_matching(g, throw=False), g)
for m in ("apfb", "apsb", "graft"):
    dump("matching_" + m, lambda g, m=m: jaxmatch.maximum_matching(g, method=m, throw=False), g)
dump("matching_auto", lambda g: jaxmatch.maximum_matching(g, method="auto", throw=False), g)
net = jaxmatch.FlowNetwork.from_edges(rng.integers(0, 300, 2000), rng.integers(0, 300, 2000), rng.integers(1, 10, 2000), n=300)
dump("max_flow", lambda n: jaxmatch.max_flow(n, 0, 299, throw=False), net)
u, v = rng.integers(0, 500, 3000), rng.integers(0, 500, 3000)
m = u != v
G = jaxmatch.Graph.from_edges(u[m], v[m], rng.random(m.sum()).astype(np.float32), n=500)
dump("suitor", lambda G: jaxmatch.suitor(G, throw=False), G)
dump("b_suitor", lambda G: jaxmatch.b_suitor(G, 2, throw=False), G)
dump("louvain", lambda G: jaxmatch.louvain(G, throw=False), G)
import sys as _s
CFG = _s.modules["jaxmatch.community.louvain"].Config(single_class_max=256, window_min=128, fine_classes=1)
dump("louvain_classes", lambda G: jaxmatch.louvain(G, config=CFG, throw=False), G)
men = np.argsort(rng.random((100, 100)), 1); women = np.argsort(rng.random((100, 100)), 1)
P, W = jaxmatch.stable.as_instance(men, women)
dump("stable", lambda P, W: jaxmatch.stable_marriage(P, W, throw=False), P, W)
import json
json.dump({k: hashlib.sha256(t.encode()).hexdigest() for k, t in res.items()}, open(out + ".json", "w"), indent=1)
for k, t in res.items(): open(f"{out}_{k}.txt", "w").write(t)
print({k: len(t) for k, t in res.items()})
