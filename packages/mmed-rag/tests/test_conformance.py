"""The shared conformance suite, with every subcommand that reads a user's data file fuzzed."""

from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("mmed-rag", root=Path(__file__).parents[1], file_commands=[
    ["build-index", "{file}.npz", "--out", "{out}"],
    ["train", "{file}.npz", "--index", "{out}", "--out", "{out}2"],
    ["evaluate", "{file}.npz", "--index", "{out}", "--out", "{out}2"],
])
def test_conformance(check):
    check()
