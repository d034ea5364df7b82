from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("cl-optimal-control", root=Path(__file__).parents[1],
                         file_commands=[["simulate", "{file}.json", "--n", "64", "--seeds", "2", "--out", "{out}"],
                                        ["solve", "--problem", "{file}.json", "--out", "{out}.json"],
                                        ["simulate", "--data", "{file}.npz", "--seeds", "2", "--out", "{out}"]])
def test_conformance(check):
    check()
