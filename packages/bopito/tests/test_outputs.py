"""Every path a command writes is checked before any work (issue 57): inputs named as outputs, existing files,
symbolic links, a full disk named by its file, and model folders whose parts come from two trainings."""

import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest

from iclr25.bopito import ModelConfig, ScoreModel, load_model, save_model


def _cli(capsys, monkeypatch, cwd, *args):
    from iclr25.bopito.cli import main

    monkeypatch.chdir(cwd)
    capsys.readouterr()
    rc = main(list(args))
    return rc, capsys.readouterr().err.strip().splitlines()


def _tiny(kind="ito", seed=0):
    import torch

    torch.manual_seed(seed)
    return ScoreModel(ModelConfig(kind=kind, n_diffusion=10, width=8, emb_dim=4))


@pytest.mark.parametrize("argv, why", [
    (["train", "d.npz", "--out", "d.npz", "--steps", "1", "--overwrite"], "is an existing file, not a folder"),
    (["train", "d.npz", "--out", ".", "--steps", "1", "--overwrite"], "holds the input"),
    (["train", "d.npz", "--out", "m/sub", "--prior", "m", "--steps", "1", "--overwrite"], "inside the input folder"),
    (["sample", "--model", "m", "--lag", "3", "--x0", "d.npz", "--out", "d.npz", "--overwrite"], "is also an input"),
    (["sample", "--model", "m", "--lag", "3", "--out", "m/s.npz", "--overwrite"], "inside the input folder"),
    (["repro", "--system", "alanine", "--data", "d.npz", "--out", ".", "--overwrite"], "holds the input"),
])
def test_an_input_named_as_the_output_is_refused_before_work_and_kept(tmp_path, capsys, monkeypatch, argv, why):
    np.savez(tmp_path / "d.npz", x=np.zeros((2, 10, 1)))
    save_model(_tiny(), tmp_path / "m")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    t0 = time.process_time()
    rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
    assert rc == 2 and len(err) == 1 and "--out" in err[0] and why in err[0], err
    assert time.process_time() - t0 < 1.0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["config.json", "manifest.json", "model.pt"]


def test_an_existing_output_file_is_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "x.npz").write_bytes(b"user's file")
    argv = ["simulate", "prinz", "--out", "x.npz", "--n-traj", "2", "--n-frames", "3", "--steps-per-frame", "5",
            "--x0", "0"]
    rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
    assert rc == 2 and len(err) == 1 and "--out x.npz exists" in err[0] and "--overwrite" in err[0]
    assert (tmp_path / "x.npz").read_bytes() == b"user's file"
    rc, err = _cli(capsys, monkeypatch, tmp_path, *argv, "--overwrite")
    assert rc == 0 and np.load(tmp_path / "x.npz")["x"].shape == (2, 3, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npz"]  # no temporary file left


def test_symbolic_links_are_never_replaced(tmp_path, capsys, monkeypatch):
    (tmp_path / "real.npz").write_bytes(b"user's file")
    (tmp_path / "link.npz").symlink_to(tmp_path / "real.npz")
    save_model(_tiny(), tmp_path / "m")
    for argv in (["simulate", "prinz", "--out", "link.npz", "--overwrite"],
                 ["sample", "--model", "m", "--lag", "3", "--out", "link.npz", "--overwrite"],
                 ["alanine-md", "--out", "link.npz", "--overwrite"]):
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
        assert rc == 2 and len(err) == 1 and "symbolic link" in err[0], (argv, err)
    assert (tmp_path / "link.npz").is_symlink() and (tmp_path / "real.npz").read_bytes() == b"user's file"


def test_every_file_of_a_previous_run_marks_it(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    for cmd, name in (("train", "manifest.json"), ("train", "config.json"), ("demo", "acf.png"),
                      ("repro", "tables.md")):
        out = tmp_path / f"{cmd}-{name}"
        out.mkdir()
        (out / name).write_text("previous\n")
        argv = ["train", "d.npy", "--steps", "1"] if cmd == "train" else [cmd]
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv, "--out", str(out))
        assert rc == 2 and len(err) == 1 and name in err[0] and "--overwrite" in err[0], err
        assert (out / name).read_text() == "previous\n"


def test_a_model_folder_with_parts_of_two_trainings_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    save_model(_tiny(seed=0), tmp_path / "a")
    save_model(_tiny(seed=1), tmp_path / "b")
    load_model(tmp_path / "a")
    (tmp_path / "a" / "model.pt").write_bytes((tmp_path / "b" / "model.pt").read_bytes())
    with pytest.raises(ValueError, match=r"model\.pt is not the file this model folder was saved with"):
        load_model(tmp_path / "a")
    rc, err = _cli(capsys, monkeypatch, tmp_path, "sample", "--model", "a", "--lag", "3", "--out", "s.npz")
    assert rc == 2 and len(err) == 1 and "different saves" in err[0], err
    (tmp_path / "b" / "manifest.json").unlink()  # a save cut short before its manifest
    with pytest.raises(ValueError, match="no manifest.json"):
        load_model(tmp_path / "b")
    assert not (tmp_path / "s.npz").exists()


def test_saving_again_keeps_the_users_other_files(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "notes.txt").write_text("mine\n")
    save_model(_tiny(seed=0), tmp_path / "m")
    save_model(_tiny(seed=1), tmp_path / "m")
    load_model(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["config.json", "manifest.json", "model.pt",
                                                                  "notes.txt"]


def test_a_full_disk_names_the_file_simulate(tmp_path):
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)); "
            "from iclr25.bopito.cli import main; sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "x.npz"
    proc = subprocess.run([sys.executable, "-c", code, "simulate", "prinz", "--out", str(out), "--n-traj", "20",
                           "--n-frames", "20", "--steps-per-frame", "5", "--x0", "0"], capture_output=True, text=True, timeout=60)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, proc.stderr[-2000:]
    assert f"cannot write {out}: File too large" in err[0]
    assert list(tmp_path.iterdir()) == []  # no half-written file, no temporary file


def test_a_full_disk_names_the_file_save_model(tmp_path):
    model = _tiny()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, hard))
    try:
        with pytest.raises(OSError, match=r"cannot write .*model\.pt: ") as exc:
            save_model(model, tmp_path / "m")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert "\n" not in str(exc.value)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == []  # no part, no manifest, no temporary file


def test_out_below_a_file_fails_before_work(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    (tmp_path / "f").write_text("a file\n")
    for argv in (["train", "d.npy", "--out", "f/m", "--steps", "1"], ["simulate", "prinz", "--out", "f/x.npz"]):
        rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
        assert rc == 2 and len(err) == 1 and "is a file" in err[0], err
    assert (tmp_path / "f").read_text() == "a file\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_below_a_read_only_folder_fails_before_work(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((2, 10)))
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o500)
    try:
        for argv in (["train", "d.npy", "--out", "ro/sub/m", "--steps", "1"],
                     ["simulate", "prinz", "--out", "ro/x.npz"]):
            rc, err = _cli(capsys, monkeypatch, tmp_path, *argv)
            assert rc == 2 and len(err) == 1 and "not writable" in err[0], err
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_trajectories_whose_squares_overflow_are_refused_naming_the_file(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "big.npy", np.full((2, 10), 1e200))
    rc, err = _cli(capsys, monkeypatch, tmp_path, "train", "big.npy", "--out", "m", "--steps", "1")
    assert rc == 2 and len(err) == 1 and "big.npy" in err[0] and "overflow" in err[0], err
    assert not (tmp_path / "m").exists()
