"""iclr25.augood: AU-GOOD, CCPart similarity partitioning and model comparison for out-of-distribution
evaluation of biochemical models (Fernández-Díaz et al., ICLR 2025)."""

from importlib.metadata import version as _version

from .comparison import ModelComparison as ModelComparison
from .comparison import compare_models as compare_models
from .comparison import holm as holm
from .data import Dataset as Dataset
from .data import SequenceFamilies as SequenceFamilies
from .data import load_dataset as load_dataset
from .data import load_deployment_set as load_deployment_set
from .data import simulate_protein_families as simulate_protein_families
from .good import GOODCurve as GOODCurve
from .good import good_curve as good_curve
from .neighbours import approximate_similarity_matrix as approximate_similarity_matrix
from .neighbours import pair_recall as pair_recall
from .partition import Partition as Partition
from .partition import ccpart as ccpart
from .partition import ccpart_sweep as ccpart_sweep
from .partition import random_partition as random_partition
from .partition import scaffold_partition as scaffold_partition
from .partition import threshold_grid as threshold_grid
from .score import AUGOOD as AUGOOD
from .score import au_good as au_good
from .similarity import InvalidMoleculeError as InvalidMoleculeError
from .similarity import SimilarityMemoryError as SimilarityMemoryError
from .similarity import fingerprints as fingerprints
from .similarity import max_similarity as max_similarity
from .similarity import needed_threshold as needed_threshold
from .similarity import similarity_matrix as similarity_matrix

__version__ = _version("iclr25-augood")

__all__ = [
    "AUGOOD",
    "Dataset",
    "GOODCurve",
    "InvalidMoleculeError",
    "ModelComparison",
    "Partition",
    "SequenceFamilies",
    "SimilarityMemoryError",
    "__version__",
    "approximate_similarity_matrix",
    "au_good",
    "ccpart",
    "ccpart_sweep",
    "compare_models",
    "fingerprints",
    "good_curve",
    "holm",
    "load_dataset",
    "load_deployment_set",
    "max_similarity",
    "needed_threshold",
    "pair_recall",
    "random_partition",
    "scaffold_partition",
    "similarity_matrix",
    "simulate_protein_families",
    "threshold_grid",
]
