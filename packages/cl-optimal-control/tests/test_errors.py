"""Bad input raises ValueError/TypeError naming the argument and what was expected."""

import json

import numpy as np
import pytest

from iclr25.cl_optimal_control import Problem, Schedule, constant_mix, load_schedule, simulate, solve
from iclr25.cl_optimal_control.cli import main


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_gamma_outside_unit_interval(gamma):
    with pytest.raises(ValueError, match="gamma"):
        Problem(gamma=gamma)


@pytest.mark.parametrize("field", ["eta", "eta_v", "noise", "eta_max"])
def test_negative_learning_rates_and_noise(field):
    with pytest.raises(ValueError, match=field):
        Problem(**{field: -1.0})


def test_wrong_types_and_horizon():
    with pytest.raises(TypeError, match="n_hidden"):
        Problem(n_hidden=2.5)
    with pytest.raises(TypeError, match="gamma"):
        Problem(gamma="0.5")
    with pytest.raises(ValueError, match="alpha_f"):
        Problem(alpha_1=5.0, alpha_f=4.0)
    with pytest.raises(ValueError, match="n_intervals"):
        Problem(n_intervals=10_000)


@pytest.mark.parametrize("u", [[[0.5, 0.6]], [[-0.2, 1.2]], [[np.nan, 1.0]], [[1.0]], [0.5, 0.5]])
def test_schedule_outside_simplex(u):
    with pytest.raises(ValueError, match="schedule u"):
        Schedule(u=u)


def test_negative_learning_rate_factor_and_mismatches():
    with pytest.raises(ValueError, match="eta_factor"):
        Schedule(u=[[0.5, 0.5]], eta_factor=[-1.0])
    p = Problem()
    with pytest.raises(ValueError, match="tasks"):
        Schedule(u=[[0.2, 0.3, 0.5]]).check(p)
    with pytest.raises(ValueError, match="eta_max"):
        Schedule(u=[[0.5, 0.5]], eta_factor=[2.0]).check(p)
    with pytest.raises(ValueError, match="replay fraction"):
        constant_mix(p, 1.5)


def test_solver_arguments():
    p = Problem(alpha_1=1.0, alpha_f=2.0, n_intervals=5)
    with pytest.raises(ValueError, match="method"):
        solve(p, "newton")
    with pytest.raises(TypeError, match="problem"):
        solve({"gamma": 0.5})
    with pytest.raises(ValueError, match="rho0"):
        solve(p, rho0=1.5)
    with pytest.raises(ValueError, match="n must"):
        simulate(p, constant_mix(p, 0.2), n=2)
    with pytest.raises(TypeError, match="n_seeds"):
        simulate(p, constant_mix(p, 0.2), n_seeds=1.5)


def test_schedule_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schedule": {"u": [[0.7, 0.7]]}}))
    with pytest.raises(ValueError, match="bad.json.*simplex"):
        load_schedule(bad)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        load_schedule(tmp_path / "missing.json")


def test_cli_rejects_bad_flags(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["solve", "--gamma", "1.5", "--out", str(out)]) == 2
    assert "gamma" in capsys.readouterr().err and not out.exists()
    assert main(["solve", "--eta", "-1", "--out", str(out)]) == 2
    assert "eta" in capsys.readouterr().err and not out.exists()
    sched = tmp_path / "u.json"
    sched.write_text(json.dumps({"u": [[0.5, 0.5]]}))
    assert main(["simulate", str(sched), "--n", "0", "--out", str(tmp_path / "o")]) == 2
    assert "--n" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_cli_checks_out_before_any_work(tmp_path, capsys):
    out = tmp_path / "s.json"
    out.write_text("mine")
    assert main(["solve", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "--overwrite" in err and out.read_text() == "mine", err
    sched = tmp_path / "u.json"
    sched.write_text(json.dumps({"u": [[0.5, 0.5]]}))
    assert main(["simulate", str(sched), "--out", str(sched)]) == 2
    assert "--out" in capsys.readouterr().err


def test_cli_simulate_refuses_sizes_it_cannot_finish(tmp_path, capsys):
    sched = tmp_path / "u.json"
    sched.write_text(json.dumps({"u": [[0.5, 0.5]]}))
    out = tmp_path / "o"
    assert main(["simulate", str(sched), "--n", "1000000", "--seeds", "10000", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force" in err and "--n 1000000" in err, err
    assert not out.exists()


# --- outputs (issue 57): every output declared once, checked before any work, nothing replaced silently ---

def _fake_solver(monkeypatch, cost=0.25):
    """``solve`` and ``heuristics`` of the command replaced by instant stand-ins (no ODE to compile)."""
    import types

    from iclr25.cl_optimal_control import control
    from iclr25.cl_optimal_control.schedule import sequential

    sched = sequential(Problem())
    res = types.SimpleNamespace(schedule=sched, cost=cost, n_iter=1, stationarity=1.0, wall_time_s=0.0)
    monkeypatch.setattr(control, "solve", lambda problem, method, control_eta=False, device=None: res)
    monkeypatch.setattr(control, "heuristics", lambda problem, device=None: {"sequential": (sched, 0.5)})


def test_cli_solve_existing_file_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys, monkeypatch):
    _fake_solver(monkeypatch)
    out = tmp_path / "s.json"
    out.write_text("mine")
    assert main(["solve", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "exists; pass --overwrite" in err and out.read_text() == "mine", err
    assert main(["solve", "--out", str(out), "--overwrite"]) == 0
    capsys.readouterr()
    assert load_schedule(out)[0].n_intervals == Problem().n_intervals
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]  # no temporary file left beside it


def test_cli_solve_input_or_symlink_as_out_is_refused(tmp_path, capsys, monkeypatch):
    _fake_solver(monkeypatch)
    prob = tmp_path / "p.json"
    prob.write_text(json.dumps({"gamma": 0.3}))
    before = prob.read_bytes()
    assert main(["solve", "--problem", str(prob), "--out", str(prob), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is also an input" in err and prob.read_bytes() == before, err
    link = tmp_path / "link.json"
    link.symlink_to(prob)
    assert main(["solve", "--out", str(link), "--overwrite"]) == 2
    assert "symbolic link" in capsys.readouterr().err and prob.read_bytes() == before
    assert main(["solve", "--out", str(tmp_path / "s.txt")]) == 2
    assert "--out must name a .json file" in capsys.readouterr().err


def test_cli_solve_non_finite_cost_writes_nothing(tmp_path, capsys, monkeypatch):
    _fake_solver(monkeypatch, cost=float("nan"))
    out = tmp_path / "s.json"
    assert main(["solve", "--out", str(out)]) == 2
    assert "non-finite cost or schedule" in capsys.readouterr().err and not out.exists()


def test_cli_simulate_previous_run_kept_and_out_checked_before_work(tmp_path, capsys):
    sched = tmp_path / "u.json"
    sched.write_text(json.dumps({"u": [[0.5, 0.5]]}))
    out = tmp_path / "o"
    out.mkdir()
    (out / "results.json").write_text("mine")
    assert main(["simulate", str(sched), "--out", str(out)]) == 2
    assert "already holds a run (results.json)" in capsys.readouterr().err
    assert (out / "results.json").read_text() == "mine"
    assert main(["simulate", str(sched), "--out", str(out), "--overwrite", "--n", "0"]) == 2
    assert "--n must be" in capsys.readouterr().err  # past the output check, to the next one
    (tmp_path / "file").write_text("x")
    assert main(["simulate", str(sched), "--out", str(tmp_path / "file" / "o")]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["simulate", str(sched), "--out", str(tmp_path)]) == 2  # the folder holding the schedule
    assert "holds the input" in capsys.readouterr().err


def test_cli_simulate_diverged_sgd_writes_nothing(tmp_path, capsys, monkeypatch):
    import types

    from iclr25.cl_optimal_control import ode, sgd

    alpha = np.linspace(0.0, 20.0, 5)
    monkeypatch.setattr(ode, "integrate", lambda problem, schedule, device=None: types.SimpleNamespace(
        alpha=alpha, errors=np.ones((5, 2)), cost=1.0))
    monkeypatch.setattr(sgd, "simulate", lambda *a, **k: sgd.SimulationResult(
        alpha=alpha, errors=np.full((2, 5, 2), np.nan), n=8))
    sched = tmp_path / "u.json"
    sched.write_text(json.dumps({"u": [[0.5, 0.5]] * 40}))
    out = tmp_path / "o"
    assert main(["simulate", str(sched), "--n", "8", "--seeds", "2", "--out", str(out)]) == 2
    assert "online SGD diverged" in capsys.readouterr().err and not out.exists()
