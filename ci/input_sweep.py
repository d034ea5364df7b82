#!/usr/bin/env python3
"""The bad-input and data-loss sweep (issues 40 and 57), across every package in one run (the size sweep's
sibling: ``ci/size_sweep.py`` covers 10^12 / 0 / NaN sizes).

Each case runs ``iclr25.<pkg>.cli.main(argv)`` in a process forked from one that has imported only the package's
command-line module (memory limit ``--mem-gb``, time limit ``--seconds``), in a folder of its own; the files there
are compared before and after. The outputs of each command are the ones it declares with
``iclr25.utils.outputs.add_output`` (``declared_outputs``: ``--out``, ``--output``, ``--plan``, ``--json``,
``--transcript``, ... with their kind, suffixes, run files, defaults and sidecars); the commands that need input
files are the ``file_commands`` of the package's ``tests/test_conformance.py`` (their inputs hold garbage). The
categories:

- **files**: each ``file_commands`` line with its input missing, empty, garbage, or a folder: exit 2, one line
  naming the file, nothing written;
- **output=input**: every declared output of every command named as one of the command's inputs; **hard link**:
  as a hard link to the input (another name, the same inode): exit 2 before any work, one line naming the output's
  flag, every file byte for byte unchanged;
- **existing**: an existing output file of the user's, a folder holding a previous run (a ``run_files`` entry) and
  a file of the user's, the default output path (static or derived from an input) already there, and a sidecar
  already there, all without ``--overwrite``: refused in one line naming the flag, all kept byte for byte;
- **read-only**: the output below a regular file, and below a read-only folder (run as uid 65534 when the sweep
  runs as root, where mode 0555 does not stop a write): refused within ``--refuse-seconds``, naming the flag,
  nothing written;
- **symlink**: a file output that is a symbolic link to a file of the user's (and, for a folder output, its run
  file a link): refused, the link and its target unchanged;
- **disk full**: one cheap command per package (``CHEAP``) that writes, with ``RLIMIT_FSIZE`` at
  ``--fsize`` bytes: a non-zero exit with one line naming the file ("File too large"), no traceback, no file left
  behind (a half-written output);
- **interrupted save**: for packages whose loaders verify a checkpoint manifest (``iclr25.utils.checkpoints``),
  each ``file_commands`` input without a suffix (a model or checkpoint folder) given as a folder with the parts the
  saving command writes and no manifest, and with a manifest whose part was changed after it (and mmed-rag's
  index folder so): one line, exit 2;
- **endpoint**: the commands that take ``--endpoint`` (``ENDPOINTS``) against local stubs on 127.0.0.1: one that
  answers 302 to another port (that port must never receive the ``Authorization`` header; the key appears in no
  message or file), and one that sends a byte every 0.3 s (the command ends within ``--timeout`` + slack, one
  line, no traceback);
- **traversal**: an index whose manifest names ``../outside/...`` (mmed-rag): refused in one line;
- **umbrella**: ``iclr25 demo pgw --out DIR`` and ``iclr25 claims pgw --out DIR`` with a README.md / claims.json
  of the user's there (also as symbolic links), and DIR below a file or a read-only folder (counted under
  existing, symlink and read-only; run when every package is swept, or with the slug ``umbrella``);
- **warnings**: under ``PYTHONWARNINGS=error``, each source file compiles, the package's ``--help``, every
  command's ``--help`` and the cheap command run without a traceback;
- **internal names**, on every message of the cases above: a message must speak the command line's language,
  not the code's (``Foo.__init__() got an unexpected keyword``, ``np.int64(49)``, ``allow_pickle``, a traceback).

Usage: ``python3 ci/input_sweep.py [SLUG ...] [--json OUT.json]`` (each package's venv in ``.venvs/<slug>``).
Prints one line per defect, a table of cases and defects per category and package; exit 1 when there is any
defect.
"""

from __future__ import annotations

import argparse
import ast
import http.server
import json
import os
import re
import secrets
import shutil
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

from _sweep_driver import RUN_CASE

ROOT = Path(__file__).resolve().parents[1]
GARBAGE = b"\x89\x00\xffnot a data file\x1b[0m {[(<\n\xfe\xfd 1,2,x;;\n\x00\x00PK-not-a-zip\n"
MINE = b"the user's own file: keep me\n"
KEY_ENV = "ICLR25_SWEEP_API_KEY"
NOBODY = 65534
CATEGORIES = ("files", "output=input", "hard link", "existing", "read-only", "symlink", "disk full",
              "interrupted save", "endpoint", "traversal", "warnings")
#: Option names that write, for packages that do not declare their outputs yet (utils < 0.8).
OUTPUT_FLAGS = ("--out", "--output", "--plan", "--json", "--transcript", "--save", "--figure", "--checkpoint-out")

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

#: One cheap command per package that writes a file (``{work}``: the case's folder; ``prep``: Python run with
#: numpy in the package's environment, in ``work``, to make its inputs). Used by "disk full" and "warnings".
CHEAP: dict[str, dict] = {
    "augood": dict(argv=["partition", "{work}/in/mols.csv", "--output", "{work}/out.csv"],
                   prep="open('in/mols.csv','w').write('smiles,y\\nCCO,1\\nCCN,0\\nCCC,1\\nCCCl,0\\nc1ccccc1,1\\n"
                        "CC(=O)O,0\\nCCOC,1\\nCCCN,0\\n')"),
    "bopito": dict(argv=["simulate", "prinz", "--n-traj", "2", "--n-frames", "5", "--steps-per-frame", "2",
                         "--out", "{work}/traj.npz"]),
    "cl-optimal-control": dict(argv=["solve", "--out", "{work}/out.json"]),
    "implicit-deform": dict(argv=["fit", "{work}/in/a.xyz", "{work}/in/b.xyz", "--preset", "test", "--iters-scale",
                                 "0.05", "--times", "0.5", "--out", "{work}/fit"],
                            prep="import numpy as np; r = np.random.default_rng(0); "
                                 "np.savetxt('in/a.xyz', r.normal(size=(64, 3))); "
                                 "np.savetxt('in/b.xyz', 1.2 * r.normal(size=(64, 3)))"),
    "knowledge-manipulation": dict(argv=["generate", "--n", "4", "--out", "{work}/people.jsonl"]),
    "llm-regret": dict(argv=["run", "--T", "5", "--seeds", "2", "--out", "{work}/out"]),
    "memno": dict(argv=["generate", "ks", "--out", "{work}/d.npz"]),
    "mmed-rag": dict(argv=["generate", "--out", "{work}/out", "--n-train", "8", "--n-db", "6", "--n-test", "3"]),
    "ms-gode": dict(argv=["simulate", "springs", "--out", "{work}/a.npz"]),
    "next-mol": dict(argv=["conformers", "{work}/in/m.smi", "--out", "{work}/o.sdf"],
                     prep="open('in/m.smi','w').write('CCO\\nCCN\\n')"),
    "overtraining": dict(argv=["simulate", "--out", "{work}/r.npz"]),
    "pgw": dict(argv=["pairwise", "{work}/in", "--out", "{work}/D.npy"],
                prep="import numpy as np; r = np.random.default_rng(0); "
                     "[np.save(f'in/{c}.npy', r.normal(size=(12, 2))) for c in 'abc']"),
    "piorf": dict(argv=["generate", "--out", "{work}/flow.npz"]),
    "rxnflow": dict(argv=["doctor", "--blocks", "{work}/in/blocks.smi", "--templates", "toy", "--json",
                          "{work}/doctor.json"],
                    prep="open('in/blocks.smi','w').write('CCO\\nCCN\\nc1ccccc1Br\\nOC(=O)CCl\\nNCCO\\n')"),
    "scalegun": dict(argv=["unlearn", "--graph", "{work}/in/g.txt", "--features", "{work}/in/X.npy", "--labels",
                           "{work}/in/y.npy", "--requests", "{work}/in/req.txt", "--out", "{work}/ledger.json"],
                     prep="import numpy as np; from iclr25.scalegun import datasets; "
                          "g = datasets.csbm(60, 200, 4, 3, seed=1); "
                          "open('in/g.txt', 'w').write(''.join(f'{u} {v}\\n' for u, v in g.edges)); "
                          "np.save('in/X.npy', g.X); np.save('in/y.npy', g.y); "
                          "open('in/req.txt', 'w').write('edge %d %d\\n' % tuple(g.edges[0]))"),
    "sdds": dict(argv=["train", "--config", "{work}/in/c.json", "--out", "{work}/ck"],
                 prep="import json; json.dump({'problem': {'kind': 'ising', 'L': 3}, 'sampler': {'n_epochs': 1, "
                      "'n_steps': 1, 'hidden': 4, 'n_layers': 1, 'n_samples': 4}}, open('in/c.json', 'w'))"),
    "teochat": dict(argv=["generate", "--n", "3", "--out", "{work}/d.npz"]),
    "v1-topology": dict(argv=["analyze", "{work}/in/map.npy", "--out", "{work}/g.json"],
                        prep="import numpy as np; r = np.random.default_rng(0); "
                             "np.save('in/map.npy', np.pi / 2 + np.angle(np.fft.ifft2(np.fft.fft2(r.normal(size=(48, 48)) + "
                             "1j * r.normal(size=(48, 48))) * (np.hypot(*np.meshgrid(np.fft.fftfreq(48), "
                             "np.fft.fftfreq(48))) < 0.15))) / 2)"),
    "weighted-lowrank": dict(argv=["fit", "{work}/in/M.npy", "--k", "2", "--out", "{work}/f.npz"],
                             prep="import numpy as np; np.save('in/M.npy', np.random.default_rng(0).random((8, 6)))"),
}

#: The commands that take ``--endpoint`` (``{url}``: the stub's base URL; ``{timeout}``; ``{shared}``: a folder
#: made once per package by ``setup``, a list of command lines; ``frames``: dated PNG frames in ``{shared}``).
ENDPOINTS: dict[str, dict] = {
    "llm-regret": dict(argv=["run", "--agent", "llm", "--endpoint", "{url}", "--model", "stub", "--api-key-env",
                             KEY_ENV, "--timeout", "{timeout}", "--T", "3", "--d", "2", "--out", "{work}/out"]),
    "teochat": dict(frames=True, argv=["chat", "--sequence", "{shared}/frames", "--question", "what changed?",
                                       "--endpoint", "{url}", "--endpoint-model", "stub", "--api-key-env", KEY_ENV,
                                       "--timeout", "{timeout}"]),
    "mmed-rag": dict(setup=[["generate", "--out", "{shared}/data", "--n-train", "8", "--n-db", "6", "--n-test",
                             "3"],
                            ["build-index", "{shared}/data", "--out", "{shared}/index", "--steps", "1",
                             "--router-steps", "1", "--backend", "numpy"]],
                     argv=["ask", "{shared}/data", "--index", "{index}", "--out", "{work}/out", "--endpoint",
                           "{url}", "--model", "stub", "--api-key-env", KEY_ENV, "--timeout", "{timeout}",
                           "--limit", "1"],
                     traversal="index",
                     # the output policy of ``ask`` on real inputs (copies of the set-up's data and index)
                     lines=[["ask", "{copy:data}", "--index", "{copy:index}", "--out", "{out}", "--endpoint",
                             "http://127.0.0.1:9/v1", "--model", "stub", "--timeout", "1"]]),
}

DRIVER = r'''
import argparse, importlib, io, json, os, resource, signal, sys, time, traceback, warnings
from pathlib import Path
''' + RUN_CASE + r'''
job = json.load(open(sys.argv[1]))
slug = job["slug"]
answer = {}
if job["mode"] == "warnings":
    bad = []
    for path in job.get("sources", []):
        try:
            text = open(path, encoding="utf-8").read()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                compile(text, path, "exec")
        except (SyntaxError, Warning) as exc:
            bad.append(f"{path}:{getattr(exc, 'lineno', '?')}: {type(exc).__name__}: {exc}")
    answer["compile"] = bad
try:
    cli = importlib.import_module(f"iclr25.{slug.replace('-', '_')}.cli")
except BaseException:
    answer["import_error"] = traceback.format_exc()[-1500:]
    print("SWEEP " + json.dumps(answer))
    sys.exit(0)

if job["mode"] == "describe":
    from iclr25.utils.cli import package_parser
    try:
        from iclr25.utils.outputs import declared_outputs
    except ImportError:  # utils < 0.8
        def declared_outputs(sp):
            return []
    for code, folder in job.get("preps", []):
        here = os.getcwd()
        os.chdir(folder)
        try:
            exec(code, {})
        except BaseException as exc:
            answer.setdefault("prep_errors", []).append(f"{folder}: {exc!r}")
        os.chdir(here)
    parser = package_parser(slug)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = {}
    for name, sp in subs.choices.items():
        specs = declared_outputs(sp)
        by_dest = {a.dest: a for a in sp._actions}
        outs = []
        for s in specs:
            a = by_dest.get(s.dest)
            sidecars = None
            if s.sidecars is not None:
                probe = Path(job["scratch"]) / ("probe" + (s.suffixes[0] if s.suffixes else ".dat"))
                try:
                    sidecars = [os.path.relpath(str(p), job["scratch"]) for p in s.sidecars(probe)]
                except BaseException as exc:
                    sidecars = []
            outs.append(dict(flag=s.flag, dest=s.dest, kind=s.kind, declared=True,
                             suffixes=list(s.suffixes) if s.suffixes else None, run_files=list(s.run_files),
                             required=bool(a is not None and a.required),
                             default=None if a is None or a.default is None else str(a.default),
                             callable_default=s.default is not None, sidecars=sidecars, resumes=s.resumes))
        declared = {s.dest for s in specs}
        for a in sp._actions:
            if a.dest not in declared and set(a.option_strings) & set(job["output_flags"]) \
                    and a.nargs in (None, "?") and not a.const:
                outs.append(dict(flag=max(a.option_strings, key=len), dest=a.dest, kind=None, declared=False,
                                 suffixes=None, run_files=["results.json"], required=bool(a.required),
                                 default=None if a.default is None else str(a.default), callable_default=False,
                                 sidecars=None, resumes=False))
        out_dests = {o["dest"] for o in outs}
        pos, needs_input = [], False
        for a in sp._actions:
            if a.option_strings:
                needs_input = needs_input or (a.required and a.dest not in out_dests)
            elif a.choices:
                pos.append(str(list(a.choices)[0]))
            elif a.nargs not in ("?", "*"):
                needs_input = True
        needs_input = needs_input or any(g.required for g in sp._mutually_exclusive_groups)
        commands[name] = dict(outputs=outs, pos=pos, needs_input=needs_input)
    answer["commands"] = commands
    # defaults derived from the other arguments (add_output(default=callable)): parsed from the command's
    # file_commands line (inputs written in scratch), or its bare line
    derived = []
    for name, info in commands.items():
        for o in info["outputs"]:
            if not o["callable_default"] or o["required"]:
                continue
            line = job.get("lines", {}).get(name) or (None if info["needs_input"] else [name, *info["pos"]])
            if line is None:
                continue
            argv = []
            for i, t in enumerate(line):
                if not (t == o["flag"] or (i and line[i - 1] == o["flag"]) or t.startswith(o["flag"] + "=")):
                    argv.append(t)
            value = None
            try:
                sys.stderr = io.StringIO()
                args = parser.parse_args(argv)
                spec = next(s for s in getattr(args, "_iclr25_outputs", ()) if s.dest == o["dest"])
                value = spec.default(args)
            except BaseException:
                pass
            finally:
                sys.stderr = sys.__stderr__
            derived.append([name, o["dest"], None if value is None else str(value)])
    answer["derived"] = derived
else:
    parser = None
    if any(c.get("refuse") for c in job["cases"]) and slug != "utils":
        from iclr25.utils.cli import package_parser
        parser = package_parser(slug)
    results = []
    for case in job["cases"]:
        parse_ok = None
        if case.get("refuse") and parser is not None:
            here = os.getcwd()
            try:
                os.chdir(case["work"])
                sys.stderr = io.StringIO()
                parser.parse_args(case["argv"])
                parse_ok = True
            except BaseException:
                parse_ok = False
            finally:
                sys.stderr = sys.__stderr__
                os.chdir(here)
        status, elapsed, text, t_end = run_case(cli, case["argv"], case["work"], job["mem_gb"],
                                                case.get("seconds") or job["seconds"], fsize=case.get("fsize"),
                                                uid=case.get("uid"), env=case.get("env"))
        results.append(dict(rc=describe_rc(status), seconds=round(elapsed, 2), t_end=t_end, stderr=text[-2000:],
                            parse_ok=parse_ok))
    answer["results"] = results
print("SWEEP " + json.dumps(answer))
'''


# ---------------------------------------------------------------------------------------------------------------
# helpers

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


def _snapshot(root: Path) -> dict[str, object]:
    """Every file (its bytes), folder and symbolic link (its target) below ``root``."""
    snap: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        if p.is_symlink():
            snap[key] = ("link", os.readlink(p))
        elif p.is_dir():
            snap[key] = ("dir",)
        elif p.is_file():
            try:
                snap[key] = p.read_bytes()
            except OSError:
                snap[key] = ("unreadable",)
    return snap


def _driver(python: Path, job: dict, env: dict[str, str]) -> dict | None:
    with tempfile.TemporaryDirectory(prefix="sweep-job-") as tmp:
        spec = Path(tmp) / "job.json"
        spec.write_text(json.dumps(job))
        proc = subprocess.run([str(python), "-c", DRIVER, str(spec)], cwd=tmp, env=env, capture_output=True,
                              text=True, check=False)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SWEEP ")]
    if not line:
        print(f"driver failed for {job['slug']} ({job['mode']}): {proc.stderr[-800:]}", flush=True)
        return None
    return json.loads(line[-1].removeprefix("SWEEP "))


def _png(path: Path, seed: int) -> None:
    """A tiny RGB PNG (no dependency)."""
    w = h = 16
    rows = b"".join(b"\x00" + bytes(((x * 13 + y * 7 + seed * 50) % 256) for x in range(w) for _ in range(3))
                    for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# ---------------------------------------------------------------------------------------------------------------
# local endpoint stubs

class Stubs:
    """Three servers on 127.0.0.1: ``redirect`` answers 302 to ``sink``; ``sink`` records every request and
    answers a chat completion; ``drip`` sends a reply's headers and then one byte every 0.3 s. Each URL holds a
    case token (``/c<token>/v1``) so requests are told apart."""

    def __init__(self) -> None:
        self.seen: dict[str, list[dict]] = {}
        self.drip_accepts: dict[str, list[float]] = {}
        self.redirected: dict[str, list[str]] = {}
        stubs = self

        class Sink(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):  # noqa: ARG002
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n) if n else None
                token = self.path.split("/")[1] if self.path.count("/") > 1 else ""
                stubs.seen.setdefault(token, []).append(dict(server="sink", path=self.path,
                                                             auth=self.headers.get("Authorization")))
                body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Yes."}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET = _any

        class Redirect(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):  # noqa: ARG002
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n) if n else None
                token = self.path.split("/")[1] if self.path.count("/") > 1 else ""
                stubs.redirected.setdefault(token, []).append(self.path)
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{stubs.sink.server_address[1]}{self.path}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET = _any

        class Drip(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data and len(data) < 1 << 20:
                        more = self.request.recv(65536)
                        if not more:
                            break
                        data += more
                except OSError:
                    pass
                line = data.split(b"\r\n", 1)[0].decode("latin-1", "replace").split()
                path = line[1] if len(line) > 1 else ""
                token = path.split("/")[1] if path.count("/") > 1 else ""
                stubs.drip_accepts.setdefault(token, []).append(time.time())
                try:
                    self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                         b"Content-Length: 100000\r\n\r\n")
                    end = time.time() + 120
                    while time.time() < end:
                        self.request.sendall(b" ")
                        time.sleep(0.3)
                except OSError:
                    pass

        class Threading(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        class TCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.sink = Threading(("127.0.0.1", 0), Sink)
        self.redirect = Threading(("127.0.0.1", 0), Redirect)
        self.drip = TCP(("127.0.0.1", 0), Drip)
        for server in (self.sink, self.redirect, self.drip):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def url(self, which: str, token: str) -> str:
        server = getattr(self, which)
        return f"http://127.0.0.1:{server.server_address[1]}/{token}/v1"

    def close(self) -> None:
        for server in (self.sink, self.redirect, self.drip):
            server.shutdown()
            server.server_close()


# ---------------------------------------------------------------------------------------------------------------
# building the cases

def _instantiate(template: list[str], base: Path, shared: Path | None = None) -> tuple[list[str], list[Path]]:
    """The command line of ``template`` in ``base``: ``{file}`` an input made there, ``{out}`` an output, and
    ``{copy:NAME}`` a copy of ``shared/NAME`` (a real input made by a package's set-up lines)."""
    argv = [re.sub(r"\{copy:([^}]+)\}", lambda m: str(base / m.group(1)),
                   t.replace("{file}", str(base / "input")).replace("{out}", str(base / "out"))) for t in template]
    inputs = sorted({Path(t.split("=", 1)[-1]) for t, tt in zip(argv, template, strict=True)
                     if "{file}" in tt or "{copy:" in tt})
    for tt in template:
        for name in re.findall(r"\{copy:([^}]+)\}", tt):
            if shared is not None and (shared / name).exists() and not (base / name).exists():
                if (shared / name).is_dir():
                    shutil.copytree(shared / name, base / name)
                else:
                    shutil.copy2(shared / name, base / name)
    return argv, inputs


def _without(argv: list[str], flag: str) -> list[str]:
    out, skip = [], False
    for i, t in enumerate(argv):
        if skip:
            skip = False
            continue
        if t == flag and i + 1 < len(argv):
            skip = True
            continue
        if t.startswith(flag + "="):
            continue
        out.append(t)
    return out


def _value_of(template: list[str], flag: str) -> str | None:
    return template[template.index(flag) + 1] if flag in template and template.index(flag) + 1 < len(template) \
        else None


def _resolve_kind(spec: dict, template: list[str] | None) -> tuple[str, str]:
    """The output's kind and a suffix for a new name (declared, else guessed from the template or the flag)."""
    value = _value_of(template or [], spec["flag"])
    if spec["kind"]:
        kind = spec["kind"]
    elif value is not None:
        kind = "file" if Path(value.replace("{out}", "out")).suffix else "folder"
    else:
        kind = "folder" if spec["flag"] == "--out" and not Path(spec.get("default") or "").suffix else "file"
    if kind == "folder":
        return kind, ""
    if spec["suffixes"]:
        return kind, spec["suffixes"][0]
    if value is not None and Path(value.replace("{out}", "out")).suffix:
        return kind, Path(value.replace("{out}", "out")).suffix
    return kind, Path(spec.get("default") or "x.dat").suffix or ".dat"


class Builder:
    """Makes each case's folder and files under ``work``; ``cases`` collects them."""

    def __init__(self, work: Path, slug: str) -> None:
        self.work, self.slug, self.cases, self.n = work, slug, [], 0

    def folder(self, label: str) -> Path:
        self.n += 1
        base = self.work / f"c{self.n:03d}-{re.sub(r'[^a-z0-9]+', '-', label.lower())[:40]}"
        base.mkdir(parents=True)
        return base

    def add(self, cls: str, kind: str, base: Path, argv: list[str], template: list[str], **extra) -> dict:
        case = dict(cls=cls, kind=kind, work=str(base), argv=argv, template=template, **extra)
        self.cases.append(case)
        return case


def file_cases(b: Builder, templates: list[list[str]]) -> None:
    for template in templates:
        for kind in ("missing", "empty", "garbage", "folder"):
            base = b.folder(f"files-{kind}")
            argv, inputs = _instantiate(template, base)
            for f in inputs:
                if kind == "empty":
                    f.write_bytes(b"")
                elif kind == "garbage":
                    f.write_bytes(GARBAGE)
                elif kind == "folder":
                    f.mkdir()
            b.add("files", kind, base, argv, template, names=[f.name for f in inputs])


def _write_inputs(inputs: list[Path], folders: set[Path] = frozenset()) -> None:
    for f in inputs:
        if f in folders:
            f.mkdir(exist_ok=True)
            (f / "part.bin").write_bytes(GARBAGE)
        elif not f.exists():
            f.write_bytes(GARBAGE)


def _previous_run(folder: Path, run_files: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    first = folder / (run_files[0] if run_files else "results.json")
    first.parent.mkdir(parents=True, exist_ok=True)
    first.write_text('{"previous": "run"}')
    (folder / "mine.txt").write_bytes(MINE)


def output_cases(b: Builder, commands: dict, templates: list[list[str]], derived: dict, uncovered: list[str],
                 shared: Path | None = None) -> None:
    """The output-policy categories for every declared output of every command the sweep can reach."""
    first: dict[str, list[str]] = {}
    for t in templates:
        first.setdefault(t[0], t)
    root = os.geteuid() == 0
    for name, info in commands.items():
        if not info["outputs"]:
            continue
        template = first.get(name)
        if template is None and info["needs_input"]:
            uncovered.append(name)
            continue
        template = template or [name, *info["pos"]]
        for spec in info["outputs"]:
            kind, sfx = _resolve_kind(spec, template)
            flag = spec["flag"]
            check = dict(names=[flag], refuse=True)

            def line(base: Path, out: Path | None, spec=spec, template=template) -> tuple[list[str], list[Path]]:
                argv, inputs = _instantiate(_without(template, spec["flag"]), base, shared)
                for other in commands[template[0]]["outputs"]:  # other required outputs: fresh paths
                    if other["dest"] != spec["dest"] and other["required"] and other["flag"] not in argv:
                        _, osfx = _resolve_kind(other, template)
                        argv += [other["flag"], str(base / f"other-{other['dest']}{osfx}")]
                return argv + ([spec["flag"], str(out)] if out is not None else []), inputs

            # output = input, and a hard link to the input
            _, probe_inputs = _instantiate(template, b.work)
            for i in range(len(probe_inputs)):
                base = b.folder(f"oi-{name}-{flag}")
                _, inputs = _instantiate(template, base, shared)
                target = inputs[i]
                argv, _ = line(base, target)
                is_folder = kind == "folder" and not target.suffix
                _write_inputs(inputs, {target} if is_folder else set())
                b.add("output=input", f"{flag} = input {target.name}", base, argv, template, **check)
            if probe_inputs and kind == "file":
                base = b.folder(f"hl-{name}-{flag}")
                _, inputs = _instantiate(template, base, shared)
                _write_inputs(inputs)
                source = next((f for f in inputs if f.is_file()), None)
                if source is not None:
                    link = base / f"hardlink{sfx}"
                    os.link(source, link)
                    argv, _ = line(base, link)
                    b.add("hard link", f"{flag} = hard link to {source.name}", base, argv, template, **check)
            # existing file / previous run (a folder that resumes a previous run on purpose: only the other cases)
            base = b.folder(f"ex-{name}-{flag}") if not (kind == "folder" and spec["resumes"]) else None
            if base is not None and kind == "file":
                target = base / f"mine{sfx}"
                target.write_bytes(MINE)
                label = "existing file"
            elif base is not None:
                target = base / "previous"
                _previous_run(target, spec["run_files"])
                label = "previous run"
            if base is not None:
                argv, inputs = line(base, target)
                _write_inputs(inputs)
                b.add("existing", f"{flag} {label}", base, argv, template, **check)
            # the default output path already there
            default = None
            if not spec["required"] and spec["callable_default"]:
                rel = derived.get((name, spec["dest"]))
                default = None if rel is None or os.path.isabs(rel) else rel
            elif not spec["required"] and spec["default"] and not os.path.isabs(spec["default"]):
                default = spec["default"]
            if default and not (kind == "folder" and spec["resumes"]):
                base = b.folder(f"df-{name}-{flag}")
                target = base / default
                if kind == "file":
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not target.exists():
                        target.write_bytes(MINE)
                else:
                    _previous_run(target, spec["run_files"])
                argv, inputs = line(base, None)
                _write_inputs(inputs)
                b.add("existing", f"{flag} default {default} already there", base, argv, template, **check)
            # a sidecar already there
            if spec.get("sidecars"):
                base = b.folder(f"sc-{name}-{flag}")
                out = base / f"probe{sfx or '.dat'}"
                for side in spec["sidecars"]:
                    (base / side).parent.mkdir(parents=True, exist_ok=True)
                    (base / side).write_bytes(MINE)
                argv, inputs = line(base, out)
                _write_inputs(inputs)
                b.add("existing", f"{flag} sidecar {', '.join(spec['sidecars'])} already there", base, argv,
                      template, **check)
            # read-only parents
            base = b.folder(f"ro-{name}-{flag}")
            (base / "notes.txt").write_bytes(MINE)
            argv, inputs = line(base, base / "notes.txt" / "sub" / f"out{sfx}")
            _write_inputs(inputs)
            b.add("read-only", f"{flag} below a file", base, argv, template, **check)
            base = b.folder(f"ro2-{name}-{flag}")
            ro = base / "ro"
            ro.mkdir()
            argv, inputs = line(base, ro / "sub" / f"out{sfx}")
            _write_inputs(inputs)
            ro.chmod(0o555)
            if root:
                base.chmod(0o777)  # the command's other outputs stay writable for uid 65534; ro/ is not
            b.add("read-only", f"{flag} below a read-only folder", base, argv, template,
                  uid=NOBODY if root else None, **check)
            # symbolic links
            base = b.folder(f"sl-{name}-{flag}")
            (base / "mine").mkdir()
            (base / "mine" / f"target{sfx or '.txt'}").write_bytes(MINE)
            if kind == "file":
                link = base / f"link{sfx}"
                link.symlink_to(base / "mine" / f"target{sfx}")
                argv, inputs = line(base, link)
                label = "a symlink to a file of the user's"
            else:
                out = base / "outdir"
                out.mkdir()
                first_run = spec["run_files"][0] if spec["run_files"] else "results.json"
                (out / first_run).parent.mkdir(parents=True, exist_ok=True)
                (out / first_run).symlink_to(base / "mine" / "target.txt")
                argv, inputs = line(base, out)
                label = f"its {first_run} a symlink to a file of the user's"
            _write_inputs(inputs)
            b.add("symlink", f"{flag} {label}", base, argv, template, **check)


def interrupted_cases(b: Builder, slug: str, templates: list[list[str]], src: Path,
                      commands: dict) -> list[tuple[str, str]]:
    """Checkpoint folders without a manifest, and with a part changed after its manifest was written, for the
    packages whose sources call ``verify_manifest``: the parts are the ``run_files`` of a folder output that
    lists ``manifest.json`` (the command that saves the checkpoint); each ``file_commands`` input without a
    suffix (a model or checkpoint folder) gets them. Returns the ``prep`` steps (the manifest is written by
    ``iclr25.utils.checkpoints.write_manifest`` in the package's environment)."""
    if not any("verify_manifest" in p.read_text(encoding="utf-8", errors="replace") for p in src.rglob("*.py")):
        return []
    parts = next(([f for f in o["run_files"] if f != "manifest.json" and "/" not in f]
                  for info in commands.values() for o in info["outputs"]
                  if o["kind"] == "folder" and "manifest.json" in o["run_files"]), None)
    if not parts:
        return []
    preps, seen = [], set()
    for template in templates:
        for i, t in enumerate(template):
            if t != "{file}" or (template[0], i) in seen:
                continue
            seen.add((template[0], i))
            for kind in ("no manifest", "a part changed after the manifest"):
                base = b.folder(f"ck-{template[0]}")
                argv, inputs = _instantiate(template, base)
                ck = base / "input"
                ck.mkdir()
                for part in parts:
                    (ck / part).parent.mkdir(parents=True, exist_ok=True)
                    (ck / part).write_bytes(GARBAGE + part.encode())
                _write_inputs(inputs)
                if kind != "no manifest":
                    changed = next((x for x in parts if x != "results.json"), parts[0])
                    preps.append((f"from iclr25.utils.checkpoints import write_manifest\n"
                                  f"write_manifest('input', {parts!r})\n"
                                  f"open('input/{changed}', 'ab').write(b'from another save')\n", str(base)))
                flag = template[i - 1] if i and template[i - 1].startswith("--") else "folder"
                b.add("interrupted save", f"{template[0]} {flag}: {kind}", base, argv, template,
                      names=["manifest", "not whole", "saved with"])
    return preps


def cheap_cases(b: Builder, slug: str, fsize: int) -> list[tuple[str, str]]:
    """The disk-full case (its ``prep`` returned for the describe step)."""
    spec = CHEAP.get(slug)
    if not spec:
        return []
    base = b.folder("fsize")
    (base / "in").mkdir()
    argv = [a.replace("{work}", str(base)) for a in spec["argv"]]
    # caches the command writes on the way (JAX's compiled programs, matplotlib's fonts) go to a folder of the
    # case's own: a full disk must not leave truncated entries in the user's ~/.cache for the next run
    # (its JAX cache links to the user's entries: programs compiled before are read, new ones written here)
    caches = b.work.parent / "caches" / base.name
    (caches / "jax").mkdir(parents=True)
    user_jax = Path(os.environ.get(f"ICLR25_{slug.upper().replace('-', '_')}_JAX_CACHE")
                    or Path.home() / ".cache" / f"iclr25-{slug}" / "jax")
    if user_jax.is_dir():
        for entry in user_jax.iterdir():
            if entry.is_file():
                (caches / "jax" / entry.name).symlink_to(entry)
    env = {"JAX_COMPILATION_CACHE_DIR": str(caches / "jax"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
           "XDG_CACHE_HOME": str(caches),
           "MPLCONFIGDIR": str(caches / "matplotlib")}
    b.add("disk full", f"RLIMIT_FSIZE {fsize} B", base, argv, spec["argv"], fsize=fsize, seconds=60, env=env)
    return [(spec["prep"], str(base))] if spec.get("prep") else []


def warning_cheap_case(b: Builder, slug: str) -> list[tuple[str, str]]:
    """The cheap command under ``PYTHONWARNINGS=error`` (its ``prep`` returned for the describe step)."""
    spec = CHEAP.get(slug)
    if not spec:
        return []
    base = b.folder("warn-cheap")
    (base / "in").mkdir()
    argv = [a.replace("{work}", str(base)) for a in spec["argv"]]
    b.add("warnings", "cheap command", base, argv, spec["argv"], seconds=60)
    return [(spec["prep"], str(base))] if spec.get("prep") else []


def warning_help_cases(b: Builder, commands: dict) -> None:
    for argv in [["--help"], *[[name, "--help"] for name in commands]]:
        base = b.folder("warn-help")
        b.add("warnings", " ".join(argv), base, argv, argv, help=True)


def endpoint_cases(b: Builder, slug: str, shared: Path, stubs: Stubs, key: str, timeout: float,
                   seconds: float = 40.0) -> list[tuple[str, str]]:
    spec = ENDPOINTS.get(slug)
    if not spec or stubs is None:
        return []
    if spec.get("frames"):
        (shared / "frames").mkdir(exist_ok=True)
        for i, day in enumerate(("2021-06-30", "2022-06-30")):
            _png(shared / "frames" / f"{day}.png", i)
    env = {KEY_ENV: key}
    made, preps = [], []
    for kind, server in (("302 to another origin", "redirect"), ("drips a byte every 0.3 s", "drip")):
        base = b.folder(f"ep-{server}")
        token = f"c{secrets.token_hex(4)}"
        index = str(shared / "index")
        argv = [a.replace("{url}", stubs.url(server, token)).replace("{timeout}", f"{timeout:g}")
                .replace("{shared}", str(shared)).replace("{work}", str(base)).replace("{index}", index)
                for a in spec["argv"]]
        made.append(b.add("endpoint", kind, base, argv, spec["argv"], env=env, token=token, server=server,
                          timeout=timeout, seconds=seconds))
    if spec.get("traversal") == "index" and (shared / "index" / "manifest.json").exists():
        # the index folder is a checkpoint (iclr25.utils.checkpoints): a save cut short, parts of two saves
        for kind in ("no manifest", "a part changed after the manifest"):
            base = b.folder("ck-index")
            shutil.copytree(shared / "index", base / "idx")
            if kind == "no manifest":
                (base / "idx" / "manifest.json").unlink()
            else:
                part = base / "idx" / "config.json"
                if not part.exists():
                    part = next(q for q in sorted((base / "idx").rglob("*")) if q.is_file()
                                and q.name != "manifest.json")
                part.write_bytes(part.read_bytes() + b" ")
            token = f"c{secrets.token_hex(4)}"
            argv = [a.replace("{url}", stubs.url("sink", token)).replace("{timeout}", f"{timeout:g}")
                    .replace("{shared}", str(shared)).replace("{work}", str(base)).replace("{index}", str(base / "idx"))
                    for a in spec["argv"]]
            made.append(b.add("interrupted save", f"{spec['argv'][0]} --index: {kind}", base, argv, spec["argv"],
                              env=env, names=["manifest", "not whole", "saved with"], token=token))
    if spec.get("traversal") == "index" and (shared / "index" / "index" / "manifest.json").exists():
        base = b.folder("traversal")
        index = base / "idx"
        shutil.copytree(shared / "index", index)
        manifest_path = index / "index" / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        outside = base / "outside"
        outside.mkdir()
        moved = []

        def walk(node):
            if isinstance(node, dict):
                for k, v in node.items():
                    if isinstance(v, str) and (manifest_path.parent / v).is_file() and not moved:
                        shutil.copy(manifest_path.parent / v, outside / Path(v).name)
                        node[k] = os.path.relpath(outside / Path(v).name, manifest_path.parent)
                        moved.append(v)
                    else:
                        walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(manifest)
        manifest_path.write_text(json.dumps(manifest))
        if (index / "manifest.json").exists():
            preps.append(("import json\nfrom iclr25.utils.checkpoints import write_manifest\n"
                          "m = json.load(open('idx/manifest.json'))\nf = m.get('files', {})\n"
                          "names = sorted(f) if isinstance(f, dict) else [e['name'] for e in f]\n"
                          "write_manifest('idx', names, meta=m.get('meta'))\n", str(base)))
        token = f"c{secrets.token_hex(4)}"
        argv = [a.replace("{url}", stubs.url("sink", token)).replace("{timeout}", f"{timeout:g}")
                .replace("{shared}", str(shared)).replace("{work}", str(base)).replace("{index}", str(index))
                for a in spec["argv"]]
        made.append(b.add("traversal", f"index manifest names {os.path.relpath(outside, manifest_path.parent)}/"
                          f"{Path(moved[0]).name if moved else '?'}", base, argv, spec["argv"], env=env,
                          names=["outside its", "outside the", "not inside", "escapes"], token=token))
    return preps


def umbrella_cases(b: Builder, method: str = "pgw") -> None:
    """The umbrella ``iclr25 demo NAME --out DIR`` and ``iclr25 claims NAME --out DIR``: a README.md of the
    user's there, a claims.json there, a symlinked claims.json, and DIR below a file or a
    read-only folder: refused before work in one line naming --out, everything kept."""
    check = dict(names=["--out"], refuse=True)
    root = os.geteuid() == 0
    base = b.folder("umb-demo-readme")
    (base / "D").mkdir()
    (base / "D" / "README.md").write_bytes(MINE)
    b.add("existing", "demo --out holding a README.md of the user's", base, ["demo", method, "--out", str(base / "D")],
          ["demo", method], **check)
    base = b.folder("umb-claims")
    (base / "D").mkdir()
    (base / "D" / "claims.json").write_bytes(MINE)
    b.add("existing", "claims --out holding claims.json", base, ["claims", method, "--out", str(base / "D")],
          ["claims", method], **check)
    for mode, name in (("--fresh", "claims-fresh.json"), ("--calibrate", "claims-calibration.json"),
                       ("--calibrate --rung repro --only x", "claims-calibration-repro.json")):
        base = b.folder(f"umb-claims{mode[1:].split()[0]}{'-repro' if 'repro' in mode else ''}")
        (base / "D").mkdir()
        (base / "D" / name).write_bytes(MINE)
        b.add("existing", f"claims {mode} --out holding {name}", base,
              ["claims", method, *mode.split(), "--out", str(base / "D")], ["claims", method], **check)
    base = b.folder("umb-claims-link")
    (base / "D").mkdir()
    (base / "mine.json").write_bytes(MINE)
    (base / "D" / "claims.json").symlink_to(base / "mine.json")
    b.add("symlink", "claims --out with claims.json a symlink to a file of the user's", base,
          ["claims", method, "--out", str(base / "D")], ["claims", method], **check)
    base = b.folder("umb-demo-readme-link")
    (base / "D").mkdir()
    (base / "mine.md").write_bytes(MINE)
    (base / "D" / "README.md").symlink_to(base / "mine.md")
    b.add("symlink", "demo --out with README.md a symlink to a file of the user's", base,
          ["demo", method, "--out", str(base / "D")], ["demo", method], **check)
    for command in ("demo", "claims"):
        base = b.folder(f"umb-{command}-file")
        (base / "notes.txt").write_bytes(MINE)
        b.add("read-only", f"{command} --out below a file", base,
              [command, method, "--out", str(base / "notes.txt" / "sub")], [command, method], **check)
        base = b.folder(f"umb-{command}-ro")
        (base / "ro").mkdir()
        (base / "ro").chmod(0o555)
        if root:
            base.chmod(0o777)
        b.add("read-only", f"{command} --out below a read-only folder", base,
              [command, method, "--out", str(base / "ro" / "sub")], [command, method],
              uid=NOBODY if root else None, **check)


def sweep_umbrella(*, mem_gb: float, seconds: float, refuse_s: float, python: Path | None = None) -> list[dict]:
    """The umbrella ``iclr25`` command's outputs (``demo``, ``claims``), run with pgw's environment (the umbrella
    is ``iclr25.utils.cli.main``; pgw the method it is asked about), else the dev environment ``.venv``."""
    python = python or next((q for q in (ROOT / ".venvs" / "pgw" / "bin" / "python", ROOT / ".venv" / "bin" / "python")
                             if q.exists()), ROOT / ".venvs" / "pgw" / "bin" / "python")
    if not python.exists():
        return [dict(slug="umbrella", cls="setup", kind="no venv", argv=[], problems=[f"no {python}"], rc=None)]
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg", "TQDM_DISABLE": "1"}
    env.pop("PYTHONWARNINGS", None)
    with tempfile.TemporaryDirectory(prefix="input-sweep-umbrella-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        b = Builder(work / "cases", "umbrella")
        umbrella_cases(b)
        before = {c["work"]: _snapshot(Path(c["work"])) for c in b.cases}
        res = _driver(python, dict(slug="utils", mode="run", mem_gb=mem_gb, seconds=seconds, cases=b.cases), env) or {}
        rows = []
        for case, r in zip(b.cases, res.get("results", []), strict=False):
            after = _snapshot(Path(case["work"]))
            for q in Path(case["work"]).rglob("*"):
                if q.is_dir() and not q.is_symlink():
                    q.chmod(0o755)
            rows.append(dict(slug="umbrella", cls=case["cls"], kind=case["kind"], argv=case["template"], rc=r["rc"],
                             seconds=r["seconds"], stderr=r["stderr"][-300:],
                             problems=judge(case, r, before[case["work"]], after, refuse_s=refuse_s)))
        if len(rows) < len(b.cases):
            rows.append(dict(slug="umbrella", cls="setup", kind="driver", argv=[], rc=None, seconds=0, stderr="",
                             problems=[f"the run driver answered {len(rows)} of {len(b.cases)} cases"]))
    return rows


# ---------------------------------------------------------------------------------------------------------------
# judging

def judge(case: dict, res: dict, before: dict, after: dict, *, refuse_s: float, key: str | None = None,
          stubs: Stubs | None = None) -> list[str]:
    """The defects of one case (empty when it behaved)."""
    cls = case["cls"]
    text = res["stderr"]
    lines = _messages(text)
    problems: list[str] = []
    rc = res["rc"]
    usage = bool(lines) and lines[0].startswith("usage:") and "error:" in lines[-1]
    one_line = len(lines) == 1 or usage
    if cls == "warnings":
        if rc == "started":
            return []  # the cheap command outlived the case's time: no verdict (the disk-full case times it)
        if "Traceback" in text or rc == 99 or isinstance(rc, str):
            problems.append(f"under PYTHONWARNINGS=error: exit {rc!r}, {(lines or ['?'])[-1][:200]}")
        elif rc != 0:
            problems.append(f"exit {rc!r} under PYTHONWARNINGS=error: {(lines or ['?'])[-1][:200]}")
        return problems
    if cls == "disk full":
        new_files = sorted(k for k, v in after.items() if k not in before and not (isinstance(v, tuple)
                                                                                   and v[0] == "dir"))
        if rc == "started":
            problems.append("still running at the time limit")
        elif rc == 0:
            full = [k for k in new_files if isinstance(after[k], bytes) and len(after[k]) >= case["fsize"]]
            if full:
                problems.append(f"exit 0 with a full disk (wrote {full[:3]}, cut at {case['fsize']} bytes)")
        else:
            if "Traceback" in text or rc == 99 or isinstance(rc, str):
                problems.append(f"exit {rc!r} with a traceback" if "Traceback" in text else f"exit {rc!r}")
            elif not lines or ": error:" not in lines[-1] or sum(": error:" in ln for ln in lines) != 1:
                problems.append(f"{len(lines)} lines on stderr, expected one error line")
            elif not re.search(r"too large|no space left", lines[-1], re.I):
                problems.append("the message does not say the disk is full (File too large)")
            elif not re.search(r"(/|\b[\w.-]+\.[a-z]{2,5}\b)", lines[-1]):
                problems.append("the message does not name the file")
            if new_files:
                problems.append(f"left {new_files[:4]} behind (half-written)")
        # (a library's warning on the way, e.g. JAX's about its compilation cache, is not the command's message)
        problems += [f"internal name ({why})" for why in _internal(lines[-1] if lines else "") if why != "a traceback"]
        return problems
    if cls == "endpoint":
        return _judge_endpoint(case, res, before, after, key, stubs, lines, one_line)
    # refusals: files, output policy, interrupted saves, traversal
    if rc != 2:
        problems.append(f"exit {rc!r}, expected 2")
    elif not one_line:
        problems.append(f"{len(lines)} lines on stderr, expected one")
    elif not any(n in lines[-1] for n in case["names"]) and not (case.get("refuse") and res.get("parse_ok") is False):
        # (an input read while parsing, refused before the output check can run, is refused before work too)
        problems.append(f"the message does not name {case['names'][0]}")
    if case.get("refuse") and rc == 2 and res["seconds"] > refuse_s:
        problems.append(f"refused only after {res['seconds']:.1f} s (after work)")
    problems += [f"internal name ({why})" for why in _internal(text)]
    lost = sorted(k for k in before if k not in after or before[k] != after[k])
    if lost:
        problems.append(f"DATA LOSS: {lost} deleted or changed")
    written = sorted(set(after) - set(before))
    if written:
        problems.append(f"wrote {written[:4]} on a refused run")
    if key and key in text:
        problems.append("KEY LEAK: the API key is in the message")
    return problems


def _judge_endpoint(case, res, before, after, key, stubs, lines, one_line) -> list[str]:
    problems = []
    rc, text = res["rc"], res["stderr"]
    if rc == "started":
        problems.append(f"still running after {res['seconds']:.0f} s (--timeout {case['timeout']:g})")
    elif "Traceback" in text or rc == 99 or isinstance(rc, str):
        problems.append(f"exit {rc!r} with a traceback" if "Traceback" in text else f"exit {rc!r}")
    elif rc != 0 and not one_line:
        problems.append(f"{len(lines)} lines on stderr, expected one")
    if key and key in text:
        problems.append("KEY LEAK: the API key is in the message")
    for k, v in after.items():
        if isinstance(v, bytes) and key and key.encode() in v:
            problems.append(f"KEY LEAK: the API key is in {k}")
    if stubs is not None and case["server"] == "redirect" and not stubs.redirected.get(case["token"]):
        problems.append("never reached the endpoint (case set-up?)")
    if stubs is not None and case["server"] == "redirect":
        for req in stubs.seen.get(case["token"], []):
            if req["auth"]:
                problems.append(f"KEY LEAK: the redirect's origin received Authorization ({req['path']})")
                break
    if stubs is not None and case["server"] == "drip":
        accepts = stubs.drip_accepts.get(case["token"], [])
        if not accepts:
            problems.append("never reached the endpoint (case set-up?)")
        elif rc != "started":
            took = res["t_end"] - accepts[0]
            if took > case["timeout"] + 4.0:
                problems.append(f"ended {took:.1f} s after its request, past --timeout {case['timeout']:g} + 4 s")
    return problems


# ---------------------------------------------------------------------------------------------------------------
# one package

def sweep(slug: str, *, mem_gb: float, seconds: float, python: Path | None = None, env: dict[str, str] | None = None,
          conformance: Path | None = None, src: Path | None = None, refuse_s: float = 8.0, fsize: int = 64,
          stubs: Stubs | None = None, timeout: float = 2.0, endpoint_seconds: float = 40.0) -> tuple[list[dict], dict]:
    """Every case of one package, each judged (``problems`` empty when it behaved), and notes (commands the sweep
    could not reach)."""
    python = python or ROOT / ".venvs" / slug / "bin" / "python"
    src = src or ROOT / "packages" / slug / "src"
    notes: dict = {"uncovered": [], "setup": []}
    if not python.exists():
        return [dict(slug=slug, cls="setup", kind="no venv", argv=[], problems=[f"no {python}"], rc=None)], notes
    env = {**os.environ, "ICLR25_QUIET": "1", "MPLBACKEND": "Agg", "TQDM_DISABLE": "1", **(env or {})}
    env.pop("PYTHONWARNINGS", None)
    key = f"sk-sweep-{secrets.token_hex(12)}"
    templates = file_commands(slug, conformance)
    with tempfile.TemporaryDirectory(prefix=f"input-sweep-{slug}-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        shared = work / "shared"
        shared.mkdir()
        scratch = work / "scratch"
        scratch.mkdir()
        b = Builder(work / "cases", slug)
        # the first file_commands line of each command, its inputs written in scratch (for derived defaults)
        lines = {}
        for t in templates:
            if t[0] not in lines:
                argv, inputs = _instantiate(t, scratch)
                _write_inputs(inputs)
                lines[t[0]] = argv
        preps = cheap_cases(b, slug, fsize)
        wb = Builder(work / "warn", slug)
        preps += warning_cheap_case(wb, slug)
        base_job = dict(slug=slug, mem_gb=mem_gb, seconds=seconds, output_flags=list(OUTPUT_FLAGS))
        desc = _driver(python, {**base_job, "mode": "describe", "scratch": str(scratch), "lines": lines,
                                "preps": preps}, env)
        if desc is None or "import_error" in desc:
            why = "driver failed" if desc is None else desc["import_error"].strip().splitlines()[-1]
            return [dict(slug=slug, cls="setup", kind="driver", argv=[], problems=[why], rc=None)], notes
        commands = desc["commands"]
        notes["setup"] += desc.get("prep_errors", [])
        derived = {}
        for name, dest, v in desc.get("derived", []):
            if v and Path(v).resolve().is_relative_to(scratch.resolve()):
                derived[(name, dest)] = os.path.relpath(Path(v).resolve(), scratch.resolve())
            elif v and not os.path.isabs(v):
                derived[(name, dest)] = v
        # set-up lines (made once per package, in shared/): inputs of the endpoint cases and of ``lines``
        spec = ENDPOINTS.get(slug) or {}
        setups = [[a.replace("{shared}", str(shared)) for a in argv] for argv in spec.get("setup", [])]
        if setups:
            res = _driver(python, {**base_job, "mode": "run", "seconds": 120,
                                   "cases": [dict(argv=a, work=str(shared)) for a in setups]}, env) or {}
            for argv, r in zip(setups, res.get("results", []), strict=False):
                if r["rc"] != 0:
                    notes["setup"].append(f"{' '.join(argv)}: exit {r['rc']} {r['stderr'][-300:]!r}")
        file_cases(b, templates)
        output_cases(b, commands, templates + spec.get("lines", []), derived, notes["uncovered"], shared)
        ck_preps = interrupted_cases(b, slug, templates, src, commands)
        if ck_preps:
            more = _driver(python, {**base_job, "mode": "describe", "scratch": str(scratch), "preps": ck_preps}, env)
            notes["setup"] += (more or {}).get("prep_errors", [])
        if spec and stubs is not None:
            ep_preps = endpoint_cases(b, slug, shared, stubs, key, timeout, endpoint_seconds)
            if ep_preps:
                more = _driver(python, {**base_job, "mode": "describe", "scratch": str(scratch), "preps": ep_preps},
                               env)
                notes["setup"] += (more or {}).get("prep_errors", [])
        run_cases = list(b.cases)
        before = {c["work"]: _snapshot(Path(c["work"])) for c in run_cases}
        results = (_driver(python, {**base_job, "mode": "run", "cases": run_cases}, env) or {}).get("results", [])
        # PYTHONWARNINGS=error: its own interpreter
        warning_help_cases(wb, commands)
        sources = sorted(str(p) for p in src.rglob("*.py")) if src.exists() else []
        wres = _driver(python, {**base_job, "mode": "warnings", "cases": wb.cases, "sources": sources},
                       {**env, "PYTHONWARNINGS": "error"}) or {}
        rows = []
        for case, res in zip(run_cases, results, strict=False):
            after = _snapshot(Path(case["work"]))
            if case.get("uid") is not None or "ro" in os.listdir(case["work"]):
                for p in Path(case["work"]).rglob("*"):
                    if p.is_dir() and not p.is_symlink():
                        p.chmod(0o755)
            rows.append(dict(slug=slug, cls=case["cls"], kind=case["kind"], argv=case["template"], rc=res["rc"],
                             seconds=res["seconds"], stderr=res["stderr"][-300:],
                             problems=judge(case, res, before[case["work"]], after, refuse_s=refuse_s, key=key,
                                            stubs=stubs),
                             parse_refused=bool(case.get("refuse") and res.get("parse_ok") is False)))
        if len(results) < len(run_cases):
            rows.append(dict(slug=slug, cls="setup", kind="driver", argv=[], rc=None, seconds=0, stderr="",
                             problems=[f"the run driver answered {len(results)} of {len(run_cases)} cases"]))
        if "import_error" in wres:
            rows.append(dict(slug=slug, cls="warnings", kind="import", argv=["import"], rc=None, seconds=0,
                             stderr=wres["import_error"][-300:],
                             problems=["the command line does not import under PYTHONWARNINGS=error: "
                                       + wres["import_error"].strip().splitlines()[-1][:200]]))
        for bad in wres.get("compile", []):
            rows.append(dict(slug=slug, cls="warnings", kind="compile", argv=["compile"], rc=None, seconds=0,
                             stderr="", problems=[f"a warning when compiled: {bad[-250:]}"]))
        if wres.get("compile") == [] and sources:
            rows.append(dict(slug=slug, cls="warnings", kind="compile", argv=["compile"], rc=None, seconds=0,
                             stderr="", problems=[]))
        for case, res in zip(wb.cases, wres.get("results", []), strict=False):
            rows.append(dict(slug=slug, cls="warnings", kind=case["kind"], argv=case["template"], rc=res["rc"],
                             seconds=res["seconds"], stderr=res["stderr"][-300:],
                             problems=judge(case, res, {}, {}, refuse_s=refuse_s)))
    return rows, notes


# ---------------------------------------------------------------------------------------------------------------
# the command line

def sweep_arguments(argv: list[str] | None, doc: str, seconds: float,
                    extra=None) -> tuple[argparse.Namespace, list[str]]:
    """The command line both sweeps share: slugs (default: every package), ``--json``, ``--mem-gb``, ``--seconds``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--json", type=Path, default=None, help="write the counts and every case here")
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--seconds", type=float, default=seconds, help="time limit of one case")
    if extra:
        extra(ap)
    args = ap.parse_args(argv)
    return args, args.slugs or sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())


def _extra(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--refuse-seconds", type=float, default=8.0,
                    help="a refusal later than this counts as after work (default 8)")
    ap.add_argument("--fsize", type=int, default=64, help="RLIMIT_FSIZE of the disk-full case, bytes (64)")
    ap.add_argument("--timeout", type=float, default=2.0, help="--timeout of the endpoint cases (2)")


def table(counts: dict[str, dict[str, list[int]]], slugs: list[str], categories=(*CATEGORIES, "setup")) -> str:
    """Cases/defects per package (rows) and category (columns), ``-`` where a package has no case."""
    cats = [c for c in categories if any(c in counts.get(s, {}) for s in slugs)]
    heads = [c.replace("output=input", "out=input").replace("interrupted save", "interrupt") for c in cats]
    width = max([10, *(len(h) + 1 for h in heads)])
    out = [f"{'package':<24}" + "".join(f"{h:>{width}}" for h in [*heads, "total"])]
    totals = {c: [0, 0] for c in cats}
    for s_ in slugs:
        row, n_all, d_all = [], 0, 0
        for c in cats:
            n, d = counts.get(s_, {}).get(c, [0, 0])
            totals[c][0] += n
            totals[c][1] += d
            n_all, d_all = n_all + n, d_all + d
            row.append(f"{n}/{d}" if n else "-")
        out.append(f"{s_:<24}" + "".join(f"{x:>{width}}" for x in [*row, f"{n_all}/{d_all}"]))
    cells = [f"{totals[c][0]}/{totals[c][1]}" for c in cats]
    grand = f"{sum(t[0] for t in totals.values())}/{sum(t[1] for t in totals.values())}"
    out.append(f"{'total':<24}" + "".join(f"{x:>{width}}" for x in [*cells, grand]))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args, slugs = sweep_arguments(argv, __doc__, 30.0, _extra)
    umbrella = not args.slugs or "umbrella" in slugs
    slugs = [s for s in slugs if s != "umbrella"]
    t0 = time.perf_counter()
    everything, counts, all_notes = [], {}, {}
    stubs = Stubs()
    try:
        for slug in slugs:
            ts = time.perf_counter()
            rows, notes = sweep(slug, mem_gb=args.mem_gb, seconds=args.seconds, refuse_s=args.refuse_seconds,
                                fsize=args.fsize, stubs=stubs, timeout=args.timeout)
            everything += rows
            all_notes[slug] = notes
            per: dict[str, list[int]] = {}
            for r in rows:
                cell = per.setdefault(r["cls"], [0, 0])
                cell[0] += 1
                cell[1] += bool(r["problems"])
                if r["problems"]:
                    print(f"  DEFECT {slug} [{r['cls']}] {r['kind']}: iclr25 {slug} {' '.join(r['argv'])}: "
                          f"{'; '.join(r['problems'])}  {r.get('stderr', '')[-160:]!r}", flush=True)
            counts[slug] = per
            extra = ""
            if notes["uncovered"]:
                extra += f"; not reached (need inputs, no file_commands line): {', '.join(notes['uncovered'])}"
            parsed = [r for r in rows if r.get("parse_refused") and not any(f in r.get("stderr", "")
                                                                            for f in OUTPUT_FLAGS)]
            if parsed:
                extra += (f"; {len(parsed)} output case(s) refused while parsing an input, before the output check "
                          f"could run ({', '.join(sorted({r['argv'][0] for r in parsed}))})")
            if notes["setup"]:
                extra += f"; set-up failed: {' | '.join(notes['setup'])[:300]}"
            print(f"== {slug}: {len(rows)} cases, {sum(bool(r['problems']) for r in rows)} defect(s) "
                  f"({time.perf_counter() - ts:.0f} s){extra}", flush=True)
        if umbrella:
            ts = time.perf_counter()
            rows = sweep_umbrella(mem_gb=args.mem_gb, seconds=args.seconds, refuse_s=args.refuse_seconds)
            everything += rows
            per = {}
            for r in rows:
                cell = per.setdefault(r["cls"], [0, 0])
                cell[0] += 1
                cell[1] += bool(r["problems"])
                if r["problems"]:
                    print(f"  DEFECT umbrella [{r['cls']}] {r['kind']}: iclr25 {' '.join(r['argv'])}: "
                          f"{'; '.join(r['problems'])}  {r.get('stderr', '')[-160:]!r}", flush=True)
            counts["umbrella"] = per
            slugs = [*slugs, "umbrella"]
            print(f"== umbrella (iclr25 demo/claims): {len(rows)} cases, {sum(bool(r['problems']) for r in rows)} "
                  f"defect(s) ({time.perf_counter() - ts:.0f} s)", flush=True)
    finally:
        stubs.close()
    bad = sum(bool(r["problems"]) for r in everything)
    print("\ncases/defects per package and category:")
    print(table(counts, slugs))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(dict(counts=counts, notes=all_notes, cases=everything), indent=1))
    print(f"input sweep: {len(everything)} cases, {bad} defect(s), {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
