"""Figures from the stored benchmark JSON (issue 19, item 6).

Run from the repository root: ``python3 -m experiments.figures [--out DIR]``.
Reads only ``experiments/results/`` (nothing is measured here) and writes

* ``performance_profile_matching.png``: Dolan-More performance profile of
  maximum cardinality matching, jaxmatch (``pr``, the default) vs scipy and igraph;
* ``performance_profile_flow.png``: the same for max flow, jaxmatch (WBPR,
  the benchmark's best layout) vs OR-Tools and scipy;
* ``speedup_vs_size.png``: jaxmatch's time over the CPU peer's against the
  edge count, one marker per family.

Where several files measured the same (graph, solver), the file later in the
lists below (oldest first) wins, except that a stopped peer (no time) does not
replace a measured time. A peer stopped at its time limit (``None`` in the
JSON, "> 20 s" in RESULTS.md) counts as failed: never within any tau. For
each figure the script prints a caption: the files read, the graphs, and the
numbers that the figure shows. A missing input file is an error (exit 1).
"""
import argparse
import json
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

RES = Path("experiments/results")
OURS = "jaxmatch"
MATCHING = [RES / p for p in (  # oldest first (RESULTS.md's order of the runs)
    "bench_matching_h100_scale20.json", "bench_matching_h100_scale22_a.json",
    "bench_matching_h100_scale22_b.json", "bench_matching_h100_scale22_c.json",
    "bench_matching_h100_scale22_d.json", "bench_matching_h100_mesh22.json",
    "bench_matching_h100_rcp22_a.json", "bench_matching_h100_rcp22_b.json",
    "bench_matching_h100_scale24_power_law.json", "bench_matching_h100_scale24_road_rcp.json",
    "session13_h100/bench_matching20_run1.json", "session13_h100/bench_matching20_classes_run2.json",
    "session13_h100/bench_matching22_run3.json", "session13_h100/bench_matching20_auto_run4.json",
    "session20_h100/bench_matching_20.json")]
FLOW_PEERS = [RES / "flow_h100" / p for p in (
    "bench_flow.json", "bench_flow_session8.json", "bench_flow_genrmf21_session8.json")]
FLOW_OURS = [RES / p for p in ("session12_h100/bench_flow_run5.json", "session12_h100/bench_flow21_run4.json",
                                "session20_h100/bench_flow_18_20.json", "session20_h100/bench_flow_21.json")]
WEIGHTED = [RES / p for p in (
    "weighted_h100_rmat20.json", "weighted_h100_power_law1e7.json", "weighted_h100_rmat1e8.json")]
LOUVAIN = [RES / "louvain_h100" / p for p in (  # the newest run: the 10M tier, then the 50K tier
    "louvain_gpu_20261122_234444.json", "louvain_gpu_20261122_234751.json")]
DEFAULT_THRESHOLD_LARGE = 1e-2  # jaxmatch.louvain's default


def secs(x):
    """A time in seconds, or None (stopped / not timed)."""
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) and x > 0 else None


def peer_times(row, peers):
    """{peer: seconds or None} for the peers this row ran (a ``<peer>_s`` key, even null)."""
    return {p: secs(row[f"{p}_s"]) for p in peers if f"{p}_s" in row}


def pick_matching(row):
    pr = row.get("pr") or {}
    return row["graph"], row["edges"], {OURS: secs(pr.get("time_s")), **peer_times(row, ("scipy", "igraph"))}


def pick_flow_peers(row):
    out = peer_times(row, ("ortools", "scipy"))
    if row.get("ortools_timeout"):
        out["ortools"] = None
    return row["graph"], row.get("arcs"), {("OR-Tools" if k == "ortools" else k): v for k, v in out.items()}


def pick_flow_ours(row):
    best = row.get("best_variant")
    return row["graph"], row.get("arcs"), {OURS: secs(row[best]["time_s"])} if best else {}


def pick_weighted(row):
    name = f"{row['graph']} {row['edges'] / 1e6:.0f}M"
    peer = row["peers"]["networkit"]["suitor"]["median_s"]
    return name, row["edges"], {OURS: secs(row["algorithms"]["suitor"]["median_s"]), "NetworKit": secs(peer)}


def pick_louvain(row):
    ours = [v["jaxmatch_s"] for v in row["variants"] if v["threshold_large"] == DEFAULT_THRESHOLD_LARGE]
    return f"{row['graph']} {row['tier']:.0e}", row["edges"], {OURS: secs(ours[0] if ours else None),
                                                               "igraph": secs(row.get("igraph_s"))}


def load_json(path):
    if not path.is_file():
        sys.exit(f"figures: missing input file {path}")
    return json.loads(path.read_text())


def load_table(sources):
    """(paths, pick) sources, oldest first -> (graph -> solver -> seconds or None, graph -> edges, docs)."""
    table, edges, docs = {}, {}, {}
    for paths, pick in sources:
        for path in paths:
            doc = docs[path] = load_json(path)
            for row in doc.get("results") or doc.get("graphs") or doc.get("rows") or []:
                graph, n_edges, times = pick(row)
                cell = table.setdefault(graph, {})
                for solver, t in times.items():
                    if t is not None or solver not in cell:   # a stopped run does not replace a time
                        cell[solver] = t
                edges[graph] = n_edges or edges.get(graph)
    return table, edges, docs


def provenance(docs):
    """'device, JAX x, dates' from the JSON headers (a bare cuda:N named by its results directory)."""
    devices, jaxes, dates = set(), set(), set()
    for path, doc in docs.items():
        dev = str(doc.get("device", "?"))
        if re.fullmatch(r"(cuda|gpu):\d+", dev) and "h100" in str(path).lower():
            dev = f"H100 ({dev})"
        devices.add(dev)
        jaxes.add(str(doc.get("jax") or doc.get("jax_version")))
        m = re.match(r"(\d{4})-?(\d{2})-?(\d{2})", str(doc.get("date", "")))
        dates.update(["-".join(m.groups())] if m else [])
    span = min(dates) if len(dates) == 1 else f"{min(dates)} to {max(dates)}"
    return f"{' / '.join(sorted(devices))}, JAX {', '.join(sorted(jaxes))}, runs of {span}"


def caption(name, docs, lines):
    print(f"\n== {name}\nfiles read ({len(docs)}):")
    print("\n".join(f"  {p}" for p in docs))
    print("each (graph, solver): the last file above that timed it; a peer stopped at its limit has no time")
    print("\n".join(lines))


def draw_profile(table, solvers, title, out):
    """Dolan-More profile over the graphs where every solver ran; returns the caption's lines."""
    graphs = sorted(g for g, c in table.items() if all(s in c for s in solvers) and c[OURS] is not None)
    dropped = sorted(set(table) - set(graphs))
    t = np.array([[table[g][s] or np.inf for s in solvers] for g in graphs])
    ratio = t / t.min(axis=1, keepdims=True)
    top = 2 * ratio[np.isfinite(ratio)].max()
    tau = np.logspace(0, np.log10(top), 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    lines = [f"graphs: {len(graphs)} ({', '.join(graphs)})",
             f"left out (a solver not run on them): {', '.join(dropped) or 'none'}"]
    for j, s in enumerate(solvers):
        rho = (ratio[:, j][None, :] <= tau[:, None]).mean(axis=1)
        best, fails = int((ratio[:, j] == 1).sum()), int(np.isinf(ratio[:, j]).sum())
        worst = ratio[:, j][np.isfinite(ratio[:, j])].max()
        label = f"{s}: fastest on {best}" + (f", stopped on {fails}" if fails else "")
        ax.step(tau, rho, where="post", lw=2.4 if s == OURS else 1.6, label=label)
        lines.append(f"{s}: fastest on {best} of {len(graphs)}, stopped on {fails}, "
                     f"worst finished ratio {worst:.1f}x")
    ax.set(xscale="log", xlim=(1, top), ylim=(0, 1.06), title=title.format(n=len(graphs)),
           xlabel="tau (time / fastest solver's time on that graph)",
           ylabel="fraction of graphs within tau")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize=9)
    save(fig, out)
    return lines


def speedup_points(table, edges, peer):
    """(edges, speed-up, graph) where both times exist, and the graphs where the peer was stopped."""
    pts = [(edges[g], c[peer] / c[OURS], g) for g, c in table.items()
           if c.get(OURS) and c.get(peer) and edges.get(g)]
    stopped = sorted(g for g, c in table.items() if c.get(OURS) and peer in c and c[peer] is None)
    return sorted(pts), stopped


def trend(x, y):
    """Geometric means of x and y over each half decade of x (a line through a family's points)."""
    bins = np.round(2 * np.log10(x)) / 2
    logs = np.log10(np.array([x, y]))
    return 10 ** np.array([logs[:, bins == k].mean(axis=1) for k in np.unique(bins)]).T


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("experiments/figures"))
    out = ap.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"font.size": 11, "axes.titlesize": 11})
    families = {  # family -> sources, the profile's solvers, the CPU peer of the speed-up figure
        "matching": ([(MATCHING, pick_matching)], [OURS, "igraph", "scipy"], "igraph"),
        "max flow": ([(FLOW_PEERS, pick_flow_peers), (FLOW_OURS, pick_flow_ours)],
                     [OURS, "OR-Tools", "scipy"], "OR-Tools"),
        "weighted matching (Suitor)": ([(WEIGHTED, pick_weighted)], None, "NetworKit"),
        "Louvain": ([(LOUVAIN, pick_louvain)], None, "igraph")}
    loaded = {f: load_table(src) for f, (src, _, _) in families.items()}
    for fam, (file, what) in {"matching": ("performance_profile_matching.png",
                                           "maximum cardinality matching; jaxmatch: G-PR, the default"),
                              "max flow": ("performance_profile_flow.png", "maximum flow; jaxmatch: WBPR")}.items():
        table, _, docs = loaded[fam]
        if fam == "max flow":   # the graph set is that of the latest jaxmatch runs
            table = {g: c for g, c in table.items() if OURS in c}
        title = f"Performance profile, {what} ({{n}} graphs)\n{provenance(docs)}"
        lines = draw_profile(table, families[fam][1], title, out / file)
        caption(file, docs, lines)

    fig, ax = plt.subplots(figsize=(8, 5.2))
    lines, all_docs = [], {}
    for (fam, (_, _, peer)), marker in zip(families.items(), "osD^"):
        table, edges, docs = loaded[fam]
        pts, stopped = speedup_points(table, edges, peer)
        if not pts:
            lines.append(f"{fam}: skipped, no {peer} times in its JSON")
            continue
        all_docs.update(docs)
        x, y, names = zip(*pts)
        dots = ax.scatter(x, y, marker=marker, s=42, alpha=0.8, label=f"{fam} vs {peer} ({len(pts)} graphs)")
        ax.plot(*trend(x, y), color=dots.get_facecolor()[0], lw=1.4, alpha=0.9)
        gm = math.exp(np.mean(np.log(y)))
        lines.append(f"{fam} vs {peer}: {len(pts)} graphs, speed-up {min(y):.2f}x ({names[y.index(min(y))]}) "
                     f"to {max(y):.0f}x ({names[y.index(max(y))]}), geometric mean {gm:.1f}x"
                     + (f"; {peer} stopped, not plotted: {', '.join(stopped)}" if stopped else ""))
    ax.axhline(1, color="k", lw=1, ls="--", label="equal time")
    ax.set(xscale="log", yscale="log", xlabel="edges (bipartite: nonzeros; flow: arcs; undirected: edges)",
           ylabel="speed-up (CPU peer's time / jaxmatch's time)",
           title=f"jaxmatch's speed-up over the CPU peer by size\n{provenance(all_docs)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=9, title_fontsize=9,
              title="markers: graphs; lines: geometric mean over each half decade of size")
    save(fig, out / "speedup_vs_size.png")
    caption("speedup_vs_size.png", all_docs, lines)


if __name__ == "__main__":
    main()
