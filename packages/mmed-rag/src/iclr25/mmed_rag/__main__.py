"""``python -m iclr25.mmed_rag`` is ``iclr25 mmed-rag``."""

import sys

from .cli import main

sys.exit(main())
