from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file
FILE_COMMANDS = [
    ["partition", "{file}.csv", "--output", "{out}.csv"],
    ["partition", "{file}.csv", "--method", "scaffold", "--output", "{out}.csv"],
    ["evaluate", "{file}.csv", "--label-col", "y", "--out", "{out}"],
    ["evaluate", "{file}.csv", "--label-col", "y", "--deployment", "{file}.csv", "--out", "{out}"],
]


@parametrize_with_checks("augood", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
