"""Every path a command writes is checked before any work (issue 57): inputs named as outputs, existing files,
symbolic links, read-only folders, a full disk, and model folders whose parts do not belong together."""

import json
import os
import subprocess
import sys
import time

import pytest

from iclr25.rxnflow.cli import main

TEMPLATE = "amide [C;!$(C-[#7]):1](=[O:2])[OX2H1].[NX3;H2,H1;!$(N-C=[O,S,N]):3]>>[C:1](=[O:2])[N:3]\n"
TINY = ["--steps", "2", "--batch-size", "4", "--rho", "0.5", "--min-sampling", "3"]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    from iclr25.rxnflow import toy_blocks

    d = tmp_path_factory.mktemp("lib")
    toy_blocks(6, 8, seed=0).save(d / "b.smi")
    (d / "t.txt").write_text(TEMPLATE)
    return d


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Two model folders saved from two different models (untrained: saving is what is tested)."""
    from iclr25.rxnflow import RxnFlow, SynthesisSpace, read_templates, toy_blocks

    d = tmp_path_factory.mktemp("models")
    (d / "t.txt").write_text(TEMPLATE)
    space = SynthesisSpace(toy_blocks(6, 8, seed=0), read_templates(d / "t.txt"))
    for name, seed in (("a", 0), ("b", 1)):
        RxnFlow(space, "qed", seed=seed).save(d / name)
    return d


def _cli(argv, capsys):
    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().err.strip().splitlines()


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("which", ["doctor-json", "train-out", "sample-out"])
def test_an_input_named_as_the_output_is_refused_before_work_and_kept(lib, saved, tmp_path, capsys, which):
    b = tmp_path / "b.smi"
    b.write_bytes((lib / "b.smi").read_bytes())
    before = b.read_bytes()
    argv = {"doctor-json": ["doctor", "--blocks", str(b), "--templates", str(lib / "t.txt"), "--json", str(b),
                            "--overwrite"],
            "train-out": ["train", "--blocks", str(b), "--templates", str(lib / "t.txt"), "--out", str(tmp_path),
                          "--overwrite", *TINY],
            "sample-out": ["sample", "--model", str(saved / "a"), "--add-blocks", str(b), "--out", str(b),
                           "--overwrite"]}[which]
    t0 = time.process_time()
    rc, err = _cli(argv, capsys)
    assert rc == 2 and len(err) == 1 and str(b) in err[0] and "--" in err[0], err
    assert "input" in err[0]
    assert time.process_time() - t0 < 1.0  # refused before RDKit or torch work
    assert b.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["b.smi"]


def test_doctor_json_keeps_an_existing_file_without_overwrite_and_replaces_it_with(lib, tmp_path, capsys):
    rep = tmp_path / "report.json"
    rep.write_text("mine\n")
    argv = ["doctor", "--blocks", str(lib / "b.smi"), "--templates", str(lib / "t.txt"), "--json", str(rep)]
    rc, err = _cli(argv, capsys)
    assert rc == 2 and len(err) == 1 and "--json" in err[0] and "--overwrite" in err[0]
    assert rep.read_text() == "mine\n"
    assert main([*argv, "--overwrite"]) == 0
    assert json.loads(rep.read_text())["n_unique"] == 14
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary file left


def test_sample_default_out_is_checked_like_a_given_one(saved, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mols.sdf").write_text("mine\n")
    rc, err = _cli(["sample", "--model", str(saved / "a"), "--n", "3"], capsys)
    assert rc == 2 and len(err) == 1 and "--out mols.sdf exists" in err[0]
    assert (tmp_path / "mols.sdf").read_text() == "mine\n"
    rc, err = _cli(["sample", "--model", str(saved / "a"), "--n", "3", "--out", "x.txt"], capsys)
    assert rc == 2 and "--out must name a .sdf or .json or .smi file" in err[0]


def test_symbolic_links_are_never_replaced(lib, saved, tmp_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("mine\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    for argv in (["doctor", "--blocks", str(lib / "b.smi"), "--json", str(link), "--overwrite"],
                 ["sample", "--model", str(saved / "a"), "--n", "3", "--out", str(link), "--overwrite"]):
        rc, err = _cli(argv, capsys)
        assert rc == 2 and len(err) == 1 and "symbolic link" in err[0] and str(link) in err[0]
    assert link.is_symlink() and target.read_text() == "mine\n"


def test_a_previous_model_folder_is_kept_without_overwrite(lib, tmp_path, capsys):
    out = tmp_path / "m"
    out.mkdir()
    for name in ("blocks.smi", "manifest.json", "templates.txt"):  # any file a train writes marks a previous run
        (out / name).write_text("previous\n")
        rc, err = _cli(["train", "--blocks", str(lib / "b.smi"), "--out", str(out), *TINY], capsys)
        assert rc == 2 and len(err) == 1 and "--overwrite" in err[0] and name in err[0]
        assert (out / name).read_text() == "previous\n"
        (out / name).unlink()


def test_out_below_a_file_fails_before_work(lib, tmp_path, capsys):
    (tmp_path / "f").write_text("a file\n")
    t0 = time.process_time()
    for argv in (["train", "--blocks", str(lib / "b.smi"), "--out", str(tmp_path / "f" / "m"), *TINY],
                 ["doctor", "--blocks", str(lib / "b.smi"), "--json", str(tmp_path / "f" / "r.json")]):
        rc, err = _cli(argv, capsys)
        assert rc == 2 and len(err) == 1 and "is a file" in err[0], err
    assert time.process_time() - t0 < 1.0 and (tmp_path / "f").read_text() == "a file\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_below_a_read_only_folder_fails_before_work(lib, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        t0 = time.process_time()
        for argv in (["train", "--blocks", str(lib / "b.smi"), "--out", str(ro / "sub" / "m"), *TINY],
                     ["doctor", "--blocks", str(lib / "b.smi"), "--json", str(ro / "r.json")]):
            rc, err = _cli(argv, capsys)
            assert rc == 2 and len(err) == 1 and "not writable" in err[0]
        assert time.process_time() - t0 < 1.0
    finally:
        ro.chmod(0o700)


def test_train_on_a_full_disk_is_one_line_naming_the_file(lib, tmp_path):
    """The reference's checkpoint writer (torch.save) raises a RuntimeError when the disk fills; the command
    says which file it could not write, leaves no manifest (the folder is not a model) and no temporary file."""
    out = tmp_path / "m"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
            "from iclr25.rxnflow.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "train", "--blocks", str(lib / "b.smi"), "--templates",
                           str(lib / "t.txt"), "--out", str(out), *TINY],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "ICLR25_QUIET": "1"})
    err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip() and "it/s" not in ln and "%|" not in ln]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(err) == 1 and f"cannot write {out / 'model.pt'}: the write failed" in err[0], err
    assert not (out / "manifest.json").exists() and not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_model_folder_with_parts_of_two_saves_is_refused_in_one_line(saved, tmp_path, capsys):
    from iclr25.rxnflow import load_model

    load_model(saved / "a")  # whole
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("model.pt", "blocks.smi", "templates.txt", "manifest.json"):
        (mixed / name).write_bytes((saved / "a" / name).read_bytes())
    (mixed / "model.pt").write_bytes((saved / "b" / "model.pt").read_bytes())
    with pytest.raises(ValueError, match=r"model\.pt is not the file this model folder was saved with"):
        load_model(mixed)
    rc, err = _cli(["sample", "--model", str(mixed), "--n", "3", "--out", str(tmp_path / "s.smi")], capsys)
    assert rc == 2 and len(err) == 1 and "different saves" in err[0]
    (mixed / "manifest.json").unlink()  # a save cut short before its manifest
    with pytest.raises(ValueError, match="no manifest.json"):
        load_model(mixed)
    assert not (tmp_path / "s.smi").exists()


def test_saving_again_replaces_only_the_models_own_files(saved, tmp_path):
    from iclr25.rxnflow import load_model

    d = tmp_path / "m"
    d.mkdir()
    (d / "notes.txt").write_text("mine\n")
    for name in ("model.pt", "blocks.smi", "templates.txt", "manifest.json"):
        (d / name).write_bytes((saved / "a" / name).read_bytes())
    load_model(d).save(d)
    assert (d / "notes.txt").read_text() == "mine\n"
    assert _snapshot(d).keys() == {"notes.txt", "model.pt", "blocks.smi", "templates.txt", "manifest.json"}
    load_model(d)
