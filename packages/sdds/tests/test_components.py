"""Unit tests of the building blocks: energies, decoding, noise, exact MIS, baselines, checkpoints."""

import itertools

import equinox as eqx
import jax
import numpy as np
import pytest

from iclr25.sdds import (
    BETA_CRITICAL,
    IsingEnergy,
    MaxCliqueEnergy,
    MaxCutEnergy,
    MDSEnergy,
    MISEnergy,
    SamplerConfig,
    beta_schedule,
    decode_ce,
    exact_ising,
    exact_mis,
    from_bqm,
    greedy_mis,
    load_sampler,
    metropolis,
    random_graphs,
    save_sampler,
)
from iclr25.sdds.diffusion import make_model


def _all_states(n):
    return np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.float32)


def test_beta_schedules_end_at_one_half_and_increase():
    for name in ("exp", "diffuco"):
        b = beta_schedule(12, name)
        assert b[-1] == 0.5 and np.all(np.diff(b) > 0) and b[0] > 0


def test_ising_energy_against_a_direct_sum():
    e = IsingEnergy(3, spin_glass=True, seed=3)
    x = np.random.default_rng(0).integers(0, 2, (5, 9))
    s = 2 * x - 1
    J = np.asarray(e.graphs.edge_weight[0])
    snd, rcv = np.asarray(e.graphs.senders[0]), np.asarray(e.graphs.receivers[0])
    want = -(J * s[:, snd] * s[:, rcv]).sum(1)
    np.testing.assert_allclose(e(x), want, rtol=1e-6)


def test_graph_energies_on_a_triangle_plus_leaf():
    g = [(4, np.array([[0, 1], [1, 2], [0, 2], [2, 3]]))]
    x = np.array([1, 0, 0, 1])
    assert MISEnergy.from_graphs(g)(x) == -2.0
    assert MISEnergy.from_graphs(g)(np.array([1, 1, 0, 0])) == pytest.approx(-2 + 1.2)
    assert MaxCutEnergy.from_graphs(g)(x) == pytest.approx(1 - 1 - 1 - 1)  # s = (+,-,-,+)
    assert MDSEnergy.from_graphs(g)(np.array([0, 0, 1, 0])) == 1.0  # node 2 dominates everything
    assert MDSEnergy.from_graphs(g)(np.array([0, 0, 0, 1])) == pytest.approx(1 + 1.1 * 2)  # 0, 1 undominated
    # clique {0, 1, 2} is an independent set of the complement
    assert MaxCliqueEnergy.from_graphs(g)(np.array([1, 1, 1, 0])) == -3.0


def test_ce_decoding_gives_independent_sets_no_worse_than_the_expectation():
    graphs = random_graphs(4, 10, 14, seed=1)
    m = MISEnergy.from_graphs(graphs)
    probs = np.random.default_rng(0).random((4, m.n_nodes))
    x = decode_ce(m, probs, np.arange(4))
    relaxed = np.asarray(m.batch_energy(probs.astype(np.float32), np.arange(4)))  # = E[E(X)], X ~ Bern(probs)
    for k, (n, edges) in enumerate(graphs):
        assert not np.any(x[k, edges[:, 0]] * x[k, edges[:, 1]])  # independent
        assert np.all(x[k, n:] == 0)  # padding stays empty
        assert m(x[k], k) <= relaxed[k] + 1e-5


def test_exact_mis_matches_brute_force_and_beats_greedy():
    for n, edges in random_graphs(3, 10, 12, seed=2):
        states = _all_states(n)
        ok = ~np.any(states[:, edges[:, 0]] * states[:, edges[:, 1]], axis=1)
        best = states[ok].sum(1).max()
        assert exact_mis(n, edges).sum() == best
        assert greedy_mis(n, edges).sum() <= best


def test_from_bqm_matches_dimod_energies():
    dimod = pytest.importorskip("dimod")
    bqm = dimod.BinaryQuadraticModel({"a": 0.5, "b": -1.0, "c": 0.2}, {("a", "b"): 1.5, ("b", "c"): -0.7},
                                     0.3, "SPIN")
    q = from_bqm(bqm)
    states = _all_states(3)
    want = [bqm.energy({v: 2 * int(s[i]) - 1 for i, v in enumerate(bqm.variables)}) for s in states]
    np.testing.assert_allclose(q(states), want, rtol=1e-6)


def test_metropolis_internal_energy_near_exact():
    r = metropolis(IsingEnergy(4), BETA_CRITICAL, n_chains=64, n_sweeps=200, burn_in=20, seed=0)
    exact = exact_ising(4, BETA_CRITICAL).internal_energy
    assert abs(r.internal_energy - exact) < 4 * r.internal_energy_se + 1e-3
    assert 0 < r.acceptance_rate < 1


def test_autoregressive_log_probs_are_normalised():
    from iclr25.sdds.autoregressive import MADE, AutoregressiveSampler, _log_prob

    e = IsingEnergy(3)
    model = MADE(9, 8, key=jax.random.key(0))
    # non-zero direct connections, so that the masks matter
    model = eqx.tree_at(lambda m: m.wd, model, jax.random.normal(jax.random.key(1), (9, 9)))
    log_prob = eqx.filter_jit(_log_prob)  # one compilation, not one per operation
    lq = np.asarray(log_prob(model, _all_states(9)), np.float64)
    assert np.exp(lq).sum() == pytest.approx(1.0, abs=1e-5)
    s = AutoregressiveSampler(model, e).sample(64, key=jax.random.key(0))
    np.testing.assert_allclose(s.log_q, np.asarray(log_prob(model, s.x.astype(np.float32))), atol=1e-4)


def test_gnn_sampler_checkpoint_round_trip(tmp_path, small_mis):
    sampler, graphs, _ = small_mis
    save_sampler(sampler, tmp_path / "ck")
    assert not any(p.suffix in (".pkl", ".pickle") for p in (tmp_path / "ck").iterdir())
    again = load_sampler(tmp_path / "ck")
    a = sampler.sample(16, key=jax.random.key(5), index=1)
    b = again.sample(16, key=jax.random.key(5), index=1)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_allclose(a.log_q, b.log_q, rtol=1e-6)
    assert again.config == sampler.config
    assert set(again.history) == set(sampler.history)
    n1 = int(np.asarray(sampler.energy.graphs.node_mask[1]).sum())
    assert np.all(a.x[:, n1:] == 0)  # padding nodes are never selected


def test_mean_aggregation_still_sees_the_degree():
    # a star: with averaged messages the centre and the leaves get the same message from constant inputs, so
    # only the log-degree feature can tell them apart (0.2's mean without it could not; the sum scales with
    # the degree by construction)
    import jax.numpy as jnp

    from iclr25.sdds.models import GNN

    energy = MISEnergy.from_graphs([(5, np.array([[0, 1], [0, 2], [0, 3], [0, 4]]))])
    model = GNN(hidden=4, n_layers=1, n_random=0, aggregation="mean", key=jax.random.key(0))
    logits, _ = eqx.filter_jit(lambda m, g: m(jnp.zeros(5), 2, 4, jnp.zeros((5, 0)), g))(model, energy.graphs.take(0))
    assert abs(float(logits[0] - logits[1])) > 1e-4  # centre differs from a leaf
    np.testing.assert_allclose(np.asarray(logits[1:]), float(logits[1]), rtol=1e-5)  # leaves agree


def test_symmetric_network_is_equivariant_to_the_global_flip():
    e = IsingEnergy(3)
    model = make_model(SamplerConfig(symmetric=True, hidden=8, n_layers=1), e, jax.random.key(0))
    x = np.random.default_rng(0).integers(0, 2, 9).astype(np.float32)
    forward = eqx.filter_jit(lambda m, s: m(s, 3, 12, None, None))  # one compilation, not one per operation
    (l1, v1), (l2, v2) = forward(model, x), forward(model, 1 - x)
    np.testing.assert_allclose(np.asarray(l1), -np.asarray(l2), atol=1e-6)
    assert abs(float(v1) - float(v2)) < 1e-6


def test_lattice_cnn_input_layer_is_the_periodic_conv_of_spin_and_time_embedding():
    # the CNN convolves the constant time embedding once (temb @ sum_o W_o); it must equal the plain
    # periodic convolution of the per-site input [s, temb]
    import jax.numpy as jnp

    from iclr25.sdds.models import N_TIME, LatticeCNN, time_embedding

    model = LatticeCNN(5, hidden=8, n_layers=0, key=jax.random.key(0))
    s = 2.0 * jax.random.bernoulli(jax.random.key(1), 0.5, (25,)).astype(jnp.float32) - 1.0

    @eqx.filter_jit  # one compilation, not one per operation
    def both(model, s):
        temb = jnp.broadcast_to(time_embedding(3, 12), (25, N_TIME))
        h = jax.nn.silu(model.inp(jnp.concatenate([s[:, None], temb], axis=-1)))
        return model._core(s, 3, 12)[0], (h @ model.out.weight.T + model.out.bias)[:, 0]

    logits, expected = both(model, s)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_estimate_and_neural_mcmc_accept_shared_draws():
    from iclr25.sdds import UniformProposal, estimate, neural_mcmc

    e, prop = IsingEnergy(3), UniformProposal(9)
    draws = prop.sample(64, key=jax.random.key(4))
    a = estimate(prop, e, BETA_CRITICAL, 64, jax.random.key(4), seed=1, n_bootstrap=5)
    b = estimate(prop, e, BETA_CRITICAL, 64, seed=1, n_bootstrap=5, samples=draws)
    assert a == b
    m1 = neural_mcmc(prop, e, BETA_CRITICAL, n_chains=4, n_steps=15, burn_in=2, key=jax.random.key(4), seed=3)
    m2 = neural_mcmc(prop, e, BETA_CRITICAL, n_chains=4, n_steps=15, burn_in=2, seed=3, samples=draws)
    assert m1.internal_energy == m2.internal_energy and m1.acceptance_rate == m2.acceptance_rate
