"""The demo figure says what it shows (issue 66): a title, every panel's axis labels (figure check, strict)."""


import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_regret_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.llm_regret.figures import regret_figure

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    families, agents, T = ("uniform", "sine_trend", "alternating"), ("hedge", "ftpl", "ftl", "uniform"), 50
    rng = np.random.default_rng(0)
    curves = {(f, a): np.cumsum(rng.uniform(0, 1, T)) for f in families for a in agents}
    path = regret_figure(curves, families, agents, tmp_path / "regret_curves.png", T, n_seeds=3)
    assert path.is_file()
