#!/usr/bin/env python3
"""Execute the example gallery: every ``packages/<slug>/examples/gallery/NN_<concept>.py`` on a real Jupyter
kernel, as ``ci/run_notebooks.py`` runs the notebooks, and keep each with its outputs for the site's Gallery.

An example is a jupytext percent script (it also runs as a plain script): one concept of one package on built-in
data, a few printed lines and one figure shown with ``iclr25.utils.plotting.show``. Here each runs with
``ICLR25_FIGURE_CHECK=strict`` (a figure without a title, axis labels or a colour bar where colour carries a value
fails it), one thread per kernel and two kernels at a time (the machine's two cores). It writes
``build/gallery/<slug>/<NN_concept>.ipynb``, the first figure as ``<NN_concept>.png`` (the gallery's thumbnail)
and ``build/gallery/gallery.json`` (per example: package, title, seconds). An example that raises, shows no
figure, prints nothing or runs over ``--limit`` seconds fails the run; so do all of them over ``--budget``.

Usage: ``.venvs/_notebooks/bin/python ci/run_gallery.py [SLUG ...] [--out build/gallery]`` (``make gallery``,
part of ``make docs``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {"MPLBACKEND": "Agg", "ICLR25_QUIET": "1", "ICLR25_FIGURE_CHECK": "strict", "OMP_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
       "TOKENIZERS_PARALLELISM": "false"}


def examples(slugs: list[str] | None = None) -> list[Path]:
    """The gallery's scripts, in package then file order."""
    found = sorted((ROOT / "packages").glob("*/examples/gallery/[0-9][0-9]_*.py"))
    return [p for p in found if not slugs or p.parents[2].name in slugs]


def title_of(script: Path) -> str:
    """The example's title: the first markdown heading of its first cell."""
    for line in script.read_text().splitlines():
        s = line.strip()
        if s.startswith("# # "):
            return s[4:].strip()
    return script.stem


def _run_one(script: str, out_dir: str, limit: int) -> dict:
    os.environ.update(ENV)
    from run_notebooks import execute  # noqa: PLC0415 - the notebooks environment

    path, out = Path(script), Path(out_dir)
    slug = path.parents[2].name
    rec = {"package": slug, "name": path.stem, "title": title_of(path),
           "script": str(path.relative_to(ROOT)), "notebook": f"{slug}/{path.stem}.ipynb"}
    dest = out / slug
    dest.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="gallery-kernel-") as ipc:
            nb_path, dt = execute(path, dest, timeout=limit, ipc_dir=ipc)
    except Exception as exc:  # noqa: BLE001 - reported, the run fails
        rec.update(seconds=round(time.perf_counter() - t0, 2), error=f"{type(exc).__name__}: {exc}"[-3000:])
        return rec
    rec["seconds"] = round(dt, 2)
    nb = json.loads(nb_path.read_text())
    outs = [o for c in nb["cells"] if c.get("cell_type") == "code" for o in c.get("outputs", [])]
    pngs = [o["data"]["image/png"] for o in outs if "image/png" in o.get("data", {})]
    printed = [o for o in outs if o.get("output_type") == "stream" and "".join(o.get("text", "")).strip()]
    if not pngs:
        rec["error"] = "shows no figure (iclr25.utils.plotting.show(fig))"
    elif not printed:
        rec["error"] = "prints nothing"
    elif dt > limit:
        rec["error"] = f"ran {dt:.1f} s, over the limit of {limit} s"
    else:
        png = pngs[0] if isinstance(pngs[0], str) else "".join(pngs[0])
        (dest / f"{path.stem}.png").write_bytes(base64.b64decode(png))
        rec["thumbnail"] = f"{slug}/{path.stem}.png"
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*", help="packages (default: every package with examples/gallery/)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "gallery")
    ap.add_argument("--limit", type=int, default=30, help="seconds per example (default 30, the issue's bound)")
    ap.add_argument("--budget", type=float, default=600.0,
                    help="seconds for all examples together, summed over the kernels; more fails (default 600)")
    ap.add_argument("--jobs", type=int, default=2, help="kernels at a time (default 2)")
    args = ap.parse_args(argv)
    known = {p.name for p in (ROOT / "packages").iterdir() if p.is_dir()}
    unknown = sorted(set(args.slugs) - known)
    if unknown:
        print(f"gallery: no package {unknown[0]!r} in packages/", file=sys.stderr)
        return 2
    scripts = examples(args.slugs or None)
    if not scripts:
        print("gallery: no packages/*/examples/gallery/NN_*.py")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "ci"))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = [pool.submit(_run_one, str(s), str(args.out), args.limit) for s in scripts]
        recs = []
        for f in futs:
            r = f.result()
            recs.append(r)
            status = f"FAILED: {r['error']}" if "error" in r else "ok"
            print(f"gallery: {r['script']} {r['seconds']:.1f} s {status}", file=sys.stderr if "error" in r else sys.stdout)
    total = sum(r["seconds"] for r in recs)
    wall = time.perf_counter() - t0
    index = {"examples": recs, "seconds": round(total, 1), "wall_seconds": round(wall, 1),
             "budget": args.budget, "limit": args.limit}
    tmp = args.out / "gallery.json.tmp"
    tmp.write_text(json.dumps(index, indent=1))
    os.replace(tmp, args.out / "gallery.json")
    failed = [r for r in recs if "error" in r]
    n_pkgs = len({r["package"] for r in recs})
    print(f"gallery: {len(recs) - len(failed)} of {len(recs)} examples of {n_pkgs} packages ran in {total:.1f} s "
          f"of kernel time ({wall:.1f} s wall, {args.jobs} at a time; budget {args.budget:.0f} s)")
    from run_notebooks import verdict  # noqa: PLC0415 - one rule for the notebooks and the gallery

    return verdict("gallery", failed, total, args.budget)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "ci"))
    sys.exit(main())
