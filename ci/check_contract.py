#!/usr/bin/env python3
"""Check every package under ``packages/`` against the structural rules of the contract (``CONTRIBUTING.md``).

Prints one line per violation, ``packages/<slug>: [rule] problem``, and exits 1 if there is any.
Standard library only, so that it runs before any environment exists.

Usage: ``python ci/check_contract.py [--root DIR] [SLUG ...]``
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from claims_table import committed_problems, root_problems, table_problems, uncalibrated_problems  # noqa: E402 - the README claims tables against claims.json
from speed_tables import ratio_problems  # noqa: E402 - README ratios from benchmark JSONs (issue 65)

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
README_SECTIONS = ("What it does", "Install", "Quickstart", "Command line", "Results",
                   "Differences from the paper", "Limitations")
FORBIDDEN_MODULES = ("utils.py", "helpers.py", "misc.py")
REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
#: An absolute path of one machine (its checkout, its scratch or home folders): a command or a default that holds
#: one works only where it was written. The user's folders are spelled ``~/...``, ``$XDG_CACHE_HOME/...`` or
#: relative to the clone.
MACHINE_PATH = re.compile(r"(?<![\w.~$}/-])/(?:work|tmp|root|scratch|mnt|home/[A-Za-z0-9_.-]+|Users/[A-Za-z0-9_.-]+)/")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".jsonl", ".txt", ".cfg", ".ini", ".yaml", ".yml", ".sh", ".ipynb",
                 ".csv", ".tsv", ".rst"}
SKIP_DIRS = {"__pycache__", ".venv", ".venvs", "build", "dist", "results", ".pytest_cache", "node_modules"}
#: Packages whose import circles are reported but not failed (issue 49; empty since 2026-12-03: every circle is
#: broken, and a new one fails the check).
PENDING_CIRCLES: set[str] = set()
#: One name for one concept in every package (CONTRIBUTING.md, "Layout"): the module each concept must not live in,
#: and the one it lives in instead.
LAYOUT_RENAMED = {"reproduction.py": "repro.py", "experiment.py": "experiments.py",
                  "commands.py": "cli.py (the command line) or the module of the command's concept (demo.py, repro.py)"}
LAYOUT_REQUIRED = ("repro.py",)
#: A module that holds command handlers under another name (``fitcmd.py``, ``train_cli.py``, ``cmds.py``): the
#: handlers live in ``cli.py`` or in the module of the command's concept.
COMMAND_MODULE = re.compile(r"^(?!cli\.py$)\w*(cmd|cmds|commands|_cli)\.py$")
#: Packages not yet laid out as above, reported but not failed (issue 49; empty since 2026-12-03: all 19 follow it).
PENDING_LAYOUT: set[str] = set()
#: Packages whose committed claims.json / claims-calibration.json are not yet regenerated for issue 58 (the repro
#: rung at the package's version, schema 2, calibration): reported on stderr, not failed, until they are.
PENDING_CLAIMS: set[str] = set()
#: Packages with claims expected to hold whose margins were not yet set on calibration seeds (issue 58; the repro-only
#: claims): reported on stderr, not failed, until they are.
PENDING_CALIBRATION: set[str] = set()
#: Packages not yet on the user's GPU and at the paper's scale (issue 59: ``--device``, the paper rung, its README
#: section): reported on stderr, not failed, until they are.
PENDING_DEVICE: set[str] = set()
#: Packages whose README still types a measured ratio by hand (issue 65: a speed table generated from a benchmark
#: JSON, ci/speed_tables.py): reported on stderr, not failed, until they are.
PENDING_RATIOS: set[str] = set()
#: A README a researcher reads in a minute (issue 66): at most this many words (code included), with
#: "Your own data" and "How to cite" (the paper's BibTeX) sections; ladders, ablations and regime tables go to the
#: package's EVIDENCE.md (its "Evidence" page on the site).
README_MAX_WORDS = 1500
README_GUIDE_SECTIONS = ("Your own data", "How to cite")
#: Packages whose README is not yet cut to that shape (issue 66): reported on stderr, not failed, until they are.
PENDING_README: set[str] = set()
#: The README section that says how to run a package on a GPU and at the paper's scale (issue 59).
PAPER_SCALE_HEADING = re.compile(r"^#{2,3} .*paper's scale", re.M | re.I)
BENCH_SCRIPT = re.compile(r"benchmarks/([A-Za-z0-9_]+\.py)")


def required_files(module: str) -> list[str]:
    return [
        "pyproject.toml", "README.md", "CHANGELOG.md",
        f"src/iclr25/{module}/__init__.py", f"src/iclr25/{module}/__main__.py", f"src/iclr25/{module}/cli.py",
        f"src/iclr25/{module}/py.typed",
        "tests/test_claims.py", "tests/test_errors.py", "examples/quickstart.py", "benchmarks",
    ]


def check_package(pkg: Path) -> list[tuple[str, str]]:
    """Violations of one package as ``(rule, message)`` pairs."""
    slug = pkg.name
    module = slug.replace("-", "_")
    out: list[tuple[str, str]] = []

    def bad(rule: str, msg: str) -> None:
        out.append((rule, msg))

    for rel in required_files(module):
        if not (pkg / rel).exists():
            bad("files", f"missing {rel}")
    if (pkg / "src/iclr25/__init__.py").exists():
        bad("namespace", "src/iclr25/__init__.py must not exist (iclr25 is a shared namespace package)")
    src = pkg / "src/iclr25"
    if src.is_dir():
        others = sorted(p.name for p in src.iterdir() if p.is_dir() and p.name != module
                        and p.name != "__pycache__")
        if others:
            bad("names", f"src/iclr25/ holds {others}; only the module {module!r} belongs there")
    for name in FORBIDDEN_MODULES:
        for hit in sorted((pkg / "src").rglob(name)) if (pkg / "src").is_dir() else []:
            bad("modules", f"{hit.relative_to(pkg)}: no {name} in a method package; shared glue goes in "
                           "iclr25.utils, method code in the module of its concept")

    version = _check_pyproject(pkg, slug, module, bad)
    _check_readme(pkg, bad)
    for problem in readme_length_problems(pkg):
        if slug in PENDING_README:
            print(f"packages/{slug}: [readme-length] (pending, issue 66) {problem}", file=sys.stderr)
        else:
            bad("readme-length", problem)
    if version is not None:
        _check_changelog(pkg, version, bad)
    _check_init(pkg, module, bad)
    for problem in table_problems(pkg):
        bad("claims", problem)
    for problem in uncalibrated_problems(pkg):
        if slug in PENDING_CALIBRATION:
            print(f"packages/{slug}: [calibration] (pending, issue 58) {problem}", file=sys.stderr)
        else:
            bad("calibration", problem)
    for problem in committed_problems(pkg, version):
        if slug in PENDING_CLAIMS:
            print(f"packages/{slug}: [claims] (pending, issue 58) {problem}", file=sys.stderr)
        else:
            bad("claims", problem)
    for problem in ratio_problems(pkg):
        if slug in PENDING_RATIOS:
            print(f"packages/{slug}: [ratios] (pending, issue 65) {problem}", file=sys.stderr)
        else:
            bad("ratios", problem)
    for problem in machine_paths(pkg):
        bad("portable", problem)
    for problem in device_problems(pkg):
        if slug in PENDING_DEVICE:
            print(f"packages/{slug}: [device] (pending, issue 59) {problem}", file=sys.stderr)
        else:
            bad("device", problem)
    _check_benchmarks(pkg, bad)
    for problem in undeclared_outputs(pkg):
        bad("outputs", problem)
    for problem in layout_problems(pkg):
        if slug in PENDING_LAYOUT:
            print(f"packages/{slug}: [layout] (pending, issue 49) {problem}", file=sys.stderr)
        else:
            bad("layout", problem)
    for circle in import_cycles(import_graph(pkg)):
        if slug in PENDING_CIRCLES:
            print(f"packages/{slug}: [imports] (pending, issue 49) import circle {' <-> '.join(circle)}",
                  file=sys.stderr)
            continue
        bad("imports", f"import circle {' <-> '.join(circle)}: the modules import each other (also inside "
                       "functions); move what both need into one of them or a third module")
    return out


def _backend_of(pkg: Path) -> str:
    """``"torch"``, ``"jax"`` or ``""`` (numpy/scipy): what the package computes with, from its dependencies."""
    try:
        deps = tomllib.loads((pkg / "pyproject.toml").read_text(encoding="utf-8")).get("project", {}) \
            .get("dependencies", [])
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    names = {m.group(1).lower() for d in deps if (m := REQ_NAME.match(d))}
    return "torch" if "torch" in names else "jax" if "jax" in names else ""


def _read_all(folder: Path) -> str:
    return "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in sorted(folder.rglob("*.py"))
                     if "__pycache__" not in f.parts) if folder.is_dir() else ""


def device_problems(pkg: Path) -> list[str]:
    """Issue 59, read from the source: a torch or JAX package takes ``--device`` (``add_device_argument``) and a
    torch one runs the meta-device conformance check in its tests; a package with a claims registry has a
    ``paper`` rung with its cost (``RungCost``) and a test that runs it shrunk (``--smoke`` / ``smoke``); the
    README has a section on running at the paper's scale that links the install-and-hardware page."""
    module = pkg.name.replace("-", "_")
    src, tests = _read_all(pkg / "src"), _read_all(pkg / "tests")
    backend = _backend_of(pkg)
    problems = []
    if backend and "add_device_argument(" not in src:
        problems.append(f"a {backend} package: no command takes --device (iclr25.utils.device.add_device_argument)")
    if backend == "torch" and "check_device_conformance" not in tests:
        problems.append("a torch package: no test runs iclr25.utils.device.check_device_conformance (meta device)")
    claims = pkg / "src" / "iclr25" / module / "claims.py"
    if claims.is_file():
        text = claims.read_text(encoding="utf-8")
        if "RungCost(" not in text or not re.search(r"[\"']paper[\"']", text):
            problems.append(f"src/iclr25/{module}/claims.py: no 'paper' rung with its RungCost (the paper's own "
                            "configuration and what it costs)")
        if "smoke" not in tests:
            problems.append("no test runs the paper rung shrunk to one step (iclr25 claims NAME --rung paper --smoke)")
    readme = pkg / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if not PAPER_SCALE_HEADING.search(text):
        problems.append("README.md has no section on running at the paper's scale (a heading with \"paper's scale\")")
    if "INSTALL.md" not in text:
        problems.append("README.md does not link the install-and-hardware page (../../INSTALL.md)")
    return problems


#: Option names that write (iclr25.utils.outputs.OUTPUT_FLAGS): each is declared with add_output, never add_argument.
OUTPUT_FLAGS = ("--out", "--output", "--plan", "--json", "--transcript", "--save", "--figure", "--checkpoint-out")


def undeclared_outputs(pkg: Path) -> list[str]:
    """Output options added with ``add_argument`` instead of ``iclr25.utils.outputs.add_output``: their paths
    would not be checked before the work (inputs, existing files, symlinks, --overwrite)."""
    problems = []
    src = pkg / "src"
    for path in sorted(src.rglob("*.py")) if src.is_dir() else []:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            kw = {k.arg for k in node.keywords}
            for flag in flags:
                if (flag in OUTPUT_FLAGS or flag.endswith("-out")) and "action" not in kw:
                    problems.append(f"{path.relative_to(pkg)}:{node.lineno}: the output option {flag} is added with "
                                    "add_argument; declare it with iclr25.utils.outputs.add_output so it is checked "
                                    "before any work")
    return problems


def layout_problems(pkg: Path) -> list[str]:
    """The package's modules against the one layout (``LAYOUT_RENAMED``, ``LAYOUT_REQUIRED``)."""
    src = pkg / "src/iclr25" / pkg.name.replace("-", "_")
    if not src.is_dir():
        return []
    problems = [f"{(src / name).relative_to(pkg)}: this concept lives in {instead}"
                for name, instead in LAYOUT_RENAMED.items() if (src / name).exists()]
    problems += [f"missing {(src / name).relative_to(pkg)} (every package has one)" for name in LAYOUT_REQUIRED
                 if not (src / name).exists()]
    problems += [f"{p.relative_to(pkg)}: a command module; command handlers live in cli.py or in the module of the "
                 "command's concept (demo.py, repro.py, ...)" for p in sorted(src.glob("*.py"))
                 if COMMAND_MODULE.match(p.name)]
    return problems


def import_graph(pkg: Path) -> dict[str, set[str]]:
    """``{module: modules of the same package it imports}`` (relative or absolute imports, at any depth of the
    file, except under ``if TYPE_CHECKING:``), module names relative to the package (``"cli"``, ``"models.gnn"``)."""
    module = pkg.name.replace("-", "_")
    src = pkg / "src/iclr25" / module
    if not src.is_dir():
        return {}
    files = {p.relative_to(src).with_suffix("").as_posix().replace("/", "."): p for p in sorted(src.rglob("*.py"))
             if not SKIP_DIRS.intersection(p.parts)}
    prefix = f"iclr25.{module}"
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        typing_only = {id(n) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                       for n in ast.walk(node)}
        here = name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    mod = ".".join(here[: len(here) - (node.level - 1)] + ([node.module] if node.module else []))
                elif node.module and (node.module == prefix or node.module.startswith(prefix + ".")):
                    mod = node.module[len(prefix):].lstrip(".")
                else:
                    continue
                targets = [mod] + [f"{mod}.{a.name}" if mod else a.name for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name[len(prefix) + 1:] for a in node.names if a.name.startswith(prefix + ".")]
            deps.update(t for t in targets if t in files and t != name and not t.endswith("__init__"))
        graph[name] = deps
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each is an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _text_files(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES and not SKIP_DIRS.intersection(path.parts):
            yield path


def machine_paths(folder: Path, *, rel_to: Path | None = None) -> list[str]:
    """``FILE:LINE: ...`` for each absolute path of one machine in the text files under ``folder``."""
    problems = []
    for path in _text_files(folder):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            m = MACHINE_PATH.search(line)
            if m:
                where = path.relative_to(rel_to or folder)
                problems.append(f"{where}:{lineno}: absolute machine path {line[m.start():m.start() + 40]!r}: "
                                "a command must run from a fresh clone (paths relative to the clone, ~/ or "
                                "$XDG_CACHE_HOME for the user's folders)")
    return problems


def _check_benchmarks(pkg: Path, bad) -> None:
    """``make bench`` runs every ``benchmarks/*.py`` not starting with ``_`` as ``SCRIPT --out DIR``; every
    benchmark script a README names exists."""
    bench = pkg / "benchmarks"
    if not bench.is_dir():
        return
    for script in sorted(bench.glob("[!_]*.py")):
        try:
            tree = ast.parse(script.read_text(encoding="utf-8"))
        except (OSError, SyntaxError) as exc:
            bad("benchmarks", f"{script.relative_to(pkg)}: cannot be parsed ({exc})")
            continue
        declares_out = any(isinstance(n, ast.Constant) and n.value == "--out"
                           or isinstance(n, ast.Name) and n.id == "benchmark_parser"
                           or isinstance(n, ast.Attribute) and n.attr == "benchmark_parser" for n in ast.walk(tree))
        if not declares_out:
            bad("benchmarks", f"{script.relative_to(pkg)}: no --out option (make bench runs it as SCRIPT --out "
                              "DIR; a worker or helper module is named _*.py)")
    for doc in [pkg / "README.md", *sorted(bench.glob("*.md"))]:
        if not doc.is_file():
            continue
        for name in sorted(set(BENCH_SCRIPT.findall(doc.read_text(encoding="utf-8")))):
            if not (bench / name).is_file():
                bad("benchmarks", f"{doc.relative_to(pkg)} names benchmarks/{name}, which does not exist")


def _check_pyproject(pkg: Path, slug: str, module: str, bad) -> str | None:
    path = pkg / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        bad("pyproject", f"pyproject.toml is not valid TOML: {exc}")
        return None
    project = data.get("project", {})
    if project.get("name") != f"iclr25-{slug}":
        bad("name", f"distribution name is {project.get('name')!r}, expected 'iclr25-{slug}'")
    version = project.get("version")
    if "version" in project.get("dynamic", []) or version is None:
        bad("version", "version must be static in [project] (not dynamic)")
        version = None
    elif not SEMVER.match(str(version)):
        bad("version", f"version {version!r} is not semver MAJOR.MINOR.PATCH")
        version = None
    statuses = [c for c in project.get("classifiers", []) if c.startswith("Development Status :: ")]
    if len(statuses) != 1:
        bad("status", "[project] classifiers must hold exactly one 'Development Status :: N - ...' (the "
                      f"package's status on the documentation site), got {statuses or 'none'}")
    eps = project.get("entry-points", {}).get("iclr25.cli", {})
    expected_ep = f"iclr25.{module}.cli:main"
    if eps.get(slug) != expected_ep:
        bad("entry-point", f'[project.entry-points."iclr25.cli"] must have {slug} = "{expected_ep}", '
                           f"got {eps or 'nothing'}")
    deps = project.get("dependencies", [])
    names = {}
    for req in deps:
        m = REQ_NAME.match(req)
        if not m:
            bad("dependencies", f"cannot parse dependency {req!r}")
            continue
        name = m.group(1).lower().replace("_", "-")
        names[name] = req
        spec = m.group(3).split(";")[0]
        if ">=" not in spec and "==" not in spec and "~=" not in spec:
            bad("dependencies", f"dependency {req!r} has no lower bound (>=, ~= or ==)")
    for extra, reqs in project.get("optional-dependencies", {}).items():
        for req in reqs:
            m = REQ_NAME.match(req)
            spec = m.group(3).split(";")[0] if m else ""
            name = m.group(1).lower() if m else ""
            if m and not name.startswith("iclr25-") and ">=" not in spec and "==" not in spec and "~=" not in spec:
                bad("dependencies", f"extra {extra!r} dependency {req!r} has no lower bound")
    if "iclr25-utils" not in names:
        bad("dependencies", "iclr25-utils must be a dependency")
    sources = data.get("tool", {}).get("uv", {}).get("sources", {})
    if sources.get("iclr25-utils") != {"workspace": True}:
        bad("dependencies", "[tool.uv.sources] must have iclr25-utils = { workspace = true }")
    backend = data.get("tool", {}).get("uv", {}).get("build-backend", {})
    build = data.get("build-system", {}).get("build-backend")
    if build == "uv_build" and backend.get("module-name") != f"iclr25.{module}":
        bad("names", f'[tool.uv.build-backend] module-name must be "iclr25.{module}"')
    return version


def _check_readme(pkg: Path, bad) -> None:
    path = pkg / "README.md"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# "):
        bad("readme", "README.md must start with a '# ' title line")
    heads = [ln[3:].strip() for ln in lines if ln.startswith("## ")]
    intro = text.split("\n## ", 1)[0]
    if "ICLR 2025" not in intro:
        bad("readme", "README.md title section must cite the paper (authors, 'ICLR 2025', official code link)")
    positions = []
    for section in README_SECTIONS:
        if section not in heads:
            bad("readme", f"README.md lacks the section '## {section}'")
        else:
            positions.append((heads.index(section), section))
    order = [s for _, s in sorted(positions)]
    expected = [s for s in README_SECTIONS if s in order]
    if order != expected:
        bad("readme", f"README.md sections out of order: {order}; expected {expected}")


def readme_words(text: str) -> int:
    """A README's length in words: every whitespace-separated token, code blocks, tables and the generated
    markers included (how the issue and a reader's `wc -w` count it)."""
    return len(text.split())


def readme_length_problems(pkg: Path) -> list[str]:
    """A short README (issue 66): at most README_MAX_WORDS words (`wc -w`), a "Your own data" section, and "How to cite"
    with the paper's BibTeX; the ladders and ablations it links to live in EVIDENCE.md."""
    path = pkg / "README.md"
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    probs = []
    n = readme_words(text)
    if n > README_MAX_WORDS:
        probs.append(f"README.md has {n} words (at most {README_MAX_WORDS}): move ladders, ablations and regime "
                     "tables to EVIDENCE.md (the package's Evidence page) and link them")
    heads = {ln[3:].strip() for ln in text.splitlines() if ln.startswith("## ")}
    for section in README_GUIDE_SECTIONS:
        if section not in heads:
            probs.append(f"README.md lacks the section '## {section}'")
    cite = text.split("\n## How to cite", 1)[1] if "\n## How to cite" in text else ""
    if "How to cite" in heads and not re.search(r"```bibtex\s*\n\s*@\w+\{", cite):
        probs.append("README.md's '## How to cite' has no ```bibtex block with the paper's entry")
    return probs


def _check_changelog(pkg: Path, version: str, bad) -> None:
    path = pkg / "CHANGELOG.md"
    if not path.is_file():
        return
    heads = re.findall(r"^##\s+\[?v?([0-9][^\]\s]*)\]?", path.read_text(encoding="utf-8"), flags=re.M)
    if version not in heads:
        bad("changelog", f"CHANGELOG.md has no entry '## [{version}]' for the current version")
    elif heads[0] != version:
        bad("changelog", f"CHANGELOG.md's newest entry is {heads[0]}, not the current version {version}")


def _check_init(pkg: Path, module: str, bad) -> None:
    path = pkg / f"src/iclr25/{module}/__init__.py"
    if not path.is_file():
        return
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError as exc:
        bad("init", f"__init__.py does not parse: {exc}")
        return
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    if "__all__" not in assigned:
        bad("init", f"src/iclr25/{module}/__init__.py must define __all__")
    src = path.read_text(encoding="utf-8")
    if "__version__" not in assigned or f'"iclr25-{pkg.name}"' not in src and f"'iclr25-{pkg.name}'" not in src:
        bad("init", f'src/iclr25/{module}/__init__.py must set __version__ from the metadata of "iclr25-{pkg.name}"')


STATUS_OF = {"1": "planned", "2": "planned", "3": "alpha", "4": "beta", "5": "stable", "6": "stable"}


def check_root_table(root: Path, pkgs: list[Path]) -> list[str]:
    """The root README's package table names every package folder, with the status of its classifier."""
    readme = root / "README.md"
    if not readme.is_file():
        return []
    rows = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| `([a-z0-9-]+)` \|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    problems = []
    for pkg in pkgs:
        try:
            project = tomllib.loads((pkg / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError):
            continue
        status = next((STATUS_OF.get(c.split("::")[1].strip()[:1]) for c in project.get("classifiers", [])
                       if c.startswith("Development Status ::")), None)
        if pkg.name not in rows:
            problems.append(f"README.md: the package table has no row for `{pkg.name}`")
        elif status and status not in rows[pkg.name]:
            problems.append(f"README.md: the row of `{pkg.name}` does not say {status!r}, the status of its "
                            "Development Status classifier")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check packages against the contract (CONTRIBUTING.md).")
    ap.add_argument("slugs", nargs="*", help="packages to check (default: all under packages/)")
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    pkgs_dir = args.root / "packages"
    if args.slugs:
        pkgs = [pkgs_dir / s for s in args.slugs]
        for p in pkgs:
            if not p.is_dir():
                print(f"packages/{p.name}: no such package folder")
                return 1
    else:
        pkgs = sorted(p for p in pkgs_dir.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) \
            if pkgs_dir.is_dir() else []
    n_bad = 0
    for pkg in pkgs:
        for rule, msg in check_package(pkg):
            print(f"packages/{pkg.name}: [{rule}] {msg}")
            n_bad += 1
    if not args.slugs:
        for msg in check_root_table(args.root, pkgs):
            print(f"[root-table] {msg}")
            n_bad += 1
        if (args.root / "packages").is_dir() and any((p / "claims.json").is_file() for p in pkgs):
            for msg in root_problems(args.root):
                print(f"[claims] {msg}")
                n_bad += 1
        for name in ("ci", "shared-utils", "templates", "notebooks", ".ci"):
            if (args.root / name).is_dir():
                for msg in machine_paths(args.root / name, rel_to=args.root):
                    print(f"[portable] {msg}")
                    n_bad += 1
        for name in ("README.md", "CONTRIBUTING.md", "Makefile", "pyproject.toml"):
            path = args.root / name
            if path.is_file():
                for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if MACHINE_PATH.search(line):
                        print(f"[portable] {name}:{lineno}: absolute machine path in {line.strip()[:60]!r}")
                        n_bad += 1
    if n_bad:
        print(f"{n_bad} contract violation(s) in {len(pkgs)} package(s)", file=sys.stderr)
        return 1
    print(f"contract: {len(pkgs)} package(s) checked, no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
