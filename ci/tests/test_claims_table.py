"""``ci/claims_table.py``: a claim's ladder resolves in the README or, once a short README moved it, EVIDENCE.md."""


def test_ladders_resolve_in_the_readme_or_the_evidence_page(tmp_path, claims_table):
    ct = claims_table
    (tmp_path / "README.md").write_text("# p\n\n## Results\n")
    (tmp_path / "EVIDENCE.md").write_text("# Evidence\n\n## Regime ladder\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ablation.md").write_text("x")
    ladders = {"a": "README.md#results", "b": "README.md#regime-ladder", "c": "EVIDENCE.md#regime-ladder",
               "d": "docs/ablation.md", "e": "README.md#gone", "f": "EVIDENCE.md#results", "g": "docs/none.md"}
    report = {"claims": [{"id": k, "ladder": v} for k, v in ladders.items()]}
    probs = ct.ladder_problems(tmp_path, report)
    assert [p.split("'")[1] for p in probs] == ["e", "f", "g"], probs
