from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

# every subcommand that reads a user's file: given a missing, an empty and a garbage file it exits 2 with one
# line naming the file and writes nothing
FILE_COMMANDS = [
    ["rewire", "{file}.npz", "--out", "{out}.npz"],
    ["rewire", "{file}.npz", "--method", "digl"],
    ["rewire", "{file}.tfrecord", "--out", "{out}.npz"],  # MeshGraphNets' format (issue 64)
]


@parametrize_with_checks("piorf", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
