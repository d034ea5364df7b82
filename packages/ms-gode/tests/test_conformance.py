from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("ms-gode", root=Path(__file__).parents[1], file_commands=[
    ["train", "--tasks", "{file}.npz", "--out", "{out}"],
    ["predict", "--model", "{file}.npz", "{file}.npz"],
])
def test_conformance(check):
    check()
