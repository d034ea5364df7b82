import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # small tensors on a shared 2-core machine: intra-op threads only add contention
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def toy():
    """A small enumerable toy (100 blocks, 4 amine couplings, <= 2 blocks) and its enumeration (shared with the
    claims registry's measurements)."""
    from iclr25.rxnflow.claims import _toy_space

    return _toy_space()


@pytest.fixture(scope="session")
def trained(toy):
    """RxnFlow trained 200 TB steps on the toy at rho = 0.1, seed 0 (the claims' seed-0 model, trained once)."""
    from iclr25.rxnflow.claims import trained_toy

    return trained_toy(0, 200)
