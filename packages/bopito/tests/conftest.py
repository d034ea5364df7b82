import os

import pytest

# one BLAS thread, here and in the commands the tests start (demo, README quickstart, example): on a shared 2-core
# machine OpenBLAS's second thread busy-waits, and the 800-cell eigendecomposition of the exact Prinz reference
# costs 1.4 s of CPU with two threads under load against 0.13 s with one (results equal to 1e-15).
# Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    # tiny networks on a shared 2-core machine: more intra-op threads only add contention
    import torch

    torch.set_num_threads(1)
