#!/usr/bin/env python3
"""``make gpu-check``: every package's test-rung claims (and demo, where it takes ``--device``) on the GPU beside
the CPU, in one table: package, CPU seconds, GPU seconds, ratio, and whether the GPU's verdicts equal the CPU's.

Run it on a machine with an NVIDIA GPU and a CUDA build of torch in the package environments (the accelerator
machine of a session that has one). Without a GPU it prints one line and exits 0, so it is safe anywhere. JAX
packages use the GPU only with a CUDA jaxlib (``pip install 'jax[cuda12]'``); without one their row says so.

Writes ``benchmarks/gpu/gpu-check.json`` and ``benchmarks/gpu/gpu-check.md`` (``--out`` to change the folder).

Usage: ``python ci/gpu_check.py [SLUG ...] [--out benchmarks/gpu] [--timeout 600]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
from claims_fresh import slugs_with_registry  # noqa: E402
from run_package_tests import sync_one, venv_for  # noqa: E402

from check_contract import _backend_of  # noqa: E402 - one reading of a package's backend


def is_jax(slug: str) -> bool:
    """Whether the package computes with JAX (read from its dependencies), so the GPU needs a CUDA jaxlib."""
    return _backend_of(ROOT / "packages" / slug) == "jax"


def gpu_name() -> str | None:
    """The first NVIDIA GPU's name (``nvidia-smi -L``), or ``None`` when there is none."""
    if shutil.which("nvidia-smi") is None:
        return None
    proc = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    first = proc.stdout.strip().splitlines()[:1]
    return first[0].split(":", 1)[1].split("(UUID")[0].strip() if proc.returncode == 0 and first else None


def _probe(python: Path, code: str) -> str:
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False, timeout=300)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def sees_gpu(slug: str) -> bool:
    """Whether the package's environment can compute on the GPU (CUDA torch, or a CUDA jaxlib for JAX)."""
    py = venv_for(ROOT, slug) / "bin" / "python"
    if is_jax(slug):
        return _probe(py, "import jax; print(bool([d for d in jax.devices() if d.platform == 'gpu']))") == "True"
    return _probe(py, "import torch; print(torch.cuda.is_available())") == "True"


def claims_run(slug: str, device: str, timeout: float) -> dict:
    """The test rung's claims with ``--device``: wall seconds and the verdicts (from the JSON it writes)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(venv_for(ROOT, slug) / "bin" / "iclr25"), "claims", slug, "--rung", "test", "--device", device,
               "--threads", "0", "--out", tmp]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"wall_s": timeout, "verdicts": {}, "error": f"over {timeout:.0f} s"}
        wall = time.perf_counter() - t0
        path = Path(tmp) / "claims.json"
        if not path.is_file():
            err = (proc.stderr.strip().splitlines() or ["no claims.json written"])[-1]
            return {"wall_s": wall, "verdicts": {}, "error": err[:200]}
        data = json.loads(path.read_text(encoding="utf-8"))
        return {"wall_s": round(wall, 2), "verdicts": {c["id"]: c["verdict"] for c in data["claims"]}}


def demo_run(slug: str, device: str, timeout: float) -> dict:
    """The package's demo with ``--device``: wall seconds, and whether it finished."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(venv_for(ROOT, slug) / "bin" / "iclr25"), slug, "demo", "--device", device, "--out", tmp]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"wall_s": timeout, "error": f"demo over {timeout:.0f} s"}
        wall = round(time.perf_counter() - t0, 2)
        if proc.returncode != 0:
            return {"wall_s": wall, "error": "demo: " + (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]}
        return {"wall_s": wall}


def demo_takes_device(slug: str) -> bool:
    py = venv_for(ROOT, slug) / "bin" / "iclr25"
    proc = subprocess.run([str(py), slug, "demo", "--help"], capture_output=True, text=True, check=False, timeout=300)
    return "--device" in proc.stdout


def uses_device(slug: str) -> bool:
    """Whether the package's code resolves its device through ``iclr25.utils.device`` (so ``--device cuda``
    reaches it); a package that does not still computes on the CPU when asked for the GPU."""
    src = ROOT / "packages" / slug / "src"
    return any("utils.device" in p.read_text(encoding="utf-8", errors="replace") or
               "from iclr25.utils import device" in p.read_text(encoding="utf-8", errors="replace")
               for p in src.rglob("*.py"))


def check_one(slug: str, timeout: float) -> dict:
    if not uses_device(slug):
        return {"slug": slug, "status": "no --device yet (issue 59): it computes on the CPU only"}
    proc, _ = sync_one(ROOT, slug)
    if proc.returncode != 0:
        return {"slug": slug, "status": "sync failed"}
    if not sees_gpu(slug):
        why = "no CUDA jaxlib in its environment" if is_jax(slug) else "its torch does not see CUDA"
        return {"slug": slug, "status": f"CPU only: {why}"}
    cpu = claims_run(slug, "cpu", timeout)
    gpu = claims_run(slug, "cuda", timeout)
    same = bool(cpu["verdicts"]) and cpu["verdicts"] == gpu["verdicts"]
    status = "ok" if same and "error" not in gpu else gpu.get("error") or cpu.get("error") or "verdicts differ"
    demo: dict = {}
    if demo_takes_device(slug):
        dc, dg = demo_run(slug, "cpu", timeout), demo_run(slug, "cuda", timeout)
        demo = {"demo_cpu_s": dc["wall_s"], "demo_gpu_s": dg["wall_s"]}
        if status == "ok" and ("error" in dc or "error" in dg):
            status = dg.get("error") or dc["error"]
    return {"slug": slug, "cpu_s": cpu["wall_s"], "gpu_s": gpu["wall_s"], **demo,
            "ratio": round(cpu["wall_s"] / gpu["wall_s"], 2) if gpu.get("wall_s") else None,
            "cpu_verdicts": cpu["verdicts"], "gpu_verdicts": gpu["verdicts"], "same_verdicts": same,
            "status": status}


def table(rows: list[dict], gpu: str) -> str:
    lines = [f"# gpu-check on {gpu}", "", "Test-rung claims of each package with `--device cpu` and `--device cuda` "
             "and its demo (`ci/gpu_check.py`; wall seconds).", "",
             "| package | claims CPU s | claims GPU s | CPU/GPU | demo CPU s | demo GPU s | verdicts equal the CPU's "
             "| status |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['slug']} | {r.get('cpu_s', '–')} | {r.get('gpu_s', '–')} | {r.get('ratio') or '–'} | "
                     f"{r.get('demo_cpu_s', '–')} | {r.get('demo_gpu_s', '–')} | "
                     f"{'yes' if r.get('same_verdicts') else 'no' if 'same_verdicts' in r else '–'} | {r['status']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "gpu")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per claims run (default 600)")
    args = ap.parse_args(argv)
    known = slugs_with_registry(ROOT)
    bad = [s for s in args.slugs if s not in known]
    if bad:
        print(f"gpu_check: error: no claims registry in {bad}; packages with one: {known}", file=sys.stderr)
        return 2
    gpu = gpu_name()
    if gpu is None:
        print("gpu-check: no NVIDIA GPU on this machine (nvidia-smi finds none); nothing to check")
        return 0
    os.environ.setdefault("ICLR25_QUIET", "1")
    rows = []
    for slug in args.slugs or known:
        print(f"== {slug}", flush=True)
        rows.append(check_one(slug, args.timeout))
        print(f"   {rows[-1]['status']}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu-check.json").write_text(json.dumps({"gpu": gpu, "rows": rows}, indent=2) + "\n")
    (args.out / "gpu-check.md").write_text(table(rows, gpu))
    print(table(rows, gpu))
    print(f"wrote {args.out / 'gpu-check.md'}")
    return 0 if all(r["status"] == "ok" or r["status"].startswith(("CPU only", "no --device")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
