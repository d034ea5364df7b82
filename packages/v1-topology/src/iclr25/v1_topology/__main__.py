"""``python -m iclr25.v1_topology`` is ``iclr25 v1-topology``."""

import sys

from .cli import main

sys.exit(main())
