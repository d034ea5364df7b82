"""The paper's claims from the claims registry, each decided over seeds by its own rule (see README "Results").

Every seed draws its own planted problem, weights, noise and sketches; the rules, thresholds and margins (set
from the calibration seeds 100-109, claims-calibration.json) are in ``iclr25.weighted_lowrank.claims``.
"""

from pathlib import Path

from iclr25.weighted_lowrank.claims import REGISTRY

test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (written by the repro rung) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])
