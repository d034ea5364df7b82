"""The push engine: invariants, residue threshold, error vs r_max, lazy == from-scratch within the error."""

import numpy as np
import pytest

from iclr25.scalegun import PushPropagator, exact_propagation, gpr_weights, preprocess_features
from iclr25.scalegun.validation import as_adjacency as _as_adjacency


def _setup(g, r_max, weights=None):
    A = _as_adjacency(g.adj, g.n_nodes)
    X = preprocess_features(g.X)
    w = gpr_weights(weights, 2) if weights is None or isinstance(weights, str) else weights
    r_abs = r_max * np.abs(X).sum(axis=0).mean()
    return A, X, w, PushPropagator(A, X, w, r_abs)


def test_exact_propagation_matches_dense(small_graph):
    A, X, w, _ = _setup(small_graph, 1e-7, "ppr")
    D = np.asarray(A.sum(axis=1)).ravel()
    P = (A.toarray() / np.sqrt(D)[:, None]) / np.sqrt(D)[None, :]
    Z = w[0] * X + w[1] * P @ X + w[2] * P @ P @ X
    np.testing.assert_allclose(exact_propagation(A, X, w), Z, atol=1e-12)


@pytest.mark.parametrize("weights", [None, "ppr", "hetero"])
def test_invariant_and_threshold_after_every_lazy_update(small_graph, weights):
    g = small_graph
    _, _, _, prop = _setup(g, 1e-4, weights)
    rng = np.random.default_rng(0)
    edges = g.edges[rng.choice(g.n_edges, 30, replace=False)]
    assert prop.invariant_error() < 1e-10
    assert prop.max_residue() <= prop.r_max
    for k, e in enumerate(edges):
        prop.remove_edges(e[None, :] if k % 3 else edges[k:k + 1])
        assert prop.invariant_error() < 1e-10
        assert prop.max_residue() <= prop.r_max
    for a in rng.choice(g.n_nodes, 10, replace=False):
        prop.zero_features(np.array([a]))
        assert prop.invariant_error() < 1e-10
        assert prop.max_residue() <= prop.r_max


def test_error_shrinks_with_r_max_and_lazy_matches_scratch(small_graph):
    g = small_graph
    rng = np.random.default_rng(1)
    removed = g.edges[rng.choice(g.n_edges, 40, replace=False)]
    errors = []
    for r_max in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        A, X, w, lazy = _setup(g, r_max)
        for e in removed:
            lazy.remove_edges(e[None, :])
        lazy.zero_features(np.array([3, 7]))
        Z = exact_propagation(lazy.A, lazy.X, w)
        err = np.linalg.norm(lazy.Z - Z)
        # the residue bound really bounds the error, so the certificate's approximation term is sound
        assert err <= lazy.residue_bound() + 1e-12
        scratch = PushPropagator(lazy.A, lazy.X, w, lazy.r_max)
        err_scratch = np.linalg.norm(scratch.Z - Z)
        assert np.linalg.norm(lazy.Z - scratch.Z) <= lazy.residue_bound() + scratch.residue_bound() + 1e-12
        errors.append(max(err, err_scratch))
    assert all(a > b for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-3 * errors[0]


def test_zero_hops_is_the_features(small_graph):
    A, X, _, _ = _setup(small_graph, 1e-7)
    prop = PushPropagator(A, X, gpr_weights(None, 0), 1e-9)
    np.testing.assert_allclose(prop.Z, X, atol=1e-14)
    prop.remove_edges(small_graph.edges[:2])
    np.testing.assert_allclose(prop.Z, X, atol=1e-14)


def test_local_update_is_local():
    """A single-edge update touches a small part of the graph (the source of the speed-up)."""
    from iclr25.scalegun import datasets

    g = datasets.powerlaw(20_000, 100_000, 16, 4, seed=0)
    A, X, w, prop = _setup(g, 1e-7)
    full = prop.n_pushes
    rng = np.random.default_rng(0)
    touched = []
    for e in g.edges[rng.choice(g.n_edges, 20, replace=False)]:
        touched.append(len(prop.remove_edges(e[None, :])))
    # 20 updates together push less than 5% of what one propagation from scratch pushes
    assert prop.n_pushes - full < 0.05 * full, (prop.n_pushes - full, full)
    assert np.mean(touched) < 0.15 * g.n_nodes, touched  # a 2-hop ball around (often hub) endpoints


def test_flush_pushes_every_residue(small_graph):
    g = small_graph
    A, X, w, prop = _setup(g, 1e-3, "ppr")
    prop.remove_edges(g.edges[:5])
    assert prop.residue_bound() > 0
    prop.flush()
    assert prop.max_residue() == 0.0 and prop.residue_bound() == 0.0
    assert prop.invariant_error() < 1e-10
    np.testing.assert_allclose(prop.Z, exact_propagation(prop.A, prop.X, w), atol=1e-12)
