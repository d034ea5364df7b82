"""Checkpoint manifests, paths read from files, numbers and full disks (issue 57)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from iclr25.utils.checkpoints import CheckpointError, start_save, verify_manifest, write_manifest
from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, path_inside, read_points


def _save(folder, parts: dict[str, str]):
    start_save(folder)
    for name, text in parts.items():
        (folder / name).write_text(text)
    write_manifest(folder, list(parts), meta={"L": len(parts)})


def test_a_checkpoint_from_two_saves_or_cut_short_is_refused(tmp_path):
    _save(tmp_path, {"model.txt": "L=3", "energy.txt": "L=3"})
    assert verify_manifest(tmp_path, ["model.txt"])["meta"] == {"L": 2}
    (tmp_path / "energy.txt").write_text("L=4")  # a second training wrote one part, then stopped
    with pytest.raises(CheckpointError, match="energy.txt is not the file this checkpoint was saved with"):
        verify_manifest(tmp_path)
    start_save(tmp_path)  # a save that starts drops the old manifest; cut short here, nothing passes as whole
    with pytest.raises(CheckpointError, match="no manifest.json"):
        verify_manifest(tmp_path)
    _save(tmp_path, {"model.txt": "L=4"})
    with pytest.raises(CheckpointError, match="energy.txt is not part of this checkpoint"):
        verify_manifest(tmp_path, ["energy.txt"])
    (tmp_path / "model.txt").unlink()
    with pytest.raises(CheckpointError, match="model.txt is missing"):
        verify_manifest(tmp_path)


def test_a_manifest_naming_a_file_outside_is_refused(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "secret.txt").write_text("x")
    doc = {"kind": "iclr25-checkpoint-manifest", "meta": {},
           "files": {"../secret.txt": {"bytes": 1, "sha256": "0"}}}
    (tmp_path / "ck" / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="outside its folder"):
        verify_manifest(tmp_path / "ck")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "manifest.json").write_text("my notes")
    with pytest.raises(CheckpointError, match="never replaced"):
        start_save(tmp_path / "mine")


def test_path_inside(tmp_path):
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "link").symlink_to(tmp_path)
    assert path_inside(tmp_path / "idx", "sub/v.npy") == tmp_path / "idx" / "sub" / "v.npy"
    for bad in ("../outside/v.npy", "/etc/passwd", "link/secret", "", None, 3):
        with pytest.raises(DataFileError):
            path_inside(tmp_path / "idx", bad)


def test_check_real_refuses_complex_nonfinite_and_overflow():
    assert check_real(np.arange(3), "x").dtype == np.float64
    with pytest.raises(TypeError, match="^W.npz holds complex"):
        check_real(np.ones(2) * 1j, "W.npz")
    with pytest.raises(ValueError, match="^M.npz has 1 NaN or infinite"):
        check_real([1.0, np.nan], "M.npz")
    assert np.isnan(check_real([1.0, np.nan], "M.npz", allow_nan=True)[1])
    with pytest.raises(ValueError, match="rescale"):
        check_real([1e200], "M.npz")
    with pytest.raises(TypeError, match="must hold numbers"):
        check_real(["a"], "M.npz")


def test_complex_points_and_a_malformed_ply_header_are_one_line(tmp_path):
    np.save(tmp_path / "c.npy", np.ones((3, 2)) * (1 + 1j))
    with pytest.raises(DataFileError, match="complex"):
        read_points(tmp_path / "c.npy")
    ply = tmp_path / "bad.ply"
    ply.write_bytes(b"ply\nformat ascii 1.0\nelement vertex\nproperty float x\nend_header\n1\n")
    with pytest.raises(DataFileError, match="malformed PLY header, line 3"):
        read_points(ply)


def test_a_full_disk_names_the_file_and_leaves_nothing(tmp_path):
    code = ("import resource, numpy as np\n"
            "from iclr25.utils.io import write_points\nfrom iclr25.utils.cli import error_line\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
            f"try:\n    write_points({str(tmp_path / 'big.npy')!r}, np.zeros((1000, 3)))\n"
            "except OSError as e:\n    print(error_line(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"cannot write {tmp_path / 'big.npy'}") and "Errno" not in out
    assert list(tmp_path.iterdir()) == []


def test_naming_write_errors_names_the_file_for_oserror_and_torch_runtimeerror(tmp_path):
    from iclr25.utils.cli import error_line
    from iclr25.utils.io import WriteError, naming_write_errors

    target = tmp_path / "model.pt"
    with pytest.raises(WriteError) as err, naming_write_errors(target):
        raise OSError(27, "File too large")
    assert error_line(err.value) == f"cannot write {target}: File too large"
    with pytest.raises(WriteError, match=f"cannot write {target}: the write failed"), naming_write_errors(target):
        raise RuntimeError("PytorchStreamWriter failed writing file data/0")


def test_naming_write_errors_lets_errors_that_name_their_file_pass(tmp_path):
    from iclr25.utils.io import naming_write_errors

    with pytest.raises(FileNotFoundError) as err, naming_write_errors(tmp_path / "x.npz"):
        open(tmp_path / "missing.txt")
    assert err.value.filename == str(tmp_path / "missing.txt")
    with pytest.raises(RuntimeError, match="unrelated"), naming_write_errors(tmp_path / "x.npz"):
        raise RuntimeError("unrelated")
    with pytest.raises(OSError, match="cannot write .*x.npz: 3 requested"), naming_write_errors(tmp_path / "x.npz"):
        raise OSError("3 requested and 1 written")
