import inspect
from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

_KW = {}
if "file_commands" in inspect.signature(parametrize_with_checks).parameters:  # the suite's file fuzz, when present
    _KW["file_commands"] = [
        ["train", "--blocks", "{file}.smi", "--templates", "toy", "--steps", "2", "--out", "{out}"],
        ["train", "--blocks", "builtin", "--templates", "{file}.txt", "--steps", "2", "--out", "{out}"],
        ["doctor", "--blocks", "{file}.smi", "--json", "{out}"],
        ["sample", "--model", "{file}", "--out", "{out}.sdf"],
    ]


@parametrize_with_checks("rxnflow", root=Path(__file__).parents[1], **_KW)
def test_conformance(check):
    check()
