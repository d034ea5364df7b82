from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("overtraining", root=Path(__file__).parents[1], file_commands=[
    ["analyze", "{file}.npz", "--out", "{out}"],
    ["analyze", "{file}.nwb", "--out", "{out}"],
])
def test_conformance(check):
    check()
