"""The output of the localisation ablations (``ablation_localisation.py``, ``ablation_temporal.py``):
``ablation.json`` and an ``ablation.md`` table in ``out``, the table also on stdout."""

from __future__ import annotations

import json
from pathlib import Path

from iclr25.utils.io import atomic_write


def write_ablation(out: Path, rows: list[dict], *, time_key: str, time_header: str) -> None:
    """Rows of ``ablation``, ``steps``, ``loc_f1``, ``parse_failures`` and ``time_key`` (seconds)."""
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "ablation.json") as f:
        json.dump(rows, f, indent=2)
    lines = [f"| ablation | steps | localisation F1 | parse failures | {time_header} |", "|---|---|---|---|---|"]
    lines += [f"| {r['ablation']} | {r['steps']} | {r['loc_f1']:.3f} | {r['parse_failures']:.3f} | {r[time_key]:.0f} |"
              for r in rows]
    with atomic_write(out / "ablation.md") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
