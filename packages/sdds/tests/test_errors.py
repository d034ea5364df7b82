"""Bad input raises ValueError/TypeError naming the argument; failed writes leave no files."""

import dataclasses
import json

import jax
import numpy as np
import pytest

from iclr25.sdds import (
    MIN_ESS_FRACTION,
    IsingEnergy,
    MISEnergy,
    SamplerConfig,
    UniformProposal,
    beta_schedule,
    decode_ce,
    estimate,
    exact_ising,
    exact_mis,
    load_sampler,
    neural_mcmc,
    read_checkpoint_spec,
)
from iclr25.sdds import cli as cli_module
from iclr25.sdds.cli import main
from iclr25.utils.checkpoints import write_manifest
from iclr25.utils.results import RunResult
from iclr25.utils.testing import one_error_line


def _whole(folder):
    """A manifest over the parts present in ``folder`` (as save_sampler writes last), so that the checks of the
    parts' contents are reached."""
    names = [n for n in ("config.json", "energy.npz", "model.eqx") if (folder / n).is_file()]
    write_manifest(folder, names, meta={"format": 1})


@pytest.mark.parametrize("L", [0, 1, 2, -3, 2.5, True])
def test_wrong_lattice_size(L):
    with pytest.raises(ValueError, match="L"):
        IsingEnergy(L)
    with pytest.raises(ValueError, match="L"):
        exact_ising(L, 0.4)


def test_exact_ising_transfer_too_large_lattice():
    from iclr25.sdds import exact_ising_transfer

    with pytest.raises(ValueError, match="L must be <= 12"):
        exact_ising_transfer(13, 0.4)
    assert np.isfinite(exact_ising(13, 0.4).free_energy)  # Kaufman's formula has no such limit


def test_bad_shared_samples():
    e = IsingEnergy(3)
    draws = UniformProposal(9).sample(32, key=jax.random.key(0))
    with pytest.raises(ValueError, match="samples holds 32 draws, but n_samples asks for 16"):
        estimate(UniformProposal(9), e, 0.4, 16, samples=draws)
    with pytest.raises(ValueError, match=r"n_chains \* \(n_steps \+ 1\) asks for 20"):
        neural_mcmc(UniformProposal(9), e, 0.4, n_chains=4, n_steps=4, burn_in=0, samples=draws)
    with pytest.raises(TypeError, match="samples must be a Samples"):
        estimate(UniformProposal(9), e, 0.4, 32, samples=np.zeros((32, 9)))


@pytest.mark.parametrize("x, match", [
    (np.full(9, 0.5), "binary"),
    (np.full(9, 2), "binary"),
    (np.array([np.nan] * 9), "finite"),
    (np.ones(8), r"shape \(\.\.\., 9\)"),
    (np.zeros((0, 9)), "empty"),
    (np.array(["a"] * 9), "numeric"),
])
def test_non_binary_or_malformed_states(x, match):
    with pytest.raises((ValueError, TypeError), match=match):
        IsingEnergy(3)(x)


@pytest.mark.parametrize("beta", [-1.0, 0.0, np.inf, np.nan])
def test_bad_inverse_temperature(beta):
    with pytest.raises(ValueError, match="beta"):
        exact_ising(3, beta)
    with pytest.raises(ValueError, match="beta"):
        estimate(UniformProposal(9), IsingEnergy(3), beta, 16)
    with pytest.raises(ValueError, match="beta"):
        neural_mcmc(UniformProposal(9), IsingEnergy(3), beta, n_chains=4, n_steps=4, burn_in=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"temperature": -1.0}, "temperature"),
    ({"temperature": 0.0, "objective": "fkl_nis"}, "temperature"),
    ({"temperature_start": -2.0}, "temperature_start"),
    ({"objective": "sgd"}, "objective"),
    ({"schedule": "cosine"}, "schedule"),
    ({"n_steps": 0}, "n_steps"),
    ({"n_samples": 1}, "n_samples"),
    ({"learning_rate": float("nan")}, "learning_rate"),
    ({"value_weight": 1.5}, "value_weight"),
    ({"model": "transformer"}, "model"),
])
def test_impossible_config(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        SamplerConfig(**kwargs)


def test_bad_schedule_arguments():
    with pytest.raises(ValueError, match="n_steps"):
        beta_schedule(0)
    with pytest.raises(ValueError, match="schedule"):
        beta_schedule(4, "linear")


def test_bad_graphs():
    with pytest.raises(ValueError, match="empty"):
        MISEnergy.from_graphs([])
    with pytest.raises(ValueError, match="edges"):
        MISEnergy.from_graphs([(3, np.array([[0, 5]]))])
    with pytest.raises(ValueError, match="self-loops"):
        MISEnergy.from_graphs([(3, np.array([[1, 1]]))])
    with pytest.raises(TypeError, match="integers"):
        MISEnergy.from_graphs([(3, np.array([[0.0, 1.0]]))])
    with pytest.raises(ValueError, match="A and B"):
        MISEnergy.from_graphs([(3, np.array([[0, 1]]))], A=1.0, B=0.5)
    with pytest.raises(ValueError, match="n_nodes"):
        exact_mis(0, [])


def test_bad_estimator_arguments():
    e = IsingEnergy(3)
    with pytest.raises(TypeError, match="sampler"):
        estimate(object(), e, 0.4, 16)
    with pytest.raises(TypeError, match="energy"):
        estimate(UniformProposal(9), "ising", 0.4, 16)
    with pytest.raises(ValueError, match="n_samples"):
        estimate(UniformProposal(9), e, 0.4, 0)
    with pytest.raises(ValueError, match="shape"):
        estimate(UniformProposal(8), e, 0.4, 16)
    with pytest.raises(ValueError, match="burn_in"):
        neural_mcmc(UniformProposal(9), e, 0.4, n_chains=4, n_steps=4, burn_in=4)


def test_bad_aggregation():
    with pytest.raises(ValueError, match="aggregation"):
        SamplerConfig(aggregation="max")


def test_a_0_2_gnn_checkpoint_is_refused_not_silently_reinterpreted(tmp_path):
    from iclr25.sdds import Sampler, random_graphs, save_sampler
    from iclr25.sdds.diffusion import make_model

    energy = MISEnergy.from_graphs(random_graphs(2, 6, 8, seed=0))
    cfg = SamplerConfig(objective="rkl_rl", n_steps=2, hidden=4, n_layers=1, n_samples=4, temperature=0.1)
    save_sampler(Sampler(make_model(cfg, energy, jax.random.key(0)), cfg, energy), tmp_path / "ck")
    spec = json.loads((tmp_path / "ck" / "config.json").read_text())
    del spec["config"]["aggregation"]  # what 0.2 wrote
    (tmp_path / "ck" / "config.json").write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="config.json is not the file this sampler checkpoint was saved with"):
        load_sampler(tmp_path / "ck")  # an edited part is refused...
    write_manifest(tmp_path / "ck", ["config.json", "energy.npz", "model.eqx"], meta={"format": 1})
    with pytest.raises(ValueError, match=r"config.json.*< 0.3"):
        load_sampler(tmp_path / "ck")


def test_bad_decode_input():
    m = MISEnergy.from_graphs([(3, np.array([[0, 1]]))])
    with pytest.raises(ValueError, match="probs"):
        decode_ce(m, np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="probs"):
        decode_ce(m, np.full((2, 3), 1.5))
    with pytest.raises(ValueError, match="index"):
        decode_ce(m, np.full((2, 3), 0.5), 3)


def test_bad_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a sampler checkpoint"):
        load_sampler(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such checkpoint folder"):
        load_sampler(tmp_path / "missing")
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "energy.npz").write_bytes(b"")
    (tmp_path / "model.eqx").write_bytes(b"")
    with pytest.raises(ValueError, match="no manifest.json, so this sampler checkpoint is not whole"):
        load_sampler(tmp_path)
    _whole(tmp_path)
    with pytest.raises(ValueError, match="not valid JSON"):
        load_sampler(tmp_path)
    with pytest.raises(ValueError, match="expected a folder .* got a file"):
        load_sampler(tmp_path / "model.eqx")


@pytest.mark.parametrize("spec, match", [
    # 0.1.1: KeyError 'config' as a traceback
    ({"format": 1, "energy": {"kind": "IsingEnergy", "L": 3, "spin_glass": False, "seed": 0}},
     r"config.json: missing or malformed 'config' entry"),
    ({"format": 1, "config": {}}, r"config.json: missing or malformed 'energy' entry"),
    ({"format": 1, "config": {}, "energy": {"kind": "IsingEnergy"}}, r"energy IsingEnergy lacks \['L'"),
    ({"format": 1, "config": {}, "energy": {"kind": "Potts"}}, "unknown energy kind 'Potts'"),
    ({"format": 2, "config": {}, "energy": {}}, "not a checkpoint of format 1"),
])
def test_checkpoint_config_entries_are_checked(tmp_path, spec, match):
    (tmp_path / "config.json").write_text(json.dumps(spec))
    (tmp_path / "energy.npz").write_bytes(b"")
    (tmp_path / "model.eqx").write_bytes(b"")
    _whole(tmp_path)
    with pytest.raises(ValueError, match=match):
        read_checkpoint_spec(tmp_path)


def test_checkpoint_arrays_and_weights_are_checked(tmp_path):
    ok = {"format": 1, "config": {}, "energy": {"kind": "MISEnergy", "A": 1.0, "B": 1.1}}
    (tmp_path / "config.json").write_text(json.dumps(ok))
    (tmp_path / "energy.npz").write_text("1 2 3")
    (tmp_path / "model.eqx").write_bytes(b"")
    _whole(tmp_path)
    with pytest.raises(ValueError, match="energy.npz: not a NumPy .npz file"):
        load_sampler(tmp_path)
    np.savez(tmp_path / "energy.npz", senders=np.zeros((1, 2), np.int32))
    _whole(tmp_path)
    with pytest.raises(ValueError, match=r"energy.npz: missing array\(s\) \['receivers'"):
        load_sampler(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**ok, "config": {"objective": "sgd"}}))
    np.savez(tmp_path / "energy.npz", senders=np.zeros((1, 2), np.int32), receivers=np.zeros((1, 2), np.int32),
             edge_weight=np.zeros((1, 2), np.float32), node_mask=np.ones((1, 3), bool))
    _whole(tmp_path)
    with pytest.raises(ValueError, match="config.json: bad sampler config: .*objective"):
        load_sampler(tmp_path)


@pytest.mark.parametrize("argv, message", [
    (["--n-samples", "10"], "--n-samples must be an integer >= 64"),
    (["--beta", "-1"], "--beta must be a positive finite number"),
    (["--epsilon", "1"], "--epsilon must be a number in [0, 1)"),
    (["--min-ess", "2"], "--min-ess must be a number in [0, 1]"),
    (["--seed", "-3"], "--seed must be a non-negative integer"),
    ([], "ck: no such checkpoint folder"),
    (["--n-samples", "1000000000000"], "--n-samples 1000000000000 needs about"),
])
def test_cli_estimate_checks_arguments_before_loading(tmp_path, capsys, argv, message):
    out = tmp_path / "o"
    assert main(["estimate", "--checkpoint", str(tmp_path / "ck"), *argv, "--out", str(out)]) == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_cli_estimate_without_config_entry_is_one_line(tmp_path, capsys):
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "config.json").write_text(json.dumps({"format": 1, "energy": {"kind": "IsingEnergy"}}))
    (ck / "energy.npz").write_bytes(b"")
    (ck / "model.eqx").write_bytes(b"")
    _whole(ck)
    assert main(["estimate", "--checkpoint", str(ck), "--out", str(tmp_path / "o")]) == 2
    assert "config.json: missing or malformed 'config' entry" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_low_ess_estimates_carry_a_warning():
    # a uniform proposal for a 4x4 Ising lattice at beta = 1: almost all the weight on a few samples
    est = estimate(UniformProposal(16), IsingEnergy(4), 1.0, 256, jax.random.key(0), seed=0, n_bootstrap=2)
    assert est.ess_fraction < 0.1
    warnings = est.warnings()
    assert warnings and "below 0.1" in warnings[0]
    assert est.warnings(min_ess_fraction=0.0) == [] or "entropy" in est.warnings(min_ess_fraction=0.0)[0]
    fake = dataclasses.replace(est, ess_fraction=0.04, entropy=-0.2)  # the case of issue 13
    assert len(fake.warnings()) == 2 and "outside its possible range" in fake.warnings()[1]
    assert dataclasses.replace(est, ess_fraction=0.5, entropy=0.3).warnings() == []
    with pytest.raises(ValueError, match="min_ess_fraction"):
        est.warnings(1.5)


def test_cli_estimate_prints_and_records_the_warning(tmp_path, capsys, monkeypatch):
    # the command's wiring, with the checkpoint replaced by a uniform proposal (no network to compile)
    import iclr25.sdds.checkpoint as checkpoint

    class Uniform(UniformProposal):
        energy = IsingEnergy(4)
        config = SamplerConfig(temperature=1.0)

    monkeypatch.setattr(checkpoint, "read_checkpoint_spec", lambda d: {})
    monkeypatch.setattr(checkpoint, "load_sampler", lambda d: Uniform(16))
    ck, out = tmp_path / "ck", tmp_path / "o"
    ck.mkdir()
    assert main(["estimate", "--checkpoint", str(ck), "--n-samples", "256", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "| WARNING: ESS fraction" in captured.out  # a row of the printed table
    assert "warning: ESS fraction" in captured.err
    run = RunResult.load(out / "results.json")
    assert run.notes.startswith("WARNING: ESS fraction")
    assert any(m.name.startswith("WARNING: ESS fraction") and m.value is None for m in run.metrics)
    assert run.config["min_ess_fraction"] == 0.1 == MIN_ESS_FRACTION == cli_module.MIN_ESS_FRACTION
    # issue 57: a previous results.json is kept without --overwrite (refused before loading) and replaced with it
    before = (out / "results.json").read_bytes()
    assert main(["estimate", "--checkpoint", str(ck), "--n-samples", "256", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--out" in line and "already holds a run (results.json)" in line, line
    assert (out / "results.json").read_bytes() == before
    assert main(["estimate", "--checkpoint", str(ck), "--n-samples", "256", "--out", str(out), "--overwrite"]) == 0
    capsys.readouterr()
    assert (out / "results.json").read_bytes() != before and sorted(p.name for p in out.iterdir()) == ["results.json"]
    # a sampler trained at temperature 0 (MIS) has no default beta: 0.1.1 divided by zero
    Uniform.config = SamplerConfig(objective="rkl_rl", temperature=0.0)
    assert main(["estimate", "--checkpoint", str(ck), "--n-samples", "64", "--out", str(tmp_path / "z")]) == 2
    assert "trained at temperature 0.0" in one_error_line(capsys.readouterr().err) and not (tmp_path / "z").exists()


def test_cli_reports_bad_config_in_one_line(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 2}, "sampler": {}}))
    out = tmp_path / "ckpt"
    assert main(["train", "--config", str(cfg), "--out", str(out)]) == 2
    assert "L (lattice size)" in capsys.readouterr().err
    assert not out.exists()
    cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 3}, "sampler": {"temperature": -1}}))
    assert main(["train", "--config", str(cfg), "--out", str(out)]) == 2
    assert "temperature" in capsys.readouterr().err
    assert main(["train", "--config", str(tmp_path / "missing.json")]) == 2


def test_uniform_proposal_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_nodes"):
        UniformProposal(0)
    with pytest.raises(ValueError, match="n_samples"):
        UniformProposal(3).sample(0, key=jax.random.key(0))


def test_cli_train_refuses_an_endless_config_before_jax(tmp_path, capsys):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 4}, "sampler": {"n_epochs": 10**12}}))
    out = tmp_path / "o"
    assert main(["train", "--config", str(cfg), "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "n_epochs = 1000000000000 would take about" in line and "--force" in line, line
    assert not out.exists()


# --- outputs (issue 57): checked before any work, never an input, a previous run kept without --overwrite ---

def _tiny_checkpoint(folder, L, history=True):
    """A sampler checkpoint for an L x L Ising lattice with an untrained network (no training, no compilation)."""
    from iclr25.sdds import Sampler, save_sampler
    from iclr25.sdds.diffusion import make_model

    cfg = SamplerConfig(n_steps=2, hidden=4, n_layers=1, n_samples=4)
    energy = IsingEnergy(L)
    hist = {"loss": np.arange(3.0)} if history else {}
    save_sampler(Sampler(make_model(cfg, energy, jax.random.key(L)), cfg, energy, hist), folder)
    return folder


def test_a_checkpoint_mixed_from_two_trainings_is_refused_in_one_line(tmp_path, capsys):
    # issue 57: the L = 4 energy of one save beside the L = 3 network of another was estimated from, silently
    a, b = _tiny_checkpoint(tmp_path / "a", 4), _tiny_checkpoint(tmp_path / "b", 3)
    assert json.loads((a / "manifest.json").read_text())["meta"] == {"format": 1, "energy": "IsingEnergy"}
    (a / "model.eqx").write_bytes((b / "model.eqx").read_bytes())
    before = {p.name: p.read_bytes() for p in a.iterdir()}
    assert main(["estimate", "--checkpoint", str(a), "--n-samples", "64"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "model.eqx is not the file this sampler checkpoint was saved with" in line, line
    assert {p.name: p.read_bytes() for p in a.iterdir()} == before
    # a save cut short (the manifest is written last, after every part) is refused the same way
    (b / "manifest.json").unlink()
    with pytest.raises(ValueError, match="no manifest.json, so this sampler checkpoint is not whole"):
        read_checkpoint_spec(b)


def test_a_new_save_drops_the_old_manifest_and_ignores_an_old_history(tmp_path):
    ck = _tiny_checkpoint(tmp_path / "ck", 3)
    _tiny_checkpoint(ck, 3, history=False)  # the history.npz of the first save stays, but is not this save's
    assert "history.npz" not in json.loads((ck / "manifest.json").read_text())["files"]
    assert (ck / "history.npz").is_file() and load_sampler(ck).history == {}


def test_the_shipped_checkpoint_has_its_manifest():
    from iclr25.sdds.checkpoint import DEMO_CHECKPOINT, WRITTEN
    from iclr25.utils.checkpoints import verify_manifest

    assert sorted(verify_manifest(DEMO_CHECKPOINT)["files"]) == ["config.json", "energy.npz", "history.npz",
                                                                  "model.eqx"]
    assert cli_module.CHECKPOINT_FILES == WRITTEN  # train's previous-run files are the ones save_sampler writes


def test_cli_estimate_out_naming_its_checkpoint_is_refused_before_loading(tmp_path, capsys):
    # issue 57: estimate --out CK (the checkpoint folder itself) ran
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "config.json").write_text("mine")
    for out, says in ((ck, "is also an input"), (ck / "sub", "inside the input folder")):
        assert main(["estimate", "--checkpoint", str(ck), "--out", str(out)]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith("iclr25 sdds: error: --out ") and says in line, line
    assert sorted(p.name for p in ck.iterdir()) == ["config.json"] and (ck / "config.json").read_text() == "mine"


def test_cli_train_keeps_a_previous_checkpoint_without_overwrite(tmp_path, capsys):
    # issue 57: train replaced a previous checkpoint folder; the --out check now runs before the config is read
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 2}, "sampler": {}}))  # L = 2 fails after it
    out = tmp_path / "ck"
    out.mkdir()
    (out / "model.eqx").write_bytes(b"weights of an earlier run")
    assert main(["train", "--config", str(cfg), "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--out" in line and "already holds a run (model.eqx)" in line and "--overwrite" in line, line
    assert (out / "model.eqx").read_bytes() == b"weights of an earlier run"
    assert main(["train", "--config", str(cfg), "--out", str(out), "--overwrite"]) == 2
    assert "L (lattice size)" in capsys.readouterr().err  # past the output check, to the config's own error
    # a checkpoint part that is a symbolic link is never written through, even with --overwrite
    mine = tmp_path / "mine.json"
    mine.write_text("mine")
    (out / "config.json").symlink_to(mine)
    assert main(["train", "--config", str(cfg), "--out", str(out), "--overwrite"]) == 2
    assert "symbolic link" in one_error_line(capsys.readouterr().err) and mine.read_text() == "mine"
    # the config as the output folder, or a folder holding it: refused, the config kept
    for bad, says in ((cfg, "is an existing file"), (tmp_path, "holds the input")):
        assert main(["train", "--config", str(cfg), "--out", str(bad)]) == 2
        assert says in one_error_line(capsys.readouterr().err)
    assert json.loads(cfg.read_text())["problem"]["L"] == 2


def test_cli_out_under_a_file_is_refused_before_training(tmp_path, capsys):
    # issue 57: the --out of train and estimate was found unwritable only after the work
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"problem": {"kind": "ising", "L": 3}, "sampler": {"n_epochs": 5}}))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["train", "--config", str(cfg), "--out", str(blocker / "ck")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert main(["estimate", "--checkpoint", str(tmp_path / "nope"), "--out", str(blocker / "o")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)


def test_diverged_weights_are_not_saved():
    model, bad = [np.ones((2, 2), np.float32), np.zeros(2, np.float32)], [np.ones(2), np.array([0.0, np.nan])]
    cli_module._check_finite_weights(model, "cfg.json: training diverged", {})
    with pytest.raises(ValueError, match="cfg.json: training diverged: the network's weights are not finite"):
        cli_module._check_finite_weights(bad, "cfg.json: training diverged", {"loss": float("nan")})
