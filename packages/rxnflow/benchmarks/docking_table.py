"""The Evidence page's docking tables, generated from the committed claims reports of the ``docking`` rung
(``docs/docking/claims.json``: seeds 0-2; ``claims-calibration-docking.json``: seeds 100-102). Every number is
read from those files; nothing is typed by hand.

    python benchmarks/docking_table.py [--out DIR]   # prints the markdown (EVIDENCE.md, "Docking a real pocket");
                                                     # with --out also writes DIR/docking_tables.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
METHODS = [("rxnflow", "RxnFlow"), ("random", "random synthesis"), ("fragments", "fragment GA"),
           ("random_fragments", "random fragments (ablation)")]


def _f(v, nd=2):
    return "–" if v is None else f"{v:.{nd}f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="also write DIR/docking_tables.md")
    args = ap.parse_args(argv)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _tables()
    text = buf.getvalue()
    print(text, end="")
    if args.out is not None:
        from iclr25.utils.io import atomic_write

        args.out.mkdir(parents=True, exist_ok=True)
        with atomic_write(args.out / "docking_tables.md") as f:
            f.write(text)
    return 0


def _tables() -> None:
    rep = json.loads((HERE / "docs" / "docking" / "claims.json").read_text())
    claim = next(c for c in rep["claims"] if c["id"] == "docking-beats-baselines")
    cal = json.loads((HERE / "claims-calibration-docking.json").read_text())
    centry = next(c for c in cal["claims"] if c["id"] == "docking-beats-baselines")
    seeds, extras = claim["seeds"], claim.get("extra") or []
    from iclr25.rxnflow.claims import DOCKING

    budget, ladder = DOCKING["budget"], DOCKING["ladder"]
    print(f"`{rep['command']}` (iclr25-rxnflow {rep['version']}, {rep['created'][:10]}, load "
          f"{_f((rep.get('load_at_start') or [None])[0])} at start); verdict **{claim['verdict']}** "
          f"(expected: {claim['expect']}), rule {claim['rule']}, margin {claim['margin']}.\n")
    print(f"Per seed, first {budget} distinct molecules each method docked; top-10 diverse = mean Vina (kcal/mol) of "
          "the 10 best molecules with Tanimoto < 0.5 to each other; replay = fraction of those 10 whose route "
          "replays in RDKit; SA = RDKit's synthetic-accessibility score (1 easy ... 10 hard).\n")
    print("| seed | method | top-10 diverse Vina ↓ | diversity ↑ | replay ↑ | SA ↓ |")
    print("|---|---|---|---|---|---|")
    for s, ex in zip(seeds, extras, strict=True):
        for key, name in METHODS:
            print(f"| {s} | {name} | {_f(ex.get(f'{key}_top_k_vina_{budget}'))} | "
                  f"{_f(ex.get(f'{key}_diversity_{budget}'))} | {_f(ex.get(f'{key}_replay_{budget}'))} | "
                  f"{_f(ex.get(f'{key}_sa_{budget}'))} |")
    print("\nOracle-budget ladder (the same runs read at their first B calls), top-10 diverse Vina, mean over seeds "
          f"{', '.join(map(str, seeds))} (per seed):\n")
    print("| oracle calls B | " + " | ".join(n for _, n in METHODS) + " | RxnFlow − better baseline | fragment GA − "
          "random fragments |")
    print("|---|" + "---|" * (len(METHODS) + 2))
    for b in ladder:
        cells, mean = [], {}
        for key, _ in METHODS:
            vals = [ex.get(f"{key}_top_k_vina_{b}") for ex in extras]
            ok = [v for v in vals if v is not None]
            mean[key] = sum(ok) / len(ok) if ok else None
            cells.append(f"{_f(mean[key]) if ok else '–'} ({', '.join(_f(v) for v in vals)})")
        gap = [ex[f"rxnflow_top_k_vina_{b}"] - min(ex[f"random_top_k_vina_{b}"], ex[f"fragments_top_k_vina_{b}"])
               for ex in extras]
        ga = [ex[f"fragments_top_k_vina_{b}"] - ex[f"random_fragments_top_k_vina_{b}"] for ex in extras]
        cells.append(f"{_f(sum(gap) / len(gap))} ({', '.join(_f(v) for v in gap)})")
        cells.append(f"{_f(sum(ga) / len(ga))} ({', '.join(_f(v) for v in ga)})")
        print(f"| {b} | " + " | ".join(cells) + " |")
    cpu = [ex["cpu_s_per_call"] for ex in extras]
    med = [ex["cpu_s_per_call_median"] for ex in extras]
    calls = [int(ex["vina_calls"]) for ex in extras]
    print(f"\nVina oracle CPU time per call (exhaustiveness {DOCKING['exhaustiveness']}, one thread; embedding, meeko "
          f"and docking): mean {', '.join(_f(c) for c in cpu)} s, median {', '.join(_f(m) for m in med)} s at seeds "
          f"{', '.join(map(str, seeds))} ({', '.join(map(str, calls))} distinct molecules docked per seed, shared by "
          "the methods); the maps once per seed "
          f"{', '.join(_f(ex['maps_cpu_s']) for ex in extras)} s.\n")
    imps = centry.get("improvements") or []
    print(f"Calibration seeds {', '.join(map(str, centry['seeds']))} (`claims-calibration-docking.json`): RxnFlow "
          f"{', '.join(_f(v) for v in centry['values'])} against the better baseline "
          f"{', '.join(_f(v) for v in centry['references'])}; improvement {', '.join(_f(v) for v in imps)} "
          f"kcal/mol, max margin {_f(centry.get('max_margin'))} (margin {centry['margin']}).")


if __name__ == "__main__":
    raise SystemExit(main())
