"""iclr25.v1_topology: Emergent Orientation Maps —— Mechanisms, Coding Efficiency and Robustness
(Zhong, Wang, Dai, Huang, Huang, Wang, Roe, Yu; ICLR 2025).

A self-evolving E-I spiking network (LIF sheets on a torus, retinotopic patches with tunable overlap,
Hebbian-Oja / correlation-measuring / threshold plasticity, batched over images), species presets, an
overlap × range sweep, a rate-based GCAL baseline, and a ``maps`` API for any orientation map
(pinwheels, density per Λ², chirality, Λ, NNPD, wiring cost, sparseness, robustness).
"""

from importlib.metadata import version as _version

from . import maps as maps
from .experiments import Evaluation as Evaluation
from .experiments import TrainResult as TrainResult
from .experiments import evaluate as evaluate
from .experiments import sweep as sweep
from .experiments import train as train
from .fields import analytic_pinwheel_field as analytic_pinwheel_field
from .fields import gaussian_random_field as gaussian_random_field
from .fields import salt_and_pepper_map as salt_and_pepper_map
from .gcal import GCAL as GCAL
from .gcal import GCALConfig as GCALConfig
from .images import builtin_images as builtin_images
from .images import load_images as load_images
from .images import read_images as read_images
from .images import whiten as whiten
from .maps import MapSummary as MapSummary
from .maps import Pinwheels as Pinwheels
from .maps import RingTest as RingTest
from .maps import column_spacing as column_spacing
from .maps import orientation_tuning as orientation_tuning
from .maps import pinwheel_density as pinwheel_density
from .maps import pinwheels as pinwheels
from .maps import random_field_density as random_field_density
from .maps import ring_test as ring_test
from .maps import summarize_map as summarize_map
from .network import SESNN as SESNN
from .network import NetworkConfig as NetworkConfig
from .presets import SPECIES as SPECIES
from .presets import load_preset as load_preset
from .presets import preset_config as preset_config
from .probe import OrientationMap as OrientationMap
from .probe import measure_orientation_map as measure_orientation_map

__version__ = _version("iclr25-v1-topology")

__all__ = [
    "maps", "SESNN", "NetworkConfig", "train", "TrainResult", "evaluate", "Evaluation", "sweep",
    "measure_orientation_map", "OrientationMap", "GCAL", "GCALConfig", "SPECIES", "load_preset",
    "preset_config", "builtin_images", "load_images", "read_images", "whiten", "gaussian_random_field",
    "analytic_pinwheel_field", "salt_and_pepper_map", "pinwheels", "Pinwheels", "pinwheel_density",
    "column_spacing", "orientation_tuning", "summarize_map", "MapSummary", "ring_test", "RingTest",
    "random_field_density", "__version__",
]
