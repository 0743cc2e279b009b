"""Benchmark: exact assignment (jaxmatch.linear_sum_assignment, jaxmatch.min_weight_matching) against scipy and optax.

Three families (issue 24's targets), each checked and timed in one run:

* ``dense``: ``n x n`` cost matrices, uniform integers in [1, wmax] (``int``) and uniform floats in
  [0, 1) (``float``), float32 (float64 with ``--x64``), against ``scipy.optimize.linear_sum_assignment``;
* ``sparse``: ``n x n`` graphs with ``deg`` random edges a row plus a random perfect matching (so a
  full matching exists), integer weights in [1, wmax] (float64 with ``--x64``: exact at any size), against
  ``scipy.sparse.csgraph.min_weight_full_bipartite_matching``;
* ``batch``: ``B`` matrices ``k x k`` of uniform floats, ``jax.vmap(jaxmatch.linear_sum_assignment)``
  against ``jax.vmap(optax.assignment.hungarian_algorithm)`` on the same device and a scipy loop;
  both timed from a host array (its transfer included) and from the batch already on the device.

jaxmatch runs with the library's defaults; each peer runs first, alone (in a forked process,
stopped at ``--peer-limit``), so neither side's timing shares the host with the other. Reported:
the first call (compile, transfer and solve, what a user waits for once), the median of
``--repeats`` warm calls from a host array, the auction's rounds and phases, and the peer's time.
Checks: the total equals scipy's (exactly for integer costs; within the certified tolerance for
floats), and the dual potentials pass
``jaxmatch.certify.check_assignment`` (one more, untimed, call of the same solver).

Usage::

    python experiments/bench_assignment.py --small          # CPU smoke test
    python experiments/bench_assignment.py --small --tail 0 # the same with Jacobi rounds only (no tail)
    python experiments/bench_assignment.py --small --kernel on  # the dense auction in the Pallas kernel
    python experiments/bench_assignment.py --dense 1000,2000,4000,8000 --sparse 100000,1000000 --batch 10000

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
from functools import partial

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.optimize  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import min_weight_full_bipartite_matching  # noqa: E402

import jaxmatch  # noqa: E402
from experiments.common import Forked, timed  # noqa: E402
from jaxmatch.assignment import _solve_dense  # noqa: E402
from jaxmatch.assignment.auction import DEFAULT, DENSE  # noqa: E402
from jaxmatch.certify import check_assignment  # noqa: E402


def _first(fn):
    t = time.perf_counter()
    out = jax.block_until_ready(fn())
    return time.perf_counter() - t, out


def _scipy_dense(c):
    def run():
        t = time.perf_counter()
        r, k = scipy.optimize.linear_sum_assignment(c)
        return time.perf_counter() - t, float(c[r, k].sum())
    return run


def dense_row(n, kind, imax, repeats, peer_limit, rng):
    dt = np.float64 if jax.config.jax_enable_x64 else np.float32
    c = (rng.integers(1, imax + 1, (n, n)) if kind == "int" else rng.random((n, n))).astype(dt)
    peer = Forked(_scipy_dense(c.astype(np.float64)))
    res = peer.result(peer_limit)        # the peer first, alone: no process of its own beside jaxmatch's timing
    lsa = partial(jaxmatch.linear_sum_assignment, config=_config(DENSE))
    first, _ = _first(lambda: lsa(c))
    med, times, (rows, cols) = timed(lambda: jax.block_until_ready(lsa(c)), repeats)
    cols_np = np.asarray(cols)
    got = float(c.astype(np.float64)[np.arange(n), cols_np].sum())
    dcols, _, v, status, stats = _solve_dense(jnp.asarray(c), jaxmatch.assignment.DEFAULT_MAX_ITERS, False,
                                              _config(DENSE))
    assert np.array_equal(np.asarray(dcols), cols_np)
    gap = check_assignment(c.astype(np.float64), cols_np, np.asarray(v), tol=np.inf)
    want = None if res is None else res[1]
    if want is not None:
        assert abs(got - want) <= gap + 1e-6 * abs(want) and (kind != "int" or gap >= 1 or got == want), \
            (got, want, gap)
    return dict(family="dense", n=n, kind=kind, dtype=np.dtype(dt).name, imax=imax if kind == "int" else None, first_s=first, median_s=med, times=times,
                rounds=int(stats["iterations"]), phases=int(stats["phases"]), bids=int(stats["bids"]),
                total=got, scipy_total=want, certified_gap=gap,
                scipy_s=None if res is None else res[0], scipy_ran_for=peer.ran_for)


def sparse_row(n, deg, wmax, repeats, peer_limit, rng):
    t = time.perf_counter()
    r = np.concatenate([np.repeat(np.arange(n), deg), np.arange(n)])
    c = np.concatenate([rng.integers(0, n, n * deg), rng.permutation(n)])
    w = rng.integers(1, wmax + 1, r.size).astype(np.float64)
    A = sp.csr_array((w, (r, c)), shape=(n, n))          # repeats summed, as from_edges does
    A.sum_duplicates()
    rr = np.repeat(np.arange(n), np.diff(A.indptr))
    g = jaxmatch.BipartiteGraph.from_edges(rr, A.indices, n, n, weights=A.data)
    build = time.perf_counter() - t

    def run_peer():
        t = time.perf_counter()
        i, j = min_weight_full_bipartite_matching(A)
        return time.perf_counter() - t, float(A[i, j].sum())
    peer = Forked(run_peer)
    pr = peer.result(peer_limit)
    mwm = partial(jaxmatch.min_weight_matching, config=_config(DEFAULT))
    first, _ = _first(lambda: mwm(g))
    med, times, res = timed(lambda: jax.block_until_ready(mwm(g)), repeats)
    gap = check_assignment(g, res.row_mate, res.col_potential, tol=np.inf)
    got = float(res.weight)
    want = None if pr is None else pr[1]
    if want is not None:                                 # within the certified gap; equal when it is < 1
        assert abs(got - want) <= gap + 1e-9 * abs(want) and (gap >= 1 or got == want), (got, want, gap)
    return dict(family="sparse", n=n, edges=int(A.nnz), wmax=wmax, x64=bool(jax.config.jax_enable_x64), build_s=build, first_s=first, median_s=med, times=times,
                rounds=int(res.stats["iterations"]), phases=int(res.stats["phases"]), total=got,
                scipy_total=want, certified_gap=gap, scipy_s=None if pr is None else pr[0],
                scipy_ran_for=peer.ran_for)


def batch_row(b, k, repeats, rng):
    c = rng.random((b, k, k)).astype(np.float32)
    ours = jax.jit(jax.vmap(partial(jaxmatch.linear_sum_assignment, config=_config(DENSE))))
    first, _ = _first(lambda: ours(c))
    med, times, (_, cols) = timed(lambda: jax.block_until_ready(ours(c)), repeats)
    got = np.take_along_axis(c, np.asarray(cols)[:, :, None], 2)[:, :, 0].sum(1, dtype=np.float64)
    t = time.perf_counter()
    want = np.array([c[i][scipy.optimize.linear_sum_assignment(c[i])].sum(dtype=np.float64) for i in range(b)])
    scipy_s = time.perf_counter() - t
    assert np.all(np.abs(got - want) <= 1e-4), float(np.max(np.abs(got - want)))
    cd = jax.device_put(c)                  # the same batch already on the device (a JAX pipeline's case)
    dmed, _, (_, dcols) = timed(lambda: jax.block_until_ready(ours(cd)), repeats)
    assert np.array_equal(np.asarray(dcols), np.asarray(cols))
    row = dict(family="batch", batch=b, k=k, first_s=first, median_s=med, times=times, scipy_loop_s=scipy_s,
               per_minute=b / med * 60, device_input_s=dmed)
    try:
        import optax
        hung = jax.jit(jax.vmap(optax.assignment.hungarian_algorithm))
        ofirst, _ = _first(lambda: hung(c))
        omed, _, (oi, oj) = timed(lambda: jax.block_until_ready(hung(c)), repeats)
        ototal = np.asarray(jax.vmap(lambda m, i, j: m[i, j].sum())(jnp.asarray(c), oi, oj))
        assert np.all(np.abs(ototal - want) <= 1e-4)
        odmed, _, _ = timed(lambda: jax.block_until_ready(hung(cd)), repeats)
        row.update(optax_first_s=ofirst, optax_s=omed, optax_device_input_s=odmed)
    except ImportError as e:
        row.update(optax_s=None, optax_error=repr(e))
    return row


TAIL = None   # --tail: the auction's Config.tail for every row (None: the library's defaults)
KERNEL = None  # --kernel: the auction's Config.kernel for every row (None: the library's default)


def _config(base):
    """The auction config a row runs: None (the library's default for its layout and size), or ``base``
    with ``--tail`` / ``--kernel``."""
    if TAIL is None and KERNEL is None:
        return None
    base = base if TAIL is None else base._replace(tail=TAIL)
    return base if KERNEL is None else base._replace(kernel=KERNEL)


def main(argv=None):
    global TAIL, KERNEL
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dense", default="1000,2000,4000")
    ap.add_argument("--kinds", default="int,float")
    ap.add_argument("--sparse", default="100000")
    ap.add_argument("--deg", type=int, default=10)
    ap.add_argument("--wmax", type=int, default=1000, help="integer costs and weights are in [1, wmax]")
    ap.add_argument("--x64", action="store_true", help="jax_enable_x64: float64 weights and prices")
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peer-limit", type=float, default=240.0)
    ap.add_argument("--small", action="store_true", help="a CPU smoke test")
    ap.add_argument("--kernel", default="default", choices=("default", "on", "off"),
                    help="the dense auction in one Pallas program per problem (Config.kernel; default: the library's)")
    ap.add_argument("--tail", type=int, default=None,
                    help="the auction's Config.tail for every row (0: Jacobi rounds only; default: the library's)")
    a = ap.parse_args(argv)
    TAIL = a.tail
    KERNEL = {"default": None, "on": True, "off": False}[a.kernel]
    if a.small:
        a.dense, a.sparse, a.batch, a.repeats = "200", "2000", 50, 2
    if a.x64:
        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    device = jax.devices()[0]
    rows = []
    out_dir = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"assignment-{device.platform}-{stamp}.json"

    def save():
        path.write_text(json.dumps(dict(benchmark="assignment", date=stamp, device=device.device_kind,
                                        platform=device.platform, jax=jax.__version__, tail=TAIL, kernel=KERNEL,
                                        rows=rows),
                                   indent=1))

    for n in [int(x) for x in a.dense.split(",") if x]:
        for kind in a.kinds.split(","):
            rows.append(dense_row(n, kind, a.wmax, a.repeats, a.peer_limit, rng))
            save()
            print(rows[-1], flush=True)
    for n in [int(x) for x in a.sparse.split(",") if x]:
        rows.append(sparse_row(n, a.deg, a.wmax, a.repeats, a.peer_limit, rng))
        save()
        print(rows[-1], flush=True)
    if a.batch:
        rows.append(batch_row(a.batch, a.k, a.repeats, rng))
        save()
    print(f"\ndevice: {device.device_kind}, jax {jax.__version__}")
    for r in rows:
        peer = r.get("scipy_s") or r.get("scipy_loop_s")
        if r["family"] == "batch":
            name = f"batch {r['batch']} x {r['k']}x{r['k']}"
            extra = (f"optax {r.get('optax_s')}; device input: ours {r['device_input_s']:.4f} s, "
                     f"optax {r.get('optax_device_input_s')}")
        else:
            name = f"{r['family']} n={r['n']} {r.get('kind', '')}"
            extra = f"rounds {r['rounds']} gap {r['certified_gap']:.3g}"
        ratio = f"{peer / r['median_s']:.1f}x" if peer else "peer stopped"
        print(f"{name:28s} first {r['first_s']:7.2f} s  warm {r['median_s']:8.4f} s  scipy {peer}  {ratio}  {extra}")
    print("json:", path)


if __name__ == "__main__":
    main()
