"""ci/input_sweep.py on toy packages: commands that declare their outputs with iclr25.utils.outputs.add_output and
use the shared endpoint client pass every category; a command that deletes its --out folder, one that writes over
its input, one that checks its output only after work, a writer that leaves a half-written file on a full disk,
an endpoint client that follows redirects with the key and waits per read, and a message in the code's language
are each caught."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import input_sweep  # noqa: E402

GOOD_CLI = '''
import json
from pathlib import Path
from iclr25.utils.cli import add_run_command, method_parser, run_main
from iclr25.utils.endpoint import ChatEndpoint, api_key_from_env
from iclr25.utils.io import atomic_write, read_npz
from iclr25.utils.outputs import add_output


def fit(args):
    read_npz(args.data)


def save(args):
    with atomic_write(args.out) as f:
        f.write("x" * 5000)


def ask(args):
    ep = ChatEndpoint(args.endpoint, "m", api_key=api_key_from_env(args.api_key_env), timeout=args.timeout,
                      retries=0)
    text = ep.complete([{"role": "user", "content": "hi"}])
    with atomic_write(args.out) as f:
        f.write(text)


def load(args):
    from iclr25.utils.checkpoints import verify_manifest
    verify_manifest(args.model, ["model.bin"])


def main(argv=None):
    parser, sub = method_parser("toygood", "toy")
    t = sub.add_parser("train")
    add_output(t, "--out", kind="folder", default="model", run_files=("model.bin", "manifest.json"), help="model")
    t.set_defaults(func=lambda a: None)
    ld = sub.add_parser("load")
    ld.add_argument("--model", type=Path, required=True)
    ld.set_defaults(func=load)
    add_run_command(sub, "demo", lambda a: None, help="guarded", default_out="results/toy")
    f = sub.add_parser("fit")
    f.add_argument("data", type=Path)
    add_output(f, "--out", kind="file", suffixes=(".npy",), required=True, help="matrix",
               sidecars=lambda p: [p.with_suffix(".names.txt")])
    f.set_defaults(func=fit)
    s = sub.add_parser("save")
    add_output(s, "--out", kind="file", default="saved.txt", help="a text file")
    s.set_defaults(func=save)
    a = sub.add_parser("ask")
    a.add_argument("--endpoint", default="http://127.0.0.1:9/v1")
    a.add_argument("--api-key-env")
    a.add_argument("--timeout", type=float, default=2.0)
    add_output(a, "--out", kind="file", required=True, help="the answer")
    a.set_defaults(func=ask)
    return run_main(parser, argv)
'''

BAD_CLI = '''
import json, shutil, time, urllib.request
from pathlib import Path
from iclr25.utils.cli import method_parser, run_main

NUMBER = "\\d+"  # the defect: an invalid escape sequence (a warning when compiled, an error under -W error)


def careless(args):
    if args.out.is_dir():
        shutil.rmtree(args.out)  # the defect: deletes what the user had
    raise ValueError("RetrievalConfig.__init__() got an unexpected keyword argument 'k'")


def clobber(args):
    Path(args.out).write_text("overwritten")  # the defect: --out is the input
    raise ValueError(f"{args.data}: not a table")


def slow(args):
    time.sleep(2.5)  # the defect: the work comes before the output check
    args.out.parent.mkdir(parents=True)


def save(args):
    with open(args.out, "w") as f:  # the defect: not atomic, a half-written file stays
        f.write("x" * 5000)


def ask(args):
    import os
    req = urllib.request.Request(args.endpoint + "/chat/completions", data=b"{}",
                                 headers={"Authorization": "Bearer " + os.environ[args.api_key_env]})
    with urllib.request.urlopen(req, timeout=args.timeout) as r:  # follows redirects, per-read timeout
        r.read()


def main(argv=None):
    parser, sub = method_parser("toybad", "toy")
    c = sub.add_parser("wipe")
    c.add_argument("--out", type=Path, default=Path("x"))
    c.set_defaults(func=careless)
    k = sub.add_parser("clobber")
    k.add_argument("data", type=Path)
    k.add_argument("--out", type=Path, required=True)
    k.set_defaults(func=clobber)
    w = sub.add_parser("slow")
    w.add_argument("--out", type=Path, required=True)
    w.set_defaults(func=slow)
    s = sub.add_parser("save")
    s.add_argument("--out", type=Path, default=Path("saved.txt"))
    s.set_defaults(func=save)
    a = sub.add_parser("ask")
    a.add_argument("--endpoint", required=True)
    a.add_argument("--api-key-env")
    a.add_argument("--timeout", type=float, default=2.0)
    a.add_argument("--out", type=Path, required=True)
    a.set_defaults(func=ask)
    return run_main(parser, argv)
'''

ASK = ["ask", "--endpoint", "{url}", "--api-key-env", input_sweep.KEY_ENV, "--timeout", "{timeout}", "--out",
       "{work}/answer.txt"]


def _toy(tmp_path, slug, source, conformance):
    mod = tmp_path / "iclr25" / slug
    mod.mkdir(parents=True)
    (mod / "__init__.py").write_text("")
    (mod / "cli.py").write_text(source)
    conf = tmp_path / f"conformance_{slug}.py"
    conf.write_text(f"FILE_COMMANDS = {conformance!r}\n")
    return mod, conf


def _sweep(tmp_path, slug, source, conformance, stubs):
    mod, conf = _toy(tmp_path, slug, source, conformance)
    rows, notes = input_sweep.sweep(slug, mem_gb=4, seconds=8, python=Path(sys.executable),
                                    env={"PYTHONPATH": str(tmp_path)}, conformance=conf, src=mod, refuse_s=1.5,
                                    stubs=stubs, timeout=1.0, endpoint_seconds=5)
    return rows, notes


def test_sweep_passes_declared_outputs_and_catches_each_defect(tmp_path, monkeypatch):
    monkeypatch.setitem(input_sweep.CHEAP, "toygood", dict(argv=["save", "--out", "{work}/saved.txt"]))
    monkeypatch.setitem(input_sweep.CHEAP, "toybad", dict(argv=["save", "--out", "{work}/saved.txt"]))
    monkeypatch.setitem(input_sweep.ENDPOINTS, "toygood", dict(argv=ASK))
    monkeypatch.setitem(input_sweep.ENDPOINTS, "toybad", dict(argv=ASK))
    stubs = input_sweep.Stubs()
    t0 = time.perf_counter()
    try:
        good, notes = _sweep(tmp_path, "toygood", GOOD_CLI, [["fit", "{file}.npz", "--out", "{out}.npy"],
                                                              ["load", "--model", "{file}"]], stubs)
        bad, _ = _sweep(tmp_path, "toybad", BAD_CLI, [["clobber", "{file}.csv", "--out", "{out}"]], stubs)
    finally:
        stubs.close()
    assert time.perf_counter() - t0 < 120
    defects = [(r["cls"], r["kind"], r["problems"]) for r in good if r["problems"]]
    assert defects == [], defects
    cls = {r["cls"] for r in good}
    assert {"files", "output=input", "hard link", "existing", "read-only", "symlink", "disk full", "endpoint",
            "warnings", "interrupted save"} <= cls, cls
    kinds = {(r["argv"][0], r["cls"], r["kind"]) for r in good}
    assert ("fit", "existing", "--out sidecar probe.names.txt already there") in kinds
    assert ("save", "existing", "--out default saved.txt already there") in kinds
    assert notes["uncovered"] == []

    by = {}
    for r in bad:
        by.setdefault((r["argv"][0] if r["argv"] else "", r["cls"], r["kind"]), []).extend(r["problems"])

    def problems(command, cls, kind_start):
        return [p for (c, k, kind), ps in by.items() if c == command and k == cls and kind.startswith(kind_start)
                for p in ps]

    wipe = problems("wipe", "existing", "--out previous run")
    assert any("DATA LOSS" in p for p in wipe) and any("internal name" in p for p in wipe), wipe
    assert any("DATA LOSS" in p for p in problems("clobber", "output=input", "--out = input"))
    assert any("after" in p or "exit 'started'" in p for p in problems("slow", "read-only", "--out below a read"))
    assert any("left" in p for p in problems("save", "disk full", "RLIMIT")), by
    assert any("KEY LEAK" in p for p in problems("ask", "endpoint", "302")), by
    assert any("--timeout" in p or "still running" in p for p in problems("ask", "endpoint", "drips")), by
    assert any("compiled" in p for p in problems("compile", "warnings", "compile")), by


def test_table_counts_cases_and_defects():
    text = input_sweep.table({"a": {"files": [3, 1]}, "b": {"files": [2, 0], "symlink": [1, 0]}}, ["a", "b"])
    lines = [ln.split() for ln in text.splitlines()]
    assert lines[0] == ["package", "files", "symlink", "total"]
    assert lines[1] == ["a", "3/1", "-", "3/1"]
    assert lines[2] == ["b", "2/0", "1/0", "3/0"]
    assert lines[3] == ["total", "5/1", "1/0", "6/1"]
