"""Where pgw computes (issue 59): the JAX entropic solver on ``--device`` (``cpu`` and ``auto`` give the same
numbers here; an absent GPU is one line naming the flag), the exact distance matrices of ``repro`` and ``pairwise``
on a ``--backend`` (a local 2-worker Dask cluster gives the same matrix as local processes), and one step of the
paper rung."""

import json

import jax
import numpy as np
import pytest

from iclr25.pgw import entropic_pgw_batch, mm_space, pgw
from iclr25.pgw.claims import REGISTRY
from iclr25.pgw.cli import main
from iclr25.utils.results import RunResult

NO_GPU = not any(d.platform == "gpu" for d in jax.devices())


def _clouds(folder, sizes=(12, 15), seed=0):
    # the entropic tests share these sizes, so the solver compiles once
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for i, n in enumerate(sizes):
        np.save(folder / f"c{i}.npy", rng.normal(size=(n, 2)))
    return folder


def _numbers(text):
    # every line but the wall time
    return [line for line in text.splitlines() if not line.startswith("seconds")]


def test_entropic_distance_on_cpu_and_auto_gives_the_same_numbers(tmp_path, capsys):
    d = _clouds(tmp_path / "clouds")
    out = {}
    for device in ("cpu", "auto"):
        assert main(["distance", str(d / "c0.npy"), str(d / "c1.npy"), "--method", "entropic",
                     "--device", device]) == 0
        out[device] = _numbers(capsys.readouterr().out)
    if jax.devices()[0].platform == "cpu":  # this machine: auto is the CPU, and must give the CPU's numbers
        assert out["cpu"] == out["auto"]
    assert float(out["cpu"][0].split()[1]) > 0


def test_python_api_takes_device_for_the_entropic_solver_only(rng):
    a, b = mm_space(rng.normal(size=(12, 2))), mm_space(rng.normal(size=(15, 2)))
    r0 = pgw(a.C, b.C, a.p, b.p, 1.0, method="entropic")
    r1 = pgw(a.C, b.C, a.p, b.p, 1.0, method="entropic", device="cpu")
    r2 = entropic_pgw_batch(a.C[None], b.C[None], a.p[None], b.p[None], 1.0, device=jax.devices("cpu")[0])
    assert r0.distance == r1.distance == r2.distance[0] and isinstance(r2.plan, np.ndarray)
    with pytest.raises(ValueError, match="device is only used by method='entropic'"):
        pgw(a.C, b.C, a.p, b.p, 1.0, device="cpu")


def test_an_absent_device_is_one_line_naming_the_flag(tmp_path, capsys):
    d = _clouds(tmp_path / "clouds")
    files = [str(d / "c0.npy"), str(d / "c1.npy")]
    if NO_GPU:
        assert main(["distance", *files, "--method", "entropic", "--device", "cuda"]) == 2
        err = capsys.readouterr().err.strip()
        assert "--device cuda" in err and "JAX sees no GPU" in err and len(err.splitlines()) == 1
        assert main(["repro", "--quick", "--device", "cuda:1", "--out", str(tmp_path / "r")]) == 2
        assert "--device cuda:1" in capsys.readouterr().err and not (tmp_path / "r").exists()
    # the exact methods run on the CPU: a GPU asked of them is refused, not silently ignored
    assert main(["distance", *files, "--device", "cuda"]) == 2
    assert "--method fw-v1 runs on the CPU" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # refused by argparse before any work
        main(["pairwise", str(d), "--out", str(tmp_path / "D.npy"), "--device", "gpu"])
    assert exc.value.code == 2 and "argument --device" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--backend", "local", "--n-jobs", "2"], "with --backend give --workers"),
    (["--address", "tcp://127.0.0.1:1"], "--address names a cluster"),
    (["--backend", "local", "--workers", "0"], "--workers must be a positive integer"),
    (["--backend", "dask", "--method", "entropic"], "--backend is not used by --method entropic"),
])
def test_pairwise_backend_options_are_checked_before_any_work(tmp_path, capsys, extra, message):
    d = _clouds(tmp_path / "clouds")
    assert main(["pairwise", str(d), "--out", str(tmp_path / "D.npy"), *extra]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "D.npy").exists()


def test_repro_on_a_local_dask_cluster_gives_the_same_results_as_local_processes(tmp_path, capsys):
    # `iclr25 pgw repro --quick`: PGW's distance matrix of 12 shapes of data set II and its SVM accuracy, once on
    # local processes (one worker: this process) and once on a Dask cluster of 2 worker processes started here
    pytest.importorskip("distributed", reason="--backend dask needs iclr25-utils[distributed] (extra 'bench')")
    runs, mats = {}, {}
    for backend, workers in (("local", "1"), ("dask", "2")):
        out = tmp_path / backend
        assert main(["repro", "--quick", "--backend", backend, "--workers", workers, "--out", str(out)]) == 0
        runs[backend] = RunResult.load(out / "results.json")
        with np.load(out / "distances.npz") as z:
            mats[backend] = {k: z[k] for k in z.files}
    capsys.readouterr()
    assert mats["local"].keys() == mats["dask"].keys() == {"labels", "pgw"}
    for k in mats["local"]:
        np.testing.assert_array_equal(mats["local"][k], mats["dask"][k])
    assert mats["local"]["pgw"].shape == (12, 12) and mats["local"]["pgw"][0, 1:].min() > 0
    values = {b: {m.name: m.value for m in r.metrics if not m.timing} for b, r in runs.items()}
    assert values["local"] == values["dask"] and len(values["local"]) == 1
    cfg = json.loads((tmp_path / "dask" / "results.json").read_text())["config"]
    assert cfg["backend"] == {"backend": "dask", "address": None, "workers": 2} and cfg["quick"] is True
    assert runs["dask"].machine["device"].startswith("cpu")


def test_paper_rung_runs_one_step_and_states_its_cost(monkeypatch):
    # what `iclr25 claims pgw --rung paper --smoke` runs: every claim of the rung once, shrunk (seed 0)
    monkeypatch.setenv("ICLR25_SMOKE", "1")
    ids = REGISTRY.claims_at("paper")
    assert {"retrieval-pgw-beats-gw", "retrieval-pgw-beats-ugw", "pgw-is-a-metric"} <= set(ids)
    for cid in ids:
        m = REGISTRY.measure(cid, 0, "paper")
        assert np.isfinite(m.value), cid
    cost = REGISTRY.costs["paper"]
    assert not cost.needs_accelerator and cost.cpu_hours > 0
    assert "CPU core-hours per seed" in cost.explain("paper", 3)
