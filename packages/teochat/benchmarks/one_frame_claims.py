"""The ladder and cause ablation of the one-frame claims (issue 60), generated from the repro rung's claims on the
balanced generator (the package's ``claims.json`` since 0.8, written by ``iclr25 claims teochat --rung repro``;
``--claims benchmarks/balanced-repro/record-claims.json`` reads the 0.8 record made before the specialist's fix, see
that folder's README) and ``benchmarks/multitask.json`` (the shipped multi-task checkpoint, scored on seed 0's
test split, the same split as the repro's seed 0): no training here.

    python benchmarks/one_frame_claims.py --out docs --overwrite

Writes ``one-frame-claims.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _outputs import add_out, parse_checked  # the sibling module (benchmarks/ is the script's folder)

from iclr25.utils.io import atomic_write

HERE = Path(__file__).resolve().parents[1]
CLAIMS = ("repro-loc-temporal-beats-one-frame", "repro-sre-temporal-beats-one-frame",
          "repro-tre-temporal-beats-one-frame", "repro-rtqa-temporal-beats-one-frame")
TASK = {"repro-loc-temporal-beats-one-frame": "loc", "repro-sre-temporal-beats-one-frame": "sre",
        "repro-tre-temporal-beats-one-frame": "tre", "repro-rtqa-temporal-beats-one-frame": "rtqa"}
REFS = ("question prior", "one frame (annotations)", "one frame (pixels)", "every building (no cap)",
        "every building (4-box cap)", "last-frame model")


def _f(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x:.3f}"


def table(claims: dict, multitask: dict | None, source: str = "claims.json") -> str:
    seeds = None
    lines = [f"# The one-frame claims: ladder and cause ablation (issue 60; generated from {source}, "
             f"`{claims['command']}`, iclr25-teochat {claims['version']}, and benchmarks/multitask.json by "
             "`python benchmarks/one_frame_claims.py --out docs --overwrite`; do not edit)", "",
             "Balanced generator (no first- or last-frame look marks a change more than half the time). Per claim "
             "and seed: TEOChat (500 steps, the repro's nine-task recipe) against each one-frame reference (rules "
             "chosen on the training split, reported on the test split; the last-frame model is told the frame "
             "count); the claim's reference is the strongest. Ladder: the same TEOChat run scored at 125 and 250 "
             "steps, and (seed 0 only, the same test split) the shipped multi-task checkpoint, which starts from "
             "the 5000-step localisation checkpoint. Ablation: the same TEOChat asked with the last frame only "
             "(told the frame count); where it scores as TEOChat does, TEOChat's answers do not use the earlier "
             "frames.", ""]
    by_id = {c["id"]: c for c in claims["claims"]}
    for cid in CLAIMS:
        c = by_id.get(cid)
        if c is None:
            continue
        seeds = c["seeds"]
        task = TASK[cid]
        lines += [f"## {cid} ({c['verdict']}, expected: {c['expect']})", "",
                  "| | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|---|" + "---|" * len(seeds)]
        ex = c["extra"]
        lines.append("| **TEOChat (500 steps)** | " + " | ".join(_f(v) for v in c["values"]) + " |")
        lines.append("| **strongest one-frame reference** | " + " | ".join(
            f"{_f(r)} ({max((k for k in REFS if k in e), key=lambda k: e[k])})" for r, e in
            zip(c["references"], ex, strict=True)) + " |")
        for k in REFS:
            if k in ex[0]:
                lines.append(f"| {k} | " + " | ".join(_f(e.get(k)) for e in ex) + " |")
        if "two-frame pixel difference" in ex[0]:
            lines.append("| two-frame pixel difference (not one frame) | "
                         + " | ".join(_f(e.get("two-frame pixel difference")) for e in ex) + " |")
        steps = sorted({int(k.split("_")[1]) for e in ex for k in e if k.startswith("teochat_")
                        and k.endswith("_steps")})
        for st in steps:
            lines.append(f"| ladder: TEOChat at {st} steps | "
                         + " | ".join(_f(e.get(f"teochat_{st}_steps")) for e in ex) + " |")
        if multitask is not None and seeds and seeds[0] == multitask["seed"]:
            for r in multitask["ladder"]:
                lines.append(f"| ladder: multi-task checkpoint, 5000 + {r['steps']} steps | "
                             + " | ".join([_f(r["scores"].get(task))] + ["-"] * (len(seeds) - 1)) + " |")
        lines.append("| ablation: TEOChat, last frame at test | "
                     + " | ".join(_f(e.get("teochat_last_frame_at_test")) for e in ex) + " |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=Path, default=HERE / "claims.json",
                    help="a repro-rung claims report (default: the package's claims.json)")
    ap.add_argument("--multitask", type=Path, default=HERE / "benchmarks" / "multitask.json")
    add_out(ap, "--out", "results/teochat-one-frame-claims", ("one-frame-claims.md",))
    args = parse_checked(ap)
    claims = json.loads(args.claims.read_text(encoding="utf-8"))
    mt = json.loads(args.multitask.read_text(encoding="utf-8")) if args.multitask.is_file() else None
    try:
        source = args.claims.resolve().relative_to(HERE).as_posix()
    except ValueError:
        source = args.claims.name
    text = table(claims, mt, source)
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "one-frame-claims.md") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
