"""The demo figure says what it shows (issue 66): a title, every panel's axis labels (figure check, strict)."""


import pytest

pytest.importorskip("matplotlib")


def test_demo_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.weighted_lowrank.figures import plot_demo

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    curves = {"noiseless": {"exact": [1e-1, 1e-5, 1e-12], "sketch": [1e-1, 1e-4, 1e-11]},
              "noise 0.001": {"exact": [1e-1, 2e-3, 1e-3], "sketch": [1e-1, 3e-3, 1e-3]}}
    path = plot_demo(tmp_path / "error_per_round.png", curves, n=50, d=40, k=3)
    assert path.is_file()


def test_repro_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.weighted_lowrank.figures import plot_repro

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and every panel's axis labels, or no save
    conv = {name: {s: {"errors": [1e-1, 1e-3, 1e-6]} for s in ("exact", "sketch")} for name in ("a", "b", "c")}
    rows = [{"k": k, **{s: {"seconds": 0.01 * k} for s in ("exact", "sketch", "pcg")}} for k in (2, 4, 8)]
    assert plot_repro(tmp_path / "repro.png", conv, rows, n_scale=100).is_file()
