"""The demo figure says what it shows (issue 66): a title, axis labels, a colour bar for every panel's colour."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_flow_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.utils.plotting as plotting
    from iclr25.piorf.figures import flow_figure

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title, axis labels and colour bars, or no save
    xs, ys = np.meshgrid(np.linspace(0, 8, 9), np.linspace(0, 2, 3))
    pos = np.stack([xs.ravel(), ys.ravel()], 1)
    cells = np.array([[r * 9 + c, r * 9 + c + 1, (r + 1) * 9 + c] for r in range(2) for c in range(8)]
                     + [[r * 9 + c + 1, (r + 1) * 9 + c + 1, (r + 1) * 9 + c] for r in range(2) for c in range(8)])
    traj = SimpleNamespace(pos=pos, cells=cells, velocity=np.random.default_rng(0).normal(size=(2, len(pos), 2)))
    rw = SimpleNamespace(added=np.array([[0, 13], [1, 13]]), bottleneck=np.array([0, 1]), n_added=2)
    digl = SimpleNamespace(added=np.array([[0, 26]]), bottleneck=np.array([], dtype=int), n_added=1)
    path = flow_figure(tmp_path / "rewiring.png", traj, -1, {"PIORF": rw, "DIGL": digl}, "added edges over |v|")
    assert path.is_file()
