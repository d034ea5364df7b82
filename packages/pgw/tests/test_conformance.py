from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file: a missing, an empty and a garbage file must each exit 2 with one
# line naming the file and write nothing
FILE_COMMANDS = [
    ["distance", "{file}.npy", "{file}.npy"],
    ["distance", "{file}.csv", "{file}.ply", "--plan", "{out}.npy"],
    ["distance", "{file}.txt", "{file}.npz", "--method", "fw-v2"],
    ["pairwise", "{file}.npy", "{file}.xyz", "--out", "{out}.npy"],
    ["pairwise", "{file}", "--out", "{out}.npy", "--n-jobs", "2"],
]


@parametrize_with_checks("pgw", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
