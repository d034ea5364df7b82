"""A user's two-task data set for the finite-N online-SGD experiment (``simulate --data X.npz``).

The ``.npz`` (plain arrays, never pickles) holds:

* ``features``: ``(n, d)`` real inputs (standardised here with the training rows' mean and std; ``N = d``);
* ``labels``: either ``(n, 2)`` labels of the two tasks in {-1, +1} (or {0, 1}), or ``(n,)`` integer classes
  with ``task_a`` and ``task_b``, the positive classes of each task (all others negative: the digits
  construction, e.g. ``task_a = [0, 1, 2, 3, 4]``, ``task_b = [0, 1, 2, 5, 6]``);
* ``test`` (optional): ``(n,)`` booleans marking the test rows; without it a seeded random ``test_size`` share.

The task similarity the theory needs is measured as for digits (:func:`iclr25.cl_optimal_control.digits.
tasks_from_arrays`: the cosine of the two tasks' ridge probes, clipped to [0, 1]); the optimal protocol is then
solved on the ODEs at that gamma and compared in online SGD with sequential training and the best constant mix
(:func:`iclr25.cl_optimal_control.digits.compare_protocols`).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from iclr25.utils.guards import check_size
from iclr25.utils.io import DataFileError, existing_file, read_npz

from .digits import DigitsTasks, tasks_from_arrays

__all__ = ["read_tasks"]


def _shapes(p: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Shapes and dtypes of an ``.npz``'s members from their headers (nothing loaded)."""
    out = {}
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                            else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read(f)
                out[info.filename[:-4]] = (shape, dtype)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise DataFileError(p, f"not a NumPy .npz file ({exc})") from None
    return out


def read_tasks(path: str | os.PathLike[str], *, test_size: float = 0.3, ridge: float = 10.0, seed: int = 0,
               force: bool = False) -> tuple[DigitsTasks, str]:
    """The two tasks of a user's ``.npz`` (see the module docstring) and a line saying what was read."""
    p, _ = existing_file(path, (".npz",), "data set")
    shapes = _shapes(p)
    if "features" not in shapes or "labels" not in shapes:
        raise DataFileError(p, f"needs arrays 'features' (n, d) and 'labels'; it holds {sorted(shapes)}")
    fshape, fdtype = shapes["features"]
    if len(fshape) != 2 or fshape[0] < 4 or fshape[1] < 2:
        raise DataFileError(p, f"features must have shape (n, d) with n >= 4, d >= 2, got {fshape}")
    n, d = fshape
    check_size(f"--data {p} ({n} x {d} features)", bytes_needed=8.0 * n * d * 4 + 8.0 * d * d * 3, force=force)
    if not 0.05 <= float(test_size) <= 0.9:
        raise ValueError(f"test_size must be in [0.05, 0.9], got {test_size}")
    a = read_npz(p, required=("features", "labels"), what="data set")
    X = a["features"]
    if X.dtype.kind not in "fiub" or not np.all(np.isfinite(X)):
        raise DataFileError(p, f"features must be finite real numbers, got dtype {X.dtype}")
    X = X.astype(np.float64)
    lab = a["labels"]
    if lab.dtype.kind not in "fiub":
        raise DataFileError(p, f"labels must be numbers, got dtype {lab.dtype}")
    if lab.ndim == 2 and lab.shape == (n, 2):
        vals = set(np.unique(lab).tolist())
        if not vals <= {-1, 1} and not vals <= {0, 1}:
            raise DataFileError(p, f"(n, 2) labels must be -1/+1 (or 0/1) per task, got values {sorted(vals)[:6]}")
        y = np.where(lab > 0, 1.0, -1.0).T
        how = "labels (n, 2): one ±1 label per task"
    elif lab.ndim == 1 and lab.shape[0] == n:
        if "task_a" not in a or "task_b" not in a:
            raise DataFileError(p, "class labels (n,) need task_a and task_b, the positive classes of each task "
                                   "(or give labels of shape (n, 2))")
        if lab.dtype.kind == "f" and not np.all(lab == np.round(lab)):
            raise DataFileError(p, "class labels must be integers")
        pos = [np.asarray(a[k]).ravel() for k in ("task_a", "task_b")]
        y = np.stack([np.where(np.isin(lab, q), 1.0, -1.0) for q in pos])
        how = f"labels (n,) classes, task_a {pos[0].tolist()}, task_b {pos[1].tolist()}"
    else:
        raise DataFileError(p, f"labels must have shape ({n},) or ({n}, 2), got {lab.shape}")
    for t in range(2):
        if len(np.unique(y[t])) < 2:
            raise DataFileError(p, f"task {'ab'[t]} has only one label value: nothing to learn")
    if "test" in a:
        test = a["test"]
        if test.shape != (n,) or test.dtype.kind not in "bui" or not set(np.unique(test).tolist()) <= {0, 1}:
            raise DataFileError(p, f"test must be ({n},) booleans, got {test.dtype} {test.shape}")
        te, tr = np.flatnonzero(test), np.flatnonzero(test == 0)
        split = f"test mask ({len(te)} test rows)"
    else:
        perm = np.random.default_rng(seed).permutation(n)
        n_test = int(round(test_size * n))
        te, tr = perm[:n_test], perm[n_test:]
        split = f"random {test_size:g} test split (seed {seed})"
    if len(tr) < 2 or len(te) < 1:
        raise DataFileError(p, f"{len(tr)} training and {len(te)} test rows; needs at least 2 and 1")
    tasks = tasks_from_arrays(X, y, tr, te, ridge=ridge)
    desc = (f"{p}: features {X.shape} (N = {d}), {how}, {split}; measured gamma {tasks.gamma:.3f} "
            f"(raw {tasks.gamma_raw:.3f})")
    return tasks, desc
