"""iclr25.rxnflow: Generative Flows on Synthetic Pathway for Drug Design (RxnFlow, Seo et al., ICLR 2025).

A GFlowNet that assembles molecules from building blocks with reaction templates (every sample carries a
replayable synthesis route), trained with trajectory balance on a subsampled action space with importance-
weighted partition estimates; block embeddings come from fingerprints, so new blocks need no retraining.
Also: template and block libraries with a library doctor, QED/SA/window rewards, the enumerable toy
experiment of the paper's appendix, and pocket-specific optimisation with AutoDock Vina (the ``docking`` extra)
against a BRICS fragment GA and random synthesis at equal oracle calls.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from .blocks import BlockLibrary as BlockLibrary
    from .blocks import builtin_blocks as builtin_blocks
    from .blocks import load_blocks as load_blocks
    from .blocks import moses_blocks as moses_blocks
    from .blocks import read_blocks as read_blocks
    from .blocks import toy_blocks as toy_blocks
    from .docking import Target as Target
    from .docking import VinaOracle as VinaOracle
    from .docking import ligand_box as ligand_box
    from .docking import receptor_pdbqt as receptor_pdbqt
    from .docking import t4_lysozyme as t4_lysozyme
    from .docking import vina_reward as vina_reward
    from .doctor import DoctorReport as DoctorReport
    from .doctor import doctor as doctor
    from .estimator import Subsets as Subsets
    from .estimator import draw_subsets as draw_subsets
    from .estimator import importance_weights as importance_weights
    from .estimator import log_partition_estimate as log_partition_estimate
    from .estimator import partition_estimates as partition_estimates
    from .estimator import subset_size as subset_size
    from .fragments import brics_fragments as brics_fragments
    from .fragments import fragment_ga as fragment_ga
    from .gflownet import RxnFlow as RxnFlow
    from .gflownet import Sample as Sample
    from .gflownet import TrainConfig as TrainConfig
    from .gflownet import TrainResult as TrainResult
    from .gflownet import load_model as load_model
    from .gflownet import train as train
    from .model import PolicyConfig as PolicyConfig
    from .model import RxnFlowPolicy as RxnFlowPolicy
    from .output import write_samples as write_samples
    from .pocket import POCKETS as POCKETS
    from .pocket import DockingComparison as DockingComparison
    from .pocket import MethodRun as MethodRun
    from .pocket import Pocket as Pocket
    from .pocket import PocketRun as PocketRun
    from .pocket import docking_comparison as docking_comparison
    from .pocket import docking_space as docking_space
    from .pocket import pocket_reward as pocket_reward
    from .pocket import pocket_vs_screening as pocket_vs_screening
    from .pocket import proxy_score as proxy_score
    from .pocket import top_k_docking as top_k_docking
    from .rewards import Reward as Reward
    from .rewards import VinaReward as VinaReward
    from .rewards import parse_reward as parse_reward
    from .routes import replay_route as replay_route
    from .routes import verify_route as verify_route
    from .space import SynthesisSpace as SynthesisSpace
    from .templates import ReactionTemplate as ReactionTemplate
    from .templates import builtin_templates as builtin_templates
    from .templates import datamol_templates as datamol_templates
    from .templates import load_templates as load_templates
    from .templates import parse_template as parse_template
    from .templates import read_templates as read_templates
    from .toy import Enumeration as Enumeration
    from .toy import distribution_fit as distribution_fit
    from .toy import diverse_top_k as diverse_top_k
    from .toy import diversity as diversity
    from .toy import enumerate_terminals as enumerate_terminals
    from .toy import exact_log_probs as exact_log_probs
    from .toy import random_synthesis as random_synthesis
    from .toy import toy_space as toy_space

__version__ = _version("iclr25-rxnflow")

# Imported on first use (PEP 562): `iclr25 rxnflow --help` and `import iclr25.rxnflow` load neither torch nor RDKit.
_EXPORTS = {
    "BlockLibrary": "blocks", "builtin_blocks": "blocks", "load_blocks": "blocks", "moses_blocks": "blocks",
    "read_blocks": "blocks", "toy_blocks": "blocks",
    "DoctorReport": "doctor", "doctor": "doctor",
    "VinaOracle": "docking", "ligand_box": "docking", "receptor_pdbqt": "docking", "t4_lysozyme": "docking",
    "vina_reward": "docking", "Target": "docking",
    "brics_fragments": "fragments", "fragment_ga": "fragments",
    "Subsets": "estimator", "draw_subsets": "estimator", "importance_weights": "estimator",
    "log_partition_estimate": "estimator", "partition_estimates": "estimator", "subset_size": "estimator",
    "RxnFlow": "gflownet", "Sample": "gflownet", "TrainConfig": "gflownet", "TrainResult": "gflownet",
    "load_model": "gflownet", "train": "gflownet",
    "PolicyConfig": "model", "RxnFlowPolicy": "model",
    "write_samples": "output",
    "POCKETS": "pocket", "Pocket": "pocket", "PocketRun": "pocket", "pocket_reward": "pocket",
    "pocket_vs_screening": "pocket", "proxy_score": "pocket", "DockingComparison": "pocket", "MethodRun": "pocket",
    "docking_comparison": "pocket", "docking_space": "pocket", "top_k_docking": "pocket",
    "Reward": "rewards", "VinaReward": "rewards", "parse_reward": "rewards",
    "replay_route": "routes", "verify_route": "routes",
    "SynthesisSpace": "space",
    "ReactionTemplate": "templates", "builtin_templates": "templates", "datamol_templates": "templates",
    "load_templates": "templates", "parse_template": "templates", "read_templates": "templates",
    "Enumeration": "toy", "distribution_fit": "toy", "diverse_top_k": "toy", "diversity": "toy",
    "enumerate_terminals": "toy", "exact_log_probs": "toy", "random_synthesis": "toy", "toy_space": "toy",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
