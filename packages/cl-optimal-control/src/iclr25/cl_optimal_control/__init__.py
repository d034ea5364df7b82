"""iclr25.cl_optimal_control: optimal task-selection protocols for continual learning (Mori, Sarao Mannelli
& Mignacco, ICLR 2025).

Exact order-parameter ODEs of online SGD in the multi-head two-layer erf teacher-student model, optimal
control of the task mix (and learning rate) by Pontryagin's forward-backward sweep or a direct method through
the jitted ODE, a finite-N SGD simulator that runs any schedule as a sampler, heuristic baselines and a
real-data transfer on scikit-learn's digits.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:
    from .control import SolveResult as SolveResult
    from .control import evaluate as evaluate
    from .control import heuristics as heuristics
    from .control import solve as solve
    from .digits import DigitsResult as DigitsResult
    from .digits import compare_protocols as compare_protocols
    from .digits import digits_tasks as digits_tasks
    from .digits import run_digits as run_digits
    from .digits import tasks_from_arrays as tasks_from_arrays
    from .model import Problem as Problem
    from .model import State as State
    from .model import initial_state as initial_state
    from .model import similarity_matrix as similarity_matrix
    from .ode import Trajectory as Trajectory
    from .ode import integrate as integrate
    from .ode import integrate_gammas as integrate_gammas
    from .schedule import Schedule as Schedule
    from .schedule import constant_mix as constant_mix
    from .schedule import load_schedule as load_schedule
    from .schedule import replay_at_end as replay_at_end
    from .schedule import save_schedule as save_schedule
    from .schedule import sequential as sequential
    from .sgd import SimulationResult as SimulationResult
    from .sgd import simulate as simulate
    from .userdata import read_tasks as read_tasks

__version__ = _version("iclr25-cl-optimal-control")

# Public names are imported on first use (PEP 562): `iclr25 cl-optimal-control --help` and
# `import iclr25.cl_optimal_control` do not load JAX until something needs it.
_EXPORTS = type_checking_exports(__file__)  # the names imported under TYPE_CHECKING above


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
