"""The batched entropic solver's before/after numbers (issue 65) come from committed speed records, rendered into
the README and EVIDENCE.md by ``make speed-tables``: a hand-edited number, or a record re-measured without
regenerating, fails here (and in the contract's ``[ratios]`` rule)."""

import json
import re
from pathlib import Path

from iclr25.utils.bench import speed_table

PACKAGE = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- speed-table:begin source=(\S+) .*?-->\n(.*?)\n<!-- speed-table:end -->", re.S)


def test_the_speed_blocks_are_rendered_from_their_committed_records():
    seen = set()
    for name in ("README.md", "EVIDENCE.md"):
        for src, body in BLOCK.findall((PACKAGE / name).read_text()):
            assert body == speed_table(json.loads((PACKAGE / src).read_text())), f"{name}: {src} (make speed-tables)"
            seen.add(src)
    assert "benchmarks/batch_compaction_eps0.001.json" in seen


def test_the_compaction_records_say_where_and_when_and_time_both_sides_alike():
    for path in sorted((PACKAGE / "benchmarks").glob("batch_compaction_eps*.json")):
        record = json.loads(path.read_text())
        assert record["date"] and record["load_start"] is not None and record["machine"]["blas"]
        assert record["repeats"] >= 3 and len(record["rows"]) >= 3
        for row in record["rows"]:
            for side in ("before", "after"):
                assert len(row[side]["times_s"]) == record["repeats"]
                assert 0 < row[side]["useful_share"] <= 1
            assert row["before"]["useful_blocks"] > 0
            assert row["after"]["executed_blocks"] >= row["after"]["useful_blocks"]
