"""One JAX persistent compilation cache for the whole test session, in a fresh temporary folder.

The conformance checks run the demo twice, the README quickstart and the example notebook in subprocesses;
they inherit these variables, so a program compiled once (the demo's training step, the quickstart's) is
loaded, not recompiled, the second time. This is the cache `iclr25 cl-optimal-control` itself keeps in ~/.cache; the
folder starts empty, as on a fresh install, so the first demo run is timed cold.
"""

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="iclr25-clopt-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)
