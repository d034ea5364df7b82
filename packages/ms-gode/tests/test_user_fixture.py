"""Issue 62's user-style arrays: mode switching on data the package did not make.

Two systems of three uncoupled oscillators (omega = 1 and omega = 4, 24 trajectories each) handed over as
positions and velocities (``simulate_oscillators`` builds them with ``Trajectories.from_arrays``), observed with
``observe(n_obs=20, sample_percent=0.6)``, split 0.6 / 0.2 / 0.2, learned by ``MSGODE`` with hidden 16. On two
time axes: frames 0.1 time units apart (16 epochs), and no times at all (frame numbers, omega in radians per frame,
4 epochs: the issue's case, where omega = 4 is above the Nyquist rate). Either mode switching gives at least 90 %
of each task's fresh test batches their own sub-network, or the learner's validation check says in one line that
the tasks are not separable by the criterion, with the per-mask losses. The ablation of the causes is
``benchmarks/mode_switch_ablation.py`` (``docs/mode_switch_ablation.json``).
"""

import numpy as np
import pytest

from iclr25.ms_gode import MSGODE, ModelConfig, TrainConfig, simulate_oscillators

SEED = 7  # no ablation (seeds 0-2) or probe ran here
OMEGAS = (1.0, 4.0)


def _tasks(dt, n=24, fresh=False):
    off = 50 if fresh else 0
    return [simulate_oscillators(n, omega=w, dt=dt, seed=100 * SEED + off + i).to_task(
        n_obs=20, sample_percent=0.6, name=f"omega{w:g}", seed=1 if fresh else 0) for i, w in enumerate(OMEGAS)]


@pytest.mark.parametrize(("dt", "epochs"), [(0.1, 16), (None, 4)], ids=["dt0.1", "frames"])
def test_two_oscillator_fixture_switches_or_says_not_separable(dt, epochs, tmp_path):
    splits = [t.split((0.6, 0.2, 0.2)) for t in _tasks(dt)]
    assert [len(s) for s in splits[0]] == [14, 5, 5]
    learner = MSGODE(2, ModelConfig(hidden=16), TrainConfig(epochs=epochs), seed=SEED)
    for tr, va, _ in splits:
        learner.fit_task(tr, valid=va)
    # per task: 8 fresh batches of 5 trajectories, each scaled by its own ranges (as `predict` does with a file)
    fresh = _tasks(dt, n=40, fresh=True)
    acc = [float(np.mean([learner.select_mode(te, np.arange(b, b + 5)).best == j for b in range(0, 40, 5)]))
           for j, te in enumerate(fresh)]
    # the split's test parts, one batch each
    own = [learner.select_mode(te).best == j for j, (_, _, te) in enumerate(splits)]
    check = learner.selection_check([va for _, va, _ in splits])
    assert len(check.per_task) == 2 and all(len(row) == 2 for row in check.losses)
    # the check travels with the exported state (what `predict` reads)
    assert MSGODE.load_state(learner.export_state(tmp_path / "state.npz")).check == check
    if check.separable:
        assert min(acc) >= 0.9 and all(own), (acc, own, check)
    else:
        line = check.line()
        assert "\n" not in line and "not separable by the criterion" in line and "per-mask losses" in line, line
        for j, f in enumerate(check.per_task):
            if f < check.bar:
                assert str([round(x, 1) for x in check.losses[j]]) in line
