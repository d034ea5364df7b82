"""Bernoulli forward (noising) process of the discrete diffusion sampler.

Forward step k = 1..T flips every bit independently with probability beta_k:
p(X_k | X_{k-1}) = prod_i beta_k^[x_k,i != x_{k-1},i] (1 - beta_k)^[x_k,i == x_{k-1},i].
The last forward step has beta_T = 1/2, so X_T is uniform and independent of X_{T-1}: the generative
process starts from the uniform prior q(X_T) = 2^-N.

References: Sanokowski et al., ICLR 2025, Sec. 2 and App. A.1 (Bernoulli noise distribution, schedules).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["SCHEDULES", "beta_schedule", "log_forward"]

SCHEDULES = ("exp", "diffuco")


def beta_schedule(n_steps: int, schedule: str = "exp") -> np.ndarray:
    r"""Flip probabilities beta_k of the forward steps k = 1..T (array index k - 1); beta_T = 1/2.

    * ``"exp"``: :math:`\beta_k = \tfrac12\, 2^{-6 (T - k)/T}` (the paper's exponential schedule);
    * ``"diffuco"``: :math:`\beta_k = 1 / (T - k + 2)` (the DiffUCO schedule).

    References: Sanokowski et al., ICLR 2025, App. A.1.

    Examples
    --------
    >>> beta_schedule(4, "diffuco").tolist()
    [0.2, 0.25, 0.3333333333333333, 0.5]
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    k = np.arange(1, n_steps + 1, dtype=np.float64)
    if schedule == "exp":
        return 0.5 * 2.0 ** (-6.0 * (n_steps - k) / n_steps)
    if schedule == "diffuco":
        return 1.0 / (n_steps - k + 2.0)
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")


def log_forward(x_prev: jax.Array, x_next: jax.Array, beta: jax.Array, node_mask: jax.Array) -> jax.Array:
    """log p(X_k = x_next | X_{k-1} = x_prev) summed over the (unpadded) bits; ``beta`` is beta_k."""
    flip = jnp.abs(x_next - x_prev)
    per_bit = flip * jnp.log(beta) + (1.0 - flip) * jnp.log1p(-beta)
    return jnp.sum(node_mask * per_bit, axis=-1)
