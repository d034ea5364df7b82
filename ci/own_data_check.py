#!/usr/bin/env python3
"""Run each package README's "Your own data" commands, verbatim, on files in exactly the paper datasets' formats
(issue 64): MeshGraphNets TFRecord (piorf), PDEBench HDF5 and FNO ``.mat`` (memno), an OGB folder and an Amazon
CSR ``.npz`` (scalegun), PNG/JPEG/TIFF, Olshausen's ``IMAGES.mat`` and a van Hateren ``.iml`` (v1-topology), and a
user's ``.npz`` (cl-optimal-control).

For each package it writes the fixture files under the names the README uses, into a fresh folder, with this
script's own writers (independent of the package's readers and tests: the layout is the published one), then runs
every command of the section's first ``bash`` block in that folder with the package's environment first on
``PATH``: ``pip install`` lines are skipped, comments and ``[optional]`` brackets dropped, nothing else changed.
A command that exits non-zero fails the check. It writes ``build/own-data/own-data.json`` (per command: exit
code, seconds, the last lines it printed) and the same as a Markdown table beside it (``own-data.md``).

Usage: ``python3 ci/own_data_check.py [SLUG ...] [--venvs .venvs] [--json PATH]`` (``make own-data-check``; after
``make test-packages`` built the environments with their extras).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each writer runs in the package's environment (numpy, h5py, scipy, Pillow as its extras provide), with the
# fixture folder as its working directory. The files are small: the check is about formats, not scale.
WRITERS = {
    "piorf": "",  # the README's first command writes the MeshGraphNets folder itself
    "memno": r'''
import h5py, numpy as np, scipy.io
rng = np.random.default_rng(0)
n, n_t, n_x = 8, 21, 64
x = (np.arange(n_x) + 0.5) / n_x
t = np.linspace(0, 2, n_t + 1)
u = np.stack([np.sin(2 * np.pi * (x[None] - 0.05 * k * np.arange(n_t)[:, None]) + rng.normal()) for k in range(n)])
with h5py.File("1D_Burgers_Sols_Nu0.01.hdf5", "w") as f:  # PDEBench 1-D: tensor (n, n_t, n_x)
    f["tensor"] = u.astype(np.float32)
    f["x-coordinate"] = x.astype(np.float32)
    f["t-coordinate"] = t.astype(np.float32)
with h5py.File("1D_CFD_Rand_Eta0.1_Zeta0.1_periodic_Train.hdf5", "w") as f:  # PDEBench 1-D CFD
    for k, s in (("density", 1.0), ("pressure", 0.5), ("Vx", 0.2)):
        f[k] = (1.0 + s * u).astype(np.float32)
    f["x-coordinate"] = x.astype(np.float32)
    f["t-coordinate"] = t.astype(np.float32)
# FNO-style .mat (MATLAB v5): a (n, n_x), u (n, n_x, T), t (1, T)
scipy.io.savemat("trajectories.mat", {"a": u[:, 0], "u": np.moveaxis(u[:, 1:], 1, 2), "t": t[None, 1:n_t]})
''',
    "scalegun": r'''
import gzip, os, numpy as np, scipy.sparse as sp
rng = np.random.default_rng(0)
def gz(path, arr, fmt):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        np.savetxt(f, np.asarray(arr), fmt=fmt, delimiter=",")
n, m, d = 400, 2000, 8  # ogbn layout: raw/*.csv.gz (directed edges), split/<scheme>/*.csv.gz
e = rng.integers(0, n, size=(m, 2)); e[0] = (0, 1)
gz("ogbn_arxiv/raw/edge.csv.gz", e, "%d")
gz("ogbn_arxiv/raw/num-node-list.csv.gz", [[n]], "%d")
gz("ogbn_arxiv/raw/num-edge-list.csv.gz", [[m]], "%d")
gz("ogbn_arxiv/raw/node-feat.csv.gz", rng.normal(size=(n, d)), "%.9g")
gz("ogbn_arxiv/raw/node-label.csv.gz", rng.integers(0, 5, size=(n, 1)), "%d")
perm = rng.permutation(n)
for name, ids in zip(("train", "valid", "test"), np.split(perm, [n // 2, 3 * n // 4])):
    gz(f"ogbn_arxiv/split/time/{name}.csv.gz", ids[:, None], "%d")
A = sp.random(n, n, density=0.01, format="csr", random_state=1); A.data[:] = 1.0  # Amazon CSR .npz
X = sp.random(n, d, density=0.3, format="csr", random_state=2)
np.savez("amazon_electronics_photo.npz", adj_data=A.data, adj_indices=A.indices, adj_indptr=A.indptr,
         adj_shape=np.array(A.shape), attr_data=X.data, attr_indices=X.indices, attr_indptr=X.indptr,
         attr_shape=np.array(X.shape), labels=rng.integers(0, 4, n),
         class_names=np.array(["a", "b", "c", "d"], dtype=object), idx_to_node=np.array({0: "x"}, dtype=object))
open("requests.txt", "w").write("edge 0 1\nfeature 1\n")
''',
    "v1-topology": r'''
import os, numpy as np, scipy.io
from PIL import Image
rng = np.random.default_rng(0)
scene = lambda h, w: np.cumsum(np.cumsum(rng.normal(size=(h, w)), 0), 1)  # smooth, 1/f-like
u8 = lambda a: ((a - a.min()) / (np.ptp(a) or 1) * 255).astype(np.uint8)
os.makedirs("my_photos", exist_ok=True)
Image.fromarray(np.stack([u8(scene(256, 256)) for _ in range(3)], -1)).save("my_photos/a.png")
Image.fromarray(u8(scene(256, 256))).save("my_photos/b.jpg", quality=95)
Image.fromarray(u8(scene(256, 256)).astype(np.uint16) * 257).save("my_photos/c.tif")
scipy.io.savemat("IMAGES.mat", {"IMAGES": np.stack([scene(256, 256) for _ in range(3)], -1)})  # (H, W, n)
(np.abs(scene(1024, 1536)) % 4096).astype(">u2").tofile("imk00001.iml")  # van Hateren: big-endian 1536 x 1024
''',
    "cl-optimal-control": r'''
import numpy as np
from sklearn.datasets import load_digits
X, y = load_digits(return_X_y=True)
test = np.random.default_rng(0).random(len(y)) < 0.3
np.savez("mine.npz", features=X, labels=y, task_a=np.arange(5), task_b=np.array([0, 1, 2, 8, 9]), test=test)
''',
}


def readme_commands(slug: str) -> list[str]:
    """The commands of the README's "Your own data" section (its first bash block), as a user would type them."""
    text = (ROOT / "packages" / slug / "README.md").read_text()
    sec = re.search(r"^## Your own data\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if sec is None:
        raise SystemExit(f"own-data check: packages/{slug}/README.md has no '## Your own data' section")
    block = re.search(r"```bash\n(.*?)```", sec.group(1), re.S)
    if block is None:
        raise SystemExit(f"own-data check: packages/{slug}/README.md's 'Your own data' has no bash block")
    cmds = []
    for line in block.group(1).splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("pip install"):
            continue
        if not line.startswith("python -c"):  # a '#' inside the quoted Python is not a comment
            line = line.split("  #", 1)[0].split(" # ", 1)[0].rstrip()
        line = re.sub(r"\s*\[--[^\]]*\]", "", line)  # [--optional args]
        cmds.append(line)
    return cmds


def check(slug: str, venvs: Path) -> list[dict]:
    env_bin = (venvs / slug / "bin").resolve()
    if not (env_bin / "python").exists():
        raise SystemExit(f"own-data check: no environment {venvs / slug}; run make test-packages first")
    env = {**os.environ, "PATH": f"{env_bin}{os.pathsep}{os.environ['PATH']}", "MPLBACKEND": "Agg",
           "ICLR25_NO_PROGRESS": "1", "OMP_NUM_THREADS": "2"}
    rows = []
    with tempfile.TemporaryDirectory(prefix=f"own-data-{slug}-") as d:
        if WRITERS[slug]:
            t0 = time.perf_counter()
            p = subprocess.run([str(env_bin / "python"), "-c", WRITERS[slug]], cwd=d, env=env, capture_output=True,
                               text=True, check=False)
            rows.append({"package": slug, "command": "(write the format fixture)", "rc": p.returncode,
                         "seconds": round(time.perf_counter() - t0, 1), "tail": (p.stdout + p.stderr)[-600:]})
            if p.returncode:
                return rows
        for cmd in readme_commands(slug):
            t0 = time.perf_counter()
            p = subprocess.run(cmd, shell=True, cwd=d, env=env, capture_output=True, text=True, check=False)
            out = (p.stdout + p.stderr).strip().splitlines()
            rows.append({"package": slug, "command": cmd, "rc": p.returncode,
                         "seconds": round(time.perf_counter() - t0, 1), "tail": "\n".join(out[-6:])})
            print(f"own-data check: {slug}: exit {p.returncode} in {rows[-1]['seconds']} s: {cmd}", flush=True)
            if p.returncode:
                print("    " + "\n    ".join(out[-8:]), file=sys.stderr)
        rows.append({"package": slug, "command": "(files written)", "rc": 0, "seconds": 0.0,
                     "tail": " ".join(sorted(str(q.relative_to(d)) for q in Path(d).rglob("*") if q.is_file()))[-1500:]})
    return rows


def markdown(rows: list[dict], commit: str) -> str:
    """The table for DATASETS.md: per README command, its exit code and seconds."""
    out = [f"| package | README command (on its format fixture, commit {commit}) | exit | seconds |", "|---|---|---|---|"]
    for r in rows:
        if r["command"].startswith("(files"):
            continue
        cmd = r["command"] if len(r["command"]) < 110 else r["command"][:107] + "..."
        out.append(f"| {r['package']} | `{cmd}` | {r['rc']} | {r['seconds']} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*", help=f"packages (default: {', '.join(WRITERS)})")
    ap.add_argument("--venvs", type=Path, default=ROOT / ".venvs", help="folder of the package environments")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "own-data" / "own-data.json")
    args = ap.parse_args(argv)
    bad = sorted(set(args.slugs) - set(WRITERS))
    if bad:
        print(f"own-data check: {bad[0]!r} is not one of {', '.join(WRITERS)}", file=sys.stderr)
        return 2
    rows: list[dict] = []
    for slug in args.slugs or list(WRITERS):
        rows += check(slug, args.venvs)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.json.with_suffix(".tmp")
    tmp.write_text(json.dumps({"commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "rows": rows}, indent=1))
    os.replace(tmp, args.json)
    md = args.json.with_suffix(".md")
    md.write_text(markdown(rows, commit))
    failed = [r for r in rows if r["rc"]]
    cmds = [r for r in rows if not r["command"].startswith("(")]
    print(f"own-data check: {len(cmds) - len(failed)} of {len(cmds)} README commands of "
          f"{len({r['package'] for r in rows})} packages ran on their format fixtures -> {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
