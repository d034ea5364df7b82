"""iclr25.sdds: Scalable Discrete Diffusion Samplers (Sanokowski et al., ICLR 2025).

Discrete diffusion samplers for unnormalised distributions over binary variables, trained with the paper's
memory-efficient objectives (reverse KL as PPO over diffusion steps, forward KL with self-normalised neural
importance sampling) or the DiffUCO baseline, with unbiased SN-NIS and neural-MCMC estimators, exact Ising
ground truth, and combinatorial-optimisation energies with conditional-expectation decoding.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:
    from .autoregressive import AutoregressiveSampler as AutoregressiveSampler
    from .autoregressive import train_autoregressive as train_autoregressive
    from .checkpoint import load_demo_sampler as load_demo_sampler
    from .checkpoint import load_sampler as load_sampler
    from .checkpoint import read_checkpoint_spec as read_checkpoint_spec
    from .checkpoint import save_sampler as save_sampler
    from .decoding import decode_ce as decode_ce
    from .decoding import decode_no_model as decode_no_model
    from .diffusion import Sampler as Sampler
    from .diffusion import SamplerConfig as SamplerConfig
    from .diffusion import Samples as Samples
    from .diffusion import on_device as on_device
    from .energy import Energy as Energy
    from .energy import IsingEnergy as IsingEnergy
    from .energy import IsingModelEnergy as IsingModelEnergy
    from .energy import MaxCliqueEnergy as MaxCliqueEnergy
    from .energy import MaxCutEnergy as MaxCutEnergy
    from .energy import MDSEnergy as MDSEnergy
    from .energy import MISEnergy as MISEnergy
    from .energy import QUBOEnergy as QUBOEnergy
    from .energy import from_bqm as from_bqm
    from .estimators import MIN_ESS_FRACTION as MIN_ESS_FRACTION
    from .estimators import Estimate as Estimate
    from .estimators import MCMCResult as MCMCResult
    from .estimators import UniformProposal as UniformProposal
    from .estimators import estimate as estimate
    from .estimators import neural_mcmc as neural_mcmc
    from .exact import BETA_CRITICAL as BETA_CRITICAL
    from .exact import ExactIsing as ExactIsing
    from .exact import exact_enumeration as exact_enumeration
    from .exact import exact_ising as exact_ising
    from .exact import exact_ising_transfer as exact_ising_transfer
    from .exact import exact_mis as exact_mis
    from .exact import greedy_mis as greedy_mis
    from .graphs import PaddedGraphs as PaddedGraphs
    from .graphs import random_graphs as random_graphs
    from .memory import peak_memory as peak_memory
    from .metropolis import MetropolisResult as MetropolisResult
    from .metropolis import metropolis as metropolis
    from .noise import beta_schedule as beta_schedule
    from .objectives import train as train

__version__ = _version("iclr25-sdds")

# Public names are imported on first use (PEP 562), so that `iclr25 sdds --help` and `import iclr25.sdds`
# do not pay for JAX, equinox and SciPy until something needs them.
_EXPORTS = type_checking_exports(__file__)  # the names imported under TYPE_CHECKING above


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
