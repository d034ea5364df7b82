"""`make` gets uv without touching the system Python, also where that Python is externally managed (PEP 668)."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

CI = Path(__file__).resolve().parents[1]

_PROBE = "import sysconfig, os; print(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED'))"


def _managed_python() -> str | None:
    """An interpreter on this machine that carries an EXTERNALLY-MANAGED marker (Debian's /usr/bin/python3)."""
    for cand in ("/usr/bin/python3", "/usr/bin/python3.11", shutil.which("python3") or ""):
        if cand and os.path.exists(cand):
            out = subprocess.run([cand, "-c", _PROBE], capture_output=True, text=True, check=False).stdout.strip()
            if out and os.path.exists(out):
                return cand
    return None


MANAGED = _managed_python()
needs_managed = pytest.mark.skipif(MANAGED is None, reason="no externally-managed Python on this machine "
                                   "(Debian/Ubuntu's python3 is one; the CI machine has it)")


def _site_listing(python: str) -> list[str]:
    code = "import site, os; d = site.getsitepackages()[0]; print(sorted(os.listdir(d)) if os.path.isdir(d) else [])"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout


@needs_managed
@pytest.mark.parametrize("no_venv", [False, True], ids=["venv", "target-folder"])
def test_bootstrap_on_an_externally_managed_python(tmp_path, no_venv):
    # the marker is real: a plain pip install into that Python is refused
    refused = subprocess.run([MANAGED, "-m", "pip", "install", "--dry-run", "uv"], capture_output=True, text=True,
                             check=False)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr + refused.stdout
    before = _site_listing(MANAGED)
    dest = tmp_path / "_uv"
    env = {**os.environ, "UV_BOOTSTRAP_DIR": str(dest), **({"UV_BOOTSTRAP_NO_VENV": "1"} if no_venv else {})}
    proc = subprocess.run(["bash", str(CI / "bootstrap_uv.sh"), MANAGED], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("folder" if no_venv else "venv") in proc.stdout
    version = subprocess.run([str(dest / "bin" / "uv"), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("uv 0.13.")
    assert _site_listing(MANAGED) == before  # the system Python is untouched
    # a second run finds it and does nothing
    again = subprocess.run(["bash", str(CI / "bootstrap_uv.sh"), MANAGED], capture_output=True, text=True, env=env,
                           check=False)
    assert again.returncode == 0 and again.stdout == ""


def test_pip_check_sorts_packages_into_backend_families(tmp_path):
    sys.path.insert(0, str(CI))
    try:
        import pip_check
    finally:
        sys.path.pop(0)
    cases = {"t": ['"numpy>=1.26"', '"torch>=2.5"', '"jax>=0.4"'], "j": ['"jax[cpu]>=0.4"', '"optax"'],
             "n": ['"numpy>=1.26"', '"torchdiffeq-like>=1"']}
    want = {"t": "torch", "j": "jax", "n": "numpy"}
    for name, deps in cases.items():
        f = tmp_path / f"{name}.toml"
        f.write_text(f'[project]\nname = "x"\ndependencies = [{", ".join(deps)}]\n')
        assert pip_check.family(f) == want[name]
    assert sysconfig.get_path("stdlib")  # the probe above relies on it
