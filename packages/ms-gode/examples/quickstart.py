# %% [markdown]
# # iclr25-ms-gode quickstart: your own arrays
# Two systems of three uncoupled oscillators (omega = 1 and omega = 4), handed over as positions and velocities,
# learned one after the other by MS-GODE (one sub-network per system); then mode switching is asked which
# system a batch comes from, and whether it can tell them apart at all. (The README's quickstart does the same
# on the package's physics sequence.)

# %%
import numpy as np
import torch

from iclr25.ms_gode import MSGODE, ModelConfig, TrainConfig, Trajectories

torch.set_num_threads(1)
rng = np.random.default_rng(0)
t = np.arange(60)  # no times of your own: frame numbers, so omega is in radians per frame
tasks = []
for omega in (1.0, 4.0):
    amp, phase = rng.uniform(0.5, 1.5, (24, 3, 1)), rng.uniform(0, 2 * np.pi, (24, 3, 1))
    x, v = amp * np.cos(omega * t + phase), -amp * omega * np.sin(omega * t + phase)
    traj = Trajectories.from_arrays(positions=x[..., None], velocities=v[..., None], edges=[])
    tasks.append(traj.to_task(n_obs=20, sample_percent=0.6, name=f"omega{omega:g}").split((0.6, 0.2, 0.2)))
learner = MSGODE(2, ModelConfig(hidden=16), TrainConfig(epochs=4))
for train, valid, _ in tasks:
    learner.fit_task(train, valid=valid)

# %% [markdown]
# Mode switching: every sub-network predicts the second half of the observed window from its first half; the
# smallest loss wins. `selection_check` runs it on each system's validation trajectories and says in one line
# when the systems are not separable by this criterion. On frame numbers omega = 4 is faster than the Nyquist
# rate and neither sub-network predicts better than doing nothing: expect that line. With frames 0.1 time units
# apart (`times=0.1 * t`) and 16 epochs, each system gets its own sub-network (tests/test_user_fixture.py).

# %%
for j, (_, _, test) in enumerate(tasks):
    sel = learner.select_mode(test)
    print(f"system {j}: chosen mask {sel.best}, self-prediction MSEs {[round(x, 3) for x in sel.mses]}, "
          f"do-nothing {sel.trivial_mse:.3f}")
check = learner.selection_check([valid for _, valid, _ in tasks])
print("validation trajectories given their own sub-network:", check.per_task)
print(check.line() or "the systems are separable by the criterion")
