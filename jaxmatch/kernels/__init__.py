"""Pallas kernels for the hot loops that need compare-and-swap on the GPU.

Each kernel module has the kernel, a ``_reference`` in pure JAX beside it and
an ``interpret=`` switch (the kernel then runs on any backend, for the tests).
"""
