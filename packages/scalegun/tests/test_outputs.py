"""Every path ``unlearn`` writes is checked before any work (issue 57): an input is never an output, an existing
ledger is kept without --overwrite, symbolic links are never replaced, and a place that cannot be written is
refused before a file is read."""

import json
import os

import numpy as np
import pytest

from iclr25.scalegun.cli import main
from iclr25.utils.testing import deny_writes, one_error_line


@pytest.fixture(scope="module")
def g():
    from iclr25.scalegun import datasets

    return datasets.csbm(60, 200, 4, 3, seed=1)


@pytest.fixture()
def files(tmp_path, g):
    (tmp_path / "g.txt").write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    np.save(tmp_path / "X.npy", g.X)
    np.save(tmp_path / "y.npy", g.y)
    u, v = g.edges[0]
    (tmp_path / "req.json").write_text(f"edge {u} {v}\n")
    return tmp_path


@pytest.fixture()
def no_work(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("a file was read before --out was checked")

    for name in ("load_features", "load_graph", "read_requests"):
        monkeypatch.setattr(f"iclr25.scalegun.datasets.{name}", boom)


def _argv(d, *extra, out=None):
    return ["unlearn", "--graph", str(d / "g.txt"), "--features", str(d / "X.npy"), "--labels", str(d / "y.npy"),
            "--requests", str(d / "req.json"), "--out", str(out if out is not None else d / "ledger.json"), *extra]


def test_out_naming_an_input_is_refused_and_the_input_kept(files, capsys, no_work):
    before = {p.name: p.read_bytes() for p in files.iterdir()}
    # 0.5 wrote the ledger over the requests file (a .json name, so its suffix check let it through)
    assert main(_argv(files, "--overwrite", out=files / "req.json")) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--out {files / 'req.json'} is also an input" in line, line
    os.link(files / "req.json", files / "hard.json")
    assert main(_argv(files, "--overwrite", out=files / "hard.json")) == 2
    assert "is also an input" in one_error_line(capsys.readouterr().err)
    assert {p.name: p.read_bytes() for p in files.iterdir() if p.name != "hard.json"} == before


def test_an_existing_ledger_is_kept_without_overwrite(files, capsys):
    out = files / "ledger.json"
    out.write_text("mine")
    # 0.5 replaced it after the work
    assert main(_argv(files)) == 2
    assert f"--out {out} exists; pass --overwrite" in one_error_line(capsys.readouterr().err)
    assert out.read_text() == "mine"
    assert main(_argv(files, "--overwrite")) == 0
    assert json.loads(out.read_text())["n_requests"] == 1
    assert not [p.name for p in files.iterdir() if p.name.startswith(".")]  # atomic: no temporary file left


def test_symlinks_and_unwritable_places_are_refused_before_work(files, capsys, no_work):
    theirs = files / "theirs.json"
    theirs.write_text("theirs")
    link = files / "link.json"
    link.symlink_to(theirs)
    assert main(_argv(files, "--overwrite", out=link)) == 2
    assert "symbolic link" in one_error_line(capsys.readouterr().err)
    assert link.is_symlink() and theirs.read_text() == "theirs"
    # below a file: 0.5 fitted the unlearner first
    assert main(_argv(files, out=theirs / "sub" / "ledger.json")) == 2
    assert "--out" in one_error_line(capsys.readouterr().err)
    assert main(_argv(files, "--mmap", str(theirs / "maps"), out=files / "l.json")) == 2
    assert "--mmap" in one_error_line(capsys.readouterr().err)
    # --mmap naming an input folder, or a folder of the user's: refused before any file is read
    assert main(_argv(files, "--mmap", str(files), out=files / "l.json")) == 2
    assert "--mmap" in (line := one_error_line(capsys.readouterr().err)) and "input" in line
    (files / "mine").mkdir()
    (files / "mine" / "keep.txt").write_text("mine")
    assert main(_argv(files, "--mmap", str(files / "mine"), out=files / "l.json")) == 2
    assert "--mmap" in one_error_line(capsys.readouterr().err)
    assert (files / "mine" / "keep.txt").read_text() == "mine" and not (files / "l.json").exists()


def test_a_folder_below_a_read_only_one_is_refused_before_work(files, capsys, no_work, monkeypatch):
    ro = files / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    deny_writes(monkeypatch, ro)
    try:
        assert main(_argv(files, out=ro / "new" / "ledger.json")) == 2
        assert "not writable" in one_error_line(capsys.readouterr().err)
    finally:
        ro.chmod(0o700)


def test_a_non_finite_ledger_is_not_written(files, capsys, monkeypatch):
    from iclr25.scalegun.certificate import Ledger

    def nan_dict(self):
        return {"n_requests": float("nan")}

    monkeypatch.setattr(Ledger, "to_dict", nan_dict)
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--out" in line and "non-finite" in line
    assert not (files / "ledger.json").exists()


def test_write_mapped_graph_never_deletes_a_folder_of_the_users(tmp_path, g):
    from iclr25.scalegun import MappedGraph, write_mapped_graph

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    # 0.3 removed the whole folder before moving the maps in
    with pytest.raises(ValueError, match="holds keep.txt, which write_mapped_graph did not write"):
        write_mapped_graph(g.adj, mine)
    assert (mine / "keep.txt").read_text() == "mine"
    maps = write_mapped_graph(g.adj, tmp_path / "maps")
    assert MappedGraph(write_mapped_graph(g.adj, maps)).n_nodes == g.n_nodes  # its own maps are replaced


@pytest.mark.parametrize("scale, match", [(1e200, "beyond 1e+150 where squares overflow"), (1j, "must be real")])
def test_overflowing_or_complex_features_are_refused_naming_the_file(files, g, capsys, scale, match):
    np.save(files / "X.npy", g.X * scale)
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "X.npy" in line and match in line, line
    assert not (files / "ledger.json").exists()


@pytest.mark.parametrize("command, name", [("demo", "bounds.png"), ("repro", "table.md")])
def test_demo_and_repro_keep_a_previous_runs_files(tmp_path, capsys, monkeypatch, command, name):
    def boom(*args, **kwargs):
        raise AssertionError("the work started before --out was checked")

    monkeypatch.setattr("iclr25.scalegun.demo.run_demo", boom)
    monkeypatch.setattr("iclr25.scalegun.repro.run_repro", boom)
    (tmp_path / name).write_bytes(b"mine")
    assert main([command, "--out", str(tmp_path)]) == 2
    assert f"already holds a run ({name})" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / name).read_bytes() == b"mine"


def test_a_full_disk_under_mmap_names_the_folder(files, capsys, monkeypatch):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr("iclr25.scalegun.mapped.write_mapped_graph", full)
    maps = files / "maps"
    assert main(_argv(files, "--mmap", str(maps))) == 2
    assert f"--mmap {maps}: cannot write the mapped graph: File too large" in one_error_line(capsys.readouterr().err)
    assert not (files / "ledger.json").exists()
