"""The demo figure says what it shows (issue 66): title, axis labels, one colour bar, the rollout caption."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_rollout_figure_passes_the_figure_check_and_names_the_rollouts(tmp_path, monkeypatch):
    import iclr25.memno.figures as figures
    import iclr25.utils.plotting as plotting
    from iclr25.memno.cli import _rollout_caption
    from iclr25.memno.figures import plot_rollout

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title, axis labels and colour bars, or no save
    figs = []
    monkeypatch.setattr(figures, "savefig", lambda fig, path: (figs.append(fig), plotting.savefig(fig, path,
                                                                                                 close=False))[1])
    t, x = np.linspace(0, 2.5, 26), np.linspace(0, 62, 32)
    truth = np.sin(x[None] / 5 + t[:, None])
    per_step = {f"{m} {k}": np.linspace(0.3, 1.0, 25) for m in ("FFNO", "MemNO") for k in ("one-step", "rollout")}
    caption = _rollout_caption(1.2, 1.1)
    plot_rollout(tmp_path / "predictions.png", truth, {"ffno": truth, "memno": truth}, per_step, t=t, x=x,
                 title="one-step nRMSE", caption=caption)
    assert (tmp_path / "predictions.png").is_file()
    fig = figs[-1]
    assert plotting.figure_problems(fig) == []
    assert sum(ax.get_label() == "<colorbar>" or getattr(ax, "_colorbar", None) is not None for ax in fig.axes) == 1
    assert "not below" in caption and any(caption == t.get_text() for t in fig.texts)
    assert "is below" in _rollout_caption(1.0, 1.1)
