"""The demo figure's title reads as a sentence (issue 66: no space before punctuation from the tokenised
question) and passes the figure check (strict)."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_sequence_figure_title_has_no_stray_space(tmp_path, monkeypatch):
    import iclr25.teochat.figures as figures
    import iclr25.utils.plotting as plotting

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")
    figs = []
    monkeypatch.setattr(figures, "savefig",
                        lambda fig, path: (figs.append(fig), plotting.savefig(fig, path, close=False))[1])
    frames = [np.zeros((16, 16, 3), dtype=np.uint8)] * 2
    seq = SimpleNamespace(chronological=lambda: frames, dates=["2020-01-01", "2021-01-01"], order=[0, 1], size=16,
                          scene="s")
    figures.plot_sequence_boxes(tmp_path / "example.png", seq, "[10, 10, 50, 50]", "[12, 10, 50, 52]",
                                title="identify the buildings that changed . (TEOChat checkpoint)")
    assert figs[-1]._suptitle.get_text() == "identify the buildings that changed. (TEOChat checkpoint)"
