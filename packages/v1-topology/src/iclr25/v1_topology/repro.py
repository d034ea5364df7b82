"""``iclr25 v1-topology repro``: the reduced-scale reproduction behind the README "Results" table.

1. Overlap → topology: high overlap (stride 1, macaque) vs zero overlap (stride 8, mouse), 3 seeds.
2. Scale ladder (training images) for the same pair, and an ablation of the E→E gain.
3. Phase diagram: stride × connection-range scale (through ``parallel_map``) and the range-doubling ratio of Λ.
4. Functional comparison: wiring costs, sparseness, reliability (pinwheel / salt-and-pepper ratios).
5. GCAL baseline density and OSI beside ours; brian2 re-simulation of 20 stimuli (r and speed).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult

from .experiments import brian2_compare, build_peer_env, default_peer_python, evaluate, sweep, train
from .network import NetworkConfig
from .presets import preset_config

__all__ = ["run_repro"]

PACKAGE = "iclr25-v1-topology"


def _mean_sd(xs: list[float | None]) -> str:
    """Mean ± sd over seeds; a hypercolumn quantity that is ``None`` (no ring in the map's spectrum) at any seed
    is shown as n/a with the number of seeds without a ring."""
    if any(x is None for x in xs):
        n = sum(x is None for x in xs)
        return f"n/a (no ring at {n} of {len(xs)} seeds)"
    a = np.asarray(xs, dtype=float)
    return f"{a.mean():.3g} ± {a.std(ddof=1):.2g}" if a.size > 1 else f"{a.mean():.3g}"


def _num(x: float | None, fmt: str) -> str:
    """A number, or "–" for a hypercolumn quantity of a map without a ring."""
    return "–" if x is None else format(x, fmt)


def _ev_row(ev: Any) -> dict[str, float]:
    s = ev.summary
    return {"osi": ev.median_osi, "dth": s.neighbour_dtheta_deg, "density": s.density, "spacing": s.spacing,
            "nnpd": s.nnpd, "ring": s.ring_ratio, "map_wiring": s.wiring_cost, "ee_length": ev.ee_length_cost,
            "ee_inverse": ev.ee_inverse_strength_cost, "entropy": ev.ee_entropy_bits,
            "sparse_pop": ev.sparseness_population, "sparse_life": ev.sparseness_lifetime,
            "reliability": ev.reliability_snr1, "rate": ev.mean_rate_e, "n_pw": s.n_pinwheels}


def run_repro(out: Path, *, seed: int = 0, quick: bool = False) -> int:
    """The five sections of the module docstring (``quick``: the claims' ``test`` rung and smaller sweeps), then
    the claims at this rung on the networks of section 1; writes ``results.json``, ``claims.json``, ``table.md``
    and the figures into ``out``."""
    from .claims import REGISTRY, RUNGS
    from .figures import plot_maps

    rung = "test" if quick else "repro"     # section 1 = the claims' networks at this rung
    n_side = RUNGS[rung]["n_side"]
    n_main = RUNGS[rung]["n_samples"]      # section 1 (claims, coding costs)
    n_sweep = 1000 if quick else 4000      # phase diagram and range doubling
    ladder = (500, 1000, n_main) if quick else (1000, 4000, n_main)
    seeds = tuple(seed + s for s in REGISTRY.rung_seeds(rung))
    hi_cfg = preset_config("macaque", n_side=n_side)
    lo_cfg = preset_config("mouse", n_side=n_side)
    run = RunResult.start(PACKAGE, "repro", seed=seed, config={"n_side": n_side, "n_samples": n_main,
                                                               "ladder": list(ladder), "seeds": list(seeds),
                                                               "high": hi_cfg.to_dict(), "zero": lo_cfg.to_dict()})
    lines: list[str] = []
    t_all = time.perf_counter()

    from .images import builtin_images as _bi

    imgs_main = _bi(f0=hi_cfg.whiten_f0)
    t_train = time.perf_counter()
    train(hi_cfg, 1000, seed=seed + 100, desc="timing: 1000 images")
    sec_per_1000 = time.perf_counter() - t_train
    run.add("training seconds per 1000 images (32x32 sheet)" if not quick else "training seconds per 1000 images",
            sec_per_1000, unit="s", higher_is_better=False, timing=True)

    rows, nets, oms = _overlap_pairs(seeds, seed, rung)
    verdict, dens_hi = _overlap_section(run, lines, rows, n_side, n_main, seeds)
    _coding_cost_section(run, lines, verdict, rows)
    _ladder_section(lines, rows, nets, (hi_cfg, lo_cfg), ladder, n_main, seed, imgs_main)
    grid, strides, scales = _phase_section(run, lines, verdict, hi_cfg, seeds, seed, n_sweep)
    _gcal_section(run, lines, rows, (hi_cfg, lo_cfg), seed, quick, dens_hi)
    _brian2_section(run, lines, verdict, nets["high"], seed)

    # the claims registry at this rung, on the networks of section 1: OUT/claims.json
    report = REGISTRY.run(rung, seeds=seeds, command="iclr25 v1-topology repro" + (" --quick" if quick else ""))
    lines += ["", f"### Claims over seeds {list(seeds)} (`claims.json`, rung `{rung}`)", ""]
    lines += [f"- {r.explain()}" for r in report.results]

    lines += ["", "### Verdict", "", "| claim | reproduced here |", "|---|---|"]
    lines += [f"| {k} | {'yes' if v else 'no'} |" for k, v in verdict.items()]
    lines.append(f"\nTraining speed: {sec_per_1000:.1f} s per 1000 images on the {n_side}×{n_side} sheet "
                 f"(paper note target < 30 s). repro wall time {time.perf_counter() - t_all:.0f} s")

    fig1 = plot_maps(out / "maps.png", [
        (f"high overlap (stride 1): |Δθ| {rows['high'][0]['dth']:.0f}°, ρ {_num(rows['high'][0]['density'], '.2f')}",
         oms["high"].theta, oms["high"].osi),
        (f"zero overlap (stride 8): |Δθ| {rows['zero'][0]['dth']:.0f}°", oms["zero"].theta, oms["zero"].osi)])
    run.add_figure(fig1, relative_to=out)
    run.add_figure(_plot_phase(out / "phase_diagram.png", grid, strides, scales, hi_cfg), relative_to=out)
    table = "\n".join(lines)
    run.notes = table
    report.save(out / "claims.json")
    run.finish().save(out / "results.json")
    with atomic_write(out / "table.md") as fh:
        fh.write(table + "\n")
    print(table)
    return 0


def _overlap_pairs(seeds: tuple[int, ...], seed: int, rung: str
                   ) -> tuple[dict[str, list[dict[str, float]]], dict[str, Any], dict[str, Any]]:
    """Section 1's networks: the high- and zero-overlap pair of each seed at the claims' ``rung`` (the claims
    registry reuses them); returns the per-seed metric rows by overlap, and the networks and orientation maps
    of seed ``seed``."""
    from .claims import measure_pair

    rows: dict[str, list[dict[str, float]]] = {"high": [], "zero": []}
    nets: dict[str, Any] = {}
    oms: dict[str, Any] = {}
    for s in seeds:
        pair = measure_pair(s, rung, keep_networks=(s == seed), desc=True)
        for key in ("high", "zero"):
            rows[key].append(_ev_row(pair[key]))
            if s == seed:
                nets[key], oms[key] = pair["nets"][key], pair["maps"][key]
    return rows, nets, oms


def _overlap_section(run: RunResult, lines: list[str], rows: dict[str, list[dict[str, float]]], n_side: int,
                     n_main: int, seeds: tuple[int, ...]) -> tuple[dict[str, bool], float | None]:
    """Section 1, overlap → topology: the table of mean ± sd over seeds, its metrics and first verdicts; returns
    the verdicts and the mean pinwheel density at high overlap (None when a seed's map has no ring)."""
    col = {k: {m: [r[m] for r in v] for m in v[0]} for k, v in rows.items()}
    lines += [f"### 1. Overlap → topology ({n_side}×{n_side} E sheet, {n_main} images, seeds {list(seeds)}; "
              "mean ± sd)", "",
              "| metric | high overlap (stride 1, 0.875) | zero overlap (stride 8, 0) | paper / target |",
              "|---|---|---|---|"]
    targets = {"dth": "< 30° (high), > 38° (zero)", "density": "[1.5, 6] vs π = 3.14 (high)", "osi": "> 0.3",
               "spacing": "", "nnpd": "", "ring": "ring present (high)"}
    names = {"dth": "neighbour \\|Δθ\\| (deg)", "density": "pinwheel density (per Λ²)", "osi": "median OSI",
             "spacing": "column spacing Λ (sites)", "nnpd": "NNPD / Λ", "ring": "ring ratio of the z spectrum"}
    for m, label in names.items():
        lines.append(f"| {label} | {_mean_sd(col['high'][m])} | {_mean_sd(col['zero'][m])} | {targets[m]} |")
    lines += ["", "Column spacing, pinwheel density and NNPD are hypercolumn quantities: they are given only for maps "
                  "whose spectrum has a ring (`maps.ring_test`: ring ratio >= 10 and above 19 shuffled copies of "
                  "the map, band-pass); n/a otherwise."]
    dth_hi, dth_lo = float(np.mean(col["high"]["dth"])), float(np.mean(col["zero"]["dth"]))
    dens_list = [d for d in col["high"]["density"] if d is not None]
    dens_hi = float(np.mean(dens_list)) if len(dens_list) == len(seeds) else None
    run.add("neighbour |dtheta| high overlap (deg)", dth_hi, higher_is_better=False)
    run.add("neighbour |dtheta| zero overlap (deg)", dth_lo)
    run.add("pinwheel density high overlap (per Lambda^2)", dens_hi, peer=math.pi, peer_name="pi (Kaschube 2010)")
    run.add("median OSI high overlap", float(np.mean(col["high"]["osi"])))
    run.add("median OSI zero overlap", float(np.mean(col["zero"]["osi"])))
    verdict = {"dth high < 30": dth_hi < 30, "dth zero > 38": dth_lo > 38,
               "density in [1.5, 6]": dens_hi is not None and 1.5 <= dens_hi <= 6}
    return verdict, dens_hi


def _coding_cost_section(run: RunResult, lines: list[str], verdict: dict[str, bool],
                         rows: dict[str, list[dict[str, float]]]) -> None:
    """Section 4, functional comparison on the same networks: each coding cost's pinwheel / salt-and-pepper
    ratio (mean of seeds) against the paper's direction, as table lines, metrics and verdicts."""
    col = {k: {m: [r[m] for r in v] for m in v[0]} for k, v in rows.items()}
    lines += ["", "### 4. Coding costs: pinwheel (high overlap) vs salt-and-pepper (zero overlap), mean of seeds", "",
              "| measure | pinwheel | salt-and-pepper | ratio pinwheel / s&p | paper's direction |", "|---|---|---|---|---|"]
    func = {"map_wiring": ("map wiring cost (mean distance to 8 like-tuned partners)", "lower"),
            "ee_length": ("E→E length-weighted wiring Σ\\|W\\|d/Σ\\|W\\|", "lower"),
            "ee_inverse": ("E→E inverse-strength energy (Eq. 7)", "lower"),
            "entropy": ("E→E weight entropy (bits, capacity)", "–"),
            "sparse_pop": ("Treves–Rolls sparseness, population", "higher"),
            "sparse_life": ("Treves–Rolls sparseness, lifetime", "higher"),
            "reliability": ("clean/noisy response correlation, SNR 1", "higher")}
    for m, (label, direction) in func.items():
        a, b = float(np.mean(col["high"][m])), float(np.mean(col["zero"][m]))
        ratio = a / b if b else float("nan")
        ok = {"lower": ratio < 1, "higher": ratio > 1}.get(direction)
        mark = "" if ok is None else (" ✓" if ok else " ✗")
        lines.append(f"| {label} | {a:.4g} | {b:.4g} | {ratio:.3f}{mark} | {direction} |")
        run.add(f"ratio pinwheel/s&p: {m}", ratio)
        if ok is not None:
            verdict[f"{m} {direction} for pinwheel"] = bool(ok)


def _ladder_line(label: str, n: int, r_hi: dict[str, float], r_lo: dict[str, float]) -> str:
    """One row of section 2's table: a high/zero-overlap pair trained on ``n`` images."""
    return (f"| {label} | {n} | {r_hi['dth']:.1f} | {r_lo['dth']:.1f} | {_num(r_hi['density'], '.2f')} | "
            f"{r_hi['osi']:.3f} | {r_lo['osi']:.3f} | {r_hi['rate']:.3f} / {r_lo['rate']:.3f} | "
            f"{r_hi['map_wiring'] / r_lo['map_wiring']:.3f} | {r_hi['sparse_pop'] / r_lo['sparse_pop']:.3f} | "
            f"{r_hi['reliability'] / r_lo['reliability']:.3f} |")


def _ladder_section(lines: list[str], rows: dict[str, list[dict[str, float]]], nets: dict[str, Any],
                    cfgs: tuple[NetworkConfig, NetworkConfig], ladder: tuple[int, ...], n_main: int, seed: int,
                    imgs_main: Any) -> None:
    """Section 2: the training-images ladder of the pair (section 1's seed-``seed`` networks at ``n_main``),
    the E→E-gain ablation, the zero-overlap network rate-matched to the high-overlap one (thresholds shifted),
    and the reliability ratio against the noise level."""
    from .probe import noise_reliability

    hi_cfg, lo_cfg = cfgs
    lines += ["", "### 2. Scale ladder (training images, seed 0) and E→E-gain ablation", "",
              "| run | images | \\|Δθ\\| high | \\|Δθ\\| zero | density high | OSI high | OSI zero | rate high / zero | "
              "ratio map wiring | ratio sparseness (pop) | ratio reliability SNR 1 |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in ladder:
        if n == n_main:
            r_hi, r_lo = rows["high"][0], rows["zero"][0]
        else:
            r_hi = _ev_row(evaluate(train(hi_cfg, n, seed=seed, desc=f"ladder {n} high").net, seed=seed)[0])
            r_lo = _ev_row(evaluate(train(lo_cfg, n, seed=seed, desc=f"ladder {n} zero").net, seed=seed)[0])
        lines.append(_ladder_line("ladder", n, r_hi, r_lo))
    for gain in (1.0,):
        r_hi = _ev_row(evaluate(train(hi_cfg.replace(ee_gain=gain), n_main, seed=seed, desc=f"gain {gain}").net,
                                seed=seed)[0])
        r_lo = _ev_row(evaluate(train(lo_cfg.replace(ee_gain=gain), n_main, seed=seed, desc=f"gain {gain}").net,
                                seed=seed)[0])
        lines.append(_ladder_line(f"ablation: E→E gain {gain} (default {hi_cfg.ee_gain})", n_main, r_hi, r_lo))
    # ablation: rate-matched comparison (thresholds of the zero-overlap network shifted until its mean rate on
    # natural images equals the high-overlap one), and the noise level of the reliability measure
    hi_net, lo_net = nets["high"], nets["zero"]
    matched = _rate_matched(lo_net, rows["high"][0]["rate"], seed)
    r_m = _ev_row(evaluate(matched, seed=seed)[0])
    lines.append(_ladder_line("ablation: zero overlap rate-matched to high", n_main, rows["high"][0], r_m))
    snr_cells = []
    for snr in (0.25, 1.0, 4.0):
        a = noise_reliability(hi_net, imgs_main, 60, snr=snr, seed=seed)
        b = noise_reliability(lo_net, imgs_main, 60, snr=snr, seed=seed)
        snr_cells.append(f"SNR {snr:g}: {a:.3f} / {b:.3f} = {a / b:.3f}")
    lines += ["", "Reliability (pinwheel / salt-and-pepper) against the noise level, seed 0: " + "; ".join(snr_cells)]


def _phase_section(run: RunResult, lines: list[str], verdict: dict[str, bool], hi_cfg: NetworkConfig,
                   seeds: tuple[int, ...], seed: int, n_sweep: int
                   ) -> tuple[dict[tuple[int, float], Any], tuple[int, ...], tuple[float, ...]]:
    """Section 3: the stride × connection-range phase diagram (through ``parallel_map``; sequential here, as two
    cores are shared: pass n_jobs or a Dask/Ray backend to ``sweep()``) and the range-doubling ratio of the column
    spacing Λ at stride 1 over the seeds; returns the diagram's grid, strides and range scales."""
    from .maps import column_spacing

    strides = (1, 2, 4, 8)
    scales = (1.0, 2.0)
    pts = sweep(hi_cfg, strides, scales, n_sweep, seeds=(seed,))
    grid = {(p["config"]["stride"], round(p["config"]["r_ee"] / hi_cfg.r_ee, 3)): p for p in pts}
    lines += ["", f"### 3. Phase diagram: neighbour |Δθ| (deg) / pinwheel density / Λ (sites), seed {seed}, "
                  f"{n_sweep} images", "",
              "| stride (overlap) | " + " | ".join(f"range ×{f:g} (r_EE {hi_cfg.r_ee * f:g}, r_EI {hi_cfg.r_ei * f:g})"
                                                 for f in scales) + " |", "|---" * (1 + len(scales)) + "|"]
    for s in strides:
        cells = []
        for f in scales:
            e = grid[(s, round(f, 3))]["eval"]
            cells.append(f"{e['summary']['neighbour_dtheta_deg']:.1f} / {_num(e['summary']['density'], '.2f')} / "
                         f"{_num(e['summary']['spacing'], '.1f')}")
        lines.append(f"| {s} ({max(0.0, 1 - s / hi_cfg.patch):.3f}) | " + " | ".join(cells) + " |")

    def _lam(theta: Any) -> float:  # the spectral peak's wavelength; flagged below when the map has no ring
        return column_spacing(np.exp(2j * np.asarray(theta)))

    lam1 = [_lam(grid[(1, 1.0)]["theta"])]
    lam2 = [_lam(grid[(1, 2.0)]["theta"])]
    ring1 = [grid[(1, 1.0)]["eval"]["summary"]["hypercolumns"]]
    ring2 = [grid[(1, 2.0)]["eval"]["summary"]["hypercolumns"]]
    cfg2 = hi_cfg.replace(r_ee=hi_cfg.r_ee * 2, r_ei=hi_cfg.r_ei * 2, r_ii=hi_cfg.r_ii * 2)
    for s in seeds[1:]:
        for c, lam, ring, tag in ((cfg2, lam2, ring2, "x2"), (hi_cfg, lam1, ring1, "x1")):
            ev_s, om_s = evaluate(train(c, n_sweep, seed=s, desc=f"range {tag} seed {s}").net, seed=s)
            lam.append(_lam(om_s.theta))
            ring.append(ev_s.summary.hypercolumns)
    ratio_lam = float(np.mean(lam2) / np.mean(lam1))
    lines += ["", f"Range doubling at stride 1: Λ(2r) / Λ(r) = {np.mean(lam2):.2f} / {np.mean(lam1):.2f} = "
                  f"**{ratio_lam:.2f}** (target ≥ 1.3; seeds {list(seeds)}, {n_sweep} images; maps with a ring: "
                  f"{sum(ring1)} of {len(ring1)} at range ×1, {sum(ring2)} of {len(ring2)} at range ×2)"]
    run.add("Lambda(2r) / Lambda(r) at high overlap", ratio_lam)
    verdict["range doubling Lambda ratio >= 1.3"] = ratio_lam >= 1.3
    return grid, strides, scales


def _gcal_section(run: RunResult, lines: list[str], rows: dict[str, list[dict[str, float]]],
                  cfgs: tuple[NetworkConfig, NetworkConfig], seed: int, quick: bool, dens_hi: float | None) -> None:
    """Section 5a: the rate-based GCAL baseline trained on the same sheet, patches and images, beside our
    seed-``seed`` networks of section 1 (OSI, neighbour |Δθ|, pinwheel density, Λ)."""
    from .gcal import GCAL
    from .images import builtin_images
    from .maps import summarize_map

    hi_cfg, lo_cfg = cfgs
    imgs = builtin_images(f0=hi_cfg.whiten_f0)
    lines += ["", "### 5. GCAL baseline (rate-based, same sheet, patches and images) beside ours", "",
              "| model | overlap | median OSI | neighbour \\|Δθ\\| | pinwheel density | Λ |", "|---|---|---|---|---|---|"]
    for key, cfg in (("high", hi_cfg), ("zero", lo_cfg)):
        g = GCAL(cfg, seed=seed).train(imgs, 1000 if quick else 3000, seed=seed)
        t = g.orientation_map()
        sg = summarize_map(t.z)
        lines.append(f"| GCAL | {cfg.overlap:.3f} | {np.median(t.osi):.3f} | {sg.neighbour_dtheta_deg:.1f} | "
                     f"{_num(sg.density, '.2f')} | {_num(sg.spacing, '.1f')} |")
        r = rows[key][0]
        lines.append(f"| SESNN (ours) | {cfg.overlap:.3f} | {r['osi']:.3f} | {r['dth']:.1f} | "
                     f"{_num(r['density'], '.2f')} | {_num(r['spacing'], '.1f')} |")
        if key == "high" and sg.density is not None:
            run.add("GCAL pinwheel density high overlap", sg.density, peer=dens_hi, peer_name="SESNN (ours)")


def _brian2_section(run: RunResult, lines: list[str], verdict: dict[str, bool], net: Any, seed: int) -> None:
    """Section 5b: the trained high-overlap network re-simulated in brian2 (the optional peer environment, built
    once when missing) on 20 natural-image stimuli: spike-count r and seconds per stimulus; a note otherwise."""
    py = default_peer_python()
    note = ""
    if py is None:
        try:
            py = build_peer_env()
        except Exception as exc:  # noqa: BLE001 - the peer is optional; say why it did not run
            note = f"brian2 environment could not be built: {exc}"
    if py is not None:
        b = brian2_compare(net, py, n_stimuli=20, seed=seed)
        if b.get("r") is not None:
            lines += ["", f"### brian2 peer ({b['note']}, 20 natural-image stimuli, trained high-overlap network)", "",
                      "| spike-count Pearson r | identical counts | ours s / stimulus (batched) | brian2 s / stimulus | "
                      "speed-up |", "|---|---|---|---|---|",
                      f"| {b['r']:.4f} | {b['exact_match_fraction']:.3f} | {b['ours_s_per_stimulus']:.4f} | "
                      f"{b['brian2_s_per_stimulus']:.3f} | {b['speedup']:.0f}× |"]
            run.add("brian2 spike-count correlation", b["r"])
            run.add("seconds per stimulus, ours (batched)", b["ours_s_per_stimulus"], peer=b["brian2_s_per_stimulus"],
                    peer_name=b["note"], unit="s", higher_is_better=False, timing=True)
            verdict["brian2 r > 0.95"] = b["r"] > 0.95
            verdict["speed-up >= 10x"] = b["speedup"] >= 10
        else:
            note = b["note"]
    if note:
        lines += ["", f"brian2 peer: {note}"]


def _rate_matched(net: Any, target_rate: float, seed: int, iters: int = 8) -> Any:
    """A copy of ``net`` whose E thresholds are shifted by a common offset (bisection) so that its mean E rate on
    natural images equals ``target_rate`` — separates the effect of the map from that of the activity level."""
    import copy

    from .images import builtin_images
    from .probe import image_responses

    imgs = builtin_images(f0=net.cfg.whiten_f0)
    T = net.cfg.n_steps * net.cfg.dt
    lo, hi = -1.0, 1.0
    base = net.theta_e.copy()
    out = copy.deepcopy(net)
    for _ in range(iters):  # bisection on the offset
        mid = 0.5 * (lo + hi)
        out.theta_e = (base + mid).astype(base.dtype)
        rate = image_responses(out, imgs, 60, seed=seed)[0].mean() / T  # the 60 crops evaluate() uses
        lo, hi = (mid, hi) if rate > target_rate else (lo, mid)
    out.theta_e = (base + 0.5 * (lo + hi)).astype(base.dtype)
    return out


def _plot_phase(path: Path, grid: dict, strides: tuple[int, ...], scales: tuple[float, ...],
                cfg: NetworkConfig) -> Path:
    from iclr25.utils.plotting import savefig, subplots

    fig, axes = subplots(1, 2, size=(4.4, 3.2))
    for i_ax, (ax, (key, label)) in enumerate(zip(axes, (("neighbour_dtheta_deg", "neighbour |Δθ| (deg)"),
                                                         ("density", "pinwheel density (per Λ²)")), strict=True)):
        ax.grid(False)
        M = np.array([[np.nan if grid[(s, round(f, 3))]["eval"]["summary"][key] is None else
                       grid[(s, round(f, 3))]["eval"]["summary"][key] for f in scales] for s in strides], dtype=float)
        im = ax.imshow(M, aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(scales)), [f"×{f:g}" for f in scales])
        ax.set_yticks(range(len(strides)), [f"{s} ({max(0, 1 - s / cfg.patch):.2f})" for s in strides])
        ax.set_xlabel("connection range")
        if i_ax == 0:
            ax.set_ylabel("stride (overlap)")
        for i in range(M.shape[0]):
            for j in range(M.shape[1]):
                ax.text(j, i, "no ring" if np.isnan(M[i, j]) else f"{M[i, j]:.1f}", ha="center", va="center",
                        color="w" if np.isfinite(M[i, j]) else "k", fontsize=7)
        ax.set_title(label, fontsize=8)
        fig.colorbar(im, ax=ax, shrink=0.8)
    return savefig(fig, path)
