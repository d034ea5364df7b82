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
    testing._DEMO_SECOND.clear()
    yield site
    for name in [m for m in sys.modules if m.startswith("iclr25.fixture")]:
        del sys.modules[name]


def test_all_checks_pass_on_a_good_package(site):
    root = make_method(site, "fixture-good")
    checks = testing.package_checks("fixture-good", root=root)
    assert [n for n, _ in checks] == ["version", "public_api", "help", "help_light", "demo", "demo_headline",
                                      "out_policy", "demo_deterministic", "readme_quickstart", "example"]
    for _, check in checks:
        check()


READ = [["read", "{file}.npy", "--out", "{out}.npz"]]


def test_file_inputs_pass_on_a_careful_command(site):
    root = make_method(site, "fixture-files")
    checks = dict(testing.package_checks("fixture-files", root=root, file_commands=READ))
    checks["file_inputs"]()


def test_file_inputs_fail_on_a_sloppy_command(site, monkeypatch):
    root = make_method(site, "fixture-sloppy")
    monkeypatch.setenv("FIXTURE_SLOPPY_READ", "1")
    check = dict(testing.package_checks("fixture-sloppy", root=root, file_commands=READ))["file_inputs"]
    with pytest.raises(AssertionError) as info:
        check()
    text = str(info.value)
    assert "with a missing file: left ['out.npz'] behind" in text
    assert "with a garbage file: the message does not name the file" in text


def test_file_commands_need_a_placeholder(site):
    root = make_method(site, "fixture-noph")
    check = dict(testing.package_checks("fixture-noph", root=root, file_commands=[["read", "x.npy"]]))
    with pytest.raises(ValueError, match="placeholder"):
        check["file_inputs"]()


def test_heavy_import_in_help_fails(site, monkeypatch):
    root = make_method(site, "fixture-heavy")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    monkeypatch.setenv("FIXTURE_HEAVY_IMPORT", "1")
    check = dict(testing.package_checks("fixture-heavy", root=root))["help_light"]
    with pytest.raises(AssertionError, match=r"imported \['torch'\]"):
        check()


def test_wall_time_that_misses_the_command_fails(site, monkeypatch):
    root = make_method(site, "fixture-clock")
    monkeypatch.setenv("FIXTURE_NO_RUN_MAIN", "1")
    monkeypatch.setenv("FIXTURE_SLEEP_BEFORE_START", "1.5")
    monkeypatch.setattr(testing, "WALL_SLACK_S", 0.0)
    with pytest.raises(AssertionError, match="start the RunResult"):
        dict(testing.package_checks("fixture-clock", root=root))["demo"]()


def test_wall_time_covers_the_command_under_run_main(site, monkeypatch):
    root = make_method(site, "fixture-clock2")
    monkeypatch.setenv("FIXTURE_SLEEP_BEFORE_START", "1.5")
    monkeypatch.setattr(testing, "WALL_SLACK_S", 0.0)
    dict(testing.package_checks("fixture-clock2", root=root))["demo"]()
    run = testing._DEMO_CACHE[("fixture-clock2", 0)][0]
    assert run.wall_time_s >= 1.5


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


def test_a_losing_headline_needs_its_one_line(site, monkeypatch):
    root = make_method(site, "fixture-loses")
    monkeypatch.setenv("FIXTURE_HEADLINE_LOSES", "1")
    check = dict(testing.package_checks("fixture-loses", root=root))["demo_headline"]
    with pytest.raises(AssertionError, match="does not beat its baseline"):
        check()


def test_a_losing_headline_with_its_note_passes(site, monkeypatch):
    root = make_method(site, "fixture-says")
    monkeypatch.setenv("FIXTURE_HEADLINE_LOSES", "1")
    monkeypatch.setenv("FIXTURE_HEADLINE_NOTE", "the fixture's baseline is out of reach by design")
    dict(testing.package_checks("fixture-says", root=root))["demo_headline"]()



def test_check_paper_rung_runs_the_rung_once_in_smoke_mode(monkeypatch):
    import os

    from iclr25.utils.claims import Claim, ClaimRegistry, RungCost, smoke_run
    from iclr25.utils.testing import check_paper_rung

    monkeypatch.delenv("ICLR25_SMOKE", raising=False)
    reg = ClaimRegistry("iclr25-toysmoke", seeds={"test": (0, 1, 2), "paper": (7, 8, 9)},
                        costs={"paper": RungCost(2, 10, "one GPU", "the paper's model")})
    seen = []

    @reg.measures(Claim("a", kind="main", statement="s", metric="m", direction="higher", threshold=0.0))
    def _m(seed, rung):
        seen.append((seed, rung, smoke_run()))
        return {"a": 1.5 if smoke_run() else float("nan")}

    assert check_paper_rung(reg) == {"a": 1.5} and seen == [(7, "paper", True)]
    assert "ICLR25_SMOKE" not in os.environ
    nan = ClaimRegistry("iclr25-toysmoke2", seeds={"test": (0, 1, 2), "paper": (0, 1, 2)},
                        costs={"paper": RungCost(2, 10, "one GPU", "the paper's model")})
    nan.measures(Claim("b", kind="main", statement="s", metric="m", direction="higher", threshold=0.0))(
        lambda seed, rung: {"b": float("nan")})
    monkeypatch.setenv("ICLR25_SMOKE", "0")  # a smoke flag set to something else is put back as it was
    with pytest.raises(AssertionError, match="non-finite"):
        check_paper_rung(nan)
    assert os.environ["ICLR25_SMOKE"] == "0"
    with pytest.raises(AssertionError, match="no RungCost"):
        check_paper_rung(ClaimRegistry("iclr25-toysmoke3", seeds={"test": (0, 1, 2), "paper": (0, 1, 2)}))
