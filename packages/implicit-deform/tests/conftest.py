"""Test-session settings: one fresh JAX persistent compilation cache shared by this process and the
subprocesses of the conformance checks (demo twice, README quickstart, example notebook), so that a program
compiled once is loaded the next time; strict rank promotion, so silent broadcasting fails here."""

import os
import shutil
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="iclr25-implicit-deform-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def twist_pair():
    from iclr25.implicit_deform import make_pair

    return make_pair("bar", "twist", n_points=4000, mesh_resolution=48, seed=0)


@pytest.fixture(scope="session")
def twist_fit(twist_pair):
    """One small fit of the twisted bar shared by the claim tests (the 'test' preset, seconds)."""
    from iclr25.implicit_deform import DeformConfig, fit

    return fit(twist_pair, config=DeformConfig.preset("test"), seed=0, show_progress=False)


@pytest.fixture(scope="session")
def shipped_fit():
    """The shipped seed-0 fit of the same pair (what the demo, the README quickstart and the example load)."""
    from iclr25.implicit_deform.pretrained import pretrained

    return pretrained("bar-twist")
