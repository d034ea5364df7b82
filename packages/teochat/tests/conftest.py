import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    import torch

    torch.set_num_threads(1)  # tiny models on a shared 2-core machine
