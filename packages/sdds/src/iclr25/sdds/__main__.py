"""``python -m iclr25.sdds`` is ``iclr25 sdds``."""

import sys

from .cli import main

sys.exit(main())
