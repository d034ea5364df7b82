"""The step-profile tables in README.md and EVIDENCE.md are the ones ``benchmarks/profile_step.py --docs`` makes
from the committed ``benchmarks/profile_step.json`` (a re-measured JSON without regenerated documents fails)."""

import importlib.util
import json
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]


def _profile_module():
    spec = importlib.util.spec_from_file_location("_profile_step", PKG / "benchmarks" / "profile_step.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_step_profile_blocks_match_the_committed_json():
    mod = _profile_module()
    record = json.loads((PKG / mod.SOURCE).read_text(encoding="utf-8"))
    for doc, parts in (("README.md", mod.README_PARTS), ("EVIDENCE.md", None)):
        text = (PKG / doc).read_text(encoding="utf-8")
        found = re.search(re.escape(mod.BEGIN) + r"\n(.*?)\n" + re.escape(mod.END), text, re.S)
        assert found, f"{doc}: no step-profile block"
        assert found.group(1) == mod.profile_table(record, parts), (
            f"{doc}: the step-profile table differs from {mod.SOURCE} (run `python benchmarks/profile_step.py --docs`)")
