"""Options of the Louvain solver: the static :class:`Config` and the traced :class:`Options`.

:class:`Config` holds the knobs that change the compiled program (window
classes, the grouping method of a bucket, the bucket order, the sort method):
a hashable NamedTuple passed to ``jit`` as a static argument, so it is part of
the cache key and never a module global read at trace time.
:func:`jaxmatch.louvain` takes one as ``config=``. :class:`Options` holds the
numeric options as traced scalars (resolution, thresholds, bounds): changing
them does not recompile. ``DEFAULT_MAX_LEVELS`` and ``DEFAULT_MAX_ITERS`` are
the defaults of ``max_levels`` and ``max_iters``, and also the smallest static
sizes of the level and iteration records.
"""
from __future__ import annotations

from typing import NamedTuple

import jax

DEFAULT_MAX_LEVELS = 32
DEFAULT_MAX_ITERS = 100


class Config(NamedTuple):
    """The static knobs of :func:`jaxmatch.louvain`.

    Hashable, so ``jit`` takes it as a static argument and it is part of the
    cache key. The window classes, the in-row grouping and the sort method
    change the compiled program only: every value gives the same partition,
    bit for bit. ``buckets``, ``order`` and ``resolve_rounds`` change which moves are made.

    Attributes:
        single_class_max: entry capacities up to this use one window class,
            the whole capacity (no ``lax.switch``: under ``vmap`` a switch runs
            every branch). Default ``1 << 18``.
        window_min: the smallest window class of larger capacities: they get
            e_cap, 3/4, 1/2, 1/4, 1/8 of it (``fine_classes`` classes a factor
            2 apart), then classes a factor 4 apart down to ``window_min``
            (:func:`jaxmatch.community.size_classes.window_classes`). Default
            ``1 << 16``.
        shared_min: the smallest class when a vmapped batch shares its classes
            (``axis_name``). Default ``1 << 7``.
        fine_classes: the number of classes a factor 2 apart. Default 4.
        shift_max: buckets whose rows hold at most ``shift_max`` entries group
            their (vertex, C(j)) pairs by comparing each entry with the ones
            before it in its row; wider ones by a sort
            (:func:`jaxmatch.community.moves.move_bucket`). Default 32.
        shift_unroll: offsets compared per loop step of that in-row grouping.
            Default 4.
        resolve_rounds: rounds of conflict resolution
            (:func:`jaxmatch.community.moves.resolve_conflicts`). Default 2.
        buckets: which vertices move together in one step of a sweep: ``"degree"`` the
            paper's degree buckets (:data:`jaxmatch.community.buckets.BUCKETS`); ``"hash"``
            seven classes by a multiplicative hash of the vertex id, so that every step moves
            hubs and low-degree vertices together, as a sequential sweep in random order meets
            them; ``"auto"`` (default) ``"hash"`` on a level whose vertices of more than 319
            stored entries (the paper's top bucket) hold at least 1/256 of its entries,
            ``"degree"`` on the others
            (:func:`jaxmatch.community.buckets.vertex_buckets`; why:
            :mod:`jaxmatch.community.louvain`, "Buckets on levels with hubs").
        order: the order of the degree buckets in a sweep
            (:mod:`jaxmatch.community.louvain`, "Bucket order"): 0 the paper's,
            lowest degrees first; 1 highest first; 2 (default) lowest first on
            the first level, and on the coarse levels and in the refinement
            both orders from the same start, keeping the run at the higher
            modularity (one run on a level of hash classes: ``buckets``).
        sort_method: how :func:`jaxmatch.community.aggregation.pair_groups`
            and the wide buckets' grouping
            (:func:`jaxmatch.community.buckets.stable_sort_with_positions`) sort:
            ``"auto"`` (default: by ``jax.default_backend()``), ``"kv"``
            (key-value sorts, radix sorts on a GPU) or ``"key"`` (key-only or
            two-key sorts).
        run_sums: how the sorted grouping of a wide bucket
            (:func:`jaxmatch.community.moves.move_bucket`) adds up each (vertex, C(j)) pair's
            weights: ``"scatter"`` (a segment sum: one atomic add per entry on a GPU, and a
            hub's long runs pile them onto one address), ``"scan"`` (a segmented scan,
            :func:`jaxmatch._ops.run_totals`: no atomics, a fixed tree order), or ``"auto"``
            (default): the scan on a GPU, the segment sum elsewhere (where it is faster and
            adds in entry order, as the in-row grouping does, so both groupings give the same
            bits).
        one_device_entries: a sharded graph's coarse levels
            (:mod:`jaxmatch.community.sharded`) stay on the mesh while their
            graph holds more entries than this (counted before the devices'
            repeats merge, rounded up to a power of two), then move to one
            device. Default None: ``jaxmatch.community.sharded.MESH_ENTRIES``
            (2^23: past it the mesh was faster on 2 and 4 H100s), or fewer
            where the first device's free memory holds fewer at
            ``jaxmatch.community.sharded.ONE_DEVICE_BYTES_PER_ENTRY``.
    """
    single_class_max: int = 1 << 18
    window_min: int = 1 << 16
    shared_min: int = 1 << 7
    fine_classes: int = 4
    shift_max: int = 32
    shift_unroll: int = 4
    resolve_rounds: int = 2
    buckets: str = "auto"
    order: int = 2
    sort_method: str = "auto"
    run_sums: str = "auto"
    one_device_entries: int | None = None


DEFAULT = Config()


class Options(NamedTuple):
    """Traced options (changing them does not recompile)."""
    resolution: jax.Array
    threshold: jax.Array
    threshold_large: jax.Array
    large_graph: jax.Array
    max_levels: jax.Array    # levels run at most (<= the static level capacity)
    max_iters: jax.Array     # iterations of one level at most (<= the static iteration capacity)
    refine: jax.Array        # bool: refine the final partition on the input graph
    order: jax.Array         # bucket order (Config.order): 0 lowest degrees first, 1 highest first, 2 both
    coarse: jax.Array        # bool: the input is a coarse level (the sharded solver's): its level sweeps as one
