"""Bad input raises ValueError/TypeError naming the argument and what was expected; no half-written files."""

import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from iclr25.piorf import (
    TrainConfig,
    as_edge_index,
    borf,
    channel_mesh,
    cylinder_flow,
    digl,
    effective_resistance,
    fosr,
    load_trajectory,
    ollivier_ricci,
    paired_test,
    rewire,
    sdrf,
    simulate_cylinder,
    train,
)
from iclr25.utils.io import DataFileError
from iclr25.utils.testing import one_error_line

EI = as_edge_index(nx.grid_2d_graph(5, 5))[0]
N = 25
GAMMA = ollivier_ricci(EI).node
VEL = np.random.default_rng(0).normal(size=(N, 2))


@pytest.mark.parametrize("bad, exc, match", [
    (np.array([[0, 1], [1, 30]]), ValueError, r"edge_index must hold node ids in \[0, 25\)"),
    (np.array([[0, 1, 2], [1, 2, 0]]), ValueError, "edge_index must be symmetric"),
    (np.array([[0, 0], [0, 1]]), ValueError, "self-loops"),
    (np.zeros((3, 4), dtype=int), ValueError, r"edge_index must have shape \(2, E\)"),
    (np.array([[0.0, 1.0], [1.0, 0.0]]), TypeError, "edge_index must hold integers"),
    ("edges", TypeError, "edge_index must be"),
])
def test_bad_edge_index(bad, exc, match):
    with pytest.raises(exc, match=match):
        rewire(bad, GAMMA, VEL)


def test_empty_graph_needs_n_nodes():
    with pytest.raises(ValueError, match="empty"):
        ollivier_ricci(np.zeros((2, 0), dtype=int))


@pytest.mark.parametrize("vel, exc, match", [
    (np.zeros((N - 1, 2)), ValueError, r"velocity must have shape \(25, d\)"),
    (np.zeros((N, 2, 2)), ValueError, "velocity must have shape"),
    (np.full((N, 2), np.nan), ValueError, "velocity must be finite"),
    (np.full((N, 2), "a"), TypeError, "velocity must be a real array"),
])
def test_bad_velocity(vel, exc, match):
    with pytest.raises(exc, match=match):
        rewire(EI, GAMMA, vel)


@pytest.mark.parametrize("ratio", [0, 1, -0.1, 1.5, float("nan"), True])
def test_ratio_outside_unit_interval(ratio):
    with pytest.raises(ValueError, match=r"ratio must be a number in \(0, 1\)"):
        rewire(EI, GAMMA, VEL, ratio=ratio)
    with pytest.raises(ValueError, match=r"ratio must be a number in \(0, 1\)"):
        ollivier_ricci(EI).bottleneck(ratio)


def test_bad_curvature_partner_projection_and_alpha():
    with pytest.raises(ValueError, match="node_curvature must be finite"):
        rewire(EI, np.full(N, np.inf), VEL)
    with pytest.raises(ValueError, match="node_curvature must be a 1-D"):
        rewire(EI, GAMMA[:, None], VEL)
    with pytest.raises(ValueError, match="partner must be one of"):
        rewire(EI, GAMMA, VEL, partner="closest")
    with pytest.raises(ValueError, match=r"projection must be a finite vector of shape \(2,\)"):
        rewire(EI, GAMMA, VEL, projection=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\)"):
        ollivier_ricci(EI, alpha=1.0)
    with pytest.raises(TypeError, match="seed must be a non-negative integer"):
        rewire(EI, GAMMA, VEL, seed=1.5)


def test_baselines_validate():
    with pytest.raises(ValueError, match="loops must be an integer >= 1"):
        sdrf(EI, loops=0)
    with pytest.raises(ValueError, match="iterations must be an integer >= 1"):
        fosr(EI, iterations=-1)
    with pytest.raises(ValueError, match="n_add must be an integer >= 0"):
        borf(EI, n_add=-1)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        digl(EI, alpha=0.0)
    with pytest.raises(ValueError, match="edge_index must be symmetric"):
        sdrf(np.array([[0, 1], [1, 2]]))


def test_diagnostics_validate():
    with pytest.raises(ValueError, match="sources must be node ids"):
        effective_resistance(EI, np.array([99]))
    with pytest.raises(ValueError, match="sources must be a non-empty"):
        effective_resistance(EI, np.array([], dtype=int))


def test_simulation_and_data_parameters():
    with pytest.raises(ValueError, match="reynolds must be in"):
        simulate_cylinder(reynolds=-5)
    with pytest.raises(ValueError, match="cylinder"):
        simulate_cylinder(center=(5.0, 1.0))
    with pytest.raises(ValueError, match="n_trajectories must be a positive integer"):
        cylinder_flow(0)
    with pytest.raises(ValueError, match="reynolds must be a range"):
        cylinder_flow(1, reynolds=(100.0, 50.0))
    with pytest.raises(ValueError, match="h_min and h_max"):
        channel_mesh(10, 2, (2, 1), 0.3, h_min=1.0, h_max=0.5)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        TrainConfig(steps=0)
    with pytest.raises(ValueError, match="partner must be one of"):
        TrainConfig(partner="x")
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        TrainConfig(top_k=0)
    with pytest.raises(TypeError, match="dataset must be a non-empty FlowDataset"):
        train([1, 2])
    with pytest.raises(ValueError, match="vary must be one of"):
        cylinder_flow(1, vary="density")
    with pytest.raises(ValueError, match="reynolds must be at most 240 with vary='speed'"):
        cylinder_flow(1, reynolds=(100.0, 300.0))


def test_bad_top_k_pos_and_metric_arguments():
    with pytest.raises(ValueError, match="top_k must be an integer in"):
        rewire(EI, GAMMA, VEL, top_k=0)
    with pytest.raises(ValueError, match="pos must be a finite"):
        rewire(EI, GAMMA, VEL, partner="gradient", pos=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="a and b must be 1-D with the same length"):
        paired_test([1.0, 2.0], [1.0, 2.0, 3.0])


def test_invalid_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_trajectory(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(DataFileError, match="junk.npz: not a NumPy .npz file"):
        load_trajectory(junk)
    words = tmp_path / "words.npz"
    np.savez(words, pos=np.full((3, 2), "a"), edge_index=np.array([[0, 1], [1, 0]]))
    with pytest.raises(DataFileError, match="'pos' must be a numeric array"):
        load_trajectory(words)
    re2 = tmp_path / "re2.npz"
    np.savez(re2, pos=np.zeros((2, 2)), edge_index=np.array([[0, 1], [1, 0]]), reynolds=np.array([1.0, 2.0]))
    with pytest.raises(DataFileError, match="'reynolds' must be one number"):
        load_trajectory(re2)
    partial = tmp_path / "partial.npz"
    np.savez(partial, velocity=np.zeros((2, 3, 2)))
    with pytest.raises(DataFileError, match="needs arrays 'pos'"):
        load_trajectory(partial)
    bad = tmp_path / "bad.npz"
    np.savez(bad, pos=np.zeros((3, 2)), edge_index=np.array([[0, 1], [1, 7]]))
    with pytest.raises(DataFileError, match="node ids"):
        load_trajectory(bad)


def test_cli_bad_file_exits_2_and_writes_nothing(tmp_path):
    junk = tmp_path / "mesh.npz"
    junk.write_bytes(b"junk")
    out = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-m", "iclr25.piorf", "rewire", str(junk), "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "mesh.npz: not a NumPy .npz file" in proc.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["mesh.npz"]


@pytest.mark.parametrize("argv, message", [
    # 0.1.1 simulated for 53 s before `--train-steps -1` failed
    (["--train-steps", "-1"], "--train-steps must be an integer >= 1, got -1"),
    # 0.1.1: "n_train must be in [1, 0]" (an internal name) after simulating
    (["--n-trajectories", "1"], "--n-trajectories must be an integer >= 2, got 1"),
    (["--steps", "1"], "--steps must be an integer >= 2, got 1"),
    # 0.1.1 clamped the horizon to 19 and still labelled the metric rmse_50
    (["--steps", "20", "--horizon", "50"], "--horizon must be an integer in [1, --steps - 1 = 19]"),
    (["--horizon", "0"], "--horizon must be an integer in [1, --steps - 1 = 99]"),
    (["--layers", "0"], "--layers must be an integer >= 1"),
    (["--latent", "-3"], "--latent must be an integer >= 1"),
    (["--seed", "-1"], "--seed must be a non-negative integer"),
    (["--data-seed", "-1"], "--data-seed must be a non-negative integer"),
    (["--threads", "0"], "--threads must be an integer >= 1"),
    # sizes that cannot finish (the 2026-12-02 size sweep found each of these starting a run)
    (["--n-trajectories", "1000000000000"], "--n-trajectories 1000000000000 --steps 100 needs about"),
    (["--train-steps", "1000000000000"], "would take about"),
    (["--layers", "1000000000000"], "1000000000000 blocks, width 64) needs about"),
    (["--latent", "1000000000000"], "width 1000000000000) needs about"),
    (["--top-k", "1000000000000"], "--top-k must be below the mesh's 722 nodes, got 1000000000000"),
])
def test_cli_train_checks_arguments_before_simulating(tmp_path, capsys, monkeypatch, argv, message):
    from iclr25.piorf import cli

    def no_simulation(*args, **kwargs):
        raise AssertionError("the simulation started before the arguments were checked")

    monkeypatch.setattr("iclr25.piorf.datasets.cylinder_flow", no_simulation)
    out = tmp_path / "run"
    assert cli.main(["train", *argv, "--out", str(out)]) == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["generate", "--n-trajectories", "0", "--out", "{tmp}/o.npz"], "--n-trajectories must be an integer >= 1"),
    (["generate", "--re-min", "200", "--out", "{tmp}/o.npz"], "--re-min and --re-max must satisfy"),
    (["generate", "--out", "{tmp}/flow.csv"], "--out must name a .npz file"),
    (["repro", "--seeds", "0", "--out", "{tmp}/r"], "--seeds must be an integer >= 1"),
    (["repro", "--train-steps", "0", "--out", "{tmp}/r"], "--train-steps must be an integer >= 1"),
    (["repro", "--jobs", "0", "--out", "{tmp}/r"], "--jobs must be an integer >= 1"),
    (["repro", "--train-steps", "1000000000000", "--out", "{tmp}/r"], "would take about"),
    (["generate", "--n-trajectories", "1000000000000", "--out", "{tmp}/o.npz"], "needs about"),
    (["rewire", "{tmp}/missing.npz", "--ratio", "1.5", "--out", "{tmp}/o.npz"],
     "--ratio must be a number in (0, 1), got 1.5"),
    (["rewire", "{tmp}/missing.npz", "--out", "{tmp}/o.npz"], "missing.npz: no such file"),
])
def test_cli_other_commands_check_arguments_first(tmp_path, capsys, monkeypatch, argv, message):
    from iclr25.piorf import cli

    def no_simulation(*args, **kwargs):
        raise AssertionError("the simulation started before the arguments were checked")

    monkeypatch.setattr("iclr25.piorf.datasets.cylinder_flow", no_simulation)
    assert cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_no_import_circle_and_help_is_light():
    # cli.py <-> repro.py imported each other (repro took the flow figure from cli); --help loads no torch/jax
    code = ("import sys; import iclr25.piorf.repro, iclr25.piorf.cli; "
            "from iclr25.piorf.figures import flow_figure; "
            "assert not any(m in sys.modules for m in ('torch', 'jax', 'ot')), "
            "[m for m in ('torch', 'jax', 'ot') if m in sys.modules]")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    import ast
    from pathlib import Path

    import iclr25.piorf.repro as repro

    tree = ast.parse(Path(repro.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "cli" not in imported


@pytest.mark.parametrize("lr", [0.0, -1e-3, float("nan"), float("inf")])
def test_long_range_task_checks_its_learning_rate(lr):
    from iclr25.piorf import long_range_task

    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        long_range_task(lr=lr, steps=1)


def test_claims_reject_an_unknown_rung():
    from iclr25.piorf.claims import REGISTRY

    with pytest.raises(ValueError, match="unknown rung"):
        REGISTRY.decide("rewiring-lowers-resistance", "full")
