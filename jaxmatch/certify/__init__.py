"""Certificates: independent checks of solver answers, in plain numpy and scipy.

Nothing here imports a jaxmatch solver. ``is_*`` functions return a bool;
``check_*`` functions return None or raise :class:`CertificateError` naming
the violation. Graph arguments may be jaxmatch graphs or, where noted, scipy
sparse matrices; results may be JAX or numpy arrays.

Each certificate proves the answer right without rerunning the solver:

- matching (:mod:`jaxmatch.certify.matching`): validity, and maximality by a
  Kőnig vertex cover of the matching's size;
- flow (:mod:`jaxmatch.certify.flow`): a feasible flow and an s-t cut of
  equal value (max-flow min-cut duality);
- weighted matching (:mod:`jaxmatch.certify.weighted`): greedy dominance,
  which holds exactly for the greedy (b-)matching;
- stable marriage (:mod:`jaxmatch.certify.stable`): no blocking pair;
- assignment (:mod:`jaxmatch.certify.assignment`): dual potentials whose
  bound meets the matching's cost (linear-programming duality);
- communities (:mod:`jaxmatch.certify.community`): a partition numbered
  0 .. k-1, its modularity recomputed in float64, and no single move that
  raises it (a Louvain local optimum).
"""
from jaxmatch.certify._common import CertificateError
from jaxmatch.certify.assignment import check_assignment
from jaxmatch.certify.dm import check_dulmage_mendelsohn
from jaxmatch.certify.community import (
    best_move,
    check_local_optimum,
    check_modularity,
    check_partition,
    modularity_numpy,
)
from jaxmatch.certify.flow import check_flow, check_min_cut
from jaxmatch.certify.matching import (
    check_matching,
    check_maximum_matching,
    is_matching,
    is_maximum_matching,
    koenig_cover,
)
from jaxmatch.certify.stable import check_stable, is_stable
from jaxmatch.certify.weighted import (
    check_greedy_b_dominance,
    check_greedy_dominance,
    is_greedy_b_dominant,
    is_greedy_dominant,
)

__all__ = [
    "CertificateError", "is_matching", "check_matching", "koenig_cover",
    "check_maximum_matching", "is_maximum_matching", "check_flow", "check_min_cut",
    "check_greedy_dominance", "is_greedy_dominant", "check_greedy_b_dominance", "is_greedy_b_dominant",
    "check_stable", "is_stable", "check_partition", "check_modularity", "modularity_numpy",
    "best_move", "check_local_optimum", "check_assignment",
    "check_dulmage_mendelsohn",
]
