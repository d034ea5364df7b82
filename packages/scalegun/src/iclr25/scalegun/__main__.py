"""``python -m iclr25.scalegun`` is ``iclr25 scalegun``."""

import sys

from .cli import main

sys.exit(main())
