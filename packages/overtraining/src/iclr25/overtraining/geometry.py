"""Representation geometry of a hidden layer: max-margin SVM margin, Fisher discriminant, kernel–task alignment
and example flips.

**Normalised margin.** The raw margin of a separator grows with the scale of the features, which grows during
training. We therefore divide the features by their root-mean-square norm over the examples,

    h̃_i = h_i / r,   r = sqrt( (1/n) Σ_i ‖h_i‖² ),

(one scalar per layer and checkpoint, so the geometry is unchanged) and report the geometric margin of the
hard-margin linear SVM with a bias on (h̃, y):

    γ = max_{w, b} min_i y_i (w·h̃_i + b) / ‖w‖ = ½ dist(conv{h̃_i : y_i = +1}, conv{h̃_i : y_i = −1}).

It is scale-free: a feature map that only grows in norm keeps its γ.

References: Kumar et al., ICLR 2025, Sec. 3 (margin, FLD, flips, after-kernel alignment); Soudry et al., JMLR
2018 (max-margin limit of logistic GD); Cristianini et al., NeurIPS 2001 (kernel–target alignment).
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["MarginResult", "svm_margin", "rms_normalise", "normalised_margin", "fisher_discriminant",
           "fisher_ridge_share", "kernel_alignment", "ExampleFlips", "example_flips", "NotSeparableError",
           "SignedMargin", "signed_margin"]


class NotSeparableError(ValueError):
    """The two classes are not linearly separable, so the hard-margin SVM does not exist."""


@dataclasses.dataclass(frozen=True)
class MarginResult:
    """A hard-margin linear SVM: ``w`` (unit norm), ``b``, geometric ``margin`` = min_i y_i(w·x_i + b), the
    dual weights ``alpha`` (Σ over each class = 1 in the convex-hull form) and the ``support`` indices."""

    w: np.ndarray
    b: float
    margin: float
    alpha: np.ndarray
    support: np.ndarray


def _check_xy(X: object, y: object, name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    try:
        Xa = np.asarray(X, dtype=np.float64)
        ya = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} and y must be numeric arrays ({exc})") from None
    if Xa.ndim != 2 or Xa.shape[0] < 2 or Xa.shape[1] < 1:
        raise ValueError(f"{name} must be an (n_examples >= 2, n_features) array, got shape {Xa.shape}")
    if ya.shape != (Xa.shape[0],):
        raise ValueError(f"y must have shape ({Xa.shape[0]},) to match {name}, got {ya.shape}")
    if not (np.all(np.isfinite(Xa)) and np.all(np.isfinite(ya))):
        raise ValueError(f"{name} and y must be finite (no NaN or inf)")
    if not np.all(np.isin(ya, (-1.0, 1.0))):
        raise ValueError("y must hold labels -1 and +1 only")
    if np.all(ya == ya[0]):
        raise ValueError("y must contain both classes (-1 and +1)")
    return Xa, ya


def svm_margin(X: object, y: object, *, fit_intercept: bool = True, tol: float = 1e-9) -> MarginResult:
    """The hard-margin linear SVM of (X, y) and its geometric margin, by its convex-hull dual.

    With a bias the SVM is the closest pair of points of the two class hulls,

        min_{α, β ∈ Δ} ‖X₊ᵀα − X₋ᵀβ‖²,  w ∝ X₊ᵀα − X₋ᵀβ,  γ = ½‖X₊ᵀα − X₋ᵀβ‖;

    without a bias (``fit_intercept=False``) it is the min-norm point of conv{y_i x_i}: γ = min_{α∈Δ}‖Σ α_i y_i x_i‖.
    Solved as a non-negative least-squares problem (Lawson–Hanson active set, the simplex sums as heavily
    weighted rows), then polished on its support set by the exact KKT linear system (y_i(w·x_i + b) = 1 on the
    support), which gives the margin to machine precision.

    Raises :class:`NotSeparableError` (a ``ValueError``) when no hyperplane separates the classes.

    Examples
    --------
    >>> r = svm_margin([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 1.0]], [-1, -1, 1, 1])
    >>> round(r.margin, 6), np.round(r.w, 6).tolist()
    (1.5, [1.0, 0.0])
    """
    Xa, ya = _check_xy(X, y)
    scale = float(np.sqrt(np.mean(np.sum(Xa ** 2, axis=1)))) or 1.0
    Z = Xa / scale
    n = len(ya)
    pos, neg = np.flatnonzero(ya > 0), np.flatnonzero(ya < 0)
    if fit_intercept:
        A = np.concatenate([Z[pos], -Z[neg]])           # u = Aᵀ[α; β]
        groups = [np.arange(len(pos)), len(pos) + np.arange(len(neg))]
        order = np.concatenate([pos, neg])
    else:
        A = ya[:, None] * Z
        groups = [np.arange(n)]
        order = np.arange(n)
    # min ‖Aᵀa‖² over a ≥ 0 with the group sums = 1 (enforced by a heavily weighted row per group): an NNLS
    # problem, solved by Lawson–Hanson's exact active-set method; its support set then fixes the SVM exactly.
    from scipy.optimize import nnls

    M = 1e4
    Gm = np.zeros((len(groups), n))
    for r, g in enumerate(groups):
        Gm[r, g] = M
    a, _ = nnls(np.vstack([A.T, Gm]), np.concatenate([np.zeros(Z.shape[1]), np.full(len(groups), M)]),
                maxiter=50 * n)
    u = A.T @ a
    dist = float(np.linalg.norm(u))
    w = u / dist if dist > 0 else u
    proj_ = Z @ w
    b = -0.5 * (proj_[pos].min() + proj_[neg].max()) if fit_intercept else 0.0
    f = ya * (proj_ + b)
    if dist <= 1e-8 or f.min() <= tol:
        where = "" if fit_intercept else " through the origin"
        raise NotSeparableError(f"the classes are not linearly separable{where} (smallest signed distance "
                                f"{f.min() * scale:.3g}); the hard-margin SVM needs separable data")
    alpha = np.zeros(n)
    alpha[order] = a
    S = np.flatnonzero(alpha > 1e-10 * alpha.max())
    sol = _kkt(Z, ya, S, fit_intercept)
    if sol is not None:
        lam, w2, b2 = sol
        g2 = ya * (Z @ w2 + b2)
        if np.all(lam >= -1e-10) and g2.min() >= 1.0 - 1e-9:
            nw = float(np.linalg.norm(w2))
            w, b, f = w2 / nw, b2 / nw, g2 / nw
    support = np.flatnonzero(f <= f.min() * (1.0 + 1e-7) + 1e-15)
    return MarginResult(w=w, b=float(b * scale), margin=float(f.min() * scale), alpha=alpha, support=support)


def _kkt(Z: np.ndarray, y: np.ndarray, S: np.ndarray, fit_intercept: bool
         ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """λ, w, b with y_i(w·z_i + b) = 1 on S, w = Σ_S λ_i y_i z_i, Σ_S λ_i y_i = 0 (the KKT system on a support set)."""
    ZS, yS = Z[S], y[S]
    K = (yS[:, None] * yS[None, :]) * (ZS @ ZS.T)
    m = len(S)
    if fit_intercept:
        M = np.zeros((m + 1, m + 1))
        M[:m, :m], M[:m, m], M[m, :m] = K, yS, yS
        rhs = np.concatenate([np.ones(m), [0.0]])
    else:
        M, rhs = K, np.ones(m)
    sol, *_ = np.linalg.lstsq(M, rhs, rcond=None)
    lam = sol[:m]
    w = (lam * yS) @ ZS
    if not np.all(np.isfinite(w)) or not np.any(w):
        return None
    return lam, w, (float(sol[m]) if fit_intercept else 0.0)


def rms_normalise(H: object) -> np.ndarray:
    """h_i / r with r = sqrt(mean_i ‖h_i‖²): the normalisation of every margin this package reports."""
    Ha = np.asarray(H, dtype=np.float64)
    r = float(np.sqrt(np.mean(np.sum(Ha ** 2, axis=1))))
    return Ha / r if r > 0 else Ha


def normalised_margin(H: object, y: object, *, require_separable: bool = True) -> float:
    """Hard-margin SVM margin (with bias) of the RMS-normalised features; ``nan`` for non-separable features when
    ``require_separable=False``, else :class:`NotSeparableError`."""
    Ha, ya = _check_xy(H, y, "H")
    try:
        return svm_margin(rms_normalise(Ha), ya).margin
    except NotSeparableError:
        if require_separable:
            raise
        return float("nan")


@dataclasses.dataclass(frozen=True)
class SignedMargin:
    """A margin defined on every day: ``value`` is the hard margin when ``separable``, else the signed margin of
    the soft-margin SVM (negative: how far its worst example lies on the wrong side)."""

    value: float
    separable: bool

    @property
    def kind(self) -> str:
        return "hard" if self.separable else "soft"


def signed_margin(H: object, y: object, *, C: float = 1e4) -> SignedMargin:
    """The normalised margin extended to classes that are not linearly separable.

    On RMS-normalised features h̃ (see :func:`rms_normalise`):

        separable:      γ = hard-margin SVM margin (as :func:`normalised_margin`), > 0;
        not separable:  γ = min_i y_i (w·h̃_i + b) / ‖w‖ ≤ 0, with (w, b) the soft-margin linear SVM
                        (hinge loss, penalty ``C``, sklearn ``SVC(kernel="linear")``),

    so the measure is continuous in sign across the separability boundary and a trend over days can use every
    day. The soft branch is flagged (``separable=False``): it is the best direction of a soft-margin fit, not
    the exact max-min of the (non-convex) signed-margin problem.

    Examples
    --------
    >>> signed_margin([[0.0], [1.0], [3.0], [4.0]], [-1, -1, 1, 1]).separable
    True
    >>> m = signed_margin([[0.0], [2.0], [1.0], [3.0]], [-1, -1, 1, 1])
    >>> m.separable, m.value < 0
    (False, True)
    """
    Ha, ya = _check_xy(H, y, "H")
    if not (isinstance(C, (int, float)) and C > 0 and np.isfinite(C)):
        raise ValueError(f"C must be a finite number > 0, got {C!r}")
    Z = rms_normalise(Ha)
    try:
        return SignedMargin(svm_margin(Z, ya).margin, True)
    except NotSeparableError:
        pass
    from sklearn.svm import SVC

    clf = SVC(kernel="linear", C=C, tol=1e-6).fit(Z, ya)
    w, b = clf.coef_.ravel(), float(clf.intercept_[0])
    nw = float(np.linalg.norm(w))
    if nw == 0:
        return SignedMargin(0.0, False)
    return SignedMargin(float(np.min(ya * (Z @ w + b)) / nw), False)


def _fisher_terms(H: object, y: object, ridge: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``(Δμ, S_w, ε)`` of :func:`fisher_discriminant`, after checking the inputs."""
    Ha, ya = _check_xy(H, y, "H")
    if not (isinstance(ridge, (int, float)) and ridge > 0):
        raise ValueError(f"ridge must be a number > 0, got {ridge!r}")
    P, N = Ha[ya > 0], Ha[ya < 0]
    dmu = P.mean(0) - N.mean(0)
    Sw = 0.5 * (np.cov(P, rowvar=False, bias=True).reshape(Ha.shape[1], -1)
                + np.cov(N, rowvar=False, bias=True).reshape(Ha.shape[1], -1))
    eps = ridge * max(float(np.trace(Sw)) / Ha.shape[1], 1e-300)
    return dmu, Sw, eps


def fisher_discriminant(H: object, y: object, *, ridge: float = 1e-3) -> float:
    """Fisher's criterion of the best linear projection,

        J = Δμᵀ (S_w + εI)⁻¹ Δμ,   Δμ = μ₊ − μ₋,   S_w = ½(Σ₊ + Σ₋),   ε = ridge · tr(S_w)/d,

    the squared distance between the class means in units of the within-class spread (the ridge keeps it finite
    when there are more neurons than examples). Scale-free."""
    dmu, Sw, eps = _fisher_terms(H, y, ridge)
    return float(dmu @ np.linalg.solve(Sw + eps * np.eye(len(dmu)), dmu))


def fisher_ridge_share(H: object, y: object, *, ridge: float = 1e-3) -> float:
    """The share of :func:`fisher_discriminant` that comes from directions the ridge decides.

    With S_w = Σ_k λ_k v_k v_kᵀ, J = Σ_k (v_k·Δμ)² / (λ_k + ε); the share is the part of that sum from the
    directions with λ_k < ε (where the ridge, not the data, sets the denominator). With more neurons than
    examples S_w is singular and the share is close to 1: J then measures the ridge (values ~1/ε), not the
    class separation. Compare J across days only where the share is small.
    """
    dmu, Sw, eps = _fisher_terms(H, y, ridge)
    lam, V = np.linalg.eigh(Sw)
    terms = (V.T @ dmu) ** 2 / (np.maximum(lam, 0.0) + eps)
    total = float(terms.sum())
    return float(terms[lam < eps].sum() / total) if total > 0 else 0.0


def kernel_alignment(H: object, y: object) -> float:
    """Kernel–task alignment A(K) = yᵀKy / (‖K‖_F ‖y‖²) of the feature kernel K = H Hᵀ (K_t(x, x') = ⟨φ_t(x), φ_t(x')⟩).

    For labels ±1, reversing them (y → −y) leaves A unchanged, which is why features aligned to a task speed up
    relearning its reversal."""
    Ha, ya = _check_xy(H, y, "H")
    K = Ha @ Ha.T
    nk = float(np.linalg.norm(K))
    return float(ya @ K @ ya / (nk * (ya @ ya))) if nk > 0 else 0.0


@dataclasses.dataclass(frozen=True)
class ExampleFlips:
    """Examples wrong at the reference checkpoint that become right and stay right to the last checkpoint.

    ``indices``: those examples; ``flip_at``: for each, the first checkpoint index from which it stays right;
    ``right_to_wrong``: examples right at the reference and wrong at the end."""

    indices: np.ndarray
    flip_at: np.ndarray
    right_to_wrong: np.ndarray

    @property
    def n(self) -> int:
        return int(len(self.indices))


def example_flips(correct: object, *, start: int = 0) -> ExampleFlips:
    """Wrong→right flips in a (n_checkpoints, n_examples) boolean matrix of per-example correctness, counted from
    checkpoint ``start`` on."""
    C = np.asarray(correct)
    if C.ndim != 2 or C.shape[0] < 2 or C.shape[1] < 1:
        raise ValueError(f"correct must be an (n_checkpoints >= 2, n_examples) array, got shape {C.shape}")
    if C.dtype != bool:
        if not np.all(np.isin(C, (0, 1))):
            raise ValueError("correct must hold booleans (or 0/1)")
        C = C.astype(bool)
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < C.shape[0] - 1:
        raise ValueError(f"start must be a checkpoint index in [0, {C.shape[0] - 2}], got {start!r}")
    tail = C[start:]
    # first index from which the example is right through the end
    stays = np.flip(np.logical_and.accumulate(np.flip(tail, 0), axis=0), 0)
    wrong0 = ~tail[0]
    flipped = wrong0 & stays[-1]
    idx = np.flatnonzero(flipped)
    first = np.argmax(stays[:, idx], axis=0) + start if len(idx) else np.zeros(0, dtype=int)
    r2w = np.flatnonzero(tail[0] & ~tail[-1])
    return ExampleFlips(indices=idx, flip_at=np.asarray(first, dtype=int), right_to_wrong=r2w)
