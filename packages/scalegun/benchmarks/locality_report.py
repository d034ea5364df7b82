"""The Markdown tables of EVIDENCE.md's "5,000-edge batch on citation-like graphs" section, printed from the
committed JSON files (no number typed by hand; the speed ratios themselves are in the generated speed-table block
of ``benchmarks/locality-speed.json``):

    python benchmarks/locality_report.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE.parent


def main() -> None:
    import argparse
    import contextlib
    import io

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="also write the tables to OUT/locality-report.md")
    args = ap.parse_args()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _print_tables()
    print(buf.getvalue(), end="")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "locality-report.md").write_text(buf.getvalue(), encoding="utf-8")


def _print_tables() -> None:
    lad = json.loads((HERE / "locality-ladder-2026-12-05.json").read_text())
    gen = lad["generator"]
    a = gen["arxiv"]
    print(f"Generator at {gen['edges']:,} edges ({gen['nodes']:,} nodes): mean degree {gen['mean_degree']:.2f} "
          f"(arxiv {a['mean_degree']:.2f}), average clustering {gen['clustering_sampled_3000']:.3f} over 3,000 "
          f"sampled nodes (arxiv ~{a['clustering']}), max degree {gen['max_degree']:,}.\n")
    rows = list(lad["cells"])
    for tag, path in (("25M rung of 0.6.0", HERE / "locality-25M-2026-12-06.json"),
                      ("decision", PKG / "docs/locality/claims.json")):
        rep = json.loads(path.read_text())
        claim = next(c for c in rep["claims"] if c["id"] == "batch-5000-faster-than-retraining-citation")
        for seed, ex in zip(claim["seeds"], claim["extra"], strict=True):
            rows.append({"edges": int(ex["edges"]), "nodes": int(ex["nodes"]), "seed": seed, "batch_s": ex["batch_s"],
                         "retrain_s": ex["retrain_s"], "N1_frac": ex["N1_frac"], "N2_frac": ex["N2_frac"],
                         "rows_changed_fraction": ex["rows_changed_fraction"], "budget_used": ex["budget_used"],
                         "rss_growth_bytes_per_edge": ex["rss_growth_bytes_per_edge"],
                         "peak_rss_bytes": ex["peak_rss_bytes"], "fit_s": ex["fit_s"], "tag": tag})
    print("| edges | nodes | seed | batch CPU s | retraining CPU s | log10(retrain / batch) | N1 / n | N2 / n "
          "| budget used | fit CPU s | peak RSS GB | RSS growth B / edge |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tag = f" ({r.get('tag', 'calibration')})"
        print(f"| {r['edges']:,} | {r['nodes']:,} | {r['seed']}{tag} | {r['batch_s']:.2f} | {r['retrain_s']:.2f} | "
              f"{math.log10(r['retrain_s'] / r['batch_s']):.3f} | {r['N1_frac']:.3f} | {r['N2_frac']:.4f} | "
              f"{r['budget_used']:.4f} | {r['fit_s']:.1f} | {r['peak_rss_bytes'] / 1e9:.2f} | "
              f"{r['rss_growth_bytes_per_edge']:.0f} |")
    dec = [r for r in rows if r.get("tag") == "decision"]
    worst = max(r["rss_growth_bytes_per_edge"] for r in dec)
    start = max(r["peak_rss_bytes"] - r["rss_growth_bytes_per_edge"] * r["edges"] for r in dec)
    print(f"\nLargest size: the decision seeds' worst growth {worst:.0f} B/edge on a start of {start / 1e9:.2f} GB "
          f"predicts {(9 * 2**30 - start) / worst / 1e6:.0f}M edges in 9 GiB and "
          f"{(24 * 2**30 - 2e9 - start) / worst / 1e6:.0f}M edges in 24 GiB less 2 GB kept free; the decision seeds ran at "
          f"{min(r['edges'] for r in dec) / 1e6:.0f}M edges with a peak RSS of "
          f"{min(r['peak_rss_bytes'] for r in dec) / 1e9:.1f}-{max(r['peak_rss_bytes'] for r in dec) / 1e9:.1f} GB.")
    print()
    print("| graph | features | code | construct | fit | 5,000-edge batch | retraining fit | retraining request "
          "| peak | state (nbytes) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in ("memory-per-edge-powerlaw-before", "memory-per-edge-powerlaw-after", "memory-per-edge-before",
                 "memory-per-edge-after"):
        m = json.loads((HERE / f"{name}.json").read_text())
        ph = m["phases"]
        cells = " | ".join(f"{ph[k]['peak_growth_bytes_per_edge']:.0f}" for k in
                           ("construct", "fit", "batch-5000", "retrain-fit", "retrain-request"))
        print(f"| {m['graph']} ({m['edges']:,} edges) | {m['features']} | {m['label']} | {cells} | "
              f"**{m['peak_growth_bytes_per_edge']:.0f}** | {m['state_bytes_per_edge']:.0f} |")


if __name__ == "__main__":
    main()
