"""Where next-mol computes (issue 59): DMT's and the LM's forward, one training step of each (DMT also with the
1D-to-3D transfer's LM features) and the samplers with everything on a non-CPU device (torch's meta stand-in),
``--device cpu`` and ``--device auto`` giving the same conformers here, no ``.numpy()`` on a tensor that may be on
the device, and one step of the paper rung (the smoke run)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr25.next_mol.chem import ATOM_FEATURE_DIM, PAIR_FEATURE_DIM, prepare
from iclr25.next_mol.cli import main
from iclr25.next_mol.diffusion import Graph, make_dmt, sample_conformers, train_dmt, validation_rmsd
from iclr25.next_mol.lm import CausalLM, LMConfig, sample_lm, train_lm
from iclr25.next_mol.optim import AdamW
from iclr25.next_mol.tokenizer import SelfiesTokenizer
from iclr25.next_mol.transfer import LMFeaturizer
from iclr25.utils.device import check_device_conformance, torch_device
from iclr25.utils.testing import check_numpy_lint, check_paper_rung

META = torch.device("meta")
SRC = Path(__file__).parents[1] / "src" / "iclr25" / "next_mol"
TINY = {"hidden": 16, "pair_hidden": 8, "n_blocks": 1, "n_heads": 2}
CORPUS = ["[C][C][O]", "[C][N]", "[C][C][C][O]"]


def _graphs(sizes=(3, 5)):
    rng = np.random.default_rng(0)
    return [Graph(np.zeros((n, ATOM_FEATURE_DIM), np.float32), np.zeros((n, n, PAIR_FEATURE_DIM), np.float32),
                  rng.normal(size=(2, n, 3)).astype(np.float32)) for n in sizes]


def _dmt(d):
    return make_dmt(seed=0, device=d, **TINY), _graphs()


def _lm(d):
    tok = SelfiesTokenizer().fit(CORPUS)
    torch.manual_seed(0)
    return CausalLM(LMConfig(tok.size, d_model=8, n_layers=1, n_heads=2, max_len=8)).to(d), tok


def test_dmt_forward_on_a_non_cpu_device():
    def build(d):
        B, N = 2, 4
        return make_dmt(seed=0, device=d, **TINY), (torch.zeros(B, N, 3, device=d), torch.full((B,), 0.5, device=d),
                                                    torch.zeros(B, N, ATOM_FEATURE_DIM, device=d),
                                                    torch.zeros(B, N, N, PAIR_FEATURE_DIM, device=d),
                                                    torch.ones(B, N, dtype=torch.bool, device=d))

    out = check_device_conformance(build)
    assert out.device == META and out.shape == (2, 4, 3)


def test_dmt_training_step_sampling_and_validation_on_a_non_cpu_device():
    res = check_device_conformance(_dmt, lambda m, g: train_dmt(m, g, steps=1, batch_size=2, warmup=1, device=META))
    assert len(res.losses) == 1 and next(iter(res.__dict__)) == "steps"
    for sampler in ("ancestral", "ddim"):
        out = check_device_conformance(_dmt, lambda m, g, s=sampler: sample_conformers(m, g, 2, steps=2, sampler=s,
                                                                                         device=META))
        assert [o.shape for o in out] == [(2, 3, 3), (2, 5, 3)]  # numpy on the CPU
    check_device_conformance(_dmt, lambda m, g: validation_rmsd(m, g, t_values=(0.5,), device=META))


def test_lm_forward_training_step_and_sampling_on_a_non_cpu_device():
    out = check_device_conformance(lambda d: (_lm(d)[0], torch.ones(2, 5, dtype=torch.long, device=d)))
    assert out.device == META
    res = check_device_conformance(lambda d: _lm(d),
                                   lambda m, tok: train_lm(m, tok, CORPUS, steps=1, batch_size=2, device=META))
    assert res.steps == 1
    strings = check_device_conformance(lambda d: _lm(d), lambda m, tok: sample_lm(m, tok, 3, device=META))
    assert len(strings) == 3


def test_transfer_step_on_a_non_cpu_device():
    # the transfer's stage 2: LM features (frozen LM, trained projector) appended to DMT's node input
    mols = [prepare(s) for s in ("CCO", "CCCO")]
    rng = np.random.default_rng(0)
    graphs = [Graph(np.zeros((m.n_atoms, ATOM_FEATURE_DIM), np.float32),
                    np.zeros((m.n_atoms, m.n_atoms, PAIR_FEATURE_DIM), np.float32),
                    rng.normal(size=(2, m.n_atoms, 3)).astype(np.float32)) for m in mols]

    def step(dmt, lm_tok):
        feat = LMFeaturizer(*lm_tok, mols, d_out=8, device=META)
        with_lm = dmt.extend_lm_input(feat.d_out)
        assert next(with_lm.parameters()).device == META
        params = [with_lm.node_in.weight, *feat.projector.parameters()]
        return train_dmt(with_lm, graphs, steps=1, batch_size=2, warmup=1, parameters=params, lm_features=feat,
                         device=META)

    tok = SelfiesTokenizer().fit([m.selfies for m in mols])
    torch.manual_seed(0)
    res = check_device_conformance(
        lambda d: (make_dmt(seed=0, device=d, **TINY),
                   (CausalLM(LMConfig(tok.size, d_model=8, n_layers=1, n_heads=2, max_len=16)).to(d), tok)), step)
    assert len(res.losses) == 1


def test_adamw_state_lives_beside_the_parameters():
    # the shared AdamW (iclr25.utils.optim, no torch._dynamo import) makes its moments with zeros_like: on the
    # parameters' device
    p = torch.nn.Parameter(torch.zeros(3, device=META))
    p.grad = torch.ones(3, device=META)
    opt = AdamW([p], lr=1e-3)
    opt.step()
    _, m, v = opt.state[id(p)]
    assert m.device == v.device == META


def test_the_conformance_check_catches_noise_made_on_the_cpu():
    # 0.7's sampler drew its noise on the CPU: with DMT on a device that is a mismatch
    def cpu_noise(model, inputs):
        x, t, a, p, m = inputs
        return model(x + torch.randn(x.shape), t, a, p, m)

    with pytest.raises(AssertionError, match="non-CPU device"):
        check_device_conformance(lambda d: (make_dmt(seed=0, device=d, **TINY),
                                            (torch.zeros(1, 3, 3, device=d), torch.full((1,), 0.5, device=d),
                                             torch.zeros(1, 3, ATOM_FEATURE_DIM, device=d),
                                             torch.zeros(1, 3, 3, PAIR_FEATURE_DIM, device=d),
                                             torch.ones(1, 3, dtype=torch.bool, device=d))), cpu_noise)


def test_device_cpu_and_auto_give_the_same_conformers(tmp_path, capsys):
    (tmp_path / "in.smi").write_text("CCO ethanol\nCC(=O)N\n")
    out = {}
    for device in ("cpu", "auto"):
        assert main(["conformers", str(tmp_path / "in.smi"), "--k", "2", "--steps", "3", "--device", device,
                     "--out", str(tmp_path / f"{device}.sdf")]) == 0
        out[device] = (tmp_path / f"{device}.sdf").read_text()
    if torch_device("auto").type == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert out["cpu"] == out["auto"]
    assert out["cpu"].count("$$$$") == 4  # 2 molecules x 2 conformers


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    (tmp_path / "in.smi").write_text("CCO\n")
    if not torch.cuda.is_available():
        assert main(["conformers", str(tmp_path / "in.smi"), "--device", "cuda", "--out",
                     str(tmp_path / "c.sdf")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1 and not (tmp_path / "c.sdf").exists()
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_no_numpy_on_a_tensor_that_may_be_on_the_device():
    check_numpy_lint(SRC)  # a tensor reaches numpy only through .cpu()


def test_paper_rung_smoke_runs_one_step_on_the_cpu(monkeypatch):
    # `iclr25 claims next-mol --rung paper --smoke` in process: DMT-B trained one step, sampled 2 steps
    from iclr25.next_mol.claims import REGISTRY

    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    values = check_paper_rung(REGISTRY)
    assert {"dmt-beats-etkdg", "dmt-torsions-vs-etkdg"} <= set(values)
    assert "GPU-hours per seed" in REGISTRY.costs["paper"].explain("paper", 3)
