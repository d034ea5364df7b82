"""The 0.2 refactor (one Frank-Wolfe loop, oracles as strategies, no second L o G in the result) leaves the
exact results of 0.1.2 unchanged: ``data/reference_0_1_2.npz`` was written by ``data/make_reference.py``
with iclr25-pgw 0.1.2 (commit 65b484f)."""

from pathlib import Path

import numpy as np
import pytest

from iclr25.pgw import pgw, pgw_barycenter

REF = np.load(Path(__file__).parent / "data" / "reference_0_1_2.npz")


def _terms(r):
    return np.array([r.distance, r.transport_cost, r.penalty, r.mass, r.n_iter])


@pytest.mark.parametrize("seed", range(4))
def test_exact_results_equal_those_of_0_1_2(seed):
    C1, C2, lam = REF[f"s{seed}_Ca"], REF[f"s{seed}_Cb"], float(REF[f"s{seed}_lam"])
    p, q = np.ones(len(C1)), np.ones(len(C2))
    for method in ("fw-v1", "fw-v2"):
        r = pgw(C1, C2, p, q, lam, method=method)
        np.testing.assert_allclose(_terms(r), REF[f"s{seed}_{method}_terms"], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(r.plan, REF[f"s{seed}_{method}_plan"], rtol=0, atol=1e-10)
    r = pgw(C1, C2, p, q, lam, n_init=3, seed=seed)
    np.testing.assert_allclose(_terms(r), REF[f"s{seed}_ninit3_terms"], rtol=1e-10, atol=1e-10)


def test_barycenter_equals_that_of_0_1_2():
    Cs = [REF["bary_in0"], REF["bary_in1"]]
    r = pgw_barycenter(Cs, [np.ones(len(C)) for C in Cs], 1.0, n_points=10, mass=1.0, max_iter=5)
    np.testing.assert_allclose(r.C, REF["bary_C"], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(r.objective, REF["bary_obj"], rtol=1e-9, atol=1e-10)
