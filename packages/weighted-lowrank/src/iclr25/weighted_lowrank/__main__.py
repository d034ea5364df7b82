"""``python -m iclr25.weighted_lowrank`` is ``iclr25 weighted-lowrank``."""

import sys

from .cli import main

sys.exit(main())
