"""Static array lengths for data-dependent work: the window classes of the Louvain solver.

Shapes never depend on data inside ``jit``, yet a degree bucket or a coarse
level may hold a small part of the entry capacity. So the work runs on the
smallest of a few static lengths (*classes*) that holds it: one compiled copy
per class, picked at run time by a ``lax.switch`` (:func:`by_class`). A bucket
step uses :func:`window_classes` (fine steps near the capacity, where the big
buckets of meshes and road graphs fall); the once-per-level work (bucket
grouping, aggregation, the modularity of a sweep) uses the coarser
:func:`level_classes`. An entry capacity up to ``Config.single_class_max``
(the vmap case) has one class and no switch, since under ``vmap`` a switch
with a batched index runs every branch. Under ``jax.vmap(...,
axis_name=a)`` with ``axis=a`` the batch agrees on the class by a
``lax.pmax`` of the lengths: the switch index is then unbatched and one branch
runs, and small capacities get classes too (``shared``), down to
``Config.shared_min``. Every class gives the same answer.
"""
from __future__ import annotations

from functools import partial

from jax import lax

from jaxmatch._ops import smallest_fit, switch
from jaxmatch.community.config import DEFAULT, Config


def window_classes(e_cap: int, shared: bool = False, cfg: Config = DEFAULT) -> list[int]:
    """Static array lengths work may run on: [e_cap] when e_cap <= single_class_max,
    else e_cap, 3 e_cap / 4, e_cap / 2, e_cap / 4, e_cap / 8 (``fine_classes``
    classes a factor 2 apart, where the big buckets fall, and one between the
    first two: on sparse meshes and road graphs one bucket holds most entries,
    and a graph's entries fill half to all of its power-of-two capacity), then
    a factor 4 apart down to window_min (``cfg``). Each class compiles its own copy of
    the bucket step.

    ``shared``: the batch of a ``vmap`` picks one class for all its graphs
    (``axis_name``), so small capacities get classes too, down to shared_min."""
    sizes = [e_cap]
    floor = cfg.shared_min if shared and e_cap <= cfg.single_class_max else cfg.window_min
    if e_cap > cfg.single_class_max or shared:
        while True:
            nxt = sizes[-1] // (2 if len(sizes) < cfg.fine_classes else 4)
            if nxt < floor:
                break
            sizes.append(nxt)
    if e_cap > cfg.single_class_max and not shared and cfg.fine_classes > 1:
        sizes.insert(1, e_cap // 4 * 3)
    return sizes


def level_classes(e_cap: int, shared: bool = False, cfg: Config = DEFAULT) -> list[int]:
    """The coarser classes of once-per-level work (bucket grouping, aggregation, Q):
    e_cap, e_cap / 8, e_cap / 64 ... >= window_min ([e_cap] up to single_class_max;
    with ``shared``, see :func:`window_classes`: e_cap, e_cap / 4 ... >= shared_min)."""
    sizes = [e_cap]
    if shared and e_cap <= cfg.single_class_max:
        while sizes[-1] // 4 >= cfg.shared_min:
            sizes.append(sizes[-1] // 4)
        return sizes
    while e_cap > cfg.single_class_max and sizes[-1] // 8 >= cfg.window_min:
        sizes.append(sizes[-1] // 8)
    return sizes


def by_class(fn, used, e_cap: int, *args, classes=level_classes, axis=None, cfg: Config = DEFAULT):
    """``fn(size, *args)`` for the smallest class ``size`` >= ``used`` of ``classes(e_cap)``.

    A ``lax.switch`` over the classes (none when there is one); every
    branch must return arrays of equal shapes (pad back to e_cap). Under
    ``jax.vmap(..., axis_name=axis)`` the class is the batch's largest
    (``lax.pmax``): the switch index is then not batched, and only one
    branch runs (a batched index runs every branch)."""
    sizes = classes(e_cap, axis is not None, cfg)
    if len(sizes) == 1:
        return fn(sizes[0], *args)
    if axis is not None:
        used = lax.pmax(used, axis)
    return switch(smallest_fit(sizes, used), [partial(fn, size) for size in sizes], *args)
