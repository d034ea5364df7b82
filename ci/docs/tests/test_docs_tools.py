"""The documentation site's tooling: math conversion, link rewriting, the metadata table, the output check and
the browser check's event parsing (run by ``make docs`` in the docs environment)."""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

import browser_check  # noqa: E402
import build_site as build  # noqa: E402
import griffe_math  # noqa: E402


def test_rst_math_block_and_role_become_mathml():
    out = griffe_math.rst_math_to_mathml("Intro.\n\n.. math::\n\n    x = \\frac{1}{2}\n\nso :math:`y^2` is.")
    assert '<div class="math-display"><math' in out and 'display="block"' in out and "<mfrac>" in out
    assert 'display="inline"' in out and "<msup>" in out
    assert "math::" not in out and ":math:" not in out
    assert out.startswith("Intro.\n\n") and out.rstrip().endswith("is.")


def test_math_inside_a_section_keeps_its_indentation_and_other_text_is_untouched():
    text = "Args:\n    x: the value\n\n    .. math:: a + b\n\nReturns:\n    y, costs $5"
    out = griffe_math.rst_math_to_mathml(text)
    assert "\n    <div class=\"math-display\"><math" in out
    assert out.endswith("Returns:\n    y, costs $5")
    assert griffe_math.rst_math_to_mathml("no math here, $HOME") == "no math here, $HOME"


def test_links_between_readmes_become_pages_and_other_files_repository_paths(tmp_path):
    root = build.ROOT
    page_of = {(root / "packages/pgw/README.md").resolve(): "packages/pgw/index.md",
               (root / "packages/pgw/CHANGELOG.md").resolve(): "packages/pgw/changelog.md",
               (root / "CONTRIBUTING.md").resolve(): "contributing.md"}
    fig = (root / "packages/pgw/docs/x.png").resolve()
    text = ("See [the changelog](CHANGELOG.md), [guide](../../CONTRIBUTING.md#style), ![fig](docs/x.png), "
            "[code](src/iclr25/pgw/solver.py) and [web](https://arxiv.org).\n```\n[not](a link)\n```")
    out = build.rewrite_links(text, root / "packages/pgw", page_of, "packages/pgw", {fig})
    assert "[the changelog](changelog.md)" in out
    assert "[guide](../../contributing.md#style)" in out
    assert "![fig](docs/x.png)" in out
    assert "code (`packages/pgw/src/iclr25/pgw/solver.py`)" in out
    assert "[web](https://arxiv.org)" in out and "[not](a link)" in out


def test_package_table_comes_from_every_package_folder():
    pkgs = build.packages()
    folders = {p.name for p in (build.ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()}
    assert {p.folder.name for p in pkgs} == folders | {"shared-utils"}
    table = build.package_table(pkgs)
    for p in pkgs:
        assert f"[{p.distribution}](packages/{p.slug}/index.md) | {p.version} | {p.status} |" in table
    assert all(p.status in {"planned", "alpha", "beta", "stable"} for p in pkgs)


def test_backend_is_read_from_the_dependencies():
    assert build._backend(["torch>=2", "numpy>=1"]) == "torch"
    assert build._backend(["jax[cpu]>=0.4", "torch>=2"]) == "torch + jax"
    assert build._backend(["numpy>=1.26", "scipy>=1"]) == "numpy"


def test_notebook_output_check_catches_a_page_that_does_not_show_the_output(tmp_path):
    nb = tmp_path / "demo.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["accuracy 0.970\n", "done\n"]},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}}]}]}))
    page = tmp_path / "site/notebooks/demo/index.html"
    page.parent.mkdir(parents=True)
    page.write_text("<pre>accuracy   0.970</pre><p>done</p><img src='data:image/png;base64,iVBORw0KGgo='>")
    assert build.check_notebook_outputs(tmp_path / "site", [nb]) == []
    page.write_text("<pre>accuracy 0.971</pre><p>done</p><img src='x.png'>")
    assert "printed 'accuracy 0.970'" in build.check_notebook_outputs(tmp_path / "site", [nb])[0]
    page.write_text("<pre>accuracy 0.970</pre><p>done</p>")
    assert "its page shows none of its 1 figure(s)" in build.check_notebook_outputs(tmp_path / "site", [nb])[0]


def test_notebook_without_a_figure_fails(tmp_path):
    nb = tmp_path / "demo.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["done\n"]}]}]}))
    page = tmp_path / "site/notebooks/demo/index.html"
    page.parent.mkdir(parents=True)
    page.write_text("<p>done</p>")
    assert "shows no figure" in build.check_notebook_outputs(tmp_path / "site", [nb])[0]


def test_dashboard_lists_every_claim_and_links_ladders(tmp_path, monkeypatch):
    pkg = tmp_path / "packages" / "demo-pkg"
    pkg.mkdir(parents=True)
    (pkg / "README.md").write_text("# demo\n\n## Scale ladder of the claim\n")
    claim = {"id": "c1", "statement": "ours beats the prior", "paper": "+26 %", "metric": "acc", "direction": "higher",
             "baseline": "prior", "threshold": None, "rule": "every_seed", "rung": "test", "seeds": [0, 1, 2],
             "values": [0.9, 0.8, 0.4], "references": [0.5, 0.5, 0.5], "holds_per_seed": [True, True, False],
             "verdict": "does not hold", "ladder": "README.md#scale-ladder-of-the-claim"}
    (pkg / "claims.json").write_text(json.dumps({"version": "0.1.0", "created": "2026-12-02T00:00:00",
                                                 "claims": [claim]}))
    p = build.Package("demo-pkg", pkg, "iclr25-demo-pkg", "iclr25.demo_pkg", "0.1.0", "", "alpha", "numpy")
    q = build.Package("other", tmp_path / "packages" / "other", "iclr25-other", "iclr25.other", "0.1.0", "", "alpha",
                      "numpy")
    page = build.dashboard_page([p, q])
    assert "0 of 1 claims hold in all" in page and "✓0.9 ✓0.8 ✗0.4" in page
    assert "[ladder](packages/demo-pkg/index.md#scale-ladder-of-the-claim)" in page
    assert "without a committed `claims.json` yet: other" in page
    # kinds: main first and counted apart; a stale version and the fresh-seed verdict are shown
    claim2 = {**claim, "id": "c2", "kind": "main", "values": [0.9, 0.8, 0.7], "holds_per_seed": [True] * 3,
              "verdict": "holds", "note": "margin 0 <= max_margin 0.1 from seeds 100-109"}
    (pkg / "claims.json").write_text(json.dumps({"version": "0.0.9", "created": "2026-12-02T00:00:00",
                                                 "claims": [{**claim, "kind": "sanity"}, claim2]}))
    (pkg / "claims-fresh.json").write_text(json.dumps({"version": "0.1.0", "created": "2026-12-05T00:00:00",
                                                       "claims": [{"id": "c2", "verdict": "does not hold",
                                                                   "seeds": [1001, 1002, 1003]}]}))
    page = build.dashboard_page([p])
    assert page.index("## Main claims") < page.index("## Sanity checks") < page.index("`c1`")
    assert "**main: 1 of 1 hold; sanity: 0 of 1**" in page and "margin 0 <= max_margin 0.1" in page
    assert ('<span class="iclr25-v fails">does not hold</span> (seeds 1001, 1002, 1003, 0.1.0, 2026-12-05) '
            '≠ expected') in page
    # a summary row per package, coloured counts; the verdict is the first column of every claims table
    assert ('| [demo-pkg](packages/demo-pkg/index.md) | <span class="iclr25-v holds">1 of 1</span> | – | '
            '<span class="iclr25-v fails">0 of 1</span> | <span class="iclr25-v fails">0 of 1</span> as expected | '
            '0.0.9 |') in page
    assert "\n| verdict | package | claim |" in page
    # a ladder that moved from the README to the Evidence page links there
    (pkg / "README.md").write_text("# demo\n")
    (pkg / "EVIDENCE.md").write_text("# Evidence\n\n## Scale ladder of the claim\n")
    assert "[ladder](packages/demo-pkg/evidence.md#scale-ladder-of-the-claim)" in build.dashboard_page([p])
    assert "**Stale** (claims.json older than its package): demo-pkg (claims.json from 0.0.9, package 0.1.0)" in page
    # evidence kept outside claims.json: another system's claims report, ladder files
    (pkg / "docs" / "prinz").mkdir(parents=True)
    (pkg / "docs" / "prinz" / "claims.json").write_text(json.dumps({"version": "0.1.0", "rung": "repro",
                                                                    "created": "2026-12-03", "claims": [claim2]}))
    (pkg / "benchmarks").mkdir()
    (pkg / "benchmarks" / "ladder_budget.json").write_text("{}")
    page = build.dashboard_page([p])
    assert "## Evidence kept outside claims.json" in page and "`docs/prinz/claims.json` | `c2` | main" in page
    assert "`benchmarks/ladder_budget.json`" in page


def test_browser_events_that_fail_the_check():
    base = "http://127.0.0.1:1"
    events = [
        {"method": "Runtime.consoleAPICalled", "params": {"type": "error", "args": [{"value": "boom"}]}},
        {"method": "Runtime.consoleAPICalled", "params": {"type": "log", "args": [{"value": "fine"}]}},
        {"method": "Network.requestWillBeSent", "params": {"requestId": "1", "request": {"url": "https://cdn.x/a.js"}}},
        {"method": "Network.requestWillBeSent", "params": {"requestId": "2", "request": {"url": f"{base}/a.css"}}},
        {"method": "Network.responseReceived", "params": {"response": {"status": 404, "url": f"{base}/b.png"}}},
        {"method": "Runtime.exceptionThrown", "params": {"exceptionDetails": {"text": "Uncaught", "exception": {
            "description": "TypeError: x"}}}},
    ]
    probs = browser_check.problems_of(events, base)
    assert "console error: boom" in probs
    assert "request leaves the site: https://cdn.x/a.js" in probs
    assert f"HTTP 404: {base}/b.png" in probs
    assert "uncaught exception: TypeError: x" in probs
    assert len(probs) == 4


def test_the_browser_check_fails_on_a_page_with_overflowing_text(tmp_path):
    # issue 66: text cut off at the frame or scrolled sideways fails the check (in a real headless Chromium)
    import shutil

    if not any(shutil.which(n) for n in browser_check.BROWSERS):
        pytest.skip("no chromium on PATH (make docs installs and requires it)")
    site = tmp_path / "site"
    (site / "wide").mkdir(parents=True)
    (site / "index.html").write_text('<html><head><link rel="icon" href="data:,"></head><body><div class="md-content"><p>short text</p>'
                                     '<pre>print(1)</pre></div></body></html>')
    long = "word " * 400
    (site / "wide" / "index.html").write_text('<html><head><link rel="icon" href="data:,"></head><body><div class="md-content">'
                                              f'<p style="white-space: nowrap">{long}</p></div></body></html>')
    shots = tmp_path / "shots"
    assert browser_check.main(["--site", str(site), "--shots", str(shots), "--pages", "", "--require"]) == 0
    assert browser_check.main(["--site", str(site), "--shots", str(shots), "--pages", "wide/", "--require"]) == 1
    report = json.loads((shots / "report.json").read_text())
    assert any(p.startswith("horizontal overflow: ") for p in report[0]["problems"]), report


def test_doctests_of_the_math_module():
    import doctest

    assert doctest.testmod(griffe_math).failed == 0


def test_roles_link_to_documented_objects_and_stay_code_elsewhere(tmp_path):
    """A role naming a public, documented object of a public module becomes an autorefs link; a private one,
    one in the command-line glue, one without a docstring or an unknown name stays inline code."""
    import griffe

    mod = tmp_path / "iclr25" / "toy"
    mod.mkdir(parents=True)
    (mod / "__init__.py").write_text('"""Toy."""\nfrom .solver import solve\n__all__ = ["solve"]\n')
    (mod / "solver.py").write_text(
        '"""Solver."""\n\n\ndef solve(x):\n    """Solve; see :func:`_inner`, :func:`helper`, :class:`Result`,'
        ' :func:`~iclr25.toy.cli.main`, :meth:`Result.norm` and :func:`nowhere`."""\n\n\n'
        'def helper(x):\n    """Help :func:`solve`."""\n\n\ndef _inner(x):\n    """Inner."""\n\n\n'
        'class Result:\n    """A result."""\n\n    def norm(self):\n        """Norm."""\n\n\n'
        'def bare(x):\n    pass\n')
    (mod / "cli.py").write_text('"""CLI."""\n\n\ndef main():\n    """Main; see :func:`iclr25.toy.solver.bare`."""\n')
    loader = griffe.GriffeLoader(search_paths=[str(tmp_path)],
                                 extensions=griffe.load_extensions(griffe_math.RstMath))
    pkg = loader.load("iclr25")
    doc = pkg["toy.solver.solve"].docstring.value
    assert "[`helper`][iclr25.toy.solver.helper]" in doc
    assert "[`Result`][iclr25.toy.solver.Result]" in doc
    assert "[`Result.norm`][iclr25.toy.solver.Result.norm]" in doc
    assert "`_inner`" in doc and "][iclr25.toy.solver._inner]" not in doc
    assert "`main`" in doc and "iclr25.toy.cli" not in doc
    assert "`nowhere`" in doc and ":func:" not in doc
    assert pkg["toy.cli.main"].docstring.value == "Main; see `iclr25.toy.solver.bare`."


def test_inline_math_that_starts_a_line_does_not_split_a_parameter_description():
    """Python-Markdown treats a line starting with <math> as an HTML block; wrapped in a span it stays inline."""
    import markdown

    text = griffe_math.rst_math_to_mathml("Penalty :math:`\\lambda`. Matched only if below\n:math:`\\lambda` too.")
    html = markdown.markdown(text)
    assert html.count("<p>") == 1, html
    assert html.count("<math") == 2


def test_gallery_keeps_examples_that_ran_and_links_their_cards(tmp_path):
    sys.path.insert(0, str(HERE.parent))
    import run_gallery  # noqa: PLC0415

    script = tmp_path / "01_demo.py"
    script.write_text("# %% [markdown]\n# # Curvature finds the bottleneck\n# Text.\n\n# %%\nprint(1)\n")
    assert run_gallery.title_of(script) == "Curvature finds the bottleneck"
    for name in ("01_ok", "02_failed", "03_lost"):
        (tmp_path / "piorf").mkdir(exist_ok=True)
        if name != "03_lost":
            (tmp_path / "piorf" / f"{name}.ipynb").write_text("{}")
        (tmp_path / "piorf" / f"{name}.png").write_bytes(b"\x89PNG")
    recs = [{"package": "piorf", "name": n, "title": n.upper(), "seconds": 1.5, "notebook": f"piorf/{n}.ipynb",
             "thumbnail": f"piorf/{n}.png"} for n in ("01_ok", "02_failed", "03_lost")]
    recs[1]["error"] = "shows no figure"
    (tmp_path / "gallery.json").write_text(json.dumps({"examples": recs}))
    kept = build.read_gallery(tmp_path)
    assert [r["name"] for r in kept] == ["01_ok"]  # failed or missing examples are not shown
    pkg = build.read_package(build.ROOT / "packages" / "piorf")
    page = build.gallery_page(kept, [pkg])
    assert "## iclr25-piorf {#piorf}" in page and "[![01_OK](piorf/01_ok.png)](piorf/01_ok.ipynb)" in page
    assert "1.5 s" in page and "../packages/piorf/index.md" in page
