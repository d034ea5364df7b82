"""Every path a command writes (issue 57): declared with iclr25.utils.outputs.add_output, checked before any work,
never an input, an existing file kept without --overwrite, a symbolic link never replaced; the API key written
nowhere."""

import json
import os
import subprocess
import sys
import time

import numpy as np

from iclr25.llm_regret import LLMAgent, loss_sequences, run_online
from iclr25.llm_regret.cli import main
from iclr25.utils.testing import stub_chat_server


def _transcript(path, n=3):
    """A transcript that `run --agent llm --T n` (alternating losses, seed 0) replays: answers [0.6, 0.4]."""
    L = loss_sequences("alternating", T=n, d=2, n_seeds=1, seed=0)
    run_online(LLMAgent(lambda prompt: "[0.6, 0.4]", transcript=path), L)
    return path.read_bytes()


def _one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_transcript_naming_the_replay_file_is_refused_before_work(tmp_path, capsys):
    replay = tmp_path / "t.jsonl"
    before = _transcript(replay)
    t0 = time.perf_counter()
    rc = main(["run", "--agent", "llm", "--replay", str(replay), "--T", "3", "--transcript", str(replay)])
    assert rc == 2 and time.perf_counter() - t0 < 2
    err = _one_line(capsys)
    assert "--transcript" in err and "is also an input" in err, err
    assert replay.read_bytes() == before
    # another spelling of the same file, and a hard link to it, are the same input
    rc = main(["run", "--agent", "llm", "--replay", str(replay), "--T", "3", "--overwrite",
               "--transcript", str(tmp_path / "." / "sub" / ".." / "t.jsonl")])
    assert rc == 2 and "is also an input" in _one_line(capsys)
    os.link(replay, tmp_path / "hard.jsonl")
    rc = main(["run", "--agent", "llm", "--replay", str(replay), "--T", "3", "--overwrite",
               "--transcript", str(tmp_path / "hard.jsonl")])
    assert rc == 2 and "is also an input" in _one_line(capsys)
    assert replay.read_bytes() == before


def test_out_naming_the_losses_file_is_refused_and_kept(tmp_path, capsys):
    f = tmp_path / "mine.npy"
    np.save(f, np.full((10, 2), 0.5))
    before = f.read_bytes()
    assert main(["run", "--losses", str(f), "--out", str(f), "--overwrite"]) == 2
    assert _one_line(capsys).startswith("iclr25 llm-regret: error: --out")
    assert main(["run", "--agent", "llm", "--losses", str(f), "--replay", str(f), "--transcript", str(f),
                 "--overwrite"]) == 2
    assert "--transcript" in _one_line(capsys)
    assert f.read_bytes() == before


def test_existing_transcript_is_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    replay = tmp_path / "t.jsonl"
    _transcript(replay)
    mine = tmp_path / "mine.jsonl"
    mine.write_text("my notes\n")
    argv = ["run", "--agent", "llm", "--replay", str(replay), "--T", "3", "--transcript", str(mine), "--json"]
    assert main(argv) == 2
    err = _one_line(capsys)
    assert "--transcript" in err and "--overwrite" in err, err
    assert mine.read_text() == "my notes\n"
    assert main([*argv, "--overwrite"]) == 0
    capsys.readouterr()
    lines = mine.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["answer"] == "[0.6, 0.4]"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_symlink_transcript_is_never_replaced(tmp_path, capsys):
    replay = tmp_path / "t.jsonl"
    _transcript(replay)
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("kept\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    rc = main(["run", "--agent", "llm", "--replay", str(replay), "--T", "3", "--transcript", str(link),
               "--overwrite"])
    assert rc == 2
    err = _one_line(capsys)
    assert "--transcript" in err and "symbolic link" in err, err
    assert link.is_symlink() and target.read_text() == "kept\n"


def test_out_errors_name_out_and_come_before_work(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for argv in (["run", "--T", "20", "--seeds", "2"], ["train-regret-loss", "--steps", "100000"]):
        t0 = time.perf_counter()
        assert main([*argv, "--out", str(blocker / "run")]) == 2
        assert time.perf_counter() - t0 < 2
        err = _one_line(capsys)
        assert err.startswith("iclr25 llm-regret: error: --out ") and "is a file" in err, err
        assert main([*argv, "--out", str(blocker)]) == 2
        assert "--out" in _one_line(capsys)
    assert blocker.read_text() == "x"


def test_train_previous_run_is_kept_without_overwrite(tmp_path, capsys):
    out = tmp_path / "train"
    out.mkdir()
    (out / "model.pt").write_bytes(b"weights of mine")
    t0 = time.perf_counter()
    assert main(["train-regret-loss", "--steps", "100000", "--out", str(out)]) == 2
    assert time.perf_counter() - t0 < 2
    err = _one_line(capsys)
    assert "--out" in err and "model.pt" in err and "--overwrite" in err, err
    assert (out / "model.pt").read_bytes() == b"weights of mine"


def test_run_out_previous_run_replaced_only_with_overwrite(tmp_path, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "results.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    argv = ["run", "--T", "20", "--seeds", "2", "--out", str(out)]
    assert main(argv) == 2
    assert "--overwrite" in _one_line(capsys)
    assert (out / "results.json").read_text() == "{}"
    assert main([*argv, "--overwrite"]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["T"] == 20 and not any(k.startswith("_") for k in res["config"])
    assert (out / "notes.txt").read_text() == "mine"


def test_the_api_key_is_written_nowhere(tmp_path):
    """`run --agent llm --endpoint` with a key in the variable --api-key-env names: the key reaches the server as
    a bearer token, and is in no file the command writes (results.json, the transcript) nor in its output."""
    key = "sk-never-written-7f3a9c2e51"
    env = {**os.environ, "LLM_REGRET_TEST_KEY": key, "PYTHONWARNINGS": "default"}
    with stub_chat_server("[0.6, 0.4]") as stub:
        proc = subprocess.run(
            [sys.executable, "-m", "iclr25.llm_regret", "run", "--agent", "llm", "--endpoint", stub.url,
             "--model", "m", "--api-key-env", "LLM_REGRET_TEST_KEY", "--T", "4", "--out", "run",
             "--transcript", "run/transcript.jsonl"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        # an endpoint that fails is reported without the key as well
        stub.fail_first = 10**6
        failed = subprocess.run(
            [sys.executable, "-m", "iclr25.llm_regret", "run", "--agent", "llm", "--endpoint", stub.url,
             "--model", "m", "--api-key-env", "LLM_REGRET_TEST_KEY", "--T", "4", "--http-retries", "0",
             "--out", "failed"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert stub.requests and all(r["auth"] == f"Bearer {key}" for r in stub.requests)
    assert failed.returncode == 2 and "HTTP 503" in failed.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"results.json", "transcript.jsonl"}
    for p in written:
        assert key.encode() not in p.read_bytes(), p
    for text in (proc.stdout, proc.stderr, failed.stdout, failed.stderr):
        assert key not in text
