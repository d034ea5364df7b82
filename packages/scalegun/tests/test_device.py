"""Where scalegun computes (issue 59): the unlearner (fit, every request kind, retraining, prediction) and the
sweep with its retraining baseline, with the model on a non-CPU device (torch's meta stand-in); ``--device cpu``
and ``--device auto`` giving the same ledger here; no ``.numpy()`` on a tensor that may be on the device; one
step of the paper rung."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.scalegun import CertifiedUnlearner, datasets
from iclr25.scalegun.claims import PAPER_DATA_ENV, REGISTRY
from iclr25.scalegun.cli import main
from iclr25.scalegun.experiments import retrain_from_scratch, sweep
from iclr25.scalegun.model import model_device, train_ovr
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "scalegun"


@pytest.fixture(scope="module")
def g():
    return datasets.csbm(200, 800, 8, 3, seed=1)


def _holder(device):
    # the unlearner is not an nn.Module: the check's "module" is an empty one, the step builds the unlearner
    return torch.nn.Module(), device


@pytest.mark.parametrize(("mode", "solver"), [("scalegun", "cg"), ("scalegun", "direct"), ("cgu", "cg"),
                                               ("retrain", "cg")])
def test_fit_requests_and_prediction_on_a_non_cpu_device(g, mode, solver):
    def step(_, device):
        u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode=mode, newton_solver=solver, audit=True,
                               r_max=1e-4, device=device).fit()
        u.unlearn_edges(g.edges[:2])
        u.unlearn_nodes([int(g.train_idx[0])])
        u.unlearn_features([int(g.train_idx[1])])
        u.retrain()
        return u, u.predict(g.test_idx), u.coef_

    u, pred, coef = check_device_conformance(_holder, step)
    assert u.device == META and u.W_.device == META and u._Zt.device == META
    assert pred.shape == (len(g.test_idx),) and coef.shape == (8, 3)  # on the CPU, as numpy
    assert u.ledger.n_requests == 3 and len(u.active_train_idx()) == len(g.train_idx) - 2


def test_sweep_and_its_retraining_baseline_on_a_non_cpu_device():
    # 0.5's sweep built the baseline's training rows and noise on the CPU beside the unlearner's device tensors
    rows = check_device_conformance(_holder, lambda _, d: sweep([{"n": 300, "m": 1500, "features": 8}],
                                                                batches=(1, 5), requests=(2, 1), r_max=1e-4,
                                                                device=d))
    assert rows[0]["batches"]["5"]["requests"] == 1 and rows[0]["retrain_s"] >= 0.0


def test_the_conformance_check_catches_the_old_baseline(g):
    def old_baseline(_, device):  # 0.5's retraining baseline: Zt and the noise on the CPU, Y and t on the device
        u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, r_max=1e-4, device=device).fit()
        Zt = torch.as_tensor(u.exact_embeddings()[u.train_idx], dtype=torch.float64)
        b = 0.1 * torch.randn(Zt.shape[1], u._Y.shape[1], dtype=torch.float64)
        return train_ovr(Zt, u._Y, u._t, u.lam, b, n=len(u.train_idx))

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(_holder, old_baseline)
    W = check_device_conformance(_holder, lambda _, d: retrain_from_scratch(
        CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, r_max=1e-4, device=d).fit(),
        np.zeros((len(g.train_idx), 8)), 1))
    assert W.device.type == "cpu" and W.shape == (8, 3)


@pytest.fixture()
def files(tmp_path, g):
    (tmp_path / "g.txt").write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    np.save(tmp_path / "X.npy", g.X)
    np.save(tmp_path / "y.npy", g.y)
    (tmp_path / "req.txt").write_text("".join(f"edge {u} {v}\n" for u, v in g.edges[:3]) +
                                      f"node {g.train_idx[0]}\nfeature {g.train_idx[1]}\n")
    return tmp_path


def _unlearn(d, device, out):
    return main(["unlearn", "--graph", str(d / "g.txt"), "--features", str(d / "X.npy"), "--labels",
                 str(d / "y.npy"), "--requests", str(d / "req.txt"), "--audit", "--device", device, "--out", str(out)])


def test_device_cpu_and_auto_give_the_same_ledger(files, capsys):
    ledgers = {}
    for device in ("cpu", "auto"):
        assert _unlearn(files, device, files / f"{device}.json") == 0
        recs = json.loads((files / f"{device}.json").read_text())["records"]
        ledgers[device] = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in recs]  # timings differ
    assert len(ledgers["cpu"]) == 6 and all(r["true_residual"] is not None for r in ledgers["cpu"][1:])
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert ledgers["cpu"] == ledgers["auto"]


def test_an_absent_device_is_one_line_naming_the_flag(files, capsys, monkeypatch):
    if not torch.cuda.is_available():
        assert _unlearn(files, "cuda", files / "cuda.json") == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1 and not (files / "cuda.json").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(files / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err
    # MPS (had this machine one) has no float64, which the certificate needs: refused in one line
    monkeypatch.setattr("iclr25.utils.device.torch_device", lambda spec: torch.device("mps"))
    with pytest.raises(ValueError, match="--device mps: .*float64"):
        model_device("mps")


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch):
    # as `iclr25 claims scalegun --rung paper --smoke`: the paper rung's code path, one request of each kind, every
    # claim finite; the rung's cost is what --estimate prints
    monkeypatch.delenv("ICLR25_DEVICE", raising=False)
    monkeypatch.delenv(PAPER_DATA_ENV, raising=False)
    values = check_paper_rung(REGISTRY)
    assert len(values) == 7
    assert "ogbn-papers100M" in REGISTRY.costs["paper"].explain("paper", 3)
    # the rung itself without the user's papers100M folder: one line naming what is missing, before any work
    with pytest.raises(ValueError, match=PAPER_DATA_ENV):
        REGISTRY.measure("unlearning-10x-faster-than-retraining", 0, "paper")
    monkeypatch.setenv(PAPER_DATA_ENV, str(Path(__file__).parent))
    with pytest.raises(ValueError, match="missing graph.npz"):
        REGISTRY.measure("true-residual-below-data-bound", 0, "paper")
