"""Built-in data sets: KS and viscous Burgers trajectories observed through a lossy operator, cached to .npz.

``ks(n, nu, L, resolution, noise, seed)`` solves on a 512-point grid with ETDRK4, then observes the solution
on ``resolution`` points (sub-sampling, optional Fourier truncation, optional noise). The same seed gives the
same trajectories at every resolution, which is what resolution-transfer experiments need.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iclr25.utils.guards import check_real
from iclr25.utils.io import DataFileError, read_npz, save_npz
from iclr25.utils.seeding import check_seed

from .observation import add_noise, fourier_truncate, subsample

#: The largest magnitude a data set's ``u`` may have: the models compute in float32, whose squares overflow above
#: about 1.8e19.
FLOAT32_MAX_ABS = 1e18

if TYPE_CHECKING:
    from .solver import Trajectories

# The solvers (torch) are imported when data are generated, so that reading a data set (`load_dataset`, the
# `train` command's file checks) does not need torch.

__all__ = ["PDEDataset", "ks", "burgers", "observe", "load_dataset"]


@dataclasses.dataclass(frozen=True)
class PDEDataset:
    """Observed trajectories of a time-dependent PDE.

    Attributes
    ----------
    u : np.ndarray, shape (n, n_t, resolution), float32
        What a model sees (sub-sampled, possibly filtered and noisy).
    target : np.ndarray, shape (n, n_t, resolution), float32
        The same observation without noise (equal to ``u`` when ``noise == 0``): the training and test targets.
    x : np.ndarray, shape (resolution,)
        Grid points in ``[0, L)``.
    t : np.ndarray, shape (n_t,)
        Times.
    params : dict
        How the data were made (pde, nu, length, resolution, noise, seed, solver settings).
    """

    u: np.ndarray
    target: np.ndarray
    x: np.ndarray
    t: np.ndarray
    params: dict[str, Any]

    @property
    def resolution(self) -> int:
        return int(self.u.shape[-1])

    def __len__(self) -> int:
        return int(self.u.shape[0])

    def split(self, n_train: int) -> tuple[PDEDataset, PDEDataset]:
        """The first ``n_train`` trajectories and the rest."""
        if not isinstance(n_train, int) or not 0 < n_train < len(self):
            raise ValueError(f"n_train must be an integer in (0, {len(self)}), got {n_train!r}")
        a = dataclasses.replace(self, u=self.u[:n_train], target=self.target[:n_train])
        b = dataclasses.replace(self, u=self.u[n_train:], target=self.target[n_train:])
        return a, b

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the data set and its parameters to ``path`` (.npz, atomically)."""
        return save_npz(path, u=self.u, target=self.target, x=self.x, t=self.t,
                        params=np.array(json.dumps(self.params, sort_keys=True)))


def load_dataset(path: str | os.PathLike[str]) -> PDEDataset:
    """Read a data set written by :meth:`PDEDataset.save` (or ``iclr25 memno generate``).

    Raises
    ------
    FileNotFoundError
        No such file.
    DataFileError
        The file is empty, not an .npz, or not such a data set (missing arrays, wrong shapes or dtypes,
        non-finite values).
    """
    p = Path(path)
    arrays = read_npz(p, required=("u", "target", "x", "t", "params"), what="memno data set")
    u, target = arrays["u"], arrays["target"]
    for name in ("u", "target", "x", "t"):
        if arrays[name].dtype.kind not in "fiu":
            raise DataFileError(p, f"{name} must be a real numeric array, got dtype {arrays[name].dtype}")
    if u.ndim != 3 or target.shape != u.shape:
        raise DataFileError(p, f"u and target must have the same shape (n, n_t, resolution), got "
                            f"{u.shape} and {target.shape}")
    if arrays["x"].shape != (u.shape[2],) or arrays["t"].shape != (u.shape[1],):
        raise DataFileError(p, f"x must have shape ({u.shape[2]},) and t shape ({u.shape[1]},)")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(target))):
        raise DataFileError(p, "u and target must be finite (no NaN or inf)")
    for name, arr in (("u", u), ("target", target)):
        try:  # the models run in float32: larger entries overflow there (1e200 became inf, then a NaN loss)
            check_real(arr, name, max_abs=FLOAT32_MAX_ABS)
        except (TypeError, ValueError) as exc:
            raise DataFileError(p, str(exc)) from None
    try:
        params = json.loads(str(arrays["params"]))
    except json.JSONDecodeError as exc:
        raise DataFileError(p, f"params is not JSON: {exc}") from exc
    return PDEDataset(u=u.astype(np.float32), target=target.astype(np.float32), x=arrays["x"], t=arrays["t"],
                      params=params)


def observe(traj: Trajectories, resolution: int, *, noise: float = 0.0, n_modes: int | None = None,
            seed: int = 0) -> PDEDataset:
    """Observe full-grid trajectories on ``resolution`` points.

    ``n_modes=None`` sub-samples (aliasing included); an integer keeps the Fourier modes ``|m| < n_modes``
    instead. ``noise`` adds Gaussian noise of standard deviation ``noise · std(u)`` to the inputs ``u`` only;
    ``target`` stays noise-free.
    """
    seed = check_seed(seed)
    clean = subsample(traj.u, resolution) if n_modes is None else fourier_truncate(traj.u, n_modes,
                                                                                   resolution=resolution)
    noisy = add_noise(clean, noise, seed=seed + 1)  # validates noise; a copy when noise == 0
    x = np.arange(resolution) * (traj.length / resolution)
    params = {"pde": traj.pde, "nu": traj.nu, "length": traj.length, "resolution": int(resolution),
              "noise": float(noise), "n_modes": n_modes, "seed": seed, "n": int(traj.u.shape[0]),
              "n_x_solver": int(traj.u.shape[-1]), "t_final": float(traj.t[-1]),
              "save_dt": float(traj.t[1] - traj.t[0])}
    return PDEDataset(u=noisy.astype(np.float32), target=clean.astype(np.float32), x=x, t=traj.t, params=params)


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (number of trajectories) must be a positive integer, got {n!r}")
    return int(n)


def _solver(pde: str) -> tuple[Any, Any]:
    """The solve function and initial-condition sampler of ``pde`` (imports torch)."""
    from .solver import burgers_initial_condition, ks_initial_condition, solve_burgers, solve_ks  # noqa: PLC0415

    return {"ks": (solve_ks, ks_initial_condition), "burgers": (solve_burgers, burgers_initial_condition)}[pde]


def _initial_state(u0: np.ndarray, device: Any) -> Any:
    """``u0`` as a float64 torch tensor on ``device``, where the solver then runs (imports torch)."""
    import torch  # noqa: PLC0415

    from iclr25.utils.device import torch_device  # noqa: PLC0415

    dev = torch_device(device)
    if dev.type == "mps":
        raise ValueError("--device mps: the ETDRK4 solver computes in float64, which MPS lacks; use cpu or cuda")
    return torch.as_tensor(u0, dtype=torch.float64, device=dev)


def _generate(pde: str, n: Any, nu: Any, L: Any, resolution: int, noise: float, *, seed: int, n_x: int,
              t_final: float, dt: float, save_dt: float, n_modes: int | None, t_burn: float,
              cache: str | os.PathLike[str] | None, device: Any = "cpu") -> PDEDataset:
    # the body of ks() and burgers(): validate, reuse a matching cache, else solve, observe and cache
    n = _check_n(n)
    from .solver import _check_positive  # noqa: PLC0415

    nu, L = _check_positive("nu", nu), _check_positive("L", L)
    seed = check_seed(seed)
    params = {"pde": pde, "nu": nu, "length": L, "resolution": resolution, "noise": float(noise),
              "n_modes": n_modes, "seed": seed, "n": n, "n_x_solver": n_x, "t_final": float(t_final),
              "save_dt": float(save_dt), "t_burn": float(t_burn)}
    if cache is not None and Path(cache).is_file():
        try:
            data = load_dataset(cache)
        except DataFileError:
            data = None
        if data is not None and data.params == params:
            return data
    solve, initial_condition = _solver(pde)
    traj = solve(_initial_state(initial_condition(n, n_x, L, seed=seed), device), nu=nu, length=L,
                 t_final=t_final, dt=dt, save_dt=save_dt, t_burn=t_burn)
    data = observe(traj, resolution, noise=noise, n_modes=n_modes, seed=seed)
    data = dataclasses.replace(data, params={**data.params, **params})
    if cache is not None:
        data.save(cache)
    return data


def ks(n: int = 256, nu: float = 0.075, L: float = 64.0, resolution: int = 32, noise: float = 0.0, *,
       seed: int = 0, n_x: int = 512, t_final: float = 2.5, dt: float = 0.005, save_dt: float = 0.1,
       n_modes: int | None = None, t_burn: float = 0.0, cache: str | os.PathLike[str] | None = None,
       device: Any = "cpu") -> PDEDataset:
    """Kuramoto-Sivashinsky trajectories ``u_t + u u_x + u_xx + ν u_xxxx = 0`` observed at ``resolution``.

    Solved with ETDRK4 on ``n_x = 512`` points (``dt = 0.005``), saved every 0.1 up to ``T = 2.5`` (26 frames),
    from random sine-sum initial conditions (:func:`~iclr25.memno.solver.ks_initial_condition`).

    Parameters
    ----------
    n : int
        Number of trajectories.
    nu : float
        Viscosity (the paper's low-viscosity, high-frequency regime is ``ν ≲ 0.15``).
    L : float
        Domain length.
    resolution : int
        Observed grid size (divides ``n_x``).
    noise : float
        Observation noise as a fraction of ``std(u)`` (inputs only).
    seed : int, keyword-only
        Seed of the initial conditions (and, plus one, of the noise).
    n_modes : int or None
        Observe by Fourier truncation instead of sub-sampling.
    t_burn : float
        Solve this long first and discard it (start the recorded window in developed chaos).
    cache : path or None
        An .npz file: reused when its parameters match, else (re)generated and written atomically.
    device : str, keyword-only
        Where the solver runs, in float64 (the chaotic KS dynamics needs it; so not on ``mps``). Default ``"cpu"``:
        the same trajectories on every machine, in seconds; ``"cuda"`` for large sets (``None``: ``auto``).

    References: paper §5 and Fig. 1 (KS, T = 2.5, N_t = 25, ground truth at 512).
    """
    return _generate("ks", n, nu, L, resolution, noise, seed=seed, n_x=n_x, t_final=t_final, dt=dt,
                     save_dt=save_dt, n_modes=n_modes, t_burn=t_burn, cache=cache, device=device)


def burgers(n: int = 256, nu: float = 0.01, L: float = 2 * math.pi, resolution: int = 32, noise: float = 0.0, *,
            seed: int = 0, n_x: int = 512, t_final: float = 2.5, dt: float = 0.005, save_dt: float = 0.1,
            n_modes: int | None = None, t_burn: float = 0.0, cache: str | os.PathLike[str] | None = None,
            device: Any = "cpu") -> PDEDataset:
    """Viscous Burgers trajectories ``u_t + u u_x = ν u_xx`` observed at ``resolution`` (see :func:`ks`, also for
    ``device``).

    References: paper §5 (Burgers experiments).
    """
    return _generate("burgers", n, nu, L, resolution, noise, seed=seed, n_x=n_x, t_final=t_final, dt=dt,
                     save_dt=save_dt, n_modes=n_modes, t_burn=t_burn, cache=cache, device=device)
