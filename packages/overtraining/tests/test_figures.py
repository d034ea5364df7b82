"""The demo figure says what it shows (issue 66): a title, every panel's axis labels (figure check, strict)."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_progress_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.overtraining.figures import progress_figure

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    epochs = np.arange(0, 200)
    curves = {"margin": np.linspace(0, 0.3, 200), "train_acc": np.minimum(1, epochs / 10),
              "test_acc": np.minimum(0.9, epochs / 20)}
    run = SimpleNamespace(epochs=epochs, curve=curves.__getitem__)
    hp = SimpleNamespace(run=run, E0=10, end_epoch=200)
    path = progress_figure([hp], tmp_path / "hidden_progress.png", title="hidden progress")
    assert path.is_file()


def test_analysis_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.overtraining.figures import analysis_figure

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title, axis labels and a colour bar, or no save
    n = 4
    res = SimpleNamespace(days=list(range(n)), behaviour=np.linspace(0.5, 1, n), decoding_accuracy=np.full(n, 0.8),
                          probe_accuracy=np.full(n, 0.7), signed_margin=np.linspace(-0.1, 0.3, n),
                          non_separable_days=[0], margin_trend=SimpleNamespace(rho=0.8, p_value=0.04),
                          probe_correct=np.random.default_rng(0).random((n, 5)) > 0.5, reference_day=1)
    assert analysis_figure(res, tmp_path / "analysis.png").is_file()
