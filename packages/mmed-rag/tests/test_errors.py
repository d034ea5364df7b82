"""Claim 4: bad input raises ValueError/TypeError whose message names the argument and what was expected."""

import numpy as np
import pytest
import torch

from iclr25.mmed_rag import (
    DomainIndex,
    MedDataset,
    VectorIndex,
    check_images,
    domain_index,
    dpo_loss,
    gap_select,
    generate,
    load_dataset,
    select_contexts,
)
from iclr25.utils.io import DataFileError


@pytest.fixture(scope="module")
def small():
    return generate(4, seed=0)


def test_unknown_domain():
    with pytest.raises(ValueError, match="unknown domain 'dermatology'"):
        domain_index("dermatology")
    di = DomainIndex().add_shard("radiology", np.eye(3), ["a", "b", "c"], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unknown domain 'pathology'.*radiology"):
        di.search("pathology", np.ones(3), 1)


def test_empty_index():
    with pytest.raises(ValueError, match="index is empty"):
        VectorIndex(4, backend="faiss-flat").search(np.ones(4), 1)
    with pytest.raises(ValueError, match="non-empty"):
        DomainIndex().add_shard("radiology", np.zeros((0, 4)), [], np.zeros((0, 4)))


def test_index_arguments():
    with pytest.raises(ValueError, match="backend must be one of"):
        VectorIndex(4, backend="annoy")
    idx = VectorIndex(4, backend="numpy").add(np.eye(4))
    with pytest.raises(ValueError, match="dimension 3"):
        idx.search(np.ones(3), 1)
    with pytest.raises(ValueError, match="k must be"):
        idx.search(np.ones(4), 0)
    with pytest.raises(ValueError, match="NaN"):
        idx.add(np.full((1, 4), np.nan))


def test_mismatched_counts(small):
    with pytest.raises(ValueError, match="mismatched counts: 12 images but 11 reports"):
        MedDataset(small.images, small.domains, small.labels, small.report_labels, small.reports[:-1])
    with pytest.raises(ValueError, match="mismatched counts"):
        DomainIndex().add_shard("radiology", np.eye(3), ["a", "b"], np.zeros((3, 4)))


def test_corrupt_images():
    with pytest.raises(ValueError, match="images contains NaN"):
        check_images(np.full((2, 3, 16, 16), np.nan, np.float32))
    with pytest.raises(ValueError, match=r"images must have shape \(N, 3, H, W\)"):
        check_images(np.zeros((3, 16, 16)))
    with pytest.raises(ValueError, match="3 colour channels"):
        check_images(np.zeros((2, 4, 16, 16)))
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        check_images(np.full((1, 3, 16, 16), 2.0))
    with pytest.raises(TypeError, match="numeric"):
        check_images(np.array([[["a"]]]))


def test_corrupt_dataset_file(tmp_path, small):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    with pytest.raises(DataFileError, match="bad.npz"):
        load_dataset(bad)
    np.savez(tmp_path / "short.npz", images=small.images, domains=small.domains, reports=np.asarray(small.reports[:3]))
    with pytest.raises(DataFileError, match="short.npz.*mismatched counts"):
        load_dataset(tmp_path / "short.npz")


def test_selection_arguments():
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        gap_select([0.5, 0.9], gamma=0.1)
    with pytest.raises(ValueError, match="gamma must be"):
        gap_select([0.9, 0.5], gamma=-1)
    with pytest.raises(ValueError, match="rule must be one of"):
        select_contexts([0.9], rule="topp")


def test_dpo_arguments():
    t = torch.zeros(3)
    with pytest.raises(ValueError, match="beta must be"):
        dpo_loss(t, t, t, t, beta=0)
    with pytest.raises(ValueError, match="reference_rejected_logps has shape"):
        dpo_loss(t, t, t, torch.zeros(2))
    with pytest.raises(TypeError, match="policy_chosen_logps must be a torch.Tensor"):
        dpo_loss([0.0], t, t, t)


# ----------------------------------------------------------------------- output policy (issue 40: no data loss)
from iclr25.mmed_rag import cli as _cli  # noqa: E402
from iclr25.mmed_rag.index import write_folder  # noqa: E402
from iclr25.utils.guards import OutputError  # noqa: E402

_FAST = ["--steps", "1", "--router-steps", "1", "--backend", "numpy"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    assert _cli.main(["generate", "--out", str(d), "--n-train", "8", "--n-db", "6", "--n-test", "3"]) == 0
    return d


def _tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_index_into_existing_folder_keeps_the_users_files(data_dir, tmp_path):
    out = tmp_path / "D"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "sub" / "x.npy").write_bytes(b"keep")
    assert _cli.main(["build-index", str(data_dir), "--out", str(out), *_FAST]) == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / "sub" / "x.npy").read_bytes() == b"keep"
    assert (out / "config.json").is_file() and (out / "index" / "manifest.json").is_file()
    assert not [p for p in tmp_path.rglob(".*")]  # no staging folder and no hidden .D.old-<pid> left


def test_build_index_refuses_a_previous_index_before_work_and_overwrite_replaces_only_its_files(
        data_dir, tmp_path, capsys):
    out = tmp_path / "D"
    assert _cli.main(["build-index", str(data_dir), "--out", str(out), *_FAST]) == 0
    (out / "mine.txt").write_text("mine")
    before = _tree(out)
    capsys.readouterr()
    assert _cli.main(["build-index", str(data_dir), "--out", str(out), "--steps", "10000000"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--out" in err and "--overwrite" in err and len(err.splitlines()) == 1
    assert _tree(out) == before
    assert _cli.main(["build-index", str(data_dir), "--out", str(out), *_FAST, "--seed", "1", "--overwrite"]) == 0
    after = _tree(out)
    assert after["mine.txt"] == b"mine" and set(after) == set(before)
    assert after["router.pt"] != before["router.pt"]  # the index files were replaced
    assert not [p for p in tmp_path.rglob(".*")]


def test_build_index_out_an_existing_file_is_refused_and_untouched(data_dir, tmp_path, capsys):
    f = tmp_path / "results.txt"
    f.write_text("precious")
    assert _cli.main(["build-index", str(data_dir), "--out", str(f), *_FAST]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "existing file" in err
    assert f.read_text() == "precious" and sorted(p.name for p in tmp_path.iterdir()) == ["results.txt"]


def test_build_index_out_the_input_is_refused(data_dir, capsys):
    before = _tree(data_dir)
    assert _cli.main(["build-index", str(data_dir), "--out", str(data_dir), *_FAST, "--overwrite"]) == 2
    assert "input" in capsys.readouterr().err
    assert _tree(data_dir) == before
    npz = data_dir / "train.npz"
    assert _cli.main(["build-index", str(npz), "--out", str(npz), *_FAST, "--overwrite"]) == 2
    assert _tree(data_dir) == before


def test_train_and_evaluate_refuse_an_input_or_a_previous_run(data_dir, tmp_path, capsys):
    idx = tmp_path / "ix"
    assert _cli.main(["build-index", str(data_dir), "--out", str(idx), *_FAST]) == 0
    before = _tree(idx)
    assert _cli.main(["train", str(data_dir), "--index", str(idx), "--out", str(idx), "--sft-steps", "1"]) == 2
    assert "--out" in capsys.readouterr().err
    assert _cli.main(["evaluate", str(data_dir), "--index", str(idx), "--out", str(data_dir)]) == 2
    assert "--out" in capsys.readouterr().err
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "results.json").write_text("{}")
    assert _cli.main(["evaluate", str(data_dir), "--index", str(idx), "--out", str(tmp_path / "ev")]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert _tree(idx) == before and (tmp_path / "ev" / "results.json").read_text() == "{}"


@pytest.mark.parametrize("marker", ["results.json", "train.npz"])
def test_generate_refuses_a_folder_holding_a_previous_run_before_any_work(tmp_path, capsys, marker):
    """issue 40: `generate --out` on a folder that holds a run (any command's results.json, or a previous
    generate's files) exits 2 with one line naming --out, writes nothing, and --overwrite keeps other files."""
    out = tmp_path / "previous"
    out.mkdir()
    (out / marker).write_bytes(b"{}")
    (out / "mine.txt").write_text("keep me")
    before = _tree(out)
    assert _cli.main(["generate", "--out", str(out), "--n-train", "2", "--n-db", "2", "--n-test", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--out" in err and "--overwrite" in err and len(err.splitlines()) == 1
    assert _tree(out) == before
    assert _cli.main(["generate", "--out", str(out), "--n-train", "2", "--n-db", "2", "--n-test", "2",
                      "--overwrite"]) == 0
    assert (out / "mine.txt").read_text() == "keep me" and (out / "test.npz").is_file()


def test_write_folder_api_keeps_other_files_and_cleans_up_after_a_failure(tmp_path):
    out = tmp_path / "ix"
    out.mkdir()
    (out / "a.txt").write_text("user")
    VectorIndex(4, backend="numpy").add(np.eye(4)).save(out)
    with pytest.raises(OutputError, match="already holds an index"):
        VectorIndex(4, backend="numpy").add(np.eye(4)).save(out)
    VectorIndex(4, backend="numpy").add(2 * np.eye(4)[:3]).save(out, overwrite=True)
    assert (out / "a.txt").read_text() == "user" and len(VectorIndex.load(out)) == 3

    def write(tmp):
        (tmp / "x.bin").write_bytes(b"1")
    (out / "x.bin").write_text("user's x")  # same name as a file written, no marker: refused, kept
    with pytest.raises(OutputError, match=r"already has files this command writes \(x.bin\)"):
        write_folder(out, write, marker="none.json")
    assert (out / "x.bin").read_text() == "user's x"

    def boom(tmp):
        (tmp / "half.bin").write_bytes(b"1")
        raise RuntimeError("disk full")
    new = tmp_path / "new" / "deeper"
    with pytest.raises(RuntimeError):
        write_folder(new, boom)
    assert not (tmp_path / "new").exists()  # folders it created are removed again
    with pytest.raises(RuntimeError):
        write_folder(out, boom, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(["a.txt", "x.bin", "manifest.json", "index.vectors.npy"])


# ---------------------------------------------------------------- messages name the file, not internals
def _rehash(folder):
    """Rewrite an index folder's manifest after a test edited a part on purpose."""
    from iclr25.utils.checkpoints import verify_manifest, write_manifest

    try:
        verify_manifest(folder)
    except ValueError:
        import json

        doc = json.loads((folder / "manifest.json").read_text())
        write_manifest(folder, sorted(doc["files"]), meta=doc["meta"])


def test_index_config_with_unknown_field_names_the_file_and_field(data_dir, tmp_path, capsys):
    idx = tmp_path / "ix"
    assert _cli.main(["build-index", str(data_dir), "--out", str(idx), *_FAST]) == 0
    cfg = idx / "config.json"
    import json
    cfg.write_text(json.dumps(dict(json.loads(cfg.read_text()), shards=7)))
    _rehash(idx)  # a folder whose manifest agrees: the config itself is read and refused
    assert _cli.main(["evaluate", str(data_dir), "--index", str(idx), "--out", str(tmp_path / "ev")]) == 2
    err = capsys.readouterr().err
    assert "config.json" in err and "'shards'" in err
    assert "__init__" not in err and "RetrievalConfig" not in err and "keyword" not in err
    raw = json.loads(cfg.read_text())
    del raw["shards"]
    cfg.write_text(json.dumps(dict(raw, dim="big")))
    _rehash(idx)
    assert _cli.main(["evaluate", str(data_dir), "--index", str(idx), "--out", str(tmp_path / "ev")]) == 2
    assert "'dim' must be int" in capsys.readouterr().err


# ---------------------------------------------------------------------------- size guard (10^12 refused)
@pytest.mark.parametrize("argv, flag", [
    (["build-index", "{data}", "--out", "{out}", "--steps", "1000000000000"], "--steps"),
    (["build-index", "{data}", "--out", "{out}", "--router-steps", "1000000000000"], "--router-steps"),
    (["train", "{data}", "--index", "{data}", "--out", "{out}", "--sft-steps", "1000000000000"], "--sft-steps"),
    (["train", "{data}", "--index", "{data}", "--out", "{out}", "--dpo-steps", "1000000000000"], "--dpo-steps"),
    (["generate", "--out", "{out}", "--n-train", "1000000000000"], "--n-train"),
])
def test_huge_sizes_are_refused_in_one_line_before_work(data_dir, tmp_path, capsys, argv, flag):
    import time

    argv = [a.format(data=data_dir, out=tmp_path / "o") for a in argv]
    t0 = time.process_time()
    assert _cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "--force" in err and len(err.splitlines()) == 1
    assert time.process_time() - t0 < 2 and not (tmp_path / "o").exists()
