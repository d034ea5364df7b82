"""``python -m iclr25.rxnflow`` is ``iclr25 rxnflow``."""

import sys

from .cli import main

sys.exit(main())
