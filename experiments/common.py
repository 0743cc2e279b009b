"""Pieces shared by the benchmark scripts: the XLA flags for command buffers, the median
timer, and CPU peers run in forked processes with a time limit.

A peer started with :class:`Forked` runs on its own core while the parent
goes on (e.g. timing jaxmatch on the GPU); :meth:`Forked.result` waits for it
at most until ``limit`` seconds after its start, then stops it. ``fn`` times
itself and returns (seconds, value), so untimed set-up (building a peer's own
graph) can stay out of the clock.
"""
from __future__ import annotations

import statistics
import time

# Command buffers turn each while-loop step into one CUDA graph launch (BENCHMARKS.md: a
# trivial step ~20 us -> ~7 us); the scripts set them unless told not to.
FAST_FLAGS = ("--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL,COLLECTIVES,WHILE,CONDITIONAL "
              "--xla_gpu_graph_min_graph_size=1")


def timed(fn, repeats):
    """(median seconds, every run's seconds, the last answer) of ``repeats`` (at least one) calls of fn()."""
    times, out = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def _child(conn, fn):
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
        self.proc = ctx.Process(target=_child, args=(there, fn), daemon=True)
        self.start = time.perf_counter()
        self.proc.start()

    def result(self, limit):
        left = max(0.0, limit - (time.perf_counter() - self.start))
        out = self.here.recv() if self.here.poll(left) else None
        self.proc.kill()
        self.proc.join()
        if isinstance(out, tuple) and out and out[0] == "error":
            print(f"note: peer failed: {out[1]}", flush=True)
            return None
        return out
