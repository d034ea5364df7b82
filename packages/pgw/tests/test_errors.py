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


@pytest.mark.parametrize(("method", "option", "value"), [
    ("entropic", "n_init", 3), ("entropic", "seed", 1), ("entropic", "n_init", 1),
    ("fw-v1", "epsilon", 1e-3), ("fw-v2", "epsilon", 1e-2),
])
def test_options_a_method_does_not_use_are_rejected_by_name(method, option, value):
    with pytest.raises(ValueError, match=rf"^{option} is (not|only) used by method="):
        pgw(C, C, p, p, 1.0, method=method, **{option: value})


@pytest.mark.parametrize(("method", "option", "value"), [
    ("entropic", "n_jobs", 2), ("entropic", "backend", "loky"), ("entropic", "seed", 0),
    ("fw-v1", "batch_size", 8), ("fw-v1", "epsilon", 1e-3),
])
def test_pairwise_rejects_options_its_method_does_not_use(method, option, value):
    spaces = [mm_space(np.eye(2)), mm_space(np.eye(3))]
    with pytest.raises(ValueError, match=rf"^{option} is (not|only) used by method="):
        pgw_pairwise(spaces, 1.0, method=method, **{option: value})


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
    assert "--lam must be a finite number > 0" in capsys.readouterr().err
    folder = tmp_path / "clouds"
    folder.mkdir()
    (folder / "x.csv").write_text("0,0\n1,0\n")
    (folder / "y.csv").write_text("0,0\nnan,1\n")
    out = tmp_path / "D.npy"
    assert cli.main(["pairwise", str(folder), "--out", str(out)]) == 2
    assert "NaN" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob("D*"))
    assert cli.main(["pairwise", str(tmp_path / "missing"), "--out", str(out)]) == 2


@pytest.mark.parametrize(("argv", "message"), [
    (["distance", "A.npy", "B.npy", "--lam", "0"], "--lam must be a finite number > 0, got 0.0"),
    (["distance", "A.npy", "B.npy", "--lam", "nan"], "--lam must be a finite number > 0"),
    (["distance", "A.npy", "B.npy", "--mass", "-2"], "--mass must be a finite number > 0"),
    (["distance", "A.npy", "B.npy", "--n-init", "0"], "--n-init must be an integer >= 1"),
    (["distance", "A.npy", "B.npy", "--seed", "-1"], "--seed must be a non-negative integer"),
    (["distance", "A.npy", "B.npy", "--plan", "plan.txt"], "--plan must name a .npy file"),
    (["pairwise", "DIR", "--out", "D.npy", "--n-jobs", "0"], "--n-jobs must be a positive integer or -1"),
    (["pairwise", "DIR", "--out", "D.txt"], "--out must name a .npy file"),
    (["repro", "--n-jobs", "-3"], "--n-jobs must be a positive integer or -1"),
    (["repro", "--n-per-class", "9"], "--n-per-class must be an integer >= 10"),
    (["repro", "--sizes", "100", "3"], "--sizes must be point counts >= 10"),
    (["repro", "--n-per-class", "1000000000000"], "--n-per-class 1000000000000 needs about"),
    (["repro", "--sizes", "100", "1000000000"], "--sizes 1000000000 needs about"),
])
def test_cli_options_are_checked_first_and_named_by_their_flag(tmp_path, monkeypatch, capsys, argv, message):
    # the files named do not exist: an option error must come before any file is read, and before any work
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_cli_pairwise_takes_files_or_a_folder(tmp_path, capsys):
    rng = np.random.default_rng(0)
    for name in ("b.npy", "a.npy", "c.npy"):
        np.save(tmp_path / name, rng.normal(size=(12, 2)))
    out = tmp_path.parent / f"{tmp_path.name}-out"
    assert cli.main(["pairwise", str(tmp_path), "--out", str(out / "D.npy")]) == 0
    D = np.load(out / "D.npy")
    assert (out / "D.names.txt").read_text().split() == ["a.npy", "b.npy", "c.npy"]
    files = [str(tmp_path / n) for n in ("a.npy", "b.npy", "c.npy")]
    assert cli.main(["pairwise", *files, "--out", str(tmp_path / "E.npy"), "--n-jobs", "2"]) == 0
    assert "3 of 3 pairs in this process" in capsys.readouterr().out
    np.testing.assert_allclose(np.load(tmp_path / "E.npy"), D, rtol=1e-12)
    # the output may not sit inside the folder the command reads (the next run would read it as a cloud)
    capsys.readouterr()
    assert cli.main(["pairwise", str(tmp_path), "--out", str(tmp_path / "F.npy")]) == 2
    assert "is inside the input folder" in capsys.readouterr().err
    assert not (tmp_path / "F.npy").exists()
    (tmp_path / "plain.txt").write_text("not a folder")
    assert cli.main(["pairwise", str(tmp_path / "plain.txt"), "--out", str(tmp_path / "F.npy")]) == 2
    assert "plain.txt: not a folder" in capsys.readouterr().err


def test_cli_distance_imports_neither_torch_nor_jax_and_pot_compiles_under_warnings_as_errors(tmp_path):
    """POT's probes of torch/jax/tensorflow/cupy are switched off on the command line (seconds each).

    Then, in the same process, POT is compiled afresh (an empty bytecode cache) with warnings as errors: its source
    has an invalid escape sequence (``\\d`` in ``ot/datasets.py``), and under ``PYTHONWARNINGS=error`` compiling it
    was a SyntaxError that stopped every command (issue 57); ``import_pot`` silences that one warning."""
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    np.save(tmp_path / "a.npy", rng.normal(size=(10, 2)))
    np.save(tmp_path / "b.npy", rng.normal(size=(11, 2)))
    code = ("import sys\nfrom iclr25.utils.cli import main\n"
            f"rc = main(['pgw', 'distance', {str(tmp_path / 'a.npy')!r}, {str(tmp_path / 'b.npy')!r}])\n"
            "assert rc == 0, rc\nassert 'ot' in sys.modules\n"
            "print('HEAVY', [m for m in ('torch', 'jax', 'tensorflow', 'cupy') if m in sys.modules])\n"
            # POT's dependencies stay loaded; POT itself is dropped and compiled again, warnings as errors
            "import warnings\n"
            "for m in [m for m in sys.modules if m == 'ot' or m.startswith('ot.')]: del sys.modules[m]\n"
            f"sys.pycache_prefix = {str(tmp_path / 'pycache')!r}\nsys.dont_write_bytecode = False\n"
            "warnings.simplefilter('error')\n"
            "from iclr25.pgw.frank_wolfe import import_pot\n"
            "print('POT', import_pot().__name__)\n"
            f"rc = main(['pgw', 'distance', {str(tmp_path / 'a.npy')!r}, {str(tmp_path / 'b.npy')!r}])\n"
            "print('RC', rc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out
    assert "POT ot" in out and "RC 0" in out, out
    assert list((tmp_path / "pycache").rglob("datasets*.pyc")), "POT was not compiled afresh: the test is not alive"


def test_no_import_circle_between_solver_and_entropic():
    import ast
    from pathlib import Path

    import iclr25.pgw as pkg

    src = Path(pkg.__file__).parent
    for module in ("entropic", "frank_wolfe", "barycenter", "baselines"):
        tree = ast.parse((src / f"{module}.py").read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "solver" not in imported, f"{module}.py imports solver"


def test_no_module_imports_a_private_name_of_another():
    """What the modules share is public (frank_wolfe, space): no ``from .x import _name``."""
    import ast
    from pathlib import Path

    import iclr25.pgw as pkg

    offenders = []
    for path in Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                offenders += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert offenders == []


def test_pairwise_n_jobs_small_work_stays_in_process_and_large_work_uses_workers(monkeypatch):
    from iclr25.pgw import solver

    data = shapes_ii(n_per_class=1, seed=0)
    spaces = [mm_space(X, mass=1 / 74) for X in data.points[:4]]
    serial = pgw_pairwise(spaces, 0.05)
    stats = {}
    small = pgw_pairwise(spaces, 0.05, n_jobs=2, stats=stats)
    assert stats["in_process"] == stats["pairs"] == 6 and stats["workers"] == 1
    np.testing.assert_allclose(small, serial, rtol=1e-12)
    # pretend workers start for free: the rest of the pairs then go to two workers, same values
    monkeypatch.setattr(solver, "WORKER_START_S", 0.0)
    monkeypatch.setattr(solver, "_PROBE_S", 0.0)
    stats = {}
    forced = pgw_pairwise(spaces, 0.05, n_jobs=2, stats=stats)
    assert stats["workers"] == 2 and stats["in_process"] < stats["pairs"]
    np.testing.assert_allclose(forced, serial, rtol=1e-12)


def test_distance_figure_has_integer_ticks_axis_labels_and_clear_colorbars(monkeypatch, tmp_path):
    import iclr25.utils.plotting as plotting
    from iclr25.pgw.figures import plot_matrices

    captured = {}
    real = plotting.savefig

    def grab(fig, path, **kw):
        fig.canvas.draw()
        captured["fig"] = fig
        return real(fig, path, close=False, **kw)

    monkeypatch.setattr(plotting, "savefig", grab)
    rng = np.random.default_rng(0)
    D = {"PGW": rng.random((12, 12)), "GW": rng.random((12, 12))}
    plot_matrices(D, tmp_path / "d.png", np.repeat(np.arange(6), 2))
    fig = captured["fig"]
    panels = [ax for ax in fig.axes if ax.get_xlabel() == "shape index"]
    bars = [ax for ax in fig.axes if ax not in panels]
    assert len(panels) == 2 and len(bars) == 2
    for ax in panels:
        assert ax.get_ylabel() == "shape index"
        for ticks in (ax.get_xticks(), ax.get_yticks()):
            assert np.all(ticks == np.round(ticks)), ticks
    renderer = fig.canvas.get_renderer()
    # the first colour bar (with its tick labels and label) ends left of the second panel
    first_bar = bars[0].get_tightbbox(renderer)
    second_panel = panels[1].get_tightbbox(renderer)
    assert first_bar.x1 <= second_panel.x0, (first_bar, second_panel)
    import matplotlib.pyplot as plt

    plt.close(fig)


# ------------------------------------------------------------------------------------------ outputs (issue 57)
def _clouds(folder, names=("A.npy", "B.npy")):
    rng = np.random.default_rng(0)
    for i, name in enumerate(names):
        np.save(folder / name, rng.normal(size=(8 + i, 2)))
    return [folder / n for n in names]


def _no_work(monkeypatch):
    """Fail the test if the command reads a point cloud: the outputs must be refused before any work."""
    def fail(*args, **kwargs):
        raise AssertionError("the command started its work before refusing its output")
    monkeypatch.setattr(cli, "_spaces_from_files", fail)


@pytest.mark.parametrize("command", ["distance", "pairwise"])
def test_cli_output_naming_an_input_is_refused_before_work_and_the_input_kept(tmp_path, monkeypatch, capsys,
                                                                              command):
    A, B = _clouds(tmp_path)
    before = {f: f.read_bytes() for f in (A, B)}
    _no_work(monkeypatch)
    flag = "--plan" if command == "distance" else "--out"
    hard = tmp_path / "hard.npy"
    hard.hardlink_to(A)  # the same file under another name: caught by its inode
    for target in (A, B, hard, tmp_path / "." / "B.npy"):
        for extra in ([], ["--overwrite"]):
            assert cli.main([command, str(A), str(B), flag, str(target), *extra]) == 2
            err = capsys.readouterr().err
            assert f"{flag} " in err and "is also an input" in err, err
    assert {f: f.read_bytes() for f in (A, B)} == before


@pytest.mark.parametrize("command", ["distance", "pairwise"])
def test_cli_existing_output_is_kept_without_overwrite_and_replaced_with_it(tmp_path, capsys, command):
    A, B = _clouds(tmp_path)
    flag = "--plan" if command == "distance" else "--out"
    out = tmp_path / "mine.npy"
    out.write_bytes(b"the user's own file")
    assert cli.main([command, str(A), str(B), flag, str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {out} exists; pass --overwrite" in err, err
    assert out.read_bytes() == b"the user's own file"
    assert cli.main([command, str(A), str(B), flag, str(out), "--overwrite"]) == 0
    assert np.load(out).shape == ((8, 9) if command == "distance" else (2, 2))
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temporary file left


def test_cli_pairwise_keeps_a_users_names_file_beside_out(tmp_path, capsys):
    A, B = _clouds(tmp_path)
    names = tmp_path / "D.names.txt"
    names.write_text("my notes\n")
    assert cli.main(["pairwise", str(A), str(B), "--out", str(tmp_path / "D.npy")]) == 2
    err = capsys.readouterr().err
    assert "D.names.txt" in err and "exists; pass --overwrite" in err, err
    assert names.read_text() == "my notes\n" and not (tmp_path / "D.npy").exists()
    assert cli.main(["pairwise", str(A), str(B), "--out", str(tmp_path / "D.npy"), "--overwrite"]) == 0
    assert names.read_text().split() == [str(A), str(B)]


@pytest.mark.parametrize("command", ["distance", "pairwise"])
def test_cli_symlink_output_is_never_replaced(tmp_path, monkeypatch, capsys, command):
    A, B = _clouds(tmp_path)
    _no_work(monkeypatch)
    flag = "--plan" if command == "distance" else "--out"
    target = tmp_path / "target.npy"
    target.write_bytes(b"kept")
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.npy"
    dangling.symlink_to(tmp_path / "nowhere.npy")
    for out in (link, dangling):
        assert cli.main([command, str(A), str(B), flag, str(out), "--overwrite"]) == 2
        assert "is a symbolic link" in capsys.readouterr().err
    assert link.is_symlink() and target.read_bytes() == b"kept" and not (tmp_path / "nowhere.npy").exists()


@pytest.mark.parametrize("command", ["distance", "pairwise"])
def test_cli_unwritable_output_is_refused_before_work(tmp_path, monkeypatch, capsys, command):
    import os

    A, B = _clouds(tmp_path)
    _no_work(monkeypatch)
    flag = "--plan" if command == "distance" else "--out"
    (tmp_path / "afile").write_text("x")
    assert cli.main([command, str(A), str(B), flag, str(tmp_path / "afile" / "sub" / "D.npy")]) == 2
    assert f"{flag} " in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    # a read-only folder (chmod does not stop root, so the permission check is what is simulated)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(ro) else real_access(p, mode))
    assert cli.main([command, str(A), str(B), flag, str(ro / "sub" / "D.npy")]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {ro / 'sub' / 'D.npy'} cannot be written" in err, err
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize(("call", "name"), [
    (lambda Cc, pc: pgw_barycenter([C, C], [p, p], np.array([1.0 + 1j, 1.0]), n_points=2), "lams"),
    (lambda Cc, pc: entropic_pgw_batch(Cc[None], C[None], p[None], p[None], 1.0), "C1s"),
    (lambda Cc, pc: entropic_pgw_batch(C[None], C[None], pc[None], p[None], 1.0), "ps"),
    (lambda Cc, pc: entropic_pgw_batch(C[None], C[None], p[None], p[None], np.array([1.0 + 0j])), "lam"),
    (lambda Cc, pc: entropic_pgw_batch(C[None], C[None], p[None], p[None], 1.0, G0s=np.ones((1, 3, 3)) / 9 + 0j),
     "G0s"),
    (lambda Cc, pc: gw(C, C, p, p, G0=np.ones((3, 3)) / 9 + 0j), "G0"),
    (lambda Cc, pc: mpgw(C, C, p, p, G0=np.ones((3, 3)) / 9 + 0j), "G0"),
    (lambda Cc, pc: mm_space(np.ones((3, 2)) + 1j), "X"),
    (lambda Cc, pc: pgw(Cc, C, p, p, 1.0), "C1"),
    (lambda Cc, pc: pgw_pairwise([(Cc, p), (C, p)], 1.0), "C"),
])
def test_complex_arrays_are_refused_naming_the_argument(call, name):
    """A complex array is never cast to its real part (numpy's cast only warns): a TypeError naming it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning would be the silent cast
        with pytest.raises(TypeError, match=rf"\b{name}\b.*(real|complex)"):
            call(C.astype(complex), p.astype(complex))


def test_retrieval_and_data_refuse_complex_arrays():
    from iclr25.pgw import nearest_neighbour_accuracy, svm_accuracy
    from iclr25.pgw.datasets import add_outliers

    D = np.array([[0.0, 1.0], [1.0, 0.0]]) + 0j
    for f in (svm_accuracy, nearest_neighbour_accuracy):
        with pytest.raises(TypeError, match="D must be real"):
            f(D, [0, 1])
    with pytest.raises(TypeError, match="X must be real"):
        add_outliers(np.ones((3, 2)) + 1j)
