"""``python -m iclr25.overtraining`` is ``iclr25 overtraining``."""

import sys

from .cli import main

sys.exit(main())
