"""iclr25.next_mol: NExT-Mol, 3D diffusion meets 1D language modeling for 3D molecule generation (Liu et al.,
ICLR 2025).

A causal transformer over SELFIES tokens (always-valid 1D generation; the same over SMILES for comparison),
pseudo-GEOM reference ensembles (ETKDGv3 + MMFF + energy window + RMSD pruning), DMT (relational attention with
pair features and pair updates, adaLN-Zero, cosine VP schedule, Kabsch-aligned noise loss, ancestral and DDIM
samplers), the SELFIES-token-to-atom map of the 1D-to-3D transfer, COV/MAT, FCD and 3D sanity metrics, and an
end-to-end LM -> DMT -> SDF pipeline.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from .checkpoint import load_dmt as load_dmt
    from .checkpoint import load_lm as load_lm
    from .checkpoint import save_dmt as save_dmt
    from .checkpoint import save_lm as save_lm
    from .chem import Molecule as Molecule
    from .chem import canonical_smiles as canonical_smiles
    from .chem import prepare as prepare
    from .chem import prepare_many as prepare_many
    from .chem import token_atom_map as token_atom_map
    from .conditional import PropertyPredictor as PropertyPredictor
    from .conditional import conditional_experiment as conditional_experiment
    from .conditional import fit_property_predictor as fit_property_predictor
    from .conformers import Ensemble as Ensemble
    from .conformers import EnsembleSettings as EnsembleSettings
    from .conformers import etkdg_conformers as etkdg_conformers
    from .conformers import reference_ensemble as reference_ensemble
    from .conformers import reference_ensembles as reference_ensembles
    from .data import load_moses as load_moses
    from .diffusion import TrainResult as TrainResult
    from .diffusion import graphs_of as graphs_of
    from .diffusion import make_dmt as make_dmt
    from .diffusion import noise_target as noise_target
    from .diffusion import sample_conformers as sample_conformers
    from .diffusion import train_dmt as train_dmt
    from .diffusion import validation_rmsd as validation_rmsd
    from .dmt import DMT as DMT
    from .dmt import CosineVPSchedule as CosineVPSchedule
    from .dmt import DMTConfig as DMTConfig
    from .dmt import kabsch_align as kabsch_align
    from .dmt import kabsch_rotation as kabsch_rotation
    from .dmt import random_rotations as random_rotations
    from .experiments import fit_lm as fit_lm
    from .geom import read_geom_msgpack as read_geom_msgpack
    from .geom import read_sdf_ensembles as read_sdf_ensembles
    from .lm import CausalLM as CausalLM
    from .lm import LMConfig as LMConfig
    from .lm import LMTrainResult as LMTrainResult
    from .lm import decode_to_smiles as decode_to_smiles
    from .lm import random_token_strings as random_token_strings
    from .lm import sample_lm as sample_lm
    from .lm import to_selfies_corpus as to_selfies_corpus
    from .lm import train_lm as train_lm
    from .metrics import CovMat as CovMat
    from .metrics import DeNovo as DeNovo
    from .metrics import GeometryDistances as GeometryDistances
    from .metrics import Sanity as Sanity
    from .metrics import SanityReason as SanityReason
    from .metrics import cov_mat as cov_mat
    from .metrics import cov_mat_from_rmsd as cov_mat_from_rmsd
    from .metrics import de_novo_metrics as de_novo_metrics
    from .metrics import fcd as fcd
    from .metrics import frechet_3d as frechet_3d
    from .metrics import geometry_distances as geometry_distances
    from .metrics import graph_from_3d as graph_from_3d
    from .metrics import rmsd_matrix as rmsd_matrix
    from .metrics import sanity as sanity
    from .metrics import sanity_reasons as sanity_reasons
    from .metrics import shape_descriptors as shape_descriptors
    from .metrics import stereo_matches as stereo_matches
    from .pipeline import ConformerSet as ConformerSet
    from .pipeline import generate_smiles as generate_smiles
    from .pipeline import predict_conformers as predict_conformers
    from .pipeline import redraw_flipped as redraw_flipped
    from .pipeline import to_rdkit as to_rdkit
    from .pipeline import write_sdf as write_sdf
    from .qm9 import QM9Record as QM9Record
    from .qm9 import load_qm9 as load_qm9
    from .qm9 import qm9_ensembles as qm9_ensembles
    from .qm9 import read_qm9_csv as read_qm9_csv
    from .shipped import load_dmt_npz as load_dmt_npz
    from .shipped import load_shipped_dmt as load_shipped_dmt
    from .shipped import save_dmt_npz as save_dmt_npz
    from .tokenizer import SelfiesTokenizer as SelfiesTokenizer
    from .tokenizer import SmilesTokenizer as SmilesTokenizer
    from .transfer import LMFeaturizer as LMFeaturizer
    from .transfer import LMProjector as LMProjector

__version__ = _version("iclr25-next-mol")

# Public names load on first use (PEP 562): `iclr25 next-mol --help` and `import iclr25.next_mol` do not pay for
# torch and RDKit until something needs them.
_EXPORTS = {
    "load_dmt": "checkpoint", "load_lm": "checkpoint", "save_dmt": "checkpoint", "save_lm": "checkpoint",
    "Molecule": "chem", "canonical_smiles": "chem", "prepare": "chem", "prepare_many": "chem",
    "token_atom_map": "chem",
    "PropertyPredictor": "conditional", "conditional_experiment": "conditional",
    "fit_property_predictor": "conditional",
    "Ensemble": "conformers", "EnsembleSettings": "conformers", "etkdg_conformers": "conformers",
    "reference_ensemble": "conformers", "reference_ensembles": "conformers",
    "load_moses": "data",
    "TrainResult": "diffusion", "graphs_of": "diffusion", "make_dmt": "diffusion", "noise_target": "diffusion",
    "sample_conformers": "diffusion", "train_dmt": "diffusion", "validation_rmsd": "diffusion",
    "DMT": "dmt", "CosineVPSchedule": "dmt", "DMTConfig": "dmt", "kabsch_align": "dmt",
    "kabsch_rotation": "dmt", "random_rotations": "dmt",
    "fit_lm": "experiments",
    "CausalLM": "lm", "LMConfig": "lm", "LMTrainResult": "lm", "decode_to_smiles": "lm",
    "random_token_strings": "lm", "sample_lm": "lm", "to_selfies_corpus": "lm", "train_lm": "lm",
    "CovMat": "metrics", "DeNovo": "metrics", "Sanity": "metrics", "cov_mat": "metrics",
    "cov_mat_from_rmsd": "metrics", "de_novo_metrics": "metrics", "fcd": "metrics", "rmsd_matrix": "metrics",
    "sanity": "metrics", "SanityReason": "metrics", "sanity_reasons": "metrics", "stereo_matches": "metrics", "GeometryDistances": "metrics",
    "geometry_distances": "metrics", "graph_from_3d": "metrics", "frechet_3d": "metrics",
    "shape_descriptors": "metrics",
    "read_geom_msgpack": "geom", "read_sdf_ensembles": "geom",
    "ConformerSet": "pipeline", "generate_smiles": "pipeline", "predict_conformers": "pipeline",
    "redraw_flipped": "pipeline", "to_rdkit": "pipeline", "write_sdf": "pipeline",
    "QM9Record": "qm9", "load_qm9": "qm9", "qm9_ensembles": "qm9", "read_qm9_csv": "qm9",
    "load_dmt_npz": "shipped", "load_shipped_dmt": "shipped", "save_dmt_npz": "shipped",
    "SelfiesTokenizer": "tokenizer", "SmilesTokenizer": "tokenizer",
    "LMFeaturizer": "transfer", "LMProjector": "transfer",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
