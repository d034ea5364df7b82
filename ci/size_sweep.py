#!/usr/bin/env python3
"""The bad-size sweep of issue 40: every command of every package that needs no input file, with each of its
integer options set to 10^12 and to 0, and each float option to NaN, as a new user might type them.

Each case runs in a process forked from one that has imported only the package's command-line module (the
heavy imports happen in the case, as for a user), with a memory limit (``--mem-gb``, default 6) and a time limit
(``--seconds``, default 20). A case is

- ``refused``: exit 2 and one line on stderr (or argparse's usage and its error line), no traceback (what a
  bad size should get);
- ``ok``: exit 0 within the time limit (e.g. ``--seed 0``: not every number is a size);
- ``started``: still running at the time limit - the command accepted a size it cannot finish (a defect for
  10^12, expected for 0/NaN only where the option is not a size);
- ``traceback`` / ``exit N``: a crash, or a message of more than one line (a defect);
- ``killed``: ended by a signal (memory limit hit in native code, for instance).

Options that are not sizes are skipped: ``--seed``, ``--threads``, ``--timeout``, ``--port``, ``--verbose``.
Subcommands with a required positional argument that has no choices (an input file), or a required option that
is not an output, are skipped: the file checks are ``check_file_inputs`` in each package's conformance suite and
``ci/input_sweep.py``. Every output a command declares (``iclr25.utils.outputs.add_output``: ``--out``,
``--output``, ``--plan``, ``--json``, ...) that is required or has a default path is given a fresh path of its
kind and suffix inside the case's folder, and a refused or crashed case must leave nothing there.

Usage: ``python3 ci/size_sweep.py [SLUG ...] [--json OUT.json]`` (each package's venv in ``.venvs/<slug>``,
as ``make test`` builds them). Prints one line per case that is not ``refused``/``ok`` and a summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _sweep_driver import RUN_CASE

ROOT = Path(__file__).resolve().parents[1]
#: Options whose large values are clipped by the method (not sizes): a ``started`` case of these is the default
#: run going on, not a 10^12 run (each read in the code, 2026-12-02).
CLIPPED = {
    ("knowledge-manipulation", "--batch-size"): "a batch holds at most every row of the data (training.train_steps)",
    ("rxnflow", "--min-sampling"): "subset size n = min(|A_i|, max(rho |A_i|, min_sampling)) (estimator.subset_size)",
    ("next-mol", "--top-k"): "a top-k at or above the vocabulary size filters nothing (lm.sample_lm: topk only when "
                             "top_k < vocabulary)",
}

DRIVER = r'''
import argparse, importlib, io, json, os, resource, shutil, signal, sys, tempfile, time, traceback
''' + RUN_CASE + r'''slug, mem_gb, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
SKIP = {"seed", "threads", "timeout", "port", "verbose", "quiet", "n_threads", "jobs", "n_jobs", "workers"}
module = slug.replace("-", "_")
cli = importlib.import_module(f"iclr25.{module}.cli")
from iclr25.utils.cli import package_parser

parser = package_parser(slug)
subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

def kind(action):
    if action.option_strings == [] or action.nargs not in (None, "?") or action.choices:
        return None
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction)):
        return None
    if isinstance(action.default, bool):
        return None
    t = action.type
    name = getattr(t, "__qualname__", "") + getattr(t, "__name__", "")
    if t is int or isinstance(action.default, int) or "int" in name.lower():
        return "int"
    if t is float or isinstance(action.default, float) or "float" in name.lower():
        return "float"
    return None

try:
    from iclr25.utils.outputs import declared_outputs
except ImportError:  # utils before 0.8
    def declared_outputs(sp):
        return []


def output_args(sp, work):
    """Fresh paths for the command's declared outputs that are required or have a default path (each written
    inside the case's folder), or for a plain ``--out`` when the command declares none."""
    specs = declared_outputs(sp)
    if not specs:
        if any("--out" in a.option_strings for a in sp._actions):
            return [("--out", "folder", os.path.join(work, "out"))]
        return []
    by_dest = {a.dest: a for a in sp._actions}
    found = []
    for s in specs:
        a = by_dest.get(s.dest)
        if a is None or not (a.required or a.default is not None):
            continue
        name = "out_" + s.dest + ((s.suffixes[0] if s.suffixes else "") if s.kind == "file" else "")
        found.append((s.flag, s.kind, os.path.join(work, name)))
    return found


cases = []
for name, sp in subs.choices.items():
    outputs = {s.dest for s in declared_outputs(sp)} or {"out"}
    pos, skip = [], False
    for a in sp._actions:
        if a.option_strings:
            if a.required and a.dest not in outputs:
                skip = True
            continue
        if a.choices:
            pos.append(str(list(a.choices)[0]))
        elif a.nargs in ("?", "*"):
            continue
        else:
            skip = True
    if skip:
        continue
    for a in sp._actions:
        k = kind(a)
        if k is None or a.dest in SKIP or "seed" in a.dest:
            continue
        flag = max(a.option_strings, key=len)
        for value in (["1000000000000", "0"] if k == "int" else ["nan"]):
            cases.append((name, sp, pos, flag, value))

results = []
for name, sp, pos, flag, value in cases:
    work = tempfile.mkdtemp(prefix="sweep-")
    outs = output_args(sp, work)
    extra = [x for f, _, path in outs for x in (f, path)]
    argv = [name, *pos, flag, value] + extra
    status, elapsed, text, _ = run_case(cli, argv, work, mem_gb, seconds)
    rc = describe_rc(status)
    outcome = None
    if rc == "started":
        outcome, rc = "started", None
    elif isinstance(rc, str):
        outcome, rc = "killed", -os.WTERMSIG(status)
    lines = [ln for ln in text.splitlines() if ln.strip() and "Warning" not in ln and not ln.startswith("  warnings.warn")]
    if outcome is None:
        if "Traceback" in text or rc == 99:
            outcome = "traceback"
        elif rc == 2 and (len(lines) == 1 or lines and lines[0].startswith("usage:") and "error:" in lines[-1]):
            outcome = "refused"  # one line, or argparse's own usage + error
        elif rc == 0:
            outcome = "ok"
        else:
            outcome = f"exit {rc}"
    leftover = []
    for _, k, path in outs:
        if os.path.isdir(path) and os.listdir(path):
            leftover += sorted(os.listdir(path))
        elif os.path.isfile(path):
            leftover.append(os.path.basename(path))
    results.append(dict(argv=[slug, name, *pos, flag, value], outcome=outcome, rc=rc,
                        seconds=round(elapsed, 1), stderr=text[-500:], out_left=leftover))
    shutil.rmtree(work, ignore_errors=True)  # the case's folder: nothing of the sweep stays in /tmp
print("SWEEP " + json.dumps(results))
'''


def sweep(slug: str, *, mem_gb: float, seconds: float, python: Path | None = None,
          env: dict[str, str] | None = None) -> list[dict]:
    python = python or ROOT / ".venvs" / slug / "bin" / "python"
    if not python.exists():
        return [dict(argv=[slug], outcome="no venv", rc=None, seconds=0, stderr=str(python), out_left=[])]
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg", "TQDM_DISABLE": "1", **(env or {})}
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([str(python), "-c", DRIVER, slug, str(mem_gb), str(seconds)], cwd=cwd, env=env,
                              capture_output=True, text=True, check=False)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SWEEP ")]
    if not line:
        return [dict(argv=[slug], outcome="driver failed", rc=proc.returncode, seconds=0,
                     stderr=proc.stderr[-800:], out_left=[])]
    return json.loads(line[-1].removeprefix("SWEEP "))


def main(argv: list[str] | None = None) -> int:
    from input_sweep import sweep_arguments, table  # noqa: PLC0415 - the sibling script (ci/ is on sys.path)

    args, slugs = sweep_arguments(argv, __doc__, 20.0)
    t0 = time.perf_counter()
    everything, bad, per = [], 0, {}
    for slug in slugs:
        rows = sweep(slug, mem_gb=args.mem_gb, seconds=args.seconds)
        everything += rows
        cells = per.setdefault(slug, {})
        for r in rows:
            if r["outcome"] == "started" and (r["argv"][0], r["argv"][-2]) in CLIPPED:
                r["outcome"] = "clipped"
            is_bad = r["outcome"] not in ("refused", "ok", "clipped") and not (
                r["outcome"] == "started" and r["argv"][-1] in ("0", "nan"))
            r["defect"] = bool(is_bad or r["out_left"] and r["outcome"] != "ok")
            value = r["argv"][-1] if len(r["argv"]) > 2 else "setup"
            cell = cells.setdefault({"1000000000000": "size 10^12", "0": "size 0", "nan": "size NaN"}.get(
                value, "setup"), [0, 0])
            cell[0] += 1
            cell[1] += r["defect"]
            if r["defect"]:
                bad += 1
                print(f"{r['outcome']:>10} {r['seconds']:5.1f}s  iclr25 {' '.join(r['argv'])}"
                      f"{'  (left ' + str(r['out_left']) + ')' if r['out_left'] else ''}  {r['stderr'][-160:]!r}",
                      flush=True)
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        print(f"== {slug}: {len(rows)} cases {counts}", flush=True)
    print("\ncases/defects per package and value:")
    print(table(per, slugs, ("size 10^12", "size 0", "size NaN", "setup")))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(dict(counts=per, cases=everything), indent=1))
    print(f"size sweep: {len(everything)} cases, {bad} defect(s), {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
