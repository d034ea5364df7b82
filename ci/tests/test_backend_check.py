"""``ci/backend_check.py``: a serial and a cluster ``repro`` compared claim by claim."""


def _claim(cid, values, verdict="holds", metric="accuracy"):
    return {"id": cid, "kind": "main", "metric": metric, "seeds": [0, 1, 2], "values": values,
            "references": [0.5, 0.5, 0.5], "holds_per_seed": [True, True, True], "verdict": verdict}


def test_equal_runs_agree_and_a_changed_value_is_named(backend_check):
    a = {"claims": [_claim("c", [0.9, 0.8, 0.7])]}
    assert all(r["equal"] for r in backend_check.compare(a, a))
    b = {"claims": [_claim("c", [0.9, 0.8, 0.70001])]}
    (row,) = backend_check.compare(a, b)
    assert not row["equal"] and row["differs"] == "values"
    assert backend_check.compare(a, b, rtol=1e-3)[0]["equal"]


def test_timed_claims_compare_verdicts_and_missing_claims_are_named(backend_check):
    a = {"claims": [_claim("faster", [2.0, 2.1, 2.2], metric="speed-up over retraining (wall time)")]}
    b = {"claims": [_claim("faster", [2.5, 1.9, 2.4], metric="speed-up over retraining (wall time)")]}
    assert backend_check.compare(a, b)[0]["equal"]
    b["claims"][0]["verdict"] = "does not hold"
    assert backend_check.compare(a, b)[0]["differs"] == "verdict"
    rows = backend_check.compare(a, {"claims": []})
    assert rows == [{"id": "faster", "equal": False, "differs": "missing on the cluster run"}]
