"""iclr25.weighted_lowrank: Efficient Alternating Minimization with Applications to Weighted Low Rank
Approximation (Song, Ye, Yin, Zhang, ICLR 2025)."""

from importlib.metadata import version as _version

from . import datasets as datasets
from .altmin import RoundInfo as RoundInfo
from .altmin import WLRAResult as WLRAResult
from .altmin import weighted_low_rank as weighted_low_rank
from .costmodel import round_flops as round_flops
from .datasets import PlantedProblem as PlantedProblem
from .datasets import planted as planted
from .estimator import WeightedLowRank as WeightedLowRank
from .regression import RegressionResult as RegressionResult
from .regression import weighted_regression as weighted_regression

__version__ = _version("iclr25-weighted-lowrank")

__all__ = [
    "weighted_low_rank",
    "WLRAResult",
    "WeightedLowRank",
    "RoundInfo",
    "weighted_regression",
    "RegressionResult",
    "planted",
    "PlantedProblem",
    "datasets",
    "round_flops",
    "__version__",
]
