"""The shared conformance suite, with the commands that read a user's file (a data set, a checkpoint)."""

from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("teochat", root=Path(__file__).parents[1], file_commands=[
    ["train", "--data", "{file}.npz", "--out", "{out}", "--steps", "2"],
    ["chat", "--model", "{file}.pt", "--sequence", "{out}", "--question", "what is the scene class of this location ?"],
    ["evaluate", "--model", "{file}.pt", "--xbd", "{out}", "--out", "{out}"],
])
def test_conformance(check):
    check()
