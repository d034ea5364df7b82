import os

import pytest

from iclr25.utils.guards import OutputError, SizeError, check_out, check_size, format_seconds


def test_out_refuses_a_file_an_input_and_a_previous_run(tmp_path):
    f = tmp_path / "data.npy"
    f.write_text("x")
    with pytest.raises(OutputError, match="--out .*existing file"):
        check_out(f)
    d = tmp_path / "in"
    d.mkdir()
    with pytest.raises(OutputError, match="also an input"):
        check_out(d, inputs=[d])
    (d / "results.json").write_text("{}")
    with pytest.raises(OutputError, match="--overwrite"):
        check_out(d)
    assert check_out(d, overwrite=True) == d
    assert sorted(p.name for p in d.iterdir()) == ["results.json"]  # nothing touched
    assert not (tmp_path / "new" / "deep").exists() and check_out(tmp_path / "new" / "deep")
    assert not (tmp_path / "new").exists()  # nothing created either


def test_out_file_kind(tmp_path):
    f = tmp_path / "index.npz"
    assert check_out(f, kind="file") == f
    f.write_text("x")
    with pytest.raises(OutputError, match="exists"):
        check_out(f, kind="file")
    assert check_out(f, kind="file", overwrite=True) == f and f.read_text() == "x"
    with pytest.raises(OutputError, match="is a folder"):
        check_out(tmp_path, kind="file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_out_unwritable(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="not writable"):
            check_out(ro / "x")
    finally:
        ro.chmod(0o700)


def test_out_under_a_file_is_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        check_out(f / "sub")


def test_size_guard():
    check_size("--n 10", bytes_needed=10, seconds_needed=1)
    with pytest.raises(SizeError, match=r"--T 10\^12 needs about .* TiB"):
        check_size("--T 10^12", bytes_needed=8e12, available_bytes=1e10)
    with pytest.raises(SizeError, match="years"):
        check_size("--steps 10^12", seconds_needed=1e12)
    check_size("--steps 10^12", seconds_needed=1e12, force=True)
    assert format_seconds(90) == "90 s" and format_seconds(7200 * 3) == "6.0 h"
