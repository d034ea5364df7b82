"""The cost ladder behind the speed claims: its cells, slopes, alternation and crossover, at a tiny size."""

import numpy as np
import pytest

from iclr25.weighted_lowrank import costladder


def test_cost_ladder_cells_slopes_and_crossover(monkeypatch):
    r = costladder.cost_ladder(seed=0, rows=3, ns=(60, 120), ks=(2, 4), repeats=3, peak_size=200)
    assert [(c["n"], c["k"]) for c in r["cells"]] == [(60, 2), (60, 4), (120, 2), (120, 4)]
    for c in r["cells"]:
        assert len(c["exact_runs_s"]) == len(c["sketch_runs_s"]) == 3
        assert c["exact_s"] == float(np.median(c["exact_runs_s"])) and c["sketch_s"] == float(np.median(c["sketch_runs_s"]))
        assert c["exact_gflops"] > 0 and c["sketch_gflops"] > 0
        assert c["relative_difference"] < 1e-4  # both solvers solve the same regressions
    row = [c for c in r["cells"] if c["n"] == 60]
    expect = np.polyfit(np.log([2, 4]), np.log([c["exact_s"] for c in row]), 1)[0]
    assert r["slopes"]["60"]["exact"] == pytest.approx(expect)
    assert r["speedup"]["120"] == pytest.approx(r["cells"][-1]["exact_s"] / r["cells"][-1]["sketch_s"])
    assert r["peak_gflops"] > 0 and len(r["load"]) == 2 and r["blas"]
    # the crossover is the first n from which EVERY larger n of the ladder is faster
    assert r["crossover_n"] in (None, 60, 120)
    if r["crossover_n"] is not None:
        assert all(r["speedup"][str(n)] > 1 for n in (60, 120) if n >= r["crossover_n"])


def test_cost_ladder_alternates_sides(monkeypatch):
    order = []
    import iclr25.weighted_lowrank.regression as regression

    real = regression.weighted_regression

    def spy(*a, solver, **kw):
        order.append(solver)
        return real(*a, solver=solver, **kw)

    monkeypatch.setattr(regression, "weighted_regression", spy)
    costladder.cost_ladder(seed=0, rows=2, ns=(40,), ks=(2, 3), repeats=3, peak_size=100)
    assert order == ["sketch", "exact", "exact", "sketch", "sketch", "exact"] * 2


def test_cost_ladder_rejects_no_repeats_or_one_rank():
    with pytest.raises(ValueError, match="repeats"):
        costladder.cost_ladder(rows=2, ns=(40,), ks=(2, 3), repeats=0)
    with pytest.raises(ValueError, match="ks"):
        costladder.cost_ladder(rows=2, ns=(40,), ks=(2, 2), repeats=1)


def test_evidence_ladder_table_is_generated_from_claims_json():
    """The Evidence page's per-seed ladder table equals what the committed claims.json gives (no hand edits)."""
    import json
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1]
    text = (pkg / "EVIDENCE.md").read_text(encoding="utf-8")
    body = costladder.seeds_table(json.loads((pkg / "claims.json").read_text(encoding="utf-8")))
    assert costladder.replace_block(text, body) == text, "run `python benchmarks/cost_ladder.py --evidence`"
