"""``python -m iclr25.{{module}}`` is ``iclr25 {{slug}}``."""

import sys

from .cli import main

sys.exit(main())
