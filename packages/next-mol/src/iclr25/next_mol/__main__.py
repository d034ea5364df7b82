"""``python -m iclr25.next_mol`` is ``iclr25 next-mol``."""

import sys

from .cli import main

sys.exit(main())
