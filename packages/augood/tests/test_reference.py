"""An independent reference for CCPart, written from the paper's pseudo-code (Algorithm 1), not from the
implementation: a dense similarity matrix, its own graph search, its own tie rule and its own label balancing,
in plain Python. It shares no code with ``iclr25.augood.partition``.

Algorithm 1 (CCPart): link i and j when sim(i, j) reaches λ; take the connected components; go through them
from the smallest (equal sizes: the one with the smaller row id first); put a component in the test set when
the test set stays below ``test_size·N`` and, with labels, no class exceeds its cap; then fill validation the
same way from what is left; the rest is training.
"""

from collections import Counter

import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components

from iclr25.augood import ccpart, ccpart_sweep
from iclr25.augood.partition import threshold_components


def brute_ccpart(S, lam, rule, test_size, valid_size, classes=None, balance="proportional"):
    n = len(S)
    lam = S.dtype.type(lam)  # ties are decided in the matrix's own precision
    linked = (lambda v: v >= lam) if rule == ">=" else (lambda v: v > lam)
    adj = [[j for j in range(n) if j != i and (linked(S[i, j]) or linked(S[j, i]))] for i in range(n)]
    seen = [False] * n
    comps = []
    for i in range(n):
        if seen[i]:
            continue
        seen[i] = True
        stack, members = [i], []
        while stack:
            u = stack.pop()
            members.append(u)
            for v in adj[u]:
                if not seen[v]:
                    seen[v] = True
                    stack.append(v)
        comps.append(sorted(members))
    comps.sort(key=lambda c: (len(c), c[0]))

    def caps(fraction):
        if classes is None:
            return None
        total = Counter(classes)
        if balance == "proportional":
            return {k: max(1.0, 1.3 * fraction * total[k]) for k in total}
        return {k: max(1.0, 1.3 * fraction * n / len(total)) for k in total}

    def fill(fraction, taken):
        chosen, per_class, cap = [], Counter(), caps(fraction)
        if fraction <= 0:
            return chosen
        for c in comps:
            if c[0] in taken or (len(chosen) + len(c)) / n >= fraction:
                continue
            if cap is not None:
                add = Counter(classes[i] for i in c)
                if any(per_class[k] + add[k] > cap[k] for k in add):
                    continue
                per_class += add
            chosen += c
        return chosen

    test = fill(test_size, set())
    valid = fill(valid_size, set(test))
    train = [i for i in range(n) if i not in set(test) | set(valid)]
    return sorted(train), sorted(valid), sorted(test)


def _lattice_matrix(rng, n):
    """Symmetric float32 similarities on the lattice {0, 1/4, 1/2, 3/4, 1}: every threshold below is a tie."""
    v = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(n, n), p=[0.8, 0.05, 0.08, 0.05, 0.02]).astype(np.float32)
    S = np.triu(v, 1)
    return S + S.T


def _same(p, ref):
    return (p.train.tolist(), p.valid.tolist(), p.test.tolist()) == ref


@pytest.mark.parametrize("rule", [">=", ">"])
def test_ccpart_equals_brute_force_on_exact_ties(rule):
    rng = np.random.default_rng(0)
    cases = 0
    for trial in range(40):
        n = int(rng.integers(6, 45))
        S = _lattice_matrix(rng, n)
        classes = rng.integers(0, 3, n)
        ties = 0
        for lam in (0.25, 0.5, 0.75):
            ties += int((S == np.float32(lam)).sum())
            for test_size, valid_size in ((0.2, 0.1), (0.4, 0.0), (0.3, 0.3)):
                ref = brute_ccpart(S, lam, rule, test_size, valid_size)
                p = ccpart(S, lam, test_size=test_size, valid_size=valid_size, tie_break="stable", tie_rule=rule)
                assert _same(p, ref), (trial, lam, test_size)
                for balance in ("proportional", "equal"):
                    ref = brute_ccpart(S, lam, rule, test_size, valid_size, list(classes), balance)
                    p = ccpart(S, lam, test_size=test_size, valid_size=valid_size, labels=classes,
                               tie_break="stable", tie_rule=rule, balance=balance)
                    assert _same(p, ref), (trial, lam, test_size, balance)
                cases += 1
        assert ties > 0
    assert cases == 40 * 9


def test_tie_rules_differ_exactly_on_ties():
    # 0-1 at exactly 0.5, 2-3 at 0.75: with ">=" both pairs are components of 2, with ">" only 2-3
    S = np.zeros((5, 5), np.float32)
    S[0, 1] = S[1, 0] = 0.5
    S[2, 3] = S[3, 2] = 0.75
    ge = ccpart(S, 0.5, test_size=0.5, valid_size=0.0, tie_break="stable", tie_rule=">=")
    gt = ccpart(S, 0.5, test_size=0.5, valid_size=0.0, tie_break="stable", tie_rule=">")
    assert ge.test.tolist() == [4] and ge.n_components == 3 and ge.tie_rule == ">="
    assert gt.test.tolist() == [0, 1] and gt.n_components == 4 and gt.tie_rule == ">"


@pytest.mark.parametrize("rule", [">=", ">"])
def test_brute_force_on_molecules_with_tanimoto_ties(small_sim, rule):
    """400 solubility molecules: many pairs have a Tanimoto of exactly 1/2, 2/5, 3/5, ... (float32)."""
    sim, _, y, _ = small_sim
    dense = sim.toarray()
    for lam in (0.4, 0.5, 0.6):
        assert (dense == np.float32(lam)).sum() > 0  # the tie case occurs
        ref = brute_ccpart(dense, lam, rule, 0.2, 0.1)
        assert _same(ccpart(sim, lam, tie_break="stable", tie_rule=rule), ref), lam
        ref = brute_ccpart(dense, lam, rule, 0.2, 0.1, list(np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))),
                           "equal")
        p = ccpart(sim, lam, labels=np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75])), tie_break="stable",
                   tie_rule=rule, balance="equal")
        assert _same(p, ref), lam
    # and the two rules do give different partitions here
    a = ccpart(sim, 0.5, tie_break="stable", tie_rule=">=")
    b = ccpart(sim, 0.5, tie_break="stable", tie_rule=">")
    assert a.n_components < b.n_components


def test_one_pass_components_equal_scipy_per_threshold(small_sim):
    sim = small_sim[0]
    t = np.round(np.arange(0.3, 0.96, 0.05), 10)
    for rule in (">=", ">"):
        for lam, labels in zip(t, threshold_components(sim, t, rule), strict=True):
            g = sim.copy()
            g.data = (g.data >= np.float32(lam)) if rule == ">=" else (g.data > np.float32(lam))
            g.eliminate_zeros()
            _, ref = connected_components(g, directed=False)
            np.testing.assert_array_equal(labels, ref)  # same labels: both in smallest-member order


def test_sweep_equals_single_threshold_calls(small_sim):
    sim = small_sim[0]
    t = [0.35, 0.5, 0.65, 0.8]
    for p, lam in zip(ccpart_sweep(sim, t, tie_break="stable", tie_rule=">"), t, strict=True):
        q = ccpart(sim, lam, tie_break="stable", tie_rule=">")
        assert p.test.tolist() == q.test.tolist() and p.valid.tolist() == q.valid.tolist()
