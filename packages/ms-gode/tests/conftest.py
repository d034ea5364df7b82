import numpy as np
import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # tiny tensors: intra-op threads only add contention on a shared 2-core machine
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_task():
    from iclr25.ms_gode import make_task

    return make_task({"name": "tiny-springs", "system": "springs", "n_balls": 3}, 6, n_frames=24, n_targets=6,
                     seed=3, cache=False)


def rng():
    return np.random.default_rng(0)
