"""Claim 2 (first half): the gap rule selects the documented k on hand-made similarity lists."""

import numpy as np
import pytest

from iclr25.mmed_rag import fixed_select, gap_select, ratio_select, select_contexts, to_positive


@pytest.mark.parametrize("sims, gamma, k", [
    ([0.90, 0.88, 0.50, 0.49, 0.48], 0.2, 2),      # log(0.88/0.50) = 0.57 is the first drop > 0.2
    ([0.90, 0.50, 0.49], 0.2, 1),                  # drop right after the top-1
    ([0.90, 0.89, 0.88, 0.87], 0.2, 4),            # no drop: the cap K
    ([0.9, 0.8, 0.7, 0.3, 0.29], 0.2, 3),          # log(.8/.7)=0.134 < 0.2 < log(.7/.3)
    ([0.9, 0.8, 0.7, 0.3, 0.29], 0.1, 1),          # log(.9/.8)=0.118 > 0.1
])
def test_gap_rule_documented_k(sims, gamma, k):
    assert gap_select(sims, gamma=gamma).k.tolist() == [k]


def test_gap_rule_cap_and_batch():
    sims = np.array([[0.9, 0.88, 0.86, 0.84, 0.2], [0.9, 0.3, 0.29, 0.28, 0.27]])
    sel = gap_select(sims, gamma=0.2, k_max=3)
    assert sel.k.tolist() == [3, 1]
    assert sel.mask.tolist() == [[True, True, True], [True, False, False]]


def test_ratio_rule_and_fixed():
    assert ratio_select([0.9, 0.8, 0.5, 0.4], threshold=1.5).k.tolist() == [2]   # 0.9/0.5 = 1.8 >= 1.5
    assert ratio_select([0.9, 0.2], threshold=1.5).k.tolist() == [1]             # top-1 always kept
    assert fixed_select([[0.9, 0.8, 0.5]], k=2).k.tolist() == [2]
    assert select_contexts([0.9, 0.8, 0.5], rule="fixed", k_max=5).k.tolist() == [3]


def test_negative_cosines_need_the_positive_map():
    cos = np.array([0.2, -0.1, -0.6])
    with pytest.raises(ValueError, match="to_positive"):
        gap_select(cos, gamma=0.1)
    s = to_positive(cos)
    assert np.all(s > 0) and np.all(np.diff(s) < 0)
    # S = (0.6, 0.45, 0.2): log(0.6/0.45) = 0.29 <= 0.5 < log(0.45/0.2) = 0.81, so k = 2
    assert gap_select(s, gamma=0.5).k.tolist() == [2]
