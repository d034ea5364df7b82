"""One JAX persistent compilation cache for the whole test session, in a fresh temporary folder.

The conformance checks run the demo twice, the README quickstart and the example notebook in subprocesses;
they inherit these variables, so a program compiled once (the demo's training step, the quickstart's) is
loaded, not recompiled, the second time. This is the cache `iclr25 sdds` itself keeps in ~/.cache; the
folder starts empty, as on a fresh install, so the first demo run is timed cold.
"""

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="iclr25-sdds-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)


# ---- shared trained samplers (one compiled program each, reused by several tests) ----
import jax  # noqa: E402
import pytest  # noqa: E402

MIS_GRAPHS = dict(n_graphs=40, n_min=20, n_max=30, mean_degree=6.0, seed=0)
MIS_CONFIG = dict(objective="rkl_rl", n_steps=4, hidden=16, n_layers=2, n_random_features=3, n_samples=8,
                  instances_per_batch=4, n_epochs=100, learning_rate=2e-3, temperature=0.0, temperature_start=0.4,
                  step_minibatch=4, schedule="diffuco", ppo_epochs=2)


@pytest.fixture(scope="session")
def trained_mis():
    """A small rkl_rl GNN sampler for MIS (30 training graphs) and the 10 held-out test graphs."""
    from iclr25.sdds import MISEnergy, SamplerConfig, random_graphs, train

    graphs = random_graphs(**MIS_GRAPHS)
    e_train = MISEnergy.from_graphs(graphs[:30], n_nodes=MIS_GRAPHS["n_max"])
    e_test = MISEnergy.from_graphs(graphs[30:], n_nodes=MIS_GRAPHS["n_max"])
    sampler = train(SamplerConfig(**MIS_CONFIG), e_train, jax.random.key(0), show_progress=False)
    return sampler, graphs[30:], e_test
