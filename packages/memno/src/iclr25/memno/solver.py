"""Pseudo-spectral ETDRK4 (Cox-Matthews scheme, Kassam-Trefethen contour quadrature) for periodic 1-D PDEs.

Both PDEs of the paper are written as ``û_t = L̂(k) û + N̂(u)`` in Fourier space:

* Kuramoto-Sivashinsky ``u_t + u u_x + u_xx + ν u_xxxx = 0``: ``L̂ = k² − ν k⁴``, ``N̂ = −½ i k FFT(u²)``;
* viscous Burgers ``u_t + u u_x = ν u_xx``: ``L̂ = −ν k²``, same ``N̂``.

The solver is batched over trajectories (torch, float64/complex128) and runs on whatever device ``u0`` is on.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import torch

__all__ = ["DivergedError", "ETDRK4Coefficients", "Trajectories", "etdrk4_coefficients", "etdrk4", "solve_ks",
           "solve_burgers", "ks_initial_condition", "burgers_initial_condition", "wavenumbers"]


@dataclasses.dataclass(frozen=True)
class ETDRK4Coefficients:
    """The per-mode ETDRK4 multipliers for one linear symbol and one step ``h``.

    ``E = e^{hL}``, ``E2 = e^{hL/2}``, ``Q = h φ₁(hL/2)/…`` and the three quadrature weights ``f1, f2, f3`` of
    Cox and Matthews (2002), eq. (26), each a real tensor with the shape of the symbol.
    """

    E: torch.Tensor
    E2: torch.Tensor
    Q: torch.Tensor
    f1: torch.Tensor
    f2: torch.Tensor
    f3: torch.Tensor


@dataclasses.dataclass(frozen=True)
class Trajectories:
    """Solutions on the full grid.

    Attributes
    ----------
    u : np.ndarray, shape (n, n_t, n_x), float64
        The solution at the saved times.
    x : np.ndarray, shape (n_x,)
        The grid ``x_j = j L / n_x``.
    t : np.ndarray, shape (n_t,)
        The saved times (``t[0] = 0``).
    pde : str
        ``"ks"`` or ``"burgers"``.
    nu : float
        The viscosity.
    length : float
        The domain length ``L``.
    """

    u: np.ndarray
    x: np.ndarray
    t: np.ndarray
    pde: str
    nu: float
    length: float


def wavenumbers(n_x: int, length: float, *, dtype: torch.dtype = torch.float64,
                device: torch.device | str | None = None) -> torch.Tensor:
    """The ``rfft`` wavenumbers ``k_m = 2π m / L``, ``m = 0..n_x/2``."""
    return 2 * math.pi / length * torch.arange(n_x // 2 + 1, dtype=dtype, device=device)


def etdrk4_coefficients(symbol: torch.Tensor, h: float, *, n_contour: int = 32) -> ETDRK4Coefficients:
    """ETDRK4 multipliers by contour-integral averaging (Kassam & Trefethen 2005).

    With ``z = hL`` the weights are

    .. math::
        Q = h\\,\\frac{e^{z/2}-1}{z},\\quad
        f_1 = h\\,\\frac{-4 - z + e^{z}(4 - 3z + z^2)}{z^3},\\quad
        f_2 = h\\,\\frac{2 + z + e^{z}(z - 2)}{z^3},\\quad
        f_3 = h\\,\\frac{-4 - 3z - z^2 + e^{z}(4 - z)}{z^3},

    each evaluated as the mean over ``n_contour`` points ``z + e^{iπ(j-½)/M}`` on the upper half of a unit
    circle (real part taken; the symbol is real), which removes the cancellation error near ``z = 0``.

    References: Kassam & Trefethen, SIAM J. Sci. Comput. 26 (2005), eq. (2.5) and Fig. 5 (kursiv.m);
    Cox & Matthews, J. Comput. Phys. 176 (2002), eq. (26).
    """
    if not torch.is_tensor(symbol) or symbol.is_complex():
        raise TypeError("symbol must be a real torch tensor (the Fourier symbol of the linear operator)")
    if not (isinstance(h, (int, float)) and math.isfinite(h) and h > 0):
        raise ValueError(f"h must be a positive finite time step, got {h!r}")
    if not isinstance(n_contour, int) or n_contour < 4:
        raise ValueError(f"n_contour must be an integer >= 4, got {n_contour!r}")
    sym = symbol.to(torch.float64)
    z = h * sym
    j = torch.arange(1, n_contour + 1, dtype=torch.float64, device=sym.device)
    r = torch.exp(1j * math.pi * (j - 0.5) / n_contour)
    lr = z[..., None].to(torch.complex128) + r
    e = torch.exp(lr)
    q = h * ((torch.exp(lr / 2) - 1) / lr).mean(-1).real
    f1 = h * ((-4 - lr + e * (4 - 3 * lr + lr**2)) / lr**3).mean(-1).real
    f2 = h * ((2 + lr + e * (lr - 2)) / lr**3).mean(-1).real
    f3 = h * ((-4 - 3 * lr - lr**2 + e * (4 - lr)) / lr**3).mean(-1).real
    return ETDRK4Coefficients(torch.exp(z), torch.exp(z / 2), q, f1, f2, f3)


def etdrk4(v0: torch.Tensor, coef: ETDRK4Coefficients, nonlinear: Callable[[torch.Tensor], torch.Tensor],
           n_steps: int, *, save_every: int = 1) -> torch.Tensor:
    """Integrate ``v_t = L v + N(v)`` in Fourier space with ETDRK4 and return the saved states.

    One step (Cox & Matthews 2002, eq. (26)):

    .. math::
        a &= E_2 v + Q N(v),\\quad b = E_2 v + Q N(a),\\quad c = E_2 a + Q (2N(b) - N(v)),\\\\
        v &\\leftarrow E v + f_1 N(v) + 2 f_2 (N(a) + N(b)) + f_3 N(c).

    Parameters
    ----------
    v0 : torch.Tensor, complex, shape (..., n_modes)
        Initial Fourier coefficients.
    coef : ETDRK4Coefficients
        From :func:`etdrk4_coefficients` for the step ``h``.
    nonlinear : callable
        ``N(v)`` in Fourier space, batched over the leading axes.
    n_steps : int
        Number of steps of size ``h``.
    save_every : int
        Keep every ``save_every``-th state (and the initial one).

    Returns
    -------
    torch.Tensor, shape (..., n_steps // save_every + 1, n_modes)

    References: Kassam & Trefethen (2005), kursiv.m; Cox & Matthews (2002), eq. (26).
    """
    if not isinstance(n_steps, int) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    if not isinstance(save_every, int) or save_every < 1:
        raise ValueError(f"save_every must be a positive integer, got {save_every!r}")
    E, E2, Q, f1, f2, f3 = (getattr(coef, f) for f in ("E", "E2", "Q", "f1", "f2", "f3"))
    v = v0
    saved = [v]
    for step in range(1, n_steps + 1):
        nv = nonlinear(v)
        a = E2 * v + Q * nv
        na = nonlinear(a)
        b = E2 * v + Q * na
        nb = nonlinear(b)
        c = E2 * a + Q * (2 * nb - nv)
        nc = nonlinear(c)
        v = E * v + f1 * nv + 2 * f2 * (na + nb) + f3 * nc
        if step % save_every == 0:
            saved.append(v)
    return torch.stack(saved, dim=-2)


class DivergedError(ValueError):
    """The time stepping produced NaN or inf: the parameters (typically a tiny viscosity) are unstable."""


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def _check_common(u0: np.ndarray | torch.Tensor, nu: float, length: float, t_final: float, dt: float,
                  save_dt: float) -> tuple[torch.Tensor, int, int]:
    if not torch.is_tensor(u0):
        arr = np.asarray(u0)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"u0 must be a real array, got dtype {arr.dtype}")
        u0 = torch.as_tensor(arr, dtype=torch.float64)
    if u0.is_complex():
        raise TypeError("u0 must be real, got a complex tensor")
    if u0.ndim != 2:
        raise ValueError(f"u0 must have shape (n_trajectories, n_x), got {tuple(u0.shape)}")
    if u0.shape[0] == 0 or u0.shape[1] < 4:
        raise ValueError(f"u0 must hold at least one trajectory on >= 4 points, got shape {tuple(u0.shape)}")
    if not bool(torch.isfinite(u0).all()):
        raise ValueError("u0 (initial condition) must be finite: it contains NaN or inf")
    for name, val in (("nu", nu), ("length", length), ("t_final", t_final), ("dt", dt), ("save_dt", save_dt)):
        _check_positive(name, val)
    save_every = round(save_dt / dt)
    if save_every < 1 or not math.isclose(save_every * dt, save_dt, rel_tol=1e-9):
        raise ValueError(f"save_dt must be a whole multiple of dt, got save_dt={save_dt}, dt={dt}")
    n_saves = round(t_final / save_dt)
    if n_saves < 1 or not math.isclose(n_saves * save_dt, t_final, rel_tol=1e-9):
        raise ValueError(f"t_final must be a whole multiple of save_dt, got t_final={t_final}, save_dt={save_dt}")
    return u0.to(torch.float64), save_every, n_saves * save_every


def _solve(u0, symbol_fn, pde, nu, length, t_final, dt, save_dt, dealias, n_contour, t_burn) -> Trajectories:
    u0, save_every, n_steps = _check_common(u0, nu, length, t_final, dt, save_dt)
    if isinstance(t_burn, bool) or not isinstance(t_burn, (int, float)) or not math.isfinite(t_burn) or t_burn < 0:
        raise ValueError(f"t_burn must be a finite number >= 0, got {t_burn!r}")
    n_burn = round(t_burn / dt)
    n_x = u0.shape[-1]
    k = wavenumbers(n_x, length, device=u0.device)
    coef = etdrk4_coefficients(symbol_fn(k), dt, n_contour=n_contour)
    g = -0.5j * k
    if dealias:  # Orszag's 2/3 rule on the quadratic term
        g = g * (torch.arange(k.numel(), device=k.device) < (2 * (n_x // 2)) // 3)

    def nonlinear(v: torch.Tensor) -> torch.Tensor:
        u = torch.fft.irfft(v, n=n_x)
        return g * torch.fft.rfft(u * u)

    v0 = torch.fft.rfft(u0)
    if n_burn > 0:  # discard the transient from the smooth initial condition
        v0 = etdrk4(v0, coef, nonlinear, n_burn, save_every=n_burn)[..., -1, :]
    v = etdrk4(v0, coef, nonlinear, n_steps, save_every=save_every)
    u = torch.fft.irfft(v, n=n_x).cpu().numpy()
    if not np.all(np.isfinite(u)):
        raise DivergedError(f"the {pde} solution diverged (NaN or inf) with nu={nu}, length={length}, dt={dt}: "
                            "ETDRK4 is unstable for these parameters; use a larger nu or a smaller dt")
    x = np.arange(n_x) * (length / n_x)
    t = np.arange(u.shape[1]) * save_dt
    return Trajectories(u=u, x=x, t=t, pde=pde, nu=float(nu), length=float(length))


def solve_ks(u0: np.ndarray | torch.Tensor, *, nu: float = 0.075, length: float = 64.0, t_final: float = 2.5,
             dt: float = 0.005, save_dt: float = 0.1, dealias: bool = False, n_contour: int = 32,
             t_burn: float = 0.0) -> Trajectories:
    """Solve Kuramoto-Sivashinsky ``u_t + u u_x + u_xx + ν u_xxxx = 0`` on ``[0, L)`` (periodic).

    Linear symbol ``L̂(k) = k² − ν k⁴``, nonlinear term ``−½ i k FFT(u²)``, time stepping by :func:`etdrk4`.

    Parameters
    ----------
    u0 : array, shape (n, n_x)
        Initial conditions on the grid ``x_j = j L / n_x``.
    nu, length, t_final, dt, save_dt : float
        Viscosity, domain length, final time, ETDRK4 step and saving interval.
    dealias : bool
        Apply the 2/3 rule to the nonlinear term (Kassam-Trefethen's kursiv.m does not).
    t_burn : float
        Integrate this long first and discard it (the saved ``t`` still starts at 0).

    References: paper §5 (KS data: T = 2.5, N_t = 25, 512 points); Kassam & Trefethen (2005), kursiv.m.
    """
    return _solve(u0, lambda k: k**2 - nu * k**4, "ks", nu, length, t_final, dt, save_dt, dealias, n_contour,
                  t_burn)


def solve_burgers(u0: np.ndarray | torch.Tensor, *, nu: float = 0.01, length: float = 2 * math.pi,
                  t_final: float = 2.5, dt: float = 0.005, save_dt: float = 0.1, dealias: bool = True,
                  n_contour: int = 32, t_burn: float = 0.0) -> Trajectories:
    """Solve viscous Burgers ``u_t + u u_x = ν u_xx`` on ``[0, L)`` (periodic) with ETDRK4.

    Linear symbol ``L̂(k) = −ν k²``, nonlinear term ``−½ i k FFT(u²)`` (2/3-dealiased by default because low
    viscosity steepens fronts towards the grid scale).

    References: paper §5 (Burgers experiments); Kassam & Trefethen (2005).
    """
    return _solve(u0, lambda k: -nu * k**2, "burgers", nu, length, t_final, dt, save_dt, dealias, n_contour,
                  t_burn)


def _sine_sum(n: int, n_x: int, length: float, rng: np.random.Generator, *, n_terms: int, amplitude: float,
              max_wave: int) -> np.ndarray:
    x = np.arange(n_x) * (length / n_x)
    a = rng.uniform(-amplitude, amplitude, size=(n, n_terms, 1))
    l = rng.integers(1, max_wave + 1, size=(n, n_terms, 1))
    phi = rng.uniform(0, 2 * np.pi, size=(n, n_terms, 1))
    return np.sum(a * np.sin(2 * np.pi * l * x / length + phi), axis=1)


def ks_initial_condition(n: int, n_x: int = 512, length: float = 64.0, *, seed: int = 0, n_terms: int = 10,
                         amplitude: float = 0.5, max_wave: int = 3) -> np.ndarray:
    """Random KS initial conditions ``Σ_j A_j sin(2π l_j x / L + φ_j)`` (LPSDA-style).

    ``A_j ~ U[−a, a]``, ``l_j ∈ {1..max_wave}``, ``φ_j ~ U[0, 2π)``; shape ``(n, n_x)``.

    References: Brandstetter et al., "Lie point symmetry data augmentation" (2022), KS data; paper §5.
    """
    return _sine_sum(n, n_x, length, np.random.default_rng(seed), n_terms=n_terms, amplitude=amplitude,
                     max_wave=max_wave)


def burgers_initial_condition(n: int, n_x: int = 512, length: float = 2 * math.pi, *, seed: int = 0,
                              n_terms: int = 5, amplitude: float = 0.5, max_wave: int = 3) -> np.ndarray:
    """Random Burgers initial conditions, the same sine sum as :func:`ks_initial_condition`."""
    return _sine_sum(n, n_x, length, np.random.default_rng(seed), n_terms=n_terms, amplitude=amplitude,
                     max_wave=max_wave)
