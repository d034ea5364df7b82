"""``make new PKG=...`` gives a package that passes the contract check and its own tests at once."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def sh(*cmd, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_make_new_passes_contract_and_its_own_tests(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("pyproject.toml", "Makefile", "uv.lock"):
        shutil.copy(ROOT / name, repo / name)
    for name in ("shared-utils", "templates", "ci"):
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    (repo / "packages").mkdir()

    sh("make", "new", "PKG=scaffold-probe", f"PYTHON={sys.executable}", cwd=repo)
    pkg = repo / "packages" / "scaffold-probe"
    assert (pkg / "src/iclr25/scaffold_probe/__init__.py").is_file()
    assert "no violations" in sh(sys.executable, "ci/check_contract.py", cwd=repo)
    sh("uv", "lock", "--quiet", cwd=repo)
    out = sh(sys.executable, "ci/run_package_tests.py", "scaffold-probe", cwd=repo)
    assert "| scaffold-probe |" in out and "passed" in out

    shutil.rmtree(pkg)
    assert not pkg.exists()
