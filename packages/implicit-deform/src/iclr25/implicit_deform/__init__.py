"""iclr25.implicit_deform: Implicit Neural Surface Deformation with Explicit Velocity Fields (Sang et al.,
ICLR 2025).

A time-varying neural SDF f(x, t) and an explicit velocity field v(x) fitted to a pair of point clouds: v
carries (sparse) correspondences from the source to the target, f is deformed along v by the modified level-set
equation with Eikonal constraints, and a divergence penalty keeps the motion volume preserving. Procedural
shapes with exact intermediate ground truth, metrics, marching cubes, and the SDF-blend, straight-line and
LipMLP baselines ship with it.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from .baselines import LipMLPResult as LipMLPResult
    from .baselines import fit_lipmlp as fit_lipmlp
    from .baselines import sdf_blend_mesh as sdf_blend_mesh
    from .baselines import straight_line_mesh as straight_line_mesh
    from .data import load_correspondences as load_correspondences
    from .data import load_pair as load_pair
    from .data import load_shape as load_shape
    from .deform import PRESETS as PRESETS
    from .deform import DeformConfig as DeformConfig
    from .deform import DeformResult as DeformResult
    from .deform import fit as fit
    from .integrate import integrate as integrate
    from .losses import divergence as divergence
    from .losses import divergence_loss as divergence_loss
    from .losses import eikonal as eikonal
    from .losses import laplacian as laplacian
    from .losses import levelset_residual as levelset_residual
    from .losses import mlse_residual as mlse_residual
    from .losses import smoothness_loss as smoothness_loss
    from .meshing import export_mesh as export_mesh
    from .meshing import marching_cubes_sdf as marching_cubes_sdf
    from .meshing import turntable_strip as turntable_strip
    from .metrics import ShapeMetrics as ShapeMetrics
    from .metrics import chamfer as chamfer
    from .metrics import compare_meshes as compare_meshes
    from .metrics import eikonal_deviation as eikonal_deviation
    from .metrics import hausdorff as hausdorff
    from .metrics import normal_consistency as normal_consistency
    from .metrics import volume_drift as volume_drift
    from .networks import ImplicitNet as ImplicitNet
    from .networks import LipMLP as LipMLP
    from .networks import VelocityNet as VelocityNet
    from .shapes import Deformation as Deformation
    from .shapes import Shape as Shape
    from .shapes import ShapePair as ShapePair
    from .shapes import make_pair as make_pair

__version__ = _version("iclr25-implicit-deform")

# Public names are imported on first use (PEP 562): `iclr25 implicit-deform --help` and
# `import iclr25.implicit_deform` do not pay for JAX, trimesh or scikit-image.
_EXPORTS = {
    "LipMLPResult": "baselines",
    "fit_lipmlp": "baselines",
    "sdf_blend_mesh": "baselines",
    "straight_line_mesh": "baselines",
    "load_correspondences": "data",
    "load_pair": "data",
    "load_shape": "data",
    "PRESETS": "deform",
    "DeformConfig": "deform",
    "DeformResult": "deform",
    "fit": "deform",
    "integrate": "integrate",
    "divergence": "losses",
    "divergence_loss": "losses",
    "eikonal": "losses",
    "laplacian": "losses",
    "levelset_residual": "losses",
    "mlse_residual": "losses",
    "smoothness_loss": "losses",
    "export_mesh": "meshing",
    "marching_cubes_sdf": "meshing",
    "turntable_strip": "meshing",
    "ShapeMetrics": "metrics",
    "chamfer": "metrics",
    "compare_meshes": "metrics",
    "eikonal_deviation": "metrics",
    "hausdorff": "metrics",
    "normal_consistency": "metrics",
    "volume_drift": "metrics",
    "ImplicitNet": "networks",
    "LipMLP": "networks",
    "VelocityNet": "networks",
    "Deformation": "shapes",
    "Shape": "shapes",
    "ShapePair": "shapes",
    "make_pair": "shapes",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
