"""``python -m iclr25.augood`` is ``iclr25 augood``."""

import sys

from .cli import main

sys.exit(main())
