"""Flop model of one half-step and one alternating round, printed beside the measured times.

One half-step solves ``rows`` regressions of length ``cols`` against a ``cols × k`` factor with ``nnz`` stored
weights (``rows · cols`` for dense ``W``: a dense product touches every entry, zero or not). Counting a
multiply-add as 2 flops:

- exact (LLR16): Gram GEMM ``W^{∘2} Z`` ``nnz · k(k+1)`` (``Z`` built once per half-step: ``cols · k(k+1)/2``
  multiplications, counted) + right-hand sides ``2 nnz k`` + batched LU solves ``rows (2/3 k^3 + 2 k^2)``
  →  ``Θ(‖W‖_0 k^2)``;
- sketch (this paper): sketch ``2 nnz k`` (CountSketch; Gaussian ``2 nnz s k``; SRHT ``≈ 5 rows·cols·k·log2(cols)``),
  sketched Gram ``2 rows s k^2``, Cholesky ``rows k^3/3`` and the batched triangular inverse ``rows k^3/3``,
  right-hand sides ``2 nnz k``, and ``(steps + 1)`` products with the normal operator, ``4 nnz k`` each, plus
  the preconditioner applied as two triangular matrix-vector products ``4 rows k^2`` per step
  →  ``Θ(‖W‖_0 k · steps + rows · s k^2)``; sparse ``W`` with at most ``s`` weights a row (on average) counts as
  exact, since the solver never sketches up;
- pcg: ``(steps + 1) (4 nnz k + 4 rows k^2) + 2 nnz k + k^3``.

With ``s = 4k``, dense ``W`` (``nnz = rows · cols``) and ``steps + 1 ≈ 15``, the ratio of the two is about
``1 / (60/k + 9k/cols)``: at most ``sqrt(cols / 540) / 2``, reached at ``k ≈ sqrt(6.7 cols)``, so 2× needs
``cols ≳ 8600`` (:func:`two_x_threshold` solves it exactly). For sparse rows with ``m = nnz / rows`` entries
each, the sketched Gram ``2 s k^2 = 8 k^3`` alone exceeds the exact Gram ``m k^2`` whenever ``m < 8k``. The
default ``s`` is ``DEFAULT_SKETCH_FACTOR · k = 8k`` (fewer CG steps: about 9 instead of 16 at ``tol = 1e-6``); as
``m → ∞`` the ratio tends to ``(k + 3) / (4 steps + 8)``, so 2× needs ``steps ≤ (k - 13) / 8`` at any ``s``.

References: Song, Ye, Yin, Zhang (ICLR 2025), Theorem 1.2 / Appendix C (runtime ``Õ(‖W‖_0 k)`` per
regression round against LLR16's ``O(‖W‖_0 k^2)``).
"""

from __future__ import annotations

import math

__all__ = ["half_step_flops", "round_flops", "flop_ratio", "two_x_threshold", "DEFAULT_SKETCH_FACTOR"]

#: Default sketch size ``s = DEFAULT_SKETCH_FACTOR · k`` of the sketched solver (0.2.0: 8, chosen from the measured
#: s / tol ladder in the README: ``s = 8k`` halves the CG steps of ``4k``, which pays for its larger Gram)
DEFAULT_SKETCH_FACTOR = 8


def half_step_flops(rows: int, cols: int, k: int, *, nnz: int | None = None, solver: str = "sketch",
                    sketch: str = "countsketch", sketch_size: int | None = None, steps: int = 10) -> float:
    """Flops of one half-step (all ``rows`` regressions); see the module docstring for the terms."""
    nnz = rows * cols if nnz is None else int(nnz)
    if solver == "exact":
        return (nnz * k * (k + 1) + cols * k * (k + 1) / 2 + 2.0 * nnz * k
                + rows * (2.0 / 3.0 * k**3 + 2.0 * k * k))
    if solver == "pcg":
        return (steps + 1) * (4.0 * nnz * k + 4.0 * rows * k * k) + 2.0 * nnz * k + k**3
    if solver != "sketch":
        raise ValueError(f"solver must be 'exact', 'sketch' or 'pcg', got {solver!r}")
    s = DEFAULT_SKETCH_FACTOR * k if sketch_size is None else int(sketch_size)
    if nnz < rows * cols and nnz <= rows * s:
        # sparse rows with at most s weights on average are solved exactly (the solver never sketches up)
        return half_step_flops(rows, cols, k, nnz=nnz, solver="exact")
    if sketch == "gaussian":
        sk = 2.0 * nnz * s * k
    elif sketch == "srht":
        sk = 5.0 * rows * cols * (k + 1) * math.log2(max(cols, 2))
    else:
        sk = 2.0 * nnz * k
    return (sk + 2.0 * rows * s * k * k + 2.0 / 3.0 * rows * k**3 + 2.0 * nnz * k
            + (steps + 1) * 4.0 * nnz * k + steps * 4.0 * rows * k * k)


def flop_ratio(rows: int, cols: int, k: int, *, nnz: int | None = None, steps: int = 14,
               sketch_size: int | None = None) -> float:
    """Predicted speed-up ``flops(exact) / flops(sketch)`` of one half-step (CountSketch).

    Examples
    --------
    >>> round(flop_ratio(16000, 16000, 256, steps=14, sketch_size=4 * 256), 2)
    2.61
    """
    return (half_step_flops(rows, cols, k, nnz=nnz, solver="exact")
            / half_step_flops(rows, cols, k, nnz=nnz, solver="sketch", steps=steps, sketch_size=sketch_size))


def two_x_threshold(k: int, *, density: float = 1.0, steps: int = 14, sketch_size: int | None = None,
                    target: float = 2.0, max_n: int = 1 << 22) -> int | None:
    """Smallest square size ``n`` (``rows = cols = n``, ``nnz = density · n^2``) whose flop ratio reaches
    ``target`` at rank ``k``, or None when none up to ``max_n`` does (the ratio's limit in ``n`` is below it).

    Examples
    --------
    >>> two_x_threshold(256, steps=14, sketch_size=4 * 256)
    8552
    >>> two_x_threshold(128, density=0.05, steps=14, sketch_size=4 * 128)  # sparse rows: 2x only past n = 1.9 million
    1913882
    """
    def ratio(n: int) -> float:
        return flop_ratio(n, n, k, nnz=int(round(density * n * n)), steps=steps, sketch_size=sketch_size)

    if ratio(max_n) < target:
        return None
    lo, hi = max(k, 1), max_n  # the ratio grows with n: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if ratio(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def round_flops(n: int, d: int, k: int, *, nnz: int | None = None, **kwargs: object) -> float:
    """Flops of one round: the ``n`` row regressions plus the ``d`` column regressions.

    Examples
    --------
    >>> e = round_flops(4000, 4000, 128, solver="exact")
    >>> s = round_flops(4000, 4000, 128, solver="sketch", steps=10)
    >>> round(e / s, 1) > 1
    True
    """
    return half_step_flops(n, d, k, nnz=nnz, **kwargs) + half_step_flops(d, n, k, nnz=nnz, **kwargs)
