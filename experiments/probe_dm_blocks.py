"""Probe (session 17): where the Dulmage-Mendelsohn time goes on bench_dm's block-triangular class.

Times ``maximum_matching(g, method="apfb")`` and ``dulmage_mendelsohn(g)`` (warm, one call each after a
first call) on the ``blocks`` matrices of experiments/bench_dm.py at the sizes given, printing the
counters of each, so a slow size shows which loop grows. Usage: ``python experiments/probe_dm_blocks.py 30000 60000``.
"""
import pathlib
import sys
import time

import jax
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jaxmatch  # noqa: E402
from experiments.bench_dm import matrix  # noqa: E402


def main(sizes):
    rng = np.random.default_rng(0)
    for n in sizes:
        r, c = matrix("blocks", n, 8, rng)
        A = sp.csr_array((np.ones(r.size), (r, c)), shape=(n, n))
        A.sum_duplicates()
        g = jaxmatch.from_scipy(A)
        for name, f in [("apfb", lambda: jaxmatch.maximum_matching(g, method="apfb")),
                        ("pr", lambda: jaxmatch.maximum_matching(g)),
                        ("dm", lambda: jaxmatch.dulmage_mendelsohn(g))]:
            t = time.perf_counter()
            jax.block_until_ready(f())
            first = time.perf_counter() - t
            t = time.perf_counter()
            res = jax.block_until_ready(f())
            print(n, name, f"first {first:.2f} s warm {time.perf_counter() - t:.3f} s",
                  {k: int(np.asarray(v).sum()) for k, v in res.stats.items()}, flush=True)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [30000])
