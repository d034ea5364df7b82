"""``python -m iclr25.llm_regret`` is ``iclr25 llm-regret``."""

import sys

from .cli import main

sys.exit(main())
