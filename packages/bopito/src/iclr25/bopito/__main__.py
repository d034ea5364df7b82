"""``python -m iclr25.bopito`` is ``iclr25 bopito``."""

import sys

from .cli import main

sys.exit(main())
