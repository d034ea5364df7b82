"""iclr25.memno: On the Benefits of Memory for Modeling Time-Dependent PDEs (MemNO, ICLR 2025).

Data (ETDRK4 KS/Burgers solvers, lossy observations, cached data sets), models (FFNO/FNO layers, diagonal S4
memory, MemNO and its Markovian and history-stacking baselines), training and evaluation (teacher-forced and
autoregressive nRMSE, resolution transfer), and the linear Mori-Zwanzig example.
"""

from importlib.metadata import version as _version

from . import datasets as datasets
from .datasets import PDEDataset as PDEDataset
from .datasets import burgers as burgers
from .datasets import ks as ks
from .datasets import load_dataset as load_dataset
from .datasets import observe as observe
from .experiments import Setting as Setting
from .experiments import compare_models as compare_models
from .experiments import ks_observed as ks_observed
from .layers import FFNOLayer as FFNOLayer
from .layers import FNOLayer as FNOLayer
from .layers import SpectralConv1d as SpectralConv1d
from .models import MODEL_NAMES as MODEL_NAMES
from .models import MemNO as MemNO
from .models import make_model as make_model
from .observe import add_noise as add_noise
from .observe import fourier_truncate as fourier_truncate
from .observe import subsample as subsample
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

__all__ = [
    "datasets", "PDEDataset", "ks", "burgers", "load_dataset", "observe",
    "subsample", "fourier_truncate", "add_noise",
    "Trajectories", "solve_ks", "solve_burgers", "etdrk4", "etdrk4_coefficients", "ks_initial_condition",
    "burgers_initial_condition",
    "SpectralConv1d", "FFNOLayer", "FNOLayer", "S4D", "GRUMemory", "LSTMMemory", "MemNO", "make_model",
    "MODEL_NAMES",
    "train", "evaluate", "rollout", "rollout_full", "nrmse", "TrainResult", "EvalResult",
    "mori_zwanzig_toy", "MoriZwanzigResult", "Setting", "ks_observed", "compare_models",
    "__version__",
]
