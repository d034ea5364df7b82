"""``python -m iclr25.piorf`` is ``iclr25 piorf``."""

import sys

from .cli import main

sys.exit(main())
