"""The rungs of the critical-Ising ladder that do not fit in the 10-minute ``repro``: L = 16 and fkl_nis with the
3-layer x 32-channel network (L = 6, 8); other rungs (e.g. ``8:diffuco:1x16``) through ``--runs``. Same protocol as ``repro`` (equal training samples,
250 epochs x 64 samples, 16 steps, spin-flip-symmetric network, 8192 samples per estimator, exact values from
Kaufman's formula); the README's "Ising ladder beyond the repro" table is its ``tables.md``.

    python benchmarks/ising_ladder.py --out results/sdds-ising-ladder [--runs 16:rkl_rl:1x16 16:autoregressive ...]

Each run is L:OBJECTIVE:LAYERSxCHANNELS, or L:autoregressive (the autoregressive baseline at equal samples and,
when rkl_rl runs on the same L, at equal wall time with it, plus single-spin Metropolis). ``--quick`` is a
seconds-long smoke test of the script.
"""

from __future__ import annotations

import argparse
import dataclasses

from iclr25.sdds.repro import ISING_HEADER, QUICK, ReproScale, ising_lattice, ising_verdict
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

DEFAULT_RUNS = ("16:rkl_rl:1x16", "16:fkl_nis:1x16", "16:autoregressive", "6:fkl_nis:3x32", "8:fkl_nis:3x32")
QUICK_RUNS = ("4:rkl_rl:1x8", "4:fkl_nis:2x8", "4:autoregressive")


def parse_runs(runs: list[str], parser: argparse.ArgumentParser) -> dict[int, tuple[list, bool]]:
    """{L: ([(objective, layers, channels)], with_autoregressive)} in the order given."""
    plan: dict[int, tuple[list, bool]] = {}
    for r in runs:
        try:
            parts = r.split(":")
            L = int(parts[0])
            samplers, ar = plan.setdefault(L, ([], False))
            if parts[1:] == ["autoregressive"]:
                plan[L] = (samplers, True)
                continue
            objective, shape = parts[1:]
            layers, channels = map(int, shape.split("x"))
            samplers.append((objective, layers, channels))
        except ValueError:
            parser.error(f"--runs: expected L:OBJECTIVE:LAYERSxCHANNELS or L:autoregressive, got {r!r}")
    return plan


def main() -> None:
    p = benchmark_parser(__doc__, out="results/sdds-ising-ladder", raw=True)
    p.add_argument("--runs", nargs="+", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="a seconds-long smoke test")
    args = p.parse_args()
    scale = QUICK if args.quick else ReproScale()
    plan = parse_runs(args.runs or list(QUICK_RUNS if args.quick else DEFAULT_RUNS), p)
    run = RunResult.start("iclr25-sdds", "benchmarks/ising_ladder.py", seed=args.seed,
                          config={"runs": args.runs or "default", "quick": args.quick, **dataclasses.asdict(scale)})
    rows: list[str] = []
    errors = {}
    for L, (samplers, ar) in plan.items():
        errors[L] = ising_lattice(run, rows, L, samplers, scale, args.seed, autoregressive=ar)
        print(rows[-1], flush=True)
    verdict = ising_verdict(run, errors)
    tables = "\n".join([ISING_HEADER, *rows, "", *[f"- {line}" for line in verdict], ""])
    run.notes = tables
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "tables.md") as f:
        f.write(tables)
    run.finish().save(args.out / "results.json")
    print(tables)


if __name__ == "__main__":
    main()
