"""``python -m iclr25.ms_gode`` is ``iclr25 ms-gode``."""

import sys

from .cli import main

sys.exit(main())
