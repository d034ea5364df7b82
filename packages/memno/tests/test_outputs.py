"""Every path a command writes is checked before any work (issue 57): inputs are never outputs, an existing file
or a previous run is kept without --overwrite, symbolic links are never replaced, and a trained model folder is
whole (manifest written last) or refused."""

import dataclasses

import numpy as np
import pytest

from iclr25.memno import PDEDataset, load_dataset, load_trained
from iclr25.memno.cli import main
from iclr25.utils.checkpoints import CheckpointError
from iclr25.utils.testing import deny_writes, one_error_line


def _small_data(path, n=3, resolution=16, seed=0):
    u = np.random.default_rng(seed).normal(size=(n, 6, resolution)).astype(np.float32)
    return PDEDataset(u=u, target=u, x=np.arange(resolution) / resolution, t=np.arange(6) * 0.1,
                      params={"pde": "ks"}).save(path)


@pytest.fixture
def no_work(monkeypatch):
    """Any simulation or data loading fails the test: the output must be refused before the work."""
    def boom(*args, **kwargs):
        raise AssertionError("the work started before --out was checked")

    for name in ("ks", "burgers", "load_dataset"):
        monkeypatch.setattr(f"iclr25.memno.datasets.{name}", boom)


@pytest.fixture
def tiny_ks(monkeypatch):
    """`generate` without the solver: a small data set in the solver's place (the outputs are what is tested)."""
    def fake(n, **kwargs):
        u = np.full((n, 4, kwargs["resolution"]), float(kwargs["seed"] + 1), dtype=np.float32)
        return PDEDataset(u=u, target=u, x=np.arange(kwargs["resolution"]) / kwargs["resolution"],
                          t=np.arange(4) * 0.1, params={"pde": "ks", "seed": kwargs["seed"]})

    monkeypatch.setattr("iclr25.memno.datasets.ks", fake)


TRAIN = ["--epochs", "1", "--width", "4", "--layers", "1", "--modes", "4", "--batch-size", "2"]


def test_train_out_naming_its_data_is_refused_before_work(tmp_path, capsys, no_work):
    data = _small_data(tmp_path / "d.npz")
    before = data.read_bytes()
    # the data file itself, and the folder that holds it
    assert main(["train", "--data", str(data), "--out", str(data)]) == 2
    assert one_error_line(capsys.readouterr().err).startswith(f"iclr25 memno: error: --out {data}")
    assert main(["train", "--data", str(data), "--out", str(tmp_path), "--overwrite"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--out" in line and "holds the input" in line
    assert main(["train", "--data", str(data), "--test-data", str(data), "--out", str(tmp_path / "sub" / "..")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert data.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["d.npz"]


def test_generate_keeps_an_existing_file_without_overwrite(tmp_path, capsys, tiny_ks):
    out = tmp_path / "d.npz"
    out.write_bytes(b"mine")
    # 0.4 replaced it silently
    assert main(["generate", "ks", "--n", "2", "--resolution", "16", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--out {out} exists; pass --overwrite" in line
    assert out.read_bytes() == b"mine"
    assert main(["generate", "ks", "--n", "2", "--resolution", "16", "--out", str(out), "--overwrite"]) == 0
    assert load_dataset(out).u.shape == (2, 4, 16)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npz"]  # atomic: no temporary file left


def test_generate_never_replaces_a_symlink_and_checks_the_parent_first(tmp_path, capsys, no_work):
    target = tmp_path / "theirs.npz"
    target.write_bytes(b"theirs")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    assert main(["generate", "ks", "--out", str(link), "--overwrite"]) == 2
    assert "--out" in (line := one_error_line(capsys.readouterr().err)) and "symbolic link" in line
    assert link.is_symlink() and target.read_bytes() == b"theirs"
    # a parent that is a file: refused before the simulation (0.4 simulated first, then failed)
    assert main(["generate", "ks", "--out", str(target / "sub" / "d.npz")]) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert main(["generate", "ks", "--out", str(tmp_path / "d.csv")]) == 2
    assert "--out must name a .npz file" in one_error_line(capsys.readouterr().err)


def test_out_below_a_read_only_folder_is_refused_before_work(tmp_path, capsys, no_work, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    deny_writes(monkeypatch, ro)
    try:
        assert main(["generate", "ks", "--out", str(ro / "new" / "d.npz")]) == 2
        assert "--out" in (line := one_error_line(capsys.readouterr().err)) and "not writable" in line
        data = _small_data(tmp_path / "d.npz")
        assert main(["train", "--data", str(data), "--out", str(ro / "run")]) == 2
        assert "not writable" in one_error_line(capsys.readouterr().err)
    finally:
        ro.chmod(0o700)


def test_train_keeps_a_previous_run_and_writes_a_whole_checkpoint(tmp_path, capsys):
    data = _small_data(tmp_path / "d.npz")
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["train", "--data", str(data), *TRAIN, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "model.pt", "notes.txt", "results.json"]
    first = (out / "model.pt").read_bytes()
    model = load_trained(out)
    assert model.config["width"] == 4
    # 0.4 replaced the previous run silently
    assert main(["train", "--data", str(data), *TRAIN, "--seed", "1", "--out", str(out)]) == 2
    assert "already holds a run" in one_error_line(capsys.readouterr().err)
    assert (out / "model.pt").read_bytes() == first
    # a checkpoint whose parts come from two runs (a save cut short after model.pt) is refused in one line
    other = tmp_path / "other"
    assert main(["train", "--data", str(data), *TRAIN, "--seed", "1", "--out", str(other)]) == 0
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("results.json", "manifest.json"):
        (mixed / name).write_bytes((out / name).read_bytes())
    (mixed / "model.pt").write_bytes((other / "model.pt").read_bytes())
    with pytest.raises(CheckpointError, match="model.pt is not the file this trained model was saved with"):
        load_trained(mixed)
    (mixed / "manifest.json").unlink()
    with pytest.raises(CheckpointError, match="no manifest.json"):
        load_trained(mixed)
    # --overwrite replaces the run and keeps the user's own file
    assert main(["train", "--data", str(data), *TRAIN, "--seed", "1", "--out", str(out), "--overwrite"]) == 0
    assert (out / "model.pt").read_bytes() != first and (out / "notes.txt").read_text() == "mine"
    load_trained(out)


def test_train_never_replaces_a_manifest_it_did_not_write(tmp_path, capsys, no_work):
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text('{"mine": true}')
    data = tmp_path / "d.npz"
    data.write_bytes(b"x")
    assert main(["train", "--data", str(data), "--out", str(out), "--overwrite"]) == 2
    assert "manifest.json there is not a checkpoint manifest" in one_error_line(capsys.readouterr().err)
    assert (out / "manifest.json").read_text() == '{"mine": true}'


def test_a_diverged_training_writes_nothing(tmp_path, capsys, monkeypatch):
    from iclr25.memno import training

    real = training.evaluate

    def nan_eval(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), nrmse=float("nan"))

    monkeypatch.setattr(training, "evaluate", nan_eval)
    data = _small_data(tmp_path / "d.npz")
    out = tmp_path / "run"
    assert main(["train", "--data", str(data), *TRAIN, "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "training diverged (test nRMSE (one-step) not finite)" in line and "--out" in line
    assert not out.exists() or list(out.iterdir()) == []


def test_overflowing_data_are_refused_naming_the_file(tmp_path, capsys):
    # float64 1e200 became inf in float32 and trained to a NaN loss
    u = np.random.default_rng(0).normal(size=(3, 6, 16)) * 1e200
    np.savez(tmp_path / "big.npz", u=u, target=u, x=np.arange(16) / 16, t=np.arange(6) * 0.1,
             params=np.array("{}"))
    assert main(["train", "--data", str(tmp_path / "big.npz"), *TRAIN, "--out", str(tmp_path / "run")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "big.npz: u has entries up to" in line, line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command, name", [("demo", "predictions.png"), ("repro", "tables.md")])
def test_demo_and_repro_keep_a_previous_runs_files(tmp_path, capsys, monkeypatch, command, name):
    def boom(*args, **kwargs):
        raise AssertionError("the work started before --out was checked")

    monkeypatch.setattr("iclr25.memno.experiments.compare_models", boom)
    monkeypatch.setattr("iclr25.utils.results.RunResult.start", boom)
    (tmp_path / name).write_bytes(b"mine")
    assert main([command, "--out", str(tmp_path)]) == 2
    assert f"already holds a run ({name})" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / name).read_bytes() == b"mine"


def test_a_full_disk_is_one_line_naming_the_model_file(tmp_path, capsys, monkeypatch):
    import torch

    def full(*args, **kwargs):  # what torch's writer raises when the disk fills
        raise RuntimeError("[enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
                           "data/0: file write failed")

    monkeypatch.setattr(torch, "save", full)
    data = _small_data(tmp_path / "d.npz")
    out = tmp_path / "run"
    assert main(["train", "--data", str(data), *TRAIN, "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"cannot write {out / 'model.pt'}: " in line and "file write failed" in line, line
    assert list(out.iterdir()) == []  # no half-written model, no results, no manifest
