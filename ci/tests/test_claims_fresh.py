"""``ci/claims_fresh.py`` (``make claims-fresh [SIDE=1]``): which reports a fresh run re-decides."""

import json
from pathlib import Path


def _report(path: Path, rung: str, schema: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": schema, "rung": rung, "claims": [{"id": "c"}]}))


def test_side_rungs_are_the_registry_side_reports_only(tmp_path, claims_fresh):
    pkg = tmp_path / "packages" / "demo"
    _report(pkg / "claims.json", "repro")  # the package's own report: re-decided by --rung
    _report(pkg / "docs" / "cot" / "claims.json", "cot")  # a side rung: re-decided with --side-rungs
    _report(pkg / "benchmarks" / "budget" / "claims.json", "budget")
    _report(pkg / "docs" / "prinz" / "claims.json", "repro")  # another system's report: its own command
    _report(pkg / "docs" / "old" / "claims.json", "ladder", schema=1)  # an old ladder report: not read
    got = [(rung, folder.relative_to(pkg).as_posix()) for rung, folder in claims_fresh.side_rungs(tmp_path, "demo")]
    assert got == [("budget", "benchmarks/budget"), ("cot", "docs/cot")]
