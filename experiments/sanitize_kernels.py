"""Tiny launches of the persistent Pallas kernels, for ``compute-sanitizer`` on the GPU.

Each stage prints a line before and after it, so a crash shows where it
happened; each answer is checked against the pure-JAX path.

    compute-sanitizer --tool memcheck python experiments/sanitize_kernels.py
    compute-sanitizer --tool racecheck python experiments/sanitize_kernels.py

(with ``XLA_PYTHON_CLIENT_PREALLOCATE=false JAXMATCH_XLA_FLAGS=0``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def stage(name, fn):
    print(f"start {name}", flush=True)
    out = fn()
    print(f"done {name}: {out}", flush=True)


def main():
    import jax
    import jax.numpy as jnp

    from experiments.generators import genrmf
    from jaxmatch import BipartiteGraph, FlowNetwork, certify, max_flow, maximum_matching
    from jaxmatch.kernels import bfs_level, push_flow

    cfg = bfs_level.Config(programs=2)
    interpret = jax.default_backend() != "gpu"     # a CPU smoke test
    stage("jax", lambda: (jnp.ones(3) + 1).tolist())
    indptr = jnp.array([0, 1, 3, 4], jnp.int32)          # path 0 - 1 - 2
    heads = jnp.array([1, 0, 2, 1], jnp.int32)
    rev = jnp.array([1, 0, 3, 2], jnp.int32)

    def level():
        dist = jnp.array([2**31 - 1, 2**31 - 1, 0], jnp.int32)
        out = bfs_level.bfs_level(jnp.array([2, 3, 3], jnp.int32), jnp.int32(1), jnp.int32(1), dist, indptr, heads,
                                  rev, jnp.ones(4, jnp.int32), jnp.ones(3, bool), cfg=cfg, interpret=interpret)
        assert out[0].tolist() == [2**31 - 1, 1, 0] and int(out[2]) == 1, out
        return out[0].tolist()
    stage("bfs_level", level)

    def rounds():
        out = push_flow.push_rounds(
            jnp.array([1, 3, 3, 3, 3, 3], jnp.int32), 1, jnp.array([0, 5, 5, 0], jnp.int32),
            jnp.array([-5, 5, 0], jnp.int32), jnp.array([3, 1, 0], jnp.int32), jnp.full(3, -1, jnp.int32), indptr,
            heads, rev, jnp.array([1, 0, 1, 0], jnp.int32), jnp.array([1, 0, 1], jnp.int32), n=3, round_id=1,
            room=100.0, max_rounds=10, cfg=cfg, interpret=interpret)
        assert out.rc.tolist() == [0, 5, 0, 5] and out.excess.tolist() == [-5, 0, 5], out
        return out.excess.tolist()
    stage("push_rounds", rounds)

    def flow():
        tail, head, cap, s, t, n = genrmf(3, 3, seed=2)
        net = FlowNetwork.from_edges(tail, head, cap, n)
        want = int(max_flow(net, s, t, kernel=False).flow_value)
        got = max_flow(net, s, t, kernel=cfg)
        assert int(got.flow_value) == want
        certify.check_flow(net, s, t, got.flow, want)
        return want
    stage("max_flow", flow)

    def matching():
        side = 8
        ids = np.arange(side * side).reshape(side, side)
        u = np.r_[ids[:, :-1].ravel(), ids[:-1, :].ravel()]
        v = np.r_[ids[:, 1:].ravel(), ids[1:, :].ravel()]
        g = BipartiteGraph.from_edges(np.r_[u, v], np.r_[v, u], side * side, side * side)
        a = maximum_matching(g, method="pr", kernel=False)
        b = maximum_matching(g, method="pr", kernel=cfg)
        assert int(a.cardinality) == int(b.cardinality)
        certify.check_maximum_matching(g, b.row_mate, b.col_mate)
        return int(b.cardinality)
    stage("maximum_matching", matching)
    print("all ok", jax.devices()[0], flush=True)


if __name__ == "__main__":
    main()
