from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("llm-regret", root=Path(__file__).parents[1], file_commands=[
    ["run", "--losses", "{file}.npy", "--out", "{out}"],
    ["run", "--agent", "llm", "--replay", "{file}.jsonl", "--transcript", "{out}.jsonl"],
])
def test_conformance(check):
    check()
