"""Newman-Girvan modularity of a vertex partition (Eq. (1) of Paper III), and its array forms.

:func:`modularity` is the public function; :func:`degrees`,
:func:`partition_modularity` (any int labels, grouped by a sort) and
:func:`entry_modularity` (labels in [0, n_cap) with known community totals)
are the traced forms that it and the Louvain solver use.

For an undirected graph with edge weights w, weighted degrees k_i and total
weight m = sum_e w_e,

    Q = (1 / 2m) sum_i e_{i -> C(i)}  -  resolution * sum_c a_c^2 / (4 m^2),

where e_{i -> C(i)} = sum_{j in C(i)} A_ij and a_c = sum_{i in c} k_i. The
self-loop convention is networkx's (and igraph's): a loop of weight w adds 2w
to its vertex's degree (A_ii = 2w) and w to m. On a :class:`jaxmatch.Graph`
(symmetric CSR, an edge {u, v} stored twice, a loop once on the diagonal) this
reads: k_i = row sum of i + its diagonal entry, 2m = sum_i k_i, and the first
term sums the stored entries inside communities with diagonal entries doubled.

A graph whose total edge weight is zero has no modularity: the result is NaN,
as igraph returns (networkx raises ZeroDivisionError).

Everything here is traceable with fixed shapes: O(entries + n log n) work (a
sort groups arbitrary community labels).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxmatch._ops import INT_MAX, device, is_traced, prefix, take
from jaxmatch._validate import INT32_MAX, _float_dtype, check_not_batch, check_type
from jaxmatch.graph import Graph, GraphInputError

__all__ = ["modularity", "degrees", "partition_modularity", "entry_modularity"]


def degrees(src: jax.Array, dst: jax.Array, w: jax.Array, n_cap: int) -> jax.Array:
    """Weighted degree k [n_cap] of symmetric CSR entries (a diagonal entry counts twice)."""
    return jax.ops.segment_sum(jnp.where(src == dst, 2 * w, w), src, n_cap)


def _intra(src, dst, w, same):
    """sum_i e_{i -> C(i)} = 2 * (weight inside communities), from the entries with ``same``."""
    return jnp.sum(jnp.where(same, jnp.where(src == dst, 2 * w, w), 0))


def entry_modularity(src, dst, w, comm, k, tot, resolution):
    """Q of labels ``comm`` [n_cap] in [0, n_cap) (padding: n_cap), given degrees
    ``k`` and community totals ``tot = segment_sum(k, comm)``. NaN when m = 0."""
    n_cap = comm.shape[0]
    two_m = jnp.sum(k)
    same = (src < n_cap) & (take(comm, src, -1) == take(comm, dst, -2))
    inv = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), jnp.nan)
    x = tot * inv
    return _intra(src, dst, w, same) * inv - resolution * jnp.sum(x * x)


def partition_modularity(src, dst, w, labels, n, resolution):
    """Q of arbitrary int labels [n_cap] of the vertices ``< n``; labels past n are ignored.

    Communities are grouped by sorting the labels (any int32 values are fine).
    """
    n_cap = labels.shape[0]
    k = degrees(src, dst, w, n_cap)
    real = jnp.arange(n_cap) < n
    lab = jnp.where(real, labels, INT_MAX)
    two_m = jnp.sum(k)
    inv = jnp.where(two_m > 0, 1 / jnp.where(two_m > 0, two_m, 1), jnp.nan)
    same = (src < n_cap) & (take(lab, src, -1) == take(lab, dst, -2))
    ls, ks = lax.sort((lab, jnp.where(real, k, 0)), num_keys=1)
    head = jnp.concatenate([jnp.ones(1, bool), ls[1:] != ls[:-1]])
    run = prefix(head, dtype=jnp.int32) - 1
    x = jax.ops.segment_sum(ks, run, n_cap) * inv
    return _intra(src, dst, w, same) * inv - resolution * jnp.sum(x * x)


def modularity(g, labels, *, resolution: float = 1.0) -> jax.Array:
    r"""Modularity Q of the partition ``labels`` of graph ``g``.

    The Newman-Girvan modularity (M. E. J. Newman and M. Girvan, "Finding and
    evaluating community structure in networks", Phys. Rev. E 69, 026113,
    2004; Eq. (1) of M. Naim, F. Manne, M. Halappanavar, A. Tumeo,
    "Community Detection on the GPU", IPDPS 2017, Paper III of the thesis),
    with a resolution gamma as in networkx and igraph:

    .. math::

        Q = \frac{1}{2m} \sum_i e_{i \to C(i)}
            - \gamma \sum_c \frac{a_c^2}{4 m^2}

    where e_{i->C(i)} is the weight of i's entries inside its own community,
    a_c the sum of the weighted degrees k_i of community c and m the total
    edge weight. Self-loops follow networkx's convention: a loop of weight w
    adds 2w to its vertex's degree and w to m (:mod:`jaxmatch.community.modularity`
    gives the CSR form). Cost: O(entries + n log n) work, one sort of the labels
    (which groups arbitrary label values) and segment sums over the entries;
    traceable with fixed shapes.

    Args:
        g: the undirected graph (:class:`jaxmatch.Graph`, weighted or not).
        labels: one integer community label per vertex: any int32 values,
            vertices with equal labels form a community; of length ``g.n`` or
            ``g.vertex_cap`` (entries past ``g.n`` are ignored; under
            ``jit``/``vmap`` the length must be ``g.vertex_cap``).
        resolution: gamma, the scale of the null-model term (a finite number
            >= 0, default 1.0).

    Returns:
        Q as a scalar array of the weights' dtype; NaN when the graph has no
        edge weight (m = 0), as igraph returns (networkx raises).

    Raises:
        GraphInputError: before tracing, when ``g`` is not a
            :class:`jaxmatch.Graph` or is a batch (map with ``jax.vmap``),
            ``resolution`` is not a finite number >= 0 that fits the weights'
            dtype, or (eagerly) ``labels`` is not a 1-D integer array of
            length ``g.n`` or ``g.vertex_cap`` whose values fit int32.

    Example:
        Two triangles joined by an edge, split into the two triangles:

        >>> import jaxmatch
        >>> g = jaxmatch.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
        >>> round(float(jaxmatch.modularity(g, [0, 0, 0, 1, 1, 1])), 4)
        0.3571
    """
    _check_graph(g)
    _check_real(resolution, "resolution")
    labels = _labels(g, labels)
    return _modularity(g, labels, jnp.asarray(resolution, g.adj.weights.dtype))


# --------------------------------------------------------------------------
# input checks, shared with louvain (jaxmatch.community)


def _check_graph(g) -> None:
    check_type(g, Graph, "Graph.from_edges, jaxmatch.from_scipy or jaxmatch.read")
    check_not_batch(g.n, "graphs (from jaxmatch.stack)", "jax.vmap(lambda g: louvain(g).labels)(batch)")


def _check_real(value, name, *, minimum=0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < minimum:
        raise GraphInputError(f"{name} must be a finite number >= {minimum}, got {value!r}")
    top = float(np.finfo(_float_dtype()).max)
    if abs(value) > top:  # it becomes a scalar of the weights' dtype
        raise GraphInputError(f"{name} = {value!r} does not fit {_float_dtype()} (at most {top:.4g})")


@jax.jit
def _modularity(g, labels, resolution):
    return partition_modularity(g.adj.src, g.adj.indices, g.adj.weights, labels, g.n, resolution)


def _labels(g, labels):
    """Labels padded to the vertex capacity; checked on the host when concrete."""
    if is_traced(labels) or is_traced(g.n):
        if labels.shape[-1] != g.vertex_cap:
            raise GraphInputError(
                f"under jit/vmap labels must have the vertex capacity {g.vertex_cap} as length, "
                f"got shape {labels.shape}")
        return labels.astype(jnp.int32)
    try:
        a = np.asarray(labels)
    except (ValueError, TypeError):
        raise GraphInputError("labels must be a 1-D integer array (one per vertex), "
                              "got a ragged or nested sequence") from None
    n = int(g.n)
    if a.ndim != 1 or a.shape[0] not in (n, g.vertex_cap):
        raise GraphInputError(
            f"labels must have shape ({n},) or ({g.vertex_cap},) (one per vertex), got {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise GraphInputError(f"labels must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.size and (a[:n].min(initial=0) < -INT32_MAX or a[:n].max(initial=0) > INT32_MAX):
        raise GraphInputError("labels must fit int32")
    out = np.zeros(g.vertex_cap, np.int32)
    out[:n] = a[:n]
    return device(out)
