"""The demo figure says what it shows (issue 66): a title and axis labels (figure check, strict)."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_matching_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.pgw.experiments import OutlierMatching
    from iclr25.pgw.figures import plot_matching

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (10, 2))
    Y = np.vstack([X + 0.1, rng.uniform(0, 1, (2, 2))])
    plan = np.hstack([np.eye(10) / 10, np.zeros((10, 2))])
    m = OutlierMatching(X, Y, 2, 0.5, SimpleNamespace(plan=plan), SimpleNamespace(plan=plan[:, ::-1]))
    plot_matching(m, tmp_path / "matching.png")
    assert (tmp_path / "matching.png").is_file()
