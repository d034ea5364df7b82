"""Tasks of continual dynamics learning: irregularly observed, normalised trajectories on a known graph.

A :class:`TaskData` holds S trajectories of N objects over T frames. The first ``n_obs`` frames form the
observed window; each object keeps a random ``sample_percent`` of them (frame 0 always), which the encoder sees.
The extrapolation targets are ``n_targets`` random frames after the window. Values are min-max scaled to
[-1, 1] (per feature for particles, per species for reaction networks) and times are shifted to start at 0 and
divided by the window length ``times[n_obs] - times[0]``, as in the LG-ODE / MS-GODE loaders. The frames'
own times are kept: irregularly spaced frames stay irregular (the encoder's time embedding, its temporal
edges and the ODE solve all use them); regular frames give ``frame / n_obs``.

Task files (``.npz``, no pickle): ``values`` (S, N, T, D) raw, ``times`` (T,), ``adjacency`` (S, N, N), and
optionally ``obs_mask``/``target_mask`` (S, N, T) booleans, ``system`` (a string) and ``params`` (JSON text).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, save_npz
from iclr25.utils.seeding import check_seed

from .simulators import Trajectories, simulate_system

__all__ = ["TaskData", "observe", "normalise_times", "load_task", "save_task", "make_task", "PHYSICS_SEQUENCE", "BIO_SEQUENCE",
           "UNSEEN_PHYSICS", "task_sequence", "cache_dir"]


@dataclasses.dataclass(frozen=True)
class TaskData:
    """One system's trajectories, normalised and irregularly observed.

    Attributes
    ----------
    values : (S, N, T, D) float32 normalised values. NaN is refused.
    obs_mask : (S, N, T) bool, the observations the encoder sees (all inside the first ``n_obs`` frames).
    target_mask : (S, N, T) bool, the extrapolation targets (all at or after frame ``n_obs``).
    times : (T,) float32 normalised times: ``(t - t_0) / (t_{n_obs} - t_0)`` of the frames' own times
        (``frame / n_obs`` for regular frames); ``params["time_origin"]`` and ``params["time_unit"]`` map back.
    adjacency : (S, N, N) float32 interaction graph (diagonal 0).
    n_obs : length of the observed window in frames.
    name : task label; ``system``: the simulator; ``params``: its settings; ``scale``: (lo, hi) used to scale.
    """

    values: np.ndarray
    obs_mask: np.ndarray
    target_mask: np.ndarray
    times: np.ndarray
    adjacency: np.ndarray
    n_obs: int
    name: str = "task"
    system: str = "unknown"
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        v = self.values
        if not isinstance(v, np.ndarray) or v.ndim != 4:
            raise ValueError(f"values must be an array of shape (S, N, T, D), got "
                             f"{getattr(v, 'shape', type(v).__name__)}")
        s, n, t, d = v.shape
        if min(s, n, t, d) < 1:
            raise ValueError(f"values must be non-empty in every axis, got shape {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("values must be finite (found NaN or inf observations)")
        for name, arr in (("obs_mask", self.obs_mask), ("target_mask", self.target_mask)):
            if arr.shape != (s, n, t):
                raise ValueError(f"{name} must have shape ({s}, {n}, {t}) to match values, got {arr.shape}")
        if self.times.shape != (t,):
            raise ValueError(f"times must have shape ({t},) to match values, got {self.times.shape}")
        if not np.all(np.diff(self.times) > 0):
            raise ValueError("times must be strictly increasing")
        if self.adjacency.shape != (s, n, n):
            raise ValueError(f"adjacency must have shape ({s}, {n}, {n}) to match values, got "
                             f"{self.adjacency.shape}")
        if not 1 <= self.n_obs < t:
            raise ValueError(f"n_obs must be in [1, {t - 1}] for {t} frames, got {self.n_obs}")
        if self.obs_mask[:, :, self.n_obs:].any():
            raise ValueError(f"obs_mask must be False from frame n_obs={self.n_obs} on")
        if self.target_mask[:, :, :self.n_obs].any():
            raise ValueError(f"target_mask must be False before frame n_obs={self.n_obs}")
        if not self.obs_mask.any(axis=2).all():
            raise ValueError("obs_mask must give every object at least one observation")

    @property
    def n_traj(self) -> int:
        return self.values.shape[0]

    @property
    def n_nodes(self) -> int:
        return self.values.shape[1]

    @property
    def n_features(self) -> int:
        return self.values.shape[3]

    def __len__(self) -> int:
        return self.n_traj

    def subset(self, idx: Sequence[int] | np.ndarray) -> TaskData:
        """The trajectories ``idx`` (same normalisation)."""
        idx = np.asarray(idx, dtype=np.int64)
        return dataclasses.replace(self, values=self.values[idx], obs_mask=self.obs_mask[idx],
                                   target_mask=self.target_mask[idx], adjacency=self.adjacency[idx])

    def split(self, fractions: Sequence[float] = (0.6, 0.2, 0.2)) -> tuple[TaskData, ...]:
        """Consecutive train/valid/test splits (the reference's 0.6/0.2/0.2)."""
        fr = np.asarray(fractions, dtype=float)
        if fr.ndim != 1 or fr.size < 1 or np.any(fr <= 0) or abs(fr.sum() - 1) > 1e-6:
            raise ValueError(f"fractions must be positive and sum to 1, got {list(fractions)}")
        if self.n_traj < fr.size:
            raise ValueError(f"cannot split {self.n_traj} trajectories into {fr.size} parts")
        cuts = np.round(np.cumsum(fr)[:-1] * self.n_traj).astype(int)
        cuts = np.clip(cuts, np.arange(1, fr.size), self.n_traj - np.arange(fr.size - 1, 0, -1))
        bounds = [0, *cuts.tolist(), self.n_traj]
        return tuple(self.subset(np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True))


def _scale(values: np.ndarray, per_node: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = (0, 2) if per_node else (0, 1, 2)
    lo = values.min(axis=axes, keepdims=True)
    hi = values.max(axis=axes, keepdims=True)
    span = np.where(hi - lo > 1e-12 * np.maximum(1.0, np.abs(hi)), hi - lo, 1.0)
    return (2 * (values - lo) / span - 1).astype(np.float32), lo.squeeze(), hi.squeeze()


def normalise_times(times: Any, n_obs: int) -> tuple[np.ndarray, float, float]:
    """The frames' times shifted to 0 and divided by the window length: ``(t - t_0) / (t_{n_obs} - t_0)``.

    Returns ``(normalised float32 times, t_0, window length)``. Times must be finite and strictly increasing.

    >>> normalise_times([0.0, 0.5, 2.0, 3.0], 2)[0].tolist()
    [0.0, 0.25, 1.0, 1.5]
    """
    t = np.asarray(times, dtype=np.float64)
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"times must be a 1-D array of at least 2 frame times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("times must be finite (found NaN or inf)")
    if not np.all(np.diff(t) > 0):
        bad = int(np.argmin(np.diff(t) > 0))
        raise ValueError(f"times must be strictly increasing, got times[{bad}] = {t[bad]:g} >= times[{bad + 1}] = "
                         f"{t[bad + 1]:g}")
    if not 1 <= n_obs < t.size:
        raise ValueError(f"n_obs must be in [1, {t.size - 1}], got {n_obs}")
    origin, unit = float(t[0]), float(t[n_obs] - t[0])
    return ((t - origin) / unit).astype(np.float32), origin, unit


def observe(traj: Trajectories, *, n_obs: int | None = None, sample_percent: float = 0.6, n_targets: int = 40,
            name: str | None = None, seed: int = 0) -> TaskData:
    """Irregularly observe and normalise simulated trajectories.

    Each object keeps ``round(sample_percent * n_obs)`` random frames of the window ``[0, n_obs)`` (frame 0
    always); ``n_targets`` random frames of ``[n_obs, T)`` are the extrapolation targets of every object.
    Particles are scaled to [-1, 1] per feature over the whole set, reaction networks per species.
    """
    vals = np.asarray(traj.values, dtype=np.float64)
    s, n, t, _ = vals.shape
    n_obs = t // 2 if n_obs is None else n_obs
    if isinstance(n_obs, bool) or not isinstance(n_obs, (int, np.integer)) or not 2 <= n_obs < t:
        raise ValueError(f"n_obs must be an integer in [2, {t - 1}], got {n_obs!r}")
    if not 0 < sample_percent <= 1:
        raise ValueError(f"sample_percent must be in (0, 1], got {sample_percent!r}")
    if isinstance(n_targets, bool) or not isinstance(n_targets, (int, np.integer)) or not 1 <= n_targets <= t - n_obs:
        raise ValueError(f"n_targets must be an integer in [1, {t - n_obs}], got {n_targets!r}")
    rng = np.random.default_rng(check_seed(seed))
    keep = max(1, int(round(sample_percent * n_obs)))
    scores = rng.random((s, n, n_obs))
    scores[:, :, 0] = -1.0  # frame 0 is always observed
    order = np.argsort(scores, axis=-1)[:, :, :keep]
    obs = np.zeros((s, n, t), dtype=bool)
    np.put_along_axis(obs[:, :, :n_obs], order, True, axis=-1)
    tgt = np.zeros((s, n, t), dtype=bool)
    future = np.argsort(rng.random((s, t - n_obs)), axis=-1)[:, :n_targets] + n_obs
    tgt[np.arange(s)[:, None], :, future] = True
    per_node = traj.system in ("egfr", "ran") or traj.values.shape[-1] == 1
    scaled, lo, hi = _scale(vals, per_node)
    times, origin, unit = normalise_times(traj.times, n_obs)
    params = {**traj.params, "sample_percent": sample_percent, "n_targets": n_targets, "observe_seed": seed,
              "scale_lo": np.asarray(lo).tolist(), "scale_hi": np.asarray(hi).tolist(),
              "time_origin": origin, "time_unit": unit}
    return TaskData(scaled, obs, tgt, times, traj.adjacency.astype(np.float32), int(n_obs),
                    name or traj.system, traj.system, params)


# ------------------------------------------------------------------------------------------------- files
def save_task(task: TaskData, path: str | os.PathLike[str]) -> Path:
    """Write ``task`` to an ``.npz`` (atomically, no pickle); :func:`load_task` reads it back exactly."""
    p = Path(path)
    if p.suffix != ".npz":
        raise ValueError(f"path must end in .npz, got {str(p)!r}")
    return save_npz(p, values=task.values, obs_mask=task.obs_mask, target_mask=task.target_mask,
                    times=task.times, adjacency=task.adjacency, n_obs=np.int64(task.n_obs),
                    name=np.str_(task.name), system=np.str_(task.system), params=np.str_(json.dumps(task.params)),
                    normalised=np.bool_(True))


def load_task(path: str | os.PathLike[str], *, what: str = "task file", n_obs: int | None = None,
              sample_percent: float = 0.6, n_targets: int | None = None, seed: int = 0) -> TaskData:
    """Read a task ``.npz``: either one written by :func:`save_task` / ``iclr25 ms-gode simulate`` or a user's
    own raw file with ``values`` (S, N, T, D), ``times`` (T,) and ``adjacency`` (N, N) or (S, N, N); a raw file
    is observed with ``n_obs`` (default T // 2), ``sample_percent`` and ``n_targets`` (default all later
    frames), unless it carries its own ``obs_mask`` / ``target_mask``. Errors name the file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such {what}")
    if p.suffix.lower() != ".npz":
        raise DataFileError(p, f"expected an .npz {what}, got suffix {p.suffix!r}")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise DataFileError(p, f"not a readable .npz {what} ({exc})") from exc
    try:
        for key in ("values", "times", "adjacency"):
            if key not in arrays:
                raise ValueError(f"missing array {key!r} (have {sorted(arrays)})")
        values = np.asarray(arrays["values"], dtype=np.float64)
        if values.ndim == 3:
            values = values[..., None]
        if values.ndim != 4:
            raise ValueError(f"values must have shape (S, N, T, D), got {values.shape}")
        s, n, t, _ = values.shape
        adj = np.asarray(arrays["adjacency"], dtype=np.float64)
        if adj.shape == (n, n):
            adj = np.broadcast_to(adj, (s, n, n)).copy()
        if adj.shape != (s, n, n):
            raise ValueError(f"adjacency must have shape ({n}, {n}) or ({s}, {n}, {n}) to match values "
                             f"{values.shape}, got {adj.shape}")
        times = np.asarray(arrays["times"], dtype=np.float64)
        if times.shape != (t,):
            raise ValueError(f"times must have shape ({t},) to match values {values.shape}, got {times.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError("values contain NaN or inf")
        system = str(arrays.get("system", "user"))
        name = str(arrays.get("name", p.stem))
        params = json.loads(str(arrays["params"])) if "params" in arrays else {}
        if bool(arrays.get("normalised", False)):
            return TaskData(values.astype(np.float32), arrays["obs_mask"].astype(bool),
                            arrays["target_mask"].astype(bool), times.astype(np.float32), adj.astype(np.float32),
                            int(arrays["n_obs"]), name, system, params)
        adj[:, np.arange(n), np.arange(n)] = 0.0
        traj = Trajectories(values, times, adj, system, params, tuple(f"node{i}" for i in range(n)))
        n_obs_ = t // 2 if n_obs is None else n_obs
        task = observe(traj, n_obs=n_obs_, sample_percent=sample_percent,
                       n_targets=(t - n_obs_) if n_targets is None else n_targets, name=name, seed=seed)
        if "obs_mask" in arrays or "target_mask" in arrays:
            task = dataclasses.replace(task, obs_mask=arrays.get("obs_mask", task.obs_mask).astype(bool),
                                       target_mask=arrays.get("target_mask", task.target_mask).astype(bool))
        return task
    except (ValueError, TypeError, KeyError, json.JSONDecodeError) as exc:
        raise DataFileError(p, str(exc)) from exc


# ------------------------------------------------------------------------------------------ task sequences
#: The default physics sequence of the paper: springs -> charged -> springs (softer, smaller box).
PHYSICS_SEQUENCE: tuple[dict[str, Any], ...] = (
    {"name": "springs5-box5-k0.1", "system": "springs", "n_balls": 5, "box": 5.0, "k": 0.1},
    {"name": "charged3-box10-k1", "system": "charged", "n_balls": 3, "box": 10.0, "k": 1.0},
    {"name": "springs5-box3-k0.01", "system": "springs", "n_balls": 5, "box": 3.0, "k": 0.01},
)
#: A system none of the physics tasks is: stiff springs (k = 4, about 3 periods per window), for the unknown check.
UNSEEN_PHYSICS: dict[str, Any] = {"name": "springs5-box5-k4", "system": "springs", "n_balls": 5, "box": 5.0,
                                  "k": 4.0}
#: The Bio-CDL substitute sequence [EGFR cfg A, Ran cfg A, EGFR cfg B, Ran cfg B] with sample% 0.4/1.0/0.4/1.0.
BIO_SEQUENCE: tuple[dict[str, Any], ...] = (
    {"name": "egfr-cfgA", "system": "egfr", "config_seed": 0, "randomise_rates": True, "sample_percent": 0.4},
    {"name": "ran-cfgA", "system": "ran", "config_seed": 0, "sample_percent": 1.0},
    {"name": "egfr-cfgB", "system": "egfr", "config_seed": 1, "randomise_rates": True, "sample_percent": 0.4},
    {"name": "ran-cfgB", "system": "ran", "config_seed": 1, "sample_percent": 1.0},
)


def cache_dir() -> Path:
    """Where simulated tasks are cached: ``$ICLR25_MS_GODE_CACHE`` or ``~/.cache/iclr25-ms-gode``."""
    return Path(os.environ.get("ICLR25_MS_GODE_CACHE", Path.home() / ".cache" / "iclr25-ms-gode"))


def make_task(spec: dict[str, Any], n_sims: int, *, n_frames: int | None = None, n_obs: int | None = None,
              n_targets: int | None = None, seed: int = 0, cache: bool | str | os.PathLike[str] = True) -> TaskData:
    """Simulate and observe one task of a sequence (a dict of :data:`PHYSICS_SEQUENCE` / :data:`BIO_SEQUENCE`),
    cached in an atomically written ``.npz`` keyed by every setting."""
    spec = dict(spec)
    name, system = spec.pop("name", spec.get("system")), spec.pop("system")
    sample_percent = spec.pop("sample_percent", 0.6)
    physics = system in ("springs", "charged")
    n_frames = n_frames or (120 if physics else 100)
    n_obs = n_obs or (n_frames // 2 if physics else int(round(0.6 * n_frames)))
    n_targets = n_targets or min(40, n_frames - n_obs)
    key = json.dumps({"v": 1, "name": name, "system": system, "spec": spec, "n": n_sims, "frames": n_frames,
                      "obs": n_obs, "targets": n_targets, "sp": sample_percent, "seed": seed}, sort_keys=True)
    path = None
    if cache is not False:
        root = cache_dir() if cache is True else Path(cache)
        path = root / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.npz"
        if path.is_file():
            try:
                return load_task(path)
            except (DataFileError, OSError):
                pass  # a corrupt cache entry is rebuilt below
    traj = simulate_system(system, n_sims, seed=seed, n_frames=n_frames, **spec)
    task = observe(traj, n_obs=n_obs, sample_percent=sample_percent, n_targets=n_targets, name=name, seed=seed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_task(task, path)
    return task


def task_sequence(which: str, n_sims: int, *, seed: int = 0, cache: bool | str | os.PathLike[str] = True,
                  **kwargs: Any) -> list[TaskData]:
    """The tasks of ``"physics"`` or ``"bio"`` (each simulated with seed ``seed + 1000 * position``)."""
    if which not in ("physics", "bio"):
        raise ValueError(f"which must be 'physics' or 'bio', got {which!r}")
    specs = PHYSICS_SEQUENCE if which == "physics" else BIO_SEQUENCE
    return [make_task(s, n_sims, seed=seed + 1000 * i, cache=cache, **kwargs) for i, s in enumerate(specs)]
