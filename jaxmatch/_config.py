"""JAX settings that jaxmatch applies for its users: XLA command-buffer flags and the
persistent compilation cache.

* :func:`apply_xla_flags` runs on ``import jaxmatch``. On the GPU every
  ``lax.while_loop`` step of the solvers is a host round trip unless XLA
  records the loop body in a CUDA graph ("command buffer"); with
  :data:`COMMAND_BUFFER_FLAGS` a trivial step takes about 7 us instead of
  20-23 us (``shared/BENCHMARKS.md``). XLA reads ``XLA_FLAGS`` once, when JAX
  starts its backend, so the flags are appended to ``os.environ["XLA_FLAGS"]``
  only while no backend is running yet. Collectives stay out of the command
  buffers: the sharded APFB on two H100s failed with them in ("Failed to
  instantiate CUDA graph: CUDA_ERROR_INVALID_VALUE", experiments/RESULTS.md,
  session 24), as a loop whose body all-reduces becomes a CUDA graph with NCCL
  calls inside a conditional node, which NVIDIA/nccl#1986 reports CUDA
  refusing. One-device solvers have no collectives; the sharded solvers' loop
  steps go back to the host. A flag the user already set is never
  overridden, and ``JAXMATCH_XLA_FLAGS=0`` turns the whole thing off. The
  flags only concern the GPU compiler; the CPU ignores them.
* :func:`enable_compilation_cache` turns on JAX's persistent compilation
  cache, so the compiled solvers survive the process (the ``jaxmatch``
  command line does this unless ``JAXMATCH_NO_CACHE=1``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["COMMAND_BUFFER_FLAGS", "apply_xla_flags", "backend_initialized", "default_cache_dir",
           "enable_compilation_cache"]

#: Flags appended to ``XLA_FLAGS`` (name -> value); see the module docstring.
COMMAND_BUFFER_FLAGS = {
    "xla_gpu_enable_command_buffer": "FUSION,CUBLAS,CUDNN,CUSTOM_CALL,WHILE,CONDITIONAL",
    "xla_gpu_graph_min_graph_size": "1",
}


def backend_initialized() -> bool:
    """Whether JAX has started a backend in this process, found out without starting one.

    False when jax is not imported yet. JAX's private API for this has moved
    between versions (``xla_bridge.backends_are_initialized()`` in 0.4.3x-0.10,
    the ``_backends`` dict before); when neither is there the answer is False,
    so that the flags are set (harmless where the backend already runs: XLA
    then never reads them).
    """
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge as xb
    except Exception:  # pragma: no cover - JAX reorganised its internals
        return False
    try:
        return bool(xb.backends_are_initialized())
    except Exception:
        pass
    try:
        return bool(xb._backends)
    except Exception:  # pragma: no cover
        return False


def _flag_names(flags: str) -> set[str]:
    """Names of the flags in an ``XLA_FLAGS`` string (``--name=value`` or ``--name``)."""
    return {tok.lstrip("-").split("=", 1)[0] for tok in flags.split() if tok.startswith("-")}


def apply_xla_flags(environ=None) -> list[str]:
    """Append :data:`COMMAND_BUFFER_FLAGS` to ``XLA_FLAGS`` where that still has an effect.

    Does nothing when ``JAXMATCH_XLA_FLAGS`` is ``0`` (or ``false``/``no``/``off``)
    or a JAX backend is already running (:func:`backend_initialized`); each
    flag is added only if the user's ``XLA_FLAGS`` does not name it already.

    Args:
      environ: the environment to change (default ``os.environ``).

    Returns:
      The flags added, as ``--name=value`` strings (empty when none).

    >>> env = {"XLA_FLAGS": "--xla_gpu_graph_min_graph_size=5"}
    >>> added = apply_xla_flags(env) if not backend_initialized() else []
    >>> "--xla_gpu_graph_min_graph_size=5" in env["XLA_FLAGS"]
    True
    >>> apply_xla_flags({"JAXMATCH_XLA_FLAGS": "0"})
    []
    """
    env = os.environ if environ is None else environ
    if env.get("JAXMATCH_XLA_FLAGS", "").strip().lower() in ("0", "false", "no", "off"):
        return []
    if backend_initialized():
        return []
    current = env.get("XLA_FLAGS", "")
    have = _flag_names(current)
    added = [f"--{name}={value}" for name, value in COMMAND_BUFFER_FLAGS.items() if name not in have]
    if added:
        env["XLA_FLAGS"] = " ".join([current.strip(), *added]).strip()
    return added


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/jaxmatch``, or ``~/.cache/jaxmatch`` when that variable is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jaxmatch"


def enable_compilation_cache(path=None, *, min_compile_time_secs: float = 0.0) -> Path:
    """Turn on JAX's persistent compilation cache, so that compiled solvers survive the process.

    JAX then writes every executable whose compilation took at least
    ``min_compile_time_secs`` (default 0: all of them; the solvers' small
    helper programs add up too) to the directory ``path``, keyed by the
    program, the JAX version, the backend and the device, and later
    processes load it instead of compiling again: the first call of a solver
    then costs its tracing and a file read rather than the XLA compilation.
    The directory may be shared by processes; delete it to empty the cache.
    This sets the global JAX options ``jax_compilation_cache_dir`` and
    ``jax_persistent_cache_min_compile_time_secs`` (and restarts JAX's cache
    object if it had already been set up); the ``jaxmatch`` command line
    calls it unless ``JAXMATCH_NO_CACHE=1``.

    Args:
        path: the cache directory, created if missing (default:
            ``$XDG_CACHE_HOME/jaxmatch``, or ``~/.cache/jaxmatch``).
        min_compile_time_secs: compilations faster than this many seconds
            are not cached (default 0.0).

    Returns:
        The cache directory, as a :class:`pathlib.Path`.

    Example:
        >>> import tempfile
        >>> import jax, jaxmatch
        >>> before = (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs)
        >>> cache = jaxmatch.enable_compilation_cache(tempfile.mkdtemp(), min_compile_time_secs=1.0)
        >>> jax.config.jax_compilation_cache_dir == str(cache), cache.is_dir()
        (True, True)
        >>> jaxmatch._config._set_cache(*before)   # this example gives the previous settings back
    """
    cache = Path(path) if path is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    _set_cache(str(cache), float(min_compile_time_secs))
    return cache


def _cache_settings():
    import jax
    return (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs)


def _set_cache(cache_dir, min_compile_time_secs) -> None:
    """Set both cache options; make JAX's cache object pick them up if it already exists."""
    import jax

    if _cache_settings() == (cache_dir, min_compile_time_secs):
        return
    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_time_secs)
    try:
        from jax._src import compilation_cache as cc
        if cc.is_initialized():
            cc.reset_cache()
    except Exception:  # pragma: no cover - private API moved; a new process picks the options up
        pass
