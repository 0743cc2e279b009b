"""Benchmark: stable marriage (Gale-Shapley / McVitie-Wilson in array form).

Paper IV of the thesis: the "easy" set (each man ranks (1 + eps) ln n random
women, eps uniform in [0, 1]; each woman ranks exactly the men who rank her)
from 5M to 25M and the "hard" set (identical complete rankings, n(n+1)/2
proposals) from 100K to 500K, against a sequential queue-based Gale-Shapley
(Algorithm 1 of the paper, with the paper's O(E) rank precomputation),
compiled with numba when importable, and the ``matching`` package on small
sizes when importable.

Every timed answer is checked: equal to the peer's wife array (the
man-optimal stable matching is unique) and ``jaxmatch.certify.check_stable``.
Times: warm-up first (the first call's extra time is reported as compile
time), ``jax.block_until_ready``, median of ``--reps`` (>= 5) runs. The
jaxmatch time covers the device work of one call: the women's rank lookup and
the proposal loop (the Preferences are built and validated on the host once,
like a graph).

    python experiments/bench_stable.py --small          # CPU smoke test, < 1 min
    python experiments/bench_stable.py                  # the paper's sizes (GPU)
    python experiments/bench_stable.py --command-buffers  # XLA command buffers for loops

Writes JSON to $OUT (if set) or experiments/results/.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from experiments.common import FAST_FLAGS, timed  # noqa: E402


# --------------------------------------------------------------------------
# sequential peer: Algorithm 1 (queue) with the paper's O(E) rank precomputation


def _peer_source():
    def pair_ranks(m_ptr, m_ids, w_ptr, w_ids, n_men, n_women):
        # for every man, the women who rank him with the rank (a counting-sort transpose),
        # then the paper's position() array: O(E) in all
        cnt = np.zeros(n_men + 1, np.int64)
        for f in range(w_ids.size):
            cnt[w_ids[f] + 1] += 1
        for i in range(n_men):
            cnt[i + 1] += cnt[i]
        fill = cnt[:-1].copy()
        t_w = np.empty(w_ids.size, np.int64)
        t_r = np.empty(w_ids.size, np.int64)
        for w in range(n_women):
            for f in range(w_ptr[w], w_ptr[w + 1]):
                m = w_ids[f]
                t_w[fill[m]] = w
                t_r[fill[m]] = f - w_ptr[w]
                fill[m] += 1
        position_man = np.full(n_women, -1, np.int64)
        position_rank = np.zeros(n_women, np.int64)
        rank = np.empty(m_ids.size, np.int64)
        for m in range(n_men):
            for k in range(cnt[m], cnt[m + 1]):
                position_man[t_w[k]] = m
                position_rank[t_w[k]] = t_r[k]
            for e in range(m_ptr[m], m_ptr[m + 1]):
                w = m_ids[e]
                rank[e] = position_rank[w] if position_man[w] == m else 1 << 62
        return rank

    def gale_shapley(m_ptr, m_ids, rank, n_men, n_women, w_ptr, w_ids):
        # Algorithm 1: a queue of men; suitors skip women who hold a better proposal
        big = 1 << 62
        hold = np.full(n_women, big, np.int64)
        nxt = m_ptr[:-1].copy()
        queue = np.empty(n_men, np.int64)
        for m in range(n_men):
            queue[m] = m
        head = 0
        tail = 0  # the queue is full: its end wraps to the start
        count = n_men
        while count > 0:
            u = queue[head]
            head = (head + 1) % n_men
            count -= 1
            while nxt[u] < m_ptr[u + 1]:
                e = nxt[u]
                nxt[u] += 1
                w = m_ids[e]
                if rank[e] < hold[w]:
                    if hold[w] < big:
                        queue[tail] = w_ids[w_ptr[w] + hold[w]]
                        tail = (tail + 1) % n_men
                        count += 1
                    hold[w] = rank[e]
                    break
        wife = np.full(n_men, -1, np.int64)
        for w in range(n_women):
            if hold[w] < big:
                wife[w_ids[w_ptr[w] + hold[w]]] = w
        return wife, (nxt - m_ptr[:-1]).sum()

    def gale_shapley_shared(order_m, order_w, n_men, n_women):
        # the same algorithm when everyone on a side shares one list: ranks are its inverse
        big = 1 << 62
        inv_w = np.full(n_men, big, np.int64)
        for k in range(order_w.size):
            inv_w[order_w[k]] = k
        hold = np.full(n_women, big, np.int64)
        nxt = np.zeros(n_men, np.int64)
        queue = np.empty(n_men, np.int64)
        for m in range(n_men):
            queue[m] = m
        head = 0
        tail = 0
        count = n_men
        while count > 0:
            u = queue[head]
            head = (head + 1) % n_men
            count -= 1
            r = inv_w[u]
            while nxt[u] < order_m.size:
                w = order_m[nxt[u]]
                nxt[u] += 1
                if r < hold[w]:
                    if hold[w] < big:
                        queue[tail] = order_w[hold[w]]
                        tail = (tail + 1) % n_men
                        count += 1
                    hold[w] = r
                    break
        wife = np.full(n_men, -1, np.int64)
        for w in range(n_women):
            if hold[w] < big:
                wife[order_w[hold[w]]] = w
        return wife, nxt.sum()

    return pair_ranks, gale_shapley, gale_shapley_shared


def make_peer():
    """(name, pair_ranks, gale_shapley, gale_shapley_shared, compiled?)."""
    fns = _peer_source()
    try:
        import numba
    except ImportError:
        print("note: numba is not importable; the sequential peer runs as plain Python, small sizes only")
        return "python-seq", *fns, False
    return "numba-seq", *(numba.njit(cache=False)(f) for f in fns), True


def matching_peer(men_csr, women_csr, n_men, n_women):
    """The `matching` package's StableMarriage (men-optimal), or None if not importable.

    Its StableMarriage takes complete lists only (the caller checks), and it deep-copies
    its linked player objects, which recurses once per list entry: it runs in a thread
    with a large stack and a raised recursion limit."""
    try:
        from matching.games import StableMarriage
    except ImportError:
        return None
    import threading
    mp = {m: list(men_csr[1][men_csr[0][m]:men_csr[0][m + 1]]) for m in range(n_men)}
    wp = {w: list(women_csr[1][women_csr[0][w]:women_csr[0][w + 1]]) for w in range(n_women)}
    wife = np.full(n_men, -1, np.int64)

    def solve():
        import gc
        game = StableMarriage.create_from_dictionaries(mp, wp)
        res = game.solve(optimal="suitor")
        m = w = None
        for m, w in res.items():
            if w is not None:
                wife[m.name] = w.name
        # the players refer to each other in cycles: free them here, on the big stack (left to
        # the collector on the main thread's stack, they are the likely cause of the crash at
        # exit seen on the GPU machine after n = 500)
        game = res = m = w = None
        gc.collect()

    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(1_000_000)
    threading.stack_size(1 << 30)
    try:
        th = threading.Thread(target=solve)
        th.start()
        th.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(stack)
    return wife


# --------------------------------------------------------------------------


def _bandwidth(jax, jnp):
    x = jnp.ones(1 << 26, jnp.int32)
    f = jax.jit(lambda x: x + 1)
    jax.block_until_ready(f(x))
    t, _, _ = timed(lambda: jax.block_until_ready(f(x)), 5)
    return 2 * x.nbytes / t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--easy", type=str, default="5e6,10e6,15e6,20e6,25e6", help="easy-set sizes n")
    ap.add_argument("--hard", type=str, default="1e5,2e5,3e5,4e5,5e5", help="hard-set sizes n")
    ap.add_argument("--small", action="store_true", help="CPU smoke test: easy 3e3,1e4, hard 200,500")
    ap.add_argument("--methods", type=str, default="mcvitie_wilson,mcvitie_wilson/xla,gale_shapley",
                    help="methods; 'mcvitie_wilson/xla' and '/pallas' force the array version or the kernel, "
                         "'/pallas-128-1-256-4-16' sets the kernel's block, window, steps, warps, short steps")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--unroll", type=int, default=None)
    ap.add_argument("--window", type=int, default=None)
    ap.add_argument("--peer-max-hard", type=float, default=2e5,
                    help="largest hard n for the sequential peer (it does n^2/2 steps)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time the parts of one kernel solve: rank lookup, solve given it, no proposals")
    ap.add_argument("--peer-max-easy", type=float, default=1e12, help="largest easy n for the compiled peer")
    ap.add_argument("--gs-max-hard", type=float, default=1e12,
                    help="largest hard n for method gale_shapley (one loop step per wave)")
    ap.add_argument("--matching-hard", type=str, default="500,1000",
                    help="small hard-set sizes run first, where the `matching` package (complete lists only) runs too")
    ap.add_argument("--matching-max", type=float, default=1000, help="largest n for the `matching` package")
    ap.add_argument("--command-buffers", action="store_true", help="set XLA command-buffer flags for loops")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for the whole run: sets not started by then are skipped and listed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--group", type=int, default=None,
                    help="blocks per group of the second proposal-filter level (1: one level; "
                         "default gale_shapley.GROUP)")
    ap.add_argument("--pow2-capacity", action="store_true",
                    help="entry capacity rounded up to a power of two (the library default) instead of the "
                         "exact list length: every pass over the entries (the sort included) then also covers "
                         "the padding, up to 2x the entries")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    if args.reps < 5:
        ap.error("--reps must be >= 5 (median of at least 5 runs)")
    if args.command_buffers:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + FAST_FLAGS).strip()
    if args.small:
        args.easy, args.hard, args.matching_hard = "3e3,1e4", "2000", "200,500"
    easy = [int(float(s)) for s in args.easy.split(",") if s]
    hard = [int(float(s)) for s in (args.matching_hard + "," + args.hard).split(",") if s]
    methods = [m for m in args.methods.split(",") if m]

    import jax
    import jax.numpy as jnp

    from experiments.generators import stable_easy, stable_hard
    from jaxmatch.certify import check_stable
    from jaxmatch.stable import Preferences, as_instance, stable_marriage
    from jaxmatch.kernels.stable_mw import Config
    from jaxmatch.stable import gale_shapley as gs

    config = gs.Config() if args.group is None else gs.Config(group=args.group)
    dev = jax.devices()[0]
    print(f"device: {dev.device_kind} ({dev.platform}), jax {jax.__version__}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}", flush=True)
    bw = _bandwidth(jax, jnp)
    print(f"device copy bandwidth (read + write): {bw / 1e9:.0f} GB/s", flush=True)
    peer_name, p_ranks, p_gs, p_gs_shared, compiled = make_peer()
    py_limit_easy, py_limit_hard = (args.peer_max_easy, args.peer_max_hard) if compiled else (2e5, 2000)
    opts = {}
    if args.unroll:
        opts["unroll"] = args.unroll
    if args.window:
        opts["window"] = args.window

    rows, records = [], []

    def run_set(kind, n):
        t0 = time.perf_counter()
        if kind == "easy":
            men_np, women_np = stable_easy(n, seed=args.seed)
        else:
            men_np, women_np = stable_hard(n, seed=args.seed + 1)
        t_gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        if args.pow2_capacity:
            men, women = as_instance(men_np, women_np)
        else:  # exact entry capacities (shared lists are stored once anyway)
            def exact(a, n_other, name):
                e = a.shape[1] if a.strides[0] == 0 else int((a >= 0).sum())
                return Preferences.from_padded(a, n_other, entry_capacity=max(e, 1), name=name)
            men, women = as_instance(exact(men_np, women_np.shape[0], "men_prefs"),
                                     exact(women_np, men_np.shape[0], "women_prefs"))
        jax.block_until_ready((men, women))
        t_build = time.perf_counter() - t0
        n_entries = int(men.n_entries) if not men.shared else n * int(men.n_entries)
        print(f"\n[{kind} n={n}] generated in {t_gen:.1f} s, built + validated + moved in {t_build:.1f} s, "
              f"{n_entries} men's list entries", flush=True)
        del men_np, women_np

        # peer
        peer_wife = peer_t = peer_props = None
        peer_reps = 0
        limit = py_limit_easy if kind == "easy" else py_limit_hard
        if n <= limit:
            if men.shared:
                om, ow = men.shared_order().astype(np.int64), women.shared_order().astype(np.int64)
                call = lambda: p_gs_shared(om, ow, n, n)
                if compiled:
                    p_gs_shared(om[:2], ow[:2], 2, 2)
            else:
                mc, wc = men.to_csr(), women.to_csr()
                mp, mi = mc[0], mc[1].astype(np.int64)
                wp, wi = wc[0], wc[1].astype(np.int64)
                call = lambda: p_gs(mp, mi, p_ranks(mp, mi, wp, wi, n, n), n, n, wp, wi)
                if compiled:
                    z = np.zeros(1, np.int64)
                    p_gs(np.array([0, 1]), z, p_ranks(np.array([0, 1]), z, np.array([0, 1]), z, 1, 1), 1, 1,
                         np.array([0, 1]), z)
            t0 = time.perf_counter()
            peer_wife, peer_props = call()
            first = time.perf_counter() - t0
            if first * args.reps < 60:
                peer_t, _, _ = timed(call, args.reps)
                peer_reps = args.reps
            else:
                peer_t, peer_reps = first, 1
            print(f"  peer {peer_name}: {peer_t * 1e3:.1f} ms (median of {peer_reps}), "
                  f"{int(peer_props)} proposals", flush=True)
        else:
            print(f"  peer {peer_name}: skipped at this size", flush=True)
        m_time = None
        complete = False
        if n <= args.matching_max:
            if men.shared:  # one list for everybody: spell it out
                mc = (np.arange(n + 1) * n, np.tile(men.shared_order(), n))
                wc = (np.arange(n + 1) * n, np.tile(women.shared_order(), n))
            else:
                mc, wc = men.to_csr(), women.to_csr()
            complete = bool((np.diff(mc[0]) == n).all() and (np.diff(wc[0]) == n).all())
            if not complete:
                print("  matching package: skipped (it takes complete lists only)", flush=True)
        if complete:
            t0 = time.perf_counter()
            mw = matching_peer(mc, wc, n, n)
            m_time = time.perf_counter() - t0
            if mw is None:
                print("  note: the `matching` package is not importable; skipped", flush=True)
                m_time = None
            else:
                if peer_wife is not None and not np.array_equal(mw, peer_wife):
                    raise SystemExit("FAIL: the matching package disagrees with the sequential peer")
                print(f"  matching package: {m_time * 1e3:.1f} ms (one run)", flush=True)

        # the women's rank lookup alone (part of every solve)
        rank_t = None
        if not women.shared:
            f = jax.jit(gs.rank_tables)
            jax.block_until_ready(f(men, women))
            rank_t, _, _ = timed(lambda: jax.block_until_ready(f(men, women)), args.reps)

        if args.breakdown and not men.shared:   # where the time of one McVitie-Wilson solve goes
            tables = jax.jit(gs.rank_tables)(men, women)
            cfg = Config()
            interp = jax.default_backend() != "gpu"

            def part(max_iters, c):
                f = jax.jit(lambda m, w, t: gs.solve(m, w, method="mcvitie_wilson", max_iters=max_iters,
                                                     kernel=c, interpret=interp, tables=t))
                return lambda: f(men, women, tables)
            parts = dict(solve_given_tables=part(10 ** 9, cfg),
                         no_proposals=part(2, cfg._replace(steps=0, short_steps=0)),
                         one_launch=part(1, cfg._replace(short_steps=cfg.steps)),
                         public_call=lambda: stable_marriage(men, women, method="mcvitie_wilson", kernel=cfg,
                                                                     config=config))
            for name, f in parts.items():
                jax.block_until_ready(f())
                med, _, _ = timed(lambda: jax.block_until_ready(f()), args.reps)
                print(f"  breakdown {name}: {med * 1e3:.1f} ms", flush=True)
                records.append(dict(set=kind, n=n, breakdown=name, time_s=med))
            del tables

        answers, certified = {}, None
        for method in methods:
            if kind == "hard" and method.startswith("gale_shapley") and n > args.gs_max_hard:
                print(f"  {method}: skipped above --gs-max-hard", flush=True)
                continue
            name, _, impl = method.partition("/")
            kern = {"": None, "xla": False}.get(impl, True)
            if impl.startswith("pallas-"):   # pallas-BLOCK-WINDOW-STEPS-WARPS-SHORT (a prefix of them)
                kern = Config(*map(int, impl.split("-")[1:]))
            call = lambda: jax.block_until_ready(stable_marriage(men, women, method=name, kernel=kern, config=config,
                                                                         **opts))
            t0 = time.perf_counter()
            res = call()
            first = time.perf_counter() - t0
            med, ts, res = timed(call, args.reps)
            wife = np.asarray(res.wife)
            t0 = time.perf_counter()
            if certified is None or not np.array_equal(wife, certified):
                check_stable(men, women, wife)   # an answer equal to a certified one is not checked again
                certified = wife
            t_cert = time.perf_counter() - t0
            ok_peer = None
            if peer_wife is not None:
                ok_peer = bool(np.array_equal(wife, peer_wife)) and int(peer_props) == res.stats["proposals"]
                if not ok_peer:
                    raise SystemExit(f"FAIL: {method} differs from the sequential peer at {kind} n={n}")
            answers[method] = wife
            if len(answers) > 1 and not np.array_equal(answers[methods[0]], wife):
                raise SystemExit(f"FAIL: methods disagree at {kind} n={n}")
            if int(res.status) != 0:
                raise SystemExit(f"FAIL: {method} hit max_iters at {kind} n={n}")
            st = {k: int(v) for k, v in res.stats.items()}
            matched = int((wife >= 0).sum())
            rec = dict(set=kind, n=n, method=method,
                       capacities=dict(men=men.capacities(), women=women.capacities()), time_s=med, times_s=ts, compile_s=max(first - med, 0.0),
                       rank_lookup_s=rank_t, stats=st, matched=matched, list_entries=n_entries,
                       proposals_per_s=st["proposals"] / med, certificate_s=t_cert, checked_vs_peer=ok_peer,
                       peer=peer_name if peer_t is not None else None, peer_time_s=peer_t, peer_reps=peer_reps,
                       matching_pkg_time_s=m_time, speedup_vs_peer=(peer_t / med) if peer_t else None,
                       bandwidth_floor_s=(n_entries * 4 * 2) / bw if not men.shared else None)
            records.append(rec)
            print(f"  {method}: {med * 1e3:.1f} ms (median of {args.reps}; compile {rec['compile_s']:.1f} s), "
                  f"rounds {st['rounds']}, waves {st['waves']}, proposals {st['proposals']}, "
                  f"matched {matched}, certificate ok ({t_cert:.1f} s)"
                  + (", equal to peer" if ok_peer else ""), flush=True)
            rows.append((kind, n, method, med, st["waves"], st["rounds"], st["proposals"], peer_t,
                         rec["speedup_vs_peer"]))

    out = pathlib.Path(os.environ.get("OUT") or ROOT / "experiments" / "results")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"stable_{time.strftime('%Y%m%d-%H%M%S')}.json"

    def save():  # after every set, so a run cut short keeps what it measured
        path.write_text(json.dumps(dict(device=dev.device_kind, platform=dev.platform, jax=jax.__version__,
                                        xla_flags=os.environ.get("XLA_FLAGS", ""), bandwidth_Bps=bw,
                                        options=opts, group=config.group, peer=peer_name, results=records), indent=1))

    skipped = []
    for kind, sizes in (("easy", easy), ("hard", hard)):
        for n in sizes:
            if args.budget is not None and time.perf_counter() - t_start > args.budget:
                skipped.append(f"{kind} n={n}")
                continue
            run_set(kind, n)
            save()
    save()
    if skipped:
        print("\nskipped (time budget): " + ", ".join(skipped))
    print(f"\nwrote {path}")
    print(f"\n{'set':5} {'n':>9} {'method':15} {'time ms':>10} {'waves':>7} {'rounds':>7} {'proposals':>13} "
          f"{'peer ms':>10} {'speedup':>8}")
    for kind, n, method, t, waves, rounds, props, pt, sp in rows:
        print(f"{kind:5} {n:9d} {method:15} {t * 1e3:10.1f} {waves:7d} {rounds:7d} {props:13d} "
              f"{(pt * 1e3 if pt else float('nan')):10.1f} {(sp if sp else float('nan')):8.2f}")


if __name__ == "__main__":
    main()
