"""jaxmatch: GPU graph matching, flow and clustering algorithms in JAX.

Public names only; see README.md for the algorithms and their papers.
"""
from jaxmatch import _config

_config.apply_xla_flags()  # before anything can start JAX's backend; JAXMATCH_XLA_FLAGS=0 opts out

from jaxmatch import certify, datasets, flow, io
from jaxmatch.batch import solve_batch, solve_many
from jaxmatch.shard import ShardedBipartiteGraph, ShardedGraph, shard
from jaxmatch.bipartite import MatchingResult, initial_matching, maximum_matching
from jaxmatch.bipartite.dulmage_mendelsohn import DMResult, dulmage_mendelsohn
from jaxmatch.assignment import AssignmentResult, linear_sum_assignment, min_weight_matching
from jaxmatch.graph import (
    CSR,
    BipartiteGraph,
    FlowNetwork,
    Graph,
    GraphInputError,
    disjoint_union,
    split_union,
    stack,
    unstack,
)
from jaxmatch.community import LeidenResult, LouvainResult, leiden, louvain, modularity
from jaxmatch.flow import CutResult, FlowResult, matching_from_flow, matching_network, max_flow, min_cut
from jaxmatch._config import enable_compilation_cache
from jaxmatch.status import SolverError, Status
from jaxmatch.io import from_igraph, from_networkx, from_scipy, read, to_scipy
from jaxmatch.stable import (
    Preferences,
    StableMarriageResult,
    read_preferences,
    stable_marriage,
    stack_preferences,
)
from jaxmatch.weighted import (
    BMatchingResult,
    WeightedMatchingResult,
    b_suitor,
    greedy_b_matching,
    greedy_matching,
    locally_dominant,
    suitor,
)

__version__ = "0.1.0"

__all__ = [
    "BipartiteGraph", "CSR", "FlowNetwork", "Graph", "GraphInputError", "MatchingResult",
    "certify", "datasets", "from_igraph", "from_networkx", "from_scipy", "initial_matching", "io",
    "maximum_matching", "read", "AssignmentResult", "linear_sum_assignment", "min_weight_matching", "solve_batch", "solve_many", "disjoint_union", "split_union", "stack", "to_scipy", "unstack",
    "ShardedBipartiteGraph", "ShardedGraph", "shard",
    "BMatchingResult", "WeightedMatchingResult", "b_suitor", "greedy_b_matching", "greedy_matching",
    "locally_dominant", "suitor",
    "LeidenResult", "LouvainResult", "leiden", "louvain", "modularity",
    "CutResult", "FlowResult", "flow", "matching_from_flow", "matching_network", "max_flow", "min_cut",
    "Preferences", "StableMarriageResult", "read_preferences", "stable_marriage", "stack_preferences",
    "enable_compilation_cache", "SolverError", "Status",
    "DMResult", "dulmage_mendelsohn",
]
