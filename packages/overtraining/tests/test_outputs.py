"""Every path a command writes is checked before any work (issue 57), and a write that runs out of room names
the file (it said "File too large" without one)."""

import os
import subprocess
import sys

import numpy as np

from iclr25.overtraining.cli import main

SIM = ["simulate", "--days", "3", "--neurons", "2", "--trials", "1"]


def _recording(path):
    rng = np.random.default_rng(0)
    labels = np.tile([-1, 1], (4, 6))
    np.savez(path, responses=rng.normal(size=(4, 12, 3)) + labels[..., None], labels=labels, days=np.arange(4))
    return path


def test_input_named_as_output_is_refused_before_work(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    rec = _recording(data / "rec.npz")
    before = rec.read_bytes()
    for out in (rec, data):  # the recording itself, the folder that holds it
        assert main(["analyze", str(rec), "--out", str(out), "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out" in err, err
    assert rec.read_bytes() == before and sorted(p.name for p in data.iterdir()) == ["rec.npz"]
    assert main(["analyze", str(rec), "--out", str(data / "rec.npz" / "analysis")]) == 2  # below a file
    assert "--out" in capsys.readouterr().err


def test_existing_outputs_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    out = tmp_path / "rec.npz"
    out.write_bytes(b"mine")
    assert main([*SIM, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "--overwrite" in err and out.read_bytes() == b"mine", err
    assert main([*SIM, "--out", str(out), "--overwrite"]) == 0
    with np.load(out) as z:
        assert z["responses"].shape == (3, 80, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.npz"]  # no temporary file left
    # a previous analysis in the --out folder (any of its files) is kept without --overwrite
    folder = tmp_path / "analysis"
    folder.mkdir()
    (folder / "analysis.png").write_bytes(b"my figure")
    assert main(["analyze", str(out), "--out", str(folder)]) == 2
    assert "already holds a run" in capsys.readouterr().err and (folder / "analysis.png").read_bytes() == b"my figure"


def test_symlink_output_is_refused(tmp_path, capsys):
    target = tmp_path / "theirs.npz"
    target.write_bytes(b"theirs")
    link = tmp_path / "link.npz"
    os.symlink(target, link)
    assert main([*SIM, "--out", str(link), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and link.is_symlink() and target.read_bytes() == b"theirs", err


def test_nwb_out_is_a_folder_checked_before_work(tmp_path, capsys):
    # --format nwb turns --out into a folder: an existing folder is fine, a previous run's day files need
    # --overwrite, an existing file or an .npz name is refused, all before the network is trained
    folder = tmp_path / "nwb"
    folder.mkdir()
    (folder / "day_002.nwb").write_bytes(b"my day")
    assert main([*SIM, "--format", "nwb", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "day_002.nwb" in err and "--overwrite" in err and (folder / "day_002.nwb").read_bytes() == b"my day", err
    f = tmp_path / "file"
    f.write_text("mine")
    assert main([*SIM, "--format", "nwb", "--out", str(f), "--overwrite"]) == 2
    assert "not a folder" in capsys.readouterr().err and f.read_text() == "mine"
    assert main(["simulate", "--format", "nwb", "--out", str(tmp_path / "x.npz")]) == 2
    assert "must name a folder" in capsys.readouterr().err
    assert main(["simulate", "--out", str(tmp_path / "x.txt")]) == 2  # without --format nwb: an .npz file
    assert "--out must name a .npz file" in capsys.readouterr().err


def test_file_too_large_names_the_file(tmp_path):
    # RLIMIT_FSIZE makes any write past 4 KiB fail with EFBIG ("File too large"), as a full disk does
    out = tmp_path / "rec.npz"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
            "from iclr25.overtraining.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, *SIM, "--neurons", "16", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "cannot write" in err and str(out) in err and "File too large" in err, err
    assert list(tmp_path.iterdir()) == []  # no partial file, no temporary file


def test_a_write_error_without_a_file_name_gets_one(tmp_path):
    import errno

    import pytest

    from iclr25.utils.io import naming_write_errors as writing

    target = tmp_path / "x.npz"
    with pytest.raises(OSError) as info, writing(target):
        raise OSError(errno.EFBIG, "File too large")  # as a write into an open file reports it
    assert str(info.value) == f"cannot write {target}: File too large"
    with pytest.raises(FileNotFoundError) as info, writing(target):
        open(tmp_path / "missing.txt")  # an error that names its own file passes unchanged
    assert info.value.filename == str(tmp_path / "missing.txt")
