"""`jaxmatch demo`, `--json` and dataset names on the command line, the XLA flags that
`import jaxmatch` sets, and the persistent compilation cache."""
import json
import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmatch import _config, cli, datasets, demo
from jaxmatch.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_cache(monkeypatch):
    """In-process CLI runs leave the user's cache directory alone."""
    monkeypatch.setenv("JAXMATCH_NO_CACHE", "1")


def run_json(argv, capsys):
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def test_demo_json(no_cache, capsys):
    data = run_json(["demo"], capsys)
    rows = data["rows"]
    assert data["ok"] is True
    assert {r["problem"] for r in rows} == {"maximum matching", "max flow + min cut", "weighted matching (suitor)",
                                            "stable marriage", "louvain"}
    for r in rows:
        assert r["certificate"] == "ok", r
        assert r["agrees"] is not False, r
        assert r["solve_s"] > 0 and r["compile_s"] >= 0
    for r in rows:
        if r["problem"] in ("maximum matching", "max flow + min cut"):
            assert r["value"] == r["peer_value"] == datasets.load(r["graph"]).answer[
                "cardinality" if r["problem"] == "maximum matching" else "flow_value"]
        if r["problem"] == "stable marriage":
            assert r["agrees"] is True and r["value"] == r["peer_value"] == demo.DEMO_STABLE_N
        if r["problem"] == "louvain" and r["peer_value"] is not None:
            assert r["value"] >= r["peer_value"] - demo.DEMO_MODULARITY_TOL
        if r["problem"].startswith("weighted") and r["peer_value"] is not None:
            assert r["peer_value"] / 2 <= r["value"] <= r["peer_value"] + 1e-6


def test_demo_fails_on_a_bad_certificate(no_cache, capsys):
    bad = demo._row("maximum matching", "x", answer="1", value=1, peer="scipy", peer_answer="1", peer_value=1,
                    agrees=True, certificate="FAIL: CertificateError: planted", compile_s=0.0, solve_s=0.1,
                    peer_s=0.1)
    def crash():
        raise RuntimeError("planted crash")

    problems = [("bad", lambda: bad), ("crash", crash)]
    assert cli._cmd_demo(cli.build_parser().parse_args(["demo"]), problems) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "certificate FAILED: maximum matching, x" in out
    assert "certificate FAILED: crash, -: FAIL: RuntimeError: planted crash" in out
    assert cli._cmd_demo(cli.build_parser().parse_args(["demo", "--json"]), problems) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and [r["certificate"] != "ok" for r in data["rows"]] == [True, True]


def test_gale_shapley_reference():
    men, women = demo.random_preferences(30, seed=3)
    wife = demo.gale_shapley(men, women)
    from jaxmatch import certify, stable_marriage
    certify.check_stable(men, women, wife)
    np.testing.assert_array_equal(wife, np.asarray(stable_marriage(men, women).wife))


def test_subcommands_take_dataset_names_and_json(no_cache, capsys, tmp_path):
    info = run_json(["info", "karate"], capsys)
    assert info == {"kind": "graph", "n": 34, "n_edges": 78, "self_loops": 0, "weighted": info["weighted"]}
    assert run_json(["info", "mesh10"], capsys)["n_arcs"] == 290
    assert run_json(["info", "unicodelang", "--kind", "graph"], capsys)["n"] == 254 + 614
    m = run_json(["match", "unicodelang"], capsys)
    assert m["cardinality"] == 188 and m["status"] == "converged" and len(m["row_mate"]) == 254
    assert sum(x >= 0 for x in m["row_mate"]) == 188
    out = tmp_path / "flow.txt"
    f = run_json(["flow", "dimacs_example", "--out", str(out)], capsys)
    assert f["flow_value"] == 6 and f["source"] == 0 and f["sink"] == 6 and len(f["flow"]) == 9
    assert np.loadtxt(out).sum() > 0
    s = run_json(["suitor", "lesmis"], capsys)
    assert s["status"] == "converged" and len(s["mate"]) == 77 and s["weight"] > 0
    lv = run_json(["louvain", "karate"], capsys)
    assert lv["levels"][0]["vertices"] == 34 and lv["modularity"] > 0.4 and len(lv["labels"]) == 34
    men, women = tmp_path / "men.txt", tmp_path / "women.txt"
    men.write_text("0 1\n1 0\n0\n")
    women.write_text("1 0 2\n0 1\n")
    st = run_json(["stable", str(men), str(women)], capsys)
    assert st["couples"] == 2 and st["wife"] == [0, 1, -1]


def test_text_output_with_a_dataset_name(no_cache, capsys):
    assert main(["flow", "dimacs_example"]) == 0
    assert "flow value 6 from 0 to 6" in capsys.readouterr().out


def test_unknown_file_or_dataset(no_cache, capsys):
    assert main(["info", "no_such_graph"]) == 2
    err = capsys.readouterr().err
    assert "no_such_graph: no such file, nor a bundled dataset" in err and "karate" in err


def test_progress_bar_off_with_json_or_without_a_terminal(capsys):
    assert cli._bar(Namespace(json=True), 2, "x").disable
    assert cli._bar(Namespace(json=False), 2, "x").disable  # pytest's stderr is not a terminal


def test_cli_cache_is_restored_for_in_process_callers(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("JAXMATCH_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    before = _config._cache_settings()
    assert not (tmp_path / "jaxmatch").exists()
    assert main(["info", "karate"]) == 0
    assert (tmp_path / "jaxmatch").is_dir()          # main turned the cache on in the user's cache dir
    assert _config._cache_settings() == before       # and gave the caller its settings back
    if before[0] is None:                            # and JAX stops writing there (reset_cache)
        written = sorted((tmp_path / "jaxmatch").iterdir())
        jax.block_until_ready(jax.jit(lambda x: x * 3 + 1)(jax.numpy.arange(7919.0)))
        assert sorted((tmp_path / "jaxmatch").iterdir()) == written


def test_no_cache_env(monkeypatch, capsys):
    monkeypatch.setenv("JAXMATCH_NO_CACHE", "1")
    before = _config._cache_settings()
    assert main(["info", "karate"]) == 0
    assert _config._cache_settings() == before


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _config.default_cache_dir() == tmp_path / "jaxmatch"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _config.default_cache_dir() == Path.home() / ".cache" / "jaxmatch"


# ---- in fresh processes: what `import jaxmatch` does before JAX starts its backend

PROBE = ("import os, jaxmatch, jax.numpy as jnp; assert int(jnp.arange(4).sum()) == 6; "
         "print(os.environ.get('XLA_FLAGS', ''))")


def fresh(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAXMATCH_XLA_FLAGS")}
    full.update(env, JAX_PLATFORMS="cpu")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, cwd=ROOT,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""


def test_import_sets_command_buffer_flags():
    flags = fresh(PROBE).split()
    assert flags == ["--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,WHILE,CONDITIONAL",
                     "--xla_gpu_graph_min_graph_size=1"]


def test_flags_opt_out_and_user_flags_kept():
    assert fresh(PROBE, JAXMATCH_XLA_FLAGS="0") == ""
    assert fresh(PROBE, XLA_FLAGS="--xla_gpu_graph_min_graph_size=5 --xla_cpu_enable_fast_math=false").split() == [
        "--xla_gpu_graph_min_graph_size=5", "--xla_cpu_enable_fast_math=false",
        "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,WHILE,CONDITIONAL"]
    user = "--xla_gpu_enable_command_buffer= --xla_gpu_graph_min_graph_size=3"
    assert fresh(PROBE, XLA_FLAGS=user) == user


def test_no_flags_once_the_backend_runs():
    code = "import os, jax.numpy as jnp; jnp.zeros(1); import jaxmatch; print(os.environ.get('XLA_FLAGS', ''))"
    assert fresh(code) == ""


def test_command_line_fills_the_cache(tmp_path):
    out = fresh("import sys; from jaxmatch.cli import main; sys.exit(main(['flow', 'dimacs_example', '--json']))",
                XDG_CACHE_HOME=str(tmp_path), XLA_FLAGS=os.environ.get("XLA_FLAGS", ""))  # conftest's fast compile
    assert out == "}"
    assert any((tmp_path / "jaxmatch").iterdir())
    code = ("import jax, jaxmatch; p = jaxmatch.enable_compilation_cache(%r, min_compile_time_secs=0); "
            "jax.jit(lambda x: x * 3)(1.0).block_until_ready(); print(len(list(p.iterdir())))")
    assert int(fresh(code % str(tmp_path / "lib"))) >= 1
