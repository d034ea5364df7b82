"""Each rule of ci/check_contract.py, shown failing on a bad fixture package with its message."""

import json
import re

import pytest


def run(contract, root, capsys, *slugs):
    rc = contract.main(["--root", str(root), *slugs])
    return rc, capsys.readouterr().out


def test_scaffold_passes(contract, new_package, fake_root, capsys):
    new_package.scaffold("good-pkg", root=fake_root)
    rc, out = run(contract, fake_root, capsys)
    assert rc == 0, out
    assert "1 package(s) checked, no violations" in out


def _edit(path, old, new, count=1):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def _rm(path):
    path.unlink()


MOD = "src/iclr25/bad_pkg"

CASES = {
    "missing-readme": (lambda p: _rm(p / "README.md"), "[files] missing README.md"),
    "missing-claims": (lambda p: _rm(p / "tests/test_claims.py"), "[files] missing tests/test_claims.py"),
    "missing-errors": (lambda p: _rm(p / "tests/test_errors.py"), "[files] missing tests/test_errors.py"),
    "missing-py-typed": (lambda p: _rm(p / f"{MOD}/py.typed"), f"[files] missing {MOD}/py.typed"),
    "missing-main": (lambda p: _rm(p / f"{MOD}/__main__.py"), f"[files] missing {MOD}/__main__.py"),
    "missing-quickstart": (lambda p: _rm(p / "examples/quickstart.py"), "[files] missing examples/quickstart.py"),
    "namespace-init": (lambda p: (p / "src/iclr25/__init__.py").write_text(""),
                       "[namespace] src/iclr25/__init__.py must not exist"),
    "second-module": (lambda p: (p / "src/iclr25/other").mkdir(), "[names] src/iclr25/ holds ['other']"),
    "module-name": (lambda p: _edit(p / "pyproject.toml", 'module-name = "iclr25.bad_pkg"',
                                    'module-name = "iclr25.badpkg"'), "[names] [tool.uv.build-backend] module-name"),
    "utils-module": (lambda p: (p / f"{MOD}/utils.py").write_text(""), "[modules] src/iclr25/bad_pkg/utils.py"),
    "helpers-module": (lambda p: (p / f"{MOD}/helpers.py").write_text(""), "[modules]"),
    "toml": (lambda p: _edit(p / "pyproject.toml", "[project]", "[project"), "[pyproject] pyproject.toml is not valid"),
    "dist-name": (lambda p: _edit(p / "pyproject.toml", 'name = "iclr25-bad-pkg"', 'name = "bad-pkg"'),
                  "[name] distribution name is 'bad-pkg', expected 'iclr25-bad-pkg'"),
    "dynamic-version": (lambda p: _edit(p / "pyproject.toml", 'version = "0.1.0"', 'dynamic = ["version"]'),
                        "[version] version must be static"),
    "semver": (lambda p: _edit(p / "pyproject.toml", 'version = "0.1.0"', 'version = "0.1"'),
               "[version] version '0.1' is not semver"),
    "entry-point": (lambda p: _edit(p / "pyproject.toml", '[project.entry-points."iclr25.cli"]',
                                    '[project.entry-points."console_scripts"]'),
                    '[entry-point] [project.entry-points."iclr25.cli"] must have bad-pkg'),
    "status": (lambda p: _edit(p / "pyproject.toml", 'classifiers = ["Development Status :: 1 - Planning"]', ""),
               "[status] [project] classifiers must hold exactly one 'Development Status"),
    "lower-bound": (lambda p: _edit(p / "pyproject.toml", '"numpy>=1.26"', '"numpy"'),
                    "[dependencies] dependency 'numpy' has no lower bound"),
    "utils-dependency": (lambda p: _edit(p / "pyproject.toml", '"iclr25-utils[plot,progress]>=0.3.0",', ""),
                         "[dependencies] iclr25-utils must be a dependency"),
    "workspace-source": (lambda p: _edit(p / "pyproject.toml", "iclr25-utils = { workspace = true }", ""),
                         "[dependencies] [tool.uv.sources] must have iclr25-utils"),
    "readme-title": (lambda p: _edit(p / "README.md", "# iclr25-bad-pkg", "iclr25-bad-pkg"),
                     "[readme] README.md must start with a '# ' title line"),
    "readme-citation": (lambda p: _edit(p / "README.md", "ICLR 2025", "a venue"),
                        "[readme] README.md title section must cite the paper"),
    "readme-section": (lambda p: _edit(p / "README.md", "## Limitations", "## Caveats"),
                       "[readme] README.md lacks the section '## Limitations'"),
    "readme-order": (lambda p: (_edit(p / "README.md", "## Install", "## TMP"),
                                _edit(p / "README.md", "## Quickstart", "## Install"),
                                _edit(p / "README.md", "## TMP", "## Quickstart")),
                     "[readme] README.md sections out of order"),
    "changelog-entry": (lambda p: _edit(p / "pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"'),
                        "[changelog] CHANGELOG.md has no entry '## [0.2.0]'"),
    "changelog-newest": (lambda p: _edit(p / "CHANGELOG.md", "## [0.1.0]", "## [0.2.0] - x\n- y\n\n## [0.1.0]"),
                         "[changelog] CHANGELOG.md's newest entry is 0.2.0"),
    "uncalibrated": (lambda p: (p / "claims.json").write_text(json.dumps({"claims": [{"id": "c", "rung": "repro"}]})),
                     "[calibration] claims.json: claim 'c' (rung 'repro') was never calibrated"),
    "typed-ratio": (lambda p: _edit(p / "README.md", "## Limitations", "Ours is 2.5× faster than the peer.\n\n"
                                    "## Limitations"), "[ratios] README.md:"),
    "claims-json": (lambda p: (p / f"{MOD}/claims.py").write_text("REGISTRY = None\n"),
                    "[claims] has a claims registry but no committed claims.json"),
    "machine-path": (lambda p: _edit(p / "README.md", "## Limitations", "Run `" + "/work" + "/tools/heavy make repro`.\n\n"
                                     "## Limitations"), "[portable] README.md:"),
    "machine-path-default": (lambda p: (p / "benchmarks/speed.py").write_text(
        'import argparse\nap = argparse.ArgumentParser()\nap.add_argument("--out", default="' + '/tmp' + '/bench")\n'),
        "[portable] benchmarks/speed.py:3: absolute machine path '" + "/tmp" + "/bench"),
    "bench-no-out": (lambda p: (p / "benchmarks/speed.py").write_text("print('hi')\n"),
                     "[benchmarks] benchmarks/speed.py: no --out option"),
    "bench-missing": (lambda p: _edit(p / "README.md", "## Limitations", "`python benchmarks/gone.py --out x`\n\n"
                                      "## Limitations"), "[benchmarks] README.md names benchmarks/gone.py"),
    "layout-renamed": (lambda p: (p / f"{MOD}/reproduction.py").write_text(""),
                       f"[layout] {MOD}/reproduction.py: this concept lives in repro.py"),
    "layout-required": (lambda p: _rm(p / f"{MOD}/repro.py"), f"[layout] missing {MOD}/repro.py"),
    "layout-command-module": (lambda p: (p / f"{MOD}/fitcmd.py").write_text(""),
                              f"[layout] {MOD}/fitcmd.py: a command module"),
    "import-circle": (lambda p: ((p / f"{MOD}/alpha.py").write_text("from .beta import b\n\n\ndef a():\n    return b\n"),
                                 (p / f"{MOD}/beta.py").write_text("def b():\n    from .alpha import a\n    return a\n")),
                      "[imports] import circle alpha <-> beta"),
    "undeclared-output": (lambda p: (p / f"{MOD}/fitting.py").write_text(
        'def add(p):\n    p.add_argument("--plan", default=None)\n'),
        f"[outputs] {MOD}/fitting.py:2: the output option --plan is added with add_argument"),
    "device": (lambda p: _edit(p / "README.md", "## GPU and the paper's scale", "## GPU"),
               "[device] README.md has no section on running at the paper's scale"),
    "readme-length": (lambda p: _edit(p / "README.md", "## Limitations", "word " * 1501 + "\n\n## Limitations"),
                      "[readme-length] README.md has "),
    "readme-cite": (lambda p: _edit(p / "README.md", "```bibtex", "```text"),
                    "[readme-length] README.md's '## How to cite' has no ```bibtex block"),
    "init-all": (lambda p: _edit(p / f"{MOD}/__init__.py", "__all__ =", "_all ="),
                 "[init] src/iclr25/bad_pkg/__init__.py must define __all__"),
    "init-version": (lambda p: _edit(p / f"{MOD}/__init__.py", '__version__ = _version("iclr25-bad-pkg")',
                                     '__version__ = "0.1.0"'), "[init] src/iclr25/bad_pkg/__init__.py must set __version__"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_fails_with_its_message(contract, new_package, fake_root, capsys, case):
    pkg = new_package.scaffold("bad-pkg", root=fake_root)
    mutate, message = CASES[case]
    mutate(pkg)
    rc, out = run(contract, fake_root, capsys)
    assert rc == 1
    lines = [ln for ln in out.splitlines() if ln.startswith("packages/bad-pkg: ")]
    assert any(message in ln for ln in lines), f"expected {message!r} in:\n{out}"


def test_every_rule_has_a_failing_case():
    """Each rule tag the checker can print is exercised by at least one case above."""
    import inspect

    import check_contract

    rules = set(re.findall(r'bad\("([a-z-]+)"', inspect.getsource(check_contract)))
    covered = {re.match(r"\[([a-z-]+)\]", msg).group(1) for _, msg in CASES.values()}
    assert rules <= covered, f"rules without a failing fixture: {sorted(rules - covered)}"


def test_unknown_slug_is_reported(contract, fake_root, capsys):
    rc, out = run(contract, fake_root, capsys, "nope")
    assert rc == 1 and "packages/nope: no such package folder" in out


def test_scaffold_rejects_bad_slugs(new_package, fake_root):
    with pytest.raises(ValueError, match="lower-case slug"):
        new_package.scaffold("Bad_Slug", root=fake_root)
    new_package.scaffold("ok", root=fake_root)
    with pytest.raises(FileExistsError):
        new_package.scaffold("ok", root=fake_root)


def test_root_table_must_list_each_package_with_its_classifier_status(contract, new_package, fake_root, capsys):
    new_package.scaffold("good-pkg", root=fake_root)  # the template's classifier: 1 - Planning
    readme = fake_root / "README.md"
    readme.write_text("| slug | status |\n|---|---|\n| `other` | alpha |\n")
    rc, out = run(contract, fake_root, capsys)
    assert rc == 1 and "[root-table] README.md: the package table has no row for `good-pkg`" in out
    readme.write_text("| slug | status |\n|---|---|\n| `good-pkg` | alpha |\n")
    rc, out = run(contract, fake_root, capsys)
    assert rc == 1 and "the row of `good-pkg` does not say 'planned'" in out
    readme.write_text("| slug | status |\n|---|---|\n| `good-pkg` | planned |\n")
    rc, out = run(contract, fake_root, capsys)
    assert rc == 0, out


def test_user_folders_and_worker_scripts_pass(contract, new_package, fake_root, capsys):
    pkg = new_package.scaffold("good-pkg", root=fake_root)
    (pkg / "benchmarks/_worker.py").write_text("print('a worker: make bench does not run it')\n")
    (pkg / "benchmarks/speed.py").write_text(
        'import argparse\nap = argparse.ArgumentParser()\nap.add_argument("--out", default="results/x")\n'
        '# cache: ~/.cache/iclr25/x or $XDG_CACHE_HOME/iclr25/x; docs at https://example.org/tmp/x\n')
    (pkg / "benchmarks/shared_parser.py").write_text(  # --out declared by the shared helper
        'from iclr25.utils.bench import benchmark_parser\nap = benchmark_parser(__doc__, out="results/y")\n')
    rc, out = run(contract, fake_root, capsys)
    assert rc == 0, out


def test_root_files_with_machine_paths_fail(contract, new_package, fake_root, capsys):
    new_package.scaffold("good-pkg", root=fake_root)
    (fake_root / "ci").mkdir(exist_ok=True)
    (fake_root / "ci" / "x.py").write_text('PATH = "' + '/home' + '/alice/data"\n')
    rc, out = run(contract, fake_root, capsys)
    assert rc == 1 and "[portable] ci/x.py:1: absolute machine path" in out, out


def test_typing_only_imports_and_one_way_imports_are_no_circle(contract, new_package, fake_root, capsys):
    pkg = new_package.scaffold("good-pkg", root=fake_root)
    mod = pkg / "src/iclr25/good_pkg"
    (mod / "alpha.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .beta import B\n")
    (mod / "beta.py").write_text("from iclr25.good_pkg.alpha import TYPE_CHECKING as B\n")
    rc, out = run(contract, fake_root, capsys)
    assert rc == 0, out


def test_speed_table_block_regenerates_and_a_hand_edit_fails(tmp_path, monkeypatch):
    """A speed-table block is rewritten from its JSON by `make speed-tables`; editing its ratio by hand, or
    re-measuring without regenerating, fails the [ratios] rule; dimensions, code and the paper's ratios pass."""
    import speed_tables

    pkg = tmp_path / "packages" / "toy"
    (pkg / "benchmarks").mkdir(parents=True)
    rec = {"kind": "speed-table", "command": "python benchmarks/x.py", "repeats": 3, "note": "",
           "machine": {"cpu": "CPU", "cores": 2, "blas": "openblas"}, "load_start": 0.4, "load_end": 0.5,
           "date": "2026-12-05 12:00 UTC",
           "rows": [{"case": "n = 10", "ours": "ours", "ours_s": 0.5, "peer": "peer", "peer_s": 1.5}]}
    (pkg / "benchmarks" / "x.json").write_text(json.dumps(rec))
    begin = speed_tables.SPEED_BEGIN.format(src="benchmarks/x.json")
    (pkg / "README.md").write_text(f"# toy\n\nA 32×32 sheet; the paper's 10× speed-up; `a 2x flag`.\n\n"
                                   f"{begin}\nold\n{speed_tables.SPEED_END}\n")
    assert speed_tables.ratio_problems(pkg) == ["README.md: the speed table from benchmarks/x.json differs from "
                                                "the JSON (run `make speed-tables`; never edit a ratio by hand)"]
    speed_tables.block_problems(pkg, write=True)
    text = (pkg / "README.md").read_text()
    assert "**3.00×**" in text and speed_tables.ratio_problems(pkg) == []
    (pkg / "README.md").write_text(text.replace("**3.00×**", "**4.00×**"))
    assert "differs from the JSON" in speed_tables.ratio_problems(pkg)[0]
    (pkg / "README.md").write_text(text)
    rec["rows"][0]["peer_s"] = 2.0
    (pkg / "benchmarks" / "x.json").write_text(json.dumps(rec))
    assert "differs from the JSON" in speed_tables.ratio_problems(pkg)[0]
    (pkg / "README.md").write_text(text + "\nOurs is 1.9x faster.\n")
    assert any("the ratio '1.9x' is typed by hand" in p for p in speed_tables.ratio_problems(pkg))


def test_speed_tables_report_for_some_packages_keeps_the_others(tmp_path, monkeypatch):
    """`make speed-tables PKG=a` counts a's hand-typed ratios again and keeps every other package's last count."""
    import speed_tables

    for slug, text in (("a", "ours 2.0x faster\n"), ("b", "ours 3.0x faster, then 4.0x\n")):
        (tmp_path / "packages" / slug).mkdir(parents=True)
        (tmp_path / "packages" / slug / "EVIDENCE.md").write_text(text)
    (tmp_path / "ci" / "reports").mkdir(parents=True)
    monkeypatch.setattr(speed_tables, "ROOT", tmp_path)
    out = tmp_path / "ci" / "reports" / "ratios.json"
    assert speed_tables.main(["--report"]) == 0
    assert json.loads(out.read_text())["counts"] == {"a/EVIDENCE.md": 1, "b/EVIDENCE.md": 2}
    (tmp_path / "packages" / "a" / "EVIDENCE.md").write_text("no ratio left\n")
    assert speed_tables.main(["a", "--report"]) == 0
    report = json.loads(out.read_text())
    assert report["counts"] == {"a/EVIDENCE.md": 0, "b/EVIDENCE.md": 2}
    assert len(report["packages"]["b"]["EVIDENCE.md"]) == 2
