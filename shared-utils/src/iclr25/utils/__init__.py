"""iclr25.utils: the thin shared glue of the iclr25 federation.

Submodules (import them explicitly): ``results``, ``io``, ``seeding``, ``timing``, ``bench``, ``progress``,
``parallel``, ``plotting`` (extra ``[plot]``), ``testing`` (needs pytest) and ``cli`` (the ``iclr25`` command).
"""

from importlib.metadata import version as _version

from .bench import compare as compare
from .bench import measure as measure
from .io import read_graph as read_graph
from .io import read_points as read_points
from .io import read_smiles as read_smiles
from .parallel import parallel_map as parallel_map
from .results import Metric as Metric
from .results import RunResult as RunResult
from .seeding import seed_everything as seed_everything
from .timing import Timer as Timer

__version__ = _version("iclr25-utils")

__all__ = [
    "Metric", "RunResult", "Timer", "compare", "measure", "parallel_map", "read_graph",
    "read_points", "read_smiles", "seed_everything", "__version__",
]
