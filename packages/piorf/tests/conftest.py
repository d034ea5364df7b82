import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    # two threads on a shared 2-core machine are much slower than one; results do not depend on it
    import torch

    torch.set_num_threads(1)
