from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file: given a missing, an empty and a garbage file it exits 2 with one
# line naming the file and writes nothing (a checkpoint is a folder: a plain file in its place is refused)
FILE_COMMANDS = [
    ["train", "--config", "{file}.json", "--out", "{out}"],
    ["estimate", "--checkpoint", "{file}", "--out", "{out}"],
]


@parametrize_with_checks("sdds", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
