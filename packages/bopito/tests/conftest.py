import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    # tiny networks on a shared 2-core machine: more intra-op threads only add contention
    import torch

    torch.set_num_threads(1)
