"""``python -m iclr25.cl_optimal_control`` is ``iclr25 cl-optimal-control``."""

import sys

from .cli import main

sys.exit(main())
