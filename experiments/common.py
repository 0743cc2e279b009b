"""Pieces shared by the benchmark scripts: the XLA flags for command buffers, the median
timer, and CPU peers run in forked processes with a time limit.

A peer started with :class:`Forked` runs on its own core while the parent
goes on (e.g. timing jaxmatch on the GPU); :meth:`Forked.result` waits for it
at most until ``limit`` seconds after its start, then stops it. ``fn`` times
itself and returns (seconds, value), so untimed set-up (building a peer's own
graph) can stay out of the clock; a ``fn`` that calls :func:`clock_started` when its clock
starts lets a stopped peer report how long it had run (``Forked.ran_for``, a lower bound
on its time).
"""
from __future__ import annotations

import statistics
import time

# Command buffers turn each while-loop step into one CUDA graph launch (BENCHMARKS.md: a
# trivial step ~20 us -> ~7 us); the scripts set them unless told not to.
FAST_FLAGS = ("--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,WHILE,CONDITIONAL "
              "--xla_gpu_graph_min_graph_size=1")


def knobs(text: str) -> dict:
    """``"levels=4,width=16"`` -> ``{"levels": 4, "width": 16}``: the int knobs of a kernel
    ``Config`` given on a command line ('' none)."""
    return {k: int(v) for k, v in (x.split("=") for x in text.split(",") if x)}


def timed(fn, repeats):
    """(median seconds, every run's seconds, the last answer) of ``repeats`` (at least one) calls of fn()."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def warm_timed(fn, repeats):
    """:func:`timed` of a JAX computation: one untimed call first (compilation), then each timed
    call waited for (``jax.block_until_ready``)."""
    import jax
    jax.block_until_ready(fn())
    return timed(lambda: jax.block_until_ready(fn()), repeats)


_MARK = None   # in a Forked child: shared double set by clock_started()


def clock_started():
    """Called by a Forked job when its timed part starts (no-op outside a Forked child)."""
    if _MARK is not None:
        _MARK.value = time.perf_counter()


def _child(conn, fn, mark):
    global _MARK
    _MARK = mark
    try:
        conn.send(fn())
    except Exception as e:  # the parent reports it
        conn.send(("error", repr(e)))


class Forked:
    """fn() -> (seconds, value) in a forked process; ``result(limit)`` waits at most ``limit``
    seconds from the start and returns fn's answer, or None when it failed or ran past the limit."""

    def __init__(self, fn):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.here, there = ctx.Pipe(duplex=False)
        self.mark = ctx.Value("d", 0.0, lock=False)
        self.ran_for = None   # seconds of timed work when stopped (see clock_started)
        self.proc = ctx.Process(target=_child, args=(there, fn, self.mark), daemon=True)
        self.start = time.perf_counter()
        self.proc.start()

    def result(self, limit):
        left = max(0.0, limit - (time.perf_counter() - self.start))
        return self._finish(self.here.recv() if self.here.poll(left) else None)

    def result_after(self, more, setup=300.0):
        """Like :meth:`result`, but the peer may time ``more`` seconds of work from now or from its
        :func:`clock_started` call, whichever is later (waiting at most ``setup`` seconds from
        its start for that call): a peer whose untimed set-up is still running gets its full time."""
        called = time.perf_counter()
        while not self.here.poll(0.2):
            now, mark = time.perf_counter(), self.mark.value
            if (mark > 0 and now >= max(called, mark) + more) or (mark == 0 and now >= self.start + setup):
                return self._finish(None)
        return self._finish(self.here.recv())

    def _finish(self, out):
        if out is None and self.mark.value > 0:
            self.ran_for = time.perf_counter() - self.mark.value
        self.proc.kill()
        self.proc.join()
        if isinstance(out, tuple) and out and out[0] == "error":
            print(f"note: peer failed: {out[1]}", flush=True)
            return None
        return out
