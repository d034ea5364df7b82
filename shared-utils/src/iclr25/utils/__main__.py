"""``python -m iclr25.utils`` is the ``iclr25`` command."""

import sys

from .cli import main

sys.exit(main())
