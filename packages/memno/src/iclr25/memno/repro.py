"""``iclr25 memno repro``: the reduced-scale reproduction (MemNO vs FFNO and the trivial predictors over
resolutions, viscosities, noise, Burgers and the epoch ladder; the claims at the repro rung into ``claims.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from typing import Any

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.device import DEVICE_ENV, describe_device, torch_device
from iclr25.utils.io import atomic_write
from iclr25.utils.outputs import check_output_path
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import check_seed, seed_everything

from .model_names import MODEL_NAMES

PACKAGE = "iclr25-memno"

#: The reduced-scale reproduction. ``modes`` is ``resolution // 2`` at every resolution (never capped); every row
#: also scores the do-nothing and linear-extrapolation predictors on the same test trajectories.
REPRO = {"n_train": 64, "n_test": 64, "epochs": 60, "batch_size": 16, "width": 16, "n_layers": 3,
         "modes": "resolution // 2", "lr": 3e-3, "t_burn": 5.0, "seeds": [0, 1, 2], "main": [32, 0.075],
         "resolutions": [128], "viscosities": [0.15, 1.0], "noise": [[64, 0.075, 0.1]],
         "burgers": [[32, 0.01]], "ladder": [15, 60, 240], "ladder_high_res": [15, 60], "transfer": 64}
TRIVIAL = ["do-nothing", "linear-extrapolation"]


def run_repro(args: argparse.Namespace) -> int:
    """The rows of :data:`REPRO` (main setting over seeds, resolution, viscosity, noise, Burgers, the epoch
    ladder), the resolution transfer and the claims at the repro rung; writes ``results.json``, ``rows.json``,
    ``tables.md``, ``claims.json`` and the ratio figure into ``args.out``."""
    # --out was checked before the command ran; a previous run is any of the files it writes there
    check_output_path(args.out, kind="folder", overwrite=args.overwrite,
                      run_files=("results.json", "rows.json", "tables.md", "claims.json", "ratio.png"))
    cfg = dict(REPRO)
    run = RunResult.start(PACKAGE, "repro", seed=args.seed, config=cfg)
    check_seed(args.seed, "--seed")
    set_torch_threads(args.threads)
    dev = torch_device(args.device)
    run.machine["device"] = describe_device(dev)
    from .experiments import Setting  # noqa: PLC0415
    from .figures import plot_repro  # noqa: PLC0415

    seed_everything(args.seed)
    common = {k: cfg[k] for k in ("n_train", "n_test", "batch_size", "width", "n_layers", "lr", "t_burn")}
    common["device"] = dev
    rows: list[dict[str, Any]] = []
    peers = _peers()
    t0 = time.perf_counter()
    ep = cfg["epochs"]
    main = Setting(*cfg["main"])
    first = _run_rows(cfg, common, peers, rows)
    transfer = _resolution_transfer(cfg, common, first)
    _add_metrics(run, rows, peers, main, ep, transfer)
    _add_claims(run, args.out, args.device)
    wall = time.perf_counter() - t0
    run.add("repro wall time", wall, unit="s", higher_is_better=False, timing=True)
    fig = plot_repro(args.out / "ratio.png", rows, main_resolution=main.resolution, main_nu=main.nu,
                     epochs=ep)
    run.add_figure(fig, relative_to=args.out)
    with atomic_write(args.out / "rows.json") as f:
        json.dump(rows, f, indent=1)
    with atomic_write(args.out / "tables.md") as f:
        f.write(_tables(rows, peers, transfer))
    run.finish().save(args.out / "results.json")
    print(_tables(rows, peers, transfer))
    print(run.to_markdown())
    return 0


def _peers() -> list[str]:
    """The models of the main setting's first seed: FFNO, MemNO, FFNO with history, and neuraloperator's FNO
    when the optional ``[peers]`` extra is installed (else a line says it is skipped)."""
    peers = ["ffno", "memno", "ffno-history"]
    try:
        from .peers import neuralop_fno  # noqa: F401 - optional peer
        peers.append("neuralop-fno")
    except ImportError:
        print("neuraloperator is not installed (the [peers] extra: pip install './packages/memno[peers]' from a "
              "clone): its FNO peer is skipped")
    return peers


def _record(rows: list[dict[str, Any]], common: dict[str, Any], kind: str, setting: Any, seed: int,
            names: Sequence[str], epochs: int) -> dict[str, Any]:
    """Train and score ``names`` (beside the trivial predictors) on one setting and seed; appends the row of
    one-step and rollout nRMSEs, s/epoch and the MemNO/FFNO ratios to ``rows``, prints it, and returns the
    models and data of :func:`~iclr25.memno.experiments.compare_models`."""
    from .experiments import compare_models  # noqa: PLC0415

    kw = dict(common, t_burn=common["t_burn"] if setting.pde == "ks" else 0.0)
    out = compare_models(setting, [n for n in names if n in MODEL_NAMES], seed=seed, epochs=epochs, **kw)
    if "neuralop-fno" in names:
        from .peers import train_neuralop_fno

        out["neuralop-fno"] = train_neuralop_fno(out["data"].split(common["n_train"])[0], out["test"],
                                                 seed=seed, epochs=epochs, modes=out["modes"],
                                                 **{k: common[k] for k in ("batch_size", "width", "n_layers",
                                                                           "lr", "device")})
    row: dict[str, Any] = {"kind": kind, "setting": setting.label, "pde": setting.pde,
                           "resolution": setting.resolution, "nu": setting.nu, "noise": setting.noise,
                           "seed": seed, "epochs": epochs, "modes": out["modes"]}
    for n in [*TRIVIAL, *names]:
        row[n] = out[n]["eval"].nrmse
        row[n + " rollout"] = out[n]["eval"].nrmse_rollout
        if out[n]["train"] is not None:
            row[n + " s/epoch"] = out[n]["train"].seconds_per_epoch
    row["ratio"] = row["memno"] / row["ffno"]
    row["ratio rollout"] = row["memno rollout"] / row["ffno rollout"]
    rows.append(row)
    print(json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
    return out


def _run_rows(cfg: dict[str, Any], common: dict[str, Any], peers: list[str],
              rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every row of ``cfg`` in order (main setting over the seeds, with the peers at the first; then at the first
    seed resolution, viscosity, noise, Burgers, and the epoch ladders at the main and the highest resolution);
    returns the models of the main setting's first seed."""
    from .experiments import Setting  # noqa: PLC0415

    ep = cfg["epochs"]
    main = Setting(*cfg["main"])
    first = None
    for seed in cfg["seeds"]:
        out = _record(rows, common, "main", main, seed, peers if seed == cfg["seeds"][0] else ["ffno", "memno"], ep)
        first = first or out
    s0 = cfg["seeds"][0]
    for res_ in cfg["resolutions"]:
        _record(rows, common, "resolution", Setting(res_, main.nu), s0, ["ffno", "memno"], ep)
    for nu in cfg["viscosities"]:
        _record(rows, common, "viscosity", Setting(main.resolution, nu), s0, ["ffno", "memno"], ep)
    for res_, nu, noise in cfg["noise"]:
        _record(rows, common, "noise", Setting(res_, nu, noise), s0, ["ffno", "memno"], ep)
    for res_, nu in cfg["burgers"]:
        _record(rows, common, "burgers", Setting(res_, nu, pde="burgers"), s0, ["ffno", "memno"], ep)
    for e in cfg["ladder"]:
        if e != ep:
            _record(rows, common, "ladder", main, s0, ["ffno", "memno"], e)
    for e in cfg["ladder_high_res"]:
        if e != ep:
            _record(rows, common, "ladder", Setting(cfg["resolutions"][-1], main.nu), s0, ["ffno", "memno"], e)
    return first


def _resolution_transfer(cfg: dict[str, Any], common: dict[str, Any], first: dict[str, Any]) -> dict[str, float]:
    """Resolution transfer: the main setting's first-seed FFNO and MemNO evaluated on the same test trajectories
    observed at ``cfg["transfer"]`` points; their one-step nRMSE."""
    from .experiments import Setting, observed  # noqa: PLC0415
    from .training import evaluate  # noqa: PLC0415

    main = Setting(*cfg["main"])
    fine = observed(Setting(cfg["transfer"], main.nu), common["n_train"] + common["n_test"], seed=cfg["seeds"][0],
                    t_burn=common["t_burn"]).split(common["n_train"])[1]
    return {n: evaluate(first[n]["model"], fine, device=common["device"]).nrmse for n in ("ffno", "memno")}


def _add_metrics(run: RunResult, rows: list[dict[str, Any]], peers: list[str], main: Any, ep: int,
                 transfer: dict[str, float]) -> None:
    """The repro's metrics: the main setting's MemNO/FFNO ratio over seeds (mean, std, worst), every other row's
    ratio, FFNO and MemNO against do-nothing, MemNO against each peer, the transfer and the s/epoch."""
    import numpy as np  # noqa: PLC0415

    main_rows = [r for r in rows if r["kind"] == "main"]
    s0 = main_rows[0]["seed"]
    ratios = np.array([r["ratio"] for r in main_rows])
    run.add(f"nRMSE ratio MemNO/FFNO, {main.label}, mean of {len(ratios)} seeds", float(ratios.mean()),
            higher_is_better=False)
    run.add(f"nRMSE ratio MemNO/FFNO, {main.label}, std over seeds", float(ratios.std(ddof=1)),
            higher_is_better=False)
    run.add(f"nRMSE ratio MemNO/FFNO, {main.label}, worst seed", float(ratios.max()), higher_is_better=False)
    for r in rows[len(main_rows):]:
        run.add(f"nRMSE ratio MemNO/FFNO, {r['setting']}, {r['epochs']} epochs", r["ratio"], higher_is_better=False)
    for r in main_rows + [r for r in rows if r["kind"] != "main" and r["epochs"] == ep]:
        for n in ("ffno", "memno"):
            run.add(f"{n} nRMSE vs do-nothing, {r['setting']}, seed {r['seed']}", r[n], peer=r["do-nothing"],
                    peer_name="do-nothing", higher_is_better=False)
    for n in peers:
        if n != "memno":
            run.add(f"MemNO nRMSE vs {n}, {main.label}, seed {s0}", main_rows[0]["memno"], peer=main_rows[0][n],
                    peer_name=n, higher_is_better=False)
    run.add("resolution transfer 32→64: MemNO nRMSE", transfer["memno"], peer=transfer["ffno"], peer_name="FFNO",
            higher_is_better=False)
    run.add("MemNO s/epoch (res 32)", main_rows[0]["memno s/epoch"], peer=main_rows[0]["ffno s/epoch"],
            peer_name="FFNO", unit="s", higher_is_better=False, timing=True)


def _add_claims(run: RunResult, out: Any, device: str) -> None:
    """The registry's claims at the repro rung (5 seeds) on ``device`` into ``out/claims.json``, from which the
    README's claims table is made; each claim's verdict is also a metric of ``run``."""
    from .claims import REGISTRY  # noqa: PLC0415

    # the measuring code takes its device from $ICLR25_DEVICE (a registry's functions take only seed and rung)
    before = os.environ.get(DEVICE_ENV)
    os.environ[DEVICE_ENV] = device
    try:
        report = REGISTRY.run("repro", command="iclr25 memno repro")
    finally:
        if before is None:
            del os.environ[DEVICE_ENV]
        else:
            os.environ[DEVICE_ENV] = before
    report.save(out)
    for r in report.results:
        run.add(f"claim {r.claim.id} (repro rung, {len(r.seeds)} seeds): {r.verdict}", float(r.holds),
                higher_is_better=True)


def _table(rows: Sequence[dict[str, Any]], cols: Sequence[str], *, epochs: bool = False) -> str:
    cols = [c for c in cols if any(c in r for r in rows)]
    head = "| setting | seed | " + ("epochs | " if epochs else "") + \
        " | ".join(f"{c} (1-step / rollout)" for c in cols) + " | MemNO/FFNO 1-step | MemNO/FFNO rollout |"
    lines = [head, "|" + "---|" * (len(cols) + 4 + int(epochs))]
    for r in rows:
        cells = []
        for c in cols:
            if c not in r:
                cells.append("–")
            else:
                roll = r[c + " rollout"]
                cells.append(f"{r[c]:.4f} / " + ("–" if roll is None else f"{roll:.4f}"))
        lines.append(f"| {r['setting']} | {r['seed']} | " + (f"{r['epochs']} | " if epochs else "") +
                     " | ".join(cells) + f" | {r['ratio']:.3f} | {r['ratio rollout']:.3f} |")
    return "\n".join(lines)


def _tables(rows: Sequence[dict[str, Any]], peers: Sequence[str], transfer: dict[str, float]) -> str:
    import numpy as np  # noqa: PLC0415

    main = [r for r in rows if r["kind"] == "main"]
    ratios = np.array([r["ratio"] for r in main])
    ep = main[0]["epochs"]
    cols = [*TRIVIAL, *peers]
    parts = [
        f"Main setting ({main[0]['setting']}, {ep} epochs, {len(main)} seeds): MemNO/FFNO one-step ratio "
        f"{ratios.mean():.3f} ± {ratios.std(ddof=1):.3f} (mean ± std; per seed "
        + ", ".join(f"{q:.3f}" for q in ratios) + ").\n",
        _table(main, cols),
        f"\nResolution, viscosity, noise and Burgers rows (seed {main[0]['seed']}, {ep} epochs):\n",
        _table([r for r in rows if r["kind"] in ("resolution", "viscosity", "noise", "burgers")],
               [*TRIVIAL, "ffno", "memno"]),
        f"\nTraining-budget ladder (seed {main[0]['seed']}; the {ep}-epoch rungs are the rows above):\n",
        _table(sorted([r for r in rows if r["epochs"] != ep or (r["kind"] in ("main", "resolution")
                                                                   and r["seed"] == main[0]["seed"])],
                      key=lambda r: (r["resolution"], r["epochs"])), [*TRIVIAL, "ffno", "memno"], epochs=True),
        f"\nResolution transfer (the res-{main[0]['resolution']} seed-{main[0]['seed']} models on the same test "
        f"trajectories observed at 64 points): MemNO {transfer['memno']:.4f}, FFNO {transfer['ffno']:.4f} "
        f"(ratio {transfer['memno'] / transfer['ffno']:.3f}).\n",
    ]
    return "\n".join(parts)
