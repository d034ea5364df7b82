import numpy as np
import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    # tiny tensors: intra-op threads only add contention on a shared 2-core machine
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def physics_run():
    """MS-GODE and fine-tuning on the physics sequence at test scale (trained once per session)."""
    from iclr25.ms_gode import (
        UNSEEN_PHYSICS,
        ModelConfig,
        TrainConfig,
        make_task,
        run_sequence,
        task_sequence,
    )

    tasks = [t.split((0.5, 0.25, 0.25)) for t in task_sequence("physics", 80, seed=0)]
    mc = ModelConfig(hidden=24, ode_hidden=24, augment=8)
    ms = run_sequence("ms-gode", tasks, config=mc, train=TrainConfig(epochs=12, lr=5e-2), seed=0)
    unseen = make_task(UNSEEN_PHYSICS, 20, seed=99)
    return {"tasks": tasks, "ms": ms, "unseen": unseen, "config": mc}


@pytest.fixture(scope="session")
def tiny_task():
    from iclr25.ms_gode import make_task

    return make_task({"name": "tiny-springs", "system": "springs", "n_balls": 3}, 6, n_frames=24, n_targets=6,
                     seed=3, cache=False)


def rng():
    return np.random.default_rng(0)
