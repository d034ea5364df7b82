import json
import math

import pytest

from iclr25.utils.claims import (
    TABLE_BEGIN,
    TABLE_END,
    Claim,
    ClaimRegistry,
    Measurement,
    decide,
    load_report,
    render_table,
    replace_table,
    t_quantile_975,
)


def base(**kw):
    args = dict(id="c", statement="ours beats the baseline", metric="acc", direction="higher", baseline="prior",
                kind="main")
    args.update(kw)
    return Claim(**args)


def test_claim_validation_names_the_field():
    with pytest.raises(ValueError, match="direction"):
        base(direction="up")
    with pytest.raises(ValueError, match="exactly one of baseline"):
        base(threshold=0.5)
    with pytest.raises(ValueError, match="min_seeds"):
        base(min_seeds=2)
    with pytest.raises(ValueError, match="ladder"):
        base(expect="fails")
    with pytest.raises(ValueError, match="rule"):
        base(rule="best_seed")
    with pytest.raises(ValueError, match="kind must be one of"):
        base(kind="")
    with pytest.raises(ValueError, match="kind must be one of"):
        base(kind="headline")


def test_every_seed_rule_fails_on_one_bad_seed():
    c = base(margin=0.05)
    ok = {s: Measurement(0.9, reference=0.5) for s in range(3)}
    assert decide(c, ok).holds
    bad = {**ok, 2: Measurement(0.52, reference=0.5)}  # beats the prior, not by the margin
    r = decide(c, bad)
    assert not r.holds and r.holds_per_seed == (True, True, False)
    assert "seed 2" in r.explain() and "fails" in r.explain()


def test_mean_ci_rule_uses_the_t_interval():
    c = base(rule="mean_ci")
    # improvements 0.1, 0.2, 0.3: mean 0.2, sd 0.1, half-width 4.303 * 0.1 / sqrt(3) = 0.248 -> lower < 0
    r = decide(c, {0: Measurement(0.6, 0.5), 1: Measurement(0.7, 0.5), 2: Measurement(0.8, 0.5)})
    assert math.isclose(r.mean_improvement, 0.2) and math.isclose(r.ci[0], 0.2 - 4.303 * 0.1 / math.sqrt(3))
    assert not r.holds and all(r.holds_per_seed)
    tight = {s: Measurement(0.7 + 0.001 * s, 0.5) for s in range(5)}
    assert decide(c, tight).holds


def test_lower_is_better_and_thresholds():
    c = Claim("err", statement="s", metric="rel. error", direction="lower", threshold=1e-3, kind="secondary")
    assert decide(c, {0: 1e-4, 1: 5e-4, 2: 9e-4}).holds
    assert not decide(c, {0: 1e-4, 1: 5e-4, 2: 2e-3}).holds
    assert not decide(c, {0: 1e-4, 1: float("nan"), 2: 1e-4}).holds


def test_too_few_seeds_and_missing_reference_are_errors():
    with pytest.raises(ValueError, match="at least 3 seeds"):
        decide(base(), {0: Measurement(1, 0), 1: Measurement(1, 0)})
    with pytest.raises(ValueError, match="reference"):
        decide(base(), {0: 1.0, 1: 1.0, 2: 1.0})


def test_t_quantiles():
    assert t_quantile_975(1) == 12.706 and t_quantile_975(4) == 2.776 and t_quantile_975(100) == 1.96


def test_registry_measures_once_per_seed_and_writes_strict_json(tmp_path, capsys):
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})
    calls = []

    @reg.measures(base(id="a"), Claim("b", statement="s", metric="err", direction="lower", threshold=1.0,
                                      expect="fails", ladder="README.md#ladder", kind="sanity"))
    def _m(seed, rung):
        calls.append((seed, rung))
        return {"a": Measurement(0.9, reference=0.5), "b": 2.0 + seed}

    report = reg.run("test")
    assert calls == [(0, "test"), (1, "test"), (2, "test")]
    assert [r.holds for r in report.results] == [True, False] and not report.unexpected()
    path = report.save(tmp_path)
    data = load_report(path)
    assert data["claims"][1]["values"] == [2.0, 3.0, 4.0] and data["claims"][0]["verdict"] == "holds"
    table = render_table(data)
    assert "| **a**: ours beats the baseline |" in table and "[ladder](README.md#ladder)" in table
    readme = f"# x\n\n{TABLE_BEGIN}\nstale table\n{TABLE_END}\n"
    new = replace_table(readme, table)
    assert table in new and "stale table" not in new and replace_table(new, table) == new
    with pytest.raises(ValueError, match="unknown rung"):
        reg.run("full")
    (tmp_path / "pub").mkdir()
    assert report.publish(tmp_path / "pub") == tmp_path / "pub" / "claims.json"
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == f"wrote {tmp_path / 'pub' / 'claims.json'}" and sum("claim" in x for x in printed) >= 2


def test_report_with_nan_or_few_seeds_is_rejected(tmp_path):
    p = tmp_path / "claims.json"
    p.write_text('{"schema": 1, "claims": [{"id": "x", "seeds": [0, 1, 2], "values": [NaN]}]}')
    with pytest.raises(ValueError, match="NaN"):
        load_report(p)
    p.write_text(json.dumps({"schema": 1, "claims": [{"id": "x", "seeds": [0, 1]}]}))
    with pytest.raises(ValueError, match="2 seeds"):
        load_report(p)


def test_pytest_test_reports_the_seeds_on_failure():
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="a"))
    def _m(seed, rung):
        return {"a": Measurement(0.9 if seed else 0.1, reference=0.5)}

    fn = reg.pytest_test("test")
    with pytest.raises(AssertionError, match="seed 0"):
        fn("a")


def test_a_claim_can_be_left_to_the_repro_rung():
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3)})

    @reg.measures(base(id="cheap"), base(id="costly", rungs=("repro",)))
    def _m(seed, rung):
        return {"cheap": Measurement(0.9, reference=0.5), "costly": Measurement(0.8, reference=0.5)}

    assert reg.claims_at("test") == ["cheap"] and reg.claims_at("repro") == ["cheap", "costly"]
    assert [r.claim.id for r in reg.run("test").results] == ["cheap"]
    assert len(reg.run("repro").results[1].seeds) == 4
    with pytest.raises(ValueError, match="rungs"):
        base(rungs="repro")


def test_claims_json_keeps_per_seed_extras_and_the_cpu_model():
    from iclr25.utils.claims import ClaimsReport

    c = base()
    ms = {s: Measurement(0.9, 0.5, extra={"ess": 0.1 * (s + 1), "bad": float("nan")}) for s in range(3)}
    r = decide(c, ms)
    d = r.to_dict()
    assert d["extra"][2]["ess"] == pytest.approx(0.3) and d["extra"][0]["bad"] is None
    assert "extra" not in decide(c, {s: Measurement(0.9, 0.5) for s in range(3)}).to_dict()
    report = ClaimsReport("x", "0.1", "test", [r]).to_dict()
    assert isinstance(report["machine"]["cpu"], str)


def test_seed_free_claims_are_decided_once_and_say_so():
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})
    calls = []

    @reg.measures(base(id="exact", seed_free=True))
    def _m(seed, rung):
        calls.append(seed)
        return {"exact": Measurement(0.9, reference=0.5)}

    r = reg.run("test").results[0]
    assert calls == [0] and r.seeds == (0,) and r.holds and r.ci == (0.4, 0.4) or math.isclose(r.ci[0], 0.4)
    table = render_table(reg.run("test").to_dict())
    assert "seed-free: decided once" in table


def test_a_short_readme_table_keeps_the_main_claims_and_links_moved_ladders():
    # issue 66: the README shows its main claims, says where the rest are; a ladder moved to EVIDENCE.md links there
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="m", kind="main", expect="fails", ladder="README.md#l"), base(id="s", kind="sanity"))
    def _m(seed, rung):
        return {"m": Measurement(0.4, reference=0.5), "s": Measurement(0.9, reference=0.5)}

    data = reg.run("test").to_dict()
    short = render_table(data, kinds=("main",), ladder_link=lambda x: x.replace("README", "EVIDENCE"),
                         more="The rest: EVIDENCE.md.")
    assert "**m**" in short and "**s**" not in short and "sanity: 1 of 1" in short and "The rest: EVIDENCE.md." in short
    assert "([ladder](EVIDENCE.md#l))" in short
    assert "**s**" in render_table(data) and "([ladder](README.md#l))" in render_table(data)


def test_a_dead_measurement_never_holds_and_a_dead_declared_fail_fails_its_test():
    c = base(margin=0.0)
    ms = {s: Measurement(0.9, 0.5, alive=s != 1) for s in range(3)}
    r = decide(c, ms)
    assert not r.holds and r.holds_per_seed == (True, False, True) and "sanity check at seed(s) [1]" in r.dead_reason
    assert not decide(base(rule="mean_ci"), ms).holds
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="f", expect="fails", ladder="README.md#l"), base(id="g", expect="fails", ladder="x"))
    def _m(seed, rung):  # f: the method answers the trivial reference; g: it fails honestly
        return {"f": Measurement(0.5, reference=0.5), "g": Measurement(0.4 + 0.01 * seed, reference=0.5)}

    fn = reg.pytest_test("test")
    with pytest.raises(AssertionError, match="not alive: the value equals the prior at every seed"):
        fn("f")
    fn("g")
    assert decide(base(), {s: Measurement(float("nan"), 0.5) for s in range(3)}).dead_reason.startswith("the value is not")


def test_max_margin_every_seed_and_mean_ci():
    from statistics import NormalDist

    from iclr25.utils.claims import max_margin

    imp = [1.0, 1.2, 0.8, 1.1, 0.9]
    sd = 0.15811388300841897
    assert math.isclose(max_margin("every_seed", imp, 3), 1.0 - NormalDist().inv_cdf(0.95 ** (1 / 3)) * sd)
    # more decision seeds: each must clear it, so the margin shrinks
    assert max_margin("every_seed", imp, 5) < max_margin("every_seed", imp, 3)
    # mean_ci: the lower end of a t interval at 3 seeds is wide; at 10 seeds tighter
    assert 0 < max_margin("mean_ci", imp, 3) < max_margin("mean_ci", imp, 10) < 1.0
    assert math.isclose(max_margin("every_seed", [0.2, 0.2, 0.2], 3), 0.2)
    with pytest.raises(ValueError, match="finite"):
        max_margin("every_seed", [1.0, float("nan")], 3)


def test_calibration_seeds_are_disjoint_and_calibrate_says_which_margins_are_allowed(tmp_path):
    from iclr25.utils.claims import check_calibration

    with pytest.raises(ValueError, match="overlap its decision seeds"):
        ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)}, calibration={"test": range(2, 12)})
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})
    assert reg.calibration_seeds("test") == tuple(range(100, 110))

    @reg.measures(base(id="robust", margin=0.1), base(id="tuned", margin=0.38),
                  base(id="off", expect="fails", ladder="x", kind="secondary"))
    def _m(seed, rung):  # improvement 0.4 +- 0.05 by seed
        d = 0.4 + 0.05 * ((seed * 7919) % 5 - 2) / 2
        return {"robust": Measurement(0.5 + d, 0.5), "tuned": Measurement(0.5 + d, 0.5), "off": Measurement(0.4, 0.5)}

    cal = reg.calibrate("test")
    by = {e["id"]: e for e in cal.claims}
    assert by["robust"]["ok"] and not by["tuned"]["ok"] and by["off"]["ok"]
    assert cal.uncalibrated() == ["tuned"] and "NOT CALIBRATED" in cal.explain()
    path = cal.save(tmp_path)
    assert path.name == "claims-calibration.json"
    data = json.loads(path.read_text())
    assert [p for p in check_calibration(data) if "tuned" in p]
    data["claims"][0]["improvements"][0] = 9.0  # edited by hand
    assert any("never edited by hand" in p for p in check_calibration(data))
    with pytest.raises(ValueError, match="decision seeds"):
        reg.calibrate("test", [0, 5, 6])


def test_fresh_seeds_are_new_reproducible_and_recorded():
    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="a"))
    def _m(seed, rung):
        return {"a": Measurement(0.9, reference=0.5)}

    s1 = reg.fresh_seeds("test", version="1.0", date="2026-12-05")
    assert len(s1) == 3 and min(s1) >= 1000 and s1 == reg.fresh_seeds("test", version="1.0", date="2026-12-05")
    assert s1 != reg.fresh_seeds("test", version="1.0", date="2026-12-06")
    rep = reg.run("test", s1, seeds_from="fresh").to_dict()
    assert rep["seeds_from"] == "fresh" and rep["claims"][0]["seeds"] == list(s1)


def _committed(tmp_path, reg, rung="repro"):
    rep = reg.run(rung)
    rep.save(tmp_path)
    reg.calibrate("test").save(tmp_path)
    return json.loads((tmp_path / "claims.json").read_text())


def test_committed_files_are_checked_against_values_registry_and_version(tmp_path):
    from iclr25.utils.claims import check_report

    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3)})

    @reg.measures(base(id="a", margin=0.1), base(id="f", expect="fails", ladder="README.md#l", kind="secondary"))
    def _m(seed, rung):
        return {"a": Measurement(0.9 + 0.01 * (seed % 3), 0.5), "f": Measurement(0.4 + 0.01 * seed, 0.5)}

    data = _committed(tmp_path, reg)
    assert check_report(data, version=data["version"]) == []
    assert reg.committed_problems(tmp_path) == []
    reg.pytest_committed_test(tmp_path)()
    assert any("version" in p for p in check_report(data, version="99.0"))
    edited = json.loads(json.dumps(data))
    edited["claims"][0]["values"][1] = 0.55  # a value edited, the verdict kept
    assert any("never edited by hand" in p for p in check_report(edited))
    flipped = json.loads(json.dumps(data))
    flipped["claims"][1]["expect"] = "holds"
    assert any("expects it holds" in p for p in check_report(flipped))
    assert any("test rung" in p for p in check_report({**data, "rung": "test"}))
    assert "schema" in check_report({**data, "schema": 1})[0]
    # the registry changed after the files were written: a margin, a kind
    reg.claims["a"] = base(id="a", margin=0.2)
    probs = reg.committed_problems(tmp_path)
    assert any("margin" in p and "claims.json" in p for p in probs) and any("calibrated with margin" in p for p in probs)
    (tmp_path / "claims-calibration.json").unlink()
    assert any("--calibrate" in p for p in reg.committed_problems(tmp_path))


def test_table_leads_with_main_claims_and_counts_kinds():
    from iclr25.utils.claims import kind_counts

    reg = ClaimRegistry("iclr25-utils", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="s", kind="sanity"), base(id="m"), base(id="m2", margin=1.0),
                  base(id="x", kind="secondary"))
    def _m(seed, rung):
        return {k: Measurement(0.9, 0.5 - 0.01 * seed) for k in ("s", "m", "m2", "x")}

    data = reg.run("test").to_dict()
    table = render_table(data)
    rows = [r for r in table.splitlines() if r.startswith("| ") and "**" in r]
    assert [r.split("|")[1].strip() for r in rows] == ["main", "main", "secondary", "sanity"]
    assert kind_counts(data["claims"]) == "main: 1 of 2 hold; secondary: 1 of 1; sanity: 1 of 1"
    assert "**main: 1 of 2 hold; secondary: 1 of 1; sanity: 1 of 1.**" in table


def test_umbrella_claims_fresh_calibrate_and_one_line_errors(tmp_path, capsys, monkeypatch):
    import sys
    import types

    from iclr25.utils import cli as ucli

    reg = ClaimRegistry("iclr25-toyclaims", seeds={"test": (0, 1, 2)})

    @reg.measures(base(id="a", margin=0.1))
    def _m(seed, rung):
        if seed == 7:
            raise RuntimeError("no checkpoint for seed 7")
        return {"a": Measurement(0.9 + 0.001 * (seed % 5), 0.5)}

    mod = types.ModuleType("iclr25.toyclaims.claims")
    mod.REGISTRY = reg
    monkeypatch.setitem(sys.modules, "iclr25.toyclaims", types.ModuleType("iclr25.toyclaims"))
    monkeypatch.setitem(sys.modules, "iclr25.toyclaims.claims", mod)
    methods = [ucli.MethodEntry("toyclaims", "iclr25-toyclaims", "0.1.0", "", None)]
    assert ucli._cmd_claims(methods, "toyclaims", "test", None, tmp_path, None, mode="fresh") == 0
    fresh = json.loads((tmp_path / "claims-fresh.json").read_text())
    assert fresh["seeds_from"] == "fresh" and min(fresh["claims"][0]["seeds"]) >= 1000
    assert "fresh seeds for iclr25-toyclaims" in capsys.readouterr().out
    assert ucli._cmd_claims(methods, "toyclaims", "test", "100-104", tmp_path, None, mode="calibrate") == 0
    cal = json.loads((tmp_path / "claims-calibration.json").read_text())
    assert cal["seeds"] == [100, 101, 102, 103, 104] and cal["claims"][0]["ok"]
    assert not (tmp_path / "claims.json").exists()
    capsys.readouterr()
    assert ucli._cmd_claims(methods, "toyclaims", "test", "5,6,7", None, None) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: no checkpoint for seed 7" in err and "Traceback" not in err
    assert ucli._cmd_claims(methods, "toyclaims", "test", "1,2", None, None, mode="fresh") == 2


def test_repro_only_claims_calibrate_one_at_a_time_into_the_rungs_file(tmp_path, capsys, monkeypatch):
    """``--calibrate --rung repro --only ID`` writes claims-calibration-repro.json, keeps the other claims' entries,
    and a repro-only claim missing from it is reported by ``uncalibrated`` (warned by the committed test)."""
    import sys
    import types
    import warnings

    from iclr25.utils import cli as ucli
    from iclr25.utils.claims import calibration_file, check_calibration, load_calibration

    reg = ClaimRegistry("iclr25-toyrepro", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4)})

    @reg.measures(base(id="t", margin=0.1), base(id="r1", margin=0.1, rungs=("repro",)),
                  base(id="r2", margin=0.1, rungs=("repro",)))
    def _m(seed, rung):
        d = 0.4 + 0.01 * (seed % 3)
        return {k: Measurement(0.5 + d, 0.5) for k in ("t", "r1", "r2")}

    mod = types.ModuleType("iclr25.toyrepro.claims")
    mod.REGISTRY = reg
    monkeypatch.setitem(sys.modules, "iclr25.toyrepro", types.ModuleType("iclr25.toyrepro"))
    monkeypatch.setitem(sys.modules, "iclr25.toyrepro.claims", mod)
    methods = [ucli.MethodEntry("toyrepro", "iclr25-toyrepro", "0.1.0", "", None)]
    reg.version = lambda: "0.1.0"  # type: ignore[method-assign]
    reg.run("repro").save(tmp_path)
    assert ucli._cmd_claims(methods, "toyrepro", "test", None, tmp_path, None, mode="calibrate") == 0
    assert calibration_file("repro") == "claims-calibration-repro.json"
    assert [line.split("'")[1] for line in reg.uncalibrated(tmp_path)] == ["r1", "r2"]
    assert ucli._cmd_claims(methods, "toyrepro", "repro", "100-104", tmp_path, None, mode="calibrate",
                            only="r1") == 0
    cal = load_calibration(tmp_path / "claims-calibration-repro.json")
    assert [e["id"] for e in cal["claims"]] == ["r1"] and cal["n_decide"] == 5 and check_calibration(cal) == []
    assert "--only r1" in cal["command"]
    assert ucli._cmd_claims(methods, "toyrepro", "repro", "105-107", tmp_path, None, mode="calibrate",
                            only="r2") == 0
    cal = load_calibration(tmp_path / "claims-calibration-repro.json")
    assert [e["id"] for e in cal["claims"]] == ["r1", "r2"] and cal["seeds"] == list(range(100, 108))
    assert check_calibration(cal) == [] and reg.committed_problems(tmp_path) == []
    assert reg.uncalibrated(tmp_path) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg.pytest_committed_test(tmp_path)()
    capsys.readouterr()
    # calibrating r1 again at new seeds joins them to its entry (max margin over all 8 seeds, as one run gives);
    # at seeds it already has, the new entry replaces it
    assert ucli._cmd_claims(methods, "toyrepro", "repro", "108-110", tmp_path, None, mode="calibrate",
                            only="r1") == 0
    assert "r1: joined with the seeds already in claims-calibration-repro.json (8 seeds in all)" in \
        capsys.readouterr().out
    cal = load_calibration(tmp_path / "claims-calibration-repro.json")
    r1 = next(e for e in cal["claims"] if e["id"] == "r1")
    once = reg.calibrate("repro", [100, 101, 102, 103, 104, 108, 109, 110], only=["r1"]).claims[0]
    assert {k: r1[k] for k in once} == once and check_calibration(cal) == []
    assert ucli._cmd_claims(methods, "toyrepro", "repro", "100-102", tmp_path, None, mode="calibrate",
                            only="r1") == 0
    r1 = next(e for e in load_calibration(tmp_path / "claims-calibration-repro.json")["claims"] if e["id"] == "r1")
    assert r1["seeds"] == [100, 101, 102]
    # errors: an unknown id, --only without --calibrate; each one line
    assert ucli._cmd_claims(methods, "toyrepro", "repro", None, tmp_path, None, mode="calibrate", only="nope") == 2
    assert ucli._cmd_claims(methods, "toyrepro", "repro", None, tmp_path, None, only="r1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--only" in err and "Traceback" not in err
    # the calibration-repro files of utils <= 0.9 (a list of one-claim reports) still read and check
    legacy = {"kind": "calibration-repro", "reports": [
        reg.calibrate("repro", range(100, 105), only=["r1"]).to_dict(),
        reg.calibrate("repro", range(100, 110), only=["r2"]).to_dict()]}
    (tmp_path / "claims-calibration-repro.json").write_text(json.dumps(legacy))
    cal = load_calibration(tmp_path / "claims-calibration-repro.json")
    assert [e["id"] for e in cal["claims"]] == ["r1", "r2"] and check_calibration(cal) == []
    assert reg.committed_problems(tmp_path) == [] and reg.uncalibrated(tmp_path) == []


def test_paper_rung_estimate_refusal_force_smoke_and_device(tmp_path, capsys, monkeypatch):
    """The paper rung (issue 59): ``--estimate`` prints its cost, a CPU-only machine refuses it unless ``--force``,
    ``--smoke`` runs its code once shrunk (``smoke_run()``), ``--device`` reaches the measuring code."""
    import os
    import sys
    import types

    from iclr25.utils import cli as ucli
    from iclr25.utils.claims import RungCost, smoke_run
    from iclr25.utils.device import DEVICE_ENV, default_device

    monkeypatch.delenv("ICLR25_SMOKE", raising=False)
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    with pytest.raises(ValueError, match="gpu_hours > 0"):
        RungCost(0, 10, "1 H100", "x")
    with pytest.raises(ValueError, match="gpu_hours > 0"):
        RungCost(1, 10, "1 H100", "x", cpu_hours=3)
    with pytest.raises(ValueError, match="memory_gb must be a positive"):
        RungCost(1, 0, "1 H100", "x")
    cpu_cost = RungCost(0, 8, "a 32-core node", "1M images", cpu_hours=40)
    assert not cpu_cost.needs_accelerator and "40 CPU core-hours per seed (80 for its 2" in cpu_cost.explain("p", 2)
    with pytest.raises(ValueError, match="unknown rung"):
        ClaimRegistry("iclr25-toypaper", seeds={"test": (0, 1, 2)}, costs={"paper": RungCost(1, 2, "h", "w")})
    cost = RungCost(12.5, 70, "one 80 GB GPU", "the paper's 7B model, 3 epochs", data="GEOM-drugs on your disk")
    reg = ClaimRegistry("iclr25-toypaper", seeds={"test": (0, 1, 2), "paper": (0, 1, 2)}, costs={"paper": cost})
    seen = []

    @reg.measures(base(id="a", margin=0.1))
    def _m(seed, rung):
        seen.append((seed, rung, smoke_run(), default_device()))
        return {"a": Measurement(0.9, 0.5)}

    mod = types.ModuleType("iclr25.toypaper.claims")
    mod.REGISTRY = reg
    monkeypatch.setitem(sys.modules, "iclr25.toypaper", types.ModuleType("iclr25.toypaper"))
    monkeypatch.setitem(sys.modules, "iclr25.toypaper.claims", mod)
    monkeypatch.setattr("iclr25.utils.device.accelerator_present", lambda: False)
    methods = [ucli.MethodEntry("toypaper", "iclr25-toypaper", "0.1.0", "", None)]
    assert ucli._cmd_claims(methods, "toypaper", "paper", None, None, None, mode="estimate") == 0
    out = capsys.readouterr().out
    assert "12.5 GPU-hours per seed (37.5 for its 3 seed(s)) on one 80 GB GPU" in out and "GEOM-drugs" in out
    assert ucli._cmd_claims(methods, "toypaper", "test", None, None, None, mode="estimate") == 2
    assert "no cost for rung 'test'" in capsys.readouterr().err
    assert ucli._cmd_claims(methods, "toypaper", "paper", None, tmp_path, None) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "meant for an accelerator" in err and "--force" in err and not seen
    assert ucli._cmd_claims(methods, "toypaper", "paper", None, None, None, mode="smoke") == 0
    assert seen == [(0, "paper", True, "auto")] and "smoke run" in capsys.readouterr().out
    monkeypatch.delenv("ICLR25_SMOKE")
    seen.clear()
    assert ucli._cmd_claims(methods, "toypaper", "paper", None, tmp_path, None, force=True, device="cpu") == 0
    assert [s[2:] for s in seen] == [(False, "cpu")] * 3 and (tmp_path / "claims.json").is_file()
    assert os.environ[DEVICE_ENV] == "cpu"
    capsys.readouterr()
    # a CPU paper rung (numpy methods) is refused without --force even where an accelerator is present
    monkeypatch.setattr("iclr25.utils.device.accelerator_present", lambda: True)
    reg.costs["paper"] = cpu_cost
    assert ucli._cmd_claims(methods, "toypaper", "paper", None, tmp_path, None) == 2
    assert "runs at the paper's scale on CPU cores" in capsys.readouterr().err
    reg.costs["paper"] = cost
    assert ucli._cmd_claims(methods, "toypaper", "test", None, None, None, device="gpu") == 2
    assert ucli._cmd_claims(methods, "toypaper", "nope", None, None, None) == 2
    assert ucli._cmd_claims(methods, "toypaper", "paper", "0", None, None, mode="smoke") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "--device must be" in err and "--rung" in err and "Traceback" not in err


_TOY_MODULE = '''
import os
from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

REGISTRY = ClaimRegistry("iclr25-toypar", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3)})


@REGISTRY.measures(Claim("a", kind="main", statement="s", metric="m", direction="higher", baseline="b"),
                   Claim("b", kind="sanity", statement="s", metric="m", direction="higher", threshold=0.0))
def _m(seed, rung):
    return {"a": Measurement(1.0 + seed, 0.5, extra={"pid": os.getpid()}), "b": float(seed + 1)}
'''


def _toy_package(tmp_path, monkeypatch) -> None:
    """``iclr25.toypar`` (its ``claims.py`` is ``_TOY_MODULE``) importable here and in worker processes, freshly
    imported (no registry cache left from an earlier run)."""
    import os
    import sys

    site = tmp_path / "site"
    pkg = site / "iclr25" / "toypar"
    if not pkg.is_dir():
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "claims.py").write_text(_TOY_MODULE)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    import iclr25

    if str(site / "iclr25") not in iclr25.__path__:
        monkeypatch.setattr(iclr25, "__path__", [*iclr25.__path__, str(site / "iclr25")])
    for m in [m for m in sys.modules if m.startswith("iclr25.toypar")]:
        monkeypatch.delitem(sys.modules, m)


@pytest.mark.parametrize("backend", ["local", "dask", "ray"])
def test_claims_seeds_in_parallel_on_local_dask_and_ray(tmp_path, monkeypatch, capsys, backend):
    """``iclr25 claims --backend {local,dask,ray}`` measures the seeds in worker processes (a local Dask cluster
    and a local Ray started by the command) and writes the same claims.json as one process does."""
    import os
    import sys

    from iclr25.utils import cli as ucli

    pytest.importorskip({"local": "joblib", "dask": "distributed", "ray": "ray"}[backend])
    _toy_package(tmp_path, monkeypatch)
    methods = [ucli.MethodEntry("toypar", "iclr25-toypar", "0.1.0", "", None)]
    serial, par = tmp_path / "serial", tmp_path / "par"
    assert ucli._cmd_claims(methods, "toypar", "repro", None, serial, None) == 0
    for m in [m for m in sys.modules if m.startswith("iclr25.toypar")]:
        monkeypatch.delitem(sys.modules, m)
    assert ucli._cmd_claims(methods, "toypar", "repro", None, par, None, backend=backend, workers=2) == 0
    assert f"measured 4 seed task(s) on --backend {backend}" in capsys.readouterr().out
    a, b = (json.loads((d / "claims.json").read_text()) for d in (serial, par))
    for ca, cb in zip(a["claims"], b["claims"], strict=True):
        assert (ca["values"], ca["verdict"]) == (cb["values"], cb["verdict"])
    pids = {x["pid"] for x in b["claims"][0]["extra"]} if "extra" in b["claims"][0] else set()
    assert os.getpid() not in pids
    assert ucli._cmd_claims(methods, "toypar", "repro", None, None, None, backend="local",
                            address="tcp://x:1") == 2


@pytest.mark.parametrize("backend", ["local", "dask"])
def test_every_repro_runs_its_seeds_on_a_backend(tmp_path, monkeypatch, capsys, backend):
    """``iclr25 <slug> repro --backend {local,dask}`` (every package's repro, from ``method_commands``) measures
    the registry's repro seeds in worker processes first, and the reproduction then decides the same claims as
    a run without ``--backend``; a package that adds the options itself keeps them; no registry is one line."""
    import os

    from iclr25.utils import cli as ucli

    pytest.importorskip({"local": "joblib", "dask": "distributed"}[backend])

    def repro(args):
        from iclr25.toypar.claims import REGISTRY

        REGISTRY.run("repro").publish(args.out)
        return 0

    outs = {}
    for label, extra in (("serial", []), ("par", ["--backend", backend, "--workers", "2"])):
        _toy_package(tmp_path, monkeypatch)
        parser, *_ = ucli.method_commands("toypar", "toy", demo="os:getcwd", demo_help="d", repro=repro,
                                          repro_help="r")
        outs[label] = tmp_path / label
        outs[label].mkdir()
        args = parser.parse_args(["repro", "--out", str(outs[label]), *extra])
        assert args.func(args) == 0
    assert f"measured 4 repro seed task(s) on --backend {backend}" in capsys.readouterr().out
    a, b = (json.loads((outs[k] / "claims.json").read_text()) for k in ("serial", "par"))
    for ca, cb in zip(a["claims"], b["claims"], strict=True):
        assert (ca["values"], ca["verdict"]) == (cb["values"], cb["verdict"])
    assert os.getpid() not in {x["pid"] for x in b["claims"][0]["extra"]}
    assert os.getpid() in {x["pid"] for x in a["claims"][0]["extra"]}
    # a package whose repro takes --backend itself (pgw) keeps it: nothing is measured before its handler
    parser, _, _, rp = ucli.method_commands("toypar", "toy", demo="os:getcwd", demo_help="d", repro=lambda a: 0,
                                            repro_help="r")
    from iclr25.utils.parallel import add_backend_arguments

    add_backend_arguments(rp)
    args = parser.parse_args(["repro", "--out", str(tmp_path / "own"), "--backend", backend])
    assert args.func(args) == 0 and "measured" not in capsys.readouterr().out
    # no registry: one line naming --backend
    parser, *_ = ucli.method_commands("nosuchpkg", "toy", demo="os:getcwd", demo_help="d", repro=lambda a: 0,
                                      repro_help="r")
    args = parser.parse_args(["repro", "--out", str(tmp_path / "none"), "--backend", "local"])
    with pytest.raises(ValueError, match="^--backend: iclr25 nosuchpkg repro has no claims registry"):
        args.func(args)
    for bad, says in ((["--address", "tcp://x:1"], "^--address names a cluster"), (["--workers", "2"], "^--workers is")):
        args = parser.parse_args(["repro", "--out", str(tmp_path / "none"), *bad])
        with pytest.raises(ValueError, match=says):
            args.func(args)
