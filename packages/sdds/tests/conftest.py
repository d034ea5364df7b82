"""Test-session settings, inherited by the subprocesses of the conformance checks (demo twice, the README
quickstart, the example notebook):

- one JAX persistent compilation cache in a fresh temporary folder, so a program compiled once (the demo's
  training step, the quickstart's) is loaded, not recompiled, the next time; the folder starts empty, as on a
  fresh install, so the first demo run is timed cold;
- XLA on one CPU thread: the programs here are tiny, and a second Eigen thread only spins (on 2 shared cores
  it added CPU time and wall time under load); the suite's budget is min(wall, CPU).
"""

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="iclr25-sdds-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def trained_mis():
    """The claims registry's seed-0 MIS sampler (rkl_rl GNN, 30 training graphs) and its 10 held-out graphs:
    trained once per session, shared with the registry's claim runs (iclr25.sdds.claims.trained_mis)."""
    from iclr25.sdds.claims import trained_mis

    return trained_mis(0, "test")
