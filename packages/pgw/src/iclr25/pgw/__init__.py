"""iclr25.pgw: the Partial Gromov-Wasserstein metric (Bai et al., ICLR 2025).

Exact PGW by two Frank-Wolfe variants (POT's network simplex as the oracle), a JAX entropic PGW vmapped
over batches of pairs, PGW barycenters, GW/MPGW/UGW baselines behind one signature, and the procedural
2-D shape data set II of the paper.
"""

from importlib.metadata import version as _version

from . import datasets as datasets
from .barycenter import BarycenterResult as BarycenterResult
from .barycenter import pgw_barycenter as pgw_barycenter
from .baselines import BaselineResult as BaselineResult
from .baselines import gw as gw
from .baselines import mpgw as mpgw
from .baselines import ugw as ugw
from .entropic import EntropicBatchResult as EntropicBatchResult
from .entropic import entropic_pgw_batch as entropic_pgw_batch
from .retrieval import nearest_neighbour_accuracy as nearest_neighbour_accuracy
from .retrieval import svm_accuracy as svm_accuracy
from .solver import PGWResult as PGWResult
from .solver import pgw as pgw
from .solver import pgw_distance as pgw_distance
from .solver import pgw_objective as pgw_objective
from .solver import pgw_pairwise as pgw_pairwise
from .space import MMSpace as MMSpace
from .space import default_lam as default_lam
from .space import mm_space as mm_space

__version__ = _version("iclr25-pgw")

__all__ = [
    "MMSpace", "mm_space", "default_lam",
    "PGWResult", "pgw", "pgw_distance", "pgw_pairwise", "pgw_objective",
    "EntropicBatchResult", "entropic_pgw_batch",
    "BarycenterResult", "pgw_barycenter",
    "BaselineResult", "gw", "mpgw", "ugw",
    "svm_accuracy", "nearest_neighbour_accuracy",
    "datasets", "__version__",
]
