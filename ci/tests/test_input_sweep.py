"""ci/input_sweep.py on a toy package: the shared output policy passes; a command that deletes its --out folder,
one that writes over its input, and a message in the code's language are each caught."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import input_sweep  # noqa: E402

TOY_CLI = '''
import shutil
from pathlib import Path
from iclr25.utils.cli import add_run_command, method_parser, run_main
from iclr25.utils.io import read_npz


def good(args):
    read_npz(args.data)


def careless(args):
    if args.out.is_dir():
        shutil.rmtree(args.out)  # the defect: deletes what the user had
    raise ValueError("RetrievalConfig.__init__() got an unexpected keyword argument 'k'")


def clobber(args):
    Path(args.out).write_text("overwritten")  # the defect: --out is the input
    raise ValueError(f"{args.data}: not a table")


def main(argv=None):
    parser, sub = method_parser("toy", "toy")
    g = add_run_command(sub, "demo", lambda a: None, help="guarded", default_out="results/toy")
    f = sub.add_parser("fit")
    f.add_argument("data", type=Path)
    f.add_argument("--out", type=Path, required=True)
    f.set_defaults(func=good)
    c = sub.add_parser("wipe")
    c.add_argument("--out", type=Path, default=Path("x"))
    c.set_defaults(func=careless)
    k = sub.add_parser("clobber")
    k.add_argument("data", type=Path)
    k.add_argument("--out", type=Path, required=True)
    k.set_defaults(func=clobber)
    return run_main(parser, argv)
'''

CONFORMANCE = '''
FILE_COMMANDS = [["fit", "{file}.npz", "--out", "{out}"], ["clobber", "{file}.csv", "--out", "{out}"]]
'''


def test_sweep_passes_the_policy_and_catches_each_defect(tmp_path):
    mod = tmp_path / "iclr25" / "toy"
    mod.mkdir(parents=True)
    (mod / "__init__.py").write_text("")
    (mod / "cli.py").write_text(TOY_CLI)
    conformance = tmp_path / "test_conformance.py"
    conformance.write_text(CONFORMANCE)
    rows = input_sweep.sweep("toy", mem_gb=4, seconds=10, python=Path(sys.executable),
                             env={"PYTHONPATH": str(tmp_path)}, conformance=conformance)
    by = {(r["argv"][0], r["cls"], r["kind"]): r["problems"] for r in rows}
    for kind in ("missing", "empty", "garbage", "folder", "out=input"):
        cls = "out=input" if kind == "out=input" else "files"
        assert by[("fit", cls, kind)] == [], (kind, rows)
    for kind in ("existing file", "previous run", "below a file"):
        assert by[("demo", "out", kind)] == [], (kind, rows)
    wipe = by[("wipe", "out", "previous run")]
    assert any("DATA LOSS" in p for p in wipe) and any("internal name" in p for p in wipe), wipe
    assert any("DATA LOSS" in p for p in by[("clobber", "out=input", "out=input")])
