"""``python -m iclr25.knowledge_manipulation`` is ``iclr25 knowledge-manipulation``."""

import sys

from .cli import main

sys.exit(main())
