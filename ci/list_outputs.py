#!/usr/bin/env python3
"""Every output option of every command of every package, as declared with ``iclr25.utils.outputs.add_output``
(issue 57), read from each package's own parser in its environment (``.venvs/<slug>``).

Prints a markdown table (package, command, option, kind, default or required, suffixes / run files) and, with
``--json OUT``, writes the rows. Exit 1 when a command has an option named like an output
(``iclr25.utils.outputs.OUTPUT_FLAGS``, or ending in ``-out``) that was not declared with ``add_output``.

Usage: ``python3 ci/list_outputs.py [SLUG ...] [--json OUT.json]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r'''
import argparse, json, sys
from iclr25.utils.cli import package_parser
from iclr25.utils.outputs import OUTPUT_FLAGS, declared_outputs
slug = sys.argv[1]
parser = package_parser(slug)
subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
rows, undeclared = [], []
for name, sp in subs.choices.items():
    specs = declared_outputs(sp)
    flags = {s.flag for s in specs}
    for s in specs:
        action = next(a for a in sp._actions if s.flag in a.option_strings)
        default = "required" if action.required else ("derived from the input" if s.default else
                                                      (str(action.default) if action.default is not None else "none"))
        extra = ", ".join(s.suffixes or ()) if s.kind == "file" else ", ".join(s.run_files)
        rows.append({"package": slug, "command": name, "option": s.flag, "kind": s.kind, "default": default,
                     "suffixes_or_run_files": extra, "sidecars": bool(s.sidecars), "resumes": s.resumes})
    for a in sp._actions:
        for opt in a.option_strings:
            if (opt in OUTPUT_FLAGS or opt.endswith("-out")) and opt not in flags and a.nargs != 0:
                undeclared.append(f"{slug} {name} {opt}")
print("LIST " + json.dumps({"rows": rows, "undeclared": undeclared}))
'''


def slugs_all() -> list[str]:
    return sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slugs", nargs="*", metavar="SLUG")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    rows, undeclared, missing = [], [], []
    for slug in args.slugs or slugs_all():
        python = ROOT / ".venvs" / slug / "bin" / "python"
        if not python.exists():
            missing.append(slug)
            continue
        proc = subprocess.run([str(python), "-c", PROBE, slug], capture_output=True, text=True, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("LIST ")), None)
        if line is None:
            undeclared.append(f"{slug}: the probe failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        found = json.loads(line[5:])
        rows += found["rows"]
        undeclared += found["undeclared"]
    print("| package | command | option | kind | default | suffixes / run files |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['package']} | {r['command']} | {r['option']} | {r['kind']} | {r['default']} | "
              f"{r['suffixes_or_run_files']}{' (+ sidecars)' if r['sidecars'] else ''} |")
    print(f"\n{len(rows)} output options in {len({(r['package'], r['command']) for r in rows})} commands of "
          f"{len({r['package'] for r in rows})} packages")
    if missing:
        print(f"no environment (run make test first): {', '.join(missing)}", file=sys.stderr)
    for u in undeclared:
        print(f"undeclared output option: {u}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "undeclared": undeclared}, indent=1) + "\n")
    return 1 if undeclared else 0


if __name__ == "__main__":
    sys.exit(main())
