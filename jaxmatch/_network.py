"""The flow network container, :class:`FlowNetwork`, and its residual layouts (``LAYOUTS``).

A frozen dataclass registered as a JAX pytree (:mod:`jaxmatch._csr`), like the
graph classes of :mod:`jaxmatch._containers`, which re-exports it with them:
``from_edges`` checks its options and builds the arrays on the host
(:mod:`jaxmatch._build`), ``from_scipy`` reads a sparse matrix
(:mod:`jaxmatch._sparse`). Users import the class from :mod:`jaxmatch` or
:mod:`jaxmatch.graph`.
"""
from __future__ import annotations

import jax
import numpy as np

from jaxmatch._build import _flow_batch, _flow_fields
from jaxmatch._csr import CSR, _pytree, _scalar, _static
from jaxmatch._sparse import _from_scipy
from jaxmatch._validate import GraphInputError


LAYOUTS = ("bcsr", "rcsr")


@_pytree
class FlowNetwork:
    """A directed network with integer arc capacities, and the layout of its residual graph.

    Arc ``a`` goes from ``tail[a]`` to ``head[a]`` with capacity
    ``cap[a] >= 0``; the arcs keep the caller's order, parallel arcs stay
    separate and loops are kept (they never carry flow). For a flow f every
    input arc a gives two residual arcs: a forward one of capacity
    cap[a] - f[a] and a reverse one of capacity f[a]. The ``2 * arc_cap``
    residual arcs form the CSR ``res`` keyed by their tail; ``res_arc``,
    ``res_forward`` and ``res_rev`` map each one to its input arc, its
    direction and the position of its reverse arc.

    The two layouts are those of the WBPR paper (Hsieh, Lin, Kuo,
    "Engineering a workload-balanced push-relabel algorithm for massive graphs
    on GPUs") and differ in the order inside a vertex's row: ``"bcsr"``
    (bidirectional CSR) mixes out- and in-arcs sorted by head, so a reverse
    arc can be found by binary search; ``"rcsr"`` keeps the forward arcs first
    and the reverse arcs after them (the paper's second, reverse CSR).
    ``res_rev`` is stored for both, so the solvers find a reverse arc in O(1).

    Attributes:
        tail: int32 ``[arc_cap]``, the tail of each input arc (``vertex_cap`` in padding).
        head: int32 ``[arc_cap]``, the head of each input arc (``vertex_cap`` in padding).
        cap: ``[arc_cap]`` arc capacities, int32 (int64 in 64-bit mode), 0 in padding.
        res: :class:`~jaxmatch.CSR` of the residual arcs (``res.src`` their
            tails, ``res.indices`` their heads).
        res_arc: int32 ``[2 * arc_cap]``, the input arc of each residual arc
            (``arc_cap`` in padding).
        res_forward: bool ``[2 * arc_cap]``, True for a forward residual arc.
        res_rev: int32 ``[2 * arc_cap]``, the position of each residual arc's
            reverse arc (a padding entry points at itself).
        n: int32 scalar (``[B]`` in a batch), the number of vertices.
        n_arcs: int32 scalar, the number of input arcs.
        vertex_cap: static int, the padded number of vertices.
        arc_cap: static int, the padded number of input arcs.
        layout: static str, ``"bcsr"`` or ``"rcsr"``.

    Example:
        >>> import jaxmatch
        >>> net = jaxmatch.FlowNetwork.from_edges([0, 0, 1], [1, 2, 2], [3, 2, 1])
        >>> int(net.n), int(net.n_arcs), net.res.indices.shape
        (3, 3, (8,))
        >>> net.res.indices.tolist()[:6], net.res_forward.tolist()[:6]
        ([1, 2, 0, 2, 0, 1], [True, True, False, True, False, False])
    """

    tail: jax.Array
    head: jax.Array
    cap: jax.Array
    res: CSR
    res_arc: jax.Array
    res_forward: jax.Array
    res_rev: jax.Array
    n: jax.Array
    n_arcs: jax.Array
    vertex_cap: int = _static()
    arc_cap: int = _static()
    layout: str = _static()

    @classmethod
    def from_edges(cls, tail, head, cap, n=None, *, layout=None,
                   vertex_capacity=None, arc_capacity=None, graph_index=None):
        """Build a flow network, or a batch of them, from arc arrays.

        Arc ``k`` goes from ``tail[k]`` to ``head[k]`` with capacity
        ``cap[k]``. The residual arcs are sorted once into the chosen
        layout on the host: O(m log m) work for m arcs. With ``graph_index``
        (the network of each arc; ``n`` an array of sizes, ids local to each
        network, arcs of a network in their input order) the result is the
        batch that :func:`~jaxmatch.stack` makes of the networks built one by
        one in the same layout, in one pass.

        Args:
            tail: int array ``[m]``, the tail of each arc (0-based).
            head: int array ``[m]``, the head of each arc.
            cap: int array ``[m]`` of capacities >= 0 (integers, as for
                scipy's ``maximum_flow``; beyond int32 they need 64-bit mode).
            n: the number of vertices (default: the largest id + 1); with
                ``graph_index``, an int array of one size per network.
            layout: ``"bcsr"`` or ``"rcsr"``, the residual layout (see the
                class); None (default): ``"bcsr"`` for one network,
                ``"rcsr"`` for a batch (``graph_index``). The solvers give
                the same answers in both; RCSR's push steps take one prefix
                sum where BCSR's take two, 10-20% of a batch's solve on a
                CPU (experiments/RESULTS.md, session 52), and BCSR is the
                layout the GPU kernels were tuned on.
            vertex_capacity: the padded number of vertices, at least ``n``
                (default: the next power of two).
            arc_capacity: the padded number of input arcs (default likewise);
                the residual arrays hold twice as many.
            graph_index: int array ``[m]``, the network of each arc; None
                (default) builds one network.

        Returns:
            The :class:`FlowNetwork`; with ``graph_index``, the batch.

        Raises:
            GraphInputError: for ids or capacities that are not integers, ids
                out of range, negative capacities, capacities beyond the
                integer dtype, an unknown layout, a capacity below its size,
                or a count beyond int32.
        """
        if layout is None:
            layout = "bcsr" if graph_index is None else "rcsr"
        if layout not in LAYOUTS:
            raise GraphInputError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if graph_index is not None:
            return FlowNetwork(**_flow_batch(tail, head, cap, n, graph_index, layout,
                                             (vertex_capacity, arc_capacity)))
        return cls(**_flow_fields(tail, head, cap, n, layout, vertex_capacity, arc_capacity))

    @classmethod
    def from_scipy(cls, A, **kw):
        """The network whose arcs are the stored entries of a square integer scipy sparse matrix.

        Args:
            A: a square scipy sparse array or matrix with an integer dtype.
            **kw: the keywords of :meth:`from_edges` (``layout=``, capacities).

        Returns:
            ``from_scipy(A, kind="flow", **kw)``.
        """
        return _from_scipy(A, FlowNetwork, "flow", **kw)

    def edges(self):
        """The arcs, copied to the host.

        Returns:
            ``(tail, head, cap, n)``: NumPy arrays of the arcs in their input
            order, and the number of vertices.
        """
        m = int(self.n_arcs)
        return (np.asarray(self.tail)[:m], np.asarray(self.head)[:m], np.asarray(self.cap)[:m],
                int(self.n))

    def capacities(self) -> dict:
        """The capacities, as the keywords of :meth:`from_edges`.

        Returns:
            ``{"vertex_capacity": ..., "arc_capacity": ...}``.
        """
        return dict(vertex_capacity=self.vertex_cap, arc_capacity=self.arc_cap)

    def with_capacity(self, **caps) -> "FlowNetwork":
        """The same network, in the same layout, padded to other capacities.

        Args:
            **caps: ``vertex_capacity``, ``arc_capacity``; a missing one
                becomes the power of two of the true size.

        Returns:
            A new :class:`FlowNetwork`, rebuilt from :meth:`edges`.
        """
        return FlowNetwork.from_edges(*self.edges(), layout=self.layout, **caps)

    def with_layout(self, layout: str) -> "FlowNetwork":
        """The same network, at the same capacities, in another residual layout.

        Args:
            layout: ``"bcsr"`` or ``"rcsr"``.

        Returns:
            A new :class:`FlowNetwork`, rebuilt from :meth:`edges`.
        """
        return FlowNetwork.from_edges(*self.edges(), layout=layout, **self.capacities())

    def __repr__(self):
        return (f"FlowNetwork(n={_scalar(self.n)}, n_arcs={_scalar(self.n_arcs)}, layout={self.layout!r}, "
                f"capacities=({self.vertex_cap}, {self.arc_cap}))")
