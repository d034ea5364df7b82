"""Readers for the paper's data formats: PDEBench HDF5 and FNO-style ``.mat``, besides the package's ``.npz``.

``read_data(path, resolution=..., noise=..., field=..., time_stride=..., n=...)`` picks the reader by extension
and returns ``(PDEDataset, description)``; the description names the arrays used (``train --data`` prints it).

* ``.h5`` / ``.hdf5`` (PDEBench, needs ``h5py``: ``pip install 'iclr25-memno[data]'``):
  1-D files (Burgers, advection, diffusion-reaction) hold ``tensor`` of shape ``(n, n_t, n_x)`` with
  ``x-coordinate`` ``(n_x,)`` and ``t-coordinate`` (``n_t`` or ``n_t + 1`` entries); compressible-flow (CFD) files
  hold ``density``, ``pressure``, ``Vx`` (``Vy``, ``Vz``) of shape ``(n, n_t, n_x[, n_y])`` with ``x-coordinate``
  (``y-coordinate``) and ``t-coordinate``. ``field`` picks the array (default ``tensor``, else ``density``).
* ``.mat`` (FNO's Navier-Stokes files): ``u`` of shape ``(n, n_x, n_y, T)`` (2-D) or ``(n, n_x, T)`` (1-D), the
  initial state ``a`` ``(n, n_x[, n_y])`` prepended when present, and ``t`` ``(1, T)``. MATLAB v5 files are read
  with ``scipy.io``; v7.3 files are HDF5 (``h5py``, axes reversed as MATLAB stores them).
* ``.npz``: the package's own layout (:func:`iclr25.memno.datasets.load_dataset`).

The observation options are the paper's lossy operators: ``resolution`` sub-samples every spatial axis to that
many points (it must divide the grid), ``noise`` adds Gaussian noise of ``noise · std(u)`` to the inputs only
(``target`` stays clean). HDF5 arrays are read in blocks of trajectories with the sub-sampling applied inside
the file read, so memory holds the low-resolution result and one block, never the full-resolution file; a
request whose result cannot fit in memory is refused with an estimate before anything is read. Every problem
with a file is one ``DataFileError`` line naming it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.guards import check_size
from iclr25.utils.io import DataFileError, existing_file

from .datasets import FLOAT32_MAX_ABS, PDEDataset, load_dataset
from .observation import add_noise

__all__ = ["read_data", "read_pdebench", "read_fno_mat", "SUFFIXES", "BLOCK_BYTES"]

SUFFIXES = (".npz", ".h5", ".hdf5", ".mat")
#: Bytes of full-resolution data read per block (HDF5): bounds the reader's working memory.
BLOCK_BYTES = 64 * 2**20
_CFD_FIELDS = ("density", "pressure", "Vx", "Vy", "Vz")
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _h5py(p: Path) -> Any:
    try:
        import h5py  # noqa: PLC0415 - optional extra
    except ImportError:
        raise ImportError(f"{p}: reading HDF5 needs h5py: pip install 'iclr25-memno[data]'") from None
    return h5py


def _stride(n: int, resolution: int | None, p: Path, axis: str) -> int:
    if resolution is None:
        return 1
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 1:
        raise ValueError(f"--resolution must be a positive integer, got {resolution!r}")
    if resolution > n or n % resolution:
        raise ValueError(f"--resolution {resolution} must divide the {axis} grid size {n} of {p}")
    return n // resolution


def _check_options(noise: float, time_stride: int, n: int | None) -> None:
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not math.isfinite(noise) or noise < 0:
        raise ValueError(f"--noise must be a finite number >= 0 (a fraction of std(u)), got {noise!r}")
    if isinstance(time_stride, bool) or not isinstance(time_stride, (int, np.integer)) or time_stride < 1:
        raise ValueError(f"--time-stride must be a positive integer, got {time_stride!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"--n must be a positive integer, got {n!r}")


def _finish(p: Path, clean: np.ndarray, x: np.ndarray, t: np.ndarray, noise: float, seed: int,
            params: dict[str, Any]) -> PDEDataset:
    if not np.all(np.isfinite(clean)):
        raise DataFileError(p, "the field holds NaN or inf")
    if clean.size and float(np.abs(clean).max()) > FLOAT32_MAX_ABS:
        raise DataFileError(p, f"the field has entries beyond {FLOAT32_MAX_ABS:g} in magnitude; rescale it")
    clean = clean.astype(np.float32, copy=False)
    u = clean if noise == 0 else add_noise(clean, noise, seed=seed + 1).astype(np.float32)
    params = {**params, "noise": float(noise), "seed": int(seed), "n": int(clean.shape[0]),
              "resolution": int(clean.shape[-1]), "spatial_dims": clean.ndim - 2}
    return PDEDataset(u=u, target=clean, x=np.asarray(x, dtype=np.float64), t=np.asarray(t, dtype=np.float64),
                      params=params)


def _need(p: Path, n: int, n_t: int, spatial: tuple[int, ...], block: int, force: bool) -> None:
    out = n * n_t * math.prod(spatial) * 4
    check_size(f"reading {p} ({n} trajectories x {n_t} times x {'x'.join(map(str, spatial))} points)",
               bytes_needed=3 * out + block, force=force)


def _times(t: Any, n_t: int, p: Path, name: str) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64).ravel()
    if t.size == n_t + 1:  # PDEBench's 1-D files store one more time than the tensor has (the final time)
        t = t[:n_t]
    if t.size != n_t:
        raise DataFileError(p, f"{name} has {t.size} entries, the field {n_t} times")
    return t


def read_pdebench(path: str | os.PathLike[str], *, field: str | None = None, resolution: int | None = None,
                  noise: float = 0.0, time_stride: int = 1, n: int | None = None, seed: int = 0,
                  force: bool = False) -> tuple[PDEDataset, str]:
    """A PDEBench HDF5 file (1-D ``tensor`` layout or CFD ``density``/``Vx``/... layout), observed at
    ``resolution`` points per axis with ``noise``; ``(data, description of the arrays used)``."""
    _check_options(noise, time_stride, n)
    p, _ = existing_file(path, (".h5", ".hdf5"), "PDEBench HDF5 file")
    h5py = _h5py(p)
    try:
        f = h5py.File(p, "r")
    except OSError as exc:
        raise DataFileError(p, f"not a readable HDF5 file ({exc})") from None
    with f:
        names = sorted(k for k in f.keys() if isinstance(f[k], h5py.Dataset))
        if field is None:
            field = "tensor" if "tensor" in names else "density" if "density" in names else None
        if field is None or field not in names:
            raise DataFileError(p, f"no {'field ' + repr(field) if field else 'tensor or density'} dataset; the "
                                f"file has {names} (PDEBench layouts: 1-D 'tensor', CFD {list(_CFD_FIELDS)})")
        ds = f[field]
        if ds.ndim not in (3, 4) or ds.dtype.kind not in "fiu" or 0 in ds.shape:
            raise DataFileError(p, f"{field} must be a real array (n, n_t, n_x) or (n, n_t, n_x, n_y), got "
                                f"{ds.dtype} {ds.shape}")
        n_all, n_t_all, *spatial = ds.shape
        n_use = n_all if n is None else min(n, n_all)
        axes = ("x", "y")[: len(spatial)]
        strides = [_stride(s, resolution, p, a) for s, a in zip(spatial, axes, strict=True)]
        out_spatial = tuple(s // k for s, k in zip(spatial, strides, strict=True))
        n_t = len(range(0, n_t_all, time_stride))
        per_traj = n_t_all * math.prod(spatial) * ds.dtype.itemsize
        block = max(1, BLOCK_BYTES // max(per_traj, 1))
        _need(p, n_use, n_t, out_spatial, min(block, n_use) * per_traj, force)
        coords = {}
        for a, s in zip(axes, spatial, strict=True):
            key = f"{a}-coordinate"
            if key in names:
                c = np.asarray(f[key][...], dtype=np.float64).ravel()
                if c.size != s:
                    raise DataFileError(p, f"{key} has {c.size} entries, {field} {s} points along {a}")
            else:
                c = np.arange(s, dtype=np.float64) / s
            coords[a] = c[:: strides[axes.index(a)]]
        t = (_times(f["t-coordinate"][...], n_t_all, p, "t-coordinate") if "t-coordinate" in names
             else np.arange(n_t_all, dtype=np.float64))[::time_stride]
        clean = np.empty((n_use, n_t, *out_spatial), dtype=np.float32)
        sel = (slice(None, None, time_stride), *(slice(None, None, k) for k in strides))
        try:
            for i0 in range(0, n_use, block):  # streamed: one block of full-resolution data at a time
                i1 = min(n_use, i0 + block)
                clean[i0:i1] = ds[(slice(i0, i1), *sel)]
        except (OSError, ValueError) as exc:
            raise DataFileError(p, f"cannot read {field} ({exc})") from None
    used = [field, *(f"{a}-coordinate" for a in axes if f"{a}-coordinate" in names)]
    used += ["t-coordinate"] if "t-coordinate" in names else []
    desc = (f"{p} (PDEBench HDF5): arrays {', '.join(used)}; {field} {tuple(ds.shape)} -> u "
            f"{(n_use, n_t, *out_spatial)} (stride {'x'.join(map(str, strides))} in space, {time_stride} in time"
            f"{f', noise {noise:g}' if noise else ''})")
    length = float(coords["x"][-1] - coords["x"][0]) * out_spatial[0] / max(out_spatial[0] - 1, 1)
    params = {"pde": f"pdebench:{field}", "source": str(p), "field": field, "length": length,
              "time_stride": int(time_stride), "grid": list(spatial)}
    return _finish(p, clean, coords["x"], t, noise, seed, params), desc


def _mat_arrays(p: Path, force: bool) -> tuple[dict[str, np.ndarray], str]:
    """``u``, ``a`` and ``t`` of a ``.mat`` file in NumPy axis order (v5 via scipy.io, v7.3 via h5py)."""
    with open(p, "rb") as fh:
        head = fh.read(520)
    if len(head) >= 520 and head[512:520] == _HDF5_MAGIC:  # MATLAB v7.3: HDF5 with a 512-byte user block
        h5py = _h5py(p)
        try:
            with h5py.File(p, "r") as f:
                keys = [k for k in ("u", "a", "t") if k in f and isinstance(f[k], h5py.Dataset)]
                if "u" not in keys:
                    raise DataFileError(p, f"no array 'u'; the file has {sorted(f.keys())}")
                _need(p, 1, 1, (f["u"].size,), 0, force)
                return {k: np.asarray(f[k][...]).transpose() for k in keys}, "MATLAB v7.3 (HDF5)"
        except OSError as exc:
            raise DataFileError(p, f"not a readable MATLAB v7.3 file ({exc})") from None
    try:
        import scipy.io  # noqa: PLC0415 - optional extra
    except ImportError:
        raise ImportError(f"{p}: reading .mat needs scipy: pip install 'iclr25-memno[data]'") from None
    try:
        info = {name: (shape, cls) for name, shape, cls in scipy.io.whosmat(p)}
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise DataFileError(p, f"not a readable MATLAB .mat file ({exc})") from None
    if "u" not in info:
        raise DataFileError(p, f"no array 'u'; the file has {sorted(info)}")
    _need(p, 1, 1, (math.prod(info["u"][0]),), 0, force)
    try:
        m = scipy.io.loadmat(p, variable_names=[k for k in ("u", "a", "t") if k in info])
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise DataFileError(p, f"not a readable MATLAB .mat file ({exc})") from None
    return {k: np.asarray(v) for k, v in m.items() if k in ("u", "a", "t")}, "MATLAB v5 (scipy.io)"


def read_fno_mat(path: str | os.PathLike[str], *, resolution: int | None = None, noise: float = 0.0,
                 time_stride: int = 1, n: int | None = None, seed: int = 0,
                 force: bool = False) -> tuple[PDEDataset, str]:
    """An FNO-style ``.mat`` file (``u`` ``(n, n_x[, n_y], T)``, optional ``a`` and ``t``)."""
    _check_options(noise, time_stride, n)
    p, _ = existing_file(path, (".mat",), "FNO .mat file")
    arr, kind = _mat_arrays(p, force)
    u = arr["u"]
    if u.dtype.kind not in "fiu" or u.ndim not in (3, 4) or 0 in u.shape:
        raise DataFileError(p, f"u must be a real array (n, n_x, T) or (n, n_x, n_y, T), got {u.dtype} {u.shape}")
    u = np.moveaxis(u, -1, 1)  # (n, T, space...)
    used = ["u"]
    t = np.arange(1, u.shape[1] + 1, dtype=np.float64)
    if "t" in arr:
        t = _times(arr["t"], u.shape[1], p, "t")
        used.append("t")
    a = arr.get("a")
    if a is not None and a.dtype.kind in "fiu" and a.shape == (u.shape[0], *u.shape[2:]):
        u = np.concatenate([a[:, None], u], axis=1)  # the initial state a at t = 0, then u(t_1..t_T)
        t = np.concatenate([[0.0], t])
        used.insert(0, "a")
    if n is not None:
        u = u[:n]
    spatial = u.shape[2:]
    axes = ("x", "y")[: len(spatial)]
    strides = [_stride(s, resolution, p, ax) for s, ax in zip(spatial, axes, strict=True)]
    clean = u[(slice(None), slice(None, None, time_stride), *(slice(None, None, k) for k in strides))]
    clean = np.ascontiguousarray(clean, dtype=np.float32)
    x = (np.arange(spatial[0]) / spatial[0])[:: strides[0]]
    desc = (f"{p} (FNO .mat, {kind}): arrays {', '.join(used)}; u {tuple(arr['u'].shape)} -> u {clean.shape} "
            f"(stride {'x'.join(map(str, strides))} in space, {time_stride} in time"
            f"{f', noise {noise:g}' if noise else ''})")
    params = {"pde": "fno-mat", "source": str(p), "length": 1.0, "time_stride": int(time_stride),
              "grid": list(spatial)}
    return _finish(p, clean, x, t[::time_stride], noise, seed, params), desc


def read_data(path: str | os.PathLike[str], *, field: str | None = None, resolution: int | None = None,
              noise: float = 0.0, time_stride: int = 1, n: int | None = None, seed: int = 0,
              force: bool = False) -> tuple[PDEDataset, str]:
    """Any supported file, by extension: ``(PDEDataset, which arrays were used)``."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".h5", ".hdf5"):
        return read_pdebench(p, field=field, resolution=resolution, noise=noise, time_stride=time_stride, n=n,
                             seed=seed, force=force)
    if suffix == ".mat":
        if field not in (None, "u"):
            raise ValueError(f"--field {field} is for PDEBench HDF5 files; a .mat file is read from 'u'")
        return read_fno_mat(p, resolution=resolution, noise=noise, time_stride=time_stride, n=n, seed=seed,
                            force=force)
    if suffix == ".npz":
        if field is not None or resolution is not None or noise or time_stride != 1 or n is not None:
            raise ValueError(f"{p}: --field, --resolution, --noise, --time-stride and --n apply to PDEBench .h5 and "
                             ".mat files; an .npz is already observed (make another with `iclr25 memno generate`)")
        data = load_dataset(p)
        return data, f"{p} (memno .npz): arrays u, target, x, t, params; u {data.u.shape}"
    raise DataFileError(p, f"unknown data format {suffix or '(no extension)'}; expected one of {list(SUFFIXES)}")
