"""Claim 1 (the maps API against ground truth) and its building blocks."""

import numpy as np
import pytest

from iclr25.v1_topology import maps
from iclr25.v1_topology.fields import analytic_pinwheel_field, gaussian_random_field, salt_and_pepper_map


def test_gaussian_random_fields_have_pi_pinwheels_per_hypercolumn():
    dens = [maps.pinwheel_density(gaussian_random_field(128, 16.0, seed=s)) for s in range(10)]
    assert abs(np.mean(dens) / np.pi - 1) < 0.10, dens


def test_column_spacing_recovers_the_wavelength():
    for lam in (8.0, 12.0, 16.0):
        est = maps.column_spacing(gaussian_random_field(128, lam, seed=1))
        assert abs(est / lam - 1) < 0.06, (lam, est)


def test_analytic_field_gives_exactly_its_pinwheels_and_chirality():
    centres = [(10.3, 12.7), (25.6, 30.2), (30.1, 8.4), (5.2, 33.9)]
    charges = [1, -1, 1, -1]
    z = analytic_pinwheel_field((40, 40), centres, charges)
    pw = maps.pinwheels(z, periodic=False)
    assert pw.count == 4
    order = np.lexsort((pw.positions[:, 1], pw.positions[:, 0]))
    want = np.argsort([c[0] for c in centres])
    np.testing.assert_allclose(pw.positions[order], np.array(centres)[want], atol=0.71)
    assert pw.charges[order].tolist() == np.array(charges)[want].tolist()
    # the same field as an orientation map theta = arg(z)/2 gives the same pinwheels
    pw2 = maps.pinwheels(np.mod(np.angle(z) / 2, np.pi), periodic=False)
    assert pw2.charges.tolist() == pw.charges.tolist()


def test_pinwheels_come_in_equal_numbers_on_a_torus_and_nnpd_is_reasonable():
    pw = maps.pinwheels(gaussian_random_field(96, 12.0, seed=3))
    assert pw.n_positive == pw.n_negative  # total topological charge on a torus is zero
    nn = maps.nearest_neighbour_distances(pw) / 12.0
    assert 0.15 < nn.mean() < 0.6


def test_smooth_maps_beat_salt_and_pepper_on_wiring_and_neighbour_difference():
    smooth = gaussian_random_field(32, 8.0, seed=0)
    rand = salt_and_pepper_map(32, seed=0)
    assert maps.neighbour_orientation_difference(rand) > 40
    assert maps.neighbour_orientation_difference(smooth) < 25
    assert maps.map_wiring_cost(smooth) < maps.map_wiring_cost(rand)
    assert maps.ring_ratio(smooth) > 5 * maps.ring_ratio(rand)


def test_orientation_tuning_and_sparseness():
    th = np.arange(8) * np.pi / 8
    R = np.stack([np.cos(th - 0.3) ** 8, np.ones(8)], axis=1)
    t = maps.orientation_tuning(R, th)
    assert abs(t.theta[0] - 0.3) < 1e-6 and t.osi[1] < 1e-12 and t.osi[0] > 0.5
    one_hot = np.eye(10)
    assert maps.sparseness(one_hot) == pytest.approx(1.0)
    assert maps.sparseness(np.ones((4, 10))) == pytest.approx(0.0)


def test_wiring_costs_and_reliability():
    D = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert maps.wiring_cost(np.array([[0, 2.0], [2.0, 0]]), D) == pytest.approx(1.0)
    assert maps.wiring_cost(np.array([[0, 2.0], [1.0, 0]]), D, kind="inverse_strength") > 1.0
    rng = np.random.default_rng(0)
    A = rng.poisson(3, size=(5, 50)).astype(float)
    assert maps.response_reliability(A, A) == pytest.approx(1.0)
    assert maps.response_reliability(A, A + rng.normal(0, 5, A.shape)) < 0.8


def test_random_maps_have_no_hypercolumns_and_random_fields_do():
    from iclr25.v1_topology import gaussian_random_field, salt_and_pepper_map

    for s in range(10):
        for n in (16, 32, 64):
            r = salt_and_pepper_map(n, seed=s)
            assert not maps.has_hypercolumns(r), maps.ring_ratio(r)
        assert maps.has_hypercolumns(gaussian_random_field(32, 6.0, seed=s))
    assert not maps.summarize_map(salt_and_pepper_map(16, seed=0)).hypercolumns
    assert maps.summarize_map(gaussian_random_field(16, 4.0, seed=0)).hypercolumns


def test_analyze_prints_no_density_for_a_random_map(tmp_path, capsys):
    import json

    from iclr25.v1_topology import gaussian_random_field, salt_and_pepper_map
    from iclr25.v1_topology.cli import main

    np.save(tmp_path / "random.npy", salt_and_pepper_map(32, seed=1))
    assert main(["analyze", str(tmp_path / "random.npy"), "--out", str(tmp_path / "r.json")]) == 0
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["hypercolumns"] is False and d["density"] is None and d["spacing"] is None
    assert "no periodic hypercolumn structure" in d["note"]
    assert "n/a (no hypercolumns)" in capsys.readouterr().out
    np.save(tmp_path / "grf.npy", gaussian_random_field(48, 8.0, seed=0))
    assert main(["analyze", str(tmp_path / "grf.npy"), "--out", str(tmp_path / "g.json")]) == 0
    d = json.loads((tmp_path / "g.json").read_text())
    assert d["hypercolumns"] is True and 2.0 < d["density"] < 4.5
