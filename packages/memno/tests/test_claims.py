"""The paper's claims at small scale (seeded, with margins).

The full-size comparison (3 seeds, resolution/viscosity/noise/Burgers rows, the epoch ladder, external peer) is
``iclr25 memno repro``; its tables are in the README.
"""

import numpy as np
import pytest

from iclr25.memno import Setting, compare_models, mori_zwanzig_toy

# the repro's configuration (64 train / 64 test trajectories, width 16, 3 FFNO layers, modes = resolution // 2,
# 60 epochs) on a 256-point solver grid (measured: the res-32 ratio 0.597 vs 0.596 on 512 points)
CONFIG = {"n_train": 64, "n_test": 64, "width": 16, "n_layers": 3, "batch_size": 16, "t_burn": 5.0, "n_x": 256,
          "with_rollout": False}


def test_mori_zwanzig_memory_beats_markovian_by_over_100x():
    # paper §3: on a linear PDE with unresolved modes, memory is arbitrarily better than any Markovian model
    res = mori_zwanzig_toy(history=(0, 1, 2), seed=0)
    assert res.memory_gain > 100, res.errors
    assert res.errors[2] < res.errors[1] < res.errors[0]


def test_mori_zwanzig_gain_vanishes_without_unresolved_modes():
    # control: with no coupling (a = 0) the resolved modes evolve on their own, so memory brings nothing
    res = mori_zwanzig_toy(history=(0, 1), a=0.0, seed=0)
    assert res.errors[0] < 1e-10


def _ratio(out):
    return out["memno"]["eval"].nrmse / out["ffno"]["eval"].nrmse


@pytest.fixture(scope="module")
def low_res():
    # developed KS chaos (ν = 0.075, after a 5 s burn-in) seen on 32 points, modes = 16 (every resolved mode)
    return {seed: compare_models(Setting(32, 0.075), ["ffno", "memno"], epochs=60, seed=seed, **CONFIG)
            for seed in (0, 1)}


@pytest.mark.parametrize("seed", [0, 1])
def test_memno_at_most_0p7_ffno_on_low_resolution_ks(low_res, seed):
    # identical Markovian layers and budget; the memory layer is the only difference (the note's bar: 0.7)
    out = low_res[seed]
    assert out["modes"] == 16
    assert _ratio(out) <= 0.7, {k: out[k]["eval"].nrmse for k in ("ffno", "memno", "do-nothing")}
    # memory also beats the simplest memory predictor, linear extrapolation from the last two frames
    assert out["memno"]["eval"].nrmse < out["linear-extrapolation"]["eval"].nrmse


def test_memory_gain_shrinks_at_high_resolution(low_res):
    # the trend: at 128 points (modes = 64, the dominant KS wavenumber m ≈ 26 resolved) the Markovian model
    # sees the dynamics and the ratio moves towards 1 (measured 1.31 here, 1.23 at 60 epochs in the repro's
    # exploration), against 0.60 at 32 points. Same seed and trajectories; the res-128 side trains 15 epochs to
    # fit the suite: at 128 points 15 epochs already bring FFNO far below do-nothing, while at 32 points the
    # memory layer needs more (ratio 0.97 at 15 epochs, see the ladder of the repro)
    hi = compare_models(Setting(128, 0.075), ["ffno", "memno"], epochs=15, seed=0, **CONFIG)
    assert hi["modes"] == 64
    assert abs(np.log(_ratio(hi))) < abs(np.log(_ratio(low_res[0]))), (_ratio(hi), _ratio(low_res[0]))
    # at 128 points FFNO has learned the dynamics: far below the do-nothing predictor
    assert hi["ffno"]["eval"].nrmse < 0.5 * hi["do-nothing"]["eval"].nrmse
