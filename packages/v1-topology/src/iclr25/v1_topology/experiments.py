"""Training runs and the reduced-scale reproduction: train a network, measure its map and coding costs, the
overlap × range sweep (phase diagram, through :func:`iclr25.utils.parallel_map`), the GCAL baseline and the
brian2 peer.

References: Zhong et al. (2025) ICLR, "Emergent Orientation Maps" (overlap → topology, connection range → Λ,
wiring / sparseness / robustness of pinwheel vs salt-and-pepper maps); paper note §5.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.parallel import parallel_map
from iclr25.utils.progress import progress

from . import maps
from .images import builtin_images
from .network import SESNN, NetworkConfig, from_mapping, sample_patches
from .probe import OrientationMap, image_responses, measure_orientation_map, noise_reliability

__all__ = ["train", "TrainResult", "evaluate", "Evaluation", "sweep_point", "sweep", "brian2_compare",
           "BRIAN2_SCRIPT"]


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """A trained network and, per batch of this call, its mean E and I rates (spikes per unit time)."""

    net: SESNN
    history: list[dict[str, float]]


def train(cfg: NetworkConfig, n_samples: int, *, images: Sequence[np.ndarray] | None = None, seed: int = 0,
          net: SESNN | None = None, checkpoint: str | os.PathLike[str] | None = None, checkpoint_every: int = 10,
          desc: str | None = "train") -> TrainResult:
    """Train (or continue training ``net``) until it has seen ``n_samples`` images.

    Batch ``k`` draws its images from ``default_rng([seed, 1, k])``, so a run resumed from a checkpoint
    continues exactly where it stopped. ``checkpoint`` is rewritten atomically every ``checkpoint_every``
    batches and at the end.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 0:
        raise ValueError(f"n_samples must be an integer >= 0, got {n_samples!r}")
    imgs = builtin_images(f0=cfg.whiten_f0) if images is None else list(images)
    if net is None:
        net = SESNN(cfg, seed=seed)
    elif net.cfg != cfg:
        raise ValueError("net was built with another NetworkConfig than cfg; pass net.cfg to continue training it")
    n_batches = -(-n_samples // cfg.batch)
    history: list[dict[str, float]] = []
    todo = range(net.batches_seen, n_batches)
    for k in progress(todo, desc=desc, total=len(todo)):
        sim = net.train_batch(imgs, np.random.default_rng([net.seed, 1, k]))
        T = net.cfg.n_steps * net.cfg.dt
        history.append({"batch": k, "rate_e": float(sim.counts_e.mean() / T), "rate_i": float(sim.counts_i.mean() / T)})
        if checkpoint is not None and ((k + 1) % checkpoint_every == 0 or k == n_batches - 1):
            net.save(checkpoint)
    return TrainResult(net, history)


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Map statistics and coding costs of a trained network (lengths in E lattice units)."""

    stride: int
    overlap: float
    median_osi: float
    summary: maps.MapSummary
    ee_length_cost: float
    ee_inverse_strength_cost: float
    ee_entropy_bits: float
    sparseness_population: float
    sparseness_lifetime: float
    reliability_snr1: float
    mean_rate_e: float

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["summary"] = self.summary.to_dict()
        return d


def evaluate(net: SESNN, images: Sequence[np.ndarray] | None = None, *, n_images: int = 60, seed: int = 0,
             opm: OrientationMap | None = None) -> tuple[Evaluation, OrientationMap]:
    """Grating OPM and its :func:`maps.summarize_map`, the two E→E wiring costs and weight entropy,
    Treves–Rolls sparseness on natural images, and clean-vs-noisy reliability at SNR = 1."""
    cfg = net.cfg
    imgs = builtin_images(f0=cfg.whiten_f0) if images is None else list(images)
    om = measure_orientation_map(net) if opm is None else opm
    summ = maps.summarize_map(om.z, periodic=True)
    clean, _ = image_responses(net, imgs, n_images, seed=seed)
    W, D = net.W_ee, net.distances["ee"]
    ev = Evaluation(
        stride=cfg.stride, overlap=cfg.overlap, median_osi=om.tuning.median_osi, summary=summ,
        ee_length_cost=maps.wiring_cost(W, D, kind="length") if W.any() else float("nan"),
        ee_inverse_strength_cost=maps.wiring_cost(W, D, kind="inverse_strength") if W.any() else float("nan"),
        ee_entropy_bits=maps.weight_entropy(W) if W.any() else float("nan"),
        sparseness_population=maps.sparseness(clean, axis="population"),
        sparseness_lifetime=maps.sparseness(clean, axis="lifetime"),
        reliability_snr1=noise_reliability(net, imgs, n_images, snr=1.0, seed=seed),
        mean_rate_e=float(clean.mean() / (cfg.n_steps * cfg.dt)),
    )
    return ev, om


def sweep_point(job: dict[str, Any]) -> dict[str, Any]:
    """One point of the overlap × range sweep: ``job`` = ``{"config": {...}, "n_samples": n, "seed": s}``;
    returns the evaluation dict plus the map (theta, osi as lists) — picklable for any parallel backend."""
    cfg = from_mapping(job["config"], source="sweep config")
    res = train(cfg, int(job["n_samples"]), seed=int(job.get("seed", 0)), desc=None)
    ev, om = evaluate(res.net, seed=int(job.get("seed", 0)))
    return {"config": cfg.to_dict(), "seed": int(job.get("seed", 0)), "n_samples": int(job["n_samples"]),
            "eval": ev.to_dict(), "theta": om.theta.tolist(), "osi": om.osi.tolist()}


def sweep(base: NetworkConfig, strides: Sequence[int], range_scales: Sequence[float], n_samples: int, *,
          seeds: Sequence[int] = (0,), n_jobs: int = 1, backend: str | None = None) -> list[dict[str, Any]]:
    """The overlap × connection-range phase diagram: every (stride, range scale, seed), with E→E and E↔I/I→I
    radii multiplied by the range scale; runs through :func:`iclr25.utils.parallel_map` (local processes,
    Dask or Ray)."""
    jobs = []
    for s in strides:
        for f in range_scales:
            cfg = base.replace(stride=int(s), r_ee=base.r_ee * f, r_ei=base.r_ei * f, r_ii=base.r_ii * f)
            for seed in seeds:
                jobs.append({"config": cfg.to_dict(), "n_samples": int(n_samples), "seed": int(seed)})
    return parallel_map(sweep_point, jobs, n_jobs=n_jobs, backend=backend, desc="sweep")


# ------------------------------------------------------------------------------------------ brian2
BRIAN2_SCRIPT = r"""
import json, sys, time
import numpy as np
import brian2 as b2
b2.prefs.codegen.target = "numpy"
d = np.load(sys.argv[1])
ext, M, theta = d["ext"], d["M"], d["theta"]
dt_, tau_, T = float(d["dt"]), float(d["tau"]), int(d["n_steps"])
n = theta.size
decay = np.exp(-dt_ / tau_)
b2.defaultclock.dt = dt_ * b2.ms
G = b2.NeuronGroup(n, "du/dt = (-u + I_b) / tau : 1\nI_b : 1\nth : 1", threshold="u >= th", reset="u = 0",
                   method="exact", namespace={"tau": tau_ * b2.ms})
G.th = theta
pre, post = np.nonzero(M)
S = b2.Synapses(G, G, "w : 1", on_pre="u_post += w")
S.connect(i=pre, j=post)
S.w = M[pre, post] / decay  # delivered before the next state update, which decays it once
S.pre.when = "before_groups"
mon = b2.SpikeMonitor(G)
net = b2.Network(G, S, mon)
net.store()
counts, secs = [], []
for k in range(ext.shape[0]):
    net.restore()
    G.I_b = ext[k] / (1 - decay)
    t0 = time.perf_counter()
    net.run(T * dt_ * b2.ms)
    secs.append(time.perf_counter() - t0)
    counts.append(np.bincount(np.asarray(mon.i), minlength=n))
np.save(sys.argv[2], np.array(counts))
print(json.dumps({"seconds": secs, "version": b2.__version__}))
"""


def write_brian2_inputs(net: SESNN, x: np.ndarray, path: str | os.PathLike[str]) -> None:
    """Write what :data:`BRIAN2_SCRIPT` reads for ``net`` on the stimuli ``x`` to the ``.npz`` file ``path``: the
    signed recurrent matrix of ``SESNN.simulate`` (pre x post), the external drive per stimulus and step, the
    thresholds, dt, tau and the number of steps (drive and matrix rounded through float32, as ours computes)."""
    cfg = net.cfg
    ne, ni = cfg.n_e, cfg.n_i
    M = np.zeros((ne + ni, ne + ni))
    M[:ne, :ne] = cfg.ee_gain * net.W_ee.T
    M[:ne, ne:] = net.W_ie.T
    M[ne:, :ne] = -net.W_ei.T
    M[ne:, ne:] = -net.W_ii.T
    ext = np.zeros((x.shape[0], ne + ni))
    ext[:, :ne] = net.drive(x) * (cfg.dt / cfg.tau)
    theta = np.concatenate([net.theta_e, net.theta_i]).astype(np.float64)
    np.savez(path, ext=ext.astype(np.float32).astype(np.float64), M=M.astype(np.float32).astype(np.float64),
             theta=theta, dt=cfg.dt, tau=cfg.tau, n_steps=cfg.n_steps)


def brian2_compare(net: SESNN, python: str, *, n_stimuli: int = 20, seed: int = 0) -> dict[str, Any]:
    """Re-simulate ``net`` in brian2 (numpy code generation, run by the interpreter ``python`` of a peer
    environment) on ``n_stimuli`` natural-image crops: Pearson r of the spike counts and seconds per stimulus
    of both (ours batched over the stimuli)."""
    cfg = net.cfg
    imgs = builtin_images(f0=cfg.whiten_f0)
    x = sample_patches(imgs, cfg, n_stimuli, np.random.default_rng([seed, 99]))
    t0 = time.perf_counter()
    sim = net.simulate(x)
    ours_s = (time.perf_counter() - t0) / n_stimuli
    with tempfile.TemporaryDirectory(prefix="v1t-brian2-") as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npy"
        write_brian2_inputs(net, x, src)
        proc = subprocess.run([python, "-c", BRIAN2_SCRIPT, str(src), str(dst)], capture_output=True, text=True,
                              timeout=900, check=False)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return {"r": None, "note": f"brian2 did not run: {last}"}
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        peer = np.load(dst)
    ours = np.concatenate([sim.counts_e, sim.counts_i], axis=1).astype(np.float64)
    r = float(np.corrcoef(ours.ravel(), peer.ravel())[0, 1])
    peer_s = float(np.median(info["seconds"]))
    return {"r": r, "ours_s_per_stimulus": ours_s, "brian2_s_per_stimulus": peer_s, "speedup": peer_s / ours_s,
            "brian2_version": info["version"], "n_stimuli": n_stimuli, "exact_match_fraction":
            float(np.mean(ours == peer)), "note": f"brian2 {info['version']} (numpy target)"}


def default_peer_python() -> str | None:
    """The brian2 peer interpreter: ``$ICLR25_V1_TOPOLOGY_BRIAN2_PYTHON``, else the package's gitignored
    ``.peer/brian2`` environment when it exists, else ``None``."""
    env = os.environ.get("ICLR25_V1_TOPOLOGY_BRIAN2_PYTHON")
    if env:
        return env
    here = Path(__file__).resolve().parents[3] / ".peer" / "brian2" / "bin" / "python"
    return str(here) if here.exists() else None


def build_peer_env(path: str | os.PathLike[str] | None = None) -> str:
    """Build (once) the brian2 2.9 environment with numpy < 2.4 through :func:`iclr25.utils.bench.peer_env`."""
    from iclr25.utils.bench import peer_env

    folder = Path(path) if path else Path(__file__).resolve().parents[3] / ".peer" / "brian2"
    return str(peer_env(folder, ["brian2==2.9.0", "numpy==2.3.5"], python=sys.executable))
