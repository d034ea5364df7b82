import json
import os

import numpy as np
import pytest

from iclr25.utils import _atomic
from iclr25.utils.results import Metric, ResultsError, RunResult


def make_run():
    run = RunResult.start("iclr25-utils", "demo", seed=3, config={"n": np.int64(5), "eps": 0.1})
    run.add("error", np.float64(0.25), peer=0.5, peer_name="GW", higher_is_better=False)
    run.add("time", 1.5, unit="s", timing=True)
    run.add_figure("plan.png")
    return run.finish()


def test_roundtrip(tmp_path):
    run = make_run()
    path = run.save(tmp_path / "sub" / "results.json")
    back = RunResult.load(path)
    assert back.package == "iclr25-utils" and back.seed == 3 and back.config == {"n": 5, "eps": 0.1}
    assert back.metric("error").ratio == pytest.approx(0.5)
    assert back.metric("error").peer_name == "GW"
    assert back.wall_time_s is not None and back.wall_time_s >= 0
    assert back.version != "unknown"  # read from installed metadata
    assert "numpy" in back.versions and back.machine["cpu_count"] >= 1
    assert back.figures == ["plan.png"]
    assert back.comparable_metrics() == {"error": 0.25}


def test_nan_metric_is_recorded_as_missing(tmp_path):
    run = RunResult.start("iclr25-utils", "demo")
    run.add("x", float("nan"))
    back = RunResult.load(run.save(tmp_path / "r.json"))
    assert back.metric("x").value is None
    assert "–" in back.to_markdown()


def test_markdown_table():
    md = make_run().to_markdown()
    assert "| metric | value | peer | peer value | ratio |" in md
    assert "| error ↓ | 0.25 | GW | 0.5 | 0.5 |" in md
    assert "seed 3" in md


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("metrics"), "missing field 'metrics'"),
        (lambda d: d.update(seed="zero"), "field 'seed' has type str"),
        (lambda d: d.update(schema=99), "schema 99"),
        (lambda d: d.update(metrics=[{"value": 1}]), "bad metric"),
    ],
)
def test_load_validates(tmp_path, mutate, message):
    p = make_run().save(tmp_path / "r.json")
    d = json.loads(p.read_text())
    mutate(d)
    p.write_text(json.dumps(d))
    with pytest.raises(ResultsError, match=message) as exc:
        RunResult.load(p)
    assert str(p) in str(exc.value)


def test_load_errors_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such results file"):
        RunResult.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ResultsError, match="not valid JSON"):
        RunResult.load(bad)


def test_metric_type_errors():
    with pytest.raises(TypeError, match="metric 'x' value"):
        Metric("x", "high")
    with pytest.raises(TypeError, match="name"):
        Metric("", 1.0)


def test_save_failing_midway_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "results.json"

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_atomic.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        make_run().save(target)
    assert not target.exists()
    assert os.listdir(tmp_path) == []  # the temporary file is gone too


def test_failed_save_keeps_previous_content(tmp_path):
    target = tmp_path / "results.json"
    make_run().save(target)
    before = target.read_text()
    run = make_run()
    run.config["bad"] = object()  # not serialisable: fails before anything is written
    with pytest.raises(TypeError):
        run.save(target)
    assert target.read_text() == before
    assert sorted(os.listdir(tmp_path)) == ["results.json"]


def test_atomic_write_interrupted_midway(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), _atomic.atomic_write(target) as f:
        f.write("half of the ")
        raise RuntimeError("killed")
    assert not target.exists() and os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="mode"):
        with _atomic.atomic_write(target, "a"):
            pass


def test_atomic_files_get_the_usual_mode(tmp_path):
    import stat

    with _atomic.atomic_write(tmp_path / "a.txt") as f:
        f.write("x")
    with _atomic.atomic_path(tmp_path / "b.bin") as tmp:
        tmp.write_bytes(b"x")
    plain = tmp_path / "c.txt"
    plain.write_text("x")
    expected = stat.S_IMODE(plain.stat().st_mode)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "b.bin").stat().st_mode) == expected


def test_pipes_in_metric_names_do_not_split_markdown_rows():
    from iclr25.utils.results import RunResult

    run = RunResult.start("iclr25-x", "demo", seed=0)
    run.add("max |a - b|", 1.0)
    row = [ln for ln in run.to_markdown().splitlines() if "max" in ln][0]
    assert row.count(" | ") == 1 and "\\|a - b\\|" in row


def test_a_headline_names_its_main_claim_and_a_failed_sanity_check_never_holds(tmp_path):
    from iclr25.utils.cli import write_demo_index
    from iclr25.utils.results import RunResult

    run = RunResult.start("iclr25-utils", "demo")
    m = run.add("ESS-weighted F error", 0.01, peer=0.5, peer_name="autoregressive sampler", higher_is_better=False,
                headline=True, claim="beats-autoregressive", sane=False)
    assert m.holds is False and "FAILED ITS OWN SANITY CHECK" in run.headline_summary()
    assert "(main claim `beats-autoregressive`)" in run.headline_summary()
    again = RunResult.from_dict(run.finish().to_dict())
    assert again.headlines[0].claim == "beats-autoregressive" and again.headlines[0].sane is False
    index = write_demo_index(tmp_path, {"utils": again}).read_text()
    assert "**failed its own sanity check**" in index and "`beats-autoregressive` (claims.json not found" in index
    # the index says what the demos cost on this machine (the root README points there instead of a guess)
    again.wall_time_s = 12.5
    index = write_demo_index(tmp_path, {"utils": again, "other": "failed: no such method"}).read_text()
    assert "1 demo(s) ran in 12 s together (0.2 min; the slowest 12.5 s), one process each" in index
