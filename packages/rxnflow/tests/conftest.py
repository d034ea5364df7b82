import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # small tensors on a shared 2-core machine: intra-op threads only add contention
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def toy():
    """A small enumerable toy (100 blocks, 4 amine couplings, <= 2 blocks) and its enumeration."""
    from iclr25.rxnflow import enumerate_terminals, parse_reward, toy_space

    space = toy_space(30, 50, n_other=20, seed=0)
    reward = parse_reward("qed")
    enum = enumerate_terminals(space, reward)
    space.parent_counts = enum.in_degree()
    return space, reward, enum


@pytest.fixture(scope="session")
def trained(toy):
    """RxnFlow trained 200 TB steps on the toy at rho = 0.1 (about 5 s)."""
    from iclr25.rxnflow import RxnFlow, TrainConfig, train

    space, reward, enum = toy
    model = RxnFlow(space, reward, beta=4.0, seed=0)
    res = train(model, TrainConfig(steps=200, batch_size=64, rho=0.1, min_sampling=5, beta=4.0), seed=0,
                show_progress=False)
    return model, res
