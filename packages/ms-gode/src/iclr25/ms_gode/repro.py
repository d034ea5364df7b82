"""``iclr25 ms-gode repro``: the reduced-scale reproduction behind the README "Results".

1. **The claims at the** ``repro`` **rung** (:mod:`iclr25.ms_gode.claims`, seeds ``S, S+1, S+2``): MS-GODE and
   the five comparison methods (fine-tune, EWC, replay, LwF, joint) retrained from scratch on the physics
   sequence at the checkpoint rung (:data:`~iclr25.ms_gode.pretrained.PRETRAIN`) and scored on fresh test tasks
   (:func:`~iclr25.ms_gode.experiments.run_repro`), each claim decided by its rule: ``OUT/claims.json`` and the
   side-by-side table of AP-MSE / AF-MSE per method and seed (``OUT/table.md``, ``OUT/rows.json``).
2. Optionally (``--sequences physics bio``, beyond the 10-minute budget) 0.2's side-by-side runs: every method
   on the physics sequence at 50 simulations / 10 epochs and on the Bio-CDL substitute, with one figure per
   sequence (``OUT/{sequence}_task1_after_last.png``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

__all__ = ["SIDE_BY_SIDE", "reproduce", "run_methods", "claims_rows", "claims_table"]

#: 0.2's side-by-side runs (``--sequences``): simulations and epochs per sequence, widths and learning rates
SIDE_BY_SIDE = {"physics": {"n_sims": 50, "epochs": 10}, "bio": {"n_sims": 20, "epochs": 4, "n_frames": 40},
                "batch_size": 10, "lr_ms_gode": 5e-2, "lr_baseline": 5e-3, "hidden": 24, "ode_hidden": 24,
                "augment": 8, "methods": ["ms-gode", "finetune", "joint", "ewc", "replay", "lwf"]}

_NAMES = {"ms-gode": "MS-GODE", "finetune": "Fine-tune", "ewc": "EWC", "replay": "Replay", "lwf": "LwF",
          "joint": "Joint (upper bound)"}


def _configs(cfg: dict[str, Any], *, epochs: int, lr: float):
    from .continual import TrainConfig  # noqa: PLC0415
    from .model import ModelConfig  # noqa: PLC0415

    return (ModelConfig(hidden=cfg["hidden"], ode_hidden=cfg["ode_hidden"], augment=cfg["augment"]),
            TrainConfig(epochs=epochs, batch_size=cfg["batch_size"], lr=lr))


def run_methods(sequence: str, methods: Sequence[str], cfg: dict[str, Any], *, n_sims: int, epochs: int,
                seed: int, unseen: dict[str, Any] | None = None, n_frames: int | None = None) -> dict[str, Any]:
    """Every method of ``methods`` on one task sequence (train / valid / test split of each task)."""
    import numpy as np  # noqa: PLC0415

    from .continual import run_sequence  # noqa: PLC0415
    from .data import make_task, task_sequence  # noqa: PLC0415
    from .experiments import split_tasks  # noqa: PLC0415

    split = split_tasks(task_sequence(sequence, n_sims, seed=seed, n_frames=n_frames))
    out: dict[str, Any] = {"tasks": split, "results": {}}
    for m in methods:
        mc, tc = _configs(cfg, epochs=epochs, lr=cfg["lr_ms_gode"] if m == "ms-gode" else cfg["lr_baseline"])
        out["results"][m] = run_sequence(m, split, config=mc, train=tc, seed=seed)
    if unseen is not None and "ms-gode" in methods:
        learner = out["results"]["ms-gode"].learner
        new = make_task(unseen, max(2 * cfg["batch_size"], n_sims // 3), seed=seed + 99)
        bs = cfg["batch_size"]
        sel = [learner.select_mode(new, np.arange(i, min(i + bs, len(new)))) for i in range(0, len(new), bs)]
        known = [learner.select_mode(te, np.arange(i, min(i + bs, len(te))))
                 for _, _, te in split for i in range(0, len(te), bs)]
        out["unknown_unseen"] = float(np.mean([s.unknown for s in sel]))
        out["unknown_known"] = float(np.mean([s.unknown for s in known]))
    return out


# ------------------------------------------------------------------------------------- 1. claims, repro rung
def claims_rows(per_seed: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (method, seed) from :func:`~iclr25.ms_gode.experiments.run_repro`'s results."""
    import numpy as np  # noqa: PLC0415

    # "fit": mean of a_jj, each task's test MSE right after it was learned (MS-GODE: its own mask, unchanged)
    rows = []
    for seed, r in sorted(per_seed.items()):
        rows.append({"method": "ms-gode", "seed": seed, "AP-MSE": r["ap_mse"], "AF-MSE": r["af_mse"],
                     "fit": float(np.mean(r["oracle_mse"])), "oracle AP-MSE": r["oracle_ap_mse"],
                     "mode accuracy": r["mode_fraction"], "cpu_s": r.get("cpu_s", {}).get("ms-gode")})
        for m, b in r["baselines"].items():
            rows.append({"method": m, "seed": seed, "AP-MSE": b["ap_mse"], "AF-MSE": b["af_mse"],
                         "fit": float(np.mean(np.diag(np.asarray(b["acc"], dtype=float)))),
                         "cpu_s": r.get("cpu_s", {}).get(m)})
    return rows


def claims_table(rows: Sequence[dict[str, Any]]) -> str:
    """AP-MSE and AF-MSE per method: per seed, then mean ± std; the mean single-task fit (markdown)."""
    import numpy as np  # noqa: PLC0415

    lines = ["| method | AP-MSE per seed ↓ | AP-MSE mean ± std | AF-MSE per seed ↓ | AF-MSE mean ± std | "
             "single-task fit (mean a_jj) | CPU s per seed (train + test) |", "|---|---|---|---|---|---|---|"]
    for m in _NAMES:
        rs = [r for r in rows if r["method"] == m]
        if not rs:
            continue
        ap, af = (np.asarray([r[k] for r in rs], dtype=float) for k in ("AP-MSE", "AF-MSE"))
        cpu = ", ".join("–" if r["cpu_s"] is None else f"{r['cpu_s']:.0f}" for r in rs)
        name = f"**{_NAMES[m]}**" if m == "ms-gode" else _NAMES[m]
        lines.append(f"| {name} | {', '.join(f'{v:.4f}' for v in ap)} | {ap.mean():.4f} ± {ap.std():.4f} | "
                     f"{', '.join(f'{v:+.4f}' for v in af)} | {af.mean():+.4f} ± {af.std():.4f} | "
                     f"{np.mean([r['fit'] for r in rs]):.4f} | {cpu} |")
    return "\n".join(lines)


def _claims_step(run: RunResult, out: Path, seeds: Sequence[int]) -> str:
    import numpy as np  # noqa: PLC0415

    from .claims import REGISTRY, run_repro  # noqa: PLC0415

    # the rung's own seeds are recorded as such (claims.json must be decided at them)
    own = tuple(seeds) == REGISTRY.rung_seeds("repro")
    report = REGISTRY.run("repro", None if own else seeds, command="iclr25 ms-gode repro")
    report.save(out / "claims.json")
    rows = claims_rows({s: run_repro(s) for s in seeds})
    with atomic_write(out / "rows.json") as f:
        json.dump(rows, f, indent=1)
    table = claims_table(rows)
    for m in _NAMES:
        ap = [r["AP-MSE"] for r in rows if r["method"] == m]
        peer = [r["AP-MSE"] for r in rows if r["method"] == "finetune"]
        if m != "finetune" and ap:
            run.add(f"physics: AP-MSE {_NAMES[m]} (mean of {len(ap)} seeds)", float(np.mean(ap)),
                    peer=float(np.mean(peer)), peer_name="Fine-tune", higher_is_better=False)
    for r in report.results:
        run.add(f"claim {r.claim.id}: holds", float(r.holds), higher_is_better=True)
    return "\n".join(r.explain() for r in report.results) + "\n\n" + table


# ------------------------------------------------------------------------------------ 2. 0.2's side by side
def _side_by_side_step(run: RunResult, out: Path, sequence: str, seeds: Sequence[int]) -> list[dict[str, Any]]:
    from .data import UNSEEN_PHYSICS  # noqa: PLC0415
    from .experiments import plot_predictions, summary_rows  # noqa: PLC0415

    cfg = SIDE_BY_SIDE
    rows: list[dict[str, Any]] = []
    for i, seed in enumerate(seeds):
        res = run_methods(sequence, cfg["methods"], cfg, n_sims=cfg[sequence]["n_sims"],
                          epochs=cfg[sequence]["epochs"], seed=seed,
                          unseen=UNSEEN_PHYSICS if sequence == "physics" else None,
                          n_frames=cfg[sequence].get("n_frames"))
        new = summary_rows(res["results"], sequence=sequence, seed=seed)
        rows += new
        print(json.dumps([{k: v for k, v in r.items() if k != "acc"} for r in new]), flush=True)
        if i == 0:
            te = res["tasks"][0][2].subset([0, 1])
            preds = {"MS-GODE": res["results"]["ms-gode"].learner.predict(te)[0]}
            for m, label in (("finetune", "Fine-tune"), ("joint", "Joint")):
                lrn = res["results"][m].learner
                preds[label] = lrn.model.loss(lrn._tt(te).batch([0, 1]), sample=False).pred.detach().cpu().numpy()
            fig = plot_predictions(out / f"{sequence}_task1_after_last.png", te, preds,
                                   title=f"{sequence} task 1 after the last task:")
            run.add_figure(fig, relative_to=out)
    return rows


def reproduce(out: Path, *, seed: int = 0, sequences: Sequence[str] = ()) -> RunResult:
    """Run the reproduction into ``out`` (created); returns the finished :class:`RunResult` (also saved)."""
    from .experiments import markdown_table  # noqa: PLC0415
    from .pretrained import PRETRAIN  # noqa: PLC0415

    seeds = [seed, seed + 1, seed + 2]
    run = RunResult.start("iclr25-ms-gode", "repro", seed=seed,
                          config={"seeds": seeds, "claims_rung": "repro", "scale": dict(PRETRAIN.__dict__),
                                  "side_by_side": {s: SIDE_BY_SIDE[s] for s in sequences}})
    from iclr25.utils.device import describe_device, torch_device  # noqa: PLC0415

    run.machine["device"] = describe_device(torch_device(None))  # $ICLR25_DEVICE (repro --device), else auto
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    parts = ["## Claims at the repro rung\n\n" + _claims_step(run, out, seeds)]
    run.add("repro: claims rung CPU time", time.process_time() - t0, unit="s", higher_is_better=False,
            timing=True)
    side: list[dict[str, Any]] = []
    for seq in sequences:
        side += _side_by_side_step(run, out, seq, seeds)
    if side:
        with atomic_write(out / "side_by_side_rows.json") as f:
            json.dump(side, f, indent=1)
        parts.append("## 0.2's side-by-side runs\n\n" + markdown_table(side))
    with atomic_write(out / "table.md") as f:
        f.write("\n\n".join(parts) + "\n")
    run.finish().save(out / "results.json")
    print("\n\n".join(parts))
    return run
