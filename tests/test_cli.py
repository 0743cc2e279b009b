"""`jaxmatch ...` subcommands on real files: each prints its answer and exits 0."""
import json

import numpy as np
import pytest

from jaxmatch.cli import main
from jaxmatch.datasets import path


@pytest.mark.parametrize("argv, expect", [
    (["info", str(path("dimacs_example"))], "flow network: 7 vertices, 9 arcs"),
    (["info", str(path("karate"))], "undirected graph: 34 vertices, 78 edges"),
    (["flow", str(path("genrmf_small"))], "flow value 228"),
    (["flow", str(path("dimacs_example")), "--layout", "rcsr"], "flow value 6"),
    (["match", str(path("unicodelang")), "--method", "flow"], "cardinality 188"),
    (["match", str(path("unicodelang")), "--method", "apsb", "--bfs", "gpubfs"],
     "cardinality 188"),
    (["match", str(path("unicodelang")), "--method", "graft", "--no-graft",
      "--top-down-only"], "cardinality 188"),
    (["match", str(path("unicodelang")), "--method", "auto"], "cardinality 188"),
    (["suitor", str(path("lesmis"))], "(converged)"),
    (["louvain", str(path("karate"))], "level 0: 34 vertices"),
    (["dm", str(path("unicodelang"))], "structural rank 188"),
])
def test_subcommands(argv, expect, capsys):
    assert main(argv) == 0
    assert expect in capsys.readouterr().out


def test_stable_and_outputs(tmp_path, capsys):
    men, women, out = tmp_path / "men.txt", tmp_path / "women.txt", tmp_path / "wife.txt"
    men.write_text("0 1\n1 0\n0\n")
    women.write_text("1 0 2\n0 1\n")
    assert main(["stable", str(men), str(women), "--out", str(out)]) == 0
    assert "2 couples of 3 men and 2 women (converged)" in capsys.readouterr().out
    wife = np.loadtxt(out, dtype=int)
    # men propose to their first choices: woman 0 keeps man 0 over man 2, woman 1 takes man 1
    np.testing.assert_array_equal(wife, [0, 1, -1])


def test_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.max"
    bad.write_text("p max 2 1\nn 1 s\nn 2 t\na 1 two 3\n")
    assert main(["flow", str(bad)]) == 2
    assert "bad.max:4" in capsys.readouterr().err
    edges = tmp_path / "g.txt"
    edges.write_text("0 1\n1 2\n")
    assert main(["flow", str(edges)]) == 2


def test_assign_equals_scipy_and_refuses_unweighted(tmp_path, capsys):
    """``jaxmatch assign`` on a Matrix Market file: scipy's minimum (and maximum) full matching weight,
    with the certificate's gap in the JSON; a pattern file (no weights) exits 2 naming the problem."""
    import scipy.io
    import scipy.sparse as sp
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    rng = np.random.default_rng(4)
    A = sp.random(9, 12, density=0.4, random_state=3, format="coo")
    A.data = rng.integers(1, 30, A.nnz).astype(float)
    path = tmp_path / "w.mtx"
    scipy.io.mmwrite(path, A)
    for maximize in (False, True):
        i, j = min_weight_full_bipartite_matching(A.tocsr(), maximize=maximize)
        assert main(["assign", str(path), "--json"] + (["--maximize"] if maximize else [])) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["weight"] == A.tocsr()[i, j].sum() and got["pairs"] == 9 and got["certified_gap"] < 1
    scipy.io.mmwrite(tmp_path / "p.mtx", sp.coo_array(A.toarray() > 0), field="pattern")
    assert main(["assign", str(tmp_path / "p.mtx")]) == 2
    assert "weights" in capsys.readouterr().err
