"""Issue 61's bugs, one test each: k = 1 in the gap rule (and every command that selects with it), an unlabeled
test file refused, replies that are neither yes nor no counted as unparsed (never as following the image), and
a no-retrieval prompt that names no reference reports."""

import json

import numpy as np

from iclr25.mmed_rag.cli import main
from iclr25.mmed_rag.hf import rag_prompt
from iclr25.mmed_rag.selection import gap_select, select_contexts
from iclr25.utils.testing import stub_chat_server

COPY = "copy rate (follows the reports against a contradicting real image, balanced)"


def _metrics(folder):
    return {m["name"]: m["value"] for m in json.loads((folder / "results.json").read_text())["metrics"]}


def test_gap_rule_with_one_context():
    # a (B, 1) row has no gap to measure: the one context is kept (before: argmax of an empty sequence)
    assert gap_select([[0.9], [0.3]], gamma=0.1).k.tolist() == [1, 1]
    assert gap_select([0.9, 0.5, 0.4], gamma=0.1, k_max=1).mask.tolist() == [[True]]
    assert select_contexts([[0.9, 0.2]], rule="gap", k_max=1).k.tolist() == [1]


def test_k1_train_evaluate_ask(data_index, tmp_path):
    data, index = data_index
    model = tmp_path / "model"
    assert main(["train", str(data), "--index", str(index), "--out", str(model), "--sft-steps", "2",
                 "--dpo-steps", "1", "--no-report-pairs", "--k", "1"]) == 0
    assert main(["evaluate", str(data), "--index", str(index), "--out", str(tmp_path / "e"), "--k", "1"]) == 0
    assert _metrics(tmp_path / "e")["mean_k_gap"] == 1.0
    assert main(["evaluate", str(data), "--index", str(index), "--model", str(model), "--out",
                 str(tmp_path / "e2"), "--k", "1"]) == 0
    assert "rag_pt_gap_accuracy" in _metrics(tmp_path / "e2")
    with stub_chat_server("yes") as stub:
        assert main(["ask", str(data), "--index", str(index), "--out", str(tmp_path / "a"), "--endpoint", stub.url,
                     "--model", "m", "--limit", "4", "--k", "1"]) == 0
    assert _metrics(tmp_path / "a")["mean k of the gap rule"] == 1.0


def test_unlabeled_test_file_is_refused(data_index, tmp_path, capsys):
    data, index = data_index
    own = tmp_path / "own"
    own.mkdir()
    with np.load(data / "test.npz") as z:
        np.savez(own / "test.npz", images=z["images"], domains=z["domains"], reports=z["reports"])  # no labels
    for cmd in (["evaluate", str(own), "--index", str(index), "--out", str(tmp_path / "e")],
                ["ask", str(own), "--index", str(index), "--out", str(tmp_path / "a"), "--endpoint",
                 "http://127.0.0.1:9/v1", "--model", "m"]):
        assert main(cmd) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "test.npz" in err and "no 'labels'" in err
        assert not (tmp_path / cmd[5].rsplit("/", 1)[-1] / "results.json").exists()


def test_unparsed_replies_never_follow_the_image(data_index, tmp_path):
    data, index = data_index
    # an endpoint that never answers yes or no: before, it got the best copy rate (0.000)
    with stub_chat_server("I cannot tell from this image.") as stub:
        assert main(["ask", str(data), "--index", str(index), "--out", str(tmp_path / "a"), "--endpoint", stub.url,
                     "--model", "m", "--limit", "48"]) == 0
    m = _metrics(tmp_path / "a")
    assert m["conflict questions"] > 0
    assert m[COPY] is None and m["unreadable replies on the conflict questions"] == 1.0
    assert m["conflict questions answered yes or no (the copy rate's questions)"] == 0.0

    # half the conflict replies unreadable: the copy rate is that of the readable half alone
    from iclr25.mmed_rag.evaluation import _conflict_metrics
    from iclr25.utils.results import RunResult

    run = RunResult.start("iclr25-mmed-rag", "t")
    _conflict_metrics(run, np.array([1, 1, 0, 0]), np.array([1, -1, 0, -1]))  # readable ones follow the reports
    got = {x.name: x.value for x in run.metrics}
    assert got[COPY] == 1.0 and got["unreadable replies on the conflict questions"] == 0.5


def test_no_retrieval_prompt_names_no_reports():
    bare = rag_prompt("is there a nodule ?", [])
    assert "report" not in bare.lower() and "Please choose from [yes, no]" in bare
    full = rag_prompt("is there a nodule ?", ["a report."])
    assert "1 reference report(s): 1. a report." in full and "reference reports cannot be directly used" in full


def test_reference_votes_and_the_strongest_reference():
    from types import SimpleNamespace

    from iclr25.mmed_rag.data import generate
    from iclr25.mmed_rag.experiments import reference_votes, strongest_reference
    from iclr25.mmed_rag.selection import fixed_select

    test = generate(4, seed=3)
    own = SimpleNamespace(reports=[[r] for r in test.reports], selection=fixed_select(np.ones((len(test), 1)), k=1))
    none = SimpleNamespace(reports=[[] for _ in test.reports], selection=own.selection)
    # each image's own report (clean) read back: the vote is always right; the database = the test images: the
    # nearest raw-pixel neighbour (k = 1) is the image itself
    m = reference_votes(test, test, own, none, majority=0, k=1)
    assert m["acc_retrieval_vote_fixed_k"] == 1.0 and m["acc_pixel_nn"] == 1.0
    # no report stated: the vote falls back on the answer prior ("no")
    assert m["acc_retrieval_vote_gap"] == float((test.labels == 0).mean())
    assert strongest_reference({"acc_no_rag": 0.6, "acc_pixel_nn": 0.7, "acc_mmed_rag": 0.9}) == ("acc_pixel_nn", 0.7)
