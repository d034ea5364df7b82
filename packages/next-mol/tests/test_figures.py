"""The demo figure says what it shows (issue 66): a title and axis labels (figure check, strict), one panel per
method and reference conformer."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")
Chem = pytest.importorskip("rdkit.Chem")


def test_conformer_figure_passes_the_figure_check(tmp_path, monkeypatch):
    import iclr25.next_mol.figures as figures
    import iclr25.utils.plotting as plotting

    monkeypatch.setenv(plotting.FIGURE_CHECK_ENV, "strict")  # a title and axis labels, or no save
    figs = []
    monkeypatch.setattr(figures, "savefig",
                        lambda fig, path: (figs.append(fig), plotting.savefig(fig, path, close=False))[1])
    mol = Chem.MolFromSmiles("CCC(C)O")
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(4, 5, 3)) * 1.5
    gen = {"DMT": ref[:, None] + 0.2 * rng.normal(size=(4, 2, 5, 3)), "ETKDG": rng.normal(size=(8, 5, 3)) * 1.5}
    gen["DMT"] = gen["DMT"].reshape(8, 5, 3)
    path = figures.plot_conformers(tmp_path / "conformers.png", SimpleNamespace(mol=mol, smiles="CCC(C)O"), gen, ref,
                                   title="CCC(C)O")
    assert path.is_file()
    assert len(figs[-1].axes) == 2 * 3  # two methods x the first three references
