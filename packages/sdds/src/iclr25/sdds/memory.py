"""Peak temporary memory of one compiled training step, the measure behind the paper's memory claim.

References: Sanokowski et al., ICLR 2025, Sec. 3 and Fig. 1 (memory versus number of diffusion steps).
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from .diffusion import SamplerConfig, on_device
from .energy import Energy
from .objectives import init_state, make_train_step

__all__ = ["peak_memory"]


def peak_memory(config: SamplerConfig, energy: Energy, *, seed: int = 0, device: Any = None) -> int:
    """Bytes of temporary buffers XLA allocates for one training epoch of ``config`` (compiled, not run) for
    ``device`` (:func:`~iclr25.sdds.diffusion.on_device`; a GPU's buffer assignment differs from the CPU's).

    ``jax.jit(step).lower(...).compile().memory_analysis().temp_size_in_bytes``: activations kept for the
    backward pass, the collected trajectories and scratch space; parameters and inputs are not included.
    """
    if not isinstance(config, SamplerConfig):
        raise TypeError(f"config must be a SamplerConfig, got {type(config).__name__}")
    with on_device(device) as dev:
        state = init_state(config, energy, jax.random.key(seed))
        params, static = eqx.partition(state, eqx.is_array)
        step = make_train_step(config, energy)

        def run(p, key, temp):
            new_state, metrics = step(eqx.combine(p, static), key, temp)
            return eqx.filter(new_state, eqx.is_array), metrics

        lowered = jax.jit(run).lower(params, jax.random.key(seed), jnp.asarray(1.0, jnp.float32))
        # buffer assignment happens on the HLO, before LLVM code generation: turning the backend optimisation
        # off halves the compile time on the CPU and leaves the reported buffer sizes unchanged
        options = {"xla_backend_optimization_level": 0} if dev.platform == "cpu" else None
        compiled = lowered.compile(compiler_options=options) if options else lowered.compile()
        analysis = compiled.memory_analysis()
    if analysis is None:  # pragma: no cover - backends without the analysis
        raise RuntimeError("this JAX backend does not report memory_analysis()")
    return int(analysis.temp_size_in_bytes)
