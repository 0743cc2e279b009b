"""pytest setup: put the repository root on sys.path so `import experiments` works, and keep JAX's
compiled programs across test modules (many modules solve at the same capacities) until a worker
holds more than ``RSS_LIMIT`` bytes, then drop them (a worker that never drops them holds 3.6 GB by
the end of a run, measured 2026-11-24)."""

import os
import pathlib
import sys

import jax
import pytest

ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

RSS_LIMIT = 3 << 30


def _rss() -> int:
    """This process's resident memory in bytes (Linux), or None where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    yield
    rss = _rss()
    if rss is None or rss > RSS_LIMIT:
        jax.clear_caches()
