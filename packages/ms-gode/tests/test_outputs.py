"""Every path a command writes is checked before any work (issue 57), and checkpoints are whole or refused."""

import json
import os
import shutil

import numpy as np
import pytest

from iclr25.ms_gode.cli import main
from iclr25.utils.checkpoints import CheckpointError

SIM = ["simulate", "springs", "--n", "2", "--frames", "8", "--balls", "2"]


def test_input_named_as_output_is_refused_before_work(tmp_path, capsys):
    obs = tmp_path / "obs.npz"
    assert main([*SIM, "--out", str(obs)]) == 0
    before = obs.read_bytes()
    model = tmp_path / "model"
    model.mkdir()
    capsys.readouterr()
    # predict writing over its observation file (even with --overwrite), or into its model folder
    for out in (obs, model / "pred.npz"):
        assert main(["predict", "--model", str(model), str(obs), "--out", str(out), "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out" in err and ("input" in err), err
    assert obs.read_bytes() == before and list(model.iterdir()) == []
    # train whose model folder is a task file, or holds one
    assert main(["train", "--tasks", str(obs), "--out", str(obs), "--epochs", "1"]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["train", "--tasks", str(obs), "--out", str(tmp_path), "--epochs", "1"]) == 2
    assert "holds the input" in capsys.readouterr().err and obs.read_bytes() == before


def test_existing_file_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    out = tmp_path / "task.npz"
    out.write_bytes(b"mine")
    assert main([*SIM, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "--overwrite" in err and out.read_bytes() == b"mine", err
    assert main([*SIM, "--out", str(out), "--overwrite"]) == 0
    with np.load(out) as z:
        assert z["values"].shape[:2] == (2, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task.npz"]  # no temporary file left


def test_symlink_output_is_refused(tmp_path, capsys):
    target = tmp_path / "theirs.npz"
    target.write_bytes(b"theirs")
    link = tmp_path / "link.npz"
    os.symlink(target, link)
    assert main([*SIM, "--out", str(link), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and link.is_symlink() and target.read_bytes() == b"theirs", err


def test_pretrain_keeps_this_seeds_checkpoint_without_overwrite(tmp_path, capsys):
    (tmp_path / "physics-seed0.json").write_text("{}")
    assert main(["pretrain", "--seed", "0", "--out", str(tmp_path)]) == 2  # refused before the minutes of training
    err = capsys.readouterr().err
    assert "physics-seed0.json" in err and "--overwrite" in err, err
    os.symlink(tmp_path / "physics-seed0.json", tmp_path / "physics-seed0.npz")
    assert main(["pretrain", "--seed", "0", "--out", str(tmp_path), "--overwrite"]) == 2  # a link is never replaced
    err = capsys.readouterr().err
    assert "physics-seed0.npz" in err and "symbolic link" in err and (tmp_path / "physics-seed0.npz").is_symlink(), err
    assert main(["train", "--tasks", str(tmp_path / "none.npz"), "--out", str(tmp_path / "x.npz"),
                 "--epochs", "1"]) == 2  # a missing task file: one line, nothing created
    assert not (tmp_path / "x.npz").exists()


def test_shipped_checkpoints_are_verified_and_a_mixed_folder_is_refused(tmp_path):
    from iclr25.ms_gode.pretrained import load_pretrained, save_checkpoint, shipped_folder

    assert (shipped_folder() / "manifest.json").is_file()
    learner, meta = load_pretrained(1)  # verified against the committed manifest
    # a pretrain --out folder holding two seeds: the manifest written last keeps the other seed's checkpoint
    save_checkpoint(tmp_path, 0, learner, {**meta, "seed": 0})
    save_checkpoint(tmp_path, 1, learner, meta)
    listed = json.loads((tmp_path / "manifest.json").read_text())["files"]
    assert sorted(listed) == ["physics-seed0.json", "physics-seed0.npz", "physics-seed1.json", "physics-seed1.npz"]
    again, rec = load_pretrained(0, folder=tmp_path)
    assert rec["seed"] == 0 and again.task_names == learner.task_names
    # a record from another save beside the weights: refused in one line naming the folder and the part
    mixed = tmp_path / "mixed"
    shutil.copytree(shipped_folder(), mixed)
    shutil.copy(mixed / "physics-seed1.json", mixed / "physics-seed0.json")
    with pytest.raises(CheckpointError, match="physics-seed0.json is not the file"):
        load_pretrained(0, folder=mixed)


def test_complex_task_values_are_refused(tmp_path, capsys):
    bad = tmp_path / "complex.npz"
    np.savez(bad, values=np.ones((3, 2, 8, 2)) * (1 + 1j), times=np.arange(8.0), adjacency=np.ones((2, 2)))
    assert main(["train", "--tasks", str(bad), "--out", str(tmp_path / "m"), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "complex.npz" in err and "complex numbers" in err, err
    assert not (tmp_path / "m").exists()
