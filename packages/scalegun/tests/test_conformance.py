from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file (the features are read first: they fix the number of nodes)
FILE_COMMANDS = [
    ["unlearn", "--graph", "{file}.txt", "--features", "{file}.npy", "--labels", "{file}.npy",
     "--requests", "{file}.req", "--out", "{out}.json"],
    ["unlearn", "--graph", "{file}.npz", "--features", "{file}.npy", "--labels", "{file}.npy",
     "--train", "{file}.npy", "--requests", "{file}.txt", "--out", "{out}.json", "--mode", "cgu"],
    ["convert", "{file}.npz", "--out", "{out}"],  # Amazon-style CSR .npz (issue 64)
    ["unlearn", "--data", "{file}", "--requests", "{file}.txt", "--out", "{out}.json"],
]


@parametrize_with_checks("scalegun", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
