"""Command line of ``iclr25 v1-topology``: ``demo``, ``train``, ``analyze`` and ``repro``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from iclr25.utils import cli as ucli
from iclr25.utils.guards import check_size
from iclr25.utils.outputs import add_output, check_output_path

from .figures import plot_maps

DESCRIPTION = ("Orientation maps from a self-organising E-I spiking network (Zhong et al., ICLR 2025): "
               "salt-and-pepper vs pinwheels, map metrics.")
DEMO_HELP = "train a high- and a zero-overlap network, maps and metrics (<60 s)"
REPRO_HELP = "the reduced-scale reproduction (at most 10 min)"

PACKAGE = "iclr25-v1-topology"
#: what ``train --out DIR`` writes at the top of DIR (``checkpoint.npz`` is resumed; the others mark a finished run)
TRAIN_FILES = ("checkpoint.npz", "map.npz", "map.png", "evaluation.json", "results.json")


def _finite(obj):
    """NaN/inf become ``null`` so that the JSON we write is strict JSON."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not (obj == obj and abs(obj) != float("inf")):
        return None
    return obj


#: Measured training cost: 3.8 s per 1000 images on the 32×32 sheet (1280 E+I neurons), two shared cores; a
#: time step costs about (E+I neurons)² (spikes × neurons), so the estimate scales with the square.
SECONDS_PER_IMAGE_1280 = 3.8e-3


def train_cost(cfg, n_samples: int) -> tuple[float, float]:
    """Rough ``(bytes, seconds)`` of training ``cfg`` on ``n_samples`` images: the dense distance, mask and weight
    matrices (~40 bytes per neuron pair, float64 distances and their temporaries) plus one batch of patches."""
    n = cfg.n_e + cfg.n_i
    bytes_needed = 40.0 * n * n + 8.0 * cfg.batch * cfg.n_e * cfg.patch ** 2
    seconds = SECONDS_PER_IMAGE_1280 * n_samples * (n / 1280) ** 2
    return bytes_needed, seconds


def check_train_size(cfg, n_samples: int, *, force: bool = False) -> None:
    """Refuse (one line, the estimate) a sheet or a training length this machine cannot finish."""
    bytes_needed, seconds = train_cost(cfg, n_samples)
    check_size(f"--n-side {cfg.n_side} (a {cfg.n_side}x{cfg.n_side} E sheet) with --samples {n_samples}",
               bytes_needed=bytes_needed, seconds_needed=seconds, force=force)


# ------------------------------------------------------------------------------------------------ demo
def demo(args: argparse.Namespace) -> int:
    from iclr25.utils.results import RunResult
    from iclr25.utils.seeding import seed_everything

    from .experiments import evaluate, train
    from .fields import gaussian_random_field
    from .maps import pinwheel_density
    from .presets import preset_config

    seed_everything(args.seed)
    n_samples = 1500
    configs = {"macaque": preset_config("macaque", n_side=24), "mouse": preset_config("mouse", n_side=24)}
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config={"n_side": 24, "n_samples": n_samples, "presets": list(configs)})
    evs, panels = {}, []
    for name, cfg in configs.items():
        res = train(cfg, n_samples, seed=args.seed, desc=f"train {name}")
        ev, om = evaluate(res.net, n_images=40, seed=args.seed)
        evs[name] = ev
        panels.append((f"{name}: overlap {cfg.overlap:.2f}, |Δθ| {ev.summary.neighbour_dtheta_deg:.0f}°",
                       om.theta, om.osi))
    hi, lo = evs["macaque"], evs["mouse"]
    run.add("neighbour |dtheta| high overlap (deg)", hi.summary.neighbour_dtheta_deg,
            peer=lo.summary.neighbour_dtheta_deg, peer_name="zero overlap (salt-and-pepper)", higher_is_better=False,
            headline=True, claim="overlap-gives-smooth-maps")
    if not hi.summary.neighbour_dtheta_deg < lo.summary.neighbour_dtheta_deg:
        run.headline_note = ("at this demo's scale (24x24 sheet, 1500 images) the high-overlap map is not smoother "
                             "than the zero-overlap one; see the README's scale ladder")
    run.add("median OSI high overlap", hi.median_osi, peer=lo.median_osi, peer_name="zero overlap")
    run.add("pinwheel density high overlap (per Lambda^2)", hi.summary.density, peer=3.141592653589793,
            peer_name="pi (Kaschube 2010)")
    run.add("column spacing high overlap (sites)", hi.summary.spacing)
    for name, ev in evs.items():  # density and spacing are null for a map without a ring: say so
        if not ev.summary.hypercolumns:
            print(f"note: {name} map: {ev.summary.note}")
    dens = [pinwheel_density(gaussian_random_field(96, 12.0, seed=args.seed + k)) for k in range(3)]
    run.add("maps API check: density of Gaussian random fields", sum(dens) / len(dens), peer=3.141592653589793,
            peer_name="pi (theory)")
    run.add_figure(plot_maps(args.out / "maps.png", panels), relative_to=args.out)
    return run.publish(args.out)


# ----------------------------------------------------------------------------------------------- train
def train_cmd(args: argparse.Namespace) -> int:
    """Train the spiking network of a species preset on whitened natural images (built in: scikit-image and
    scikit-learn photographs) and measure its orientation map. Writes OUT/checkpoint.npz (resumed when
    present), OUT/map.npz (theta, osi, z, responses), OUT/map.png, OUT/evaluation.json and OUT/results.json.
    """
    out: Path = args.out
    species_file = None if args.species in ("mouse", "rat", "cat", "macaque") else args.species
    ckpt = out / "checkpoint.npz"
    # --out was checked before this handler (a folder, writable, not an input, no symbolic links among the files it
    # writes; declared with resumes=True): here, a finished run without a checkpoint to resume is replaced only
    # with --overwrite, and a --species file is an input too
    check_output_path(out, flag="--out", kind="folder", inputs=[p for p in (args.images, species_file) if p],
                      overwrite=args.overwrite or ckpt.exists(), run_files=TRAIN_FILES)

    from .presets import preset_config

    overrides = {} if args.n_side is None else {"n_side": args.n_side}
    cfg = preset_config(args.species, **overrides)
    check_train_size(cfg, args.samples, force=args.force)

    from iclr25.utils.io import atomic_write, save_npz
    from iclr25.utils.results import RunResult

    from .experiments import evaluate, train
    from .images import read_images
    from .network import SESNN

    images = None
    if args.images:
        images, used = read_images(args.images, f0=cfg.whiten_f0, min_size=cfg.retina // 2, force=args.force)
        print(f"--images {used}")
    if ckpt.exists():
        net = SESNN.load(ckpt)
        if net.cfg != cfg:
            raise ValueError(f"{ckpt}: the checkpoint was trained with a different configuration; use another "
                             "--out folder or the same --species/--n-side")
        if net.seed != args.seed:
            raise ValueError(f"{ckpt}: the checkpoint was trained with --seed {net.seed}, not --seed {args.seed}; "
                             f"resume it with --seed {net.seed}, or use another --out folder for seed {args.seed}")
        print(f"resuming from {ckpt} ({net.samples_seen} images seen, seed {net.seed})")
    else:
        net = SESNN(cfg, seed=args.seed)  # built (memory allocated) before --out is created
    run = RunResult.start(PACKAGE, "train", seed=args.seed,
                          config={"species": str(args.species), "n_samples": args.samples,
                                  "resumed_from_samples": net.samples_seen, **cfg.to_dict()})
    out.mkdir(parents=True, exist_ok=True)
    res = train(cfg, args.samples, images=images, seed=args.seed, net=net, checkpoint=ckpt, desc="train")
    ev, om = evaluate(res.net, images, seed=args.seed)
    save_npz(out / "map.npz", theta=om.theta, osi=om.osi, z=om.z, responses=om.responses)
    for k, v in (("median OSI", ev.median_osi), ("neighbour |dtheta| (deg)", ev.summary.neighbour_dtheta_deg),
                 ("pinwheel density (per Lambda^2)", ev.summary.density), ("column spacing (sites)", ev.summary.spacing),
                 ("NNPD / Lambda", ev.summary.nnpd), ("map wiring cost", ev.summary.wiring_cost),
                 ("sparseness (population)", ev.sparseness_population), ("reliability at SNR 1", ev.reliability_snr1)):
        run.add(k, v)
    run.add_figure(plot_maps(out / "map.png", [(f"{args.species}: overlap {cfg.overlap:.2f}", om.theta, om.osi)]),
                   relative_to=out)
    with atomic_write(out / "evaluation.json") as f:
        f.write(json.dumps(_finite(ev.to_dict()), indent=2, allow_nan=False) + "\n")
    return run.publish(out)


# --------------------------------------------------------------------------------------------- analyze
def orientation_radians(m, *, degrees: bool):
    """A real orientation map in radians in [0, π], checked for its units: values outside [0, π] are refused
    unless ``degrees`` (then [0, 180] is required, and a map whose values all lie in [0, π] is refused as
    radians given with --degrees)."""
    import numpy as np

    from .maps import check_map

    a = check_map(m, "map", complex_ok=False)
    lo, hi = float(a.min()), float(a.max())
    if degrees:
        if lo < 0 or hi > 180:
            raise ValueError(f"map values span [{lo:.4g}, {hi:.4g}], outside [0, 180]: not orientations in degrees "
                             "(wrap them with np.mod(map, 180))")
        if hi <= np.pi and a.size > 16:
            raise ValueError(f"map values span [{lo:.4g}, {hi:.4g}] with --degrees: every orientation below "
                             "3.15 degrees; these look like radians, drop --degrees")
        return np.radians(a)
    if lo < -1e-9 or hi > np.pi + 1e-9:
        hint = (" they look like degrees: pass --degrees" if lo >= 0 and hi <= 180 else
                " wrap them with np.mod(map, np.pi)")
        raise ValueError(f"map values span [{lo:.4g}, {hi:.4g}], outside [0, π]: not orientations in radians;{hint}")
    return a


def analyze(args: argparse.Namespace) -> int:
    """Metrics of an orientation map file: .npy with preferred orientations (radians in [0, π]; degrees in [0,
    180] with --degrees; other values are refused) or a complex z = |z|e^{2iθ} map; or an .npz with 'theta'
    (and optional 'osi') or 'z'."""
    import numpy as np

    from iclr25.utils.io import DataFileError, read_array, read_npz

    from .maps import check_map, summarize_map

    path = Path(args.map)
    sel = None
    if path.suffix.lower() == ".npz":
        arrays = read_npz(path, what="orientation map")
        key = "z" if "z" in arrays else "theta" if "theta" in arrays else None
        if key is None:
            if len(arrays) != 1:
                raise DataFileError(path, f"expected an array 'theta' or 'z' (or a single array), got {sorted(arrays)}")
            key = next(iter(arrays))
        m = arrays[key]
        sel = arrays.get("osi") if key == "theta" else None
    else:
        m = read_array(path, what="orientation map")
    try:
        if not np.iscomplexobj(m):
            m = orientation_radians(m, degrees=args.degrees)
    except (ValueError, TypeError) as exc:
        raise DataFileError(path, str(exc)) from exc
    try:
        check_map(m, "map", periodic=args.periodic)
        if sel is not None:
            check_map(sel, "osi")
        s = summarize_map(m, selectivity=sel, periodic=args.periodic, smooth=args.smooth)
    except (ValueError, TypeError) as exc:
        raise DataFileError(path, str(exc)) from exc
    d = s.to_dict()
    if s.hypercolumns:
        d.pop("note")
    width = max(len(k) for k in d)
    for k, v in d.items():
        if k == "ring":
            r = s.ring
            print(f"{'ring test':<{width}}  ring ratio {r.ring_ratio:.4g} (threshold {r.threshold:g}; {r.n_shuffles} "
                  f"shuffled copies up to {r.shuffled_max:.3g}), power inside the ring {r.inner_power:.3g} of the "
                  f"peak: {'ring' if r.has_ring else 'no ring'}")
        elif v is None and k in ("spacing", "density", "nnpd"):
            print(f"{k:<{width}}  n/a (no hypercolumns)")
        else:
            print(f"{k:<{width}}  {v:.4g}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    if args.out is not None:
        from iclr25.utils.io import atomic_write

        with atomic_write(args.out) as f:
            f.write(json.dumps(_finite(d), indent=2, allow_nan=False) + "\n")
    return 0


# ----------------------------------------------------------------------------------------------- repro
def repro(args: argparse.Namespace) -> int:
    from .repro import run_repro

    return run_repro(args.out, seed=args.seed, quick=args.quick)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, _, _ = ucli.method_commands("v1-topology", DESCRIPTION, demo=demo, demo_help=DEMO_HELP,
                                             repro=repro, repro_help=REPRO_HELP,
                                             quick="a smaller, faster ladder (for a smoke test)")
    t = ucli.add_command(sub, "train", train_cmd, seed="random seed (default: 0); a checkpoint in --out is resumed only with its own seed", overwrite="write over a finished run in --out that has no checkpoint to resume", force=True, help="train a network for a species preset (resumable)")
    t.add_argument("--species", default="cat",
                   help="mouse, rat, cat, macaque, or a preset .json file (default: cat)")
    add_output(t, "--out", kind="folder", required=True, resumes=True, run_files=TRAIN_FILES, inputs=("images",),
               help="the run folder: checkpoint.npz (rewritten during training), map.npz, map.png, evaluation.json "
                    "and results.json; a finished run without a checkpoint is written over only with --overwrite")
    t.add_argument("--samples", type=ucli.positive_int("--samples"), default=3000,
                   help="training images in total (default: 3000)")
    t.add_argument("--n-side", type=ucli.positive_int("--n-side"), default=None, help="E sheet side (default: preset's)")
    t.add_argument("--images", default=None,
                   help="your own images, grey-scaled and whitened here: a folder of PNG/JPEG/TIFF/.iml files, one "
                        "such file, Olshausen's IMAGES.mat, van Hateren .iml, or .npy/.npz of shape (H, W), "
                        "(n, H, W) or (n, H, W, 3)")
    a = ucli.add_command(sub, "analyze", analyze, overwrite=True, help="pinwheels, density, Λ, NNPD, wiring cost of any orientation map")
    a.add_argument("map", help="orientation map (.npy or .npz)")
    a.add_argument("--degrees", action="store_true", help="the map holds degrees rather than radians")
    a.add_argument("--no-periodic", dest="periodic", action="store_false",
                   help="the map is not periodic (experimental data); default: periodic (a simulated torus)")
    a.add_argument("--smooth", type=float, default=0.0, help="Gaussian smoothing (sites) before pinwheel detection")
    add_output(a, "--out", kind="file", suffixes=(".json",), inputs=("map",),
               help="write the metrics to this file (default: none, only printed)")
    return ucli.run_main(parser, argv)
