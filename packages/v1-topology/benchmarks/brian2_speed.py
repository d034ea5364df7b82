"""Seconds per stimulus of our LIF simulation against brian2 re-simulating the same trained network on the same
stimuli, for the generated ``speed-table`` block of EVIDENCE.md (``make speed-tables``).

    python benchmarks/brian2_speed.py --out benchmarks      (writes benchmarks/brian2_speed.json; ~1-2 min CPU)

The network is the one ``repro`` hands to its brian2 section: the high-overlap (macaque preset, stride 1) 32×32
sheet trained on 8000 images at seed 0; the stimuli are the same 20 natural-image crops
(``default_rng([seed, 99])``). brian2 (numpy code generation) runs in its own environment (brian2 2.9 needs
numpy < 2.4): ``--peer-python``, else ``$ICLR25_V1_TOPOLOGY_BRIAN2_PYTHON``, else the package's gitignored
``.peer/brian2`` (built once by ``iclr25.v1_topology.experiments.build_peer_env``). The peer is one long-lived
process that builds its network once and then simulates the stimuli on request, so that the two sides can be
alternated.

Only the simulation is timed: ours, ``SESNN.simulate`` (drive, weight matrix and the time steps; all 20
stimuli in one batch, and one stimulus per call); brian2, ``Network.run`` of each stimulus (timed inside the
peer; the ``restore`` and the setting of the input between stimuli are not). Each side gets one untimed
warm-up, then ``--repeats`` rounds alternate the sides (the order rotates every round); a round's time per
stimulus is its total over the stimuli divided by their number, and the record holds the median of the
rounds. Every round's spike counts are compared with ours: the rows keep the Pearson r and the fraction of
identical counts. BLAS and OpenMP run on one thread on both sides.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from iclr25.utils.bench import benchmark_parser, speed_record, write_record  # noqa: E402
from iclr25.v1_topology.experiments import (  # noqa: E402
    BRIAN2_SCRIPT,
    build_peer_env,
    default_peer_python,
    train,
    write_brian2_inputs,
)
from iclr25.v1_topology.images import builtin_images  # noqa: E402
from iclr25.v1_topology.network import sample_patches  # noqa: E402
from iclr25.v1_topology.presets import preset_config  # noqa: E402

#: the peer: ``experiments.BRIAN2_SCRIPT``'s network built once and its stimulus loop run for each line "run" on
#: stdin, writing the counts to argv[2] and printing the seconds of each ``net.run`` as one JSON line
_HEAD = BRIAN2_SCRIPT[:BRIAN2_SCRIPT.index("counts, secs = [], []\n")]
_RUNS = BRIAN2_SCRIPT[len(_HEAD):BRIAN2_SCRIPT.index("print(json.dumps(", len(_HEAD))]
PEER = (_HEAD + 'print(json.dumps({"ready": True, "version": b2.__version__}), flush=True)\n'
        'for line in sys.stdin:\n    if line.strip() != "run":\n        break\n'
        + textwrap.indent(_RUNS, "    ") + '    print(json.dumps({"seconds": secs}), flush=True)\n')


class Peer:
    """The brian2 process: ``run()`` simulates every stimulus once and returns (seconds per run, counts)."""

    def __init__(self, python: str, src: Path, dst: Path) -> None:
        self.dst = dst
        self.proc = subprocess.Popen([python, "-c", PEER, str(src), str(dst)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=os.environ.copy())
        self.version = self._read()["version"]

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the brian2 peer stopped (exit {self.proc.wait()})")
        return json.loads(line)

    def run(self) -> tuple[list[float], np.ndarray]:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        secs = self._read()["seconds"]
        return secs, np.load(self.dst)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> None:
    ap = benchmark_parser(__doc__, out="benchmarks", raw=True)
    ap.add_argument("--repeats", type=int, default=7, help="alternated rounds per side (default 7, at least 3)")
    ap.add_argument("--n-stimuli", type=int, default=20, help="natural-image stimuli (default 20, as repro)")
    ap.add_argument("--n-samples", type=int, default=8000, help="training images (default 8000, as repro)")
    ap.add_argument("--n-side", type=int, default=32, help="E sheet side (default 32, as repro)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peer-python", default=None, help="the brian2 environment's python (default: "
                    "$ICLR25_V1_TOPOLOGY_BRIAN2_PYTHON, else .peer/brian2, built when missing)")
    args = ap.parse_args()
    if args.repeats < 3:
        ap.error(f"--repeats must be >= 3, got {args.repeats}")
    for name in ("n_stimuli", "n_samples", "n_side"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    out = args.out / "brian2_speed.json"
    if out.exists() and not out.is_file():
        ap.error(f"--out: {out} exists and is not a file")
    load_start = os.getloadavg()[0]
    t_all = time.perf_counter()
    python = args.peer_python or default_peer_python() or build_peer_env()

    cfg = preset_config("macaque", n_side=args.n_side)
    net = train(cfg, args.n_samples, seed=args.seed, desc=None).net
    x = sample_patches(builtin_images(f0=cfg.whiten_f0), cfg, args.n_stimuli, np.random.default_rng([args.seed, 99]))
    n = args.n_stimuli

    def ours_batched() -> np.ndarray:
        s = net.simulate(x)
        return np.concatenate([s.counts_e, s.counts_i], axis=1)

    def ours_single() -> np.ndarray:
        return np.concatenate([ours_batched_one(k) for k in range(n)])

    def ours_batched_one(k: int) -> np.ndarray:
        s = net.simulate(x[k:k + 1])
        return np.concatenate([s.counts_e, s.counts_i], axis=1)

    times: dict[str, list[float]] = {"batched": [], "single": [], "brian2": []}
    agree: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="v1t-brian2-bench-") as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npy"
        write_brian2_inputs(net, x, src)
        peer = Peer(python, src, dst)
        try:
            ours = ours_batched().astype(np.float64)  # untimed warm-ups, one per side
            if not np.array_equal(ours_single(), ours):
                raise RuntimeError("one stimulus per call gave other spike counts than the batch")
            peer.run()

            def timed(fn):
                t0 = time.perf_counter()
                fn()
                return time.perf_counter() - t0

            def peer_round() -> None:
                secs, counts = peer.run()
                times["brian2"].append(sum(secs) / n)
                c = counts.astype(np.float64)
                agree.append((float(np.corrcoef(ours.ravel(), c.ravel())[0, 1]), float(np.mean(ours == c))))

            sides = [("batched", lambda: times["batched"].append(timed(ours_batched) / n)),
                     ("single", lambda: times["single"].append(timed(ours_single) / n)),
                     ("brian2", peer_round)]
            for i in range(args.repeats):
                for _, fn in sides[i % 3:] + sides[:i % 3]:  # rotate which side goes first
                    fn()
        finally:
            peer.close()
    r_min = min(a[0] for a in agree)
    same_min = min(a[1] for a in agree)
    peer_s = statistics.median(times["brian2"])
    agreement = f"spike counts r = {r_min:.4f}, {100 * same_min:.1f} % identical"
    common = {"n_stimuli": n, "n_side": args.n_side, "n_train_images": args.n_samples, "seed": args.seed,
              "pearson_r_min": r_min, "identical_fraction_min": same_min,
              "pearson_r_per_round": [a[0] for a in agree], "identical_fraction_per_round": [a[1] for a in agree],
              "peer_s_per_round": times["brian2"], "brian2_version": peer.version}
    rows = [{"case": f"{args.n_side}×{args.n_side} sheet, {n} stimuli in one batch ({agreement})",
             "ours": "ours, batched", "ours_s": statistics.median(times["batched"]),
             "peer": f"brian2 {peer.version} (numpy target), one stimulus per run", "peer_s": peer_s,
             "ours_s_per_round": times["batched"], **common},
            {"case": f"{args.n_side}×{args.n_side} sheet, one stimulus per call ({agreement})",
             "ours": "ours, one stimulus per call", "ours_s": statistics.median(times["single"]),
             "peer": f"brian2 {peer.version} (numpy target), one stimulus per run", "peer_s": peer_s,
             "ours_s_per_round": times["single"], **common}]
    # the command as given, with this machine's absolute paths (an --out DIR, the peer's python) left out
    cmd = " ".join(["python benchmarks/brian2_speed.py", *("PATH" if a.startswith("/") else a for a in sys.argv[1:])])
    rec = speed_record(rows, command=cmd.strip(), repeats=args.repeats, note=(
        f"Seconds per stimulus of the simulation only, the same trained network ({args.n_samples} training images, "
        f"seed {args.seed}) and {n} natural-image stimuli on both sides; each side warmed up once, then {args.repeats} "
        "rounds alternated (rotating order); brian2 in its own process, timed inside it per `Network.run`; "
        "1 BLAS/OpenMP thread each."))
    rec["wall_s"] = time.perf_counter() - t_all
    write_record(out, rec, load_start=load_start)
    for r in rows:
        print(f"{r['ours']}: {r['ours_s']:.3g} s/stimulus | {r['peer']}: {r['peer_s']:.3g} s/stimulus | "
              f"{r['peer_s'] / r['ours_s']:.1f}x | {agreement}")
    print(f"wrote {out} (load {load_start:.2f} -> {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
