"""``python -m iclr25.implicit_deform`` is ``iclr25 implicit-deform``."""

import sys

from .cli import main

sys.exit(main())
