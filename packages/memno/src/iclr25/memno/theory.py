"""The paper's theoretical point on a linear PDE: with unresolved modes, memory beats any Markovian model.

For ``u_t = ν u_xx + c(x) u`` on ``[0, 2π)`` with ``c(x) = 2a cos(q x)`` the Fourier coefficients obey the
linear system

    dû_m/dt = −ν m² û_m + a (û_{m−q} + û_{m+q}),

so the multiplication by ``c`` couples each resolved mode ``|m| ≤ K`` to unresolved ones ``|m| > K``. By
Mori-Zwanzig, the exact evolution of the resolved part ``P û`` is a Markovian term plus a memory integral over
its past. We fit least-squares linear predictors ``P û(t+Δ) ≈ Σ_{j=0}^{h} W_j P û(t − jΔ)`` with ``h`` past
frames and compare their test errors: the Markovian one (``h = 0``) cannot represent the memory term.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from iclr25.utils.seeding import check_seed

__all__ = ["MoriZwanzigResult", "mori_zwanzig_toy"]


@dataclasses.dataclass(frozen=True)
class MoriZwanzigResult:
    """Relative one-step test errors of linear predictors of the resolved modes.

    Attributes
    ----------
    history : tuple of int
        Number of extra past frames used by each predictor (0 = Markovian).
    errors : np.ndarray
        ``‖P û_pred − P û‖ / ‖P û‖`` on held-out trajectories, one per entry of ``history``.
    """

    history: tuple[int, ...]
    errors: np.ndarray

    @property
    def memory_gain(self) -> float:
        """``errors[0] / errors[1]``: how much one past frame reduces the Markovian error."""
        return float(self.errors[0] / self.errors[1])


def mori_zwanzig_toy(history: tuple[int, ...] = (0, 1, 2), *, nu: float = 0.02, a: float = 0.75, q: int = 6,
                     n_resolved: int = 8, n_modes: int = 48, dt: float = 0.1, n_steps: int = 20,
                     n_train: int = 200, n_test: int = 100, seed: int = 0) -> MoriZwanzigResult:
    """Fit and test linear next-frame predictors of the resolved modes with ``h`` extra past frames.

    Parameters
    ----------
    history : tuple of int
        The numbers of extra past frames to try (0 = Markovian).
    nu, a, q : float, float, int
        ``u_t = ν u_xx + 2a cos(q x) u`` (the note's example: ``c = 1.5 cos 6x``).
    n_resolved : int
        Observed modes ``|m| ≤ n_resolved``.
    n_modes : int
        Modes ``|m| ≤ n_modes`` of the full (exactly integrated) system.
    dt, n_steps : float, int
        Frame spacing and number of frames per trajectory.
    n_train, n_test : int
        Trajectories for fitting and for testing; initial conditions are random on the resolved modes.
    seed : int, keyword-only
        Seed of the initial conditions.

    Notes
    -----
    Computes on the CPU in float64/complex128 (exact least squares with LAPACK's ``gelsd``, which torch has on
    the CPU only; a fraction of a second), whatever ``--device`` the command was given.

    References: MemNO paper §3 (Mori-Zwanzig; linear examples where memory is arbitrarily better than any
    Markovian model).
    """
    seed = check_seed(seed)
    history = tuple(int(h) for h in history)
    if not history or min(history) < 0:
        raise ValueError(f"history must be a non-empty tuple of integers >= 0, got {history!r}")
    if not 0 < n_resolved < n_modes:
        raise ValueError(f"need 0 < n_resolved < n_modes, got n_resolved={n_resolved}, n_modes={n_modes}")
    if max(history) + 1 >= n_steps:
        raise ValueError(f"n_steps must exceed max(history) + 1 = {max(history) + 1}, got {n_steps}")
    m = np.arange(-n_modes, n_modes + 1)
    gen = np.diag(-nu * m.astype(float) ** 2)
    idx = np.arange(m.size)
    for shift in (q, -q):
        ok = (idx + shift >= 0) & (idx + shift < m.size)
        gen[idx[ok], idx[ok] + shift] = a
    # the generator is real symmetric, so its exponential comes from an eigendecomposition
    lam, vec = torch.linalg.eigh(torch.from_numpy(gen))
    prop = ((vec * torch.exp(lam * dt)) @ vec.T).to(torch.complex128)
    # the fits run in torch (its thread count is what the caller set: one thread on a shared machine), not in
    # numpy's multi-threaded BLAS, which oversubscribes a loaded 2-core machine by 10x for these tiny solves
    resolved = np.abs(m) <= n_resolved
    rng = np.random.default_rng(seed)

    def trajectories(n: int) -> np.ndarray:
        v = np.zeros((n, m.size), dtype=complex)
        v[:, resolved] = rng.standard_normal((n, resolved.sum())) + 1j * rng.standard_normal((n, resolved.sum()))
        v = 0.5 * (v + np.conj(v[:, ::-1]))  # conjugate symmetry: a real field u(x)
        frames = [torch.from_numpy(v)]
        for _ in range(n_steps - 1):
            frames.append(frames[-1] @ prop.T)
        return torch.stack(frames, dim=1)[..., torch.from_numpy(resolved)]  # (n, n_steps, n_observed)

    train, test = trajectories(n_train), trajectories(n_test)
    errors = []
    for h in history:
        def features(tr: torch.Tensor, h: int = h) -> tuple[torch.Tensor, torch.Tensor]:
            t = tr.shape[1]
            x = torch.cat([tr[:, h - j: t - 1 - j] for j in range(h + 1)], dim=-1)
            return x.reshape(-1, x.shape[-1]), tr[:, h + 1:].reshape(-1, tr.shape[-1])

        x_tr, y_tr = features(train)
        w = torch.linalg.lstsq(x_tr, y_tr, driver="gelsd").solution
        x_te, y_te = features(test)
        errors.append(float(torch.linalg.vector_norm(x_te @ w - y_te) / torch.linalg.vector_norm(y_te)))
    return MoriZwanzigResult(history=history, errors=np.asarray(errors))
