import pytest

from iclr25.scalegun import datasets


@pytest.fixture(scope="session")
def small_graph():
    return datasets.csbm(400, 2000, 8, 3, seed=1)
