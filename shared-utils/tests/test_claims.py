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
    args = dict(id="c", statement="ours beats the baseline", metric="acc", direction="higher", baseline="prior")
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
    c = Claim("err", statement="s", metric="rel. error", direction="lower", threshold=1e-3)
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
                                      expect="fails", ladder="README.md#ladder"))
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
