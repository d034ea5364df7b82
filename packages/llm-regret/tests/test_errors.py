"""Bad input raises ValueError/TypeError whose message names the argument and what was expected."""

import numpy as np
import pytest

from iclr25.llm_regret import (
    CallableAgent,
    Game,
    Hedge,
    RegretLossConfig,
    loss_sequences,
    play,
    random_zero_sum,
    run_online,
    trend_test,
)
from iclr25.llm_regret.cli import main


@pytest.mark.parametrize("losses, match", [
    (np.full((10, 2), 1.5), r"must lie in \[0, 1"),
    (np.full((10, 2), -0.1), r"must lie in \[0"),
    (np.full((10, 1), 0.5), "d >= 2 actions"),
    (np.array([[0.1, np.nan]] * 4), "NaN or inf"),
    (np.zeros((2, 3, 4, 5)), "shape"),
    (np.array([["a", "b"]]), "real numbers"),
])
def test_bad_losses(losses, match):
    from iclr25.llm_regret.environments import check_losses

    with pytest.raises((ValueError, TypeError), match=match):
        check_losses(losses, B=1.0)


@pytest.mark.parametrize("kw, match", [({"T": 0}, "T must be an integer >= 1"), ({"d": 1}, "d must be"),
                                       ({"n_seeds": -1}, "n_seeds"), ({"B": 0}, "B")])
def test_bad_family_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        loss_sequences("uniform", **{"T": 10, **kw})
    with pytest.raises(ValueError, match="family must be one of"):
        loss_sequences("zigzag", T=10)


def test_non_simplex_policies_are_rejected():
    with pytest.raises(ValueError, match="probability simplex"):
        run_online(CallableAgent(lambda h: np.array([0.7, 0.7])), loss_sequences("uniform", T=5))
    with pytest.raises(ValueError, match="2 entries"):
        run_online(CallableAgent(lambda h: np.array([1.0, 0.0, 0.0])), loss_sequences("uniform", T=5))


def test_bad_games_and_rates():
    with pytest.raises(ValueError, match="agents must have one agent per player"):
        play(random_zero_sum(2, 2), [Hedge()], T=5)
    with pytest.raises(ValueError, match="shape"):
        Game((np.zeros((2, 2)), np.zeros((3, 2))))
    with pytest.raises(ValueError, match="eta must be"):
        run_online(Hedge(eta=-1.0), loss_sequences("uniform", T=5))
    with pytest.raises(ValueError, match="stride"):
        trend_test(np.arange(10.0), stride=20)


@pytest.mark.parametrize("kw, match", [({"d": 1}, "d must be"), ({"head": "cube"}, "head must be"),
                                       ({"lr": -1.0}, "lr must be"), ({"k": -1.0}, "k must be")])
def test_bad_regret_loss_config(kw, match):
    with pytest.raises(ValueError, match=match):
        RegretLossConfig(**kw)


@pytest.mark.parametrize("argv, match", [
    (["run", "--env", "zigzag"], "--env must be one of"),
    (["run", "--agent", "llm"], "needs exactly one of --endpoint"),
    (["run", "--agent", "llm", "--endpoint", "ftp://x", "--model", "m"], "--endpoint must be an http"),
    (["run", "--agent", "llm", "--endpoint", "http://127.0.0.1:9/v1"], "--endpoint needs --model"),
    (["run", "--agent", "hedge", "--replay", "x.jsonl"], "--replay: is an option of --agent llm only"),
    (["run", "--max-tokens", "9", "--temperature", "1"], "--max-tokens, --temperature: are options of --agent llm"),
    (["run", "--agent", "llm", "--replay", "x.jsonl", "--max-tokens", "0"], "--max-tokens must be"),
    (["run", "--agent", "llm", "--replay", "x.jsonl", "--temperature", "-1"], "--temperature must be"),
    (["run", "--agent", "llm", "--replay", "x.jsonl", "--max-parse-failure-rate", "2"],
     "--max-parse-failure-rate must be a fraction"),
    (["run", "--agent", "llm", "--replay", "x.jsonl", "--api-key-env", "K"], "--api-key-env is for --endpoint"),
    (["run", "--agent", "llm", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "A-B"],
     "--api-key-env must name an environment variable"),
    (["run", "--T", "2"], "at least 3 rounds"),
    (["run", "--T", "10", "--stride", "10"], "--stride must be below"),
    (["train-regret-loss", "--k", "-2", "--steps", "1"], "--k must be"),
])
def test_cli_errors_name_the_flag(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err


def test_cli_losses_out_of_range_names_the_file(tmp_path, capsys):
    f = tmp_path / "mine.npy"
    np.save(f, np.full((10, 2), 3.0))
    assert main(["run", "--losses", str(f)]) == 2
    assert "mine.npy" in capsys.readouterr().err


@pytest.mark.parametrize("argv, match", [
    (["run", "--T", "1000000000000"], "--T 1000000000000"),
    (["run", "--seeds", "100000", "--T", "100000"], "of memory"),
    (["run", "--agent", "llm", "--replay", "x.jsonl", "--T", "100000000"], "would take about"),
    (["train-regret-loss", "--steps", "1000000000000"], "--steps 1000000000000"),
])
def test_sizes_that_cannot_finish_are_refused_in_one_line(argv, match, capsys, tmp_path):
    argv = argv + (["--out", str(tmp_path / "o")] if argv[0] == "train-regret-loss" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and "--force" in err, err
    assert not (tmp_path / "o").exists()  # refused before any work: nothing written


@pytest.mark.parametrize("flags", [["--d", "3"], ["--seeds", "5"], ["--T", "50", "--d", "3"]])
def test_losses_file_with_generator_sizes_is_refused(flags, tmp_path, capsys):
    f = tmp_path / "mine.npy"
    np.save(f, np.full((10, 2), 0.5))
    assert main(["run", "--losses", str(f), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "with --losses" in err and flags[-2] in err, err


def test_run_checks_out_before_work(tmp_path, capsys):
    f = tmp_path / "mine.npy"
    np.save(f, np.full((10, 2), 0.5))
    assert main(["run", "--losses", str(f), "--out", str(f)]) == 2
    assert "--out" in capsys.readouterr().err
    (tmp_path / "prev").mkdir()
    (tmp_path / "prev" / "results.json").write_text("{}")
    assert main(["run", "--out", str(tmp_path / "prev"), "--T", "20", "--seeds", "2"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "prev" / "results.json").read_text() == "{}"
