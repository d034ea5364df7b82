"""The shared conformance suite. Give ``file_commands=`` the argv of every subcommand that reads a user's file
(``{file}`` = the input path with the extension you expect after it, ``{out}`` = an output path), e.g.
``file_commands=[["fit", "{file}.npy", "--out", "{out}.npz"]]`` (see CONTRIBUTING.md)."""

from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("{{slug}}", root=Path(__file__).parents[1])
def test_conformance(check):
    check()
