import csv

import pytest

from iclr25.augood.cli import main
from iclr25.utils.results import RunResult


def _write(path, solubility, n=120):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "SMILES", "logS"])
        for i in range(n):
            w.writerow([i, solubility.smiles[i * 10], solubility.y[i * 10]])


def test_partition_writes_every_row_once(tmp_path, solubility, capsys):
    data = tmp_path / "mols.csv"
    _write(data, solubility)
    assert main(["partition", str(data), "--smiles-col", "SMILES", "--threshold", "0.5"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "mols.partition.csv")))
    assert [int(r["row"]) for r in rows] == list(range(120))
    counts = {s: sum(r["split"] == s for r in rows) for s in ("train", "valid", "test")}
    assert 0.18 * 120 <= counts["test"] <= 0.2 * 120 and counts["train"] > counts["test"]
    assert "viable" in capsys.readouterr().out


def test_evaluate_writes_results(tmp_path, solubility, capsys):
    data = tmp_path / "mols.csv"
    _write(data, solubility)
    out = tmp_path / "eval"
    assert main(["evaluate", str(data), "--smiles-col", "SMILES", "--label-col", "logS", "--models", "ridge,knn",
                 "--thresholds", "0.5,0.7,0.9", "--out", str(out)]) == 0
    run = RunResult.load(out / "results.json")
    assert {"ridge: AU-GOOD", "knn: AU-GOOD", "Wilcoxon p(ridge > knn)"} <= {m.name for m in run.metrics}
    assert "ranking (best first)" in capsys.readouterr().out
    assert main(["evaluate", str(data), "--label-col", "logS", "--thresholds", "0.5:0.2:0.1",
                 "--smiles-col", "SMILES", "--out", str(tmp_path / "bad")]) == 2
    assert "--thresholds" in capsys.readouterr().err and not (tmp_path / "bad" / "results.json").exists()


def test_partition_tie_rule_flag(tmp_path, solubility, capsys):
    from iclr25.augood import ccpart, fingerprints, similarity_matrix

    data = tmp_path / "mols.csv"
    _write(data, solubility)
    smiles = [solubility.smiles[i * 10] for i in range(120)]
    sim = similarity_matrix(fingerprints(smiles), min_threshold=0.5)
    assert (sim.data == 0.5).sum() > 0  # exact ties at λ = 0.5 in this file
    for rule, name in ((">=", "ge.csv"), (">", "gt.csv")):
        assert main(["partition", str(data), "--smiles-col", "SMILES", "--threshold", "0.5", "--tie-rule", rule,
                     "--output", str(tmp_path / name)]) == 0
        rows = list(csv.DictReader(open(tmp_path / name)))
        test = [int(r["row"]) for r in rows if r["split"] == "test"]
        assert test == ccpart(sim, 0.5, tie_rule=rule).test.tolist()
    with pytest.raises(SystemExit) as info:
        main(["partition", str(data), "--smiles-col", "SMILES", "--tie-rule", "=>"])
    assert info.value.code == 2 and "--tie-rule" in capsys.readouterr().err


def test_partition_on_a_local_dask_cluster_equals_one_process(tmp_path, solubility, capsys):
    # issue 59: the similarity matrix's row blocks on a cluster (`--backend dask`: a 2-worker local cluster
    # started by the command) give the same partition as one process
    pytest.importorskip("distributed")
    data = tmp_path / "mols.csv"
    _write(data, solubility)
    outs = {}
    for backend in (None, "dask"):
        out = tmp_path / f"{backend}.csv"
        argv = ["partition", str(data), "--smiles-col", "SMILES", "--threshold", "0.5", "--output", str(out)]
        assert main(argv + (["--backend", backend, "--workers", "2"] if backend else [])) == 0
        outs[backend] = out.read_text()
    assert outs[None] == outs["dask"]
    assert main(["partition", str(data), "--smiles-col", "SMILES", "--address", "tcp://x:1"]) == 2
    assert "--address" in capsys.readouterr().err
