import numpy as np
import pytest

from iclr25.augood import fingerprints, load_dataset, similarity_matrix


@pytest.fixture(scope="session")
def solubility():
    return load_dataset("solubility")


@pytest.fixture(scope="session")
def small_sim(solubility):
    """Similarity of a fixed random subset of 400 solubility molecules, its fingerprints and labels."""
    idx = np.sort(np.random.default_rng(0).choice(len(solubility), 400, replace=False))
    smiles = [solubility.smiles[i] for i in idx]
    fp = fingerprints(smiles)
    return similarity_matrix(fp), fp, solubility.y[idx], smiles
