"""``iclr25 implicit-deform fit``: a user's pair -> meshes of f(., t), advected source vertices, metrics.

Everything is written into a temporary folder beside ``--out`` and moved into place at the end, so a failed
run leaves no partial output.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import write_points
from iclr25.utils.results import RunResult

from .deform import DeformConfig, fit
from .experiments import eikonal_near_surface
from .meshing import export_mesh, turntable_strip
from .metrics import chamfer, hausdorff, sample_mesh


def check_finite_result(res) -> None:
    """Refuse a fit whose networks hold a non-finite weight (a diverged training): nothing is written."""
    import equinox as eqx  # noqa: PLC0415
    import jax  # noqa: PLC0415

    for name in ("sdf_net", "velocity_net"):
        leaves = jax.tree_util.tree_leaves(eqx.filter(getattr(res, name), eqx.is_inexact_array))
        if not all(np.isfinite(np.asarray(a)).all() for a in leaves):
            raise ValueError(f"the fit diverged: the {name} weights are not finite; nothing written to --out")


def run_fit(pair, config: DeformConfig, times: list[float], out: Path, *, resolution: int = 64, fmt: str = "ply",
            seed: int = 0, run: RunResult, device: Any = None) -> RunResult:
    out = Path(out)
    res = fit(pair, config=config, seed=seed, device=device)
    check_finite_result(res)
    ends = sorted(set([0.0, *times, 1.0]))
    meshes = {t: res.mesh(t, resolution=resolution) for t in ends}
    v0 = abs(meshes[0.0].volume) if len(meshes[0.0].faces) else float("nan")
    for t, ref, label in ((0.0, pair.source_points, "source"), (1.0, pair.target_points, "target")):
        p = sample_mesh(meshes[t], 20000, seed=seed)[0]
        run.add(f"Chamfer of f(., {t:g}) to the {label} cloud", chamfer(p, ref) if len(p) else None,
                higher_is_better=False)
        run.add(f"Hausdorff of f(., {t:g}) to the {label} cloud", hausdorff(p, ref) if len(p) else None,
                higher_is_better=False)
    for t in times:
        m = meshes[t]
        vol = abs(m.volume) if len(m.faces) else float("nan")
        run.add(f"volume change at t={t:g} (vs the t=0 mesh)", abs(vol - v0) / v0, higher_is_better=False)
        run.add(f"mean | |grad f| - 1 | near the surface at t={t:g}", eikonal_near_surface(res, pair, t, seed=seed),
                higher_is_better=False)
    if len(pair.corr):
        err = np.linalg.norm(res.advect(pair.corr_source, 1.0) - pair.corr_target, axis=1)
        run.add("correspondence residual |x_T - y| (mean)", float(err.mean()), higher_is_better=False)
    run.add("training time", sum(res.timings.values()), unit="s", timing=True)

    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for t in ends:
            export_mesh(meshes[t], stage / f"mesh_t{t:g}.{fmt}")
        for t in times:
            write_points(stage / f"advected_t{t:g}.ply", res.advect(pair.source_vertices, t))
        fig = turntable_strip({"f(., t)": [meshes[t] for t in ends]}, ends, stage / "intermediate_shapes.png")
        run.add_figure(fig, relative_to=stage)
        run.finish().save(stage / "results.json")
        out.mkdir(parents=True, exist_ok=True)
        for f in stage.iterdir():
            f.replace(out / f.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return run
