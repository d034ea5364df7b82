"""``parallel_map``: one call that runs locally or on a cluster engine through joblib's backends.

``backend=None`` uses joblib's default (processes, ``loky``) or whatever an enclosing
``joblib.parallel_config(backend=...)`` sets; ``backend="dask"`` needs a running ``distributed.Client``
(extra ``iclr25-utils[distributed]``), ``backend="ray"`` registers Ray's joblib backend (extra
``iclr25-utils[ray]``). Results come back in the order of ``items``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["parallel_map", "cluster", "add_backend_arguments", "BACKEND_CHOICES"]

T = TypeVar("T")
R = TypeVar("R")

_BACKENDS = (None, "loky", "threading", "multiprocessing", "sequential", "dask", "ray")
#: what a command line offers: ``local`` (processes on this machine), a Dask cluster, a Ray cluster
BACKEND_CHOICES = ("local", "dask", "ray")


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


def add_backend_arguments(parser, *, own: bool = True) -> None:
    """``--backend {local,dask,ray}``, ``--address`` and ``--workers`` for a command whose seeds or cells are
    independent (``iclr25 claims``, a package's ``repro``). ``own``: the command runs its work on the backend
    itself (every ``repro`` already has the options from :func:`iclr25.utils.cli.method_commands`, which
    measures its registry's seeds there first; a package that adds them again takes them over)."""
    parser.set_defaults(backend_own=own)
    if "--backend" in getattr(parser, "_option_string_actions", {}):
        return
    parser.add_argument("--backend", default=None, choices=BACKEND_CHOICES,
                        help="run independent seeds/cells in parallel: local processes, a Dask cluster or a Ray "
                             "cluster (default: one after another in this process)")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="the cluster to use with --backend dask (tcp://scheduler:8786) or ray (auto, "
                             "ray://head:10001); without it a local cluster is started for the command")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="parallel workers (default: local and a started cluster use 2; a cluster at "
                             "--address uses all of its workers)")


class cluster:  # noqa: N801 - used as a context manager, like open()
    """Connect to (or start) what ``backend`` needs for :func:`parallel_map`, and close what it started.

    ``with cluster("dask", address=None, workers=2) as (backend, n_jobs): parallel_map(fn, xs, backend=backend,
    n_jobs=n_jobs)``. ``local``: joblib's processes on this machine. ``dask``: a ``distributed.Client`` to
    ``address``, or to a ``LocalCluster`` of ``workers`` single-threaded processes started here. ``ray``:
    ``ray.init(address)``, or a local Ray of ``workers`` CPUs. A cluster that cannot be reached is a one-line
    ``ValueError`` naming ``--address``.
    """

    def __init__(self, backend: str | None, *, address: str | None = None, workers: int | None = None) -> None:
        if backend is not None and backend not in BACKEND_CHOICES:
            raise ValueError(f"--backend must be one of {', '.join(BACKEND_CHOICES)}, got {backend!r}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"--workers must be a positive integer, got {workers!r}")
        if address is not None and backend in (None, "local"):
            raise ValueError("--address names a cluster: give it with --backend dask or ray")
        self.backend, self.address, self.workers = backend, address, workers
        self._close: list = []

    def __enter__(self) -> tuple[str | None, int]:
        b = self.backend
        if b is None:
            return None, 1
        if b == "local":
            return "loky", self.workers or 2
        if b == "dask":
            try:
                from distributed import Client, LocalCluster
            except ImportError as exc:
                raise ImportError("--backend dask needs dask.distributed: pip install 'iclr25-utils[distributed]'"
                                  ) from exc
            if self.address:
                try:
                    client = Client(self.address, timeout="20s")
                except (OSError, TimeoutError) as exc:
                    raise ValueError(f"--address {self.address}: no Dask scheduler answered ({exc})") from None
            else:
                lc = LocalCluster(n_workers=self.workers or 2, threads_per_worker=1, processes=True,
                                  dashboard_address=None)
                self._close.append(lc)
                client = Client(lc)
            self._close.insert(0, client)
            return "dask", self.workers or -1
        import logging

        try:
            import ray
        except ImportError as exc:
            raise ImportError("--backend ray needs ray: pip install 'iclr25-utils[ray]'") from exc
        if not ray.is_initialized():
            kw = {"address": self.address} if self.address else {"num_cpus": self.workers or 2}
            try:
                ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR, **kw)
            except (ConnectionError, RuntimeError) as exc:
                raise ValueError(f"--address {self.address}: no Ray cluster answered ({exc})") from None
            self._close.append(ray)
        return "ray", self.workers or -1

    def __exit__(self, *exc) -> None:
        for thing in self._close:
            try:
                thing.shutdown() if hasattr(thing, "shutdown") and not hasattr(thing, "close") else thing.close()
            except Exception:  # noqa: BLE001, S110 - closing what we started; nothing to report
                pass
        self._close.clear()
