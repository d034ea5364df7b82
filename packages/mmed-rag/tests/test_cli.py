"""The command line on a user's files: generate → build-index → train → evaluate (tiny budgets)."""

import json

from iclr25.mmed_rag.cli import main


def test_generate_build_train_evaluate(tmp_path):
    data, index, model, out = tmp_path / "data", tmp_path / "index", tmp_path / "model", tmp_path / "eval"
    assert main(["generate", "--out", str(data), "--n-train", "16", "--n-db", "12", "--n-test", "6"]) == 0
    assert {p.name for p in data.iterdir()} >= {"train.npz", "db.npz", "test.npz", "examples.png"}
    assert main(["build-index", str(data), "--out", str(index), "--steps", "3", "--router-steps", "3",
                 "--backend", "hnswlib"]) == 0
    assert json.loads((index / "index" / "manifest.json").read_text())["shards"]["radiology"]["backend"] == "hnswlib"
    assert main(["train", str(data), "--index", str(index), "--out", str(model), "--sft-steps", "3",
                 "--dpo-steps", "2", "--no-report-pairs"]) == 0
    assert main(["evaluate", str(data), "--index", str(index), "--model", str(model), "--out", str(out)]) == 0
    metrics = {m["name"] for m in json.loads((out / "results.json").read_text())["metrics"]}
    assert {"router_accuracy", "recall@1", "sft_fixed_k_copy_rate", "rag_pt_gap_harm_rate"} <= metrics


def test_bad_flags_exit_2(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path), "--label-noise", "0.7"]) == 2
    assert "--label-noise" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "nope.npz"), "--index", str(tmp_path / "ix"), "--out",
                 str(tmp_path / "o")]) == 2
    assert "nope.npz" in capsys.readouterr().err
