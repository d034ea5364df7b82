"""Where cl-optimal-control computes (issue 59): ``--device cpu`` and ``--device auto`` give the same numbers on
this machine and record the device, an absent device is one line naming ``--device``, and the paper rung runs
its code path once (``iclr25 claims cl-optimal-control --rung paper --smoke``) and states its cost."""

import math
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from iclr25.cl_optimal_control import Problem, solve
from iclr25.cl_optimal_control.claims import REGISTRY
from iclr25.cl_optimal_control.cli import main
from iclr25.cl_optimal_control.ode import resolve_device
from iclr25.utils.device import jax_gpus
from iclr25.utils.testing import check_paper_rung

TINY = ["--alpha-1", "1", "--alpha-f", "2", "--dt", "0.05", "--n-intervals", "10"]  # the solve doctest's problem


def test_device_cpu_and_auto_give_the_same_numbers_and_say_where(tmp_path, capsys):
    # `simulate` on the default problem: its ODE program is compiled already (the claims), the SGD is tiny
    from iclr25.cl_optimal_control import constant_mix, save_schedule
    from iclr25.utils.results import RunResult

    p = Problem()
    save_schedule(tmp_path / "s.json", constant_mix(p, 0.3), p)
    runs = {}
    for device in ("cpu", "auto"):
        assert main(["simulate", str(tmp_path / "s.json"), "--n", "16", "--seeds", "2", "--device", device,
                     "--out", str(tmp_path / device)]) == 0
        capsys.readouterr()
        runs[device] = RunResult.load(tmp_path / device / "results.json")
    assert runs["cpu"].machine["device"].startswith("cpu:0")  # the run record says where the ODE ran
    if jax.devices()[0].platform == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        values = {d: {m.name: (m.value, m.peer) for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and runs["auto"].machine["device"] == runs["cpu"].machine["device"]
        assert all(math.isfinite(v) for v, _ in values["cpu"].values())


def test_the_python_api_takes_a_device():
    p = Problem()  # the default problem's programs are compiled already
    on_cpu = solve(p, "pmp", show_progress=False, device="cpu", max_iter=2)
    by_object = solve(p, "pmp", show_progress=False, device=jax.devices("cpu")[0], max_iter=2)
    assert on_cpu.cost == by_object.cost and on_cpu.schedule.u.tolist() == by_object.schedule.u.tolist()


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    if not jax_gpus():
        assert main(["solve", *TINY, "--device", "cuda", "--out", str(tmp_path / "s.json")]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "s.json").exists()
    with pytest.raises(ValueError, match="--device mps"):
        resolve_device("mps")
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["demo", "--device", "gpu", "--out", str(tmp_path / "demo")])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


def test_paper_rung_runs_one_step_on_the_cpu(monkeypatch):
    # what `iclr25 claims cl-optimal-control --rung paper --smoke --device cpu` measures, in this process (the
    # programs are compiled already): every claim of the rung, one solver iteration each
    monkeypatch.setenv("ICLR25_DEVICE", "cpu")
    values = check_paper_rung(REGISTRY)  # every claim finite, in a smoke run (ICLR25_SMOKE=1)
    assert {"optimal-beats-heuristics", "focus-on-new-task", "final-revision"} <= set(values)


def test_paper_rung_states_its_cost_and_is_refused_here():
    env = {k: v for k, v in os.environ.items() if k not in ("ICLR25_DEVICE", "ICLR25_SMOKE")}
    exe = str(Path(sys.executable).parent / "iclr25")
    est = subprocess.run([exe, "claims", "cl-optimal-control", "--rung", "paper", "--estimate"], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert est.returncode == 0 and "CPU core-hours per seed" in est.stdout, est.stderr
