"""solve_many: many graphs of mixed sizes, one jitted vmap per capacity bucket, answers in order."""
import numpy as np
import pytest
from scipy.sparse.csgraph import maximum_bipartite_matching

import jaxmatch
from jaxmatch import BipartiteGraph, Graph, GraphInputError, solve_many
from jaxmatch.io import to_scipy


def test_solve_many_equals_solo_answers_in_order():
    """Bipartite graphs of mixed sizes in three capacity buckets, interleaved: each answer has scipy's
    cardinality and passes the matching certificate, in the caller's order; per-vertex arrays come
    back padded to the bucket's capacity (-1 past the true vertices); weighted and unweighted Graphs
    (one bucket) with Suitor equal their eager answers."""
    rng = np.random.default_rng(7)
    gs = []
    for i in range(14):
        cap = (8, 16, 32)[i % 3]
        nr, nc = (int(x) for x in rng.integers(1, cap + 1, 2))
        m = int(rng.integers(0, 2 * max(nr, nc)))
        gs.append(BipartiteGraph.from_edges(rng.integers(0, nr, m), rng.integers(0, nc, m), nr, nc,
                                            row_capacity=cap, col_capacity=cap, edge_capacity=4 * cap))
    assert len({(g.row_cap, g.col_cap, g.edge_cap) for g in gs}) == 3
    got = solve_many(lambda g: jaxmatch.maximum_matching(g), gs)
    for g, r in zip(gs, got):
        nr, nc = int(g.n_rows), int(g.n_cols)
        want = maximum_bipartite_matching(to_scipy(g), perm_type="column")
        assert int(r.cardinality) == int(np.sum(want >= 0))
        assert r.row_mate.shape == (g.row_cap,) and np.all(r.row_mate[nr:] == -1)
        jaxmatch.certify.check_maximum_matching(g, r.row_mate[:nr], r.col_mate[:nc])
    ws = [Graph.from_edges([0, 1, 2], [1, 2, 3], [3.0, 1.0, 3.0]), Graph.from_edges([0, 1], [1, 2], None, 4)]
    weights = [float(r) for r in solve_many(lambda g: jaxmatch.suitor(g).weight, ws)]
    assert weights == [float(jaxmatch.suitor(g).weight) for g in ws] == [6.0, 1.0]
    assert solve_many(lambda g: g.n_rows, []) == []
    with pytest.raises(GraphInputError, match="jaxmatch graphs"):
        solve_many(lambda g: g, [gs[0], np.zeros(3)])
