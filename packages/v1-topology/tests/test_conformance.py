"""The shared conformance suite, with every subcommand that reads a user's file."""

from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

FILE_COMMANDS = [
    ["analyze", "{file}.npy"],
    ["analyze", "{file}.npz", "--out", "{out}.json"],
    ["train", "--species", "{file}.json", "--out", "{out}"],
    ["train", "--species", "cat", "--images", "{file}.npy", "--out", "{out}"],
    ["train", "--species", "cat", "--images", "{file}.png", "--out", "{out}"],  # issue 64
    ["train", "--species", "cat", "--images", "{file}.iml", "--out", "{out}"],
]


@parametrize_with_checks("v1-topology", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
