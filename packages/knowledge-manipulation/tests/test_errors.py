"""Bad input (claim 3 of the issue): unknown attributes, empty populations, malformed task specs, bad files
and impossible settings raise ValueError/TypeError naming what was wrong."""

import json

import pytest

from iclr25.knowledge_manipulation import (
    GPTConfig,
    Population,
    TrainConfig,
    build_task,
    make_population,
    parse_task,
    read_people_jsonl,
    render_bio,
)
from iclr25.knowledge_manipulation.biography import attribute_value, render_sentence
from iclr25.knowledge_manipulation.capacity import bits_per_param_rate, bits_per_person
from iclr25.knowledge_manipulation.cli import main
from iclr25.knowledge_manipulation.experiments import ExperimentConfig


@pytest.mark.parametrize("spec, match", [
    ("retrieval", "expected KIND:ATTRIBUTE"),
    ("lookup:birth_city", "KIND one of"),
    ("retrieval:shoe_size", "unknown attribute 'shoe_size'"),
    ("classification:birth_month", "needs a modulus option modM"),
    ("classification:birth_month:mod1", "M >= 2"),
    ("classification:birth_city:mod2", "unknown attribute 'birth_city' for classification"),
    ("comparison:major", "unknown attribute 'major' for comparison"),
    ("retrieval:birth_city:mod2", "unknown options"),
    ("inverse:birth_date+birth_date", "repeated"),
    ("inverse:birth_date+height", "one or more of"),
    ("inverse:birth_date:cot", "no chain-of-thought form"),
])
def test_malformed_task_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_task(spec)


def test_task_spec_type():
    with pytest.raises(TypeError, match="task spec must be a string"):
        parse_task(3)


def test_unknown_attributes():
    pop = make_population(4)
    with pytest.raises(ValueError, match="attribute must be one of"):
        attribute_value(pop.people[0], "shoe_size")
    with pytest.raises(ValueError, match="attribute must be one of"):
        render_bio(pop.people[0], 0, attributes=("birth_city", "shoe_size"))
    with pytest.raises(ValueError, match="template must be in 0..9"):
        render_sentence(pop.people[0], "major", 10)
    with pytest.raises(ValueError, match="order must be"):
        render_bio(pop.people[0], 0, order="backwards")
    with pytest.raises(ValueError, match="qa_attributes must be a non-empty subset"):
        ExperimentConfig(qa_attributes=("height",))
    with pytest.raises(ValueError, match="attributes: unknown"):
        bits_per_person(attributes=("height",))


@pytest.mark.parametrize("n", [0, -3, 1.5, True, 10**9])
def test_bad_population_sizes(n):
    with pytest.raises(ValueError, match="n must be"):
        make_population(n)


def test_empty_populations_and_selections():
    with pytest.raises(ValueError, match="at least one person"):
        Population((), (), ())
    pop = make_population(6)
    with pytest.raises(ValueError, match="people: no one selected"):
        build_task(pop, "retrieval:birth_city", people=[])
    with pytest.raises(ValueError, match="people must be 'train', 'test', 'all'"):
        build_task(pop, "retrieval:birth_city", people="everyone")
    with pytest.raises(ValueError, match="outside 0..5"):
        build_task(pop, "retrieval:birth_city", people=[7])
    with pytest.raises(ValueError, match="comparison needs at least two people"):
        build_task(pop, "comparison:birth_month", people=[0])
    with pytest.raises(ValueError, match="n_pairs must be"):
        build_task(pop, "comparison:birth_month", n_pairs=0)
    with pytest.raises(ValueError, match="n_pairs applies only"):
        build_task(pop, "retrieval:birth_city", n_pairs=3)
    with pytest.raises(ValueError, match="train and test must partition"):
        Population(pop.people, pop.train, pop.train)


def test_bad_configs():
    with pytest.raises(ValueError, match="divisible by n_heads"):
        GPTConfig(vocab_size=10, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="must be even"):
        GPTConfig(vocab_size=10, d_model=12, n_heads=4)
    with pytest.raises(ValueError, match="epochs must be an integer >= 1"):
        TrainConfig(epochs=0)
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        TrainConfig(lr=float("nan"))
    with pytest.raises(ValueError, match="mode must be 'extractable' or 'paper'"):
        ExperimentConfig(mode="open-book")
    with pytest.raises(ValueError, match="replay must be in"):
        ExperimentConfig(replay=1.0)
    with pytest.raises(ValueError, match="unknown attribute"):
        ExperimentConfig(tasks=("retrieval:height",))
    with pytest.raises(ValueError, match="exposures must be"):
        bits_per_param_rate(0)


@pytest.mark.parametrize("content, match", [
    ("", "no people"),
    ("not json\n", "line 1 is not JSON"),
    ("[1, 2]\n", "line 1 is not a JSON object"),
    ('{"first": "A"}\n', "line 1 lacks the fields"),
])
def test_bad_people_files(tmp_path, content, match):
    f = tmp_path / "people.jsonl"
    f.write_text(content)
    with pytest.raises(ValueError, match=match) as info:
        read_people_jsonl(f)
    assert "people.jsonl" in str(info.value)


def test_people_file_needs_both_splits(tmp_path):
    from iclr25.knowledge_manipulation import write_people_jsonl

    f = write_people_jsonl(tmp_path / "p.jsonl", make_population(4))
    rows = [dict(json.loads(x), split="train") for x in f.read_text().splitlines()]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match="both splits"):
        read_people_jsonl(f)


def test_cli_bad_flags_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["generate", "--n", "0", "--out", str(tmp_path / "x.jsonl")])
    assert info.value.code == 2 and "--n must be an integer >= 1" in capsys.readouterr().err
    assert main(["generate", "--n", "5", "--out", str(tmp_path / "x.jsonl"), "--qa", str(tmp_path / "q.jsonl"),
                 "--tasks", "classification:birth_month"]) == 2
    assert "needs a modulus option" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()
    assert main(["eval", "--model", str(tmp_path / "nothing")]) == 2
    assert "--model" in capsys.readouterr().err
    assert main(["eval", "--model", str(tmp_path), "--tasks", "retrieval:height"]) == 2
    assert "unknown attribute 'height'" in capsys.readouterr().err


def test_generate_writes_people_and_qas(tmp_path, capsys):
    out, qa = tmp_path / "bios.jsonl", tmp_path / "qa.jsonl"
    assert main(["generate", "--n", "20", "--out", str(out), "--qa", str(qa), "--tasks",
                 "classification:birth_month:mod2:cot", "inverse:birth_date+birth_city"]) == 0
    assert len(read_people_jsonl(out)) == 20
    rows = [json.loads(x) for x in qa.read_text().splitlines()]
    assert {r["task"] for r in rows} == {"classification:birth_month:mod2:cot", "inverse:birth_date+birth_city"}


@pytest.mark.parametrize("argv, match", [
    (["generate", "--n", "1000000000000", "--out", "{tmp}/x.jsonl"], "--n 1000000000000"),
    (["train", "--n", "1000000000000", "--out", "{tmp}/m"], "--n 1000000000000"),
    (["train", "--epochs", "1000000000000", "--out", "{tmp}/m"], "--epochs 1000000000000"),
    (["train", "--d-model", "100000", "--layers", "100", "--out", "{tmp}/m"], "--d-model 100000"),
    # a batch of every row of the data: its logits alone are hundreds of GiB (was a torch allocation traceback)
    (["train", "--batch-size", "1000000000000", "--out", "{tmp}/m"], "--batch-size 1000000000000"),
    (["eval", "--model", "{tmp}/m", "--epochs", "1000000000000"], "--epochs 1000000000000"),
])
def test_sizes_that_cannot_finish_are_refused_before_work(argv, match, tmp_path, capsys):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and "--force" in err, err
    assert list(tmp_path.iterdir()) == []


def test_torch_allocation_failure_is_one_line(tmp_path, capsys, monkeypatch):
    # after --force the size guard is skipped; torch's failed CPU allocation (a RuntimeError) becomes one line
    from iclr25.knowledge_manipulation import experiments

    def no_memory(*a, **k):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           "memory: you tried to allocate 551740832 bytes. Error code 12")

    monkeypatch.setattr(experiments, "pretrain", no_memory)
    assert main(["train", "--n", "20", "--batch-size", "1000000000000", "--force", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--batch-size 1000000000000" in err and "0.5 GiB" in err, err
    assert not (tmp_path / "m" / "model.pt").exists()


def test_generate_tasks_without_qa_is_refused(tmp_path, capsys):
    # the task specs choose the QAs of --qa: without it they used to be ignored (even a bad one, exit 0)
    for spec, expected in (("bogus", "--tasks: task spec 'bogus': expected KIND:ATTRIBUTE"),
                           ("classification:birth_month", "--tasks: task spec 'classification:birth_month': "
                                                          "classification needs a modulus"),
                           ("classification:birth_month:mod2", "give --qa")):
        assert main(["generate", "--n", "5", "--out", str(tmp_path / "x.jsonl"), "--tasks", spec]) == 2
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1, err  # the bad spec is named, in one line
    assert not (tmp_path / "x.jsonl").exists()


def test_out_is_checked_before_work(tmp_path, capsys):
    people = tmp_path / "people.jsonl"
    assert main(["generate", "--n", "8", "--out", str(people), "--multiplicity", "1"]) == 0
    before = people.read_bytes()
    assert main(["generate", "--n", "8", "--out", str(people)]) == 2
    assert "--out" in capsys.readouterr().err and people.read_bytes() == before
    assert main(["train", "--people", str(people), "--out", str(people)]) == 2
    assert "--out" in capsys.readouterr().err
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.pt").write_text("mine")
    assert main(["train", "--people", str(people), "--out", str(tmp_path / "m")]) == 2
    assert "--overwrite" in capsys.readouterr().err and (tmp_path / "m" / "model.pt").read_text() == "mine"
