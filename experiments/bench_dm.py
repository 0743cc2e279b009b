"""Benchmark: the Dulmage-Mendelsohn decomposition (jaxmatch.dulmage_mendelsohn) against a scipy reference.

The reference is issue 25's: the maximum matching by
``scipy.sparse.csgraph.maximum_bipartite_matching``, then the strongly connected components of the
matched digraph (column c -> column c' when the row matched to c has an entry in c') by
``connected_components(connection="strong")``. Matrices (square, with a zero-free diagonal hidden
by a random column permutation, so the structural rank is full and the fine blocks are the SCCs):

* ``random``: ``deg`` random entries a row (one giant block, a few singletons);
* ``blocks``: block upper triangular with blocks of 2-64 rows, ``deg`` entries a row inside the block
  or to the right, then rows and columns permuted at random (many blocks).

Checked: ``jaxmatch.certify.check_dulmage_mendelsohn`` passes (it proves the rank and the blocks on
its own), and the structural rank and the number of blocks equal the reference's where the reference
finishes within ``--peer-limit`` seconds (it runs in a forked process; a stopped one gives a lower
bound on the ratio). Timed: the first call (compile + solve), the
median of ``--repeats`` warm calls (``--method``: the matching's method, default the library's),
and, apart, each of its three parts warm: the maximum matching, the coarse parts (alternating
searches) and the fine part (components, order, permutations); against the reference split into
its matching and SCC parts.

Usage::

    python experiments/bench_dm.py --small
    python experiments/bench_dm.py --sizes 100000,1000000 --deg 8

Writes JSON to $OUT (if set) or experiments/results/, prints a table last.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching  # noqa: E402

import jaxmatch  # noqa: E402
from experiments.common import Forked, clock_started, timed, warm_timed  # noqa: E402
from jaxmatch.bipartite import dulmage_mendelsohn as dm  # noqa: E402
from jaxmatch.certify import check_dulmage_mendelsohn  # noqa: E402


def matrix(kind, n, deg, rng):
    """The rows and columns of the entries of an n x n matrix of the class ``kind`` (see the docstring)."""
    if kind == "random":
        r = np.repeat(np.arange(n), deg)
        c = rng.integers(0, n, r.size)
    else:
        sizes = rng.integers(2, 65, n // 2)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        starts = starts[starts < n]
        block = np.repeat(np.arange(starts.size), np.diff(np.append(starts, n)))
        r = np.repeat(np.arange(n), deg)
        lo = starts[block[r]]                      # an entry in the row's block or to its right
        c = lo + (rng.random(r.size) * (n - lo) * rng.random(r.size) ** 3).astype(np.int64)
        inside = rng.random(r.size) < 0.7          # mostly inside the block: blocks stay irreducible
        end = np.append(starts, n)[block[r] + 1]
        c = np.where(inside, lo + rng.integers(0, 1 << 30, r.size) % (end - lo), c)
        # a cycle through each block keeps it strongly connected
        nxt = np.where(np.arange(n) + 1 < np.append(starts, n)[block + 1], np.arange(n) + 1, starts[block])
        r, c = np.concatenate([r, np.arange(n)]), np.concatenate([c, nxt])
    r, c = np.concatenate([r, np.arange(n)]), np.concatenate([c, np.arange(n)])   # the diagonal
    pr, pc = rng.permutation(n), rng.permutation(n)
    return pr[r], pc[c]


def reference(A):
    clock_started()
    t = time.perf_counter()
    col_of_row = maximum_bipartite_matching(A, perm_type="column")
    t_match = time.perf_counter() - t
    rank = int((col_of_row >= 0).sum())
    coo = A.tocoo()
    t = time.perf_counter()
    src = col_of_row[coo.row]
    keep = src >= 0
    D = sp.csr_array((np.ones(int(keep.sum())), (src[keep], coo.col[keep])), shape=(A.shape[1], A.shape[1]))
    k, _ = connected_components(D, directed=True, connection="strong")
    t_scc = time.perf_counter() - t
    return t_match + t_scc, (rank, int(k), t_match, t_scc)


def parts(g, method, repeats):
    """Warm seconds (median) of the three parts of a call: matching, coarse, fine."""
    mmed, _, (rm, cm, status, iters) = warm_timed(lambda: dm.matching(g, method), repeats)
    cmed, _, cs = warm_timed(lambda: dm._coarse(g, rm, cm), repeats)
    steps = jax.numpy.int32(dm.default_scc_steps(g))
    fmed, _, _ = warm_timed(lambda: dm._fine(g, rm, cm, cs, status, iters, steps), repeats)
    return dict(matching_s=mmed, coarse_s=cmed, fine_s=fmed)


def row(kind, n, deg, repeats, peer_limit, rng, method):
    r, c = matrix(kind, n, deg, rng)
    A = sp.csr_array((np.ones(r.size), (r, c)), shape=(n, n))
    A.sum_duplicates()
    t = time.perf_counter()
    g = jaxmatch.from_scipy(A)
    build = time.perf_counter() - t
    peer = Forked(lambda: reference(A))
    t = time.perf_counter()
    res = jax.block_until_ready(jaxmatch.dulmage_mendelsohn(g, method=method))
    first = time.perf_counter() - t
    med, times, res = timed(lambda: jax.block_until_ready(jaxmatch.dulmage_mendelsohn(g, method=method)), repeats)
    split = parts(g, method, repeats)
    t = time.perf_counter()
    check_dulmage_mendelsohn(g, res)     # proves the rank (a maximum matching) and the blocks without the peer
    cert = time.perf_counter() - t
    out = dict(kind=kind, n=n, nnz=int(A.nnz), method=method, blocks=int(res.n_blocks), build_s=build,
               first_s=first, median_s=med, times=times, **split, stats={k: int(v) for k, v in res.stats.items()},
               certificate_s=cert, ref_s=None, ref_ran_for=None, ratio=None)
    got = peer.result(peer_limit)
    if got is None:                      # stopped: the ratio is a lower bound
        out.update(ref_ran_for=peer.ran_for, ratio=(peer.ran_for or 0) / med)
        return out
    ref, (rank, blocks, ref_match_s, ref_scc_s) = got
    assert int(res.structural_rank) == rank, (int(res.structural_rank), rank)
    assert int(res.n_blocks) == blocks, (int(res.n_blocks), blocks)
    out.update(ref_s=ref, ref_matching_s=ref_match_s, ref_scc_s=ref_scc_s, ratio=ref / med)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--kinds", default="random,blocks")
    ap.add_argument("--deg", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peer-limit", type=float, default=120.0, help="seconds the scipy reference may run")
    ap.add_argument("--method", default="pr", help="the matching's method (maximum_matching's)")
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args(argv)
    if a.small:
        a.sizes, a.repeats = "3000", 2
    rng = np.random.default_rng(0)
    device = jax.devices()[0]
    out_dir = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"dm-{device.platform}-{stamp}.json"
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        for kind in a.kinds.split(","):
            rows.append(row(kind, n, a.deg, a.repeats, a.peer_limit, rng, a.method))
            print(rows[-1], flush=True)
            path.write_text(json.dumps(dict(benchmark="dm", date=stamp, device=device.device_kind,
                                            jax=jax.__version__, rows=rows), indent=1))
    print(f"\ndevice: {device.device_kind}, jax {jax.__version__}")
    for r in rows:
        peer = (f"scipy {r['ref_s']:8.4f} s (matching {r['ref_matching_s']:.4f}, SCC {r['ref_scc_s']:.4f})"
                if r["ref_s"] is not None else f"scipy stopped after {r['ref_ran_for'] or 0:.0f} s")
        print(f"{r['kind']:7s} n={r['n']:>9,} nnz={r['nnz']:>11,} blocks {r['blocks']:>8,}  first {r['first_s']:6.2f} s"
              f"  warm {r['median_s']:8.4f} s (matching {r['matching_s']:.4f}, coarse {r['coarse_s']:.4f}, "
              f"fine {r['fine_s']:.4f}, {r['method']})  {peer}  {r['ratio']:.1f}x")
    print("json:", path)


if __name__ == "__main__":
    main()
