"""ci/size_sweep.py on a toy package: a guarded size is refused, an unguarded one is caught starting a run."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import size_sweep  # noqa: E402

TOY_CLI = '''
import argparse, time
from iclr25.utils.cli import add_force_argument, add_run_command, method_parser, positive_int, run_main
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output


def guarded(args):
    check_size(f"--n {args.n}", seconds_needed=args.n * 1.0, force=args.force)


def unguarded(args):
    time.sleep(min(args.steps, 30))


def main(argv=None):
    parser, sub = method_parser("toy", "toy")
    g = add_run_command(sub, "demo", guarded, help="guarded", default_out="results/toy")
    g.add_argument("--n", type=positive_int("--n"), default=1)
    add_force_argument(g)
    u = sub.add_parser("run")
    u.add_argument("--steps", type=int, default=0)
    u.set_defaults(func=unguarded)
    p = sub.add_parser("plan")
    add_output(p, "--plan", kind="file", suffixes=(".npy",), required=True, help="the plan")
    p.add_argument("--n", type=positive_int("--n"), default=1)
    add_force_argument(p)
    p.set_defaults(func=guarded)
    f = sub.add_parser("fit")
    f.add_argument("data", type=Path)
    f.add_argument("--k", type=int, default=1)
    return run_main(parser, argv)
'''


def test_sweep_finds_the_unguarded_size_and_passes_the_guarded_one(tmp_path):
    mod = tmp_path / "iclr25" / "toy"
    mod.mkdir(parents=True)
    (mod / "__init__.py").write_text("")
    (mod / "cli.py").write_text("from pathlib import Path\n" + TOY_CLI)
    rows = size_sweep.sweep("toy", mem_gb=4, seconds=3, python=Path(sys.executable),
                            env={"PYTHONPATH": str(tmp_path)})
    got = {(r["argv"][1], r["argv"][2], r["argv"][3]): r["outcome"] for r in rows}
    assert got[("demo", "--n", "1000000000000")] == "refused", rows
    assert got[("demo", "--n", "0")] == "refused", rows
    assert got[("run", "--steps", "1000000000000")] == "started", rows
    assert got[("run", "--steps", "0")] == "ok", rows
    assert not any(k[0] == "fit" for k in got), "a command that needs an input file is not swept"
    # a required output other than --out (declared with add_output) gets a fresh path: the command is swept
    assert got[("plan", "--n", "1000000000000")] == "refused", rows
