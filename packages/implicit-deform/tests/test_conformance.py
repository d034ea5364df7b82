from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

FILE_COMMANDS = [
    ["fit", "{file}.ply", "{file}.ply", "--out", "{out}"],
    ["fit", "{file}.npy", "{file}.obj", "--out", "{out}"],
    ["fit", "{file}.xyz", "{file}.xyz", "--corr", "{file}.npy", "--out", "{out}"],
]


@parametrize_with_checks("implicit-deform", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
