"""``ci/gpu_check.py`` (``make gpu-check``): safe on a machine without a GPU, a clear table where there is one."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "ci" / "gpu_check.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_without_a_gpu_it_prints_one_line_and_exits_0(monkeypatch, capsys, tmp_path):
    gc = _load()
    monkeypatch.setattr(gc, "gpu_name", lambda: None)
    assert gc.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "no NVIDIA GPU" in out and not list(tmp_path.iterdir())
    assert gc.main(["no-such-package"]) == 2


def test_table_and_rows_say_what_ran_where(monkeypatch, tmp_path):
    gc = _load()
    monkeypatch.setattr(gc, "gpu_name", lambda: "Fake H100")
    monkeypatch.setattr(gc, "uses_device", lambda slug: slug != "augood")
    monkeypatch.setattr(gc, "sync_one", lambda root, slug: (type("P", (), {"returncode": 0})(), 0.0))
    monkeypatch.setattr(gc, "sees_gpu", lambda slug: slug != "pgw")
    runs = {"cpu": {"wall_s": 10.0, "verdicts": {"a": "holds"}}, "cuda": {"wall_s": 2.0, "verdicts": {"a": "holds"}}}
    monkeypatch.setattr(gc, "claims_run", lambda slug, device, timeout: runs[device])
    monkeypatch.setattr(gc, "demo_takes_device", lambda slug: True)
    demos = {"cpu": {"wall_s": 30.0}, "cuda": {"wall_s": 6.0}}
    monkeypatch.setattr(gc, "demo_run", lambda slug, device, timeout: demos[device])
    assert gc.main(["augood", "pgw", "memno", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "gpu-check.md").read_text()
    assert "# gpu-check on Fake H100" in md
    assert "| memno | 10.0 | 2.0 | 5.0 | 30.0 | 6.0 | yes | ok |" in md
    assert "| augood |" in md and "no --device yet" in md and "no CUDA jaxlib" in md
    assert gc.is_jax("pgw") and gc.is_jax("cl-optimal-control") and not gc.is_jax("v1-topology")
    demos["cuda"] = {"wall_s": 1.0, "error": "demo: RuntimeError: device mismatch"}
    assert gc.main(["memno", "--out", str(tmp_path)]) == 1
    assert "device mismatch" in (tmp_path / "gpu-check.md").read_text()
    demos["cuda"] = {"wall_s": 6.0}
    runs["cuda"] = {"wall_s": 2.0, "verdicts": {"a": "does not hold"}}
    assert gc.main(["memno", "--out", str(tmp_path)]) == 1
    assert "verdicts differ" in (tmp_path / "gpu-check.md").read_text()
