"""Every path a command writes is checked before any work (issue 57): an input is never an output, an existing
file (the default ``MESH-rewired.npz`` too) or a previous run is kept without --overwrite, symbolic links are never
replaced, and a location that cannot be written is refused before the simulation."""

import os

import networkx as nx
import numpy as np
import pytest

from iclr25.piorf import as_edge_index, load_trajectory
from iclr25.piorf.cli import main
from iclr25.piorf.datasets import FlowDataset, Trajectory, save_trajectory
from iclr25.utils.testing import deny_writes, one_error_line


def _grid_flow(frames: int = 2, seed: int = 0) -> Trajectory:
    """A 5 x 5 grid 'mesh' with random velocity frames: small enough to rewire in a blink."""
    ei = as_edge_index(nx.grid_2d_graph(5, 5))[0]
    rng = np.random.default_rng(seed)
    pos = np.stack(np.meshgrid(np.arange(5.0), np.arange(5.0), indexing="ij"), -1).reshape(-1, 2)
    return Trajectory(pos=pos, cells=np.zeros((0, 3), dtype=np.int64), edge_index=ei,
                      node_type=np.zeros(25, dtype=np.int64), velocity=rng.normal(size=(frames, 25, 2)),
                      pressure=rng.normal(size=(frames, 25)), reynolds=100.0 + seed)


@pytest.fixture
def fake_flow(monkeypatch):
    """`generate` without the lattice Boltzmann solver (the outputs are what is tested)."""
    def fake(n_trajectories, steps, **kwargs):
        return FlowDataset(tuple(_grid_flow(steps, kwargs["seed"] + k) for k in range(n_trajectories)), {})

    monkeypatch.setattr("iclr25.piorf.datasets.cylinder_flow", fake)


@pytest.fixture
def no_work(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the work started before --out was checked")

    for name in ("iclr25.piorf.datasets.cylinder_flow", "iclr25.piorf.datasets.load_trajectory",
                 "iclr25.piorf.curvature.ollivier_ricci"):
        monkeypatch.setattr(name, boom)


def test_rewire_out_naming_its_input_is_refused_and_the_input_kept(tmp_path, capsys, no_work):
    flow = save_trajectory(tmp_path / "flow.npz", _grid_flow())
    before = flow.read_bytes()
    os.link(flow, tmp_path / "hard.npz")
    # 0.4 wrote the rewired graph over flow.npz, even with another spelling of its path or a hard link
    for out in (flow, tmp_path / "." / "flow.npz", tmp_path / "hard.npz"):
        assert main(["rewire", str(flow), "--out", str(out), "--overwrite"]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert f"--out {out} is also an input" in line, line
    assert flow.read_bytes() == before


def test_rewire_keeps_an_existing_output_and_its_default(tmp_path, capsys):
    flow = save_trajectory(tmp_path / "flow.npz", _grid_flow())
    default = tmp_path / "flow-rewired.npz"
    default.write_bytes(b"mine")
    out = tmp_path / "r.npz"
    out.write_bytes(b"mine too")
    # 0.4 replaced both without --overwrite
    assert main(["rewire", str(flow)]) == 2
    assert f"--out {default} exists; pass --overwrite" in one_error_line(capsys.readouterr().err)
    assert main(["rewire", str(flow), "--out", str(out)]) == 2
    assert f"--out {out} exists; pass --overwrite" in one_error_line(capsys.readouterr().err)
    assert default.read_bytes() == b"mine" and out.read_bytes() == b"mine too"
    assert main(["rewire", str(flow), "--ratio", "0.1", "--overwrite"]) == 0
    with np.load(default) as z:
        assert z["edge_index"].shape[0] == 2 and len(z["node_curvature"]) == 25
    assert load_trajectory(flow).n_nodes == 25  # the input is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow-rewired.npz", "flow.npz", "r.npz"]


def test_generate_keeps_existing_files_and_checks_every_trajectory_file_first(tmp_path, capsys, fake_flow):
    out = tmp_path / "flow.npz"
    out.write_bytes(b"mine")
    assert main(["generate", "--steps", "3", "--out", str(out)]) == 2
    assert f"--out {out} exists; pass --overwrite" in one_error_line(capsys.readouterr().err)
    assert out.read_bytes() == b"mine"
    assert main(["generate", "--steps", "3", "--out", str(out), "--overwrite"]) == 0
    assert load_trajectory(out).n_steps == 3
    # several trajectories go to OUT-k.npz: a user's OUT-1.npz is kept, and nothing is simulated or written
    many = tmp_path / "many.npz"
    (tmp_path / "many-1.npz").write_bytes(b"mine")
    assert main(["generate", "--steps", "3", "--n-trajectories", "3", "--out", str(many)]) == 2
    assert "--out (trajectory file many-1.npz)" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / "many-1.npz").read_bytes() == b"mine" and not (tmp_path / "many-0.npz").exists()
    assert main(["generate", "--steps", "3", "--n-trajectories", "3", "--out", str(many), "--overwrite"]) == 0
    assert [load_trajectory(tmp_path / f"many-{k}.npz").reynolds for k in range(3)] == [100.0, 101.0, 102.0]


def test_symlinks_and_unwritable_places_are_refused_before_work(tmp_path, capsys, no_work):
    theirs = tmp_path / "theirs.npz"
    theirs.write_bytes(b"theirs")
    link = tmp_path / "link.npz"
    link.symlink_to(theirs)
    assert main(["generate", "--out", str(link), "--overwrite"]) == 2
    assert "symbolic link" in one_error_line(capsys.readouterr().err)
    assert link.is_symlink() and theirs.read_bytes() == b"theirs"
    assert main(["rewire", str(theirs), "--out", str(link), "--overwrite"]) == 2
    assert "symbolic link" in one_error_line(capsys.readouterr().err)
    # below a file: 0.4 found out after the simulation
    assert main(["generate", "--out", str(theirs / "sub" / "f.npz")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert main(["train", "--out", str(theirs / "run")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)


def test_a_folder_below_a_read_only_one_is_refused_before_work(tmp_path, capsys, no_work, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    deny_writes(monkeypatch, ro)
    try:
        for argv in (["generate"], ["train"], ["rewire", str(tmp_path / "m.npz")]):
            assert main([*argv, "--out", str(ro / "new" / ("x.npz" if argv[0] != "train" else "run"))]) == 2
            assert "not writable" in one_error_line(capsys.readouterr().err)
    finally:
        ro.chmod(0o700)


def test_train_keeps_a_previous_run(tmp_path, capsys, no_work):
    out = tmp_path / "run"
    out.mkdir()
    (out / "training.png").write_bytes(b"png")
    # 0.4 wrote over a previous run's files
    assert main(["train", "--out", str(out)]) == 2
    assert "already holds a run (training.png)" in one_error_line(capsys.readouterr().err)
    assert (out / "training.png").read_bytes() == b"png"


@pytest.mark.parametrize("field, value, match", [
    ("pos", 1e200, "'pos' has entries up to"),
    ("velocity", 1e30, "'velocity' has entries up to"),
    ("pos", 1j, "'pos' must be a numeric array"),
])
def test_overflowing_or_complex_files_are_refused_naming_the_file(tmp_path, capsys, field, value, match):
    traj = _grid_flow()
    arrays = {"pos": traj.pos, "edge_index": traj.edge_index, "velocity": traj.velocity}
    arrays[field] = arrays[field] * value
    np.savez(tmp_path / "big.npz", **arrays)
    assert main(["rewire", str(tmp_path / "big.npz"), "--out", str(tmp_path / "r.npz")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "big.npz" in line and match in line, line
    assert not (tmp_path / "r.npz").exists()


@pytest.mark.parametrize("command, name", [("demo", "rewiring.png"), ("repro", "table.md")])
def test_demo_and_repro_keep_a_previous_runs_files(tmp_path, capsys, no_work, command, name):
    (tmp_path / name).write_bytes(b"mine")
    assert main([command, "--out", str(tmp_path)]) == 2
    assert f"already holds a run ({name})" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / name).read_bytes() == b"mine"
