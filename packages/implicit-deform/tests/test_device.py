"""Where implicit-deform computes (issue 59): the Python API and ``--device`` (``cpu`` and ``auto`` give the same
numbers on this machine: tests/test_errors.py runs ``fit`` with both), an absent device is one line naming
``--device``, and the paper rung runs its code path once (``iclr25 claims implicit-deform --rung paper --smoke``)
and states its cost."""

import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from iclr25.implicit_deform.claims import REGISTRY
from iclr25.implicit_deform.cli import main
from iclr25.implicit_deform.deform import resolve_device
from iclr25.utils.device import jax_gpus
from iclr25.utils.testing import check_paper_rung


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    x = np.random.default_rng(0).normal(size=(300, 3))
    np.save(tmp_path / "a.npy", 0.5 * x / np.linalg.norm(x, axis=1, keepdims=True))
    if not jax_gpus():
        assert main(["fit", str(tmp_path / "a.npy"), str(tmp_path / "a.npy"), "--device", "cuda", "--out",
                     str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="--device mps"):
        resolve_device("mps")
    assert resolve_device(jax.devices("cpu")[0]) == jax.devices("cpu")[0]
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch):
    # what `iclr25 claims implicit-deform --rung paper --smoke --device cpu` measures, in this process: every
    # claim of the rung, one chunk of each stage with the test preset's networks
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    values = check_paper_rung(REGISTRY)  # every claim finite, in a smoke run (ICLR25_SMOKE=1)
    assert set(values) == {"intermediate-within-0.7x-of-sdf-blend", "intermediate-beats-straight-line",
                        "velocity-field-keeps-the-volume"}


def test_paper_rung_states_its_cost():
    env = {k: v for k, v in os.environ.items() if k not in ("ICLR25_DEVICE", "ICLR25_SMOKE")}
    exe = str(Path(sys.executable).parent / "iclr25")
    est = subprocess.run([exe, "claims", "implicit-deform", "--rung", "paper", "--estimate"], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert est.returncode == 0 and "GPU-hours per seed" in est.stdout, est.stderr
