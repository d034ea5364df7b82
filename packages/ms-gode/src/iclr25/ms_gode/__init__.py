"""iclr25.ms_gode: Learning System Dynamics without Forgetting (MS-GODE, Zhang et al., ICLR 2025).

Continual dynamics learning with the Mode-switching Graph ODE: an LG-ODE backbone whose frozen signed weights
are masked by one learned binary sub-network per task, mode switching by self-prediction (with unknown-system
detection), bit-packed state export, the physics (springs, charged) and Bio-CDL substitute (EGFR, Ran
mass-action) simulators, and the fine-tune / joint / EWC / replay / LwF baselines on the same backbone.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:
    from .continual import BASELINES as BASELINES
    from .continual import METHODS as METHODS
    from .continual import MSGODE as MSGODE
    from .continual import Baseline as Baseline
    from .continual import Evaluation as Evaluation
    from .continual import ModeSelection as ModeSelection
    from .continual import SequenceResult as SequenceResult
    from .continual import TrainConfig as TrainConfig
    from .continual import TrainLog as TrainLog
    from .continual import af_mse as af_mse
    from .continual import ap_mse as ap_mse
    from .continual import make_learner as make_learner
    from .continual import run_sequence as run_sequence
    from .data import BIO_SEQUENCE as BIO_SEQUENCE
    from .data import PHYSICS_SEQUENCE as PHYSICS_SEQUENCE
    from .data import UNSEEN_PHYSICS as UNSEEN_PHYSICS
    from .data import load_task as load_task
    from .data import make_task as make_task
    from .data import save_task as save_task
    from .data import task_sequence as task_sequence
    from .layers import MaskLinear as MaskLinear
    from .layers import TaskLayerNorm as TaskLayerNorm
    from .layers import straight_through_mask as straight_through_mask
    from .model import LGODE as LGODE
    from .model import ModelConfig as ModelConfig
    from .simulators import MassActionNetwork as MassActionNetwork
    from .simulators import egfr_network as egfr_network
    from .simulators import ran_network as ran_network
    from .simulators import simulate_charged as simulate_charged
    from .simulators import simulate_egfr as simulate_egfr
    from .simulators import simulate_oscillators as simulate_oscillators
    from .simulators import simulate_ran as simulate_ran
    from .simulators import simulate_springs as simulate_springs
    from .simulators import simulate_system as simulate_system
    from .simulators import springs_energy as springs_energy
    from .trajectories import TaskData as TaskData
    from .trajectories import Trajectories as Trajectories
    from .trajectories import observe as observe

__version__ = _version("iclr25-ms-gode")

# Public names are imported on first use (PEP 562): `iclr25 ms-gode --help` must not import torch.
_EXPORTS = type_checking_exports(__file__)  # the names imported under TYPE_CHECKING above


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
