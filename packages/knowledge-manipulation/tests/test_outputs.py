"""Every path a command writes is checked before any work (issue 57): an input named as an output, an existing
file without --overwrite, a symbolic link; and a model file holding a pickle payload is refused in one line."""

import os
import pickle

from iclr25.knowledge_manipulation.cli import main
from iclr25.utils.checkpoints import write_manifest


def _people(tmp_path, name="people.jsonl", n=6):
    path = tmp_path / name
    assert main(["generate", "--n", str(n), "--out", str(path), "--multiplicity", "1"]) == 0
    return path


def test_input_named_as_output_is_refused_before_work(tmp_path, capsys):
    people = _people(tmp_path)
    before = people.read_bytes()
    capsys.readouterr()
    # the people file as the model folder; a model folder holding its own input; eval writing into its --model
    assert main(["train", "--people", str(people), "--out", str(people)]) == 2
    assert "--out" in capsys.readouterr().err and people.read_bytes() == before
    assert main(["train", "--people", str(people), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "holds the input" in err and people.read_bytes() == before, err
    model = tmp_path / "model"
    model.mkdir()
    assert main(["eval", "--model", str(model), "--out", str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is also an input" in err and list(model.iterdir()) == [], err
    # --out and --qa the same file
    assert main(["generate", "--n", "4", "--out", str(tmp_path / "a.jsonl"), "--qa", str(tmp_path / "a.jsonl")]) == 2
    assert "name the same path" in capsys.readouterr().err and not (tmp_path / "a.jsonl").exists()


def test_existing_file_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys):
    out, qa = tmp_path / "bios.jsonl", tmp_path / "qa.jsonl"
    out.write_text("mine\n")
    qa.write_text("my questions\n")
    assert main(["generate", "--n", "4", "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == "mine\n"
    assert main(["generate", "--n", "4", "--out", str(tmp_path / "new.jsonl"), "--qa", str(qa)]) == 2
    assert "--qa" in capsys.readouterr().err and qa.read_text() == "my questions\n"
    assert not (tmp_path / "new.jsonl").exists()  # nothing written before the check
    assert main(["generate", "--n", "4", "--out", str(out), "--qa", str(qa), "--overwrite"]) == 0
    assert out.read_text().count("\n") == 4 and qa.read_text() != "my questions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bios.jsonl", "qa.jsonl"]  # no temporary file left


def test_symlink_and_wrong_suffix_are_refused(tmp_path, capsys):
    target = tmp_path / "target.jsonl"
    target.write_text("theirs\n")
    link = tmp_path / "link.jsonl"
    os.symlink(target, link)
    assert main(["generate", "--n", "4", "--out", str(link), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "--out" in err and link.is_symlink() and target.read_text() == "theirs\n"
    assert main(["generate", "--n", "4", "--out", str(tmp_path / "bios.csv")]) == 2
    assert "--out must name a .jsonl file" in capsys.readouterr().err


class _Payload:
    def __reduce__(self):  # unpickling would call os.getcwd(): harmless, but not weights
        return (os.getcwd, ())


def test_model_holding_a_pickle_payload_is_one_line(tmp_path, capsys):
    # torch's weights-only loader refuses it (good); it used to be an UnpicklingError traceback
    people = _people(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.pt").write_bytes(pickle.dumps({"config": _Payload()}, protocol=2))
    (model / "tokenizer.json").write_text("{}")
    (model / "people.jsonl").write_bytes(people.read_bytes())
    write_manifest(model, ["model.pt", "tokenizer.json", "people.jsonl"])  # whole, so the loader reaches torch
    capsys.readouterr()
    assert main(["eval", "--model", str(model), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(model / "model.pt") in err and "weights-only" in err, err


def test_shipped_stage_a_is_verified(tmp_path, monkeypatch):
    # weights from another build than the record beside them: refused in one line (CheckpointError)
    import shutil

    import pytest

    from iclr25.knowledge_manipulation import checkpoints
    from iclr25.utils.checkpoints import CheckpointError

    copy = tmp_path / "stage_a"
    shutil.copytree(checkpoints.STAGE_A_DIR, copy)
    shutil.copy(copy / "seed1.npz", copy / "seed0.npz")
    monkeypatch.setattr(checkpoints, "STAGE_A_DIR", copy)
    with pytest.raises(CheckpointError, match="seed0.npz is not the file"):
        checkpoints.load_stage_a(0)
