"""How many dependent rounds does push-relabel need on genrmf? A sequential model (issue 5).

The WBPR paper's Genrmf S1 (a = b = 128, 10.4M arcs) took 2.1 s on its
GPU; the issue asks for 10x that, 0.21 s. jaxmatch runs one
bulk-synchronous round per loop step (about 115-170 us on the H100). A
lock-free kernel, as the paper's, could run many rounds per launch. This
script asks how many rounds even the most favourable lock-free schedule
needs, with no GPU in the loop:

* a *sweep* visits every vertex once in id order (``--order fwd``) or in
  reverse (``rev``: the sink is the last vertex, so reverse order meets the
  flow's direction), and each active vertex it visits discharges with
  the latest values of every other vertex, up to ``--visits`` push or
  relabel operations (push to the lowest residual neighbour, else relabel
  to one above it): Gauss-Seidel, the limit of a lock-free kernel whose
  threads never race;
* global relabels: exact BFS from the sink over residual arcs, run when
  the arcs scanned since the last one reach ``k`` (``--k``) times the
  arcs and vertices a BFS touches (jaxmatch's work rule). Each BFS level
  is a round on the GPU (a level-synchronous BFS).

A GPU round costs at least one pass over the active part of the graph,
several microseconds on the H100 even inside one persistent kernel, so
``sweeps + levels`` bounds what any such schedule can reach. The value is
checked against scipy's ``maximum_flow``. Needs numba (``pip install
numba``); it is a model for this question, not part of the library.

    python experiments/sim_flow_rounds.py --a 16 32 64 --order rev
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments import generators as gen  # noqa: E402

try:
    import numba as nb
except ImportError:  # pragma: no cover - a model script, run by hand
    sys.exit("sim_flow_rounds.py needs numba: pip install numba")


def residual(tail, head, cap, n):
    """Residual CSR: (indptr, heads, residual capacities, reverse positions), forward arc a and its reverse."""
    m = tail.size
    rt, rh = np.concatenate([tail, head]), np.concatenate([head, tail])
    rc = np.concatenate([cap, np.zeros(m, cap.dtype)]).astype(np.int64)
    order = np.argsort(rt, kind="stable")
    pos = np.empty(2 * m, np.int64)
    pos[order] = np.arange(2 * m)
    partner = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rt, minlength=n))]).astype(np.int64)
    return indptr, rh[order].astype(np.int64), rc[order], pos[partner[order]]


@nb.njit(cache=True)
def _bfs(indptr, idx, rc, rev, n, source, sink, h, queue):
    for i in range(n):
        h[i] = n
    h[sink] = 0
    queue[0] = sink
    lo, hi, deepest = 0, 1, 0
    while lo < hi:
        y = queue[lo]
        lo += 1
        for k in range(indptr[y], indptr[y + 1]):
            x = idx[k]
            if rc[rev[k]] > 0 and h[x] == n and x != source:
                h[x] = h[y] + 1
                queue[hi] = x
                hi += 1
                deepest = max(deepest, h[x])
    h[source] = n
    return deepest, hi


@nb.njit(cache=True)
def _solve(indptr, idx, rc, rev, n, source, sink, order, visits, k, max_sweeps):
    e = np.zeros(n, np.int64)
    h = np.zeros(n, np.int64)
    queue = np.empty(n, np.int64)
    for a in range(indptr[source], indptr[source + 1]):
        d = rc[a]
        rc[a] -= d
        rc[rev[a]] += d
        e[idx[a]] += d
    levels, reached = _bfs(indptr, idx, rc, rev, n, source, sink, h, queue)
    grs, sweeps, work = 1, 0, 0
    gr_cost = idx.size + 6 * n
    while sweeps < max_sweeps:
        busy = False
        for i in range(n):
            u = order[i]
            if u == source or u == sink:
                continue
            for _ in range(visits):
                if e[u] <= 0 or h[u] >= n:
                    break
                busy = True
                best, bh = -1, 1 << 60
                for a in range(indptr[u], indptr[u + 1]):
                    work += 1
                    if rc[a] > 0 and h[idx[a]] < bh:
                        bh, best = h[idx[a]], a
                if best < 0:
                    h[u] = n
                elif h[u] > bh:
                    d = min(e[u], rc[best])
                    rc[best] -= d
                    rc[rev[best]] += d
                    e[u] -= d
                    e[idx[best]] += d
                else:
                    h[u] = bh + 1
        if not busy:
            break
        sweeps += 1
        if work >= k * gr_cost:
            deepest, _ = _bfs(indptr, idx, rc, rev, n, source, sink, h, queue)
            levels += deepest
            grs += 1
            work = 0
    return e[sink], sweeps, grs, levels


def run(a, order, visits, k, max_sweeps):
    tail, head, cap, s, t, n = gen.genrmf(a, a)
    indptr, idx, rc, rev = residual(tail, head, cap, n)
    ids = np.arange(n, dtype=np.int64)
    t0 = time.perf_counter()
    value, sweeps, grs, levels = _solve(indptr, idx, rc, rev, n, s, t, ids if order == "fwd" else ids[::-1].copy(),
                                        visits, k, max_sweeps)
    secs = time.perf_counter() - t0
    ref = maximum_flow(sp.csr_matrix((cap, (tail, head)), shape=(n, n)), s, t).flow_value
    return dict(a=a, vertices=n, arcs=int(tail.size), order=order, visits=visits, k=k, value=int(value),
                scipy_value=int(ref), finished=bool(sweeps < max_sweeps), sweeps=int(sweeps), global_relabels=int(grs),
                bfs_levels=int(levels), rounds=int(sweeps + levels), seconds=round(secs, 1))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", type=int, nargs="+", default=[16, 32, 64], help="genrmf a = b (frames of a x a)")
    p.add_argument("--order", nargs="+", default=["rev"], choices=["fwd", "rev"])
    p.add_argument("--visits", type=int, default=8, help="push/relabel operations per vertex visit, at most")
    p.add_argument("--k", type=float, nargs="+", default=[0.5], help="global relabel work factor")
    p.add_argument("--max-sweeps", type=int, default=1_000_000)
    p.add_argument("--out", default=None, help="JSON file for the rows")
    args = p.parse_args(argv)
    rows = []
    print("| a | vertices | arcs | order | k | value | = scipy | sweeps | GRs | BFS levels | rounds | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for a in args.a:
        for order in args.order:
            for k in args.k:
                r = run(a, order, args.visits, k, args.max_sweeps)
                rows.append(r)
                print(f"| {a} | {r['vertices']:,} | {r['arcs']:,} | {order} | {k} | {r['value']:,} | "
                      f"{r['value'] == r['scipy_value'] and r['finished']} | {r['sweeps']:,} | "
                      f"{r['global_relabels']} | "
                      f"{r['bfs_levels']:,} | {r['rounds']:,} | {r['seconds']} |", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
