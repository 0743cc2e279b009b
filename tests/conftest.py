"""pytest setup: put the repository root on sys.path so `import experiments` works, and keep JAX's
compiled programs across test modules (many modules solve at the same capacities) until a worker
holds more than ``RSS_LIMIT`` bytes, then drop them (a worker that never drops them holds 3.6 GB by
the end of a run, measured 2026-11-24).

Compile speed: most of the suite's time is XLA compiling the solvers' loops for small graphs on the
CPU, so the tests compile with XLA's legacy CPU fusion emitters
(``--xla_cpu_use_fusion_emitters=false``, set here before JAX starts its backend, also for the
subprocesses the tests start): 25-30% less compile time and the same programs, and every test
passes both ways. It is not the library's default, because the new emitters' code runs 1.0-1.8x
faster on the CPU once compiled (experiments/cpu_emitters.py; RESULTS.md, session 14).
``JAXMATCH_TEST_DEFAULT_EMITTERS=1`` runs the suite with XLA's default emitters. Newer XLA (JAX
0.11) dropped the flag and aborts the process on an unknown one, so the first pytest process
asks a subprocess whether this jaxlib takes it (about a second) and hands the answer to its
workers in ``JAXMATCH_TEST_FAST_COMPILE``.

Compiled once per run: the first pytest process makes an empty temporary directory, JAX's
persistent compilation cache for this run only (``JAXMATCH_TEST_COMPILE_CACHE``, inherited by its
xdist workers; removed when that process exits), so a program that a second test module, or the
other worker, compiles again is read back rather than compiled. Nothing from an earlier run is
used. ``JAXMATCH_TEST_NO_SHARED_CACHE=1`` turns it off. The scripts that tests run in a subprocess (several
host devices) take the same cache through the ``subprocess_env`` fixture: there a program that the script
compiled before under other static options (a solver config, say) is read back (figures: RESULTS.md,
session 41)."""

import atexit
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import jax
import pytest

FAST_COMPILE_FLAGS = "--xla_cpu_use_fusion_emitters=false"
KNOWN = "JAXMATCH_TEST_FAST_COMPILE"   # "1" / "0": whether this jaxlib's XLA takes FAST_COMPILE_FLAGS


def _xla_takes(flags: str) -> bool:
    """Whether XLA starts with ``flags`` (it aborts the process on an unknown flag): a subprocess."""
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    try:
        return subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], env=env,
                              capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


if os.environ.get("JAXMATCH_TEST_DEFAULT_EMITTERS", "").strip().lower() not in ("1", "true", "yes", "on"):
    if "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
        if KNOWN not in os.environ:
            os.environ[KNOWN] = "1" if _xla_takes(FAST_COMPILE_FLAGS) else "0"
        if os.environ[KNOWN] == "1":
            os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + FAST_COMPILE_FLAGS).strip()

ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

RSS_LIMIT = 3 << 30

SHARED_CACHE = "JAXMATCH_TEST_COMPILE_CACHE"   # the run's own compilation cache, made empty by the first process
if os.environ.get("JAXMATCH_TEST_NO_SHARED_CACHE", "").strip().lower() not in ("1", "true", "yes", "on"):
    if SHARED_CACHE not in os.environ:
        os.environ[SHARED_CACHE] = tempfile.mkdtemp(prefix="jaxmatch-test-cache-")
        atexit.register(shutil.rmtree, os.environ[SHARED_CACHE], True)
    jax.config.update("jax_compilation_cache_dir", os.environ[SHARED_CACHE])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


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


@pytest.fixture
def subprocess_env():
    """The environment for a test's Python subprocess: the CPU, and this run's compilation cache where
    there is one."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if SHARED_CACHE in os.environ:
        env.update(JAX_COMPILATION_CACHE_DIR=os.environ[SHARED_CACHE], JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    return env
