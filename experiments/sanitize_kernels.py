"""Tiny launches of the persistent Pallas kernels, for ``compute-sanitizer`` on the GPU.

Each stage prints a line before and after it, so a crash shows where it
happened; each answer is checked against the pure-JAX path.

    compute-sanitizer --tool memcheck python experiments/sanitize_kernels.py --kernels-only
    compute-sanitizer --tool racecheck python experiments/sanitize_kernels.py --kernels-only

(with ``XLA_PYTHON_CLIENT_PREALLOCATE=false JAXMATCH_XLA_FLAGS=0``). ``--kernels-only`` skips the
last two stages, whole solvers: the sanitizer process segfaults on any XLA program with a device
while loop (seen on the H100 with JAX 0.11.2), so it cannot vouch for them. ``--case`` runs only
the push kernel alone on a benchmark network, with or without the sanitizer:

    python experiments/sanitize_kernels.py --case rlg:20 --knobs push_block=32,push_width=4
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def stage(name, fn):
    print(f"start {name}", flush=True)
    out = fn()
    print(f"done {name}: {out}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels-only", action="store_true", help="skip the whole solvers (see above)")
    p.add_argument("--case", default="", help="only the push kernel alone on this generator:scale, e.g. rlg:20")
    p.add_argument("--knobs", default="", help="with --case: Config knobs, e.g. push_block=32,programs=66")
    p.add_argument("--rounds", type=int, default=1000, help="with --case: push rounds to run")
    args = p.parse_args()
    import jax
    import jax.numpy as jnp

    from experiments.generators import genrmf, road_grid
    from jaxmatch import FlowNetwork, certify, from_scipy, max_flow, maximum_matching
    from jaxmatch.kernels import bfs_level, push_flow, push_match

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

    def push_alone(tail, head, cap, s, t, n, push_cfg=cfg, solo=False, max_rounds=64):
        """Both kernels alone on a network: heights by the BFS kernel from the sink (checked against
        scipy's BFS), then push rounds (``push_cfg``) from the saturated source arcs: excess
        conserved, no vertex twice in the queue and every active vertex in it (a queued vertex may
        have pushed away all it received in the same round), the labels valid; ``solo``: the
        one-program launch of ``Config.solo`` (thread barriers), which stops once the queue outgrows
        ``push_cfg.solo``."""
        import scipy.sparse as sp
        from scipy.sparse.csgraph import shortest_path
        s, t = int(np.ravel(s)[0]), int(np.ravel(t)[0])
        net = FlowNetwork.from_edges(tail, head, cap, n)
        vc = net.vertex_cap
        arc, fwd = np.asarray(net.res_arc), np.asarray(net.res_forward)
        c = np.where(arc < net.arc_cap, np.asarray(net.cap)[np.minimum(arc, net.arc_cap - 1)], 0)
        src, dst = np.asarray(net.res.src), np.asarray(net.res.indices)
        sat = fwd & (src == s)                                # the source's arcs saturated
        rc = np.where(fwd, c, 0)
        rc[sat] = 0
        rc[np.asarray(net.res_rev)[sat]] = c[sat]
        excess = np.zeros(vc, np.int64)
        np.add.at(excess, dst[sat], c[sat])
        excess[s] = -c[sat].sum()
        assert -excess[s] < 2**31, "what leaves the source must fit int32"
        live = (rc > 0) & (src < n) & (dst < n)               # heights: residual distance to the sink
        A = sp.coo_array((np.ones(live.sum()), (dst[live], src[live])), shape=(n, n)).tocsr()
        want = shortest_path(A, unweighted=True, indices=t)
        dist = np.full(vc, 2**31 - 1, np.int32)
        dist[t] = 0
        buf = np.full(2 * vc, vc, np.int32)
        buf[0] = t
        d, buf2, side, count, _, done, stalled = bfs_level.bfs_levels(
            jnp.asarray(buf), 1, 1, jnp.asarray(dist), net.res.indptr, net.res.indices,
            jnp.asarray(rc, jnp.int32)[net.res_rev], jnp.ones(vc, bool), max_levels=10**6, cfg=cfg,
            interpret=interpret)
        d = np.asarray(d)[:n]
        assert not bool(stalled) and int(count) == 0
        assert np.array_equal(np.where(np.isinf(want), 2**31 - 1, want).astype(np.int64), d.astype(np.int64))
        h = np.full(vc, n, np.int32)
        h[:n] = np.where(d == 2**31 - 1, n, d)
        h[s] = n
        term = np.zeros(vc, np.int32)
        term[[s, t]] = 1
        term[n:] = 1
        active = np.flatnonzero((excess > 0) & (h < n) & (term == 0))
        q = np.full(2 * vc, vc, np.int32)
        q[:active.size] = active
        out = push_flow.push_rounds(jnp.asarray(q), active.size, jnp.asarray(rc, jnp.int32),
                                    jnp.asarray(excess, jnp.int32), jnp.asarray(h),
                                    jnp.full(vc, -1, jnp.int32), net.res.indptr, net.res.indices, net.res_rev,
                                    jnp.asarray(fwd, jnp.int32), jnp.asarray(term), n=n, round_id=1, room=1e9,
                                    max_rounds=max_rounds, cfg=push_cfg, interpret=interpret, solo=solo)
        e, hh = np.asarray(out.excess), np.asarray(out.height)
        assert int(e.astype(np.int64).sum()) == 0 and not bool(out.stalled)
        queue = np.asarray(out.buf)[int(out.side) * vc:][:int(out.count)]
        assert np.unique(queue).size == queue.size and np.all((queue >= 0) & (queue < n)), "queue entries"
        assert np.isin(np.flatnonzero((e > 0) & (hh < n) & (term == 0)), queue).all(), "an active vertex not queued"
        a, b = np.where(src < n, src, 0), np.where(dst < n, dst, 0)   # valid labels on the residual arcs
        real = (np.asarray(out.rc) > 0) & (src < n) & (dst < n) & (term[a] == 0) & (term[b] == 0)
        assert np.all(hh[a[real]] <= hh[b[real]] + 1)
        return dict(levels=int(done), rounds=int(out.rounds), pushes=int(out.pushes), queued=int(out.count))

    if args.case:     # one network of the benchmark's generators, the push kernel with --knobs
        from experiments.bench_flow import build
        from experiments.common import knobs
        cls, scale = args.case.split(":")
        stage(f"push_alone {args.case} {args.knobs}",
              lambda: push_alone(*build(cls, int(scale))[:6], cfg._replace(**knobs(args.knobs)),
                                 max_rounds=args.rounds))
        return

    def genrmf_rounds(push_cfg=cfg, solo=False):
        """:func:`push_alone` on genrmf (4 x 4 x 4, 2 programs)."""
        return push_alone(*genrmf(4, 4, seed=1), push_cfg, solo)
    stage("genrmf_kernels", genrmf_rounds)
    # the BFS launch is the one compiled above: under memcheck a second compilation of it segfaulted
    stage("genrmf_kernels_reread", lambda: genrmf_rounds(cfg._replace(relabel_from_push=False, fused=False)))
    stage("genrmf_kernels_solo", lambda: genrmf_rounds(cfg._replace(solo=64), solo=True))
    stage("genrmf_kernels_phases", lambda: genrmf_rounds(cfg._replace(fused=False)))

    grid = from_scipy(road_grid(8, 8, p_delete=0.0))          # the 8 x 8 grid graph, rows x columns

    g = grid
    indptr, heads = np.asarray(g.by_row.indptr), np.asarray(g.by_row.indices)
    nr = int(g.n_rows)
    row_mate, col_mate = np.full(g.row_cap, -1), np.full(g.col_cap, -1)
    for r in range(0, nr, 3):                              # a greedy, far from maximum, matching
        for c in heads[indptr[r]:indptr[r + 1]]:
            if c < nr and col_mate[c] < 0:
                row_mate[r], col_mate[c] = c, r
                break
    psi_r = np.where(row_mate < 0, 0, 2**31 - 1).astype(np.int32)
    want_c = np.full(g.col_cap, 2**31 - 1)                # G-PR's exact labels by a plain BFS
    want_r = psi_r.astype(np.int64).copy()
    frontier, level = [r for r in range(nr) if psi_r[r] == 0], 0
    while frontier:
        nxt = []
        for r in frontier:
            for c in heads[indptr[r]:indptr[r + 1]]:
                if c < nr and want_c[c] == 2**31 - 1:
                    want_c[c] = level + 1
                    m = col_mate[c]
                    if m >= 0 and want_r[m] == 2**31 - 1:
                        want_r[m] = level + 2
                        nxt.append(m)
        frontier, level = nxt, level + 2

    def alternating():
        """G-PR's global relabel kernel alone on a grid with a greedy matching, against a plain BFS."""
        got_r, got_c, _, stalled = bfs_level.alternating_bfs(
            jnp.asarray(indptr, jnp.int32), jnp.asarray(heads, jnp.int32), jnp.asarray(col_mate, jnp.int32),
            jnp.asarray(psi_r), nr, cfg=cfg, interpret=interpret)
        assert not bool(stalled)
        assert np.array_equal(np.asarray(got_c), want_c), (np.asarray(got_c), want_c)
        return int(np.max(np.where(want_c < 2**31 - 1, want_c, 0)))
    stage("alternating_bfs", alternating)

    def gpr_rounds():
        """G-PR's push kernel alone on the grid from those labels: a perfect matching at the end,
        the queue empty, every pusher's row labelled."""
        inf = 2 * nr
        free = np.flatnonzero((col_mate[:nr] == -1) & (want_c[:nr] < inf))
        q = np.full(2 * g.col_cap, g.col_cap, np.int32)
        q[:free.size] = free
        out = push_match.push_match_rounds(
            jnp.asarray(q), free.size, jnp.asarray(row_mate, jnp.int32), jnp.asarray(col_mate, jnp.int32),
            jnp.asarray(np.minimum(want_r, inf), jnp.int32), jnp.asarray(np.minimum(want_c, inf), jnp.int32),
            g.by_col.indptr, g.by_col.indices, inf=inf, max_rounds=4096, cfg=cfg, interpret=interpret)
        rm = np.asarray(out.row_mate)[:nr]
        assert int(out.count) == 0 and not bool(out.stalled)
        assert sorted(rm.tolist()) == list(range(nr)), rm              # the 8 x 8 grid: a perfect matching
        return dict(rounds=int(out.rounds), pushes=int(out.pushes))
    stage("gpr_push_rounds", gpr_rounds)

    def auction():
        """The dense auction kernel alone, on 6 x 6 and a vmapped batch of three 40 x 40 (an
        infeasible one among them): equal to its pure-JAX twin, bit for bit."""
        from jaxmatch.assignment.auction import scale
        from jaxmatch.kernels import auction_dense

        def problem(m, seed, forbid):
            c = np.random.default_rng(seed).random((m, m)).astype(np.float32)
            c[np.random.default_rng(seed + 1).random((m, m)) < forbid] = np.inf
            a = -jnp.asarray(c)
            ok = jnp.isfinite(a)
            b, _, r, _ = scale(jnp.where(ok, a, 0).ravel(), ok.ravel(), jnp.int32(m), jnp.float32)
            return b.reshape(m, m), r
        opts = dict(theta=10.0, eps0=0.005)
        b, r = problem(6, 0, 0.2)
        got = auction_dense.solve(b, r, 10**6, interpret=interpret, **opts)
        want = auction_dense._reference(b, r, 10**6, **opts)
        assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(got, want)), (got, want)
        bs, rs = zip(*(problem(40, seed, forbid) for seed, forbid in ((2, 0.1), (4, 0.95), (6, 0.3))))
        bs, rs = jnp.stack(bs), jnp.stack(rs)
        got = jax.vmap(lambda b, r: auction_dense.solve(b, r, 10**6, interpret=interpret, **opts))(bs, rs)
        want = jax.vmap(lambda b, r: auction_dense._reference(b, r, 10**6, **opts))(bs, rs)
        assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(got, want))
        return dict(bids=np.asarray(got[2]).tolist(), status=np.asarray(got[5]).tolist())
    stage("auction_dense", auction)

    def flow():
        tail, head, cap, s, t, n = genrmf(3, 3, seed=2)
        net = FlowNetwork.from_edges(tail, head, cap, n)
        want = int(max_flow(net, s, t, kernel=False).flow_value)
        got = max_flow(net, s, t, kernel=cfg)
        assert int(got.flow_value) == want
        certify.check_flow(net, s, t, got.flow, want)
        return want
    if args.kernels_only:
        print("all ok (kernels only)", jax.devices()[0], flush=True)
        return
    stage("max_flow", flow)

    def matching():
        g = grid
        a = maximum_matching(g, method="pr", kernel=False)
        b = maximum_matching(g, method="pr", kernel=cfg)
        assert int(a.cardinality) == int(b.cardinality)
        certify.check_maximum_matching(g, b.row_mate, b.col_mate)
        return int(b.cardinality)
    stage("maximum_matching", matching)
    print("all ok", jax.devices()[0], flush=True)


if __name__ == "__main__":
    main()
