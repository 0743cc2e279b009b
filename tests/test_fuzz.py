"""Bad input never crashes or hangs (issue 18, item 7).

Hundreds of malformed inputs go through every container constructor
(``BipartiteGraph`` / ``Graph`` / ``FlowNetwork.from_edges``, ``from_scipy``,
``from_networkx``, ``Preferences``, ``read``) and every solver
(``maximum_matching``, ``initial_matching``, ``max_flow``, ``min_cut``,
``suitor``, ``locally_dominant``, ``b_suitor``, ``stable_marriage``,
``louvain``, ``leiden``, ``modularity``): a hand-written table of a few hundred
cases, plus hypothesis strategies that draw more (bad ids, weights,
capacities, terminals, preference lists, option values and container
types). Each must raise :class:`jaxmatch.GraphInputError` (or, for a
Python-level misuse such as an unknown keyword, ``TypeError``) whose message
names the problem (``match=``), never a JAX tracing or runtime error, and
never a raw numpy or Python message. Each case is run twice; the second run
must trace no jaxpr (``jax.monitoring``), so the error comes from the
host-side checks before any solver is traced (a failed trace is not cached
and would trace again).

Empty graphs are not errors: the last tests run every solver on them, at
one tiny capacity per container, so they compile a handful of shapes only.
"""
from functools import partial

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax import monitoring

import jaxmatch
from jaxmatch import (BipartiteGraph, FlowNetwork, Graph, GraphInputError, Preferences, b_suitor, certify,
                      initial_matching, locally_dominant, louvain, max_flow, maximum_matching, min_cut, modularity,
                      stable_marriage, suitor)

# --------------------------------------------------------------------------
# the check: the right exception, named problem, raised before tracing

JAX_ERRORS = (jax.errors.JAXTypeError, jax.errors.ConcretizationTypeError, jax.errors.JaxRuntimeError,
              jax.errors.TracerArrayConversionError, jax.errors.TracerBoolConversionError,
              jax.errors.TracerIntegerConversionError, jax.errors.UnexpectedTracerError, OverflowError)
# raw messages of numpy, Python and JAX internals: a problem the checks did not name
INTERNALS = ("float() argument", "int() argument", "invalid literal", "setting an array element",
             "inhomogeneous", "is not iterable", "has no len()", "has no attribute", "carry", "broadcasting",
             "Abstract tracer", "out of bounds for int", "overflow was encountered")

_TRACES = []
_WATCH = [False]


def _on_event(name, secs, **kw):
    if _WATCH[0] and name == "/jax/core/compile/jaxpr_trace_duration":
        _TRACES.append(name)


monitoring.register_event_duration_secs_listener(_on_event)


def rejects(thunk, match, exc=GraphInputError, traced_ok=False):
    """``thunk()`` raises ``exc`` matching ``match``, cleanly, twice; the second time traces nothing."""
    for attempt in range(2):
        _TRACES.clear()
        _WATCH[0] = attempt == 1
        try:
            with pytest.raises(exc, match=match) as info:
                thunk()
        finally:
            _WATCH[0] = False
        err = info.value
        assert not isinstance(err, JAX_ERRORS), repr(err)
        msg = str(err)
        assert not any(s in msg for s in INTERNALS), msg
    if not traced_ok:
        assert not _TRACES, f"a jaxpr was traced before the error: {msg}"
    return err


# --------------------------------------------------------------------------
# valid containers the bad options are tried on

BG = BipartiteGraph.from_edges([0, 1, 1], [0, 0, 1])
G = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0])
NET = FlowNetwork.from_edges([0, 0, 1], [1, 2, 2], [3, 2, 1])
MEN = Preferences.from_lists([[0, 1], [1, 0]])
WOMEN = Preferences.from_lists([[1, 0], [0, 1]])
H = 2 ** 40          # past int32 (and past int32 after any small offset)
BIG = 2 ** 31        # one past the int32 maximum

B_edges = BipartiteGraph.from_edges
G_edges = Graph.from_edges
F_edges = FlowNetwork.from_edges


def case(id_, match, fn, *args, exc=GraphInputError, traced_ok=False, **kw):
    return pytest.param(partial(fn, *args, **kw), match, exc, traced_ok, id=id_)


class Unknown:
    """An object no jaxmatch function knows."""


WRONG_OBJECTS = {"None": None, "int": 3, "str": "graph", "list": [[0, 1]], "ndarray": np.eye(2),
                 "scipy": sp.eye(2, format="csr"), "networkx": nx.path_graph(3), "object": Unknown(),
                 "dict": {"rows": [0]}}
SOLVERS = {  # solver -> (a call with the container as its only input, the container type it needs)
    "maximum_matching": (lambda x: maximum_matching(x), "BipartiteGraph"),
    "initial_matching": (lambda x: initial_matching(x), "BipartiteGraph"),
    "max_flow": (lambda x: max_flow(x, 0, 1), "FlowNetwork"),
    "min_cut": (lambda x: min_cut(x, 0, 1), "FlowNetwork"),
    "suitor": (lambda x: suitor(x), "Graph"),
    "locally_dominant": (lambda x: locally_dominant(x), "Graph"),
    "b_suitor": (lambda x: b_suitor(x, 1), "Graph"),
    "louvain": (lambda x: louvain(x), "Graph"),
    "leiden": (lambda x: jaxmatch.leiden(x), "Graph"),
    "modularity": (lambda x: modularity(x, [0, 0, 1]), "Graph"),
    "min_weight_matching": (lambda x: jaxmatch.min_weight_matching(x), "BipartiteGraph"),
    "dulmage_mendelsohn": (lambda x: jaxmatch.dulmage_mendelsohn(x), "BipartiteGraph"),
}
CONTAINERS = {"BipartiteGraph": BG, "Graph": G, "FlowNetwork": NET, "Preferences": MEN}


def _wrong_container_cases():
    out = []
    for sname, (call, need) in SOLVERS.items():
        for cname, obj in CONTAINERS.items():
            if cname != need:
                out.append(case(f"{sname}-gets-{cname}", f"expected a jaxmatch.{need}, got {cname}", call, obj))
        for oname, obj in WRONG_OBJECTS.items():
            out.append(case(f"{sname}-gets-{oname}", f"expected a jaxmatch.{need}", call, obj))
        batch = jaxmatch.stack([CONTAINERS[need]] * 2)
        if sname in ("max_flow", "min_cut"):   # these take a batch eagerly (tests/test_batch.py), not a bad one
            out.append(case(f"{sname}-gets-batch-with-3-sources", "one source id per network",
                            lambda x, f=globals()[sname]: f(x, [0, 1, 0], 1), batch))
        elif sname in ("maximum_matching", "louvain", "leiden"):   # eagerly too; under jit it asks for vmap
            out.append(case(f"{sname}-gets-batch-under-jit", "vmap",
                            jax.jit(lambda x, f=call: f(x).status), batch, traced_ok=True))
        else:
            out.append(case(f"{sname}-gets-batch", "batch|one network", call, batch))
    return out


# --------------------------------------------------------------------------
# the table

CONSTRUCTOR_CASES = [
    # BipartiteGraph.from_edges: ids
    case("B-float-ids", "rows must be an integer array", B_edges, [0.0, 1.0], [0, 1]),
    case("B-float-cols", "cols must be an integer array", B_edges, [0, 1], [0.5, 1.0]),
    case("B-nan-ids", "integer array", B_edges, [np.nan], [0]),
    case("B-bool-ids", "integer array", B_edges, [True, False], [0, 1]),
    case("B-complex-ids", "integer array", B_edges, [1j], [0]),
    case("B-str-ids", "integer array", B_edges, ["0"], [0]),
    case("B-object-ids", "integer array", B_edges, np.array([0, None], dtype=object), [0, 1]),
    case("B-jax-float-ids", "integer array", B_edges, jnp.array([0.0]), jnp.array([0])),
    case("B-negative-row", r"rows\[1\] = -1 is out of range", B_edges, [0, -1], [0, 1]),
    case("B-negative-col", r"cols\[0\] = -5 is out of range", B_edges, [0], [-5]),
    case("B-row-out-of-range", r"rows\[0\] = 3 is out of range \[0, 2\)", B_edges, [3], [0], n_rows=2),
    case("B-col-out-of-range", r"cols\[1\] = 9 is out of range", B_edges, [0, 0], [0, 9], n_cols=4),
    case("B-2d-ids", "1-D", B_edges, [[0, 1]], [[0, 1]]),
    case("B-3d-ids", "1-D", B_edges, np.zeros((1, 1, 1), int), np.zeros((1, 1, 1), int)),
    case("B-scalar-ids", "1-D", B_edges, 0, 0),
    case("B-None-ids", "1-D", B_edges, None, None),
    case("B-ragged-ids", "ragged", B_edges, [0, [1]], [0, 1]),
    case("B-mismatched", "same length", B_edges, [0, 1], [0]),
    case("B-mismatched-empty", "same length", B_edges, [], [0]),
    case("B-uint64-huge", "does not fit int32", B_edges, np.array([2 ** 63], np.uint64), [0]),
    case("B-id-past-int32", "does not fit int32", B_edges, [H], [0]),
    case("B-col-past-int32", "does not fit int32", B_edges, [0], [BIG]),
    # sizes and capacities
    case("B-n_rows-float", "n_rows must be an integer", B_edges, [0], [0], n_rows=2.0),
    case("B-n_rows-bool", "n_rows must be an integer", B_edges, [0], [0], n_rows=True),
    case("B-n_rows-str", "n_rows must be an integer", B_edges, [0], [0], n_rows="3"),
    case("B-n_rows-negative", "n_rows must be >= 0", B_edges, [], [], n_rows=-1),
    case("B-n_cols-negative", "n_cols must be >= 0", B_edges, [0], [0], n_cols=-2),
    case("B-n_rows-past-int32", "n_rows = 2147483648 does not fit int32", B_edges, [], [], n_rows=BIG),
    case("B-n_cols-past-int32", "does not fit int32", B_edges, [], [], n_cols=H),
    case("B-row_capacity-small", "row_capacity = 1 is smaller", B_edges, [0, 1], [0, 0], row_capacity=1),
    case("B-row_capacity-zero", "smaller than the size", B_edges, [], [], row_capacity=0),
    case("B-col_capacity-float", "col_capacity must be an integer", B_edges, [0], [0], col_capacity=2.5),
    case("B-edge_capacity-small", "edge_capacity = 1 is smaller", B_edges, [0, 1], [0, 1], edge_capacity=1),
    case("B-row_capacity-past-int32", "does not fit int32", B_edges, [0], [0], row_capacity=BIG),
    case("B-duplicates-rule", "duplicates must be one of", B_edges, [0], [0], duplicates="sum"),
    case("B-duplicates-error", "duplicate edge", B_edges, [0, 1, 0], [0, 0, 0], duplicates="error"),
    case("B-with_capacity-small", "smaller than the size", BG.with_capacity, row_capacity=1),
    # Graph.from_edges
    case("G-weight-nan", r"weights\[0\] = nan is not finite", G_edges, [0], [1], [np.nan]),
    case("G-weight-inf", "not finite", G_edges, [0, 1], [1, 2], [1.0, np.inf]),
    case("G-weight-minus-inf", "not finite", G_edges, [0], [1], [-np.inf]),
    case("G-weight-negative", r"weights\[0\] = -1.0 is negative", G_edges, [0], [1], [-1.0]),
    case("G-weight-negative-int", "negative", G_edges, [0], [1], [-3]),
    case("G-weight-huge", "does not fit float32", G_edges, [0], [1], [1e300]),
    case("G-weight-sum-overflows", "does not fit float32", G_edges, [0, 1], [1, 0], [3e38, 3e38]),
    case("G-weight-str", "real numeric array", G_edges, [0], [1], ["a"]),
    case("G-weight-bool", "real numeric array", G_edges, [0], [1], [True]),
    case("G-weight-complex", "real numeric array", G_edges, [0], [1], [1 + 1j]),
    case("G-weight-None-entry", "real numeric array", G_edges, [0], [1], [None]),
    case("G-weight-length", r"weights must have shape \(1,\)", G_edges, [0], [1], [1.0, 2.0]),
    case("G-weight-2d", "weights must have shape", G_edges, [0], [1], [[1.0]]),
    case("G-weight-scalar", "weights must have shape", G_edges, [0], [1], 1.0),
    case("G-weight-ragged", "ragged", G_edges, [0, 1], [1, 2], [1.0, [2.0]]),
    case("G-weights-for-no-edges", "weights must have shape", G_edges, [], [], [1.0]),
    case("G-float-ids", "u must be an integer array", G_edges, [0.5], [1]),
    case("G-bool-ids", "v must be an integer array", G_edges, [0], [True]),
    case("G-negative-id", r"u\[0\] = -1 is out of range", G_edges, [-1], [1]),
    case("G-id-out-of-range", r"v\[0\] = 3 is out of range", G_edges, [0], [3], n=3),
    case("G-mismatched", "same length", G_edges, [0, 1], [1]),
    case("G-2d", "1-D", G_edges, [[0]], [[1]]),
    case("G-ragged-ids", "ragged", G_edges, [0, [1]], [1, 2]),
    case("G-id-past-int32", "does not fit int32", G_edges, [H], [0]),
    case("G-n-float", "n must be an integer", G_edges, [0], [1], n=2.0),
    case("G-n-negative", "n must be >= 0", G_edges, [], [], n=-3),
    case("G-n-past-int32", "does not fit int32", G_edges, [], [], n=BIG),
    case("G-vertex_capacity-small", "vertex_capacity = 2 is smaller", G_edges, [0], [5], vertex_capacity=2),
    case("G-entry_capacity-small", "entry_capacity = 2 is smaller", G_edges, [0, 1], [1, 2], entry_capacity=2),
    case("G-duplicates-rule", "duplicates must be one of", G_edges, [0], [1], duplicates="merge"),
    case("G-duplicates-error", "duplicate edge", G_edges, [0, 1], [1, 0], duplicates="error"),
    # FlowNetwork.from_edges
    case("F-cap-float", "cap must be an integer array", F_edges, [0], [1], [1.5]),
    case("F-cap-float-whole", "integer", F_edges, [0], [1], [1.0]),
    case("F-cap-nan", "integer", F_edges, [0], [1], [np.nan]),
    case("F-cap-inf", "integer", F_edges, [0], [1], [np.inf]),
    case("F-cap-negative", r"cap\[1\] = -1 is negative", F_edges, [0, 1], [1, 2], [2, -1]),
    case("F-cap-bool", "real numeric array", F_edges, [0], [1], [True]),
    case("F-cap-str", "real numeric array", F_edges, [0], [1], ["1"]),
    case("F-cap-None", "cap must have shape", F_edges, [0], [1], None),
    case("F-cap-scalar", "cap must have shape", F_edges, [0], [1], 5),
    case("F-cap-length", "cap must have shape", F_edges, [0], [1], [1, 2]),
    case("F-cap-ragged", "ragged", F_edges, [0, 1], [1, 2], [1, [2]]),
    case("F-cap-past-int32", "cap = 1099511627776 does not fit int32", F_edges, [0], [1], [H]),
    case("F-cap-uint64-max", "does not fit", F_edges, [0], [1], np.array([2 ** 64 - 1], np.uint64)),
    case("F-float-tail", "tail must be an integer array", F_edges, [0.0], [1], [1]),
    case("F-negative-head", r"head\[0\] = -2 is out of range", F_edges, [0], [-2], [1]),
    case("F-head-out-of-range", r"head\[0\] = 3 is out of range", F_edges, [0], [3], [1], n=2),
    case("F-mismatched", "same length", F_edges, [0, 1], [1], [1, 1]),
    case("F-2d", "1-D", F_edges, [[0]], [[1]], [[1]]),
    case("F-layout", "layout must be one of", F_edges, [0], [1], [1], layout="csr"),
    case("F-n-bool", "n must be an integer", F_edges, [0], [1], [1], n=False),
    case("F-arc_capacity-small", "arc_capacity = 1 is smaller", F_edges, [0, 1], [1, 0], [1, 1], arc_capacity=1),
    case("F-arc_capacity-residual-past-int32", "residual arcs", F_edges, [0], [1], [1], arc_capacity=2 ** 30 + 1),
    case("F-vertex_capacity-past-int32", "does not fit int32", F_edges, [0], [1], [1], vertex_capacity=BIG),
    # from_scipy and the other adapters
    case("scipy-dense", "scipy sparse array", jaxmatch.from_scipy, np.eye(2)),
    case("scipy-list", "scipy sparse array", jaxmatch.from_scipy, [[1, 0]]),
    case("scipy-None", "scipy sparse array", jaxmatch.from_scipy, None),
    case("scipy-kind", "kind must be one of", jaxmatch.from_scipy, sp.eye(2, format="csr"), kind="matching"),
    case("scipy-graph-not-square", "square", jaxmatch.from_scipy, sp.csr_array(np.ones((2, 3))), kind="graph"),
    case("scipy-flow-not-square", "square", jaxmatch.from_scipy, sp.csr_array(np.ones((2, 3), int)), kind="flow"),
    case("scipy-graph-asymmetric", "symmetric", jaxmatch.from_scipy, sp.csr_array([[0, 1.0], [0, 0]]), kind="graph"),
    case("scipy-graph-negative", "negative", jaxmatch.from_scipy, sp.csr_array([[0, -1.0], [-1.0, 0]]), kind="graph"),
    case("scipy-graph-inf", "not finite", jaxmatch.from_scipy, sp.csr_array([[0, np.inf], [np.inf, 0]]), kind="graph"),
    case("scipy-graph-nan", "symmetric|not finite", jaxmatch.from_scipy, sp.csr_array([[0, np.nan], [np.nan, 0]]),
         kind="graph"),
    case("scipy-graph-sym-nan", "not finite", jaxmatch.from_scipy, sp.csr_array([[0, np.nan], [0, 0]]), kind="graph",
         symmetrize=True),
    case("scipy-graph-complex", "real numeric", jaxmatch.from_scipy, sp.csr_array([[0, 1j], [1j, 0]]), kind="graph"),
    case("scipy-graph-huge", "does not fit float32", jaxmatch.from_scipy, sp.csr_array([[0, 1e300], [1e300, 0]]),
         kind="graph"),
    case("scipy-flow-float", "integer capacities", jaxmatch.from_scipy, sp.csr_array([[0, 1.0], [0, 0]]), kind="flow"),
    case("scipy-flow-bool", "integer capacities", jaxmatch.from_scipy, sp.csr_array(np.array([[0, 1], [0, 0]], bool)),
         kind="flow"),
    case("scipy-flow-negative", "negative", jaxmatch.from_scipy, sp.csr_array([[0, -1], [0, 0]]), kind="flow"),
    case("scipy-flow-huge", "does not fit", jaxmatch.from_scipy, sp.csr_array(np.array([[0, H], [0, 0]])), kind="flow"),
    case("scipy-symmetrize-on-bipartite", "apply to kind='graph' only", jaxmatch.from_scipy, sp.eye(2, format="csr"),
         symmetrize=True),
    case("scipy-duplicates-rule", "duplicates must be one of", jaxmatch.from_scipy, sp.eye(2, format="csr"),
         duplicates="x"),
    case("scipy-unknown-keyword", "unexpected keyword argument 'foo'", jaxmatch.from_scipy, sp.eye(2, format="csr"),
         foo=1, exc=TypeError),
    case("Graph.from_scipy-asymmetric", "symmetric", Graph.from_scipy, sp.csr_array([[0, 2.0], [1.0, 0]])),
    case("FlowNetwork.from_scipy-float", "integer capacities", FlowNetwork.from_scipy, sp.eye(2, format="csr")),
    case("nx-None", "needs a networkx graph", jaxmatch.from_networkx, None),
    case("nx-list", "needs a networkx graph", jaxmatch.from_networkx, [[0, 1]]),
    case("nx-kind", "kind must be one of", jaxmatch.from_networkx, nx.path_graph(3), kind="x"),
    case("nx-flow-undirected", "directed graph", jaxmatch.from_networkx, nx.path_graph(3), kind="flow"),
    case("nx-flow-no-capacity", "no 'capacity' attribute", jaxmatch.from_networkx, nx.DiGraph([(0, 1)]), kind="flow"),
    case("nx-flow-float-capacity", "integer", jaxmatch.from_networkx, nx.DiGraph([(0, 1, {"capacity": 1.5})]),
         kind="flow"),
    case("nx-flow-inf-capacity", "integer", jaxmatch.from_networkx, nx.DiGraph([(0, 1, {"capacity": np.inf})]),
         kind="flow"),
    case("nx-flow-negative-capacity", "negative", jaxmatch.from_networkx, nx.DiGraph([(0, 1, {"capacity": -2})]),
         kind="flow"),
    case("nx-weight-nan", "not finite", jaxmatch.from_networkx, nx.Graph([(0, 1, {"weight": np.nan})])),
    case("nx-weight-negative", "negative", jaxmatch.from_networkx, nx.Graph([(0, 1, {"weight": -1})])),
    case("nx-weight-str", "numeric", jaxmatch.from_networkx, nx.Graph([(0, 1, {"weight": "a"})])),
    case("nx-directed-as-graph", "undirected", jaxmatch.from_networkx, nx.DiGraph([(0, 1)])),
    case("nx-odd-cycle-bipartite", "not bipartite", jaxmatch.from_networkx, nx.cycle_graph(3), kind="bipartite"),
    case("igraph-not-igraph", "needs an igraph.Graph", jaxmatch.from_igraph, nx.path_graph(2)),
    case("to_scipy-None", "needs a jaxmatch graph", jaxmatch.to_scipy, None),
    case("read-None", "path must be", jaxmatch.read, None),
    case("read-int", "path must be", jaxmatch.read, 3),
    case("read-missing", "cannot read", jaxmatch.read, "/nonexistent/graph.mtx"),
    case("stack-empty", "at least one graph", jaxmatch.stack, []),
    case("stack-None", "sequence of jaxmatch graphs", jaxmatch.stack, None),
    case("stack-mixed", "one jaxmatch type", jaxmatch.stack, [G, BG]),
    case("stack-layouts", "one residual layout", jaxmatch.stack, [NET, NET.with_layout("rcsr")]),
    case("unstack-single", "batch made by stack", jaxmatch.unstack, G),
    # Preferences
    case("P-float-list", "person 1's list must be a 1-D sequence of integer ids", Preferences.from_lists, [[0], [0.5]]),
    case("P-str-list", "integer ids", Preferences.from_lists, [["a"]]),
    case("P-bool-list", "integer ids", Preferences.from_lists, [[True, False]]),
    case("P-nested-list", "integer ids", Preferences.from_lists, [[[0]]]),
    case("P-dict-list", "integer ids", Preferences.from_lists, [{0: 1}]),
    case("P-scalar-lists", "integer ids", Preferences.from_lists, [0, 1]),
    case("P-None", "sequence of lists of ids", Preferences.from_lists, None),
    case("P-str", "sequence of lists of ids", Preferences.from_lists, "01"),
    case("P-duplicate", "person 0 lists id 1 twice", Preferences.from_lists, [[1, 0, 1]]),
    case("P-negative", "out of range", Preferences.from_lists, [[0, -1]]),
    case("P-out-of-range", "lists id 3, out of range", Preferences.from_lists, [[3]], n_other=2),
    case("P-n_other-float", "n_other must be an integer", Preferences.from_lists, [[0]], n_other=1.5),
    case("P-n_other-past-int32", "does not fit int32", Preferences.from_lists, [[H]]),
    case("P-n_capacity-small", "n_capacity", Preferences.from_lists, [[0], [0]], 1, n_capacity=1),
    case("P-padded-1d", "2-D", Preferences.from_padded, [0, 1]),
    case("P-padded-float", "integer array", Preferences.from_padded, [[0.5, 1.0]]),
    case("P-padded-below-minus-one", r"-1 is padding", Preferences.from_padded, [[0, -2]]),
    case("P-padded-hole", "after -1 padding", Preferences.from_padded, [[-1, 0]]),
    case("P-padded-duplicate", "twice", Preferences.from_padded, [[0, 0]]),
    case("P-padded-ragged", "2-D", Preferences.from_padded, np.array([[0, 1], [0]], dtype=object)),
    case("P-csr-bad-end", "indptr must start at 0", Preferences.from_csr, [0, 3], [0]),
    case("P-csr-decreasing", "indptr", Preferences.from_csr, [0, 2, 1], [0, 1]),
    case("P-csr-start", "indptr", Preferences.from_csr, [1, 1], [0]),
    case("P-csr-empty-indptr", "indptr", Preferences.from_csr, [], []),
    case("P-csr-float", "integer array", Preferences.from_csr, [0.0, 1.0], [0]),
    case("P-csr-2d", "1-D", Preferences.from_csr, [[0, 1]], [0]),
    case("P-shared-duplicate", "twice", Preferences.shared_list, [0, 0], 2),
    case("P-shared-n-float", "n must be an integer", Preferences.shared_list, [0, 1], 2.0),
    case("P-shared-n-past-int32", "does not fit int32", Preferences.shared_list, [0], BIG),
    case("P-broadcast-hole", "padding", Preferences.from_padded, np.broadcast_to(np.array([-1, 0]), (3, 2))),
    case("P-shared_order-of-unshared", "shared list", MEN.shared_order),
    case("stack_preferences-empty", "non-empty", jaxmatch.stack_preferences, []),
    case("stack_preferences-graphs", "non-empty sequence of Preferences", jaxmatch.stack_preferences, [G]),
]

SOLVER_CASES = [
    # maximum_matching / initial_matching options
    case("mm-method", "method must be one of", maximum_matching, BG, method="hopcroft_karp"),
    case("mm-method-list", "method must be one of", maximum_matching, BG, method=["pr"]),
    case("mm-init", "init must be one of", maximum_matching, BG, init="greedy"),
    case("mm-bfs", "bfs must be one of", maximum_matching, BG, method="apfb", bfs="dfs"),
    case("mm-max_iters-zero", "max_iters must be a positive int", maximum_matching, BG, max_iters=0),
    case("mm-max_iters-negative", "max_iters must be a positive int", maximum_matching, BG, max_iters=-5),
    case("mm-max_iters-float", "max_iters must be a positive int", maximum_matching, BG, max_iters=1.5),
    case("mm-max_iters-str", "max_iters must be a positive int", maximum_matching, BG, max_iters="10"),
    case("mm-max_iters-bool", "max_iters must be a positive int", maximum_matching, BG, max_iters=True),
    case("mm-init_rounds-zero", "init_rounds must be a positive int", maximum_matching, BG, init_rounds=0),
    case("mm-k-negative", "k must be a positive float", maximum_matching, BG, k=-1.0),
    case("mm-k-nan", "k must be a positive float", maximum_matching, BG, k=float("nan")),
    case("mm-k-inf", "k must be finite", maximum_matching, BG, k=float("inf")),
    case("mm-k-str", "k must be a positive float", maximum_matching, BG, k="0.5"),
    case("mm-lanes-zero", "lanes must be a positive int", maximum_matching, BG, lanes=0),
    case("mm-lanes-float", "lanes must be a positive int", maximum_matching, BG, lanes=8.0),
    case("mm-graft-int", "graft must be True or False", maximum_matching, BG, method="graft", graft=1),
    case("mm-direction-str", "direction_optimizing must be True or False", maximum_matching, BG,
         direction_optimizing="yes"),
    case("mm-alpha-inf", "alpha must be finite", maximum_matching, BG, alpha=float("inf")),
    case("mm-alpha-zero", "alpha must be a positive float", maximum_matching, BG, alpha=0.0),
    case("mm-positional-option", "positional argument", maximum_matching, BG, "pr", exc=TypeError),
    case("mm-unknown-option", "unexpected keyword argument 'tol'", maximum_matching, BG, tol=1e-3, exc=TypeError),
    case("im-method", "method must be one of", initial_matching, BG, "ks"),
    case("im-max_rounds-zero", "max_rounds must be a positive int", initial_matching, BG, max_rounds=0),
    case("im-max_rounds-float", "max_rounds must be a positive int", initial_matching, BG, max_rounds=2.5),
    # max_flow / min_cut: terminals and options
    case("mf-source-is-sink", "source and sink share vertex 0", max_flow, NET, 0, 0),
    case("mf-overlapping-sets", "share vertex 1", max_flow, NET, [0, 1], [1, 2]),
    case("mf-overlapping-arrays", "share vertex 2", max_flow, NET, np.array([0, 2]), np.array([2])),
    case("mf-source-out-of-range", "source 5 is out of range", max_flow, NET, 5, 1),
    case("mf-source-negative", "source -1 is out of range", max_flow, NET, -1, 2),
    case("mf-sink-out-of-range", "sink 3 is out of range", max_flow, NET, 0, 3),
    case("mf-sink-negative", "sink -3 is out of range", max_flow, NET, 0, -3),
    case("mf-sinks-one-out-of-range", "sink 7 is out of range", max_flow, NET, 0, [2, 7]),
    case("mf-source-past-int32", "out of range", max_flow, NET, H, 2),
    case("mf-source-uint64", "out of range", max_flow, NET, np.uint64(2 ** 63), 2),
    case("mf-source-float", "source must be an integer id", max_flow, NET, 0.0, 2),
    case("mf-source-jax-float", "source must be an integer id", max_flow, NET, jnp.float32(0), 2),
    case("mf-source-bool", "source must be an integer id", max_flow, NET, True, 2),
    case("mf-source-None", "source must be an integer id", max_flow, NET, None, 2),
    case("mf-source-str", "source must be an integer id", max_flow, NET, "0", 2),
    case("mf-source-2d", "source must be an integer id", max_flow, NET, [[0]], 2),
    case("mf-source-empty", "source is empty", max_flow, NET, [], 2),
    case("mf-sink-empty", "sink is empty", max_flow, NET, 0, np.array([], np.int64)),
    case("mf-sink-float-array", "sink must be an integer id", max_flow, NET, 0, [1.0, 2.0]),
    case("mf-layout", "layout must be one of", max_flow, NET, 0, 2, layout="csr"),
    case("mf-reverse", "reverse must be one of", max_flow, NET, 0, 2, reverse="scan"),
    case("mf-reverse-search-rcsr", "reverse='search'", max_flow, NET, 0, 2, layout="rcsr", reverse="search"),
    case("mf-max_iters", "max_iters must be a positive int", max_flow, NET, 0, 2, max_iters=-3),
    case("mf-k-zero", "k must be a positive float", max_flow, NET, 0, 2, k=0),
    case("mf-k-nan", "k must be a positive float", max_flow, NET, 0, 2, k=float("nan")),
    case("mf-k-inf", "k must be finite", max_flow, NET, 0, 2, k=float("inf")),
    case("mf-lanes", "lanes must be a positive int", max_flow, NET, 0, 2, lanes=0),
    case("mf-kernel", "kernel must be None, a bool or a bfs_level.Config", max_flow, NET, 0, 2, kernel="yes"),
    case("mf-unknown-option", "unexpected keyword argument 'foo'", max_flow, NET, 0, 2, foo=1, exc=TypeError),
    case("mf-capacity-overflow", "total capacity out of the sources", max_flow,
         FlowNetwork.from_edges([0, 0], [1, 1], [2 ** 31 - 1, 2 ** 31 - 1]), 0, 1, traced_ok=True),
    case("mc-source-is-sink", "share vertex 1", min_cut, NET, 1, 1),
    case("mc-sink-out-of-range", "sink 9 is out of range", min_cut, NET, 0, 9),
    case("mc-source-float", "source must be an integer id", min_cut, NET, 0.5, 2),
    case("mc-layout", "layout must be one of", min_cut, NET, 0, 2, layout="dense"),
    case("mc-unknown-option", "unexpected keyword argument", min_cut, NET, 0, 2, foo=1, exc=TypeError),
    case("matching_network-layout", "layout must be one of", jaxmatch.matching_network, BG, layout="x"),
    case("matching_network-graph", "expected a jaxmatch.BipartiteGraph", jaxmatch.matching_network, G),
    # suitor / locally_dominant / b_suitor
    case("su-max_iters", "max_iters must be a positive int", suitor, G, max_iters=0),
    case("su-batch", "batch must be a positive int", suitor, G, batch=-1),
    case("su-lanes", "lanes must be a positive int", suitor, G, lanes=1.5),
    case("su-sorted-str", "sorted_adjacency must be True or False", suitor, G, sorted_adjacency="yes"),
    case("su-sorted-int", "sorted_adjacency must be True or False", suitor, G, sorted_adjacency=1),
    case("ld-max_iters", "max_iters must be a positive int", locally_dominant, G, max_iters=-1),
    case("ld-lanes", "lanes must be a positive int", locally_dominant, G, lanes=0),
    case("ld-sorted-str", "sorted_adjacency must be True or False", locally_dominant, G, sorted_adjacency="no"),
    case("bs-b-negative", "b must be >= 0", b_suitor, G, -1),
    case("bs-b-float", "b must be an integer", b_suitor, G, 1.5),
    case("bs-b-np-float", "b must be an integer", b_suitor, G, np.float64(2)),
    case("bs-b-bool", "b must be an integer", b_suitor, G, True),
    case("bs-b-object", "b must be an integer", b_suitor, G, Unknown()),
    case("bs-b-str", "b must be an integer", b_suitor, G, "2"),
    case("bs-b-past-int32", "b = 1099511627776 does not fit int32", b_suitor, G, H),
    case("bs-b-array-negative", r"b\[1\] = -1 is negative", b_suitor, G, [1, -1, 1]),
    case("bs-b-array-float", "b must be an integer or a 1-D integer array", b_suitor, G, [1.0, 1.0, 1.0]),
    case("bs-b-array-bool", "b must be an integer or a 1-D integer array", b_suitor, G, [True, True, True]),
    case("bs-b-array-jax-float", "b must be an integer or a 1-D integer array", b_suitor, G, jnp.ones(3)),
    case("bs-b-array-short", r"b must have one entry per vertex \(3\), got 2", b_suitor, G, [1, 1]),
    case("bs-b-array-long", "one entry per vertex", b_suitor, G, [1] * 9),
    case("bs-b-array-2d", "1-D integer array", b_suitor, G, [[1, 1, 1]]),
    case("bs-b-array-ragged", "ragged", b_suitor, G, [[1], [1, 2]]),
    case("bs-b-array-past-int32", "does not fit int32", b_suitor, G, [H, 1, 1]),
    case("bs-b-array-uint64", "does not fit int32", b_suitor, G, np.array([2 ** 63, 1, 1], np.uint64)),
    case("bs-max_b-small", "max_b = 2 is smaller than b = 3", b_suitor, G, 3, max_b=2),
    case("bs-max_b-small-array", "max_b = 1 is smaller than max", b_suitor, G, [1, 2, 1], max_b=1),
    case("bs-max_b-zero", "max_b must be a positive int", b_suitor, G, 1, max_b=0),
    case("bs-max_b-float", "max_b must be a positive int", b_suitor, G, 1, max_b=2.0),
    case("bs-max_b-past-int32", "max_b = 1099511627776 does not fit int32", b_suitor, G, 1, max_b=H),
    case("bs-batch", "batch must be a positive int", b_suitor, G, 1, batch=0),
    # stable_marriage
    case("sm-method", "method must be one of", stable_marriage, MEN, WOMEN, method="gs"),
    case("sm-max_iters", "max_iters must be a positive int", stable_marriage, MEN, WOMEN, max_iters=0),
    case("sm-max_iters-float", "max_iters must be a positive int", stable_marriage, MEN, WOMEN, max_iters=2.5),
    case("sm-unroll", "unroll must be a positive int", stable_marriage, MEN, WOMEN, unroll=-1),
    case("sm-unroll-huge", "unroll = 1099511627776 is above the supported", stable_marriage, MEN, WOMEN, unroll=H),
    case("sm-window", "window must be a positive int", stable_marriage, MEN, WOMEN, window=1.5),
    case("sm-window-huge", "window = 1099511627776 is above the supported", stable_marriage, MEN, WOMEN, window=H),
    case("sm-kernel", "kernel must be None, a bool or a stable_mw.Config", stable_marriage, MEN, WOMEN, kernel="x"),
    case("sm-kernel-gale-shapley", "McVitie-Wilson only", stable_marriage, MEN, WOMEN, method="gale_shapley",
         kernel=True),
    case("sm-duplicate", "men_prefs: person 0 lists id 0 twice", stable_marriage, [[0, 0], [1, 0]], [[0, 1], [1, 0]]),
    case("sm-not-a-permutation", "twice", stable_marriage, [[0, 1], [1, 0]], [[1, 1], [0, 1]]),
    case("sm-out-of-range", "men_prefs: person 0 lists id 2, out of range", stable_marriage, [[0, 2], [1, 0]],
         [[0, 1], [1, 0]]),
    case("sm-women-out-of-range", "women_prefs: person 0 lists id 5", stable_marriage, [[0, 1], [1, 0]],
         [[0, 5], [1, 0]]),
    case("sm-ragged-men-out-of-range", "out of range", stable_marriage, [[0], [2, 1]], [[0, 1], [1, 0]]),
    case("sm-negative", "ids are >= 0, -1 is padding", stable_marriage, [[0, -2], [1, 0]], [[0, 1], [1, 0]]),
    case("sm-padding-hole", "after -1 padding", stable_marriage, [[-1, 0], [1, 0]], [[0, 1], [1, 0]]),
    case("sm-float", "men_prefs must be an integer array", stable_marriage, [[0.0, 1.0], [1.0, 0.0]],
         [[0, 1], [1, 0]]),
    case("sm-float-ragged", "person 1's list must be a 1-D sequence of integer ids", stable_marriage,
         [[0], [0.5, 1]], [[0, 1], [1, 0]]),
    case("sm-str-ragged", "integer ids", stable_marriage, [[0], ["a", 1]], [[0, 1], [1, 0]]),
    case("sm-bool", "integer array", stable_marriage, [[True, False], [False, True]], [[0, 1], [1, 0]]),
    case("sm-3d", "2-D", stable_marriage, np.zeros((1, 1, 1), int), [[0]]),
    case("sm-1d", "2-D", stable_marriage, [0, 1], [[0, 1], [1, 0]]),
    case("sm-None", "2-D", stable_marriage, None, [[0]]),
    case("sm-object-ragged", "2-D", stable_marriage, np.array([[0, 1], [0]], dtype=object), [[0, 1], [1, 0]]),
    case("sm-csr-3-tuple", "ragged", stable_marriage, (np.array([0, 1]), np.array([0]), 1), [[0]]),
    case("sm-csr-bad-indptr", "indptr must start at 0", stable_marriage, (np.array([0, 3]), np.array([0])), [[0]]),
    case("sm-csr-float", "integer array", stable_marriage, (np.array([0.0, 1.0]), np.array([0])), [[0]]),
    case("sm-sides-disagree", "built for n_other = 2", stable_marriage, Preferences.from_lists([[0, 1]]),
         Preferences.from_lists([[0]])),
    case("sm-prefs-vs-raw", "n_other", stable_marriage, Preferences.from_lists([[0, 1]]), [[0]]),
    case("sm-batch-vs-one", "built for n_other", stable_marriage, jaxmatch.stack_preferences([MEN, MEN]), WOMEN),
    case("sm-batches-of-two-sizes", "built for n_other", stable_marriage, jaxmatch.stack_preferences([MEN, MEN]),
         jaxmatch.stack_preferences([WOMEN, WOMEN, WOMEN])),
    case("sm-graph", "2-D", stable_marriage, G, [[0]]),
    # louvain / modularity
    case("lv-resolution-negative", "resolution must be a finite number >= 0", louvain, G, resolution=-1),
    case("lv-resolution-nan", "resolution must be a finite number", louvain, G, resolution=float("nan")),
    case("lv-resolution-inf", "resolution must be a finite number", louvain, G, resolution=float("inf")),
    case("lv-resolution-np-nan", "resolution must be a finite number", louvain, G, resolution=np.float32("nan")),
    case("lv-resolution-str", "resolution must be a finite number", louvain, G, resolution="1"),
    case("lv-resolution-huge", "resolution = 1e\\+300 does not fit float32", louvain, G, resolution=1e300),
    case("lv-threshold", "threshold must be a finite number", louvain, G, threshold=-1e-3),
    case("lv-threshold_large-nan", "threshold_large must be a finite number", louvain, G,
         threshold_large=float("nan")),
    case("lv-large_graph", "large_graph must be an int >= 0", louvain, G, large_graph=-1),
    case("lv-large_graph-float", "large_graph must be an int", louvain, G, large_graph=1.5),
    case("lv-max_levels", "max_levels must be a positive int", louvain, G, max_levels=0),
    case("lv-max_levels-huge", "max_levels = 2147483647 is above the supported", louvain, G, max_levels=2 ** 31 - 1),
    case("lv-max_iters", "max_iters must be a positive int", louvain, G, max_iters=1.5),
    case("lv-max_iters-huge", "max_iters = 1099511627776 is above the supported", louvain, G, max_iters=H),
    case("lv-refine", "refine must be True or False", louvain, G, refine=1),
    case("lv-axis_name-outside-vmap", "axis_name='b' is for calls inside", louvain, G, axis_name="b"),
    case("lv-axis_name-int", "axis_name must be None or the str", louvain, G, axis_name=3),
    case("ld-resolution-negative", "resolution must be a finite number >= 0", jaxmatch.leiden, G, resolution=-1),
    case("ld-passes", "passes must be a positive int", jaxmatch.leiden, G, passes=0),
    case("ld-passes-float", "passes must be a positive int", jaxmatch.leiden, G, passes=2.0),
    case("ld-max_levels-huge", "max_levels = 2147483647 is above the supported", jaxmatch.leiden, G,
         max_levels=2 ** 31 - 1),
    case("ld-axis_name-outside-vmap", "axis_name='b' is for calls inside", jaxmatch.leiden, G, axis_name="b"),
    case("mod-labels-short", r"labels must have shape \(3,\)", modularity, G, [0, 0]),
    case("mod-labels-float", "labels must be integers", modularity, G, [0.0, 0.0, 1.0]),
    case("mod-labels-bool", "labels must be integers", modularity, G, [True, False, True]),
    case("mod-labels-str", "labels must be integers", modularity, G, ["a", "b", "c"]),
    case("mod-labels-2d", "labels must have shape", modularity, G, [[0, 0, 1]]),
    case("mod-labels-scalar", "labels must have shape", modularity, G, 0),
    case("mod-labels-None", "labels must have shape", modularity, G, None),
    case("mod-labels-ragged", "ragged", modularity, G, [[0], [0, 1], [1]]),
    case("mod-labels-past-int32", "labels must fit int32", modularity, G, [H, 0, 0]),
    case("mod-labels-uint64", "labels must fit int32", modularity, G, np.array([2 ** 63, 0, 0], np.uint64)),
    case("mod-resolution", "resolution must be a finite number", modularity, G, [0, 0, 1], resolution=-1),
    case("mod-resolution-nan", "resolution must be a finite number", modularity, G, [0, 0, 1], resolution=np.nan),
]

TABLE = CONSTRUCTOR_CASES + SOLVER_CASES + _wrong_container_cases()


@pytest.mark.parametrize("thunk, match, exc, traced_ok", TABLE)
def test_malformed_input_is_rejected(thunk, match, exc, traced_ok):
    rejects(thunk, match, exc, traced_ok)


def test_the_table_is_large():
    """Issue 18 asks for at least 200 malformed inputs; the hypothesis tests below add more."""
    assert len(TABLE) >= 200, len(TABLE)


# --------------------------------------------------------------------------
# hypothesis: bad inputs drawn at random (each example is checked like a table case)

FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def bad_id_arrays(draw):
    """(rows, cols, n_rows, keyword of the problem, edge count) for BipartiteGraph.from_edges."""
    m = draw(st.integers(1, 6))
    good = draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))
    kind = draw(st.sampled_from(["float", "bool", "negative", "range", "2d", "length", "huge", "ragged", "complex"]))
    rows, n_rows = list(good), None
    if kind == "float":
        rows = np.asarray(good, float) + draw(st.sampled_from([0.0, 0.5, np.nan]))
        key = "integer array"
    elif kind == "bool":
        rows = np.asarray(good) > 1
        key = "integer array"
    elif kind == "complex":
        rows = np.asarray(good) + 1j
        key = "integer array"
    elif kind == "negative":
        rows[draw(st.integers(0, m - 1))] = draw(st.integers(-H, -1))
        key = "out of range"
    elif kind == "range":
        n_rows = draw(st.integers(0, 4))
        rows[draw(st.integers(0, m - 1))] = draw(st.integers(n_rows, n_rows + 100))
        key = "out of range"
    elif kind == "2d":
        rows = np.asarray(good).reshape(1, -1)
        key = "1-D"
    elif kind == "length":
        rows = good + draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
        key = "same length"
    elif kind == "huge":
        rows[draw(st.integers(0, m - 1))] = draw(st.integers(2 ** 31 - 1, H))
        key = "does not fit int32"
    else:
        rows = good + [[0, 1]]
        key = "ragged"
    swap = draw(st.booleans()) and kind != "range"
    cols = list(good)
    return (cols, rows, None, key, m) if swap else (rows, cols, n_rows, key, m)


@given(bad_id_arrays())
@FUZZ
def test_fuzz_bipartite_ids(case_):
    rows, cols, n_rows, key, _ = case_
    rejects(lambda: BipartiteGraph.from_edges(rows, cols, n_rows), key)


@given(bad_id_arrays(), st.sampled_from(["graph", "flow"]))
@FUZZ
def test_fuzz_graph_and_network_ids(case_, which):
    u, v, n, key, m = case_
    if which == "graph":
        rejects(lambda: Graph.from_edges(u, v, None, n), key)
    else:  # the ids are checked before the capacities
        rejects(lambda: FlowNetwork.from_edges(u, v, np.ones(m, np.int64), n), key)


@st.composite
def bad_values(draw, integer):
    """(values, keyword, edge count) for Graph weights (integer=False) or FlowNetwork capacities (integer=True)."""
    m = draw(st.integers(1, 5))
    vals = np.asarray(draw(st.lists(st.integers(0, 9), min_size=m, max_size=m)), float if not integer else np.int64)
    options = ["nan", "inf", "negative", "shape", "str", "bool", "ragged", "huge"] + (["float"] if integer else [])
    kind = draw(st.sampled_from(options))
    i = draw(st.integers(0, m - 1))
    if kind in ("nan", "inf"):
        vals = vals.astype(float)
        vals[i] = np.nan if kind == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        return vals, ("integer array" if integer else "not finite"), m
    if kind == "negative":
        vals[i] = -draw(st.integers(1, H)) if integer else -draw(st.floats(1e-30, 1e30))
        return vals, "negative", m
    if kind == "shape":
        extra = draw(st.integers(1, 3))
        return (np.ones(m + extra) if draw(st.booleans()) else np.ones((1, m))), "must have shape", m
    if kind == "str":
        return vals.astype(str), "real numeric array", m
    if kind == "bool":
        return vals > 3, "real numeric array", m
    if kind == "ragged":
        return list(vals) + [[1, 2]], "ragged", m
    if kind == "float":
        return vals + draw(st.sampled_from([0.0, 0.25])), "integer array", m
    if integer:
        vals[i] = draw(st.integers(2 ** 31, H))
        return vals, "does not fit int32", m
    vals[i] = draw(st.floats(3.5e38, 1e308))
    return vals, "does not fit float32", m


@given(bad_values(integer=False))
@FUZZ
def test_fuzz_weights(case_):
    w, key, m = case_
    u = np.arange(m)
    rejects(lambda: Graph.from_edges(u, u + 1, w), key)


@given(bad_values(integer=True))
@FUZZ
def test_fuzz_capacities(case_):
    c, key, m = case_
    u = np.arange(m)
    rejects(lambda: FlowNetwork.from_edges(u, u + 1, c), key)


@st.composite
def bad_terminals(draw):
    """(source, sink, keyword) that NET (3 vertices) must reject."""
    kind = draw(st.sampled_from(["same", "overlap", "range", "negative", "float", "empty", "2d", "bool"]))
    s = draw(st.integers(0, 2))
    if kind == "same":
        return s, s, "share vertex"
    if kind == "overlap":
        rest = [v for v in range(3) if v != s]
        return [s] + rest[:1], [s, rest[-1]], "share vertex"
    if kind == "range":
        return s, draw(st.integers(3, H)), "out of range"
    if kind == "negative":
        return draw(st.integers(-H, -1)), s, "out of range"
    if kind == "float":
        return float(s), (s + 1) % 3, "integer id"
    if kind == "empty":
        return s, [], "empty"
    if kind == "bool":
        return bool(s % 2), 2, "integer id"
    return [[s]], (s + 1) % 3, "integer id"


@given(bad_terminals(), st.booleans(), st.booleans())
@FUZZ
def test_fuzz_terminals(case_, swap, cut):
    s, t, key = case_
    if swap:
        s, t = t, s
    rejects(lambda: (min_cut if cut else max_flow)(NET, s, t), key)


@st.composite
def bad_preferences(draw):
    """(men, women, keyword) for stable_marriage on 3 men and 3 women."""
    perms = [list(draw(st.permutations(range(3)))) for _ in range(6)]
    men, women = perms[:3], perms[3:]
    kind = draw(st.sampled_from(["dup", "range", "negative", "hole", "float", "ragged-float", "3d", "csr"]))
    who = draw(st.integers(0, 2))
    side = draw(st.sampled_from(["men", "women"]))
    lists = men if side == "men" else women
    if kind == "dup":
        lists[who][1] = lists[who][0]
        key = "twice"
    elif kind == "range":
        lists[who][draw(st.integers(0, 2))] = draw(st.integers(3, 1000))
        key = "out of range"
    elif kind == "negative":
        lists[who][draw(st.integers(0, 2))] = draw(st.integers(-1000, -2))
        key = "-1 is padding"
    elif kind == "hole":
        lists[who][0] = -1
        key = "after -1 padding"
    elif kind == "float":
        lists = np.asarray(lists, float)
        key = "integer array"
    elif kind == "ragged-float":
        lists[who] = [0.5] if who else [0.5, 1.0]
        key = "integer ids"
    elif kind == "3d":
        lists = np.asarray(lists)[None]
        key = "2-D"
    else:
        flat = np.asarray(lists).ravel()
        lists = (np.array([0, 3, 6, 9 + draw(st.integers(1, 5))]), flat)
        key = "indptr"
    return (lists, women, f"{side}_prefs.*{key}|{key}") if side == "men" else (men, lists, f"{key}")


@given(bad_preferences(), st.sampled_from(["mcvitie_wilson", "gale_shapley"]))
@FUZZ
def test_fuzz_preferences(case_, method):
    men, women, key = case_
    rejects(lambda: stable_marriage(men, women, method=method), key)


INT_OPTIONS = {  # solver -> (call with options, its int options)
    "maximum_matching": (partial(maximum_matching, BG), ("max_iters", "init_rounds", "lanes")),
    "initial_matching": (partial(initial_matching, BG), ("max_rounds",)),
    "max_flow": (partial(max_flow, NET, 0, 2), ("max_iters", "lanes")),
    "min_cut": (partial(min_cut, NET, 0, 2), ("max_iters", "lanes")),
    "suitor": (partial(suitor, G), ("max_iters", "batch", "lanes")),
    "locally_dominant": (partial(locally_dominant, G), ("max_iters", "lanes")),
    "b_suitor": (partial(b_suitor, G, 1), ("max_iters", "batch", "lanes", "max_b")),
    "stable_marriage": (partial(stable_marriage, MEN, WOMEN), ("max_iters", "unroll", "window")),
    "louvain": (partial(louvain, G), ("max_levels", "max_iters")),
    "leiden": (partial(jaxmatch.leiden, G), ("max_levels", "max_iters", "passes")),
}
bad_int = st.one_of(st.integers(-H, 0), st.floats(allow_nan=True),
                    st.sampled_from([True, False, "8", [8], 8.0, np.float32(4), np.float64(16), 1j]))


@given(st.sampled_from(sorted(INT_OPTIONS)), st.data(), bad_int)
@FUZZ
def test_fuzz_int_options(solver, data, value):
    call, names = INT_OPTIONS[solver]
    name = data.draw(st.sampled_from(names))
    rejects(lambda: call(**{name: value}), name)


CHOICES = {  # solver -> its string options
    "maximum_matching": (partial(maximum_matching, BG), ("method", "init", "bfs")),
    "initial_matching": (partial(initial_matching, BG), ("method",)),
    "max_flow": (partial(max_flow, NET, 0, 2), ("layout", "reverse")),
    "stable_marriage": (partial(stable_marriage, MEN, WOMEN), ("method",)),
    "from_scipy": (partial(jaxmatch.from_scipy, sp.eye(2, format="csr", dtype=np.int64)), ("kind",)),
    "FlowNetwork": (partial(FlowNetwork.from_edges, [0], [1], [1]), ("layout",)),
    "BipartiteGraph": (partial(BipartiteGraph.from_edges, [0], [0]), ("duplicates",)),
    "Graph": (partial(Graph.from_edges, [0], [1]), ("duplicates",)),
}
KNOWN = {"pr", "flow", "apfb", "apsb", "graft", "auto", "cheap", "karp_sipser", "gpubfs", "gpubfs_wr", "bcsr",
         "rcsr", "index", "search", "mcvitie_wilson", "gale_shapley", "bipartite", "graph", "merge", "sum", "error"}


@given(st.sampled_from(sorted(CHOICES)), st.data(),
       st.one_of(st.text(max_size=12).filter(lambda s: s not in KNOWN), st.integers(), st.just(["pr"])))
@FUZZ
def test_fuzz_unknown_option_strings(solver, data, value):
    call, names = CHOICES[solver]
    name = data.draw(st.sampled_from(names))
    rejects(lambda: call(**{name: value}), f"{name} must be one of")


@given(st.sampled_from(sorted(SOLVERS)), st.sampled_from(sorted(WRONG_OBJECTS) + sorted(CONTAINERS)))
@FUZZ
def test_fuzz_wrong_container(solver, what):
    call, need = SOLVERS[solver]
    obj = WRONG_OBJECTS[what] if what in WRONG_OBJECTS else CONTAINERS[what]
    if what == need:
        return  # the right container: not an error
    rejects(lambda: call(obj), f"expected a jaxmatch.{need}")


@given(st.one_of(
    st.integers(-H, -1).map(lambda b: (b, "b must be >= 0")),
    st.integers(2 ** 31, H).map(lambda b: (b, "does not fit int32")),
    st.floats(allow_nan=True).map(lambda b: (b, "b must be an integer")),
    st.lists(st.integers(-5, 5), min_size=3, max_size=3).filter(lambda b: min(b) < 0).map(lambda b: (b, "negative")),
    st.lists(st.integers(0, 5), min_size=0, max_size=9).filter(lambda b: len(b) not in (3, 4))
    .map(lambda b: (b, "one entry per vertex")),
    st.lists(st.floats(0, 5), min_size=3, max_size=3).map(lambda b: (b, "integer array")),
))
@FUZZ
def test_fuzz_b_values(case_):
    b, key = case_
    rejects(lambda: b_suitor(G, b), key)


# --------------------------------------------------------------------------
# malformed files


@pytest.mark.parametrize("name, text, match", [
    ("noproblem.max", "c nothing\nn 1 s\nn 2 t\na 1 2 3\n", "no problem line"),
    ("samest.max", "p max 2 1\nn 1 s\nn 1 t\na 1 2 3\n", "source and sink are the same"),
    ("range.max", "p max 2 1\nn 1 s\nn 2 t\na 1 3 3\n", "out of range"),
    ("negcap.max", "p max 2 1\nn 1 s\nn 2 t\na 1 2 -3\n", "negative capacity"),
    ("floatcap.max", "p max 2 1\nn 1 s\nn 2 t\na 1 2 1.5\n", "3 integers"),
    ("count.max", "p max 2 2\nn 1 s\nn 2 t\na 1 2 3\n", "says 2 arcs"),
    ("nosink.max", "p max 2 1\nn 1 s\na 1 2 3\n", "no sink"),
    ("floatid.txt", "0 1\n0.5 2\n", "integers"),
    ("negid.txt", "0 1\n-1 2\n", "below 0"),
    ("columns.txt", "0 1\n0 1 2 3 4\n", "columns"),
    ("nanweight.txt", "0 1 nan\n", "finite"),
    ("flowfloat.txt", "0 1 1.5\n", "capacity must be an integer"),
    ("garbage.mtx", "%%MatrixMarket matrix coordinate real general\nnot numbers\n", "Matrix Market"),
])
def test_malformed_files_are_rejected(tmp_path, name, text, match):
    path = tmp_path / name
    path.write_text(text)
    kind = "flow" if name.startswith("flow") else None
    rejects(lambda: jaxmatch.read(path, kind), match)


# --------------------------------------------------------------------------
# empty graphs are not errors: they work, at one tiny capacity per container

BCAPS = dict(row_capacity=4, col_capacity=4, edge_capacity=1)
GCAPS = dict(vertex_capacity=4, entry_capacity=1)
FCAPS = dict(vertex_capacity=4, arc_capacity=1)


@given(st.integers(0, 4), st.integers(0, 4))
@settings(max_examples=8, deadline=None)
def test_empty_bipartite_graphs_work(n_rows, n_cols):
    g = BipartiteGraph.from_edges([], [], n_rows, n_cols, **BCAPS)
    for res in (maximum_matching(g), initial_matching(g)):
        assert int(res.status) == 0 and int(res.cardinality) == 0
        assert res.row_mate.tolist() == [-1] * n_rows and res.col_mate.tolist() == [-1] * n_cols
        certify.check_maximum_matching(g, res.row_mate, res.col_mate)
    h = jaxmatch.from_scipy(sp.csr_array((n_rows, n_cols)), **BCAPS)
    assert int(maximum_matching(h).cardinality) == 0


@given(st.integers(2, 4), st.booleans())
@settings(max_examples=5, deadline=None)
def test_empty_networks_work(n, flip):
    net = FlowNetwork.from_edges([], [], np.zeros(0, np.int64), n, **FCAPS)
    source, sink = (n - 1, 0) if flip else (0, n - 1)
    res = max_flow(net, source, sink)
    assert int(res.status) == 0 and int(res.flow_value) == 0 and res.flow.shape == (0,)
    certify.check_flow(net, source, sink, res.flow, res.flow_value)
    certify.check_min_cut(net, source, sink, np.asarray(res.source_side), res.flow_value)
    cut = min_cut(net, source, sink)
    assert int(cut.value) == 0 and not np.asarray(cut.cut_arcs).any()


@given(st.integers(0, 4))
@settings(max_examples=5, deadline=None)
def test_empty_weighted_graphs_work(n):
    g = Graph.from_edges([], [], None, n, **GCAPS)
    for res in (suitor(g), locally_dominant(g)):
        assert int(res.status) == 0 and res.mate.tolist() == [-1] * n and float(res.weight) == 0
    bres = b_suitor(g, 2)
    assert int(bres.status) == 0 and int(bres.cardinality) == 0 and bres.partners.shape == (n, 2)
    assert int(b_suitor(g, [0] * n, max_b=2).cardinality) == 0
    for lv in (louvain(g), jaxmatch.leiden(g)):
        assert lv.labels.tolist() == list(range(n)) and int(lv.status) == 0
    q = float(modularity(g, np.zeros(n, np.int64)))
    assert np.isnan(q)  # no edge weight: no modularity (igraph's answer)


@pytest.mark.parametrize("men, women", [([], []), ([[]], []), ([], [[]]), ([[], []], [[]]),
                                        (np.zeros((0, 0), int), np.zeros((2, 0), int))])
def test_empty_stable_marriage_works(men, women):
    caps = dict(n_capacity=2, entry_capacity=1)  # one compilation for all
    res = stable_marriage(Preferences.from_lists(men, len(women), **caps),
                          Preferences.from_lists(women, len(men), **caps))
    assert int(res.status) == 0
    assert res.wife.tolist() == [-1] * len(men) and res.husband.tolist() == [-1] * len(women)
