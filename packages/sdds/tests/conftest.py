"""Test-session settings, inherited by the subprocesses of the conformance checks (demo twice, the README
quickstart, the example notebook):

- one JAX persistent compilation cache in a fresh temporary folder, so a program compiled once (the demo's
  training step, the quickstart's) is loaded, not recompiled, the next time; the folder starts empty, as on a
  fresh install, so the first demo run is timed cold;
- XLA on one CPU thread: the programs here are tiny, and a second Eigen thread only spins (on 2 shared cores
  it added CPU time and wall time under load); the suite's budget is min(wall, CPU);
- the determinism check's second seed-0 demo after the first (``ICLR25_SERIAL_DEMOS``), not beside it: the first
  is still timed cold, the second loads its compiled programs from the cache (about 4 s of CPU less than two
  cold compilations side by side; CI measures the CPU time of the whole process tree).
"""

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="iclr25-sdds-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("ICLR25_SERIAL_DEMOS", "1")


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def small_mis():
    """A small rkl_rl GNN sampler for the metric and checkpoint tests, which need a trained sampler but not a good
    one: the claims' MIS configuration (iclr25.sdds.claims.MIS_CONFIG) with one message-passing layer (its
    compilation is most of this fixture's time: 2 layers took 2 s more), 4 hidden units, 2 steps and batches of
    2 graphs x 4 samples (about 2 s of compilation less than MIS_CONFIG's 16, 4 and 4 x 8), for 12 epochs on 6 ER
    graphs of 10-14 nodes, annealed to T = 0 after 3 epochs (the MIS claim itself trains 100 epochs at the repro
    rung)."""
    import jax

    from iclr25.sdds import MISEnergy, SamplerConfig, random_graphs, train
    from iclr25.sdds.claims import MIS_CONFIG

    graphs = random_graphs(6, 10, 14, mean_degree=4.0, seed=0)
    energy = MISEnergy.from_graphs(graphs, n_nodes=14)
    config = SamplerConfig(**{**MIS_CONFIG, "n_layers": 1, "hidden": 4, "n_steps": 2, "step_minibatch": 2,
                              "instances_per_batch": 2, "n_samples": 4}, n_epochs=12, n_anneal=3)
    return train(config, energy, jax.random.key(0), show_progress=False), graphs, energy
