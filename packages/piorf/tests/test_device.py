"""Where piorf computes (issue 59): the MeshGraphNet's forward, one training step (with PIORF's per-step rewiring),
rollouts and the mechanism task with everything on a non-CPU device (torch's meta stand-in), ``--device cpu`` and
``--device auto`` giving the same numbers here, no ``.numpy()`` on a tensor that may be on the device, and one step
of the paper rung."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.piorf import MeshGraphNet, TrainConfig, save_trajectory, train
from iclr25.piorf.cli import main
from iclr25.piorf.datasets import FlowDataset, Trajectory
from iclr25.piorf.mechanism import long_range_task
from iclr25.piorf.mesh import channel_mesh
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.results import RunResult
from iclr25.utils.testing import check_numpy_lint

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "piorf"
TINY = TrainConfig(steps=2, layers=1, latent=8)


def _flow(n: int = 3, frames: int = 5, seed: int = 0) -> FlowDataset:
    """Random flows on a 51-node channel mesh (one bottleneck node at 3 %): the shapes of the real data, no LBM."""
    m = channel_mesh(8.0, 3.0, (2.0, 1.5), 0.4, h_min=0.3, h_max=1.0, grade=2.0, seed=0)
    rng = np.random.default_rng(seed)
    return FlowDataset(tuple(Trajectory(m.pos, m.cells, m.edge_index, m.node_type,
                                        rng.normal(size=(frames, m.n_nodes, 2)).astype(np.float32),
                                        rng.normal(size=(frames, m.n_nodes)).astype(np.float32), 100.0)
                             for _ in range(n)), {"synthetic": True})


@pytest.fixture(scope="module")
def flow():
    return _flow()


def test_forward_on_a_non_cpu_device():
    def build(d):
        torch.manual_seed(0)
        ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]], device=d)
        return (MeshGraphNet(11, 3, 3, latent=8, layers=2, separate_long_range=True).to(d),
                (torch.zeros(3, 11, device=d), torch.zeros(4, 3, device=d), ei, torch.zeros(4, dtype=torch.bool,
                                                                                            device=d)))
    out = check_device_conformance(build)
    assert out.device == META and out.shape == (3, 3)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # meta's .cpu() gives uninitialised values to score
def test_training_and_rollouts_on_a_non_cpu_device(flow):
    tr, te = flow.split(2)
    sim = check_device_conformance(lambda d: (MeshGraphNet(11, 3, 3, latent=8, layers=1).to(d), None),
                                   lambda _, __: train(tr, rewiring="piorf", config=TINY, seed=0, device=META))
    assert sim.device == META and sim.losses.shape == (2,)
    roll = check_device_conformance(lambda d: (sim.model, None), lambda _, __: sim.rollout(te[0], 2))
    assert roll.velocity.shape == (3, te[0].n_nodes, 2)  # numpy, on the CPU
    res = check_device_conformance(lambda d: (sim.model, None), lambda _, __: long_range_task(
        layers=1, latent=8, steps=1, n_test=2, seed=0, device=META))
    assert res.n_nodes > 0


def test_the_conformance_check_catches_data_left_on_the_cpu():
    # 0.5's training step drew its noise and frames on the CPU (training.py:126) with the model on the device
    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (MeshGraphNet(2, 3, 2, latent=4, layers=1).to(d), None),
                                 lambda m, _: m(torch.zeros(2, 2), torch.zeros(2, 3), torch.tensor([[0, 1], [1, 0]])))


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, monkeypatch, capsys):
    import iclr25.piorf.datasets as datasets

    monkeypatch.setattr(datasets, "cylinder_flow", lambda n, steps, **kw: _flow(n, steps))  # no LBM here
    runs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        assert main(["train", "--n-trajectories", "2", "--steps", "4", "--train-steps", "3", "--layers", "1",
                     "--latent", "8", "--horizon", "2", "--device", device, "--out", str(out)]) == 0
        runs[device] = RunResult.load(out / "results.json")
    assert runs["cpu"].machine["device"] == "cpu"
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert runs["auto"].machine["device"] == "cpu"
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and all(np.isfinite(v) for v in values["cpu"].values())


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    if not torch.cuda.is_available():
        assert main(["train", "--device", "cuda", "--out", str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1 and not (tmp_path / "run").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(tmp_path, monkeypatch, capsys):
    # `iclr25 claims piorf --rung paper --smoke` in this process (the claims command sets $ICLR25_SMOKE and
    # $ICLR25_DEVICE; monkeypatch restores both): the paper-size MGN for one step per rewiring, on trajectories in
    # the user's layout ($ICLR25_PIORF_DATA/train, test)
    from iclr25.piorf.claims import DATA_ENV
    from iclr25.utils.cli import main as iclr25

    for k in ("ICLR25_SMOKE", "ICLR25_DEVICE"):
        monkeypatch.setenv(k, "")
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert iclr25(["claims", "piorf", "--rung", "paper", "--smoke", "--device", "cpu"]) == 2
    assert DATA_ENV in capsys.readouterr().err  # the missing data, named in one line
    for part, ds in zip(("train", "test"), _flow(frames=6).split(2), strict=True):
        for k, t in enumerate(ds.trajectories):
            save_trajectory(tmp_path / part / f"{k}.npz", t)
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert iclr25(["claims", "piorf", "--rung", "paper", "--smoke", "--device", "cpu"]) == 0
    assert "smoke run of piorf's rung 'paper': 4 claim(s)" in capsys.readouterr().out
    assert iclr25(["claims", "piorf", "--rung", "paper", "--estimate"]) == 0
    assert "GPU-hours per seed" in capsys.readouterr().out
