"""The paper's claims at small scale (seeded). The scaffold checks only its placeholder."""

import numpy as np

from iclr25.{{module}} import example


def test_example_is_the_mean():
    x = np.random.default_rng(0).normal(size=50)
    assert example(x) == np.mean(x)
