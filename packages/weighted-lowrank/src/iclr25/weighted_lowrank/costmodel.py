"""Flop model of one alternating round, printed beside the measured times.

One half-step solves ``rows`` regressions of length ``cols`` against a ``cols × k`` factor with ``nnz`` stored
weights (``rows · cols`` for dense ``W``: a dense product touches every entry, zero or not). Counting a
multiply-add as 2 flops:

- exact (LLR16): Gram GEMM ``nnz · k(k+1)`` + right-hand sides ``2 nnz k`` + batched LU solves
  ``rows (2/3 k^3 + 2 k^2)``  →  ``Θ(‖W‖_0 k^2)``;
- sketch (this paper): sketch ``2 nnz k`` (CountSketch; Gaussian ``2 nnz s k``; SRHT ``≈ 5 rows·cols·k·log2(cols)``),
  sketched Gram ``2 rows s k^2``, Cholesky + triangular inverse + ``P`` ``rows · k^3``, right-hand sides
  ``2 nnz k``, and ``(steps + 1)`` products with the normal operator, ``4 nnz k + 2 rows k^2`` each
  →  ``Θ(‖W‖_0 k · steps + rows · s k^2)``;
- pcg: ``(steps + 1) (4 nnz k + 4 rows k^2) + 2 nnz k + k^3``.

References: Song, Ye, Yin, Zhang (ICLR 2025), Theorem 1.2 / Appendix C (runtime ``Õ(‖W‖_0 k)`` per
regression round against LLR16's ``O(‖W‖_0 k^2)``).
"""

from __future__ import annotations

import math

__all__ = ["half_step_flops", "round_flops"]


def half_step_flops(rows: int, cols: int, k: int, *, nnz: int | None = None, solver: str = "sketch",
                    sketch: str = "countsketch", sketch_size: int | None = None, steps: int = 10) -> float:
    """Flops of one half-step (all ``rows`` regressions); see the module docstring for the terms."""
    nnz = rows * cols if nnz is None else int(nnz)
    if solver == "exact":
        return nnz * k * (k + 1) + 2.0 * nnz * k + rows * (2.0 / 3.0 * k**3 + 2.0 * k * k)
    if solver == "pcg":
        return (steps + 1) * (4.0 * nnz * k + 4.0 * rows * k * k) + 2.0 * nnz * k + k**3
    if solver != "sketch":
        raise ValueError(f"solver must be 'exact', 'sketch' or 'pcg', got {solver!r}")
    s = 4 * k if sketch_size is None else int(sketch_size)
    if sketch == "gaussian":
        sk = 2.0 * nnz * s * k
    elif sketch == "srht":
        sk = 5.0 * rows * cols * (k + 1) * math.log2(max(cols, 2))
    else:
        sk = 2.0 * nnz * k
    return (sk + 2.0 * rows * s * k * k + rows * k**3 + 2.0 * nnz * k
            + (steps + 1) * (4.0 * nnz * k + 2.0 * rows * k * k))


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
