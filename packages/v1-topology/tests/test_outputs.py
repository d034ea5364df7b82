"""Every path a command writes is checked before any work (issue 57): inputs named as outputs, existing files,
symbolic links; `train --out` resumes a checkpoint there but never writes over a finished run silently."""

import json
import os

import numpy as np

from iclr25.v1_topology.cli import main


def _cli(argv, capsys):
    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err.strip()


def _map(tmp_path):
    rad = tmp_path / "rad.npy"
    np.save(rad, np.random.default_rng(0).uniform(0, np.pi, size=(16, 16)))
    return rad


def test_input_named_as_output_is_refused_before_work(tmp_path, capsys):
    images = tmp_path / "data" / "images.npy"
    images.parent.mkdir()
    np.save(images, np.zeros((32, 32)))
    before = images.read_bytes()
    # --images is a plain string option: still an input (the folder that holds it, the file itself)
    for out in (images, images.parent):
        rc, err = _cli(["train", "--images", images, "--out", out, "--overwrite"], capsys)
        assert rc == 2 and len(err.splitlines()) == 1 and "--out" in err, err
    assert images.read_bytes() == before and sorted(p.name for p in images.parent.iterdir()) == ["images.npy"]
    # a --species preset file in the folder
    preset = tmp_path / "mine" / "preset.json"
    preset.parent.mkdir()
    preset.write_text(json.dumps({"n_side": 8}))
    rc, err = _cli(["train", "--species", preset, "--out", preset.parent], capsys)
    assert rc == 2 and "holds the input" in err, err
    # analyze: the map file as --out (a hard link to it by another name is the same file)
    rad = _map(tmp_path)
    link = tmp_path / "metrics.json"
    os.link(rad, link)
    rc, err = _cli(["analyze", rad, "--out", link, "--overwrite"], capsys)
    assert rc == 2 and "is also an input" in err, err
    assert np.load(rad).shape == (16, 16)


def test_existing_file_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    rad, out = _map(tmp_path), tmp_path / "m.json"
    out.write_text("mine")
    rc, err = _cli(["analyze", rad, "--out", out], capsys)
    assert rc == 2 and "--overwrite" in err and out.read_text() == "mine", err
    rc, err = _cli(["analyze", rad, "--out", out, "--overwrite"], capsys)
    assert rc == 0 and "n_pinwheels" in json.loads(out.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "rad.npy"]  # no temporary file left
    rc, err = _cli(["analyze", rad, "--out", tmp_path / "m.txt"], capsys)
    assert rc == 2 and "--out must name a .json file" in err, err


def test_symlink_outputs_are_refused(tmp_path, capsys):
    rad = _map(tmp_path)
    target = tmp_path / "theirs.json"
    target.write_text("theirs")
    link = tmp_path / "link.json"
    os.symlink(target, link)
    rc, err = _cli(["analyze", rad, "--out", link, "--overwrite"], capsys)
    assert rc == 2 and "symbolic link" in err and target.read_text() == "theirs", err
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(target, run / "evaluation.json")  # a file train writes, as a link to someone else's
    rc, err = _cli(["train", "--n-side", "8", "--out", run, "--overwrite"], capsys)
    assert rc == 2 and "symbolic link" in err and target.read_text() == "theirs", err


def test_train_out_resumes_but_keeps_a_finished_run_and_refuses_a_file(tmp_path, capsys):
    f = tmp_path / "a.json"
    f.write_text("mine")
    rc, err = _cli(["train", "--n-side", "8", "--out", f, "--overwrite"], capsys)
    assert rc == 2 and "--out" in err and "not a folder" in err and f.read_text() == "mine", err
    done = tmp_path / "done"
    done.mkdir()
    (done / "results.json").write_text("{}")  # a finished run with no checkpoint to resume
    rc, err = _cli(["train", "--n-side", "8", "--out", done], capsys)
    assert rc == 2 and "already holds a run" in err and "--overwrite" in err, err
    assert sorted(p.name for p in done.iterdir()) == ["results.json"]


def test_complex_or_overflowing_images_are_refused_naming_the_file(tmp_path, capsys):
    for name, arr in (("complex.npy", np.ones((32, 32)) * (1 + 2j)), ("huge.npy", np.full((32, 32), 1e200)),
                      ("nan.npy", np.full((32, 32), np.nan))):
        np.save(tmp_path / name, arr)
        rc, err = _cli(["train", "--n-side", "8", "--images", tmp_path / name, "--out", tmp_path / "run"], capsys)
        assert rc == 2 and len(err.splitlines()) == 1 and name in err, err
        assert ("complex" in err) if name == "complex.npy" else ("rescale" in err or "NaN" in err), err
    assert not (tmp_path / "run").exists()
