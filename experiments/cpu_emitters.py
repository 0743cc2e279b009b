"""Compiled-code speed on the CPU with XLA's default and with its legacy fusion emitters.

The test suite compiles with ``--xla_cpu_use_fusion_emitters=false`` (see
``tests/conftest.py``: less compile time). This script measures what that
costs once compiled, so that the choice stays out of the library's
defaults: each setting in a fresh process (XLA reads its flags once), the
same solvers on the same graphs, warm, best of ``--repeats``.

    python experiments/cpu_emitters.py            # JSON under $OUT or experiments/results
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAG = "--xla_cpu_use_fusion_emitters=false"


def child(repeats: int) -> dict:
    import numpy as np

    import jaxmatch as jm
    from experiments import generators as G
    from experiments.common import warm_timed
    from jaxmatch.flow import FlowNetwork

    def best(f):
        return min(warm_timed(f, repeats)[1])

    g = jm.BipartiteGraph.from_scipy(G.random_bipartite(200_000, 200_000, 5, seed=1))
    S = G.rmat(16, 8)
    cg = jm.Graph.from_scipy(S)
    W = S.astype(np.float32)
    W.data = np.random.default_rng(0).random(W.nnz).astype(np.float32)
    wg = jm.Graph.from_scipy(W + W.T)
    tail, head, cap, s, t, n = G.genrmf(16, 8, seed=1)
    net = FlowNetwork.from_edges(tail, head, cap, n)
    return {"maximum_matching (auto), 200K x 200K, 1M edges": best(lambda: jm.maximum_matching(g).cardinality),
            "maximum_matching (apfb)": best(lambda: jm.maximum_matching(g, method="apfb").cardinality),
            "louvain, rmat scale 16": best(lambda: jm.louvain(cg).modularity),
            "suitor, rmat scale 16 weighted": best(lambda: jm.suitor(wg).weight),
            "max_flow, genrmf 16 x 16 x 8": best(lambda: jm.max_flow(net, s, t).flow_value)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.repeats)))
        return
    runs = {}
    for name, extra in (("default emitters", ""), ("legacy emitters", FLAG)):
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") + " " + extra).strip(),
               "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, __file__, "--child", "--repeats", str(args.repeats)], env=env,
                             capture_output=True, text=True, check=True).stdout
        runs[name] = json.loads(out.strip().splitlines()[-1])
    import jax
    print(f"| solver (warm, best of {args.repeats}) | default emitters s | legacy emitters s | legacy / default |")
    print("|---|---|---|---|")
    for k, v in runs["default emitters"].items():
        w = runs["legacy emitters"][k]
        print(f"| {k} | {v:.3f} | {w:.3f} | {w / v:.2f}x |")
    out = Path(os.environ.get("OUT", ROOT / "experiments" / "results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu_emitters.json").write_text(json.dumps(dict(jax=jax.__version__, cpus=os.cpu_count(), runs=runs),
                                                      indent=1))


if __name__ == "__main__":
    main()
