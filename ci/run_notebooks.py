#!/usr/bin/env python3
"""Execute the notebooks in ``notebooks/`` on a real Jupyter kernel and keep them, with their outputs, for the
documentation site.

Notebooks are stored as jupytext percent scripts (``notebooks/*.py``: reviewable diffs). Each is converted to
a notebook, run cell by cell by ``nbclient`` on an ``ipykernel`` kernel of this interpreter (the notebooks
environment, which holds every package of the workspace), and written to ``build/notebooks/<name>.ipynb``.
A cell that raises fails the run (its traceback is printed); so does a run over ``--budget`` seconds in total.

Usage: ``.venvs/_notebooks/bin/python ci/run_notebooks.py [NAME ...] [--out build/notebooks]``
(``make notebooks``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def execute(script: Path, out_dir: Path, *, timeout: int, ipc_dir: str | None = None) -> tuple[Path, float]:
    """Run ``script`` on a fresh kernel; ``ipc_dir``: a folder of its own for the kernel's sockets (kernels started
    at the same time from one folder would otherwise race for the same socket names)."""
    import jupytext  # noqa: PLC0415 - the notebooks dependency group
    import nbformat  # noqa: PLC0415
    from jupyter_client.manager import KernelManager  # noqa: PLC0415
    from nbclient import NotebookClient  # noqa: PLC0415

    nb = jupytext.read(script)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3", transport="ipc")  # a local socket, not TCP on localhost
    if ipc_dir is not None:
        km.ip = str(Path(ipc_dir) / "kernel-ipc")
    client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    dt = time.perf_counter() - t0
    nb.metadata.setdefault("iclr25", {})["executed_seconds"] = round(dt, 2)
    out = out_dir / f"{script.stem}.ipynb"
    tmp = out.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)
    return out, dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="notebook names (default: every notebooks/*.py)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "notebooks")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    ap.add_argument("--budget", type=float, default=180.0,
                    help="seconds for all notebooks together; more fails the run (default 180)")
    args = ap.parse_args(argv)
    scripts = sorted((ROOT / "notebooks").glob("*.py"))
    if args.names:
        scripts = [s for s in scripts if s.stem in args.names]
        missing = set(args.names) - {s.stem for s in scripts}
        if missing:
            print(f"notebooks: no notebooks/{sorted(missing)[0]}.py", file=sys.stderr)
            return 2
    if not scripts:
        print("notebooks: none in notebooks/")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("ICLR25_QUIET", "1")
    from nbclient.exceptions import CellExecutionError  # noqa: PLC0415

    total, failed = 0.0, []
    for s in scripts:
        try:
            out, dt = execute(s, args.out, timeout=args.timeout)
        except CellExecutionError as exc:
            failed.append(s.name)
            print(f"notebooks: {s.relative_to(ROOT)} FAILED\n{exc}", file=sys.stderr)
            continue
        total += dt
        print(f"notebooks: {s.relative_to(ROOT)} ran in {dt:.1f} s -> {out.relative_to(ROOT)}")
    print(f"notebooks: {len(scripts) - len(failed)} of {len(scripts)} ran on a python3 kernel in {total:.1f} s "
          f"(budget {args.budget:.0f} s)")
    return verdict("notebooks", failed, total, args.budget)


def verdict(label: str, failed: list, total: float, budget: float) -> int:
    """The exit code of a run of kernels: 1 when any failed or all together ran over ``budget`` seconds."""
    if failed:
        return 1
    if total > budget:
        print(f"{label}: over the budget of {budget:.0f} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
