"""Incremental CE decoding (O(|E|)) against the full-energy definition, and the neighbour table."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from iclr25.sdds import (
    IsingModelEnergy,
    MaxCliqueEnergy,
    MaxCutEnergy,
    MDSEnergy,
    MISEnergy,
    QUBOEnergy,
    decode_ce,
    decode_no_model,
    random_graphs,
)
from iclr25.sdds.graphs import neighbour_table


def _reference_decode(energy, probs, index):
    """CE decoding by its definition: two full energy evaluations per bit (O(N |E|)), compiled once per energy
    type (op by op, each operation was compiled on its first use)."""
    x = np.array(probs, dtype=np.float32)
    graph = energy.graphs.take(index)
    mask = np.asarray(graph.node_mask)
    full = eqx.filter_jit(lambda e, s, i, v, g: e._energy(s.at[i].set(v), g))
    one, zero = jnp.float32(1.0), jnp.float32(0.0)
    for i in range(len(x)):
        e1 = float(full(energy, jnp.asarray(x), jnp.int32(i), one, graph))
        e0 = float(full(energy, jnp.asarray(x), jnp.int32(i), zero, graph))
        x[i] = 1.0 if (e1 < e0 and mask[i] > 0) else 0.0
    return x


def _energies():
    graphs = random_graphs(3, 9, 12, mean_degree=4.0, seed=4)
    rng = np.random.default_rng(0)
    n, edges = graphs[0]
    yield MISEnergy.from_graphs(graphs)
    yield MaxCliqueEnergy.from_graphs(graphs)
    yield MaxCutEnergy.from_graphs(graphs)
    yield MDSEnergy.from_graphs(graphs)
    yield QUBOEnergy.from_arrays(n, edges, rng.normal(size=len(edges)), rng.normal(size=n), 0.3)
    yield IsingModelEnergy.from_couplings(n, edges, rng.normal(size=len(edges)), rng.normal(size=n))


@pytest.mark.parametrize("energy", list(_energies()), ids=lambda e: type(e).__name__)
def test_incremental_decoding_equals_the_full_energy_definition(energy):
    rng = np.random.default_rng(1)
    G = energy.n_instances
    probs = rng.random((G, energy.n_nodes))
    got = decode_ce(energy, probs, np.arange(G))
    for g in range(G):
        np.testing.assert_array_equal(got[g], _reference_decode(energy, probs[g], g))


def test_neighbour_table_lists_every_edge_at_both_ends():
    graphs = random_graphs(2, 6, 9, mean_degree=3.0, seed=7)
    table = neighbour_table(MISEnergy.from_graphs(graphs).graphs)
    for g, (n, edges) in enumerate(graphs):
        idx, w = np.asarray(table.index[g]), np.asarray(table.weight[g])
        listed = {(i, int(j)) for i in range(n) for j, ww in zip(idx[i], w[i], strict=True) if ww != 0}
        want = {(int(a), int(b)) for a, b in edges} | {(int(b), int(a)) for a, b in edges}
        assert listed == want


def test_no_model_decode_is_a_maximal_independent_set():
    graphs = random_graphs(3, 10, 14, seed=3)
    energy = MISEnergy.from_graphs(graphs)
    x = decode_no_model(energy, np.arange(3))
    for k, (n, edges) in enumerate(graphs):
        assert not np.any(x[k, edges[:, 0]] * x[k, edges[:, 1]])
        free = np.ones(n, bool)  # maximal: every unchosen node has a chosen neighbour
        free[edges[:, 0][x[k, edges[:, 1]] == 1]] = False
        free[edges[:, 1][x[k, edges[:, 0]] == 1]] = False
        assert np.all(x[k, :n][free] == 1)
    assert decode_no_model(energy, 1).shape == (energy.n_nodes,)
