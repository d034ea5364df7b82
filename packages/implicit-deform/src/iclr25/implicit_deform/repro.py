"""``iclr25 implicit-deform repro``: the reduced-scale reproduction (README "Results").

* Twisted bar and a rigid pair, 3 seeds, t = 0.25, 0.5, 0.75: Chamfer / Hausdorff / volume change of the
  method, the SDF blend, LipMLP and straight-line interpolation against the exact intermediate shapes.
* Ablations on the twisted bar: the divergence term off (the reference's released setting), OLSE instead of
  MLSE; MLSE vs OLSE also on a sheared bar, the one built-in pair where n^T J_v n is not zero (for rigid motions
  J_v is skew, for the twist n^T J_v n vanishes on every face of the bar, so the extra term is identically 0).
* A scale ladder (three training budgets) of the Chamfer ratio ours / SDF blend on the twisted bar.
* Figures: intermediate meshes at t = 0, 0.25, 0.5, 0.75, 1 for every method beside the ground truth.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.device import describe_device, device_scope
from iclr25.utils.io import atomic_write
from iclr25.utils.progress import progress
from iclr25.utils.results import RunResult

from .baselines import fit_lipmlp, sdf_blend_meshes, straight_line_mesh
from .deform import DeformConfig, fit, resolve_device
from .experiments import eikonal_near_surface, score_meshes
from .meshing import turntable_strip
from .shapes import make_pair

TIMES = (0.25, 0.5, 0.75)
SHOW = (0.0, 0.25, 0.5, 0.75, 1.0)


def _scaled(config: DeformConfig, factor: float) -> DeformConfig:
    c = config.chunk

    def r(n: int) -> int:
        return max(c, int(round(n * factor / c)) * c) if n else 0

    return config.replace(velocity_iters=r(config.velocity_iters), sdf_iters=r(config.sdf_iters),
                          finetune_iters=r(config.finetune_iters) if factor >= 0.5 else 0,
                          lr_halve_every=max(1, int(config.lr_halve_every * factor)))


def _stats(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=np.float64)
    return float(np.mean(a)), float(np.std(a))


def _pair_meshes(pair, pair_name: str, base: DeformConfig, s: int, res_grid: int, lip_iters: int,
                 timing: dict[str, list[float]]) -> tuple[dict, dict, Any]:
    """Fit ours (and its ablations) and the baselines on one pair: ``(methods, meshes at TIMES, LipMLP fit)``.

    OLSE on the twist and shear pairs (with our velocity), divergence off on the twist; the baselines (LipMLP, SDF
    blend, straight line) on the pairs with exact ground truth meshes (not the shear pair)."""
    t0 = time.perf_counter()
    ours = fit(pair, config=base, seed=s, show_progress=False)
    timing.setdefault("ours fit s", []).append(time.perf_counter() - t0)
    lo, hi = ours.center - 1.0 / ours.scale, ours.center + 1.0 / ours.scale
    methods = {"ours": ours}
    if pair_name in ("twist", "shear"):
        methods["OLSE"] = fit(pair, config=base.replace(levelset="olse"), velocity=ours, seed=s,
                              show_progress=False)
    if pair_name == "twist":
        methods["no div"] = fit(pair, config=base.replace(w_div=0.0), seed=s, show_progress=False)
    meshes = {name: [m.mesh(t, resolution=res_grid) for t in TIMES] for name, m in methods.items()}
    lip = None
    if pair_name != "shear":
        t0 = time.perf_counter()
        sdf0, sdf1 = pair.sdf_function(0.0), pair.sdf_function(1.0)
        lip = fit_lipmlp(pair.source_points, pair.target_points, sdf0, sdf1, width=base.sdf_width, depth=base.sdf_depth,
                         iters=lip_iters, seed=s, show_progress=False)
        timing.setdefault("LipMLP fit s", []).append(time.perf_counter() - t0)
        meshes["LipMLP"] = [lip.mesh(t, resolution=res_grid) for t in TIMES]
        meshes["SDF blend"] = sdf_blend_meshes(sdf0, sdf1, TIMES, lo, hi, res_grid)
        meshes["straight line"] = [straight_line_mesh(pair.source_vertices, pair.target_vertices,
                                                      pair.source_faces, t) for t in TIMES]
    for name in ("ours", "no div"):  # the source mesh moved along the velocity field
        if name in methods:
            meshes[f"{name}, advected mesh"] = [
                straight_line_mesh(methods[name].advect(pair.source_vertices, t), pair.source_vertices,
                                   pair.source_faces, 0.0) for t in TIMES]
    return methods, meshes, lip


def _score_pair(table: dict, extra: dict, pair_name: str, pair, methods: dict, meshes: dict, s: int) -> None:
    """Append one seed's scores of every method on one pair to ``table`` (per method and field) and the
    near-surface Eikonal deviation of ours and OLSE to ``extra``."""
    for name, ms in meshes.items():
        sc = score_meshes(name, ms, pair, TIMES, seed=s)
        d = table.setdefault(name, {})
        for field in ("chamfer", "hausdorff", "volume_drift", "normal_consistency"):
            d.setdefault(field, []).append(sc.mean(field))
        d.setdefault("chamfer t=0.5", []).append(sc.at(0.5).chamfer)
        d.setdefault("volume_drift t=0.5", []).append(sc.at(0.5).volume_drift)
    for name in ("ours", "OLSE"):
        if name in methods:
            extra.setdefault(f"{pair_name} eikonal {name}", []).append(
                eikonal_near_surface(methods[name], pair, 0.5, seed=s))


def _strip_figure(pair, pair_name: str, ours, lip, meshes: dict, res_grid: int, out: Path) -> Path:
    """Intermediate meshes at SHOW of every method beside the ground truth (t = 0 and 1 from the fits)."""
    strip = {"ground truth": [pair.gt_mesh(t) for t in SHOW]}
    ends = {"ours": ours.mesh, "LipMLP": lip.mesh}
    for name in ("ours", "SDF blend", "LipMLP", "straight line"):
        strip[name] = [meshes[name][TIMES.index(t)] if t in TIMES
                       else (ends[name](t, resolution=res_grid) if name in ends else pair.gt_mesh(t))
                       for t in SHOW]
    return turntable_strip(strip, SHOW, out / f"intermediate_{pair_name}.png")


def _scale_ladder(rows: dict, base: DeformConfig, seed: int, n_points: int, res_grid: int) -> dict:
    """The headline ratio Chamfer ours / SDF blend on the twisted bar (first seed) at 1/4, 1/2 and the full
    training budget (the full rung is the main run's)."""
    ladder = {}
    pair = make_pair("bar", "twist", n_points=n_points, mesh_resolution=64, seed=seed)
    blend_cd = rows["twist"]["SDF blend"]["chamfer"][0]
    for factor in (0.25, 0.5):
        cfg = _scaled(base, factor)
        r = fit(pair, config=cfg, seed=seed, show_progress=False)
        sc = score_meshes("ours", [r.mesh(t, resolution=res_grid) for t in TIMES], pair, TIMES, seed=seed)
        ladder[factor] = {"iters": cfg.total_iters, "chamfer": sc.mean("chamfer"),
                          "ratio": sc.mean("chamfer") / blend_cd}
    ladder[1.0] = {"iters": base.total_iters, "chamfer": rows["twist"]["ours"]["chamfer"][0],
                   "ratio": rows["twist"]["ours"]["chamfer"][0] / blend_cd}
    return ladder


def _add_metrics(run: RunResult, rows: dict, extra: dict, ladder: dict, timing: dict) -> None:
    for pair_name in ("twist", "rigid"):
        t = rows[pair_name]
        for field, label in (("chamfer", "Chamfer"), ("hausdorff", "Hausdorff")):
            ours_v = _stats(t["ours"][field])[0]
            for peer in ("SDF blend", "LipMLP", "straight line"):
                run.add(f"{pair_name}: {label} ours vs {peer}", ours_v, peer=_stats(t[peer][field])[0],
                        peer_name=peer, higher_is_better=False)
    tw = rows["twist"]
    run.add("twist: volume change ours (div on) vs div off", _stats(tw["ours"]["volume_drift"])[0],
            peer=_stats(tw["no div"]["volume_drift"])[0], peer_name="no div", higher_is_better=False)
    run.add("twist: advected-mesh volume change div on vs off", _stats(tw["ours, advected mesh"]["volume_drift"])[0],
            peer=_stats(tw["no div, advected mesh"]["volume_drift"])[0], peer_name="no div",
            higher_is_better=False)
    for pair_name in ("twist", "shear"):
        run.add(f"{pair_name}: mean ||grad f|-1| at t=0.5, MLSE vs OLSE", _stats(extra[f"{pair_name} eikonal ours"])[0],
                peer=_stats(extra[f"{pair_name} eikonal OLSE"])[0], peer_name="OLSE", higher_is_better=False)
    for factor, d in ladder.items():
        run.add(f"ladder x{factor:g} ({d['iters']} it): Chamfer ratio ours/blend", d["ratio"], higher_is_better=False)
    for name, v in timing.items():
        run.add(f"{name} (median)", float(np.median(v)), unit="s", timing=True)


def _tables(seeds: list[int], rows: dict, extra: dict, ladder: dict) -> list[str]:
    """The markdown of ``tables.md`` (the README's "Results")."""
    lines = [f"# implicit-deform repro (seeds {seeds}; mean ± std over seeds of the mean over t = 0.25, 0.5, 0.75)",
             ""]
    for pair_name, t in rows.items():
        lines += [f"## bar-{pair_name}", "",
                  "| method | Chamfer ↓ | Hausdorff ↓ | volume change ↓ | normal consistency ↑ | Chamfer t=0.5 | "
                  "volume change t=0.5 |", "|---|---|---|---|---|---|---|"]
        for name, d in t.items():
            cells = [f"{_stats(d[f])[0]:.4f} ± {_stats(d[f])[1]:.4f}" for f in
                     ("chamfer", "hausdorff", "volume_drift", "normal_consistency", "chamfer t=0.5",
                      "volume_drift t=0.5")]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## MLSE vs OLSE: mean | |grad f| - 1 | near the surface at t = 0.5", "",
              "| pair | MLSE | OLSE |", "|---|---|---|"]
    for pair_name in ("twist", "shear"):
        a, b = _stats(extra[f"{pair_name} eikonal ours"]), _stats(extra[f"{pair_name} eikonal OLSE"])
        lines.append(f"| bar-{pair_name} | {a[0]:.4f} ± {a[1]:.4f} | {b[0]:.4f} ± {b[1]:.4f} |")
    lines += ["", "## Scale ladder (twisted bar, first seed): Chamfer ratio ours / SDF blend", "",
              "| budget | iterations | Chamfer ours | ratio |", "|---|---|---|---|"]
    for factor, d in ladder.items():
        lines.append(f"| x{factor:g} | {d['iters']} | {d['chamfer']:.4f} | {d['ratio']:.3f} |")
    return lines


def run_repro(out: Path, *, seed: int = 0, quick: bool = False, run: RunResult | None = None,
              device: str | None = None) -> RunResult:
    """Every pair and seed (``_pair_meshes``, ``_score_pair``, a figure for the first seed), the scale ladder,
    then the metrics, ``tables.md``, ``raw.json`` and ``results.json`` in ``out``. ``device``: where JAX fits
    (``None``: ``$ICLR25_DEVICE``, else ``auto``)."""
    dev = resolve_device(device)  # an absent device fails here, before any work
    run = run or RunResult.start("iclr25-implicit-deform", "repro", seed=seed)
    run.machine["device"] = describe_device(dev)
    with device_scope(device):
        return _repro(Path(out), seed, quick, run)


def _repro(out: Path, seed: int, quick: bool, run: RunResult) -> RunResult:
    base = DeformConfig.preset("repro")
    seeds = [seed] if quick else [seed, seed + 1, seed + 2]
    if quick:
        base = DeformConfig.preset("test")
    res_grid = 48 if quick else 64
    n_points = 6000 if quick else 20000
    lip_iters = 300 if quick else 1000
    run.config.update({"seeds": seeds, "times": list(TIMES), "resolution": res_grid, "n_points": n_points,
                       "lipmlp_iters": lip_iters, "quick": quick, **base.to_dict()})
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, dict[str, list[float]]]] = {}
    extra: dict[str, list[float]] = {}
    timing: dict[str, list[float]] = {}
    jobs = [("twist", s) for s in seeds] + [("rigid", s) for s in seeds] + [("shear", seeds[0])]
    for pair_name, s in progress(jobs, desc="repro pairs"):
        pair = make_pair("bar", pair_name, n_points=n_points, mesh_resolution=64, seed=s)
        methods, meshes, lip = _pair_meshes(pair, pair_name, base, s, res_grid, lip_iters, timing)
        _score_pair(rows.setdefault(pair_name, {}), extra, pair_name, pair, methods, meshes, s)
        if s == seeds[0] and pair_name != "shear":
            run.add_figure(_strip_figure(pair, pair_name, methods["ours"], lip, meshes, res_grid, out),
                           relative_to=out)
    ladder = _scale_ladder(rows, base, seeds[0], n_points, res_grid)
    _add_metrics(run, rows, extra, ladder, timing)
    lines = _tables(seeds, rows, extra, ladder)
    with atomic_write(out / "tables.md") as f:
        f.write("\n".join(lines) + "\n")
    with atomic_write(out / "raw.json") as f:
        f.write(json.dumps({"rows": rows, "extra": extra, "ladder": {str(k): v for k, v in ladder.items()},
                            "timing": timing}, indent=1))
    run.finish().save(out / "results.json")
    print("\n".join(lines))
    return run
