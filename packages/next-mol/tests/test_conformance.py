from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("next-mol", root=Path(__file__).parents[1], file_commands=[
    ["conformers", "{file}.smi", "--out", "{out}.sdf"],
    ["generate", "--n", "2", "--lm", "{file}.pt", "--out", "{out}.sdf"],
])
def test_conformance(check):
    check()
