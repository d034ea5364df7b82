"""``python -m iclr25.teochat`` is ``iclr25 teochat``."""

import sys

from .cli import main

sys.exit(main())
