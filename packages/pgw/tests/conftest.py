import numpy as np
import pytest

from iclr25.pgw import mm_space


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def random_space(rng, n=None, lo=10, hi=30, mass=None):
    n = int(rng.integers(lo, hi + 1)) if n is None else n
    return mm_space(rng.normal(size=(n, 2)), mass=mass)
