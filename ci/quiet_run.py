#!/usr/bin/env python3
"""Run a command for a published measurement on a quiet machine.

Waits (up to ``--wait`` seconds, default 600) until the 1-minute load average is below ``--load`` (default 1.5),
runs the command, then prints one line with the date, the load before and after, the cores, the wall time, the
exit status and the command, the conditions a README quotes beside a timing. When the load does not drop in
time it runs anyway and says so in that line ("not quiet"), so such a number is not published as quiet.
``--log FILE`` appends the line, as JSON, to FILE as well. Standard library only.

Usage: ``python ci/quiet_run.py [--load 1.5] [--wait 600] [--log FILE] -- COMMAND ...``
(``make bench`` and ``make repro`` run through it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def load1() -> float:
    return os.getloadavg()[0]


def wait_quiet(max_load: float, wait_s: float, *, poll_s: float = 10.0) -> tuple[bool, float]:
    """Wait until the load is below ``max_load``; returns (quiet, seconds waited)."""
    t0 = time.monotonic()
    while load1() >= max_load:
        waited = time.monotonic() - t0
        if waited >= wait_s:
            return False, waited
        time.sleep(min(poll_s, max(wait_s - waited, 0.1)))
    return True, time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--load", type=float, default=float(os.environ.get("QUIET_LOAD", 1.5)))
    ap.add_argument("--wait", type=float, default=float(os.environ.get("QUIET_WAIT_S", 600)))
    ap.add_argument("--log", type=Path, default=None, help="append the conditions as a JSON line to this file")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("give the command to run after --")
    quiet, waited = wait_quiet(args.load, args.wait)
    before, start = load1(), time.perf_counter()
    rc = subprocess.run(cmd, check=False).returncode
    wall = time.perf_counter() - start
    rec = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%MZ"), "quiet": quiet, "waited_s": round(waited),
           "load_before": round(before, 2), "load_after": round(load1(), 2), "cores": os.cpu_count(),
           "wall_s": round(wall, 1), "exit": rc, "command": " ".join(cmd)}
    flag = "" if quiet else f" | NOT QUIET (load stayed >= {args.load} for {waited:.0f} s)"
    print(f"quiet-run: {rec['date']} | load {before:.2f} -> {rec['load_after']:.2f} | {rec['cores']} cores | "
          f"wall {wall:.1f} s | exit {rc}{flag} | {rec['command']}", file=sys.stderr)
    if args.log is not None:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        with args.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
