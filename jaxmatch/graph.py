"""Graph pytrees: padded CSR arrays on the device, built and validated on the host.

This is the public home of the graph containers (:class:`BipartiteGraph`,
:class:`Graph`, :class:`FlowNetwork`, :class:`CSR`), of
:class:`GraphInputError`, :func:`from_scipy`, and of :func:`stack` /
:func:`unstack`, which turn a list of graphs into one batch for ``jax.vmap``
and back, and :func:`disjoint_union` / :func:`split_union`, which lay a batch's
graphs side by side as one graph and read a per-vertex answer back. The pieces live in private modules by responsibility:
``jaxmatch._validate`` (the input checks), ``jaxmatch._csr`` (the pytree
machinery and CSR arrays), ``jaxmatch._build`` (the arrays of one graph or a
batch, built with NumPy), ``jaxmatch._containers`` (the classes;
``jaxmatch._network`` the flow network) and ``jaxmatch._sparse`` (scipy
matrices).

Every container is a frozen dataclass registered as a JAX pytree. Array fields
hold the data; only the *capacities* (array lengths) are static, so graphs of
equal capacity share one compilation and stack into a batch for ``jax.vmap``.
True sizes (``n_rows``, ``n``, ``n_edges`` ...) are scalar int32 arrays.

Padding rule: entries past the true size point at the *sentinel* id, which is
the capacity of the vertex set they index (one past the last valid slot), so
``jax.ops.segment_*`` with ``num_segments=capacity`` and
``.at[...].set(..., mode="drop")`` ignore them.

Input rules (checked by the constructors, on the host, before anything is traced):

* ids are integer arrays, ``0 <= id < n``; floats, bools and out-of-range ids
  raise :class:`GraphInputError`;
* counts must fit int32 (capacities are at most ``2**31 - 1``);
* weights must be finite, non-negative for a :class:`Graph` (a
  :class:`BipartiteGraph`'s, the costs of an assignment, may be negative),
  and (summed over repeated edges) fit the float dtype (float32 unless 64-bit
  mode is on); capacities integer and non-negative; ragged or nested
  sequences are rejected;
* duplicates: a :class:`BipartiteGraph` stores a repeated edge once
  (``duplicates="merge"``), with the sum of its weights; a :class:`Graph` adds the weights of repeated
  edges, like ``scipy.sparse`` does when it sums duplicates
  (``duplicates="sum"``); ``duplicates="error"`` rejects them instead;
  a :class:`FlowNetwork` keeps parallel arcs as separate arcs;
* self-loops: a :class:`Graph` keeps them (one diagonal entry holding the
  loop's weight, as in its scipy adjacency matrix); algorithms that cannot use
  them say so; a :class:`FlowNetwork` keeps them (they never carry flow).
"""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import jax
import numpy as np

from jaxmatch._containers import GRAPH_TYPES, BipartiteGraph, FlowNetwork, Graph, _size_leaf
from jaxmatch._csr import CSR, _csr, _i32
from jaxmatch._ops import cores, device, is_traced
from jaxmatch._sparse import _from_scipy
from jaxmatch._validate import GraphInputError, _count, next_pow2, size_class

__all__ = [
    "GraphInputError", "CSR", "BipartiteGraph", "Graph", "FlowNetwork",
    "stack", "unstack", "from_scipy", "next_pow2",
]


_KINDS = {"bipartite": BipartiteGraph, "graph": Graph, "flow": FlowNetwork}


def _kind(kind, default):
    kind = default if kind is None else kind
    if isinstance(kind, type) and kind in _KINDS.values():
        return kind
    if isinstance(kind, str) and kind in _KINDS:
        return _KINDS[kind]
    raise GraphInputError(
        f"kind must be one of {tuple(_KINDS)} or a jaxmatch graph class, got {kind!r}")


def from_scipy(A, kind="bipartite", *, symmetrize=None, weighted=None, **kw):
    """Build a jaxmatch graph from a scipy sparse array or matrix (any format: csr, csc, coo, lil, dok ...).

    ``kind="bipartite"``: the biadjacency pattern, ``n_rows x n_cols = A.shape``.
    A stored entry is an edge only if it is nonzero (explicit zeros are
    dropped, as ``A.eliminate_zeros()`` would do on a copy; note that
    ``scipy.sparse.csgraph.maximum_bipartite_matching`` instead counts every
    stored entry, explicit zeros included). Unweighted by default;
    ``weighted=True`` makes the values the edge weights (real, finite, any
    sign: the costs of an assignment): duplicate entries are summed first, as
    ``A.tocsr()`` sums them, and an entry that is, or sums to, zero is no
    edge, as in ``scipy.sparse.csgraph.min_weight_full_bipartite_matching``.

    ``kind="graph"``: ``A`` must be square and exactly symmetric (pattern and
    values; only the pattern with ``weighted=False``), else the first
    asymmetric entry in row-major order is named; ``symmetrize=True`` uses
    ``max(A, A.T)`` instead (a missing entry counts as absent). Every stored
    entry is an edge (scipy.sparse.csgraph's convention: an explicit zero is
    an edge of weight 0; the stored entries are those of ``A.tocoo()``, which
    for BSR include the zeros inside stored blocks); the diagonal holds
    self-loop weights. The graph is
    weighted unless ``weighted=False`` (a boolean matrix defaults to False);
    the upper triangle, diagonal included, goes to :meth:`Graph.from_edges`.

    ``kind="flow"``: ``A`` square with an integer dtype (scipy's
    ``maximum_flow`` has the same rule); every stored entry ``A[i, j]`` is an
    arc ``i -> j`` of that capacity, in the order of ``A.tocoo()``.

    Duplicate entries of a non-canonical input (e.g. COO) are kept and go to
    ``from_edges``, whose ``duplicates=`` rule applies: merged for bipartite
    (their weights summed), summed for graphs (as scipy sums them), parallel
    arcs for flow. The cost
    is one ``A.tocoo()`` and the ``from_edges`` build, O(nnz log nnz) on the
    host.

    Args:
        A: a 2-D scipy sparse array or matrix.
        kind: ``"bipartite"`` (default), ``"graph"``, ``"flow"``, or one of
            the classes :class:`BipartiteGraph`, :class:`Graph`,
            :class:`FlowNetwork`.
        symmetrize: ``kind="graph"`` only: True uses ``max(A, A.T)``
            instead of requiring a symmetric ``A`` (default None: require it).
        weighted: ``kind="graph"``: False builds an unweighted graph from
            the pattern (default None: weighted unless ``A`` is boolean).
            ``kind="bipartite"``: True makes the values the edge weights
            (default None: unweighted). Refused for ``kind="flow"``.
        **kw: passed to the ``from_edges`` constructor (``duplicates=``,
            ``layout=``, capacities).

    Returns:
        A :class:`BipartiteGraph`, :class:`Graph` or :class:`FlowNetwork`.

    Raises:
        GraphInputError: when ``A`` is not a 2-D scipy sparse matrix, for an
            unknown ``kind``, ``symmetrize=`` with a kind other than graph,
            ``weighted=`` with ``kind="flow"``, non-real or non-finite values
            with ``weighted=True`` for bipartite, a non-square matrix for a graph or network, an asymmetric
            matrix for ``kind="graph"`` (naming the first asymmetric entry),
            non-integer values for ``kind="flow"``, or any error of
            ``from_edges``.

    Example:
        >>> import scipy.sparse as sp
        >>> import jaxmatch
        >>> g = jaxmatch.from_scipy(sp.csr_array([[0, 1], [1, 1]]))
        >>> int(g.n_rows), int(g.n_cols), int(g.n_edges)
        (2, 2, 3)
        >>> int(jaxmatch.from_scipy(sp.csr_array([[0, 2.0], [2.0, 0]]), "graph").n_edges)
        1
        >>> w = jaxmatch.from_scipy(sp.csr_array([[0, -1.5], [2.0, 0]]), weighted=True)
        >>> w.weighted, w.edge_weights().tolist()
        (True, [-1.5, 2.0])
    """
    cls = _kind(kind, "bipartite")
    name = next(k for k, c in _KINDS.items() if c is cls)
    return _from_scipy(A, cls, name, symmetrize=symmetrize, weighted=weighted, **kw)


def stack(graphs):
    """Pad graphs of one type to common capacities and stack them into one batch for ``jax.vmap``.

    The batch is a container of the same type whose array fields gain a
    leading axis of length B (one entry per graph), so that
    ``jax.vmap(solver)(batch)`` solves every graph in one compiled program.
    Capacities are the largest among the graphs, rounded up to powers of
    two. Graphs that already share one structure at power-of-two capacities
    (type, capacities, layout, weights or not, dtypes: e.g. the graphs
    :func:`unstack` returns) are stacked array by array as they are; any
    other list goes through one host transfer and one vectorised
    ``from_edges(..., graph_index=...)`` pass over all the edges, O(M log M)
    for M edges in all.

    Args:
        graphs: a non-empty sequence of single graphs of one type
            (:class:`BipartiteGraph`, :class:`Graph` or :class:`FlowNetwork`;
            networks in one residual layout). A list of graphs some of which
            are weighted gives a weighted batch: for :class:`Graph`, unit
            weights for the others; bipartite graphs must be all weighted
            or all unweighted.

    Returns:
        The batch, a container of the graphs' type.

    Raises:
        GraphInputError: for an empty or non-sequence argument, graphs of
            different types or layouts, a mix of weighted and unweighted
            bipartite graphs, or graphs that are already batches.

    Example:
        >>> import jaxmatch
        >>> gs = [jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1]),
        ...       jaxmatch.BipartiteGraph.from_edges([0], [0])]
        >>> b = jaxmatch.stack(gs)
        >>> b.n_edges.tolist(), b.row_cap, b.by_row.indptr.tolist()
        ([3, 1], 2, [[0, 1, 3], [0, 1, 1]])
    """
    try:
        graphs = list(graphs)
    except TypeError:
        raise GraphInputError(f"stack needs a sequence of jaxmatch graphs, got {type(graphs).__name__}") from None
    if not graphs:
        raise GraphInputError("stack needs at least one graph")
    kind = type(graphs[0])
    if kind not in GRAPH_TYPES or any(type(g) is not kind for g in graphs):
        raise GraphInputError(f"stack needs graphs of one jaxmatch type, got {sorted({type(g).__name__ for g in graphs})}")
    if any(np.ndim(_size_leaf(g)) for g in graphs):
        raise GraphInputError("stack takes single graphs, not batches")
    caps = graphs[0].capacities()
    one = jax.tree_util.tree_structure(graphs[0])
    leaves, every = jax.tree_util.tree_flatten(graphs)   # one flattening pass over the whole list
    fields = [leaves[i::one.num_leaves] for i in range(one.num_leaves)]
    if (every == jax.tree_util.tree_structure([graphs[0]] * len(graphs))
            and all(len({x.dtype for x in f}) == 1 for f in fields) and all(next_pow2(v) == v for v in caps.values())):
        # one structure (type, capacities, layout, weights or not, dtypes) at powers of two: the
        # batch's rows are the graphs' padded arrays as they are (np.array of equal shapes: 3x np.stack's speed)
        return jax.tree_util.tree_unflatten(one, [device(np.array(f)) for f in fields])
    caps = {k: next_pow2(max(g.capacities()[k] for g in graphs)) for k in caps}
    if kind is FlowNetwork:
        layouts = {g.layout for g in graphs}
        if len(layouts) > 1:
            raise GraphInputError(f"stack needs one residual layout, got {sorted(layouts)}")
    # otherwise one transfer to the host and one vectorised pass over all the edges (the batch
    # constructors), no per-graph padding
    host = jax.device_get(graphs)
    parts = [g.edges() for g in host]
    gid = np.repeat(np.arange(len(parts)), [p[0].size for p in parts])
    cat = [np.concatenate([p[i] for p in parts]) for i in range(2)]
    if kind is BipartiteGraph:
        w = None
        if any(g.weighted for g in host):
            if not all(g.weighted for g in host):
                raise GraphInputError("stack needs bipartite graphs that are all weighted or all unweighted, got a "
                                      "mix (give every graph its weights: BipartiteGraph.from_edges(..., weights=))")
            w = np.concatenate([g.edge_weights() for g in host])
        return BipartiteGraph.from_edges(*cat, np.array([p[2] for p in parts]), np.array([p[3] for p in parts]),
                                         weights=w, graph_index=gid, **caps)
    if kind is Graph:   # a weighted batch if any graph is (unit weights for the others)
        w = None
        if any(g.weighted for g in graphs):
            w = np.concatenate([p[2] if p[2] is not None else np.ones(p[0].size) for p in parts])
        return Graph.from_edges(*cat, w, np.array([p[3] for p in parts]), graph_index=gid, **caps)
    return FlowNetwork.from_edges(*cat, np.concatenate([p[2] for p in parts]), np.array([p[3] for p in parts]),
                                  layout=graphs[0].layout, graph_index=gid, **caps)


def unstack(batch, *, trim: bool = False):
    """Split a batch made by :func:`stack` (or a ``graph_index=`` constructor) into its graphs.

    By default the batch makes one transfer to the host, and each graph is a
    view of it at the batch's capacities, with NumPy arrays (as
    :func:`jax.device_get` gives): no per-graph work beyond slicing, so it
    scales to many small graphs (experiments/RESULTS.md has the timings). A
    solver takes such a graph as it is (its arrays go to the device with the
    call; ``jax.device_put(g)`` moves one ahead), and :func:`stack` restacks
    them without copying edge by edge. ``trim=True`` rebuilds each graph on
    the device at its own default capacities instead (one ``from_edges`` per
    graph).

    Args:
        batch: a batched :class:`BipartiteGraph`, :class:`Graph` or
            :class:`FlowNetwork` (array fields with one leading axis).
        trim: False (default) for host views at the batch's capacities; True
            to rebuild each graph at its own capacities.

    Returns:
        A list of the B graphs, in batch order.

    Raises:
        GraphInputError: when ``batch`` is not a jaxmatch graph, or is a
            single graph rather than a batch.

    Example:
        >>> import jaxmatch
        >>> b = jaxmatch.stack([jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1]),
        ...                     jaxmatch.BipartiteGraph.from_edges([0], [0])])
        >>> g = jaxmatch.unstack(b)[1]
        >>> int(g.n_edges), g.row_cap, jaxmatch.unstack(b, trim=True)[1].row_cap
        (1, 2, 1)
    """
    if type(batch) not in GRAPH_TYPES:
        raise GraphInputError(f"unstack needs a batched jaxmatch graph, got {type(batch).__name__}")
    if np.ndim(_size_leaf(batch)) != 1:
        raise GraphInputError("unstack needs a batch made by stack (array fields with one leading axis)")
    leaves, tree = jax.tree_util.tree_flatten(jax.device_get(batch))
    graphs = [jax.tree_util.tree_unflatten(tree, row) for row in zip(*(list(x) for x in leaves))]   # row views
    return [g.with_capacity() for g in graphs] if trim else graphs


def disjoint_union(batch, *, at_least=None):
    """One graph made of a batch's graphs side by side, and where each graph's ids start in it.

    The union has no edge between two of the batch's graphs, so any answer
    that splits by connected piece (a maximum matching, a maximum flow with
    every network's source and sink, a Suitor matching, a stable matching)
    is, read piece by piece, an answer for each graph. One solve of the
    union runs the single-graph solver's steps, whose work is proportional
    to the edges still active; ``jax.vmap`` instead costs every graph's
    padded lanes in every step until the slowest graph finishes. The
    solvers that split by component take a batch eagerly through this route
    (:func:`jaxmatch.maximum_matching`, :func:`jaxmatch.max_flow`). Built
    on the host in one vectorised pass: O(total edges) NumPy work, no sort.

    Args:
        batch: a batched :class:`BipartiteGraph`, :class:`Graph` or
            :class:`FlowNetwork` (from :func:`stack` or a ``graph_index=``
            constructor).
        at_least: optional dict from size fields (as in the offsets below)
            to totals the union's capacities must also hold: unions of
            several batches given their largest totals share one compiled
            program.

    Returns:
        ``(graph, offsets)``: the union, a single graph of the batch's type at
        the capacities of :func:`jaxmatch._validate.size_class` (powers of two
        up to 2^16, above that under an eighth of padding: each of the
        solver's steps passes over every slot), and a dict from each of its
        true-size fields (``n_rows``, ``n_cols``, ``n_edges`` for a
        :class:`BipartiteGraph`; ``n``, ``n_edges``, ``n_entries`` for a
        :class:`Graph`; ``n``, ``n_arcs`` for a :class:`FlowNetwork`) to an
        int64 NumPy array of B + 1 prefix sums: graph b's vertex (row, column,
        arc, edge in :meth:`~BipartiteGraph.edges` order) ``i`` is the
        union's ``offsets[field][b] + i``.

    Raises:
        GraphInputError: when ``batch`` is not a batch of jaxmatch graphs.

    Example:
        >>> import jaxmatch
        >>> b = jaxmatch.stack([jaxmatch.BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1]),
        ...                     jaxmatch.BipartiteGraph.from_edges([0], [0])])
        >>> g, off = jaxmatch.disjoint_union(b)
        >>> g.edges()[:2], off["n_rows"].tolist()
        ((array([0, 1, 1, 2], dtype=int32), array([1, 0, 1, 2], dtype=int32)), [0, 2, 3])
    """
    if type(batch) not in GRAPH_TYPES or np.ndim(_size_leaf(batch)) != 1:
        raise GraphInputError("disjoint_union needs a batch of jaxmatch graphs (from stack or graph_index=)")
    b = jax.device_get(batch)
    sizes = {f: np.asarray(getattr(b, f), np.int64) for f in _SIZE_FIELDS[type(batch)]}
    off = {f: np.concatenate([[0], np.cumsum(s)]) for f, s in sizes.items()}
    for f in off:
        _count(int(off[f][-1]), f"the union's {f}")

    def pick(x, count, shift=None):
        """The first ``count[g]`` entries of row g of ``x``, graph after graph, each plus ``shift[g]``."""
        x = np.asarray(x)
        x = x if shift is None else x + shift[:-1, None].astype(x.dtype)
        if count.size and int(count.min()) >= x.shape[1]:   # every row full (graphs of one size): a view
            return x.reshape(-1)
        return x[np.arange(x.shape[1])[None, :] < count[:, None]]

    def caps(**fields):
        """Each capacity keyword's size class, from the union's total of its size field."""
        return {k: size_class(max(int(off[f][-1]), (at_least or {}).get(f, 0))) for k, f in fields.items()}

    def sorted_csr(csr, count, src_off, dst_off, n_cap, dst_cap, e_cap):
        """The union's CSR of the batch's CSR: each graph's entries, already sorted by (src, dst), shifted
        into the union's ids are sorted there too (graph b's ids all lie below graph b + 1's)."""
        w = None if csr.weights is None else pick(csr.weights, count)
        return _csr(pick(csr.src, count, src_off), pick(csr.indices, count, dst_off), n_cap, dst_cap, e_cap, w,
                    None if w is None else w.dtype, order="sorted")

    if isinstance(b, BipartiteGraph):
        c = caps(rc="n_rows", cc="n_cols", ec="n_edges")
        g = BipartiteGraph(by_col=sorted_csr(b.by_col, sizes["n_edges"], off["n_cols"], off["n_rows"], c["cc"],
                                             c["rc"], c["ec"]),
                           by_row=sorted_csr(b.by_row, sizes["n_edges"], off["n_rows"], off["n_cols"], c["rc"],
                                             c["cc"], c["ec"]),
                           n_rows=_i32(off["n_rows"][-1]), n_cols=_i32(off["n_cols"][-1]),
                           n_edges=_i32(off["n_edges"][-1]), row_cap=c["rc"], col_cap=c["cc"], edge_cap=c["ec"])
    elif isinstance(b, Graph):
        c = caps(vc="n", ec="n_entries")
        g = Graph(adj=sorted_csr(b.adj, sizes["n_entries"], off["n"], off["n"], c["vc"], c["vc"], c["ec"]),
                  n=_i32(off["n"][-1]), n_edges=_i32(off["n_edges"][-1]), n_entries=_i32(off["n_entries"][-1]),
                  vertex_cap=c["vc"], entry_cap=c["ec"], weighted=b.weighted)
    else:   # each network's residual arcs, in its own sorted order, shifted into the union's ids and places
        c, arcs, res = caps(vc="n", ac="n_arcs"), sizes["n_arcs"], 2 * sizes["n_arcs"]
        pad = lambda x, size, fill: np.pad(x, (0, size - x.size), constant_values=fill)  # noqa: E731
        g = FlowNetwork(tail=_i32(pad(pick(b.tail, arcs, off["n"]), c["ac"], c["vc"])),
                        head=_i32(pad(pick(b.head, arcs, off["n"]), c["ac"], c["vc"])),
                        cap=device(pad(pick(b.cap, arcs), c["ac"], 0)),
                        res=sorted_csr(b.res, res, off["n"], off["n"], c["vc"], c["vc"], 2 * c["ac"]),
                        res_arc=_i32(pad(pick(b.res_arc, res, off["n_arcs"]), 2 * c["ac"], c["ac"])),
                        res_forward=device(pad(pick(b.res_forward, res), 2 * c["ac"], False)),
                        res_rev=_i32(np.concatenate([pick(b.res_rev, res, 2 * off["n_arcs"]),
                                                     np.arange(2 * off["n_arcs"][-1], 2 * c["ac"])])),
                        n=_i32(off["n"][-1]), n_arcs=_i32(off["n_arcs"][-1]), vertex_cap=c["vc"], arc_cap=c["ac"],
                        layout=b.layout)
    return g, off


def eager_batch(g, kind) -> bool:
    """Whether ``g`` is a batch of ``kind`` graphs (from :func:`stack` or a ``graph_index=`` constructor)
    given eagerly: the solvers route it themselves (:func:`disjoint_union`, :func:`batch_map`); a
    batch under ``jit`` outside ``vmap`` is refused by their input checks instead."""
    return isinstance(g, kind) and np.ndim(_size_leaf(g)) == 1 and not is_traced(_size_leaf(g))


def batch_map(solver, batches: tuple, options: dict):
    """Batches given eagerly to a solver whose answers do not split by component (:func:`jaxmatch.louvain`,
    :func:`jaxmatch.leiden`: one batch of graphs; :func:`jaxmatch.stable_marriage`: the men's and the
    women's batches): on the GPU one jitted ``jax.vmap``; elsewhere one jitted ``lax.map``, each
    instance run alone to its own end (on a CPU faster than the vmap, whose loops run every graph's
    lanes until the slowest graph ends, and in the memory of one instance; the same answers:
    experiments/RESULTS.md, sessions 48 and 51).

    Args:
        solver: the public solver, called as ``solver(*instance, **options, throw=False)``.
        batches: the solver's stacked batches, one per positional argument.
        options: the solver's keywords (hashable values).

    Returns:
        The solver's result with a leading batch axis.
    """
    return _batch_program(solver, tuple(sorted(options.items())), batch_route() == "vmap")(*batches)


@functools.lru_cache(maxsize=32)
def _batch_program(solver, options: tuple, vmap: bool):
    one = functools.partial(solver, **dict(options), throw=False)
    return jax.jit(jax.vmap(one) if vmap else lambda *b: jax.lax.map(lambda x: one(*x), b))


def batch_route() -> str:
    """How :func:`jaxmatch.maximum_matching` and :func:`jaxmatch.max_flow` solve a batch given eagerly:
    ``"vmap"`` (one jitted ``jax.vmap``) on the GPU, ``"union"`` (one solve of the
    :func:`disjoint_union`) elsewhere: the faster of the two on each (experiments/RESULTS.md, session
    23: on the H100 vmap is 4-27x faster; on a 2-core CPU the union 2.1-8.6x)."""
    return "vmap" if jax.default_backend() == "gpu" else "union"


_SIZE_FIELDS = {BipartiteGraph: ("n_rows", "n_cols", "n_edges"), Graph: ("n", "n_edges", "n_entries"),
                FlowNetwork: ("n", "n_arcs")}


UNION_PART = 1 << 18   # a union's edges or arcs per part (solve_union; the measured best, RESULTS session 51)


def solve_union(batch, one):
    """Solve a batch given eagerly off the GPU through disjoint unions of its graphs, in parts.

    The batch is cut into ``ceil(edges / UNION_PART)`` runs of consecutive graphs, at least two past
    ``UNION_PART / 2`` (``edges``: the whole batch's, or arcs; the parts depend on the data, not the machine),
    each run's :func:`disjoint_union` at the capacities of the largest (one compiled program), and
    the parts are solved on as many threads as the process has CPU cores: XLA's CPU loops run
    mostly on one core each (the speed-up: experiments/RESULTS.md, session 50). Small unions are
    solved faster per graph too (their steps stop with their own slowest graph, and their arrays
    stay in cache).

    Args:
        batch: the stacked batch.
        one: ``one(graphs, union, offsets)`` -> ``(arrays, result)``: a tuple of NumPy arrays with
            a leading axis over the part's graphs (``graphs``, the part's ``slice`` of the batch),
            and the solver's result for the union, whose ``status`` and ``stats`` each of the
            part's graphs gets.

    Returns:
        ``(arrays, status, stats)`` for the whole batch: ``one``'s arrays, the parts' joined along
        the first axis, and each graph's status and dict of counters, ``[B]`` arrays.
    """
    b = jax.device_get(batch)
    fields = _SIZE_FIELDS[type(b)]
    count = int(np.shape(getattr(b, fields[0]))[0])
    edges = int(np.sum(getattr(b, fields[-1]), dtype=np.int64))
    parts = max(1, min(count, max(-(-edges // UNION_PART), 2 if 2 * edges > UNION_PART else 1)))
    cuts = np.linspace(0, count, parts + 1).astype(np.int64)
    runs = [slice(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:])]
    totals = {f: max(int(np.sum(getattr(b, f)[r], dtype=np.int64)) for r in runs) for f in fields}

    def solve(run):
        arrays, res = one(run, *disjoint_union(jax.tree.map(lambda x: x[run], b), at_least=totals))
        each = lambda x: np.full(run.stop - run.start, np.asarray(x))  # noqa: E731
        return arrays, each(res.status), {name: each(v) for name, v in res.stats.items()}

    if parts == 1 or cores() == 1:
        outs = [solve(r) for r in runs]
    else:
        with ThreadPoolExecutor(min(parts, cores())) as pool:
            outs = list(pool.map(solve, runs))
    arrays, status, stats = zip(*outs)
    return (tuple(np.concatenate(xs) for xs in zip(*arrays)), np.concatenate(status),
            {name: np.concatenate([st[name] for st in stats]) for name in stats[0]})


def split_union(x, offsets, capacity: int, fill=0) -> np.ndarray:
    """A union's per-vertex (or per-arc) array as the batch's ``[B, capacity]`` array.

    Row b holds the union's ``x[offsets[b]:offsets[b + 1]]``, then ``fill``
    (the padding of the batch's graphs, as ``jax.vmap`` leaves it).

    Args:
        x: an array over the union's vertices, rows, columns or arcs.
        offsets: the matching prefix sums from :func:`disjoint_union`.
        capacity: the batch's capacity of that set.
        fill: the value past each graph's true size.

    Returns:
        A NumPy array of shape ``[B, capacity]``.
    """
    x, offsets = np.asarray(x), np.asarray(offsets)
    pos = offsets[:-1, None] + np.arange(capacity)[None, :]
    keep = pos < offsets[1:, None]
    return np.where(keep, x[np.where(keep, pos, 0)] if x.size else fill, fill).astype(x.dtype)
