"""The experiment tables (on the Evidence page, EVIDENCE.md, since the README was cut: issue 66) are made from the
files `repro` wrote (docs/), never typed by hand."""

import json
from pathlib import Path

import pytest

from iclr25.bopito.repro import (
    alanine_ablation_table,
    alanine_solvent_table,
    alanine_tables,
    prinz_tables,
    readme_section,
    replace_readme_section,
    triple_well_table,
)

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize(("name", "folder", "render"), [("triple-well-table", "triple-well", triple_well_table),
                                                        ("alanine-tables", "alanine", alanine_tables),
                                                        ("prinz-tables", "prinz", prinz_tables),
                                                        ("alanine-ablation", "alanine-ablation", alanine_ablation_table),
                                                        ("alanine-solvent", "alanine-gbsa", alanine_solvent_table)])
def test_readme_table_is_made_from_the_committed_run(name, folder, render):
    details = json.loads((ROOT / "docs" / folder / "details.json").read_text(encoding="utf-8"))
    assert readme_section(ROOT / "EVIDENCE.md", name) == render(details)
    # the file the command wrote beside details.json holds the same table
    md = (ROOT / "docs" / folder / ("tables.md" if folder in ("alanine", "prinz") else "table.md")).read_text("utf-8")
    assert md.strip("\n") == render(details)


def test_solvent_table_rests_on_the_committed_claims_files():
    """The solvent table's GBSA columns are the committed alanine-gbsa claims.json and calibration, its vacuum
    columns the committed alanine-rung files (copied by benchmarks/alanine_solvent.py, not typed)."""
    det = json.loads((ROOT / "docs" / "alanine-gbsa" / "details.json").read_text(encoding="utf-8"))
    gbsa = json.loads((ROOT / "docs" / "alanine-gbsa" / "claims.json").read_text(encoding="utf-8"))
    cal = json.loads((ROOT / "claims-calibration-alanine-gbsa.json").read_text(encoding="utf-8"))
    vac = json.loads((ROOT / "docs" / "alanine" / "claims.json").read_text(encoding="utf-8"))
    vdet = json.loads((ROOT / "docs" / "alanine" / "details.json").read_text(encoding="utf-8"))
    assert det["gbsa"]["claims"] == gbsa["claims"]
    assert det["gbsa"]["calibration"]["seeds"] == cal["seeds"]
    assert [e["max_margin"] for e in det["gbsa"]["calibration"]["claims"]] == [e["max_margin"] for e in cal["claims"]]
    by_id = {c["id"]: c for c in vac["claims"]}
    for c in det["vacuum"]["claims"]:
        assert c == by_id[c["id"]]
    assert det["vacuum"]["ito_100"] == [vdet["c_err"]["ito"][vdet["members"].index([s, 100])] for s in (0, 1, 2)]
    # the long-lag equilibrium part: the committed alanine-gbsa-eq and alanine-eq claims files, copied
    eq = det["equilibrium"]
    gbsa_eq = json.loads((ROOT / "docs" / "alanine-gbsa-eq" / "claims.json").read_text(encoding="utf-8"))
    cal_eq = json.loads((ROOT / "claims-calibration-alanine-gbsa-eq.json").read_text(encoding="utf-8"))
    vac_eq = json.loads((ROOT / "docs" / "alanine-eq" / "claims.json").read_text(encoding="utf-8"))
    assert [eq["gbsa"]] == gbsa_eq["claims"] and [eq["vacuum"]] == vac_eq["claims"]
    assert eq["gbsa"]["seeds"] == eq["vacuum"]["seeds"] == list(range(20))
    assert (eq["calibration"]["max_margin"], eq["calibration"]["values"]) == (
        cal_eq["claims"][0]["max_margin"], cal_eq["claims"][0]["values"])
    # the data the GBSA claims rest on is the shipped set
    from iclr25.bopito.alanine import load_shipped

    assert det["gbsa"]["data_meta"] == load_shipped("gbsa").meta


def test_solvent_table_explicit_water_columns_rest_on_the_committed_claims_files():
    """The TIP3P columns (rung alanine-tip3p, issue 63) are the committed docs/alanine-tip3p/claims.json and its
    calibration file, on the shipped explicit-water set, whose reduction the table states."""
    from iclr25.bopito.alanine import load_shipped
    from iclr25.bopito.repro import alanine_solvent_table

    det = json.loads((ROOT / "docs" / "alanine-gbsa" / "details.json").read_text(encoding="utf-8"))
    w = det["tip3p"]
    claims = json.loads((ROOT / "docs" / "alanine-tip3p" / "claims.json").read_text(encoding="utf-8"))
    cal = json.loads((ROOT / "claims-calibration-alanine-tip3p.json").read_text(encoding="utf-8"))
    assert w["claims"] == claims["claims"] and claims["rung"] == "alanine-tip3p"
    assert {c["id"] for c in claims["claims"]} == {"alanine-tip3p-data-efficiency", "alanine-tip3p-interpolation"}
    assert all(c["seeds"] == [0, 1, 2] for c in claims["claims"])
    assert w["calibration"]["seeds"] == cal["seeds"] == [100, 101, 102]
    assert [e["max_margin"] for e in w["calibration"]["claims"]] == [e["max_margin"] for e in cal["claims"]]
    meta = load_shipped("tip3p").meta
    assert w["data_meta"] == meta
    table = alanine_solvent_table(det)
    # the reduction is stated from the data's own metadata: the command, frames of 0.1 ps, the sizes and CPU time
    assert meta["command"] in table and "frames of 0.1 ps" in table and f"{meta['cpu_seconds']:.0f} s CPU" in table
    for c in claims["claims"]:
        assert f"`{c['id']}` {c['verdict']}" in table
        for v in c["values"]:
            assert f"{v:.3f}" in table


def test_replace_readme_section_writes_between_the_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- t:begin (generated) -->\nold\n<!-- t:end -->\nrest\n", encoding="utf-8")
    replace_readme_section(readme, "t", "| a |\n|---|")
    assert readme.read_text(encoding="utf-8") == "intro\n<!-- t:begin (generated) -->\n| a |\n|---|\n<!-- t:end -->\nrest\n"
    assert readme_section(readme, "t") == "| a |\n|---|"
    with pytest.raises(ValueError, match="markers"):
        replace_readme_section(readme, "other", "x")


def test_readme_prose_quotes_no_measured_number():
    """Measured numbers live only in the generated blocks: the Limitations and the prose after the alanine
    tables hold no decimal number or percentage (the paper's own λ̂ aside)."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    limitations = text[text.index("## Limitations"):text.index("## How to cite")]
    evidence = (ROOT / "EVIDENCE.md").read_text(encoding="utf-8")
    start = evidence.index("<!-- alanine-tables:end -->")
    alanine_prose = evidence[start:evidence.index("\n## ", start)]  # up to the next section
    for part in (limitations, alanine_prose):
        part = re.sub(r"<!-- (\S+):begin.*?<!-- \1:end -->", "", part, flags=re.S)
        found = re.findall(r"\d+\.\d+|\d+(?:\.\d+)?\s?%", part.replace("0.9996", ""))
        assert not found, f"hand-typed numbers in the README prose: {found}"
