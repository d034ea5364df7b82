"""iclr25.memno: On the Benefits of Memory for Modeling Time-Dependent PDEs (MemNO, ICLR 2025).

Data (ETDRK4 KS/Burgers solvers, lossy observations, cached data sets), models (FFNO/FNO layers, diagonal S4
memory, MemNO and its Markovian and history-stacking baselines), training and evaluation (teacher-forced and
autoregressive nRMSE, resolution transfer, the do-nothing and linear-extrapolation predictors), and the linear
Mori-Zwanzig example.
"""

import importlib
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import datasets as datasets
    from .baselines import DoNothing as DoNothing
    from .baselines import LinearExtrapolation as LinearExtrapolation
    from .datasets import PDEDataset as PDEDataset
    from .datasets import burgers as burgers
    from .datasets import ks as ks
    from .datasets import load_dataset as load_dataset
    from .datasets import observe as observe
    from .experiments import Setting as Setting
    from .experiments import compare_models as compare_models
    from .experiments import ks_observed as ks_observed
    from .experiments import observed as observed
    from .layers import FFNOLayer as FFNOLayer
    from .layers import FNOLayer as FNOLayer
    from .layers import SpectralConv1d as SpectralConv1d
    from .model_names import MODEL_NAMES as MODEL_NAMES
    from .models import MemNO as MemNO
    from .models import load_trained as load_trained
    from .models import make_model as make_model
    from .observation import add_noise as add_noise
    from .observation import fourier_truncate as fourier_truncate
    from .observation import subsample as subsample
    from .readers import read_data as read_data
    from .readers import read_fno_mat as read_fno_mat
    from .readers import read_pdebench as read_pdebench
    from .s4 import S4D as S4D
    from .s4 import GRUMemory as GRUMemory
    from .s4 import LSTMMemory as LSTMMemory
    from .solver import Trajectories as Trajectories
    from .solver import burgers_initial_condition as burgers_initial_condition
    from .solver import etdrk4 as etdrk4
    from .solver import etdrk4_coefficients as etdrk4_coefficients
    from .solver import ks_initial_condition as ks_initial_condition
    from .solver import solve_burgers as solve_burgers
    from .solver import solve_ks as solve_ks
    from .theory import MoriZwanzigResult as MoriZwanzigResult
    from .theory import mori_zwanzig_toy as mori_zwanzig_toy
    from .training import EvalResult as EvalResult
    from .training import TrainResult as TrainResult
    from .training import evaluate as evaluate
    from .training import nrmse as nrmse
    from .training import rollout as rollout
    from .training import rollout_full as rollout_full
    from .training import train as train

__version__ = _version("iclr25-memno")

# Public names are imported on first use (PEP 562), so that `iclr25 memno --help` and `import iclr25.memno`
# do not pay for torch until something needs it. A value of None names a submodule.
_EXPORTS = {
    "datasets": None, "PDEDataset": "datasets", "ks": "datasets", "burgers": "datasets",
    "load_dataset": "datasets", "observe": "datasets",
    "read_data": "readers", "read_pdebench": "readers", "read_fno_mat": "readers",
    "subsample": "observation", "fourier_truncate": "observation", "add_noise": "observation",
    "Trajectories": "solver", "solve_ks": "solver", "solve_burgers": "solver", "etdrk4": "solver",
    "etdrk4_coefficients": "solver", "ks_initial_condition": "solver", "burgers_initial_condition": "solver",
    "SpectralConv1d": "layers", "FFNOLayer": "layers", "FNOLayer": "layers",
    "S4D": "s4", "GRUMemory": "s4", "LSTMMemory": "s4",
    "MemNO": "models", "make_model": "models", "load_trained": "models", "MODEL_NAMES": "model_names",
    "train": "training", "evaluate": "training", "rollout": "training", "rollout_full": "training",
    "nrmse": "training", "TrainResult": "training", "EvalResult": "training",
    "mori_zwanzig_toy": "theory", "MoriZwanzigResult": "theory",
    "Setting": "experiments", "ks_observed": "experiments", "observed": "experiments",
    "compare_models": "experiments", "DoNothing": "baselines", "LinearExtrapolation": "baselines",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _EXPORTS[name]
    if module is None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [*_EXPORTS, "__version__"]
