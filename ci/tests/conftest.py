import importlib.util
import sys
from pathlib import Path

import pytest

CI = Path(__file__).resolve().parents[1]
ROOT = CI.parent


def _load(name):
    spec = importlib.util.spec_from_file_location(name, CI / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def contract():
    return _load("check_contract")


@pytest.fixture(scope="session")
def new_package():
    return _load("new_package")


@pytest.fixture(scope="session")
def claims_table():
    if str(CI) not in sys.path:  # claims_fresh imports its siblings (claims_table, run_package_tests) by name
        sys.path.insert(0, str(CI))
    return _load("claims_table")


@pytest.fixture(scope="session")
def claims_fresh(claims_table):
    return _load("claims_fresh")


@pytest.fixture
def fake_root(tmp_path):
    """A repository skeleton with the template, in a temporary folder."""
    import shutil

    root = tmp_path / "repo"
    (root / "packages").mkdir(parents=True)
    shutil.copytree(ROOT / "templates", root / "templates")
    return root


@pytest.fixture(scope="session")
def backend_check():
    return _load("backend_check")
