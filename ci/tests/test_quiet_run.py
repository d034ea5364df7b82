"""ci/quiet_run.py: waits for a quiet machine, runs, records the conditions, says when it was not quiet."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "quiet_run.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False)


def test_quiet_run_records_the_conditions_and_the_exit_status(tmp_path):
    log = tmp_path / "q.jsonl"
    proc = run("--load", "1000", "--wait", "0", "--log", str(log), "--", sys.executable, "-c", "raise SystemExit(3)")
    assert proc.returncode == 3
    assert "quiet-run: " in proc.stderr and "| exit 3 |" in proc.stderr and "NOT QUIET" not in proc.stderr
    rec = json.loads(log.read_text().splitlines()[-1])
    assert rec["quiet"] is True and rec["exit"] == 3 and rec["cores"] >= 1 and "raise SystemExit" in rec["command"]


def test_a_busy_machine_is_said_to_be_busy(tmp_path):
    proc = run("--load", "0", "--wait", "0", "--", sys.executable, "-c", "pass")
    assert proc.returncode == 0 and "NOT QUIET" in proc.stderr


def test_no_command_is_an_error():
    assert run("--").returncode == 2
