import numpy as np
import pytest

from iclr25.overtraining import (
    HiddenProgressMonitor,
    NotSeparableError,
    Recordings,
    TrainConfig,
    example_flips,
    load_recordings,
    make_odour_task,
    normalised_margin,
    svm_margin,
    train_mlp,
)
from iclr25.overtraining.cli import main


def test_non_separable_data_is_refused_by_the_hard_margin_svm():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(NotSeparableError, match="not linearly separable"):
        svm_margin(X, y)
    with pytest.raises(ValueError, match="not linearly separable"):
        normalised_margin(X, y)
    assert np.isnan(normalised_margin(X, y, require_separable=False))


@pytest.mark.parametrize("X, y, match", [
    (np.zeros((4, 2)), np.ones(3), "y must have shape"),
    (np.zeros(4), np.ones(4), "X must be"),
    (np.full((2, 2), np.nan), np.array([1.0, -1.0]), "finite"),
    (np.zeros((3, 2)), np.array([1.0, 2.0, -1.0]), "-1 and \\+1"),
    (np.zeros((3, 2)), np.ones(3), "both classes"),
])
def test_svm_margin_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        svm_margin(X, y)


def test_recordings_shapes_and_day_order():
    R = np.zeros((3, 4, 5))
    L = np.ones((3, 4), dtype=int)
    stim = np.zeros((3, 4), dtype=int)
    with pytest.raises(ValueError, match="strictly increasing"):
        Recordings(R, L, np.array([1, 3, 2]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="labels must have shape"):
        Recordings(R, L[:, :3], np.array([1, 2, 3]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="days must have shape"):
        Recordings(R, L, np.array([1, 2]), stim, np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="responses must be"):
        Recordings(R[0], L, np.array([1, 2, 3]), stim, np.zeros((3, 4), bool))


def test_load_recordings_names_the_file(tmp_path):
    f = tmp_path / "rec.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([2, 1, 3]))
    with pytest.raises(ValueError, match="rec.npz.*strictly increasing"):
        load_recordings(f)


def test_cli_days_out_of_order_exits_2(tmp_path, capsys):
    f = tmp_path / "rec.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([2, 1, 3]))
    assert main(["analyze", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "rec.npz" in err and "strictly increasing" in err
    assert not (tmp_path / "out").exists()


def test_simulate_rejects_a_bad_out(tmp_path, capsys):
    assert main(["simulate", "--out", str(tmp_path / "r.txt")]) == 2
    assert "--out must name a .npz" in capsys.readouterr().err


def test_bad_task_and_training_parameters():
    with pytest.raises(ValueError, match="n_components must be below"):
        make_odour_task(8, 8)
    with pytest.raises(ValueError, match="label_noise"):
        make_odour_task(label_noise=0.7)
    with pytest.raises(ValueError, match="lr must be"):
        TrainConfig(lr=-1.0)
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)
    t = make_odour_task(n_train=20, n_test=10)
    with pytest.raises(ValueError, match="X_test must be"):
        train_mlp(t.X_train, t.y_train, t.X_test[:, :5], t.y_test)


def test_monitor_and_flips_bad_input():
    with pytest.raises(ValueError, match="y_train must have 3 labels"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="given together"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.array([1, -1, 1]), X_test=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="correct must be"):
        example_flips(np.ones(5, bool))
    with pytest.raises(ValueError, match="watch"):
        HiddenProgressMonitor(np.zeros((3, 2)), np.array([1, -1, 1]))(0, object())


def test_messages_name_days_as_numbers_not_numpy_internals(tmp_path, capsys):
    f = tmp_path / "rec.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([2, 49, 49], dtype=np.int64))
    assert main(["analyze", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "day 49 follows 49" in err and "np." not in err, err
    # too few trials of a class on one day: the day is named as written
    R = np.random.default_rng(0).normal(size=(3, 6, 4))
    L = np.array([[1, 1, 1, 1, 1, -1]] * 3)
    g = tmp_path / "few.npz"
    np.savez(g, responses=R, labels=L, days=np.array([3, 49, 50], dtype=np.int64))
    assert main(["analyze", str(g), "--out", str(tmp_path / "out2")]) == 2
    err = capsys.readouterr().err
    assert "day 3 has 1 / 5" in err and "np." not in err, err


def _non_separable_recording(path):
    """Four days: the first two with the class means mixed up (not separable), the last two separable."""
    rng = np.random.default_rng(0)
    D, S, reps, N = 5, 10, 3, 2
    stim = np.tile(np.repeat(np.arange(S), reps), (D, 1))
    labels = np.where(stim % 2 == 0, 1, -1)
    centre = np.where(labels[..., None] > 0, 1.0, -1.0) * np.array([1.0, 0.0])
    jitter = rng.normal(size=(S, N))[stim] * np.array([[[3.0]], [[3.0]], [[0.1]], [[0.1]], [[0.1]]])
    R = centre + jitter + 0.01 * rng.normal(size=(D, S * reps, N))
    np.savez(path, responses=R, labels=labels, days=np.array([1, 2, 5, 9, 20]), stimulus=stim)


def test_analysis_json_is_strict_and_says_which_days_are_not_separable(tmp_path, capsys):
    import json

    f = tmp_path / "rec.npz"
    _non_separable_recording(f)
    assert main(["analyze", str(f), "--out", str(tmp_path / "a"), "--cv", "2", "--permutations", "50",
                 "--reference-day", "0"]) == 0
    out = capsys.readouterr().out
    text = (tmp_path / "a" / "analysis.json").read_text()
    rep = json.loads(text, parse_constant=lambda c: pytest.fail(f"analysis.json holds {c}"))
    assert rep["non_separable_day_indices"] == [0, 1] and rep["non_separable_days"] == [1, 2]
    day0 = rep["per_day"][0]
    assert day0["margin"] is None and "not linearly separable" in day0["null_reasons"]["margin"]
    assert day0["probe_accuracy"] is None and "probe" in day0["null_reasons"]["probe_accuracy"]
    # every day has a margin: the soft-margin signed margin (<= 0) on the non-separable days, flagged
    kinds = [d["margin_kind"] for d in rep["per_day"]]
    assert kinds == ["soft (not separable)"] * 2 + ["hard"] * 3
    sm = [d["signed_margin"] for d in rep["per_day"]]
    assert all(v is not None for v in sm) and sm[0] < 0 and sm[1] < 0 and min(sm[2:]) > 0
    assert [d["signed_margin"] for d in rep["per_day"][2:]] == [d["margin"] for d in rep["per_day"][2:]]
    # the trend uses every day from the reference day and names its measure and the soft days
    t = rep["margin_trend"]
    assert t["day_indices"] == [0, 1, 2, 3, 4] and t["rho"] > 0.5
    assert "soft-margin" in t["measure"] and "(1, 2)" in t["measure"]
    assert "note: 2 of 5 day(s) not linearly separable (no hard margin): day(s) 1, 2" in out
    assert "uses day(s) 1, 2, 5, 9, 20" in out


def test_signed_margin_equals_the_hard_margin_when_separable_and_is_negative_otherwise():
    from iclr25.overtraining import fisher_discriminant, fisher_ridge_share, normalised_margin, signed_margin

    rng = np.random.default_rng(1)
    y = np.repeat([-1.0, 1.0], 20)
    X = rng.normal(size=(40, 5)) + 3.0 * y[:, None] * np.array([1.0, 0, 0, 0, 0])
    sm = signed_margin(X, y)
    assert sm.separable and sm.kind == "hard" and sm.value == normalised_margin(X, y)
    Xo = rng.normal(size=(40, 5)) + 0.3 * y[:, None] * np.array([1.0, 0, 0, 0, 0])
    so = signed_margin(Xo, y)
    assert not so.separable and so.kind == "soft" and so.value < 0
    # more overlap, a more negative signed margin
    assert signed_margin(rng.normal(size=(40, 5)), y).value < signed_margin(Xo + 1.0 * y[:, None], y).value
    # the Fisher ridge share: about 1 with more neurons than examples, small with many examples
    wide = rng.normal(size=(40, 128)) + 0.5 * y[:, None]
    assert fisher_ridge_share(wide, y) > 0.9 and fisher_discriminant(wide, y) > 1e3
    assert fisher_ridge_share(X, y) < 1e-6


def test_a_late_plateau_gives_no_trend_and_says_why():
    from iclr25.overtraining import Recordings, analyze_recordings

    rng = np.random.default_rng(0)
    D, S, reps = 8, 12, 4
    stim = np.tile(np.repeat(np.arange(S), reps), (D, 1))
    labels = np.where(stim % 2 == 0, 1, -1).astype(np.int8)
    R = labels[..., None] * np.array([1.0, 0.0]) + rng.normal(size=(D, S * reps, 2))
    beh = (rng.random(stim.shape) < np.linspace(0.5, 0.99, D)[:, None]).astype(np.int8)
    beh[-1] = 1  # behaviour peaks on the last day only
    rec = Recordings(responses=R, labels=labels, days=np.arange(1, D + 1), stimulus=stim,
                     probe=np.zeros(stim.shape, bool), behaviour=beh)
    res = analyze_recordings(rec, cv=3, n_permutations=50)
    assert res.reference_day == D - 2 and not np.isfinite(res.margin_trend.rho)
    assert any("plateau only on day" in n for n in res.notes())
    assert any("margin trend not computed" in n for n in res.notes())
    assert len(res.signed_margin) == D and np.all(np.isfinite(res.signed_margin))


def test_a_trend_that_cannot_be_computed_says_why(tmp_path, capsys):
    import json

    f = tmp_path / "rec.npz"
    _non_separable_recording(f)
    assert main(["analyze", str(f), "--out", str(tmp_path / "a"), "--cv", "2", "--permutations", "50",
                 "--reference-day", "3"]) == 0
    rep = json.loads((tmp_path / "a" / "analysis.json").read_text())
    assert rep["margin_trend"]["rho"] is None and "at least 3 days" in rep["margin_trend"]["null_reason"]
    assert "margin trend not computed" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["simulate", "--out", "{tmp}/s.npz", "--days", "1000000000000"], "--days 1000000000000"),
    (["simulate", "--out", "{tmp}/s.npz", "--trials", "1000000000000"], "--trials 1000000000000"),
    (["analyze", "{tmp}/r.npz", "--out", "{tmp}/a", "--permutations", "1000000000000"], "--permutations"),
    (["repro", "--out", "{tmp}/rp", "--seeds", "1000000000000"], "--seeds 1000000000000"),
])
def test_sizes_that_cannot_finish_are_refused_before_work(argv, match, tmp_path, capsys):
    np.savez(tmp_path / "r.npz", responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([1, 2, 3]))
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and "--force" in err, err
    assert not any((tmp_path / n).exists() for n in ("s.npz", "a", "rp"))


def test_out_is_checked_before_work(tmp_path, capsys):
    f = tmp_path / "r.npz"
    np.savez(f, responses=np.zeros((3, 4, 5)), labels=np.ones((3, 4)), days=np.array([1, 2, 3]))
    assert main(["simulate", "--out", str(f)]) == 2
    assert "--out" in capsys.readouterr().err and np.load(f)["days"].tolist() == [1, 2, 3]
    assert main(["analyze", str(f), "--out", str(f)]) == 2
    assert "--out" in capsys.readouterr().err
