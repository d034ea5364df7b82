"""Every path a command writes (issue 57): declared with iclr25.utils.outputs.add_output and checked before any
work (never an input nor inside one, a previous run kept without --overwrite, a symbolic link never replaced);
index and model folders whole or refused (a manifest written last); every path read from an index's manifest
stays inside its folder; the endpoint's API key written nowhere."""

import json
import os
import shutil
import time

import numpy as np
import pytest

from iclr25.mmed_rag.cli import main
from iclr25.utils.checkpoints import CheckpointError, verify_manifest, write_manifest

FAST = ["--steps", "1", "--router-steps", "1", "--backend", "numpy"]


def _one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _tree(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """data/ (generate), index/ (build-index, numpy backend) and model/ (train, one SFT and one DPO step)."""
    root = tmp_path_factory.mktemp("built")
    data, index, model = root / "data", root / "index", root / "model"
    assert main(["generate", "--out", str(data), "--n-train", "8", "--n-db", "6", "--n-test", "3"]) == 0
    assert main(["build-index", str(data), "--out", str(index), *FAST]) == 0
    assert main(["train", str(data), "--index", str(index), "--out", str(model), "--sft-steps", "1",
                 "--dpo-steps", "1"]) == 0
    return root


def _rehash(folder):
    """What someone who edits an index would do: make its top-level manifest agree with the edited files."""
    doc = json.loads((folder / "manifest.json").read_text())
    write_manifest(folder, sorted(doc["files"]), meta=doc["meta"])


# ------------------------------------------------------------------ inputs are never outputs, checked before work
def test_an_input_named_as_output_is_refused_before_work_and_kept(built, capsys):
    data, index, model = built / "data", built / "index", built / "model"
    before = {d: _tree(d) for d in (data, index, model)}
    cases = [
        (["build-index", str(data), "--out", str(data), "--overwrite", "--steps", "100000"], "is also an input"),
        (["build-index", str(data / "train.npz"), "--out", str(data), "--overwrite"], "holds the input"),
        (["build-index", str(data / "train.npz"), "--out", str(data / "train.npz"), "--overwrite"], "not a folder"),
        (["build-index", str(data), "--out", str(data / "ix"), "--steps", "100000"], "inside the input folder"),
        (["train", str(data), "--index", str(index), "--out", str(index), "--overwrite", "--sft-steps", "100000"],
         "is also an input"),
        (["evaluate", str(data), "--index", str(index), "--model", str(model), "--out", str(model), "--overwrite"],
         "is also an input"),
        (["evaluate", str(data), "--index", str(index), "--out", str(index / "index"), "--overwrite"],
         "inside the input folder"),
        (["ask", str(data), "--index", str(index), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
          "--out", str(data), "--overwrite"], "is also an input"),
    ]
    for argv, why in cases:
        t0 = time.perf_counter()
        assert main(argv) == 2, argv
        assert time.perf_counter() - t0 < 2, argv
        err = _one_line(capsys)
        assert "--out" in err and why in err, (argv, err)
    assert {d: _tree(d) for d in (data, index, model)} == before


def test_a_previous_run_is_kept_without_overwrite_and_replaced_with_it(built, tmp_path, capsys):
    data, index = built / "data", built / "index"
    out = tmp_path / "ev"
    out.mkdir()
    (out / "results.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    argv = ["evaluate", str(data), "--index", str(index), "--out", str(out)]
    assert main(argv) == 2
    err = _one_line(capsys)
    assert "--out" in err and "results.json" in err and "--overwrite" in err, err
    assert (out / "results.json").read_text() == "{}"
    assert main([*argv, "--overwrite"]) == 0
    assert json.loads((out / "results.json").read_text())["command"] == "evaluate"
    assert (out / "notes.txt").read_text() == "mine"
    # a previous data set, likewise
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "test.npz").write_bytes(b"mine")
    assert main(["generate", "--out", str(tmp_path / "d"), "--n-train", "100000"]) == 2
    assert "test.npz" in _one_line(capsys) and (tmp_path / "d" / "test.npz").read_bytes() == b"mine"


def test_a_symlink_among_the_outputs_is_never_replaced(built, tmp_path, capsys):
    out = tmp_path / "ev"
    out.mkdir()
    target = tmp_path / "elsewhere.json"
    target.write_text("kept")
    (out / "results.json").symlink_to(target)
    assert main(["evaluate", str(built / "data"), "--index", str(built / "index"), "--out", str(out),
                 "--overwrite"]) == 2
    err = _one_line(capsys)
    assert "--out" in err and "symbolic link" in err, err
    assert (out / "results.json").is_symlink() and target.read_text() == "kept"


def test_out_below_a_file_is_refused_before_work_naming_out(built, tmp_path, capsys):
    data, index, model = built / "data", built / "index", built / "model"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    bad = str(blocker / "run")
    for argv in (["generate", "--n-train", "100000"], ["build-index", str(data), "--steps", "100000"],
                 ["train", str(data), "--index", str(index), "--sft-steps", "100000"],
                 ["evaluate", str(data), "--index", str(index), "--model", str(model)],
                 ["ask", str(data), "--index", str(index), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"],
                 ["align", str(data), "--index", str(index), "--hf-path", str(model)],
                 ["demo"], ["repro"]):
        t0 = time.perf_counter()
        assert main([*argv, "--out", bad]) == 2, argv
        assert time.perf_counter() - t0 < 2, argv
        err = _one_line(capsys)
        assert err.startswith("iclr25 mmed-rag: error: --out ") and "is a file" in err, (argv, err)
    assert blocker.read_text() == "x"


# ------------------------------------------------------------------ paths read from an index stay inside it
@pytest.mark.parametrize("how", ["parent", "absolute", "shard-name", "top-manifest"])
def test_an_index_naming_a_file_outside_its_folder_is_refused_and_nothing_outside_is_read(
        built, tmp_path, capsys, monkeypatch, how):
    idx = tmp_path / "index"
    shutil.copytree(built / "index", idx)
    manifest = idx / "index" / "manifest.json"
    doc = json.loads(manifest.read_text())
    shard, meta = next(iter(doc["shards"].items()))
    outside = tmp_path / "outside"
    outside.mkdir()
    # a valid copy of the shard's own files outside the index: reading them would go unnoticed
    shutil.copy(idx / "index" / meta["file"], outside / "x.npy")
    shutil.copy(idx / "index" / f"{shard}.meta.npz", outside / "x.meta.npz")
    if how == "parent":
        meta["file"] = "../../outside/x.npy"
    elif how == "absolute":
        meta["file"] = str(outside / "x.npy")
    elif how == "shard-name":
        doc["shards"] = {"../../outside/x": meta, **{k: v for k, v in doc["shards"].items() if k != shard}}
    if how == "top-manifest":
        top = json.loads((idx / "manifest.json").read_text())
        top["files"]["../outside/x.npy"] = {"bytes": 1, "sha256": "0"}
        (idx / "manifest.json").write_text(json.dumps(top))
    else:
        manifest.write_text(json.dumps(doc))
        _rehash(idx)
    read = []
    real_load = np.load

    def recording_load(file, *a, **k):
        read.append(os.path.realpath(file))
        return real_load(file, *a, **k)

    monkeypatch.setattr(np, "load", recording_load)
    rc = main(["evaluate", str(built / "data"), "--index", str(idx), "--out", str(tmp_path / "ev")])
    assert rc == 2
    err = _one_line(capsys)
    assert "manifest.json" in err and ("outside its folder" in err or "absolute path" in err), err
    assert not [p for p in read if p.startswith(str(outside.resolve()))], read
    assert not (tmp_path / "ev").exists()


# ------------------------------------------------------------------ index and model folders: whole or refused
def test_index_and_model_folders_have_a_manifest_and_mixed_parts_are_refused(built, tmp_path, capsys):
    index, model = built / "index", built / "model"
    assert verify_manifest(index, ["config.json", "router.pt", "index/manifest.json"])["meta"]["shards"]
    verify_manifest(model, ["sft.pt", "rag_pt.pt", "pairs.json"])
    # a second training into another folder; its rag_pt.pt copied beside the first one's sft.pt
    other = tmp_path / "other"
    assert main(["train", str(built / "data"), "--index", str(index), "--out", str(other), "--sft-steps", "1",
                 "--dpo-steps", "1", "--seed", "1"]) == 0
    mixed = tmp_path / "mixed"
    shutil.copytree(model, mixed)
    shutil.copy(other / "rag_pt.pt", mixed / "rag_pt.pt")
    capsys.readouterr()
    base = ["evaluate", str(built / "data"), "--index", str(index)]
    assert main([*base, "--model", str(mixed), "--out", str(tmp_path / "e1")]) == 2
    err = _one_line(capsys)
    assert "rag_pt.pt is not the file" in err, err
    # an index cut short (no manifest: the build did not finish, or an index of 0.7) is refused too
    cut = tmp_path / "cut"
    shutil.copytree(index, cut)
    (cut / "manifest.json").unlink()
    assert main([*base[:2], "--index", str(cut), "--out", str(tmp_path / "e2")]) == 2
    assert "no manifest.json" in _one_line(capsys)
    # train --overwrite of a folder holding a manifest.json of the user's: refused before the training
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "manifest.json").write_text('{"mine": 1}')
    t0 = time.perf_counter()
    assert main(["train", str(built / "data"), "--index", str(index), "--out", str(mine), "--overwrite",
                 "--sft-steps", "100000"]) == 2
    assert time.perf_counter() - t0 < 3
    assert "never replaced" in _one_line(capsys) and (mine / "manifest.json").read_text() == '{"mine": 1}'


def test_shipped_checkpoint_folder_is_verified(tmp_path):
    from iclr25.mmed_rag.checkpoint import CHECKPOINTS, DEMO_CHECKPOINT, load_system, verify_system_files

    verify_system_files(DEMO_CHECKPOINT, required=True)  # the committed manifest matches the committed files
    copy = tmp_path / "checkpoints"
    shutil.copytree(CHECKPOINTS, copy)
    name = DEMO_CHECKPOINT.name
    meta = json.loads((copy / f"{name}.json").read_text())
    meta["seed"] = 5
    (copy / f"{name}.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"{name}.json is not the file"):
        load_system(copy / name)


# ------------------------------------------------------------------ the API key is written nowhere
def test_the_api_key_is_written_nowhere(built, tmp_path, capsys, caplog, monkeypatch):
    """`ask --endpoint` with a key in the variable --api-key-env names: the key reaches the server as a bearer
    token and is in no file written (results.json), not in stdout/stderr and not in any log record, also when
    the endpoint fails. (In-process, to keep the suite's CPU time: the command's output and every logger's.)"""
    import logging

    from iclr25.utils.testing import stub_chat_server

    key = "sk-mmed-rag-never-written-93ab17"
    monkeypatch.setenv("MMED_RAG_TEST_KEY", key)
    caplog.set_level(logging.DEBUG)
    data, index = tmp_path / "data", tmp_path / "index"
    shutil.copytree(built / "data", data)
    shutil.copytree(built / "index", index)
    argv = ["ask", str(data), "--index", str(index), "--model", "m", "--api-key-env", "MMED_RAG_TEST_KEY",
            "--limit", "3", "--timeout", "5"]
    with stub_chat_server("Yes.") as stub:
        assert main([*argv, "--endpoint", stub.url, "--out", str(tmp_path / "run")]) == 0
        ok = capsys.readouterr()
        stub.fail_first = 10**6
        assert main([*argv, "--endpoint", stub.url, "--out", str(tmp_path / "failed")]) == 2
        failed = capsys.readouterr()
    assert stub.requests and all(r["auth"] == f"Bearer {key}" for r in stub.requests)
    assert "HTTP 503" in failed.err
    assert (tmp_path / "run" / "results.json").is_file()
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert key.encode() not in p.read_bytes(), p
    for text in (ok.out, ok.err, failed.out, failed.err, caplog.text):
        assert key not in text
