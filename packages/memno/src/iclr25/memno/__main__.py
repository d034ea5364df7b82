"""``python -m iclr25.memno`` is ``iclr25 memno``."""

import sys

from .cli import main

sys.exit(main())
