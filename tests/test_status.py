"""jaxmatch.Status, SolverError and ``throw=`` on every public solver (issue 19, item 1)."""
import jax
import numpy as np
import pytest

import jaxmatch
from jaxmatch import BipartiteGraph, FlowNetwork, GraphInputError, SolverError, Status, max_flow, maximum_matching, min_cut
from tests import test_options

SOLVERS = test_options.SOLVERS   # every public solver on tiny instances, shared with the option tests


def test_status_enum():
    assert [int(s) for s in Status] == [0, 1, 2, 3, 4, 5, 6]
    assert Status.CONVERGED.label == "converged" and Status.MAX_ITERS.label == "hit max_iters"
    for s in list(Status)[1:]:
        assert "throw=False" in s.message and s.label != s.message
    assert jaxmatch.Status is Status and issubclass(SolverError, RuntimeError)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_solver_takes_throw(solver):
    """Converged runs: the same answer with either throw; a bad throw is refused before tracing;
    every result has status, status_name and an iterations counter."""
    a, b = SOLVERS[solver](), SOLVERS[solver](throw=False)
    assert int(a.status) == int(b.status) == Status.CONVERGED and a.status_name == "converged"
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert "iterations" in a.stats   # a cut's counters are those of the max flow run it came from
    with pytest.raises(GraphInputError, match="throw must be True or False"):
        SOLVERS[solver](throw="yes")


def test_throw_raises_with_the_result_and_jit_returns_the_status():
    g = BipartiteGraph.from_edges(*np.divmod(np.arange(900), 30))   # K30,30 from empty: > 2 rounds
    with pytest.raises(SolverError, match="maximum_matching: stopped at max_iters") as err:
        maximum_matching(g, init=None, max_iters=2)
    assert err.value.status is Status.MAX_ITERS and err.value.result.status_name == "hit max_iters"
    # under jit the status is traced: throw cannot raise, the caller reads the status
    res = jax.jit(lambda g: maximum_matching(g, init=None, max_iters=2))(g)
    assert int(res.status) == Status.MAX_ITERS
    jaxmatch.certify.check_matching(g, res.row_mate[:30], res.col_mate[:30])


def test_excess_left_is_its_own_status_and_the_cut_is_still_minimum():
    """A network whose phase two (the return of excess) needs more steps than phase one: with
    max_iters between the two, the value and the cut are maximum, the status EXCESS_LEFT."""
    rng = np.random.default_rng(0)
    for _ in range(14):         # the 14th network of this stream returns excess in 6 steps, after 3
        n = int(rng.integers(5, 30))
        m = int(rng.integers(n, 4 * n))
        t, h, c = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 10, m)
    net = FlowNetwork.from_edges(t, h, c, n, vertex_capacity=32, arc_capacity=128)
    full = max_flow(net, 0, n - 1)
    assert int(full.stats["return_iterations"]) > 4 >= int(full.stats["iterations"])
    with pytest.raises(SolverError, match="excess") as err:
        max_flow(net, 0, n - 1, max_iters=4)
    part = err.value.result
    assert part.status_name == "excess not returned" and int(part.flow_value) == int(full.flow_value)
    cut = min_cut(net, 0, n - 1, max_iters=4)           # phase one finished: the cut is minimum
    assert int(cut.status) == Status.CONVERGED and int(cut.value) == int(full.flow_value)
    assert int(cut.stats["return_iterations"]) == 0          # phase two does not run for a cut
    assert np.array_equal(np.asarray(cut.source_side), np.asarray(full.source_side))
    jaxmatch.certify.check_min_cut(net, 0, n - 1, np.asarray(cut.source_side), cut.value)
