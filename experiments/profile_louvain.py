"""Where the first Louvain level's time goes on the GPU (issue 8): one traced run per graph.

``--whole``: the whole default run instead (every level and the refinement;
"sweeps" then counts all of them, and TEPS is not comparable).

For each class of ``bench_louvain.py`` at about ``--edges`` edges, the first
level alone (``max_levels=1``, no refinement; the run that the benchmark's
first-level throughput times) is warmed up, timed (median of ``--repeats``),
then run once under ``jax.profiler.trace``. The trace's GPU kernels are
summed by HLO instruction, and each instruction is traced back to the line
of ``jaxmatch`` that made it (the ``metadata`` of the optimised HLO). Prints
the top ``--top`` instructions and the share of the wall time spent in
kernels; writes the table as JSON under $OUT (or experiments/results/).

This is a profile, not a benchmark: the trace itself slows the run down a
little, so compare shares, not the traced times, with the benchmark's.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import pathlib
import re
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from experiments.bench_louvain import graph_from_csr, make_graph, vertices_for  # noqa: E402
from experiments.common import timed  # noqa: E402


def hlo_sources(hlo_text: str) -> dict[str, str]:
    """HLO instruction name -> 'file:line op' of the JAX code that made it (optimised HLO text).

    The metadata names the line either directly (``source_file``,
    ``source_line``) or, in newer XLA, by a ``stack_frame_id`` into the
    tables at the top of the text. A fusion's own line has no metadata; it
    gets that of the last instruction of its fused computation that has some
    (its root, usually). A copy or fusion with neither (one XLA inserted)
    gets its shape and operand."""
    tables = collections.defaultdict(dict)
    section = None
    for line in hlo_text.splitlines()[:20000]:
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = line
            continue
        m = re.match(r"(\d+) (.*)$", line)
        if section and m:
            tables[section][m.group(1)] = m.group(2)
        elif section and line.startswith(("HloModule", "%", "ENTRY")):
            section = None

    def frame(fid):          # the innermost frame outside the small helpers of _ops.py
        where = None
        for _ in range(64):
            sf = tables["StackFrames"].get(fid, "")
            loc = re.search(r"file_location_id=(\d+)", sf)
            loc = tables["FileLocations"].get(loc.group(1), "") if loc else ""
            f, ln = re.search(r"file_name_id=(\d+)", loc), re.search(r"\bline=(\d+)", loc)
            if not (f and ln):
                return where
            name = pathlib.Path(tables["FileNames"].get(f.group(1), "?").strip(chr(34))).name
            where = where or f"{name}:{ln.group(1)}"
            if name != "_ops.py":
                return f"{name}:{ln.group(1)}"
            # the printed parent id is one more than the parent frame's id (0: none)
            parent = re.search(r"parent_frame_id=(\d+)", sf)
            if not parent or int(parent.group(1)) <= 1:
                return where
            fid = str(int(parent.group(1)) - 1)
        return where

    out, fused, comp = {}, {}, None
    for line in hlo_text.splitlines():
        head = re.match(r"\s*(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
        if head and "=" not in line.split("{")[0]:
            comp = head.group(1)
            continue
        m = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", line)
        if not m:
            continue
        name, where = m.group(1), None
        op = re.search(r'op_name="([^"]*)"', line)
        old = re.search(r'source_file="([^"]*)".*?source_line=(\d+)', line)
        sid = re.search(r"stack_frame_id=(\d+)", line)
        if old:
            where = f"{pathlib.Path(old.group(1)).name}:{old.group(2)}"
        elif sid:
            where = frame(sid.group(1))
        if where:
            where = f"{where} {op.group(1).split('/')[-1] if op else ''}"
            out[name] = where
            if comp is not None:
                fused[comp] = where
        call = re.search(r"calls=%?([\w.\-]+)", line)
        if call and name not in out and call.group(1) in fused:
            out[name] = fused[call.group(1)]
        copy = re.match(r"\s*(?:ROOT )?%?[\w.\-]+ = (\S+) (copy|fusion)\((.*?)\)", line)
        if copy and name not in out:   # no source line (a copy XLA inserted): its shape and operand
            out[name] = f"{copy.group(2)} {copy.group(1)} of {copy.group(3)[:60]}"
    return out


def traced_kernel_times(run) -> tuple[collections.Counter, collections.Counter, float]:
    """:func:`kernel_times` of one call of ``run`` under ``jax.profiler.trace``."""
    import jax
    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d):
            run()
        return kernel_times(d)


def kernel_times(trace_dir: str) -> tuple[collections.Counter, collections.Counter, float]:
    """(ns per HLO op, launches per HLO op, ns of all kernels) on the GPU planes of a trace."""
    from jax.profiler import ProfileData
    path = glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True)[0]
    ns, calls, total = collections.Counter(), collections.Counter(), 0.0
    for plane in ProfileData.from_file(path).planes:
        if not plane.name.startswith("/device:GPU"):
            continue
        for line in plane.lines:
            if "stream" not in line.name.lower():
                continue
            for ev in line.events:
                stats = dict(ev.stats)
                op = stats.get("hlo_op") or ev.name
                ns[op] += ev.duration_ns
                calls[op] += 1
                total += ev.duration_ns
    return ns, calls, total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--classes", nargs="+", default=["road", "rgg", "delaunay", "power_law"])
    p.add_argument("--edges", type=float, default=1e7)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--whole", action="store_true",
                   help="profile the whole default run (every level and the refinement), not the first level")
    a = p.parse_args(argv)

    import jax
    from jaxmatch.community import _options, _solve
    from jaxmatch.graph import next_pow2
    rows = []
    for cls in a.classes:
        A = make_graph(cls, vertices_for(cls, int(a.edges)), a.seed).tocsr()
        n, e = A.shape[0], int(A.indptr[-1])
        g = graph_from_csr(A.indptr.astype(np.int64), A.indices.astype(np.int32), n, next_pow2(n), next_pow2(e))
        opts, static = _options(g) if a.whole else _options(g, max_levels=1, refine=False)
        run = lambda: jax.block_until_ready(_solve(g, opts, **static))
        t = time.perf_counter()
        run()
        compile_s = time.perf_counter() - t
        wall, _, out = timed(run, a.repeats)
        its = np.asarray(out[5]["iterations"])
        sweeps = int(its.sum() + np.asarray(out[5]["refine_iterations"])) if a.whole else int(its[0])
        src = hlo_sources(_solve.lower(g, opts, **static).compile().as_text())
        ns, calls, total = traced_kernel_times(run)
        top = [dict(op=op, ms=t / 1e6, launches=calls[op], per_sweep_ms=t / 1e6 / max(sweeps, 1),
                    source=src.get(op, "?")) for op, t in ns.most_common(a.top)]
        rows.append(dict(graph=cls, n=n, entries=e, sweeps=sweeps, wall_s=wall, compile_s=compile_s,
                         kernel_s=total / 1e9, teps=e * sweeps / wall, top=top))
        print(f"\n{cls}: n={n} entries={e} sweeps={sweeps} wall {wall * 1e3:.1f} ms "
              f"({e * sweeps / wall:.2e} TEPS), kernels {total / 1e6:.1f} ms "
              f"({total / 1e9 / wall:.0%} of wall), compile {compile_s:.1f} s", flush=True)
        for r in top:
            print(f"  {r['ms']:8.2f} ms {r['launches']:5d}x  {r['op'][:40]:40s} {r['source'][:90]}")
    out_dir = os.environ.get("OUT") or str(ROOT / "experiments" / "results")
    path = os.path.join(out_dir, f"profile_louvain_{time.strftime('%Y%m%d_%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump(dict(device=str(jax.devices()[0]), jax=jax.__version__, rows=rows), f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
