"""``python -m iclr25.pgw`` is ``iclr25 pgw``."""

import sys

from .cli import main

sys.exit(main())
