"""Every path a command writes is checked before any work (issue 57): inputs named as outputs (also through a
hard link), existing files, symbolic links, previous training runs, a full disk named by its file."""

import os
import resource
import time

import pytest

from iclr25.next_mol import make_dmt, save_dmt
from iclr25.next_mol.cli import main

FAST = ["--k", "1", "--steps", "2"]


def _cli(argv, capsys):
    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().err.strip().splitlines()


@pytest.fixture
def smi(tmp_path):
    p = tmp_path / "in.smi"
    p.write_text("CCO ethanol\n")
    return p


@pytest.mark.parametrize("which", ["conformers-hardlink", "generate-lm", "conformers-dmt"])
def test_an_input_named_as_the_output_is_refused_before_work_and_kept(tmp_path, smi, capsys, which):
    ckpt = tmp_path / "model.sdf"  # a checkpoint file whatever its name
    ckpt.write_bytes(b"a checkpoint of the user's")
    if which == "conformers-hardlink":
        os.link(smi, tmp_path / "out.sdf")  # the same file under another name
        argv = ["conformers", str(smi), "--out", str(tmp_path / "out.sdf"), "--overwrite", *FAST]
    elif which == "generate-lm":
        argv = ["generate", "--n", "1", "--lm", str(ckpt), "--out", str(ckpt), "--overwrite", *FAST]
    else:
        argv = ["conformers", str(smi), "--dmt", str(ckpt), "--out", str(ckpt), "--overwrite", *FAST]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    t0 = time.process_time()
    rc, err = _cli(argv, capsys)
    assert rc == 2 and len(err) == 1 and "--out" in err[0] and "is also an input" in err[0], err
    assert time.process_time() - t0 < 1.0  # before torch or RDKit work
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_an_existing_sdf_is_kept_without_overwrite_and_replaced_with_it(tmp_path, smi, capsys):
    out = tmp_path / "o.sdf"
    out.write_text("mine\n")
    rc, err = _cli(["conformers", str(smi), "--out", str(out), *FAST], capsys)
    assert rc == 2 and len(err) == 1 and "--out" in err[0] and "--overwrite" in err[0]
    assert out.read_text() == "mine\n"
    assert main(["conformers", str(smi), "--out", str(out), "--overwrite", *FAST]) == 0
    assert out.read_text().count("$$$$") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.smi", "o.sdf"]  # no temporary file left


def test_symbolic_links_are_never_replaced(tmp_path, smi, capsys):
    (tmp_path / "real.sdf").write_text("mine\n")
    (tmp_path / "link.sdf").symlink_to(tmp_path / "real.sdf")
    for argv in (["conformers", str(smi), "--out", str(tmp_path / "link.sdf"), "--overwrite", *FAST],
                 ["generate", "--n", "1", "--out", str(tmp_path / "link.sdf"), "--overwrite", *FAST]):
        rc, err = _cli(argv, capsys)
        assert rc == 2 and len(err) == 1 and "symbolic link" in err[0], err
    assert (tmp_path / "link.sdf").is_symlink() and (tmp_path / "real.sdf").read_text() == "mine\n"


@pytest.mark.parametrize("name", ["lm.pt", "dmt.pt", "results.json"])
def test_train_keeps_any_file_of_a_previous_train(tmp_path, capsys, name):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / name).write_text("previous\n")
    rc, err = _cli(["train", "--lm-steps", "1", "--dmt-steps", "1", "--out", str(tmp_path / "m")], capsys)
    assert rc == 2 and len(err) == 1 and name in err[0] and "--overwrite" in err[0], err
    assert (tmp_path / "m" / name).read_text() == "previous\n"


def test_demo_and_repro_count_their_figures_and_tables_as_a_previous_run(tmp_path, capsys):
    for cmd, name in (("demo", "generated.sdf"), ("repro", "tables.md")):
        out = tmp_path / cmd
        out.mkdir()
        (out / name).write_text("previous\n")
        rc, err = _cli([cmd, "--out", str(out)], capsys)
        assert rc == 2 and len(err) == 1 and name in err[0], err
        assert (out / name).read_text() == "previous\n"


def test_out_below_a_file_fails_before_work(tmp_path, smi, capsys):
    for argv in (["conformers", str(smi), "--out", str(smi / "o.sdf")], ["train", "--out", str(smi / "m")]):
        rc, err = _cli(argv, capsys)
        assert rc == 2 and len(err) == 1 and "is a file" in err[0], err
    assert smi.read_text() == "CCO ethanol\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_below_a_read_only_folder_fails_before_work(tmp_path, smi, capsys):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o500)
    try:
        for argv in (["conformers", str(smi), "--out", str(tmp_path / "ro" / "o.sdf")],
                     ["train", "--out", str(tmp_path / "ro" / "sub" / "m")]):
            rc, err = _cli(argv, capsys)
            assert rc == 2 and len(err) == 1 and "not writable" in err[0], err
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_a_full_disk_names_the_checkpoint_file(tmp_path):
    dmt = make_dmt(hidden=16, pair_hidden=8, n_blocks=1, n_heads=2)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, hard))
    try:
        with pytest.raises(OSError, match=r"cannot write .*dmt\.pt: ") as exc:
            save_dmt(tmp_path / "dmt.pt", dmt)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert "\n" not in str(exc.value) and list(tmp_path.iterdir()) == []  # nothing half-written
