"""ETDRK4: exact on the linear part, 4th order on a split linear problem, KS bounded, Burgers energy decays."""

import math

import numpy as np
import torch

from iclr25.memno import etdrk4, etdrk4_coefficients, ks_initial_condition, solve_burgers, solve_ks
from iclr25.memno.solver import wavenumbers


def test_linear_part_matches_exact_decay():
    nu, length, h, n_steps = 0.075, 64.0, 0.005, 100
    k = wavenumbers(64, length)
    sym = k**2 - nu * k**4
    v0 = torch.fft.rfft(torch.as_tensor(ks_initial_condition(3, 64, length, seed=1)))
    v = etdrk4(v0, etdrk4_coefficients(sym, h), lambda w: torch.zeros_like(w), n_steps, save_every=n_steps)
    exact = v0 * torch.exp(sym * h * n_steps)
    assert (v[:, -1] - exact).abs().max() / exact.abs().max() < 1e-8


def test_split_linear_problem_is_fourth_order_and_accurate():
    # v' = L v + c v with the c v part treated as the "nonlinear" term: exact e^{(L+c)t}
    k = wavenumbers(32, 2 * math.pi)
    sym = -(k**2) * 0.1
    c = 0.7
    v0 = torch.ones(k.shape, dtype=torch.complex128)
    errs = []
    for h in (0.1, 0.05):
        n = round(1.0 / h)
        v = etdrk4(v0, etdrk4_coefficients(sym, h), lambda w: c * w, n, save_every=n)[-1]
        errs.append((v - v0 * torch.exp((sym + c) * 1.0)).abs().max().item())
    assert errs[1] < 1e-7
    assert 12 < errs[0] / errs[1] < 20  # 2^4 = 16


def test_contour_coefficients_match_taylor_series_near_zero():
    z = torch.tensor([1e-6, -1e-5], dtype=torch.float64)
    coef = etdrk4_coefficients(z, 1.0)
    # f1, f2, f3 → 1/6 as z → 0; Q → 1/2
    assert torch.allclose(coef.f1, torch.full_like(z, 1 / 6), atol=1e-5)
    assert torch.allclose(coef.f2, torch.full_like(z, 1 / 6), atol=1e-5)
    assert torch.allclose(coef.f3, torch.full_like(z, 1 / 6), atol=1e-5)
    assert torch.allclose(coef.Q, torch.full_like(z, 0.5), atol=1e-5)


def test_ks_energy_stays_bounded_and_mean_is_conserved():
    traj = solve_ks(ks_initial_condition(4, 128, 64.0, seed=2), nu=0.15, t_final=5.0)
    energy = (traj.u**2).mean(-1)
    assert np.all(np.isfinite(traj.u))
    assert energy.max() < 50 * energy[:, 0].max()
    assert np.abs(traj.u.mean(-1) - traj.u[:, :1].mean(-1)).max() < 1e-10


def test_burgers_energy_decays():
    traj = solve_burgers(np.sin(np.arange(128) * 2 * np.pi / 128)[None], nu=0.01)
    energy = (traj.u**2).mean(-1)[0]
    assert np.all(np.diff(energy) < 1e-12)
