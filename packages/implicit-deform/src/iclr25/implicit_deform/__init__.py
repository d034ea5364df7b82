"""iclr25.implicit_deform: Implicit Neural Surface Deformation with Explicit Velocity Fields (Sang et al.,
ICLR 2025).

A time-varying neural SDF f(x, t) and an explicit velocity field v(x) fitted to a pair of point clouds: v
carries (sparse) correspondences from the source to the target, f is deformed along v by the modified level-set
equation with Eikonal constraints, and a divergence penalty keeps the motion volume preserving. Procedural
shapes with exact intermediate ground truth, metrics, marching cubes, and the SDF-blend, straight-line and
LipMLP baselines ship with it.
"""

import importlib as _importlib
import importlib.abc as _importlib_abc
import importlib.util as _importlib_util
import sys as _sys
import warnings as _warnings
from importlib.metadata import version as _version
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING, Any

from iclr25.utils.lazy import lazy_exports, type_checking_exports

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
_EXPORTS = type_checking_exports(__file__)  # the names imported under TYPE_CHECKING above


_lazy_getattr, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

#: Modules renamed to the name every package uses (issue 49): old name -> (new name, version of the rename).
#: The old import path still works, with a DeprecationWarning, and gives the new module's names.
_RENAMED = {"experiment": ("experiments", "0.4.1"), "fitcmd": ("interpolation", "0.4.2")}


def _renamed(old: str) -> _ModuleType:
    new, since = _RENAMED[old]
    # point the warning at the user's import: past the frames of this file and of importlib (warn itself skips
    # importlib's frozen frames, so they are not counted)
    frame, level = _sys._getframe(0), 1
    while frame.f_back is not None and (frame.f_code.co_filename in (__file__, _importlib.__file__)
                                        or frame.f_code.co_filename.startswith("<frozen importlib")):
        frame = frame.f_back
        level += not frame.f_code.co_filename.startswith("<frozen importlib")
    _warnings.warn(f"{__name__}.{old} is deprecated: it is {__name__}.{new} since {since}",
                   DeprecationWarning, stacklevel=level)
    return _importlib.import_module(f"{__name__}.{new}")


class _RenamedModuleFinder(_importlib_abc.MetaPathFinder, _importlib_abc.Loader):
    """Makes ``import iclr25.implicit_deform.experiment`` (and ``from ... import``) give a thin module that
    forwards every name to ``experiments``; no file of the old name exists (the contract forbids it)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parent, _, old = fullname.rpartition(".")
        if parent != __name__ or old not in _RENAMED:
            return None
        return _importlib_util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> None:
        return None  # the default: an empty module

    def exec_module(self, module: _ModuleType) -> None:
        target = _renamed(module.__name__.rpartition(".")[2])
        module.__doc__ = f"Deprecated alias of :mod:`{target.__name__}`."
        module.__all__ = list(getattr(target, "__all__", ()))
        module.__getattr__ = lambda name: getattr(target, name)  # PEP 562: every name from the new module


if not any(isinstance(f, _RenamedModuleFinder) for f in _sys.meta_path):
    _sys.meta_path.append(_RenamedModuleFinder())


def __getattr__(name: str) -> Any:
    if name in _RENAMED:  # iclr25.implicit_deform.experiment as an attribute, before any import of it
        return _importlib.import_module(f"{__name__}.{name}")
    return _lazy_getattr(name)


__all__ = [*_EXPORTS, "__version__"]
