"""The conformance suite itself: it passes on a good fixture package and fails on bad ones."""

import sys

import pytest

from iclr25.utils import testing

from fixture_packages import make_method


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.syspath_prepend(str(site))
    testing._DEMO_CACHE.clear()
    yield site
    for name in [m for m in sys.modules if m.startswith("iclr25.fixture")]:
        del sys.modules[name]


def test_all_checks_pass_on_a_good_package(site):
    root = make_method(site, "fixture-good")
    checks = testing.package_checks("fixture-good", root=root)
    assert [n for n, _ in checks] == ["version", "public_api", "help", "demo", "demo_deterministic",
                                      "readme_quickstart", "example"]
    for _, check in checks:
        check()


def test_version_mismatch_fails(site):
    root = make_method(site, "fixture-v", init_version="9.9.9")
    check = dict(testing.package_checks("fixture-v", root=root))["version"]
    with pytest.raises(AssertionError, match="9.9.9"):
        check()


def test_nondeterministic_demo_fails(site, monkeypatch):
    root = make_method(site, "fixture-nd")
    monkeypatch.setenv("FIXTURE_NONDETERMINISTIC", "1")
    checks = dict(testing.package_checks("fixture-nd", root=root))
    checks["demo"]()
    with pytest.raises(AssertionError, match="same seed, different metrics"):
        checks["demo_deterministic"]()


def test_demo_over_budget_fails(site):
    root = make_method(site, "fixture-slow")
    check = dict(testing.package_checks("fixture-slow", root=root, demo_budget_s=1e-6))["demo"]
    with pytest.raises(AssertionError, match="over its"):
        check()


def test_broken_quickstart_fails(site):
    root = make_method(site, "fixture-qs")
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("VALUE == 1", "VALUE == 2"))
    with pytest.raises(AssertionError, match="README Quickstart exited with 1"):
        dict(testing.package_checks("fixture-qs", root=root))["readme_quickstart"]()
    (root / "examples" / "quickstart.py").write_text("print(1)\n")
    with pytest.raises(AssertionError, match="percent notebook"):
        dict(testing.package_checks("fixture-qs", root=root))["example"]()
