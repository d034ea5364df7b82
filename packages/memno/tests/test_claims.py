"""The paper's claims at small scale, from the claims registry (``iclr25.memno.claims``): the Mori-Zwanzig
example, MemNO against FFNO and linear extrapolation on low-resolution KS, and the resolution trend, each
decided over seeds 0, 1, 2 by its rule.

The full-size comparison (resolution/viscosity/noise/Burgers rows, the epoch ladder, external peer) is
``iclr25 memno repro``; its tables are in the README.
"""

from pathlib import Path

from iclr25.memno import mori_zwanzig_toy
from iclr25.memno.claims import REGISTRY

# every registered claim, decided at the "test" rung over seeds 0, 1, 2
test_claim = REGISTRY.pytest_test("test")
# the committed claims.json (repro rung, this version) and claims-calibration.json agree with the registry
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])


def test_mori_zwanzig_gain_vanishes_without_unresolved_modes():
    # control: with no coupling (a = 0) the resolved modes evolve on their own, so memory brings nothing
    for seed in (0, 1, 2):
        res = mori_zwanzig_toy(history=(0, 1), a=0.0, seed=seed)
        assert res.errors[0] < 1e-10

