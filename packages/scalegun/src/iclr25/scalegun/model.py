"""The noisy one-vs-rest logistic regression on the propagated embeddings, in torch float64.

For class k with labels ``y_ik in {-1, +1}`` and the active training rows ``i`` (weight ``t_i in {0, 1}``):

    L_k(w) = sum_i t_i log(1 + exp(-y_ik w^T z_i)) + (lam n / 2) ||w||^2 + b_k^T w,   n = sum_i t_i,

    grad L_k(w) = sum_i t_i (-y_ik sigma(-y_ik w^T z_i)) z_i + lam n w + b_k,
    H_k(w)      = sum_i t_i sigma(w^T z_i)(1 - sigma(w^T z_i)) z_i z_i^T + lam n I.

All C classes are handled at once: ``W`` has shape ``(F, C)``.

References: ScaleGUN Sec. 4 (objective perturbation, Eq. (3)); Guo et al. (2020) "Certified data removal",
Algorithm 1 and Theorem 1; Chien et al. (2023) "Certified graph unlearning".
"""

from __future__ import annotations

import torch

__all__ = ["train_ovr", "ovr_gradient", "ovr_hessian", "row_gradient_terms"]


def row_gradient_terms(W: torch.Tensor, Z: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Per-row loss derivatives ``l'(w_k^T z_i) = -y_ik sigma(-y_ik w_k^T z_i)``, shape ``(n, C)``."""
    return -Y * torch.sigmoid(-Y * (Z @ W))


def ovr_gradient(W: torch.Tensor, Z: torch.Tensor, Y: torch.Tensor, t: torch.Tensor, lam: float,
                 b: torch.Tensor | None = None) -> torch.Tensor:
    """``grad L_k(w_k)`` for every class, shape ``(F, C)`` (summed loss, ``lam * n`` regulariser, noise ``b``)."""
    n = float(t.sum())
    G = Z.T @ (t[:, None] * row_gradient_terms(W, Z, Y)) + lam * n * W
    return G if b is None else G + b


def ovr_hessian(W: torch.Tensor, Z: torch.Tensor, Y: torch.Tensor, t: torch.Tensor, lam: float) -> torch.Tensor:
    """Hessians ``H_k``, shape ``(C, F, F)``, from one GEMM over all classes."""
    n_rows, F = Z.shape
    C = W.shape[1]
    s = torch.sigmoid(Z @ W)
    S = t[:, None] * s * (1.0 - s)  # (n, C)
    weighted = (S[:, :, None] * Z[:, None, :]).reshape(n_rows, C * F)
    H = (Z.T @ weighted).reshape(F, C, F).permute(1, 0, 2)
    eye = torch.eye(F, dtype=Z.dtype, device=Z.device)
    return H + lam * float(t.sum()) * eye


def _objective(W: torch.Tensor, Z: torch.Tensor, Y: torch.Tensor, t: torch.Tensor, lam: float,
               b: torch.Tensor, n: float) -> tuple[float, torch.Tensor]:
    """The objective divided by ``n`` and its analytic gradient."""
    M = -Y * (Z @ W)
    loss = (t[:, None] * torch.nn.functional.softplus(M)).sum() + 0.5 * lam * n * (W * W).sum() + (b * W).sum()
    grad = Z.T @ (t[:, None] * (-Y * torch.sigmoid(M))) + lam * n * W + b
    return float(loss) / n, grad / n


def train_ovr(Z: torch.Tensor, Y: torch.Tensor, t: torch.Tensor, lam: float, b: torch.Tensor, *,
              max_iter: int = 100, tol: float = 1e-10, history: int = 10) -> torch.Tensor:
    """Minimise ``sum_k L_k`` with L-BFGS from ``W = 0`` (two-loop recursion, Armijo backtracking).

    The optimiser sees the objective divided by ``n`` (same minimiser, better scaled), as the reference does;
    it stops after ``max_iter`` iterations or when the largest gradient entry is below ``tol``. Written out
    here (analytic gradients, no autograd) because ``torch.optim`` costs seconds of import time.

    References: ScaleGUN Sec. 5 (L-BFGS training of the linear model), Guo et al. (2020) Sec. 4;
    Nocedal & Wright (2006) Algorithm 7.4.
    """
    n = float(t.sum())
    if n <= 0:
        raise ValueError("the training set is empty: every training node has been removed")
    W = torch.zeros(Z.shape[1], Y.shape[1], dtype=Z.dtype, device=Z.device)
    f, g = _objective(W, Z, Y, t, lam, b, n)
    S: list[torch.Tensor] = []
    Yh: list[torch.Tensor] = []
    for _ in range(max_iter):
        if float(g.abs().max()) <= tol:
            break
        # two-loop recursion: d = -H_k g
        q = g.clone()
        alphas = []
        for s_i, y_i in zip(reversed(S), reversed(Yh), strict=True):
            a = float((s_i * q).sum()) / float((y_i * s_i).sum())
            alphas.append(a)
            q -= a * y_i
        if S:
            q *= float((S[-1] * Yh[-1]).sum()) / float((Yh[-1] * Yh[-1]).sum())
        else:
            q /= max(1.0, float(g.norm()))
        for (s_i, y_i), a in zip(zip(S, Yh, strict=True), reversed(alphas), strict=True):
            beta = float((y_i * q).sum()) / float((y_i * s_i).sum())
            q += (a - beta) * s_i
        d = -q
        slope = float((g * d).sum())
        if slope >= 0:  # not a descent direction: restart from steepest descent
            S.clear()
            Yh.clear()
            d, slope = -g, -float((g * g).sum())
        step = 1.0
        for _ in range(40):
            W_new = W + step * d
            f_new, g_new = _objective(W_new, Z, Y, t, lam, b, n)
            if f_new <= f + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            break
        s_k, y_k = W_new - W, g_new - g
        if float((s_k * y_k).sum()) > 1e-20:
            S.append(s_k)
            Yh.append(y_k)
            if len(S) > history:
                S.pop(0)
                Yh.pop(0)
        W, f, g = W_new, f_new, g_new
    return W
