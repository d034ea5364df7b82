from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file
FILE_COMMANDS = [
    ["fit", "{file}.npy", "--k", "2", "--out", "{out}.npz"],
    ["fit", "{file}.npz", "--k", "2", "--out", "{out}.npz"],
    ["fit", "{file}.npy", "{file}.npz", "--k", "2", "--out", "{out}.npz", "--solver", "exact"],
]


@parametrize_with_checks("weighted-lowrank", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
