"""The paper's claims from the claims registry, each decided over seeds by its own rule (see README "Results").

Every seed draws its own planted problem, weights, noise and sketches; the rules, thresholds and margins (set
from the spread over seeds 0-4) are in ``iclr25.weighted_lowrank.claims``.
"""

from iclr25.weighted_lowrank.claims import REGISTRY

test_claim = REGISTRY.pytest_test("test")
