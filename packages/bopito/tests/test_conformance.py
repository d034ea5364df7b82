from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("bopito", root=Path(__file__).parents[1])
def test_conformance(check):
    check()
