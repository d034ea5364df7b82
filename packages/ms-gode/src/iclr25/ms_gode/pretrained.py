"""Small MS-GODE models shipped in the wheel, and mode switching measured over many fresh test batches.

Training MS-GODE to the rung where mode switching is reliable takes longer than the demo's 60 s on a shared
2-core machine, so the demo loads a checkpoint trained once at that rung: the physics sequence
(springs → charged → springs) learned by ``iclr25 ms-gode pretrain --seed S`` (:data:`PRETRAIN`: simulations,
epochs, widths). The files are ``checkpoints/physics-seed{S}.npz`` (bit-packed masks and LayerNorms written by
:meth:`~iclr25.ms_gode.continual.MSGODE.export_state`, no pickle) and ``physics-seed{S}.json`` beside it (the
command, the seed, the settings, the measurements made when it was written).

:func:`measure` scores a learner on **fresh** test tasks simulated with seeds it never saw: the fraction of test
batches given their own sub-network (with its Wilson 95 % interval and the per-task fractions), the MSE matrix
``acc[i][j]`` (task j with mode switching among the masks learned up to task i, which the final model reproduces
exactly because later tasks change nothing of earlier ones), AP-MSE, AF-MSE, the oracle-mask MSEs, and how
often an unseen system (stiff springs, k = 4) and the known tasks are flagged unknown.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PRETRAIN", "PretrainScale", "checkpoint_path", "load_pretrained", "save_checkpoint", "shipped_folder",
           "train_pretrained", "measure", "wilson_interval", "TEST_SEED_OFFSET", "TEST_BATCHES", "TEST_BATCH_SIZE", "record",
           "learner_for_seed", "trained_folder", "window_features", "centroid_task_accuracy"]

#: fresh test tasks are simulated with seed ``TEST_SEED_OFFSET + seed (+ 1000 * task)``: never a training seed
TEST_SEED_OFFSET = 50_000
#: mode switching is scored per test batch of ``TEST_BATCH_SIZE`` trajectories of one system (the paper's batch
#: of 10), ``TEST_BATCHES`` batches per task: 48 decisions per seed over the 3 physics tasks
TEST_BATCH_SIZE = 10
TEST_BATCHES = 16


@dataclasses.dataclass(frozen=True)
class PretrainScale:
    """The rung of the shipped checkpoints (MS-GODE only: scores and LayerNorms per task)."""

    n_train: int = 36
    n_valid: int = 12
    epochs: int = 16
    batch_size: int = 6
    lr: float = 5e-2
    hidden: int = 24
    ode_hidden: int = 24
    augment: int = 8


PRETRAIN = PretrainScale()


def shipped_folder() -> Path:
    """The folder of the shipped checkpoints (``checkpoints/`` in the package), with its ``manifest.json``."""
    return Path(str(resources.files("iclr25.ms_gode") / "checkpoints"))


def checkpoint_path(seed: int = 0, sequence: str = "physics", folder: str | os.PathLike[str] | None = None) -> Path:
    """The checkpoint ``{sequence}-seed{seed}.npz`` in ``folder`` (default: the shipped one; FileNotFoundError
    naming the seed)."""
    p = (shipped_folder() if folder is None else Path(folder)) / f"{sequence}-seed{seed}.npz"
    if not p.is_file():
        have = sorted(q.stem for q in p.parent.glob("*.npz")) if p.parent.is_dir() else []
        where = "shipped" if folder is None else f"in {p.parent}"
        raise FileNotFoundError(f"no {'shipped ' if folder is None else ''}checkpoint for seed {seed} ({where}: "
                                f"{', '.join(have) or 'none'}); make one with "
                                f"`iclr25 ms-gode pretrain --seed {seed} --out DIR`")
    return p


def load_pretrained(seed: int = 0, sequence: str = "physics",
                    folder: str | os.PathLike[str] | None = None) -> tuple[Any, dict[str, Any]]:
    """``(MSGODE learner, its .json record)`` of the checkpoint of ``seed`` in ``folder`` (default: the shipped
    one, or a ``pretrain --out`` folder). The folder's ``manifest.json`` must list both files with the hashes
    they have now: a checkpoint whose weights and record come from different saves, or whose save was cut
    short, is refused in one line (:class:`iclr25.utils.checkpoints.CheckpointError`)."""
    from iclr25.utils.checkpoints import verify_manifest  # noqa: PLC0415

    from .continual import MSGODE  # noqa: PLC0415

    p = checkpoint_path(seed, sequence, folder)
    meta_p = p.with_suffix(".json")
    verify_manifest(p.parent, [p.name, meta_p.name], what="checkpoint folder")
    try:
        meta = json.loads(meta_p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{meta_p}: not a checkpoint record ({exc})") from None
    return MSGODE.load_state(p), meta


def save_checkpoint(folder: str | os.PathLike[str], seed: int, learner: Any, rec: dict[str, Any],
                    sequence: str = "physics") -> Path:
    """Write ``{sequence}-seed{seed}.npz`` and its ``.json`` record into ``folder`` (each atomically), then the
    folder's ``manifest.json`` last. The manifest keeps the other checkpoints it listed whose files are
    unchanged (several seeds share a folder, as in the shipped one). Returns the ``.npz`` path."""
    from iclr25.utils.checkpoints import MANIFEST, file_sha256, start_save, write_manifest  # noqa: PLC0415
    from iclr25.utils.io import atomic_write  # noqa: PLC0415

    out = Path(folder)
    npz = out / f"{sequence}-seed{seed}.npz"
    mine = {npz.name, npz.with_suffix(".json").name}
    kept: list[str] = []
    man = out / MANIFEST
    if man.is_file() and not man.is_symlink():
        try:
            listed = json.loads(man.read_text(encoding="utf-8")).get("files", {})
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            listed = {}
        for name, entry in listed.items() if isinstance(listed, dict) else ():
            part = out / str(name)
            if (name not in mine and "/" not in str(name) and isinstance(entry, dict) and part.is_file()
                    and not part.is_symlink() and file_sha256(part) == entry.get("sha256")):
                kept.append(str(name))
    out.mkdir(parents=True, exist_ok=True)
    start_save(out)
    learner.export_state(npz)
    with atomic_write(npz.with_suffix(".json")) as f:
        f.write(json.dumps(rec, indent=1) + "\n")
    write_manifest(out, sorted({*kept, *mine}), meta={"format": "iclr25-ms-gode checkpoints"})
    return npz


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial fraction k / n (95 % for z = 1.96)."""
    if n <= 0:
        return (float("nan"), float("nan"))
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


def _split(task: Any, n_train: int, n_valid: int) -> tuple[Any, Any]:
    return task.subset(np.arange(n_train)), task.subset(np.arange(n_train, n_train + n_valid))


def train_pretrained(seed: int, scale: PretrainScale = PRETRAIN, *, cache: bool = True,
                     after_task: Callable[[Any, int], None] | None = None,
                     n_tasks: int | None = None) -> tuple[Any, float]:
    """Learn the physics sequence at ``scale`` (simulation seeds ``seed + 1000 * task``, as ``repro``; its first
    ``n_tasks`` tasks if given); ``after_task(learner, j)`` is called after task j is learned. Returns ``(learner,
    CPU seconds)``. The learner computes on ``$ICLR25_DEVICE``, else ``auto``."""
    import torch  # noqa: PLC0415

    from .continual import MSGODE, TrainConfig  # noqa: PLC0415
    from .data import task_sequence  # noqa: PLC0415
    from .model import ModelConfig  # noqa: PLC0415

    torch.set_num_threads(1)
    t0 = time.process_time()
    tasks = task_sequence("physics", scale.n_train + scale.n_valid, seed=seed, cache=cache)[:n_tasks]
    learner = MSGODE(tasks[0].n_features,
                     ModelConfig(hidden=scale.hidden, ode_hidden=scale.ode_hidden, augment=scale.augment),
                     TrainConfig(epochs=scale.epochs, batch_size=scale.batch_size, lr=scale.lr), seed=seed)
    for t in tasks:
        tr, va = _split(t, scale.n_train, scale.n_valid)
        learner.fit_task(tr, valid=va)
        if after_task is not None:
            after_task(learner, learner.n_tasks - 1)
    return learner, time.process_time() - t0


_TRAINING_SOURCES = ("continual.py", "model.py", "layers.py", "trajectories.py", "simulators.py", "data.py",
                     "pretrained.py")


def trained_folder(scale: PretrainScale = PRETRAIN) -> Path:
    """Where :func:`learner_for_seed` keeps the checkpoints it trained for seeds that ship none: a folder of the
    simulation cache (:func:`iclr25.ms_gode.data.cache_dir`) named by a hash of ``scale``, torch's version and
    the package's training sources, so a change to any of them trains afresh."""
    import hashlib  # noqa: PLC0415

    import torch  # noqa: PLC0415

    from .data import cache_dir  # noqa: PLC0415

    h = hashlib.sha256(json.dumps(dataclasses.asdict(scale), sort_keys=True).encode())
    h.update(torch.__version__.encode())
    here = Path(__file__).parent
    for name in _TRAINING_SOURCES:
        h.update((here / name).read_bytes())
    return cache_dir() / f"trained-{h.hexdigest()[:16]}"


def learner_for_seed(seed: int, scale: PretrainScale = PRETRAIN, *, shipped: bool = True,
                     cache: bool = True) -> tuple[Any, str]:
    """``(MSGODE learner, where it came from)`` for ``seed``: the shipped checkpoint when there is one (and
    ``shipped``), else one trained here by :func:`train_pretrained` at ``scale`` (about 25 s CPU) and kept in
    :func:`trained_folder` (a later call loads it; ``cache=False`` neither reads nor writes it)."""
    if shipped and scale == PRETRAIN and (shipped_folder() / f"physics-seed{seed}.npz").is_file():
        return load_pretrained(seed)[0], "shipped"
    folder = trained_folder(scale)
    if cache and (folder / f"physics-seed{seed}.npz").is_file():
        try:
            return load_pretrained(seed, folder=folder)[0], "trained here (cached)"
        except (OSError, ValueError):
            pass  # an unreadable cache entry is trained again below
    learner, cpu = train_pretrained(seed, scale)
    if cache:
        try:
            save_checkpoint(folder, seed, learner, {"command": f"iclr25 ms-gode pretrain --seed {seed} --out DIR",
                                                    "seed": seed, "scale": dataclasses.asdict(scale),
                                                    "train_cpu_seconds": round(cpu, 1),
                                                    "task_names": list(learner.task_names)})
        except OSError:
            pass  # a read-only cache only costs the next call a retraining
    return learner, "trained here"


def window_features(task: Any) -> np.ndarray:
    """Per trajectory, statistics of the observed window only (what mode switching sees): the mean, standard
    deviation and mean absolute frame-to-frame change of every feature over the observed frames, ``(S, 3 D)``."""
    v = task.values[:, :, :task.n_obs].astype(np.float64)  # (S, N, T_obs, D)
    m = task.obs_mask[:, :, :task.n_obs, None].astype(np.float64)
    cnt = np.maximum(m.sum(axis=(1, 2)), 1.0)
    mean = (v * m).sum(axis=(1, 2)) / cnt
    sd = np.sqrt(np.maximum(((v - mean[:, None, None]) ** 2 * m).sum(axis=(1, 2)) / cnt, 0.0))
    both = m[:, :, 1:] * m[:, :, :-1]
    step = (np.abs(np.diff(v, axis=2)) * both).sum(axis=(1, 2)) / np.maximum(both.sum(axis=(1, 2)), 1.0)
    return np.concatenate([mean, sd, step], axis=1)


def centroid_task_accuracy(train: Sequence[Any], tests: Sequence[Any], *,
                           batch_size: int = TEST_BATCH_SIZE) -> dict[str, Any]:
    """The strongest simple rival of mode switching: a batch of ``batch_size`` test trajectories goes to the task
    whose training trajectories' mean :func:`window_features` is nearest (features standardised by the
    training sets' spread), no model involved. Returns the fraction of batches given their own task and the
    fraction per task (the same batches :func:`measure` scores)."""
    feats = [window_features(t) for t in train]
    allf = np.concatenate(feats)
    mu, sd = allf.mean(axis=0), allf.std(axis=0) + 1e-12
    cents = np.stack([((f - mu) / sd).mean(axis=0) for f in feats])
    per_task = []
    for j, te in enumerate(tests):
        f = (window_features(te) - mu) / sd
        hits = [int(np.argmin(((f[b:b + batch_size].mean(axis=0) - cents) ** 2).sum(axis=1))) == j
                for b in range(0, len(te) - batch_size + 1, batch_size)]
        per_task.append(float(np.mean(hits)))
    return {"fraction": float(np.mean(per_task)), "per_task": per_task}


def _pred_mse(learner: Any, tt: Any, idx: np.ndarray, mask: int, cache: dict[int, float]) -> float:
    """Extrapolation MSE of batch ``idx`` with sub-network ``mask`` (cached per batch)."""
    import torch  # noqa: PLC0415

    if mask not in cache:
        learner.model.set_task(mask)
        with torch.no_grad():
            cache[mask] = float(learner.model.loss(tt.batch(idx), sample=False).mse)
    return cache[mask]


def measure(learner: Any, *, seed: int = 0, n_batches: int = TEST_BATCHES, batch_size: int = TEST_BATCH_SIZE,
            n_unseen_batches: int = 4, errors: bool = True,
            cache: bool | str | os.PathLike[str] = True) -> dict[str, Any]:
    """Score ``learner`` (trained on the physics sequence) on fresh test tasks: ``n_batches`` batches of
    ``batch_size`` trajectories per task, simulated with seed ``TEST_SEED_OFFSET + seed``. ``errors=False``
    skips the extrapolation MSEs (``acc``, ``oracle_mse``, AP/AF-MSE are then ``None``): mode switching and the
    unknown flags only, what the ``test`` rung's claims read."""
    import torch  # noqa: PLC0415

    from .data import UNSEEN_PHYSICS, make_task, task_sequence  # noqa: PLC0415

    torch.set_num_threads(1)
    n = n_batches * batch_size
    k = learner.n_tasks
    tests = task_sequence("physics", n, seed=TEST_SEED_OFFSET + seed, cache=cache)[:k]
    acc = np.zeros((k, k))
    oracle = np.zeros(k)
    per_task_hits: list[list[bool]] = []
    known_unknown: list[bool] = []
    for j, te in enumerate(tests):
        tt = learner._tt(te)
        hits = []
        for b in range(0, len(te), batch_size):
            idx = np.arange(b, min(b + batch_size, len(te)))
            # one self-prediction per mask serves every prefix of masks (the learner right after task i)
            sel = learner.select_mode(te, idx)
            crit = learner._criterion(sel.losses, sel.mses)
            mse_of: dict[int, float] = {}
            if errors:
                oracle[j] += _pred_mse(learner, tt, idx, j, mse_of) / n_batches
                for i in range(j, k):
                    best = int(np.argmin(crit[:i + 1]))
                    acc[i, j] += _pred_mse(learner, tt, idx, best, mse_of) / n_batches
            hits.append(sel.best == j)
            known_unknown.append(sel.unknown)
        per_task_hits.append(hits)
    acc[np.triu_indices(k, 1)] = np.nan
    unseen = make_task(UNSEEN_PHYSICS, n_unseen_batches * batch_size, seed=TEST_SEED_OFFSET + seed + 99,
                       cache=cache)
    flagged = [learner.select_mode(unseen, np.arange(b, b + batch_size)).unknown
               for b in range(0, len(unseen), batch_size)]
    hits = sum(sum(h) for h in per_task_hits)
    total = sum(len(h) for h in per_task_hits)
    lo, hi = wilson_interval(hits, total)
    from .continual import af_mse, ap_mse  # noqa: PLC0415

    return {"mode_fraction": hits / total, "mode_hits": int(hits), "mode_batches": int(total),
            "mode_ci95": [lo, hi], "mode_per_task": [float(np.mean(h)) for h in per_task_hits],
            "acc": [[None if math.isnan(v) else v for v in row] for row in acc.tolist()] if errors else None,
            "oracle_mse": oracle.tolist() if errors else None, "ap_mse": ap_mse(acc) if errors else None,
            "af_mse": af_mse(acc) if errors else None, "oracle_ap_mse": float(np.mean(oracle)) if errors else None,
            "unknown_unseen": float(np.mean(flagged)), "unseen_batches": len(flagged),
            "unknown_known": float(np.mean(known_unknown)), "known_batches": len(known_unknown),
            "batch_size": batch_size, "test_seed": TEST_SEED_OFFSET + seed}


def record(learner: Any, seed: int, measured: dict[str, Any], *, train_cpu_s: float | None = None,
           scale: PretrainScale = PRETRAIN) -> dict[str, Any]:
    """The ``.json`` written beside a checkpoint: the command that makes it, its seed and settings, and what it
    measured on fresh test tasks (:func:`measure`)."""
    from importlib.metadata import version  # noqa: PLC0415

    return {"command": f"iclr25 ms-gode pretrain --seed {seed} --out DIR", "seed": seed,
            "package_version": version("iclr25-ms-gode"), "scale": dataclasses.asdict(scale),
            "train_cpu_seconds": None if train_cpu_s is None else round(train_cpu_s, 1),
            "task_names": list(learner.task_names), "measured_on_fresh_test_tasks": measured}
