"""solve_many: many graphs of mixed sizes, one jitted vmap per capacity bucket, answers in order."""
import numpy as np
import pytest

import jaxmatch
from jaxmatch import BipartiteGraph, Graph, GraphInputError, solve_many


def test_solve_many_equals_solo_answers_in_order():
    """Bipartite graphs of mixed sizes (several buckets, interleaved): each answer equals the graph's
    own eager answer, in the caller's order; per-vertex arrays come back padded to the bucket's
    capacity and agree with the eager ones on the true vertices; weighted and unweighted Graphs
    (one bucket) with Suitor too."""
    rng = np.random.default_rng(7)
    gs = []
    for _ in range(14):
        nr, nc = (int(x) for x in rng.integers(1, 40, 2))
        m = int(rng.integers(0, 3 * max(nr, nc)))
        gs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc))
    assert len({(g.row_cap, g.col_cap, g.edge_cap) for g in gs}) > 2
    got = solve_many(lambda g: jaxmatch.maximum_matching(g), gs)
    for g, r in zip(gs, got):
        want = jaxmatch.maximum_matching(g)
        assert int(r.cardinality) == int(want.cardinality)
        assert r.row_mate.shape == (g.row_cap,) and np.all(r.row_mate[int(g.n_rows):] == -1)
        jaxmatch.certify.check_maximum_matching(g, r.row_mate[:int(g.n_rows)], r.col_mate[:int(g.n_cols)])
    ws = [Graph.from_edges([0, 1, 2], [1, 2, 3], [3.0, 1.0, 3.0]), Graph.from_edges([0, 1], [1, 2], None, 4)]
    weights = [float(r) for r in solve_many(lambda g: jaxmatch.suitor(g).weight, ws)]
    assert weights == [float(jaxmatch.suitor(g).weight) for g in ws] == [6.0, 1.0]
    assert solve_many(lambda g: g.n_rows, []) == []
    with pytest.raises(GraphInputError, match="jaxmatch graphs"):
        solve_many(lambda g: g, [gs[0], np.zeros(3)])
