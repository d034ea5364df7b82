"""Trajectories of a system, raw (:class:`Trajectories`) and irregularly observed for learning (:class:`TaskData`).

:class:`Trajectories` holds S trajectories of N objects over T frames at their own (possibly irregular) times on
an interaction graph: simulated by :mod:`iclr25.ms_gode.simulators` or your own arrays
(:meth:`Trajectories.from_arrays`). :func:`observe` turns them into a :class:`TaskData`: the first ``n_obs``
frames form the observed window, each object keeps a random ``sample_percent`` of them (frame 0 always), the
extrapolation targets are ``n_targets`` random frames after the window; values are min-max scaled to [-1, 1]
(per feature for particles, per species for reaction networks) and times are shifted to start at 0 and divided
by the window length ``times[n_obs] - times[0]``, as in the LG-ODE / MS-GODE loaders. Irregularly spaced
frames stay irregular.

Both live in this one module so that the simulators and the task files (:mod:`iclr25.ms_gode.data`) import it
and not each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

__all__ = ["Trajectories", "TaskData", "observe", "normalise_times"]

@dataclasses.dataclass(frozen=True)
class Trajectories:
    """Trajectories of one system: simulated here, or your own arrays (see :meth:`from_arrays`).

    Attributes
    ----------
    values : (S, N, T, D) float64 array: S simulations, N objects (balls or species), T frames, D features
        (position x, y and velocity vx, vy for particles; concentration for species).
    times : (T,) times of the frames, strictly increasing; irregular spacing is kept (never replaced by frame
        numbers).
    adjacency : (S, N, N) float array of the interaction graph (springs 0/1, charged q_i q_j = ±1, reaction
        graph 0/1); the diagonal is 0.
    system : name of the system (``"springs"``, ``"charged"``, ``"egfr"``, ``"ran"``; default ``"user"``).
    params : the settings it was simulated with (JSON-serialisable; default empty).
    node_names : names of the N objects (default ``node0 .. node{N-1}``).

    For your own data, prefer the keyword-only :meth:`from_arrays` (positions / velocities, optional times and
    edges)::

        traj = Trajectories.from_arrays(positions=pos, velocities=vel, times=t, edges=[(0, 1), (1, 2)])
        task = traj.to_task(n_obs=30)
    """

    values: np.ndarray
    times: np.ndarray
    adjacency: np.ndarray
    system: str = "user"
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    node_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim != 4:
            raise ValueError(f"values must have shape (S, N, T, D), got {values.shape}")
        s, n, t, _ = values.shape
        times = np.asarray(self.times, dtype=np.float64)
        if times.shape != (t,):
            raise ValueError(f"times must have shape ({t},) to match values, got {times.shape}")
        adjacency = np.asarray(self.adjacency, dtype=np.float64)
        if adjacency.shape == (n, n):
            adjacency = np.broadcast_to(adjacency, (s, n, n)).copy()
        if adjacency.shape != (s, n, n):
            raise ValueError(f"adjacency must have shape ({s}, {n}, {n}) or ({n}, {n}) to match values, got "
                             f"{adjacency.shape}")
        names = tuple(self.node_names) if self.node_names else tuple(f"node{i}" for i in range(n))
        if len(names) != n:
            raise ValueError(f"node_names must have {n} entries, got {len(names)}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "adjacency", adjacency)
        object.__setattr__(self, "node_names", names)
        object.__setattr__(self, "params", dict(self.params or {}))

    @classmethod
    def from_arrays(cls, *, positions: Any = None, velocities: Any = None, values: Any = None, times: Any = None,
                    edges: Any = None, system: str = "user", node_names: Sequence[str] | None = None,
                    params: dict[str, Any] | None = None) -> Trajectories:
        """Your own trajectories, by keyword; every error names the argument.

        Parameters
        ----------
        positions : (S, N, T, d) or, for one trajectory, (N, T, d) positions of N objects over T frames.
        velocities : optional, the same shape as ``positions``; concatenated after them as features.
        values : instead of positions/velocities, any (S, N, T, D) or (N, T, D) features (e.g. concentrations).
        times : optional (T,) frame times, finite and strictly increasing, in any unit and with any spacing
            (irregular times are kept and reach the encoder and the ODE solver); default ``0, 1, ..., T - 1``.
        edges : optional interaction graph: a list of undirected ``(i, j)`` pairs, an (N, N) or (S, N, N)
            adjacency matrix (the diagonal is ignored); default fully connected.
        system, node_names, params : labels kept with the data.
        """
        def arr(name: str, a: Any) -> np.ndarray:
            try:
                x = np.asarray(a, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must be a numeric array, got {type(a).__name__}") from exc
            if x.ndim == 3:
                x = x[None]
            if x.ndim != 4 or min(x.shape) < 1:
                raise ValueError(f"{name} must have shape (S, N, T, D) or (N, T, D) for one trajectory, got "
                                 f"{x.shape}")
            if not np.all(np.isfinite(x)):
                raise ValueError(f"{name} must be finite (found NaN or inf)")
            return x

        if values is not None and (positions is not None or velocities is not None):
            raise ValueError("pass either values or positions (with optional velocities), not both")
        if values is not None:
            feats = arr("values", values)
        elif positions is not None:
            feats = arr("positions", positions)
            if velocities is not None:
                vel = arr("velocities", velocities)
                if vel.shape != feats.shape:
                    raise ValueError(f"velocities must have the shape of positions {feats.shape}, got {vel.shape}")
                feats = np.concatenate([feats, vel], axis=-1)
        else:
            raise ValueError("positions (or values) is required: an (S, N, T, d) or (N, T, d) array")
        s, n, t, _ = feats.shape
        if t < 3:
            raise ValueError(f"positions/values need at least 3 frames (axis 2), got {t}")
        if times is None:
            tt = np.arange(t, dtype=np.float64)
        else:
            try:
                tt = np.asarray(times, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"times must be a numeric (T,) array, got {type(times).__name__}") from exc
            if tt.shape != (t,):
                raise ValueError(f"times must have shape ({t},): one time per frame of axis 2, got {tt.shape}")
            if not np.all(np.isfinite(tt)):
                raise ValueError("times must be finite (found NaN or inf)")
            d = np.diff(tt)
            if not np.all(d > 0):
                bad = int(np.argmin(d > 0))
                raise ValueError(f"times must be strictly increasing, got times[{bad}] = {tt[bad]:g} >= "
                                 f"times[{bad + 1}] = {tt[bad + 1]:g}")
        adj = _edges_to_adjacency(edges, s, n)
        if node_names is not None and len(node_names) != n:
            raise ValueError(f"node_names must have {n} entries (one per object), got {len(node_names)}")
        return cls(feats, tt, adj, str(system), dict(params or {}),
                   tuple(node_names) if node_names is not None else ())

    def to_task(self, **kwargs: Any) -> Any:
        """Observe and normalise for learning: :func:`observe` with ``kwargs`` (``n_obs``, ``sample_percent``,
        ``n_targets``, ``name``, ``seed``)."""
        return observe(self, **kwargs)

    def to_graph(self) -> tuple[np.ndarray, np.ndarray]:
        """The interaction graph as ``(edge_index (2, E), edge_type (E,))`` for the first simulation, with
        edge types ``1[A_ij > 0]`` (the NRI/LG-ODE convention: (A + 1) // 2 for charged)."""
        a = self.adjacency[0]
        src, dst = np.nonzero(~np.eye(a.shape[0], dtype=bool))
        return np.stack([src, dst]), (a[src, dst] > 0).astype(np.int64)


def _edges_to_adjacency(edges: Any, s: int, n: int) -> np.ndarray:
    if edges is None:
        return np.broadcast_to(np.ones((n, n)) - np.eye(n), (s, n, n)).copy()
    try:
        e = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"edges must be (i, j) pairs or an ({n}, {n}) adjacency matrix, got "
                         f"{type(edges).__name__}") from exc
    if e.shape in ((n, n), (s, n, n)) and not (e.ndim == 2 and e.shape[1] == 2 and n != 2):
        a = np.broadcast_to(e, (s, n, n)).copy()
        if not np.all(np.isfinite(a)):
            raise ValueError("edges (adjacency) must be finite")
    elif e.ndim == 2 and e.shape[1] == 2 or e.size == 0:
        e = e.reshape(-1, 2)
        if np.any(e != np.round(e)) or np.any(e < 0) or np.any(e >= n):
            raise ValueError(f"edges must be pairs of object indices in [0, {n - 1}], got {e.astype(int).tolist()[:4]}...")
        a = np.zeros((n, n))
        i, j = e.astype(np.int64).T
        a[i, j] = a[j, i] = 1.0
        a = np.broadcast_to(a, (s, n, n)).copy()
    else:
        raise ValueError(f"edges must be an (E, 2) list of (i, j) pairs, an ({n}, {n}) or ({s}, {n}, {n}) "
                         f"adjacency matrix, got shape {e.shape}")
    a[:, np.arange(n), np.arange(n)] = 0.0
    return a


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
