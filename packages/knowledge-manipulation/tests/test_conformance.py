"""The shared conformance suite, with the subcommands that read a user's files (a people file, a model
folder written by `train`, a Hugging Face model folder)."""

from pathlib import Path

from iclr25.utils.testing import parametrize_with_checks


@parametrize_with_checks("knowledge-manipulation", root=Path(__file__).parents[1],
                         file_commands=[["train", "--people", "{file}.jsonl", "--out", "{out}"],
                                        ["eval", "--model", "{file}", "--out", "{out}"],
                                        ["eval", "--hf-path", "{file}", "--n", "4", "--out", "{out}"]])
def test_conformance(check):
    check()
