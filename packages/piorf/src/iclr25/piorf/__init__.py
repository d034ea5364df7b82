"""iclr25.piorf: physics-informed Ollivier-Ricci rewiring (PIORF) for mesh graph neural network simulators.

Curvature (:func:`ollivier_ricci`), the PIORF rewiring (:func:`rewire`) and its baselines (:func:`sdrf`,
:func:`fosr`, :func:`borf`, :func:`digl`), a lattice-Boltzmann cylinder-flow data set (:func:`cylinder_flow`), MeshGraphNets' TFRecord data sets
(:func:`load_meshgraphnets`, no TensorFlow),
a MeshGraphNet in plain torch (:class:`MeshGraphNet`, :func:`train`) and over-squashing diagnostics.
"""

from importlib.metadata import version as _version

from .baselines import BASELINES as BASELINES
from .baselines import borf as borf
from .baselines import digl as digl
from .baselines import fosr as fosr
from .baselines import sdrf as sdrf
from .curvature import Curvature as Curvature
from .curvature import balanced_forman as balanced_forman
from .curvature import ollivier_ricci as ollivier_ricci
from .datasets import FlowDataset as FlowDataset
from .datasets import Trajectory as Trajectory
from .datasets import cylinder_flow as cylinder_flow
from .datasets import load_trajectory as load_trajectory
from .datasets import save_trajectory as save_trajectory
from .diagnostics import effective_resistance as effective_resistance
from .diagnostics import spectral_gap as spectral_gap
from .graph import as_edge_index as as_edge_index
from .graph import mesh_edges as mesh_edges
from .graph import symmetrize as symmetrize
from .lbm import CylinderFlowSolution as CylinderFlowSolution
from .lbm import simulate_cylinder as simulate_cylinder
from .lbm import strouhal as strouhal
from .mechanism import LongRangeResult as LongRangeResult
from .mechanism import long_range_task as long_range_task
from .mesh import NodeType as NodeType
from .mesh import TriangleMesh as TriangleMesh
from .mesh import channel_mesh as channel_mesh
from .meshgraphnets import load_flow_data as load_flow_data
from .meshgraphnets import load_meshgraphnets as load_meshgraphnets
from .meshgraphnets import write_meshgraphnets as write_meshgraphnets
from .metrics import HoldFirstFrame as HoldFirstFrame
from .metrics import PairedTest as PairedTest
from .metrics import RolloutErrors as RolloutErrors
from .metrics import TimeMean as TimeMean
from .metrics import paired_test as paired_test
from .metrics import rollout_errors as rollout_errors
from .metrics import shedding_period as shedding_period
from .rewiring import PARTNER_RULES as PARTNER_RULES
from .rewiring import Rewirer as Rewirer
from .rewiring import Rewiring as Rewiring
from .rewiring import bottleneck_nodes as bottleneck_nodes
from .rewiring import rewire as rewire
from .rewiring import velocity_gradient as velocity_gradient
from .training import REWIRINGS as REWIRINGS
from .training import Rollout as Rollout
from .training import Simulator as Simulator
from .training import TrainConfig as TrainConfig
from .training import train as train

__version__ = _version("iclr25-piorf")


def __getattr__(name: str):
    # the torch model is imported on first use so that curvature and rewiring work without loading torch
    if name == "MeshGraphNet":
        from .model import MeshGraphNet

        return MeshGraphNet
    raise AttributeError(f"module 'iclr25.piorf' has no attribute {name!r}")


__all__ = [
    "ollivier_ricci", "balanced_forman", "Curvature",
    "rewire", "Rewirer", "Rewiring", "bottleneck_nodes", "velocity_gradient", "PARTNER_RULES",
    "sdrf", "fosr", "borf", "digl", "BASELINES",
    "spectral_gap", "effective_resistance",
    "cylinder_flow", "FlowDataset", "Trajectory", "load_trajectory", "save_trajectory",
    "load_meshgraphnets", "write_meshgraphnets", "load_flow_data",
    "simulate_cylinder", "CylinderFlowSolution", "strouhal", "channel_mesh", "TriangleMesh", "NodeType",
    "MeshGraphNet", "train", "TrainConfig", "Simulator", "Rollout", "REWIRINGS",
    "rollout_errors", "RolloutErrors", "HoldFirstFrame", "TimeMean", "shedding_period", "paired_test", "PairedTest",
    "long_range_task", "LongRangeResult",
    "as_edge_index", "mesh_edges", "symmetrize",
    "__version__",
]
