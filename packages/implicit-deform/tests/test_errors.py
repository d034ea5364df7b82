"""Bad input: clear errors that name the argument or file, and no partial output."""

import subprocess

import numpy as np
import pytest

from iclr25.implicit_deform import DeformConfig, fit, load_correspondences, load_shape, make_pair
from iclr25.utils.io import DataFileError

CFG = DeformConfig.preset("test")


def _cloud(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    return 0.5 * x / np.linalg.norm(x, axis=1, keepdims=True)


def test_nan_points_are_refused():
    src = _cloud()
    src[3, 1] = np.nan
    with pytest.raises(ValueError, match="source contains NaN"):
        fit(src, _cloud(seed=1), config=CFG)
    with pytest.raises(ValueError, match="target contains NaN"):
        fit(_cloud(), np.full((200, 3), np.inf), config=CFG)


def test_too_few_points_for_the_sampler():
    with pytest.raises(ValueError, match="target has 20 points; the sampler needs at least 51"):
        fit(_cloud(), _cloud(20), config=CFG)


def test_wrong_shapes_and_types():
    with pytest.raises(ValueError, match=r"source must be an \(n, 3\) array"):
        fit(np.zeros((100, 2)), _cloud(), config=CFG)
    with pytest.raises(TypeError, match="config must be a DeformConfig"):
        fit(_cloud(), _cloud(), config={"batch": 3})
    with pytest.raises(ValueError, match="source_normals must have the shape"):
        fit(_cloud(), _cloud(), source_normals=np.ones((3, 3)), config=CFG)


def test_mismatched_correspondences():
    with pytest.raises(ValueError, match="corr_source and corr_target must have the same shape"):
        fit(_cloud(), _cloud(), corr_source=_cloud(10), corr_target=_cloud(12), config=CFG)
    with pytest.raises(ValueError, match="must be given together"):
        fit(_cloud(), _cloud(), corr_source=_cloud(10), config=CFG)


def test_correspondence_file_checks(tmp_path):
    f = tmp_path / "c.npy"
    np.save(f, np.array([[0, 1], [2, 99]]))
    with pytest.raises(DataFileError, match=r"c\.npy: target indices must lie in \[0, 50\)"):
        load_correspondences(f, 10, 50)
    np.save(f, np.zeros((4, 2)))
    with pytest.raises(DataFileError, match="integer indices"):
        load_correspondences(f, 10, 50)
    np.save(f, np.arange(7))
    with pytest.raises(DataFileError, match="one entry per source vertex"):
        load_correspondences(f, 10, 50)


def test_unreadable_and_unsupported_shape_files(tmp_path):
    bad = tmp_path / "bad.ply"
    bad.write_bytes(b"\x00garbage\xff" * 10)
    with pytest.raises(DataFileError, match="bad.ply"):
        load_shape(bad)
    with pytest.raises(FileNotFoundError, match="missing.obj"):
        load_shape(tmp_path / "missing.obj")
    with pytest.raises(DataFileError, match="unsupported shape format '.vtk'"):
        load_shape(tmp_path / "x.vtk")
    nan = tmp_path / "nan.npy"
    np.save(nan, np.full((10, 3), np.nan))
    with pytest.raises(DataFileError, match="NaN"):
        load_shape(nan)


@pytest.mark.parametrize("kwargs, match", [
    ({"batch": 0}, "batch must be an integer >= 1"),
    ({"integrator": "heun"}, "integrator must be one of"),
    ({"levelset": "x"}, "levelset must be 'mlse' or 'olse'"),
    ({"w_div": -1.0}, "w_div must be >= 0"),
    ({"sdf_iters": -5}, "sdf_iters must be an integer >= 0"),
])
def test_impossible_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DeformConfig(**kwargs)


def test_make_pair_arguments():
    with pytest.raises(ValueError, match="shape must be one of"):
        make_pair("cube")
    with pytest.raises(ValueError, match="corr_fraction must be in"):
        make_pair(corr_fraction=0.0)


@pytest.fixture
def _cli(capsys, monkeypatch):
    """``iclr25 implicit-deform ARGS`` in this process (as the conformance suite's file checks run it): exit
    status and stderr, in folder ``cwd``."""
    from iclr25.implicit_deform.cli import main

    def run(*args, cwd):
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        rc = main(list(args))
        return subprocess.CompletedProcess(args, rc, *capsys.readouterr())

    return run


# a missing, an empty and a garbage file are the conformance suite's file_inputs check (test_conformance.py);
# this one is a PLY whose header parses and whose vertex row is short
def test_cli_fit_truncated_ply_exits_2_with_one_line_and_no_output(tmp_path, _cli):
    src = tmp_path / "src.ply"
    content = b"ply\nformat ascii 1.0\nelement vertex 3\nend_header\n1 2\n"
    src.write_bytes(content)
    out = tmp_path / "out"
    proc = _cli("fit", str(src), str(src), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "src.ply" in lines[0], proc.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.ply"]


def test_cli_fit_bad_times_and_corr(tmp_path, _cli):
    np.save(tmp_path / "a.npy", _cloud(300))
    proc = _cli("fit", "a.npy", "a.npy", "--times", "0.5,2", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2 and "--times must be" in proc.stderr
    np.save(tmp_path / "c.npy", np.array([[0, 400]]))
    proc = _cli("fit", "a.npy", "a.npy", "--corr", "c.npy", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2 and "c.npy" in proc.stderr and "target indices" in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, flag", [(["--iters-scale", "1e12"], "--iters-scale 1e+12"),
                                        (["--preset", "paper"], "--preset paper")])
def test_cli_fit_refuses_a_run_that_cannot_finish(tmp_path, argv, flag, _cli):
    np.save(tmp_path / "a.npy", _cloud(300))
    proc = _cli("fit", "a.npy", "a.npy", *argv, "--out", "o", cwd=tmp_path)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert flag in lines[0] and "would take about" in lines[0] and "--force" in lines[0], lines[0]
    assert not (tmp_path / "o").exists()


def test_fit_time_estimate_is_the_repro_presets_half_minute():
    from iclr25.implicit_deform.cli import estimated_fit_seconds

    assert 20 < estimated_fit_seconds(DeformConfig.preset("repro")) < 40
    assert estimated_fit_seconds(DeformConfig.preset("test")) < estimated_fit_seconds(DeformConfig.preset("repro"))


def test_cli_fit_runs_on_own_files_and_writes_meshes_and_metrics(tmp_path):
    import jax
    import trimesh

    from iclr25.implicit_deform.cli import main
    from iclr25.utils.results import RunResult

    src = trimesh.creation.icosphere(subdivisions=3, radius=0.5)
    trimesh.Trimesh(src.vertices, src.faces).export(tmp_path / "a.ply")
    trimesh.Trimesh(src.vertices * [1.2, 1.0, 1 / 1.2], src.faces).export(tmp_path / "b.obj")
    np.save(tmp_path / "c.npy", np.arange(len(src.vertices)))  # one target index per source vertex
    runs = {}
    for device in ("cpu", "auto"):  # issue 59: --device cpu and auto give the same numbers on a CPU machine
        out = tmp_path / f"out-{device}"
        rc = main(["fit", str(tmp_path / "a.ply"), str(tmp_path / "b.obj"), "--corr", str(tmp_path / "c.npy"),
                   "--preset", "test", "--iters-scale", "0.1", "--n-points", "4000", "--resolution", "20",
                   "--times", "0.5", "--device", device, "--out", str(out)])
        assert rc == 0
        names = sorted(p.name for p in out.iterdir())
        assert names == ["advected_t0.5.ply", "intermediate_shapes.png", "mesh_t0.5.ply", "mesh_t0.ply",
                         "mesh_t1.ply", "results.json"]
        runs[device] = RunResult.load(out / "results.json")
    run = runs["cpu"]
    assert run.metric("correspondence residual |x_T - y| (mean)").value < 0.2
    assert run.machine["device"].startswith("cpu:0")  # the run record says where it was computed
    if jax.devices()[0].platform == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        values = {d: {m.name: m.value for m in r.metrics if not m.timing} for d, r in runs.items()}
        assert values["cpu"] == values["auto"] and runs["auto"].machine["device"] == run.machine["device"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


# --- outputs (issue 57): --out checked before any work, a previous run kept without --overwrite ---

def test_cli_fit_out_holding_or_naming_an_input_is_refused(tmp_path, _cli):
    d = tmp_path / "d"
    d.mkdir()
    np.save(d / "a.npy", _cloud(300))
    before = (d / "a.npy").read_bytes()
    for out, says in ((d, "holds the input"), (d / "a.npy", "is an existing file, not a folder")):
        proc = _cli("fit", str(d / "a.npy"), str(d / "a.npy"), "--out", str(out), cwd=tmp_path)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert proc.returncode == 2 and len(lines) == 1 and "--out" in lines[0] and says in lines[0], proc.stderr
    assert sorted(p.name for p in d.iterdir()) == ["a.npy"] and (d / "a.npy").read_bytes() == before


def test_cli_fit_keeps_a_previous_run_without_overwrite(tmp_path, _cli):
    # issue 57: fit replaced the files of a previous run in --out
    np.save(tmp_path / "a.npy", _cloud(300))
    out = tmp_path / "o"
    out.mkdir()
    (out / "results.json").write_text("mine")
    proc = _cli("fit", "a.npy", "a.npy", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2 and "already holds a run (results.json)" in proc.stderr, proc.stderr
    assert (out / "results.json").read_text() == "mine"
    # with --overwrite the output passes; the run then stops at its own next check (no fit in this test)
    proc = _cli("fit", "a.npy", "a.npy", "--out", "o", "--overwrite", "--n-points", "10", cwd=tmp_path)
    assert proc.returncode == 2 and "--n-points must be >= 256" in proc.stderr, proc.stderr
    # a mesh of this run's --times (not one of the fixed names) is a previous run's file too
    (out / "results.json").unlink()
    (out / "mesh_t0.3.obj").write_text("mine")
    proc = _cli("fit", "a.npy", "a.npy", "--times", "0.3", "--format", "obj", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2 and "already holds a run (mesh_t0.3.obj)" in proc.stderr, proc.stderr
    # a symbolic link among the files it writes is never replaced, even with --overwrite
    (out / "mesh_t0.3.obj").unlink()
    (out / "results.json").symlink_to(tmp_path / "a.npy")
    proc = _cli("fit", "a.npy", "a.npy", "--out", "o", "--overwrite", cwd=tmp_path)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]


def test_cli_fit_out_under_a_file_is_refused_before_reading_the_pair(tmp_path, _cli):
    # issue 57: an unwritable --out failed only after the fit; the source here is garbage, read only after --out
    (tmp_path / "src.ply").write_bytes(b"garbage")
    (tmp_path / "file").write_text("x")
    proc = _cli("fit", "src.ply", "src.ply", "--out", "file/o", cwd=tmp_path)
    assert proc.returncode == 2 and "--out" in proc.stderr and "src.ply" not in proc.stderr, proc.stderr


def test_a_diverged_fit_writes_nothing():
    import types

    from iclr25.implicit_deform.interpolation import check_finite_result

    net, bad = [np.ones((2, 2), np.float32), np.zeros(2, np.float32)], [np.ones(2), np.array([0.0, np.nan])]
    check_finite_result(types.SimpleNamespace(sdf_net=net, velocity_net=net))
    with pytest.raises(ValueError, match="the velocity_net weights are not finite; nothing written to --out"):
        check_finite_result(types.SimpleNamespace(sdf_net=net, velocity_net=bad))


def test_pretrained_keeps_the_shipped_file_without_overwrite(tmp_path, capsys):
    from iclr25.implicit_deform.pretrained import PRETRAINED, main

    npz = tmp_path / PRETRAINED["bar-twist"].filename
    npz.write_bytes(b"mine")
    with pytest.raises(SystemExit) as exc:
        main(["bar-twist", "--out", str(tmp_path)])  # refused before the ~20 s fit
    assert exc.value.code == 2 and "--overwrite" in capsys.readouterr().err and npz.read_bytes() == b"mine"
