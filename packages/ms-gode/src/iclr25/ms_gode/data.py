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
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, read_npz, save_npz

from .simulators import simulate_system
from .trajectories import TaskData, Trajectories, normalise_times, observe

__all__ = ["TaskData", "observe", "normalise_times", "read_arrays", "load_task", "save_task", "make_task", "PHYSICS_SEQUENCE", "BIO_SEQUENCE",
           "UNSEEN_PHYSICS", "task_sequence", "cache_dir"]


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


def read_arrays(path: str | os.PathLike[str], *, what: str = "task file") -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` (:func:`iclr25.utils.io.read_npz`: missing, empty or not a zip is one line
    naming the file); an array of Python objects is refused in the same words, not numpy's ``allow_pickle``
    advice (``read_npz`` passes that one through when the object array sits inside a valid zip)."""
    try:
        return read_npz(path, what=what)
    except DataFileError as exc:
        if "allow_pickle" in exc.problem:
            raise DataFileError(exc.path, "holds Python objects (pickled data), which are not read for safety; "
                                          "save plain numeric arrays") from None
        raise


def load_task(path: str | os.PathLike[str], *, what: str = "task file", n_obs: int | None = None,
              sample_percent: float = 0.6, n_targets: int | None = None, seed: int = 0) -> TaskData:
    """Read a task ``.npz``: either one written by :func:`save_task` / ``iclr25 ms-gode simulate`` or a user's
    own raw file with ``values`` (S, N, T, D), ``times`` (T,) and ``adjacency`` (N, N) or (S, N, N); a raw file
    is observed with ``n_obs`` (default T // 2), ``sample_percent`` and ``n_targets`` (default all later
    frames), unless it carries its own ``obs_mask`` / ``target_mask``. Errors name the file."""
    p = Path(path)
    arrays = read_arrays(p, what=what)
    try:
        for key in ("values", "times", "adjacency"):
            if key not in arrays:
                raise ValueError(f"missing array {key!r} (have {sorted(arrays)})")
        # complex, non-finite or overflowing numbers are refused (never cast to their real part)
        values = np.asarray(check_real(arrays["values"], "values"), dtype=np.float64)
        if values.ndim == 3:
            values = values[..., None]
        if values.ndim != 4:
            raise ValueError(f"values must have shape (S, N, T, D), got {values.shape}")
        s, n, t, _ = values.shape
        adj = np.asarray(check_real(arrays["adjacency"], "adjacency"), dtype=np.float64)
        if adj.shape == (n, n):
            adj = np.broadcast_to(adj, (s, n, n)).copy()
        if adj.shape != (s, n, n):
            raise ValueError(f"adjacency must have shape ({n}, {n}) or ({s}, {n}, {n}) to match values "
                             f"{values.shape}, got {adj.shape}")
        times = np.asarray(check_real(arrays["times"], "times"), dtype=np.float64)
        if times.shape != (t,):
            raise ValueError(f"times must have shape ({t},) to match values {values.shape}, got {times.shape}")
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
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_task(task, path)
        except OSError:
            pass  # a cache that cannot be written (read-only home, full disk) only costs the next call a simulation
    return task


def task_sequence(which: str, n_sims: int, *, seed: int = 0, cache: bool | str | os.PathLike[str] = True,
                  **kwargs: Any) -> list[TaskData]:
    """The tasks of ``"physics"`` or ``"bio"`` (each simulated with seed ``seed + 1000 * position``)."""
    if which not in ("physics", "bio"):
        raise ValueError(f"which must be 'physics' or 'bio', got {which!r}")
    specs = PHYSICS_SEQUENCE if which == "physics" else BIO_SEQUENCE
    return [make_task(s, n_sims, seed=seed + 1000 * i, cache=cache, **kwargs) for i, s in enumerate(specs)]
