"""Bad input raises ValueError/TypeError naming the argument and what was expected."""

import numpy as np
import pytest

from iclr25.pgw import cli, entropic_pgw_batch, gw, mm_space, mpgw, pgw, pgw_barycenter, pgw_pairwise
from iclr25.pgw.datasets import shapes_ii

C = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.5], [2.0, 1.5, 0.0]])
p = np.ones(3)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"C1": np.ones((3, 2))}, ValueError, "C1 must be a square"),
        ({"C2": np.array([[0.0, 1.0], [2.0, 0.0]]), "q": np.ones(2)}, ValueError, "C2 must be symmetric"),
        ({"C1": np.where(np.eye(3) > 0, np.nan, C)}, ValueError, "C1 must be finite"),
        ({"C1": -C}, ValueError, "C1 must be non-negative"),
        ({"C1": np.zeros((0, 0)), "p": np.ones(0)}, ValueError, "C1 must have at least one point"),
        ({"C1": C.astype(str)}, TypeError, "C1 must be an array of real numbers"),
        ({"C1": C.astype(complex)}, TypeError, "C1 must be real"),
        ({"p": np.array([1.0, -1.0, 1.0])}, ValueError, "p must be non-negative"),
        ({"q": np.array([1.0, np.nan, 1.0])}, ValueError, "q must be finite"),
        ({"p": np.zeros(3)}, ValueError, "p must have a positive total"),
        ({"p": np.ones(4)}, ValueError, "p must have one mass per point"),
        ({"q": np.ones((3, 1))}, ValueError, "q must be a 1-D mass vector"),
        ({"lam": 0.0}, ValueError, "lam must be a finite number > 0"),
        ({"lam": -1.0}, ValueError, "lam must be a finite number > 0"),
        ({"lam": np.inf}, ValueError, "lam must be a finite number > 0"),
        ({"lam": "1"}, TypeError, "lam must be a real number"),
        ({"method": "fw-v3"}, ValueError, "method must be one of"),
        ({"n_init": 0}, ValueError, "n_init must be an integer >= 1"),
        ({"max_iter": 1.5}, TypeError, "max_iter must be an integer"),
        ({"tol": -1.0}, ValueError, "tol must be a finite number > 0"),
        ({"G0": np.ones((3, 2))}, ValueError, "G0 must have shape"),
        ({"G0": np.full((3, 3), 5.0)}, ValueError, "G0 must satisfy"),
        ({"seed": -1}, ValueError, "seed must be a non-negative integer"),
    ],
)
def test_pgw_rejects_bad_input(kwargs, exc, match):
    args = {"C1": C, "C2": C, "p": p, "q": p, "lam": 1.0}
    options = {k: kwargs.pop(k) for k in list(kwargs) if k not in args}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        pgw(args["C1"], args["C2"], args["p"], args["q"], args["lam"], **options)


def test_entropic_method_validates_like_the_exact_one():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        pgw(C, C, p, p, 1.0, method="entropic", epsilon=0.0)
    with pytest.raises(ValueError, match="share a non-zero batch size"):
        entropic_pgw_batch(C[None], np.stack([C, C]), p[None], np.stack([p, p]), 1.0)
    with pytest.raises(ValueError, match="lam must be a number or have shape"):
        entropic_pgw_batch(C[None], C[None], p[None], p[None], [1.0, 2.0])


def test_mm_space_and_pairwise_reject_bad_input():
    with pytest.raises(ValueError, match="X must be finite"):
        mm_space([[0.0, np.inf]])
    with pytest.raises(ValueError, match="X must be an"):
        mm_space(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="metric must be one of"):
        mm_space(np.zeros((2, 2)), metric="cosine-ish")
    with pytest.raises(ValueError, match="mass must have one mass per point"):
        mm_space(np.zeros((2, 2)), mass=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="spaces must hold at least one"):
        pgw_pairwise([], 1.0)
    with pytest.raises(TypeError, match=r"spaces\[1\] must be an MMSpace"):
        pgw_pairwise([mm_space(np.eye(2)), "not a space"], 1.0)
    with pytest.raises(ValueError, match="n_jobs must be"):
        pgw_pairwise([mm_space(np.eye(2)), mm_space(np.eye(3))], 1.0, n_jobs=0)


def test_barycenter_baselines_and_data_reject_bad_input():
    with pytest.raises(ValueError, match="ps must hold one mass vector per space"):
        pgw_barycenter([C, C], [p], 1.0)
    with pytest.raises(ValueError, match="lams must be a number or hold one value per space"):
        pgw_barycenter([C, C], [p, p], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"lams\[1\] must be a finite number > 0"):
        pgw_barycenter([C, C], [p, p], [1.0, 0.0])
    with pytest.raises(ValueError, match="n_points must be an integer >= 1"):
        pgw_barycenter([C], [p], 1.0, n_points=0)
    with pytest.raises(ValueError, match="mass must be at most"):
        mpgw(C, C, p, p, mass=10.0)
    with pytest.raises(ValueError, match="C2 must be a square"):
        gw(C, np.ones(3), p, p)
    with pytest.raises(ValueError, match="n_per_class must be an integer >= 1"):
        shapes_ii(0)


def test_cli_reports_bad_files_and_leaves_no_output(tmp_path, capsys):
    bad = tmp_path / "a.npy"
    bad.write_bytes(b"not a numpy file")
    good = tmp_path / "b.csv"
    good.write_text("0,0\n1,0\n0,1\n")
    assert cli.main(["distance", str(bad), str(good)]) == 2
    assert "a.npy" in capsys.readouterr().err
    assert cli.main(["distance", str(good), str(good), "--lam", "-1"]) == 2
    assert "lam must be a finite number > 0" in capsys.readouterr().err
    folder = tmp_path / "clouds"
    folder.mkdir()
    (folder / "x.csv").write_text("0,0\n1,0\n")
    (folder / "y.csv").write_text("0,0\nnan,1\n")
    out = tmp_path / "D.npy"
    assert cli.main(["pairwise", str(folder), "--out", str(out)]) == 2
    assert "NaN" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob("D*"))
    assert cli.main(["pairwise", str(tmp_path / "missing"), "--out", str(out)]) == 2
