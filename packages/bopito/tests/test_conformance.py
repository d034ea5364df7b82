from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks

FILE_COMMANDS = [
    ["train", "{file}.npz", "--out", "{out}"],
    ["train", "{file}.npy", "--kind", "ito", "--out", "{out}"],
    ["sample", "--model", "{file}", "--lag", "10", "--out", "{out}.npz"],
    # your own MD (extra traj): a trajectory with its PDB topology, and an .h5 that carries its own
    ["train", "{file}.xtc", "--top", "{file}.pdb", "--out", "{out}"],
    ["train", "{file}.dcd", "--top", "{file}.pdb", "--kind", "ito", "--out", "{out}"],
    ["train", "{file}.h5", "--out", "{out}"],
]


@parametrize_with_checks("bopito", root=Path(__file__).parents[1], file_commands=FILE_COMMANDS)
def test_conformance(check):
    check()
