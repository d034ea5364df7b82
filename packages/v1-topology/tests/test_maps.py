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


def _lowpass_random_map(n, sigma, seed):
    """White-noise orientations smoothed with a Gaussian: smooth, with pinwheels, but no preferred wavelength."""
    from scipy import ndimage

    w = np.exp(2j * salt_and_pepper_map(n, seed=seed))
    return (ndimage.gaussian_filter(w.real, sigma, mode="wrap")
            + 1j * ndimage.gaussian_filter(w.imag, sigma, mode="wrap"))


def test_random_maps_have_no_hypercolumns_and_random_fields_do():
    for s in range(10):
        for n in (16, 32, 64):
            r = salt_and_pepper_map(n, seed=s)
            t = maps.ring_test(r)
            assert not t.has_ring and "ring ratio" in t.reason, t
        # smoothed noise passes the ring ratio (a low-pass spectrum) but has no ring: refused as well (at these
        # widths none of 100 seeds passes; narrower smoothing passes in up to 22 %, see RING_MAX_INNER_POWER)
        for n, sigma in ((16, 2.0), (32, 3.0)):
            lp = maps.ring_test(_lowpass_random_map(n, sigma, s))
            assert lp.ring_ratio > 10 and not lp.has_ring and "low-pass" in lp.reason, lp
        g = maps.ring_test(gaussian_random_field(32, 6.0, seed=s))
        assert g.has_ring and g.reason == "" and g.ring_ratio > g.shuffled_max
    # a random map: no spacing, density or NNPD, and a note that says why
    sr = maps.summarize_map(salt_and_pepper_map(32, seed=1))
    assert not sr.hypercolumns and sr.spacing is None and sr.density is None and sr.nnpd is None
    assert sr.note.startswith("no ring in the power spectrum") and sr.n_pinwheels > 0
    assert maps.summarize_map(gaussian_random_field(16, 4.0, seed=0)).hypercolumns


def test_summarize_map_gives_pi_for_random_fields_with_a_ring():
    dens = []
    for s in range(8):
        sm = maps.summarize_map(gaussian_random_field(32, 4.0, seed=s))
        assert sm.hypercolumns and sm.note == ""
        dens.append(sm.density)
    assert abs(np.mean(dens) / np.pi - 1) < 0.10, dens  # seeds 0-7: 1.005 pi


def test_analyze_prints_no_density_for_a_random_map(tmp_path, capsys):
    import json

    from iclr25.v1_topology import gaussian_random_field, salt_and_pepper_map
    from iclr25.v1_topology.cli import main

    np.save(tmp_path / "random.npy", salt_and_pepper_map(32, seed=1))
    assert main(["analyze", str(tmp_path / "random.npy"), "--out", str(tmp_path / "r.json")]) == 0
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["hypercolumns"] is False and d["density"] is None and d["spacing"] is None
    assert "no periodic hypercolumn structure" in d["note"] and d["ring"]["has_ring"] is False
    out = capsys.readouterr().out
    assert "n/a (no hypercolumns)" in out and ": no ring" in out
    np.save(tmp_path / "grf.npy", gaussian_random_field(48, 8.0, seed=0))
    assert main(["analyze", str(tmp_path / "grf.npy"), "--out", str(tmp_path / "g.json")]) == 0
    d = json.loads((tmp_path / "g.json").read_text())
    assert d["hypercolumns"] is True and 2.0 < d["density"] < 4.5


def test_lattice_noise_raises_the_density_above_pi_and_smoothing_restores_it():
    """The mechanism behind the network's ~2π (benchmarks/density_ladder.py): a ring map plus lattice-scale noise
    gains pinwheel pairs; the detector is not off by a factor (a clean random field gives π)."""
    clean, noisy, smoothed, predicted = [], [], [], []
    for s in range(4):
        g = gaussian_random_field(48, 6.0, seed=s)
        rng = np.random.default_rng(s)
        z = g + 0.5 * (rng.normal(size=g.shape) + 1j * rng.normal(size=g.shape)) / np.sqrt(2)  # 20 % noise power
        lam = maps.column_spacing(z)
        clean.append(maps.pinwheel_density(g))
        noisy.append(maps.pinwheel_density(z, spacing=lam))
        smoothed.append(maps.pinwheel_density(z, spacing=lam, smooth=1.0))
        predicted.append(maps.random_field_density(z, spacing=lam))
        assert maps.ring_test(z).has_ring
    assert abs(np.mean(clean) / np.pi - 1) < 0.1 and abs(np.mean(smoothed) / np.pi - 1) < 0.1
    assert np.mean(noisy) > 1.25 * np.pi and np.mean(predicted) > np.mean(noisy)  # seeds 0-3: 1.4 pi, 2.0 pi
    assert abs(maps.random_field_density(gaussian_random_field(64, 8.0, seed=0)) / np.pi - 1) < 0.05
