#!/usr/bin/env python3
"""Write (or check) each package's README claims table from its committed ``claims.json``.

A package that has a claims registry (``src/iclr25/<module>/claims.py``) commits the ``claims.json`` its
``repro`` (or ``iclr25 claims <slug> --rung ... --out packages/<slug>``) wrote, and its README carries the table
between the markers of ``iclr25.utils.claims``. ``make claims-table`` rewrites the tables; ``--check`` (part of
``make test`` through ``ci/check_contract.py``) reports every README that differs from its ``claims.json``.
Standard library only: ``iclr25.utils.claims`` is imported from the source tree.

Usage: ``python ci/claims_table.py [--check] [SLUG ...]``
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_utils_module(name: str):
    """``iclr25/utils/<name>.py`` loaded by path, once (standard library only at import), before any environment
    exists: the ci scripts read claims and benchmark records with the same code the packages write them with."""
    import importlib.util  # noqa: PLC0415

    key = f"_iclr25_{name}"
    if key in sys.modules:
        return sys.modules[key]
    path = ROOT / "shared-utils" / "src" / "iclr25" / "utils" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(key, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


_claims = load_utils_module("claims")


def table_problems(pkg: Path, *, write: bool = False) -> list[str]:
    """What is wrong with one package's claims table (empty when it matches); with ``write`` fix it."""
    module = pkg.name.replace("-", "_")
    has_registry = (pkg / "src" / "iclr25" / module / "claims.py").is_file()
    report_path = pkg / _claims.CLAIMS_FILE
    if not report_path.is_file():
        return [f"has a claims registry but no committed {_claims.CLAIMS_FILE} (write it with `iclr25 claims "
                f"{pkg.name} --rung test --out packages/{pkg.name}` or its repro)"] if has_registry else []
    try:
        report = _claims.load_report(report_path)
    except ValueError as exc:
        return [str(exc)]
    readme, evidence = pkg / "README.md", pkg / "EVIDENCE.md"
    # a short README (issue 66) shows its main claims; every claim's row is in EVIDENCE.md's table
    short = evidence.is_file() and _claims.TABLE_BEGIN in evidence.read_text(encoding="utf-8")
    link = ladder_link(pkg)
    tables = {readme: _claims.render_table(
        report, kinds=("main",) if short else None, ladder_link=link,
        more="Every claim, secondary and sanity too: [the table on the Evidence page](EVIDENCE.md#every-claim)."
        if short else "")}
    if short:
        tables[evidence] = _claims.render_table(report, ladder_link=link)
    probs = []
    for path, table in tables.items():
        text = path.read_text(encoding="utf-8")
        try:
            new = _claims.replace_table(text, table)
        except ValueError as exc:
            probs.append(f"{path.name}: {exc}")
            continue
        if new == text:
            continue
        if write:
            path.write_text(new, encoding="utf-8")
            continue
        probs.append(f"{path.name}: the claims table differs from {_claims.CLAIMS_FILE}; run `make claims-table`")
    return probs


def ladder_link(pkg: Path):
    """A claim's ``ladder`` as a link that works from the README and EVIDENCE.md (both at the package's root):
    ``README.md#x`` whose section x moved to EVIDENCE.md links there. Also what the site's dashboard links to."""
    evidence = pkg / "EVIDENCE.md"
    readme = pkg / "README.md"
    ev = heading_anchors(evidence.read_text(encoding="utf-8")) if evidence.is_file() else set()
    rd = heading_anchors(readme.read_text(encoding="utf-8")) if readme.is_file() else set()

    def link(ladder: str) -> str:
        target, _, anchor = ladder.partition("#")
        if target in ("", "README.md") and anchor and anchor not in rd and anchor in ev:
            return f"EVIDENCE.md#{anchor}"
        return ladder

    return link


def heading_anchors(markdown: str) -> set[str]:
    """The anchors Python-Markdown's toc (the documentation site) and GitHub give the headings of ``markdown``."""
    import re  # noqa: PLC0415
    import unicodedata  # noqa: PLC0415

    out = set()
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", markdown, re.M):
        text = re.sub(r"<[^>]+>|`", "", m.group(1))
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        text = re.sub(r"[^\w\s-]", "", text).strip().lower()
        out.add(re.sub(r"[-\s]+", "-", text))
    return out


def ladder_problems(pkg: Path, report: dict) -> list[str]:
    """Every claim's ``ladder`` resolves: a heading of the README or of EVIDENCE.md (where a short README's ladders
    and ablations move, issue 66: ``README.md#x`` still resolves when section x moved there), or a file of the
    package (``EVIDENCE.md#x``: a heading of that file)."""
    probs = []
    anchors = {name: heading_anchors((pkg / name).read_text(encoding="utf-8")) if (pkg / name).is_file() else set()
               for name in ("README.md", "EVIDENCE.md")}
    for c in report.get("claims", []):
        target, _, anchor = (c.get("ladder") or "").partition("#")
        if not c.get("ladder"):
            continue
        if target == "EVIDENCE.md" and anchor:
            if anchor not in anchors["EVIDENCE.md"]:
                probs.append(f"claim {c.get('id')!r}: its ladder {c['ladder']!r} is no heading of EVIDENCE.md")
            continue
        if target not in ("", "README.md"):
            if not (pkg / target).exists():
                probs.append(f"claim {c.get('id')!r}: its ladder {c['ladder']!r} names no file of the package")
            continue
        if anchor not in anchors["README.md"] | anchors["EVIDENCE.md"]:
            probs.append(f"claim {c.get('id')!r}: its ladder {c['ladder']!r} is no heading of README.md or "
                         "EVIDENCE.md")
    return probs


def side_reports(pkg: Path) -> list[tuple[Path, dict]]:
    """The package's other committed claims reports (any kind of claim): a ``claims.json`` below its
    folder (``docs/<system or rung>/claims.json``: another system, or a rung too costly for the main file), at
    schema 2. Older ladder reports (schema 1, another version) are evidence of their own run and are not read."""
    import json  # noqa: PLC0415

    out = []
    for path in sorted(pkg.glob("**/claims.json")):
        parts = set(path.relative_to(pkg).parts)
        if path.parent == pkg or parts & {"src", "tests", ".venv", "build", "results"}:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == _claims.SCHEMA_VERSION and data.get("claims"):
            out.append((path, data))
    return out


def committed_problems(pkg: Path, version: str | None) -> list[str]:
    """What is wrong with a package's committed ``claims.json`` and ``claims-calibration.json`` themselves: the
    schema, kinds and seeds, every verdict recomputed from its values (an edit by hand is caught), verdicts equal
    to ``expect``, declared fails alive, written by ``repro`` (not the test rung) at the package's ``version``, and
    every calibrated margin below its max margin. The package's own ``test_committed_claims`` checks them against
    its registry."""
    module = pkg.name.replace("-", "_")
    if not (pkg / "src" / "iclr25" / module / "claims.py").is_file():
        return []
    probs: list[str] = []
    report_path = pkg / _claims.CLAIMS_FILE
    if report_path.is_file():
        try:
            report = _claims.load_report(report_path)
        except ValueError as exc:
            report = None
            probs.append(str(exc))
        if report is not None:
            probs += [f"{_claims.CLAIMS_FILE}: {p}" for p in _claims.check_report(report, version=version)]
        if report is not None:
            probs += ladder_problems(pkg, report)
    for path, data in side_reports(pkg):  # a main claim decided in another report is checked the same way
        rel = path.relative_to(pkg)
        probs += [f"{rel}: {p}" for p in _claims.check_report(data, version=version)]
        probs += [f"{rel}: {p}" for p in ladder_problems(pkg, data)]
    cal_path = pkg / _claims.CALIBRATION_FILE
    if not cal_path.is_file():
        probs.append(f"no committed {_claims.CALIBRATION_FILE} (write it with `iclr25 claims {pkg.name} --calibrate "
                     f"--out packages/{pkg.name}`)")
    else:

        for path in [cal_path, *sorted(pkg.glob("claims-calibration-*.json"))]:  # the test rung's and other rungs'
            try:
                cal = _claims.load_calibration(path)
                probs += [f"{path.name}: {p}" for p in _claims.check_calibration(cal)]
            except ValueError as exc:
                probs.append(f"{path.name}: {exc}")
    test = pkg / "tests" / "test_claims.py"
    if test.is_file() and not re.search(r"^test_committed_claims\s*=.*pytest_committed_test\(",
                                        test.read_text(encoding="utf-8"), re.M):
        probs.append("tests/test_claims.py does not check the committed files against the registry "
                     "(test_committed_claims = REGISTRY.pytest_committed_test(<package folder>))")
    return probs


def uncalibrated_problems(pkg: Path) -> list[str]:
    """Every committed claim expected to hold whose margin was not set on calibration seeds (issue 58): it depends
    on the seed and its id is in none of the package's ``claims-calibration*.json`` files (the test rung's and
    every other rung's), in ``claims.json`` or a side report. Read from the committed files alone."""
    import json  # noqa: PLC0415

    calibrated: set[str] = set()
    for path in pkg.glob("claims-calibration*.json"):
        try:
            calibrated |= {c.get("id") for c in json.loads(path.read_text(encoding="utf-8")).get("claims", [])}
        except (OSError, ValueError, AttributeError):
            continue
    reports = []
    if (pkg / _claims.CLAIMS_FILE).is_file():
        try:
            reports.append((pkg / _claims.CLAIMS_FILE, json.loads((pkg / _claims.CLAIMS_FILE).read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            pass
    probs, seen = [], set()
    for path, report in reports + side_reports(pkg):
        for c in report.get("claims", []):
            rung = c.get("rung", report.get("rung", ""))
            if (c.get("expect", "holds") != "holds" or c.get("seed_free") or c.get("id") in calibrated
                    or (c.get("id"), rung) in seen):
                continue
            seen.add((c.get("id"), rung))
            probs.append(f"{path.relative_to(pkg)}: claim {c.get('id')!r} (rung {rung!r}) was never calibrated: set its "
                         f"margin on calibration seeds with `iclr25 claims {pkg.name} --calibrate --rung {rung} --only "
                         f"{c.get('id')} --out packages/{pkg.name}`")
    return probs


ROOT_BEGIN = "<!-- main-claims:begin (generated from each package's claims.json by `make claims-table`; do not edit) -->"
ROOT_END = "<!-- main-claims:end -->"


def root_table(root: Path) -> str:
    """The root README's table: per package, its main claims (k of n hold), then secondary and sanity, from the
    committed claims.json, and the latest verdicts at fresh seeds (claims-fresh.json) where there are some."""
    import json  # noqa: PLC0415

    lines = ["| package | main claims hold | secondary | sanity | claims.json | at fresh seeds = expected |",
             "|---|---|---|---|---|---|"]
    totals = {k: [0, 0] for k in _claims.KINDS}
    for pkg in sorted(p for p in (root / "packages").iterdir() if (p / _claims.CLAIMS_FILE).is_file()):
        try:
            report = _claims.load_report(pkg / _claims.CLAIMS_FILE)
        except ValueError:
            continue
        claims = list(report["claims"])
        seen = {c.get("id") for c in claims}
        for _, side in side_reports(pkg):  # main claims decided in another report (another rung or system)
            if side.get("version") == report.get("version"):
                claims += [c for c in side["claims"] if c.get("id") not in seen]
                seen |= {c.get("id") for c in side["claims"]}
        cells = []
        for kind in _claims.KINDS:
            cs = [c for c in claims if c.get("kind") == kind]
            k = sum(c["verdict"] == "holds" for c in cs)
            totals[kind][0] += k
            totals[kind][1] += len(cs)
            cells.append(f"{k} of {len(cs)}" if cs else "–")
        fresh_cell = "not run"
        fresh_path = pkg / _claims.FRESH_FILE
        if fresh_path.is_file():
            fresh = json.loads(fresh_path.read_text(encoding="utf-8"))
            same = sum((c["verdict"] == "holds") == (c.get("expect") == "holds") for c in fresh["claims"])
            fresh_cell = f"{same} of {len(fresh['claims'])} ({fresh.get('version', '?')}, {fresh.get('created', '')[:10]})"
        lines.append(f"| `{pkg.name}` | {' | '.join(cells)} | {report.get('version', '?')}, rung "
                     f"`{report.get('rung', '')}` | {fresh_cell} |")
    lines.append("| **all** | " + " | ".join(f"**{k} of {n}**" for k, n in totals.values()) + " | | |")
    return "\n".join(lines) + "\n"


def root_problems(root: Path, *, write: bool = False) -> list[str]:
    readme = root / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    begin, end = text.find(ROOT_BEGIN), text.find(ROOT_END)
    if begin < 0 or end < begin:
        return [f"README.md has no main-claims table markers ({ROOT_BEGIN!r} ... {ROOT_END!r})"]
    new = text[:begin + len(ROOT_BEGIN)] + "\n" + root_table(root) + text[end:]
    if new == text:
        return []
    if write:
        readme.write_text(new, encoding="utf-8")
        return []
    return ["README.md: the main-claims table differs from the packages' claims.json; run `make claims-table`"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--check", action="store_true", help="report differences instead of rewriting the READMEs")
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    pkgs = [args.root / "packages" / s for s in args.slugs] or sorted(
        p for p in (args.root / "packages").iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    failed = False
    for pkg in pkgs:
        for problem in table_problems(pkg, write=not args.check):
            print(f"packages/{pkg.name}: [claims] {problem}")
            failed = True
    if not args.slugs:
        for problem in root_problems(args.root, write=not args.check):
            print(f"[claims] {problem}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
