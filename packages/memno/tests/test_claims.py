"""The paper's claims at small scale (seeded, with margins).

The full-size comparison (2 seeds, 192 training trajectories, trend and noise settings, external peer) is
``iclr25 memno repro``; its table is in the README.
"""

import numpy as np
import pytest

from iclr25.memno import Setting, evaluate, ks_observed, make_model, mori_zwanzig_toy, train


def test_mori_zwanzig_memory_beats_markovian_by_over_100x():
    # paper §3: on a linear PDE with unresolved modes, memory is arbitrarily better than any Markovian model
    res = mori_zwanzig_toy(history=(0, 1, 2), seed=0)
    assert res.memory_gain > 100, res.errors
    assert res.errors[2] < res.errors[1] < res.errors[0]


def test_mori_zwanzig_gain_vanishes_without_unresolved_modes():
    # control: with no coupling (a = 0) the resolved modes evolve on their own, so memory brings nothing
    res = mori_zwanzig_toy(history=(0, 1), a=0.0, seed=0)
    assert res.errors[0] < 1e-10


@pytest.fixture(scope="module")
def lossy_ks():
    # developed KS chaos (ν = 0.075, after a 5 s burn-in) seen on 32 points: ~88 % of the spectral energy is
    # above the coarse grid's Nyquist frequency, the regime where the paper reports the memory benefit
    data = ks_observed(Setting(32, 0.075), 64, seed=0, t_burn=5.0, n_x=256)
    return data.split(48)


def test_memno_beats_ffno_on_lossy_ks(lossy_ks):
    train_set, test_set = lossy_ks
    errs = {}
    for name in ("ffno", "memno"):
        model = make_model(name, width=16, n_layers=2, modes=8, seed=0)
        train(model, train_set, epochs=24, batch_size=8, lr=3e-3, seed=0)
        errs[name] = evaluate(model, test_set, with_rollout=False).nrmse
    # identical Markovian layers and budget; the memory layer is the only difference.
    # measured: 0.253 vs 0.384 (ratio 0.66; seed 1 gives 0.80); the note's bar for the full scale is 0.7
    assert errs["memno"] < 0.8 * errs["ffno"], errs
    assert np.isfinite(list(errs.values())).all()
