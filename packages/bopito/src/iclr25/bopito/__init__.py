"""iclr25.bopito: Boltzmann Priors for Implicit Transfer Operators (Viguera Diez et al., ICLR 2025).

Systems (the Prinz potential and deeptime's 2-D triple well, Euler-Maruyama over all walkers; alanine dipeptide
with OpenMM, whose φ/ψ data ship with the package: ``load_alanine()``), an exact grid
reference (SqRA generator, eigenvalues, implied timescales, exact C(N)), score models (the equilibrium
prior, the lag-conditioned ITO model and BoPITO = frozen prior + λ̂^N × dynamic score, with the λ_int
interpolation mode), ancestral and DDIM samplers with long chains, and evaluation (W1, correlation-function
error, deeptime MSMs, implied timescales, VAMP-2).
"""

import importlib
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .alanine import AlanineData as AlanineData
    from .alanine import build_alanine_dipeptide as build_alanine_dipeptide
    from .alanine import load_alanine as load_alanine
    from .alanine import simulate_alanine as simulate_alanine
    from .alanine_experiment import run_alanine as run_alanine
    from .analysis import ACFResult as ACFResult
    from .analysis import InterpolationFit as InterpolationFit
    from .analysis import MSMResult as MSMResult
    from .analysis import chain_timescales as chain_timescales
    from .analysis import cross_correlation as cross_correlation
    from .analysis import discretize as discretize
    from .analysis import estimate_lambda as estimate_lambda
    from .analysis import evaluate_acf as evaluate_acf
    from .analysis import fit_interpolation as fit_interpolation
    from .analysis import fit_lambda_int as fit_lambda_int
    from .analysis import fit_msm as fit_msm
    from .analysis import vamp2_score as vamp2_score
    from .checkpoint import load_model as load_model
    from .checkpoint import save_model as save_model
    from .mdfiles import load_md_trajectories as load_md_trajectories
    from .models import DiffusionSchedule as DiffusionSchedule
    from .models import ModelConfig as ModelConfig
    from .models import ScoreModel as ScoreModel
    from .models import bopito_weight as bopito_weight
    from .reference import ExactReference as ExactReference
    from .reference import exact_reference as exact_reference
    from .reference import sqra_generator as sqra_generator
    from .reference import wasserstein1 as wasserstein1
    from .repro import run_triple_well as run_triple_well
    from .sampling import sample as sample
    from .sampling import sample_chain as sample_chain
    from .sampling import sample_equilibrium as sample_equilibrium
    from .simulation import simulate as simulate
    from .systems import Potential as Potential
    from .systems import Trajectories as Trajectories
    from .systems import get_system as get_system
    from .systems import load_points as load_points
    from .systems import load_trajectories as load_trajectories
    from .systems import prinz as prinz
    from .systems import triple_well_2d as triple_well_2d
    from .training import TrainResult as TrainResult
    from .training import fit_model as fit_model
    from .training import train as train

__version__ = _version("iclr25-bopito")

# Public names are imported on first use (PEP 562): `iclr25 bopito --help` and `import iclr25.bopito` do not
# pay for torch, scipy and deeptime until something needs them.
_EXPORTS = {
    "AlanineData": "alanine", "build_alanine_dipeptide": "alanine", "load_alanine": "alanine",
    "simulate_alanine": "alanine", "run_alanine": "alanine_experiment", "run_triple_well": "repro",
    "ACFResult": "analysis", "InterpolationFit": "analysis", "MSMResult": "analysis",
    "chain_timescales": "analysis", "cross_correlation": "analysis", "discretize": "analysis",
    "estimate_lambda": "analysis", "evaluate_acf": "analysis", "fit_interpolation": "analysis", "fit_lambda_int": "analysis", "fit_msm": "analysis",
    "vamp2_score": "analysis",
    "load_model": "checkpoint", "save_model": "checkpoint", "load_md_trajectories": "mdfiles",
    "DiffusionSchedule": "models", "ModelConfig": "models", "ScoreModel": "models", "bopito_weight": "models",
    "ExactReference": "reference", "exact_reference": "reference", "sqra_generator": "reference",
    "wasserstein1": "reference",
    "sample": "sampling", "sample_chain": "sampling", "sample_equilibrium": "sampling",
    "Potential": "systems", "Trajectories": "systems", "get_system": "systems", "load_points": "systems",
    "load_trajectories": "systems", "prinz": "systems", "simulate": "simulation", "triple_well_2d": "systems",
    "TrainResult": "training", "fit_model": "training", "train": "training",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'iclr25.bopito' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [*_EXPORTS, "__version__"]
