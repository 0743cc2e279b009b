"""pytest setup: the repository root on sys.path (so `import experiments` works), and compile
settings for a fast cold run of the suite on a CPU.

Nearly all of the suite's time is XLA compiling the solvers' while loops for small graphs, so
the xdist workers of one run share a persistent compilation cache in a fresh temporary folder (it
starts empty every run, so the run stays cold: a program compiled by one worker is not compiled
again by the other). ``JAXMATCH_TEST_SHARED_CACHE=0`` turns it off. (Lowering XLA's CPU
optimisation level compiled 30% faster but broke the bit-for-bit equality of vmapped and eager
Louvain runs that tests/test_louvain.py asserts, so the suite compiles as users do.)
"""

import os
import pathlib
import sys
import tempfile

ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SHARED = os.environ.get("JAXMATCH_TEST_SHARED_CACHE", "1").lower() not in ("0", "false", "no", "off")


def pytest_configure(config):
    if not SHARED:
        return
    import jax
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"solo-{os.getpid()}"
    cache = pathlib.Path(tempfile.gettempdir()) / f"jaxmatch-test-cache-{run}"
    cache.mkdir(exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(cache))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    except AttributeError:   # older JAX
        pass
