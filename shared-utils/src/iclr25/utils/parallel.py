"""``parallel_map``: one call that runs locally or on a cluster engine through joblib's backends.

``backend=None`` uses joblib's default (processes, ``loky``) or whatever an enclosing
``joblib.parallel_config(backend=...)`` sets; ``backend="dask"`` needs a running ``distributed.Client``
(extra ``iclr25-utils[distributed]``), ``backend="ray"`` registers Ray's joblib backend (extra
``iclr25-utils[ray]``). Results come back in the order of ``items``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["parallel_map"]

T = TypeVar("T")
R = TypeVar("R")

_BACKENDS = (None, "loky", "threading", "multiprocessing", "sequential", "dask", "ray")


def parallel_map(fn: Callable[[T], R], items: Iterable[T], *, n_jobs: int = 1, backend: str | None = None,
                 desc: str | None = None) -> list[R]:
    """Apply ``fn`` to each item, possibly in parallel, and return the results in order.

    Parameters
    ----------
    fn:
        A picklable function of one argument (a module-level function for process and cluster backends).
    n_jobs:
        Number of workers; ``-1`` means all cores (or all cluster workers). ``1`` runs in this process
        without joblib.
    backend:
        One of ``None``, ``"loky"``, ``"threading"``, ``"multiprocessing"``, ``"sequential"``, ``"dask"``,
        ``"ray"``.

    Examples
    --------
    >>> parallel_map(abs, [-1, 2, -3])
    [1, 2, 3]
    """
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    items = list(items)
    from .progress import progress

    if (n_jobs == 1 and backend is None) or backend == "sequential" or len(items) <= 1 and backend is None:
        return [fn(x) for x in progress(items, desc=desc, total=len(items))]
    try:
        import joblib
    except ImportError as exc:
        raise ImportError("parallel_map with n_jobs != 1 or a backend needs joblib: "
                          "pip install 'iclr25-utils[parallel]'") from exc
    if backend == "ray":
        _start_ray()
    if backend == "dask":
        _check_dask_client()
    # results come back in order as they finish, so the bar moves on every backend
    tasks = (joblib.delayed(fn)(x) for x in items)
    if backend is None:
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
        return list(progress(results, desc=desc, total=len(items)))
    with joblib.parallel_config(backend=backend, n_jobs=n_jobs):
        try:
            results = joblib.Parallel(return_as="generator")(tasks)
        except ValueError as exc:  # Ray's backend returns lists only: run in rounds, the bar moves per round
            if "return_as" not in str(exc):
                raise
            return _in_rounds(joblib, fn, items, progress(total=len(items), desc=desc))
        return list(progress(results, desc=desc, total=len(items)))


def _in_rounds(joblib, fn, items, bar, rounds: int = 10) -> list:
    out: list = []
    size = max(1, -(-len(items) // rounds))
    with bar:
        for i in range(0, len(items), size):
            chunk = items[i:i + size]
            out.extend(joblib.Parallel()(joblib.delayed(fn)(x) for x in chunk))
            bar.update(len(chunk))
    return out


def _start_ray() -> None:
    """Register Ray's joblib backend, starting a quiet local Ray when none is running (``ray.init`` first
    to use a cluster: ``ray.init(address="auto")``)."""
    import logging

    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError as exc:
        raise ImportError("backend='ray' needs ray: pip install 'iclr25-utils[ray]'") from exc
    # Ray's pool warns that joblib's 'context' argument is unsupported on every call: it is harmless
    logging.getLogger("ray.util.multiprocessing.pool").setLevel(logging.ERROR)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    register_ray()


def _check_dask_client() -> None:
    try:
        from distributed import get_client
    except ImportError as exc:
        raise ImportError("backend='dask' needs dask.distributed: pip install 'iclr25-utils[distributed]'"
                          ) from exc
    try:
        get_client()
    except ValueError:
        raise ValueError("backend='dask' needs a running dask.distributed Client: Client(LocalCluster()) on "
                         "this machine, or Client('tcp://scheduler:8786') for a cluster") from None
