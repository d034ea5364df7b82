"""Bad input raises ValueError/TypeError naming the argument; failed writes leave no files."""

import json

import jax
import numpy as np
import pytest

from iclr25.sdds import (
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
)
from iclr25.sdds.cli import main


@pytest.mark.parametrize("L", [0, 1, 2, -3, 2.5, True])
def test_wrong_lattice_size(L):
    with pytest.raises(ValueError, match="L"):
        IsingEnergy(L)
    with pytest.raises(ValueError, match="L"):
        exact_ising(L, 0.4)


def test_exact_ising_too_large_lattice():
    with pytest.raises(ValueError, match="L must be <= 12"):
        exact_ising(13, 0.4)


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


def test_bad_decode_input():
    m = MISEnergy.from_graphs([(3, np.array([[0, 1]]))])
    with pytest.raises(ValueError, match="probs"):
        decode_ce(m, np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="probs"):
        decode_ce(m, np.full((2, 3), 1.5))


def test_bad_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a sampler checkpoint"):
        load_sampler(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "energy.npz").write_bytes(b"")
    (tmp_path / "model.eqx").write_bytes(b"")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_sampler(tmp_path)


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


def test_help_does_not_import_jax():
    # `iclr25 sdds --help` must answer at once: the package and its CLI load JAX only when a command runs
    import subprocess
    import sys

    code = ("import sys, iclr25.sdds, iclr25.sdds.cli; "
            "assert 'jax' not in sys.modules and 'scipy.optimize' not in sys.modules, "
            "sorted(m for m in sys.modules if m.startswith(('jax', 'scipy.optimize')))[:5]; "
            "assert iclr25.sdds.__version__")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
