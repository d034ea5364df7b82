"""Every path a command writes (issue 57): declared with iclr25.utils.outputs.add_output and checked before any
work (never an input, an existing run kept without --overwrite, a symbolic link never replaced); `train` folders
and the shipped weights whole or refused (a manifest written last); the endpoint's API key written nowhere."""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

from iclr25.teochat.cli import main
from iclr25.utils.checkpoints import CheckpointError, verify_manifest
from iclr25.utils.testing import stub_chat_server

TINY = ["--steps", "1", "--batch-size", "2", "--d-model", "32"]


def _one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A generated data set and a model trained on it for one step (data/, model/)."""
    root = tmp_path_factory.mktemp("trained")
    assert main(["generate", "--n", "6", "--out", str(root / "data")]) == 0
    assert main(["train", "--data", str(root / "data" / "sequences.npz"), "--out", str(root / "model"), *TINY]) == 0
    return root


def _png(path, value):
    Image.fromarray(np.full((32, 32, 3), value, dtype=np.uint8)).save(path)


def test_train_out_naming_its_data_or_the_data_folder_is_refused_before_work(trained, tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(trained / "data", data)
    before = _snapshot(data)
    npz = data / "sequences.npz"
    for out, why in ((npz, "not a folder"), (data, "holds the input"), (tmp_path / "x" / ".." / "data", "holds")):
        t0 = time.perf_counter()
        assert main(["train", "--data", str(npz), "--out", str(out), "--overwrite", "--steps", "100000"]) == 2
        assert time.perf_counter() - t0 < 2
        err = _one_line(capsys)
        assert "--out" in err and why in err, err
    assert _snapshot(data) == before


def test_a_previous_data_set_is_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "conversations.jsonl").write_text("mine\n")
    (data / "notes.txt").write_text("keep")
    assert main(["generate", "--n", "3", "--out", str(data)]) == 2
    err = _one_line(capsys)
    assert "--out" in err and "conversations.jsonl" in err and "--overwrite" in err, err
    assert (data / "conversations.jsonl").read_text() == "mine\n" and not (data / "sequences.npz").exists()
    assert main(["generate", "--n", "3", "--out", str(data), "--overwrite"]) == 0
    assert (data / "conversations.jsonl").read_text() != "mine\n" and (data / "sequences.npz").is_file()
    assert (data / "notes.txt").read_text() == "keep"
    assert not [p for p in data.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_a_symlink_among_the_outputs_is_never_replaced(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    target = tmp_path / "elsewhere.npz"
    target.write_bytes(b"kept")
    (data / "sequences.npz").symlink_to(target)
    assert main(["generate", "--n", "3", "--out", str(data), "--overwrite"]) == 2
    err = _one_line(capsys)
    assert "--out" in err and "symbolic link" in err, err
    assert (data / "sequences.npz").is_symlink() and target.read_bytes() == b"kept"


def test_out_below_a_file_is_refused_before_work_naming_out(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for argv in (["generate", "--n", "100000"], ["demo"], ["repro", "--steps", "100000"]):
        t0 = time.perf_counter()
        assert main([*argv, "--out", str(blocker / "run")]) == 2
        assert time.perf_counter() - t0 < 2
        err = _one_line(capsys)
        assert err.startswith("iclr25 teochat: error: --out ") and "is a file" in err, err
    assert blocker.read_text() == "x"


def test_train_folder_has_a_manifest_and_chat_refuses_a_swapped_model(trained, tmp_path, capsys):
    model = trained / "model"
    doc = verify_manifest(model, ["model.pt", "results.json"])
    assert doc["meta"]["format"] == "iclr25-teochat/1"
    seq = tmp_path / "site"
    seq.mkdir()
    _png(seq / "2020-01-01.png", 10)
    _png(seq / "2021-01-01.png", 200)
    mixed = tmp_path / "mixed"
    shutil.copytree(model, mixed)
    # a second training's model.pt beside the first one's manifest: parts of two saves
    assert main(["train", "--data", str(trained / "data" / "sequences.npz"), "--out", str(tmp_path / "other"),
                 "--seed", "1", *TINY]) == 0
    shutil.copy(tmp_path / "other" / "model.pt", mixed / "model.pt")
    capsys.readouterr()
    ask = ["chat", "--sequence", str(seq), "--question", "what is the scene class of this location ?"]
    assert main([*ask, "--model", str(model / "model.pt")]) == 0
    capsys.readouterr()
    assert main([*ask, "--model", str(mixed / "model.pt")]) == 2
    err = _one_line(capsys)
    assert "model.pt is not the file this teochat checkpoint was saved with" in err, err
    # a model.pt alone (no manifest beside it) is whole by itself: it loads
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(model / "model.pt", alone / "model.pt")
    assert main([*ask, "--model", str(alone / "model.pt")]) == 0


def test_train_overwrite_replaces_the_run_and_its_manifest(trained, tmp_path, capsys):
    out = tmp_path / "model"
    shutil.copytree(trained / "model", out)
    data = trained / "data" / "sequences.npz"
    assert main(["train", "--data", str(data), "--out", str(out), *TINY]) == 2
    assert "--overwrite" in _one_line(capsys)
    assert main(["train", "--data", str(data), "--out", str(out), "--seed", "2", *TINY, "--overwrite"]) == 0
    assert json.loads((out / "results.json").read_text())["seed"] == 2
    verify_manifest(out, ["model.pt", "results.json"])
    # a manifest.json of the user's is never replaced, and that is said before the training
    (out / "manifest.json").unlink()
    (out / "manifest.json").write_text('{"mine": true}')
    t0 = time.perf_counter()
    assert main(["train", "--data", str(data), "--out", str(out), "--overwrite", "--steps", "100000"]) == 2
    assert time.perf_counter() - t0 < 5
    err = _one_line(capsys)
    assert "--out" in err and "manifest.json" in err and "never replaced" in err, err
    assert (out / "manifest.json").read_text() == '{"mine": true}'


def test_shipped_weights_are_verified_on_load(tmp_path, monkeypatch):
    from iclr25.teochat import pretrained

    folder = pretrained.weights_folder()
    verify_manifest(folder, pretrained.PARTS)  # the committed manifest matches the committed weights
    copy = tmp_path / "weights"
    shutil.copytree(folder, copy)
    info = json.loads((copy / "demo.json").read_text())
    info["seed"] = 7
    (copy / "demo.json").write_text(json.dumps(info))
    monkeypatch.setattr(pretrained, "weights_folder", lambda: copy)
    pretrained._verified.cache_clear()
    try:
        with pytest.raises(CheckpointError, match="demo.json is not the file"):
            pretrained.pretrained_info()
        (copy / "demo.json").unlink()
        with pytest.raises(CheckpointError, match="demo.json is missing"):
            pretrained.load_pretrained("temporal")
    finally:
        pretrained._verified.cache_clear()


def test_the_api_key_is_written_nowhere(tmp_path):
    """`chat --endpoint` with a key in the variable --api-key-env names: the key reaches the server as a bearer
    token and is in no file under the working folder, nor in stdout/stderr (also when the endpoint fails)."""
    key = "sk-teochat-never-written-41c9e7"
    env = {**os.environ, "TEOCHAT_TEST_KEY": key, "PYTHONWARNINGS": "default"}
    seq = tmp_path / "site"
    seq.mkdir()
    _png(seq / "2020-01-01.png", 10)
    _png(seq / "2021-01-01.png", 200)
    argv = [sys.executable, "-m", "iclr25.teochat", "chat", "--sequence", "site", "--question",
            "identify the buildings that changed .", "--endpoint", None, "--endpoint-model", "m", "--api-key-env",
            "TEOCHAT_TEST_KEY"]
    with stub_chat_server("[10, 10, 40, 40]") as stub:
        argv[argv.index(None)] = stub.url
        ok = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        stub.fail_first = 10**6
        failed = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "[10, 10, 40, 40]" in ok.stdout, ok.stderr
    assert stub.requests and all(r["auth"] == f"Bearer {key}" for r in stub.requests)
    assert failed.returncode == 2 and "HTTP 503" in failed.stderr
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert key.encode() not in p.read_bytes(), p
    for text in (ok.stdout, ok.stderr, failed.stdout, failed.stderr):
        assert key not in text
