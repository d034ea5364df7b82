"""torchgfn's trajectory balance on the full (template × block) action space against this package's subsampled
TB, side by side: steps/s and peak memory at 10k and 50k blocks, the same synthetic MDP and the same policy
layers (see ``_peer_worker.py`` for both sides). Every point is a fresh process (peak RSS is per process);
the configurations alternate within each repeat so that drift of the machine hits all of them.

torchgfn 2.4.1 pins ``numpy<2``, so it runs in its own throwaway environment built by
``iclr25.utils.bench.peer_env`` (uv; torch is hard-linked from uv's cache), by default in the user's cache
folder (``iclr25.utils.bench.cache_dir``: ``$XDG_CACHE_HOME/iclr25/rxnflow-torchgfn``; ``--peer-env`` overrides
it; never inside the repository).

Run from a clone, on a quiet machine (``make bench PKG=rxnflow`` runs it through ``ci/quiet_run.py``)::

    python packages/rxnflow/benchmarks/torchgfn_peer.py --out results/rxnflow-bench

Writes ``OUT/torchgfn_peer.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from iclr25.utils.bench import cache_dir, peer_env
from iclr25.utils.io import atomic_write

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_peer_worker.py"
PEER_REQ = ["torchgfn==2.4.1", "numpy<2"]
CASES = {10000: 12, 50000: 6}  # blocks: timed steps (after 2 warm-up steps)
OURS_RHOS = (0.02, 0.1, 1.0)
REPEATS = 2


def _run(python: str, impl: str, n_blocks: int, rho: float, steps: int) -> dict:
    proc = subprocess.run([python, str(WORKER), impl, str(n_blocks), str(rho), str(steps)], capture_output=True,
                          text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} at {n_blocks} blocks failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/rxnflow-bench"),
                    help="folder for torchgfn_peer.json (created when missing; default: results/rxnflow-bench)")
    ap.add_argument("--peer-env", type=Path, default=None,
                    help="torchgfn's throwaway venv (default: $XDG_CACHE_HOME/iclr25/rxnflow-torchgfn)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "torchgfn_peer.json"
    peer_py = str(peer_env(args.peer_env or cache_dir("rxnflow-torchgfn"), PEER_REQ))
    configs = [("ours", sys.executable, rho) for rho in OURS_RHOS] + [("torchgfn", peer_py, 1.0)]
    raw = []
    for rep in range(REPEATS):
        for n_blocks, steps in CASES.items():
            order = configs if rep % 2 == 0 else configs[::-1]
            for impl, py, rho in order:
                r = _run(py, impl, n_blocks, rho, steps)
                r["repeat"] = rep
                raw.append(r)
                print(json.dumps(r), flush=True)
    digests = {(r["n_blocks"]): set() for r in raw}
    for r in raw:
        digests[r["n_blocks"]].add(r["problem"])
    if any(len(d) != 1 for d in digests.values()):
        raise RuntimeError(f"the two environments generated different problems: {digests}")
    rows = []
    for n_blocks in CASES:
        for impl, _, rho in configs:
            rs = [r for r in raw if r["n_blocks"] == n_blocks and r["impl"] == impl and r["rho"] == rho]
            rows.append({"impl": impl, "version": rs[0]["version"], "n_blocks": n_blocks, "rho": rho,
                         "s_per_step": statistics.median(r["s_per_step"] for r in rs),
                         "steps_per_s": 1.0 / statistics.median(r["s_per_step"] for r in rs),
                         "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                         "step_extra_rss_mb": max(r["step_extra_rss_mb"] for r in rs),
                         "n_policy_params": rs[0]["n_policy_params"], "torch": rs[0]["torch"],
                         "numpy": rs[0]["numpy"]})
    lines = ["| blocks | implementation | ρ | steps/s | s/step | peak RSS MB | RSS growth in the steps MB | speed-up vs torchgfn |",
             "|---|---|---|---|---|---|---|---|"]
    for n_blocks in CASES:
        peer = next(r for r in rows if r["n_blocks"] == n_blocks and r["impl"] == "torchgfn")
        for r in (x for x in rows if x["n_blocks"] == n_blocks):
            name = f"torchgfn {r['version']}" if r["impl"] == "torchgfn" else "rxnflow (ours)"
            lines.append(f"| {n_blocks:,} | {name} | {r['rho']:g} | {r['steps_per_s']:.2f} | {r['s_per_step']:.3f} | "
                         f"{r['peak_rss_mb']:.0f} | {r['step_extra_rss_mb']:.0f} | "
                         f"{peer['s_per_step'] / r['s_per_step']:.1f}× |")
    table = "\n".join(lines)
    with atomic_write(out) as f:
        json.dump({"rows": rows, "raw": raw, "table": table}, f, indent=1)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
