"""The demo figure says what it shows (issue 66): a title and axis labels (figure check, strict)."""

from types import SimpleNamespace

import pytest

pytest.importorskip("matplotlib")


def test_cot_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.knowledge_manipulation.demo import cot_figure

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    acc = lambda a, n=20: SimpleNamespace(accuracy=a, n=n, chance=0.55)  # noqa: E731
    no_cot = SimpleNamespace(train=acc(1.0), test=acc(0.5), cot_prompt=(acc(0.6), acc(0.55)))
    cot = SimpleNamespace(train=acc(1.0), test=acc(0.8))
    path = cot_figure(no_cot, cot, tmp_path / "cot.png", "month parity: CoT 0.80 vs no CoT 0.50")
    assert path.is_file()
