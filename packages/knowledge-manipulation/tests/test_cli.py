"""`train` then `eval --model` end to end on a tiny run (the save/load round trip of a model folder)."""

import torch

from iclr25.knowledge_manipulation.cli import main
from iclr25.knowledge_manipulation.experiments import load_pretrained
from iclr25.utils.results import RunResult


def test_train_then_eval(tmp_path, capsys):
    people, model, ev = tmp_path / "people.jsonl", tmp_path / "model", tmp_path / "eval"
    assert main(["generate", "--n", "16", "--out", str(people), "--multiplicity", "1"]) == 0
    assert main(["train", "--people", str(people), "--out", str(model), "--epochs", "1", "--layers", "1",
                 "--d-model", "16", "--heads", "2"]) == 0
    assert {p.name for p in model.iterdir()} == {"model.pt", "tokenizer.json", "people.jsonl", "results.json",
                                                 "manifest.json"}
    pre = load_pretrained(model)
    assert len(pre.population) == 16 and pre.model.cfg.d_model == 16
    ids = torch.tensor([pre.tokenizer.encode("What is the birth date of")])
    assert pre.model(ids).shape[-1] == pre.tokenizer.vocab_size
    assert main(["eval", "--model", str(model), "--tasks", "classification:birth_month:mod2:cot", "--epochs", "1",
                 "--out", str(ev)]) == 0
    run = RunResult.load(ev / "results.json")
    assert 0.0 <= run.metric("classification:birth_month:mod2:cot test").value <= 1.0


def test_model_folder_is_whole_or_refused(tmp_path, capsys):
    """A model folder whose parts come from two saves, or whose save was cut short (no manifest), is refused in
    one line naming the folder and the part (it used to load and fine-tune the wrong people)."""
    import shutil

    people, model = tmp_path / "people.jsonl", tmp_path / "model"
    assert main(["generate", "--n", "12", "--out", str(people), "--multiplicity", "1"]) == 0
    assert main(["train", "--people", str(people), "--out", str(model), "--epochs", "1", "--layers", "1",
                 "--d-model", "8", "--heads", "2"]) == 0
    capsys.readouterr()
    assert main(["train", "--people", str(people), "--out", str(model), "--epochs", "1"]) == 2  # a previous run
    assert "--overwrite" in capsys.readouterr().err
    mixed = tmp_path / "mixed"
    shutil.copytree(model, mixed)
    assert main(["generate", "--n", "12", "--seed", "1", "--out", str(mixed / "people.jsonl"), "--overwrite",
                 "--multiplicity", "1"]) == 0
    capsys.readouterr()
    assert main(["eval", "--model", str(mixed), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "people.jsonl is not the file" in err and str(mixed) in err, err
    (model / "manifest.json").unlink()  # a save cut short before its manifest
    assert main(["eval", "--model", str(model), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no manifest.json" in err and "--model" in err, err
