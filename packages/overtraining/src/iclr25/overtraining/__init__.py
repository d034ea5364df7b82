"""iclr25.overtraining: *Do Mice Grok? Glimpses of Hidden Progress in Sensory Cortex* (Kumar, Bordelon,
Pehlevan, Murthy & Gershman, ICLR 2025).

The synthetic odour-mixture task and its one-hidden-layer network trained by full-batch gradient descent on the
logistic loss (numpy), the hidden-progress quantities (normalised SVM margin, Fisher discriminant, example flips,
kernel–task alignment) in a monitor that also hooks any torch model, the max-margin theory check for linear
logistic regression, a recording generator with known ground truth and the per-day analysis of
(days × trials × neurons) recordings (``.npz``, or NWB files through ``pynwb``), and the overtraining-reversal protocols. torch and scikit-learn are
imported on first use.
"""

from importlib.metadata import version as _version

from .geometry import ExampleFlips as ExampleFlips
from .geometry import MarginResult as MarginResult
from .geometry import NotSeparableError as NotSeparableError
from .geometry import SignedMargin as SignedMargin
from .geometry import example_flips as example_flips
from .geometry import fisher_discriminant as fisher_discriminant
from .geometry import fisher_ridge_share as fisher_ridge_share
from .geometry import kernel_alignment as kernel_alignment
from .geometry import normalised_margin as normalised_margin
from .geometry import rms_normalise as rms_normalise
from .geometry import signed_margin as signed_margin
from .geometry import svm_margin as svm_margin
from .monitor import HiddenProgressMonitor as HiddenProgressMonitor
from .monitor import MonitorRecord as MonitorRecord
from .network import Checkpoint as Checkpoint
from .network import LinearGDRun as LinearGDRun
from .network import MLPParams as MLPParams
from .network import TrainConfig as TrainConfig
from .network import TrainingRun as TrainingRun
from .network import forward as forward
from .network import hidden as hidden
from .network import init_mlp as init_mlp
from .network import linear_logistic_gd as linear_logistic_gd
from .network import log_epochs as log_epochs
from .network import loss_and_grad as loss_and_grad
from .network import to_torch as to_torch
from .network import train_mlp as train_mlp
from .nwb import load_nwb as load_nwb
from .nwb import save_nwb as save_nwb
from .protocols import ShiftResult as ShiftResult
from .protocols import epochs_to_learn as epochs_to_learn
from .protocols import overtraining_shift as overtraining_shift
from .recordings import AnalysisResult as AnalysisResult
from .recordings import Recordings as Recordings
from .recordings import TrendTest as TrendTest
from .recordings import analyze_recordings as analyze_recordings
from .recordings import load_recordings as load_recordings
from .recordings import margin_trend as margin_trend
from .recordings import save_recordings as save_recordings
from .recordings import simulate_recordings as simulate_recordings
from .task import PROTOCOLS as PROTOCOLS
from .task import OdourTask as OdourTask
from .task import make_odour_task as make_odour_task
from .task import shifted_labels as shifted_labels

__version__ = _version("iclr25-overtraining")

__all__ = [
    "ExampleFlips", "MarginResult", "NotSeparableError", "example_flips", "fisher_discriminant", "kernel_alignment",
    "normalised_margin", "rms_normalise", "svm_margin", "SignedMargin", "signed_margin", "fisher_ridge_share",
    "HiddenProgressMonitor", "MonitorRecord",
    "Checkpoint", "LinearGDRun", "MLPParams", "TrainConfig", "TrainingRun", "forward", "hidden", "init_mlp",
    "linear_logistic_gd", "log_epochs", "loss_and_grad", "to_torch", "train_mlp",
    "ShiftResult", "epochs_to_learn", "overtraining_shift",
    "AnalysisResult", "Recordings", "TrendTest", "analyze_recordings", "load_recordings", "margin_trend",
    "save_recordings", "simulate_recordings", "load_nwb", "save_nwb",
    "PROTOCOLS", "OdourTask", "make_odour_task", "shifted_labels",
    "__version__",
]
