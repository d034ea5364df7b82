#!/usr/bin/env python3
"""The bad-input and data-loss sweep of issue 40, across every package in one run (the size sweep's sibling:
``ci/size_sweep.py`` covers 10^12 / 0 / NaN sizes).

For each package, in processes forked from one that has imported only the package's command-line module
(memory limit ``--mem-gb``, time limit ``--seconds`` per case):

- **files**: every command of the package's ``file_commands`` (read from its ``tests/test_conformance.py``) with
  its input missing, empty, garbage, or a folder: expected exit 2, one line naming the file, nothing written;
- **out = input**: the same commands with ``--out`` naming their own (garbage) input: expected exit 2, the input
  byte for byte unchanged (a command must never write over or delete what it reads);
- **out**: every subcommand with ``--out`` and no required input, with ``--out`` naming an existing file of the
  user's, a folder that holds a previous run and a file of the user's (no ``--overwrite``), and a path below a
  file: expected exit 2 before any work (within the time limit), one line naming ``--out``, the user's files
  unchanged;
- **internal names**, on every message of the cases above: a message must speak the command line's language,
  not the code's (``Foo.__init__() got an unexpected keyword``, ``np.int64(49)``, ``allow_pickle``, ``pass x=``,
  ``smiles[0]``, ``[Errno 17]``, a traceback).

Usage: ``python3 ci/input_sweep.py [SLUG ...] [--json OUT.json]`` (each package's venv in ``.venvs/<slug>``).
Prints one line per defect and a summary; exit 1 when there is any.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _sweep_driver import RUN_CASE

ROOT = Path(__file__).resolve().parents[1]
GARBAGE = b"\x89\x00\xffnot a data file\x1b[0m {[(<\n\xfe\xfd 1,2,x;;\n\x00\x00PK-not-a-zip\n"

#: Messages that name the code rather than the command line (each seen in the 401-case sweep of issue 40).
INTERNAL = [
    (re.compile(r"Traceback \(most recent call last\)"), "a traceback"),
    (re.compile(r"\b\w+\.__\w+__\(\)"), "a dunder method"),
    (re.compile(r"got an unexpected keyword argument"), "a Python signature error"),
    (re.compile(r"\bnp\.(?:int|float|bool|str)\w*\("), "a numpy scalar repr"),
    (re.compile(r"allow_pickle"), "numpy's allow_pickle advice"),
    (re.compile(r"\bpass [a-z_]+="), "a keyword argument to pass"),
    (re.compile(r"\b[a-z_]+\[\d+\]"), "an indexed variable"),
    (re.compile(r"\[Errno \d+\]"), "raw errno text"),
]

DRIVER = r'''
import argparse, importlib, json, os, resource, signal, sys, time, traceback
''' + RUN_CASE + r'''slug, mem_gb, seconds, cases_file = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
cli = importlib.import_module(f"iclr25.{slug.replace('-', '_')}.cli")
from iclr25.utils.cli import package_parser

parser = package_parser(slug)
subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
out_commands = []
for name, sp in subs.choices.items():
    if not any("--out" in a.option_strings for a in sp._actions):
        continue
    pos, skip = [], any(g.required for g in sp._mutually_exclusive_groups)
    for a in sp._actions:
        if a.option_strings:
            skip = skip or (a.required and "--out" not in a.option_strings)
        elif a.choices:
            pos.append(str(list(a.choices)[0]))
        elif a.nargs not in ("?", "*"):
            skip = True
    if not skip:
        out_commands.append([name, *pos])
cases = json.load(open(cases_file))
if cases == "list-out-commands":
    print("SWEEP " + json.dumps(out_commands))
    sys.exit(0)
results = []
for case in cases:
    err = os.path.join(case["work"], ".stderr")
    status, elapsed = run_case(cli, case["argv"], case["work"], err, mem_gb, seconds)
    if status is None:
        rc = "started"
    elif os.WIFSIGNALED(status):
        rc = f"signal {os.WTERMSIG(status)}"
    else:
        rc = os.WEXITSTATUS(status)
    text = open(err, errors="replace").read() if os.path.exists(err) else ""
    os.unlink(err) if os.path.exists(err) else None
    results.append(dict(rc=rc, seconds=round(elapsed, 1), stderr=text[-800:]))
print("SWEEP " + json.dumps(results))
'''


def file_commands(slug: str, path: Path | None = None) -> list[list[str]]:
    """The ``file_commands`` templates a package's conformance test declares (literal lists holding ``{file}``)."""
    path = path or ROOT / "packages" / slug / "tests" / "test_conformance.py"
    if not path.exists():
        return []
    found: list[list[str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.List) or not node.elts or not all(isinstance(e, ast.List) for e in node.elts):
            continue
        try:
            value = ast.literal_eval(node)
        except ValueError:
            continue
        for cmd in value:
            if all(isinstance(t, str) for t in cmd) and any("{file}" in t for t in cmd) and cmd not in found:
                found.append(cmd)
    return found


def _messages(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and "Warning" not in ln
            and not ln.startswith("  warnings.warn")]


def _internal(stderr: str) -> list[str]:
    return [why for rx, why in INTERNAL if rx.search(stderr)]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".stderr"}


def _run(slug: str, python: Path, cases: list[dict] | str, *, mem_gb: float, seconds: float,
         env: dict[str, str]) -> list | None:
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "cases.json"
        spec.write_text(json.dumps(cases))
        proc = subprocess.run([str(python), "-c", DRIVER, slug, str(mem_gb), str(seconds), str(spec)], cwd=tmp,
                              env=env, capture_output=True, text=True, check=False)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SWEEP ")]
    if not line:
        print(f"driver failed for {slug}: {proc.stderr[-800:]}", flush=True)
        return None
    return json.loads(line[-1].removeprefix("SWEEP "))


def build_cases(work: Path, templates: list[list[str]], out_commands: list[list[str]]) -> list[dict]:
    """Every case of one package, each in its own folder under ``work`` with the files it needs."""
    cases = []
    for i, template in enumerate(templates):
        for kind in ("missing", "empty", "garbage", "folder", "out=input"):
            base = work / f"file{i}-{kind.replace('=', '-')}"
            base.mkdir(parents=True)
            argv = [t.replace("{file}", str(base / "input")).replace("{out}", str(base / "out")) for t in template]
            inputs = sorted({Path(t.split("=", 1)[-1]) for t, tt in zip(argv, template, strict=True)
                             if "{file}" in tt})
            for f in inputs:
                if kind == "empty":
                    f.write_bytes(b"")
                elif kind in ("garbage", "out=input"):
                    f.write_bytes(GARBAGE)
                elif kind == "folder":
                    f.mkdir()
            if kind == "out=input" and "--out" in argv:
                argv[argv.index("--out") + 1] = str(inputs[0])
            elif kind == "out=input":
                continue
            cases.append(dict(cls="files" if kind != "out=input" else "out=input", kind=kind, work=str(base),
                              argv=argv, names=[f.name for f in inputs], template=template))
    for j, cmd in enumerate(out_commands):
        for kind in ("existing file", "previous run", "below a file"):
            base = work / f"out{j}-{kind.replace(' ', '-')}"
            base.mkdir(parents=True)
            (base / "notes.txt").write_text("mine")
            if kind == "existing file":
                target = base / "notes.txt"
            elif kind == "previous run":
                target = base / "previous"
                target.mkdir()
                (target / "results.json").write_text("{}")
                (target / "mine.txt").write_text("keep me")
            else:
                target = base / "notes.txt" / "sub"
            cases.append(dict(cls="out", kind=kind, work=str(base), argv=[*cmd, "--out", str(target)],
                              names=["--out"], template=cmd))
    return cases


def judge(case: dict, res: dict, before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """The defects of one case (empty when it behaved)."""
    problems = []
    lines = _messages(res["stderr"])
    if res["rc"] != 2:
        problems.append(f"exit {res['rc']!r}, expected 2")
    elif len(lines) != 1 and not (lines and lines[0].startswith("usage:") and "error:" in lines[-1]):
        problems.append(f"{len(lines)} lines on stderr, expected one")
    elif not any(n in lines[-1] for n in case["names"]):
        problems.append(f"the message does not name {case['names'][0]}")
    problems += [f"internal name ({why})" for why in _internal(res["stderr"])]
    lost = sorted(set(before) - set(after)) + sorted(k for k in before if k in after and before[k] != after[k])
    if lost:
        problems.append(f"DATA LOSS: {lost} deleted or changed")
    written = sorted(set(after) - set(before))
    if written:
        problems.append(f"wrote {written} on a refused run")
    return problems


def sweep(slug: str, *, mem_gb: float, seconds: float, python: Path | None = None,
          env: dict[str, str] | None = None, conformance: Path | None = None) -> list[dict]:
    """Every case of one package, each judged (``problems`` empty when it behaved)."""
    python = python or ROOT / ".venvs" / slug / "bin" / "python"
    if not python.exists():
        return [dict(slug=slug, cls="setup", kind="no venv", argv=[], problems=[f"no {python}"], rc=None)]
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg", "TQDM_DISABLE": "1", **(env or {})}
    out_commands = _run(slug, python, "list-out-commands", mem_gb=mem_gb, seconds=seconds, env=env)
    if out_commands is None:
        return [dict(slug=slug, cls="setup", kind="driver failed", argv=[], problems=["driver failed"], rc=None)]
    with tempfile.TemporaryDirectory(prefix=f"input-sweep-{slug}-") as tmp:
        work = Path(tmp)
        cases = build_cases(work, file_commands(slug, conformance), out_commands)
        before = {c["work"]: _snapshot(Path(c["work"])) for c in cases}
        results = _run(slug, python, cases, mem_gb=mem_gb, seconds=seconds, env=env) or []
        rows = []
        for case, res in zip(cases, results, strict=False):
            after = _snapshot(Path(case["work"]))
            rows.append(dict(slug=slug, cls=case["cls"], kind=case["kind"], argv=case["template"], rc=res["rc"],
                             seconds=res["seconds"], stderr=res["stderr"][-300:],
                             problems=judge(case, res, before[case["work"]], after)))
    return rows


def sweep_arguments(argv: list[str] | None, doc: str, seconds: float) -> tuple[argparse.Namespace, list[str]]:
    """The command line both sweeps share: slugs (default: every package), ``--json``, ``--mem-gb``, ``--seconds``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--json", type=Path, default=None, help="write every case here")
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--seconds", type=float, default=seconds)
    args = ap.parse_args(argv)
    return args, args.slugs or sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())


def main(argv: list[str] | None = None) -> int:
    args, slugs = sweep_arguments(argv, __doc__, 30.0)
    everything, bad = [], 0
    for slug in slugs:
        rows = sweep(slug, mem_gb=args.mem_gb, seconds=args.seconds)
        everything += rows
        for r in rows:
            if r["problems"]:
                bad += 1
                print(f"  {r['cls']:>9} {r['kind']:<13} iclr25 {slug} {' '.join(r['argv'])}: "
                      f"{'; '.join(r['problems'])}  {r['stderr'][-200:]!r}", flush=True)
        classes: dict[str, int] = {}
        for r in rows:
            classes[r["cls"]] = classes.get(r["cls"], 0) + 1
        print(f"== {slug}: {len(rows)} cases {classes}, {sum(bool(r['problems']) for r in rows)} defect(s)",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    counts: dict[str, int] = {}
    for r in everything:
        for p in r["problems"]:
            key = p.split(":")[0].split(" (")[0] if not p.startswith("exit") else "wrong exit status"
            counts[key] = counts.get(key, 0) + 1
    print(f"input sweep: {len(everything)} cases, {bad} defect(s) {counts}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
