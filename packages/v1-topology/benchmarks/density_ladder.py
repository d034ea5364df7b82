"""Why the network's pinwheel density is about 2π rather than π: a ladder over sheet size, training length and
E→E range, each map beside the density a Gaussian random field with the same power spectrum would have
(``maps.random_field_density``) and its density after a 1-site Gaussian smoothing (band-limiting).

    python benchmarks/density_ladder.py --out DIR      (writes DIR/density_ladder.json; ~3 min CPU)

Each row: the high-overlap (macaque preset, stride 1) network's grating map; ring test, Λ, pinwheel count,
density per Λ², the random-field prediction, the smoothed density, and the share of spectral power above
twice the ring's wavenumber (lattice-scale noise).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from iclr25.v1_topology import maps
from iclr25.v1_topology.experiments import train
from iclr25.v1_topology.presets import preset_config
from iclr25.v1_topology.probe import measure_orientation_map


def high_k_share(z: np.ndarray, lam: float) -> float:
    z = z - z.mean()
    P = np.abs(np.fft.fft2(z)) ** 2
    k = np.sqrt(np.fft.fftfreq(z.shape[0])[:, None] ** 2 + np.fft.fftfreq(z.shape[1])[None, :] ** 2)
    return float(P[k > 2.0 / lam].sum() / P.sum())


def row(label: str, n_side: int, n_samples: int, seed: int, **over: float) -> dict:
    t0 = time.process_time()
    cfg = preset_config("macaque", n_side=n_side, **over)
    z = measure_orientation_map(train(cfg, n_samples, seed=seed, desc=None).net).z
    ring = maps.ring_test(z)
    lam = maps.column_spacing(z)
    n_pw = maps.pinwheels(z).count
    out = {"run": label, "n_side": n_side, "images": n_samples, "seed": seed, **over,
           "has_ring": ring.has_ring, "ring_ratio": ring.ring_ratio, "inner_power": ring.inner_power,
           "spacing": lam, "n_pinwheels": n_pw, "density": n_pw * lam ** 2 / n_side ** 2,
           "random_field_density": maps.random_field_density(z, spacing=lam),
           "density_smooth1": maps.pinwheel_density(z, spacing=lam, smooth=1.0),
           "random_field_density_smooth1": maps.random_field_density(maps._gaussian_smooth(z, 1.0, True), spacing=lam),
           "high_k_power_share": high_k_share(z, lam), "cpu_s": time.process_time() - t0}
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent, help="output folder (default: benchmarks/)")
    out = ap.parse_args().out / "density_ladder.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [row("seeds", 32, 8000, s) for s in (0, 1, 2)]
    rows += [row("training", 32, n, 0) for n in (2000, 4000)]
    rows += [row("sheet size", n, 4000, 0) for n in (24, 40)]
    rows += [row("E-E range", 32, 4000, 0, r_ee=2.0)]
    out.write_text(json.dumps({"command": "python benchmarks/density_ladder.py --out benchmarks", "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
