"""iclr25.scalegun: Scalable and Certifiable Graph Unlearning (ScaleGUN, Yi & Wei, ICLR 2025).

Certified edge, node and feature unlearning for a linear model on generalised PageRank embeddings, with the
embeddings updated by lazy local push instead of full re-propagation.

``CertifiedUnlearner`` and ``MODES`` load on first use, so that the command line (``--help``) and the
numpy-only parts do not pay for importing torch.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

from . import datasets as datasets
from .certificate import Ledger as Ledger
from .certificate import LedgerRecord as LedgerRecord
from .certificate import noise_multiplier as noise_multiplier
from .certificate import r_max_rule as r_max_rule
from .certificate import residual_budget as residual_budget
from .certificate import worst_case_terms as worst_case_terms
from .citation import citation_files as citation_files
from .datasets import preprocess_features as preprocess_features
from .mapped import MappedGraph as MappedGraph
from .mapped import write_mapped_graph as write_mapped_graph
from .propagation import PushPropagator as PushPropagator
from .propagation import exact_propagation as exact_propagation
from .propagation import gpr_weights as gpr_weights
from .streaming import load_graph_files as load_graph_files
from .streaming import powerlaw_files as powerlaw_files

if TYPE_CHECKING:
    from .experiments import sweep as sweep
    from .readers import convert as convert
    from .unlearner import MODES as MODES
    from .unlearner import CertifiedUnlearner as CertifiedUnlearner

__version__ = _version("iclr25-scalegun")

__all__ = [
    "CertifiedUnlearner", "Ledger", "citation_files", "convert", "LedgerRecord", "MODES", "MappedGraph", "PushPropagator", "datasets", "exact_propagation",
    "gpr_weights", "load_graph_files", "powerlaw_files", "sweep", "write_mapped_graph", "noise_multiplier", "preprocess_features", "r_max_rule", "residual_budget", "worst_case_terms",
    "__version__",
]

_LAZY = {"CertifiedUnlearner", "MODES", "sweep", "convert"}


def __getattr__(name: str) -> Any:
    if name == "convert":
        from .readers import convert

        return convert
    if name in _LAZY:
        from . import experiments, unlearner

        return getattr(experiments if name == "sweep" else unlearner, name)
    raise AttributeError(f"module 'iclr25.scalegun' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
