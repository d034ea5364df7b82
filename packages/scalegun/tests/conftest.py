import numpy as np
import pytest

from iclr25.scalegun import datasets


@pytest.fixture(scope="session")
def small_graph():
    return datasets.csbm(400, 2000, 8, 3, seed=1)


@pytest.fixture(scope="session")
def stream_graph():
    """The 3k-node CSBM of the certificate claims, with its request stream."""
    g = datasets.csbm(3000, 15000, 32, 4, seed=0, homophily=0.6, signal=0.2)
    rng = np.random.default_rng(0)
    edges = g.edges[rng.choice(g.n_edges, 200, replace=False)]
    picked = rng.choice(g.train_idx, 100, replace=False)
    return g, edges, picked[:50], picked[50:]
