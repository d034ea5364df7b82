from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file: given a missing, an empty and a garbage file it exits 2 with one
# line naming the file and writes nothing
FILE_COMMANDS = [
    ["train", "--data", "{file}.npz", "--epochs", "1", "--out", "{out}"],
    ["train", "--data", "{file}.npz", "--test-data", "{file}.npz", "--epochs", "1", "--out", "{out}"],
    ["train", "--data", "{file}.h5", "--epochs", "1", "--out", "{out}"],  # PDEBench HDF5 (issue 64)
    ["train", "--data", "{file}.mat", "--epochs", "1", "--out", "{out}"],  # FNO .mat
]


@parametrize_with_checks("memno", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
