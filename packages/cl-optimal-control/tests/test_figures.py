"""The demo figures say what they show (issue 66): a title, axis labels, one training-time axis per column."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_schedule_figure_passes_the_figure_check_and_shares_the_time_axis(tmp_path, monkeypatch):
    import iclr25.cl_optimal_control.figures as figures
    import iclr25.utils.plotting as plotting

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    figs = []
    monkeypatch.setattr(figures, "savefig",
                        lambda fig, path: (figs.append(fig), plotting.savefig(fig, path, close=False))[1])
    problem = SimpleNamespace(alpha_1=4.0, alpha_f=20.0)
    alpha = np.linspace(0, 20, 81)
    errors = np.stack([0.5 * np.exp(-alpha / 5) + 0.01, 0.5 * np.exp(-alpha / 8) + 0.01], axis=1)
    schedule = SimpleNamespace(u=np.linspace(0, 1, 8)[:, None], eta_factor=np.ones(8), n_intervals=8)
    res = SimpleNamespace(schedule=schedule, trajectory=SimpleNamespace(alpha=alpha, errors=errors))
    seq = SimpleNamespace(alpha=alpha, errors=errors * 1.2)
    path = figures.plot_schedules(tmp_path / "optimal_schedule.png", [("γ = 0.5", problem, res, seq)],
                                  title="optimal replay")
    assert path.is_file()
    top, bottom = figs[-1].axes[:2]
    assert top.get_xlim() == bottom.get_xlim() == (0.0, 20.0)  # the schedule and the errors on one time axis
