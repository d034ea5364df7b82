"""The noisy one-vs-rest logistic regression on the propagated embeddings, in torch float64.

For class k with labels ``y_ik in {-1, +1}`` and the active training rows ``i`` (weight ``t_i in {0, 1}``):

    L_k(w) = sum_i t_i log(1 + exp(-y_ik w^T z_i)) + (lam n / 2) ||w||^2 + b_k^T w,   n = sum_i t_i,

    grad L_k(w) = sum_i t_i (-y_ik sigma(-y_ik w^T z_i)) z_i + lam n w + b_k,
    H_k(w)      = sum_i t_i sigma(w^T z_i)(1 - sigma(w^T z_i)) z_i z_i^T + lam n I.

All C classes are handled at once: ``W`` has shape ``(F, C)``. Every function computes on the device of its
inputs (``Z``), in float64 there (:class:`~iclr25.scalegun.CertifiedUnlearner` ``device=``).

References: ScaleGUN Sec. 4 (objective perturbation, Eq. (3)); Guo et al. (2020) "Certified data removal",
Algorithm 1 and Theorem 1; Chien et al. (2023) "Certified graph unlearning".
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["model_device", "train_ovr", "ovr_gradient", "ovr_hessian", "ovr_hvp", "newton_solve_cg", "row_gradient_terms"]


def model_device(device: Any = None) -> torch.device:
    """The ``torch.device`` of a ``device=`` argument (:func:`iclr25.utils.device.torch_device`: ``None`` is
    ``$ICLR25_DEVICE``, else ``auto``, the GPU when torch sees one); ``mps`` is refused in one line, since the
    model and its certificate compute in float64, which MPS lacks."""
    from iclr25.utils.device import torch_device  # noqa: PLC0415

    dev = torch_device(device)
    if dev.type == "mps":
        raise ValueError("--device mps: the certified unlearner computes in float64 (its bounds assume it), which "
                         "MPS lacks; use --device cpu or cuda")
    return dev


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
              max_iter: int = 100, tol: float = 1e-10, history: int = 10, n: float | None = None) -> torch.Tensor:
    """Minimise ``sum_k L_k`` with L-BFGS from ``W = 0`` (two-loop recursion, Armijo backtracking).

    The optimiser sees the objective divided by ``n`` (same minimiser, better scaled), as the reference does;
    it stops after ``max_iter`` iterations or when the largest gradient entry is below ``tol``. Written out
    here (analytic gradients, no autograd) because ``torch.optim`` costs seconds of import time.

    References: ScaleGUN Sec. 5 (L-BFGS training of the linear model), Guo et al. (2020) Sec. 4;
    Nocedal & Wright (2006) Algorithm 7.4.

    ``n``: the number of active rows, ``sum(t)`` (default: computed from ``t``; the unlearner passes the count it
    keeps on the host, which saves a device round trip).
    """
    n = float(t.sum()) if n is None else float(n)
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


def ovr_hvp(V: torch.Tensor, Z: torch.Tensor, S: torch.Tensor, lam_n: float) -> torch.Tensor:
    """Hessian-vector products ``H_k v_k = Z^T (s_k * (Z v_k)) + lam n v_k`` for all classes, ``V (F, C)``,
    with ``S = t * sigma(Zw)(1 - sigma(Zw))`` of shape ``(n, C)``; ``O(n F C)`` instead of ``O(n F^2 C)``."""
    return Z.T @ (S * (Z @ V)) + lam_n * V


def newton_solve_cg(W: torch.Tensor, Z: torch.Tensor, t: torch.Tensor, lam: float, rhs: torch.Tensor,
                    gram: torch.Tensor, *, rtol: float = 1e-10, max_iter: int | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Solve ``H_k(W) x_k = rhs_k`` for every class by preconditioned conjugate gradients on
    Hessian-vector products (no ``F x F`` Hessian is formed).

    The preconditioner is ``M_k = c_k K + lam n I`` with ``K = Z^T diag(t) Z`` (kept by the caller) and
    ``c_k`` the mean of ``sigma(1 - sigma)`` over the active rows, applied through one eigendecomposition of
    ``K``. Iterates until ``||rhs_k - H_k x_k|| <= rtol ||rhs_k||`` for every k (at most ``max_iter``,
    default ``2F``). Returns ``(X (F, C), residual norms (C,), iterations)``; the residual norms are
    recomputed explicitly at the end, because the certificate adds them to the Newton term.

    References: Hestenes & Stiefel (1952); Nocedal & Wright (2006) Algorithm 5.3 (preconditioned CG);
    the Newton step of Guo et al. (2020), Algorithm 1.
    """
    F = Z.shape[1]
    max_iter = 2 * F if max_iter is None else max_iter
    s = torch.sigmoid(Z @ W)
    S = t[:, None] * s * (1.0 - s)
    n = float(t.sum())
    lam_n = lam * n
    evals, U = torch.linalg.eigh(gram)
    c = S.sum(dim=0) / max(n, 1.0)  # (C,)
    inv = 1.0 / (c[None, :] * evals.clamp(min=0.0)[:, None] + lam_n)  # (F, C)

    def precond(R: torch.Tensor) -> torch.Tensor:
        return U @ (inv * (U.T @ R))

    X = torch.zeros_like(rhs)
    R = rhs.clone()
    target = rtol * torch.linalg.vector_norm(rhs, dim=0)
    Pz = precond(R)
    P = Pz.clone()
    rz = (R * Pz).sum(dim=0)
    it = 0
    while it < max_iter and bool((torch.linalg.vector_norm(R, dim=0) > target).any()):
        AP = ovr_hvp(P, Z, S, lam_n)
        pap = (P * AP).sum(dim=0)
        live = torch.linalg.vector_norm(R, dim=0) > target
        alpha = torch.where(live & (pap > 0), rz / torch.where(pap > 0, pap, 1.0), torch.zeros_like(rz))
        X = X + alpha * P
        R = R - alpha * AP
        Pz = precond(R)
        rz_new = (R * Pz).sum(dim=0)
        beta = torch.where(rz > 0, rz_new / torch.where(rz > 0, rz, 1.0), torch.zeros_like(rz))
        P = Pz + beta * P
        rz = rz_new
        it += 1
    res = torch.linalg.vector_norm(rhs - ovr_hvp(X, Z, S, lam_n), dim=0)
    return X, res, it


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch CPU threads, restoring the caller's setting afterwards (``None``: unchanged)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def with_threads(method: Callable) -> Callable:
    """Method decorator: run under the instance's ``torch_threads`` on CPU devices."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with torch_threads(self.torch_threads if self.device.type == "cpu" else None):
            return method(self, *args, **kwargs)
    return wrapper
