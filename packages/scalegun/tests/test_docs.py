"""The docstring examples run (they are part of the documentation)."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["certificate", "datasets", "mapped", "propagation", "streaming", "unlearner"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"iclr25.scalegun.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert module == "certificate" or result.attempted > 0
