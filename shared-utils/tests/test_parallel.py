import pytest

from iclr25.utils.parallel import parallel_map


def square(x):
    return x * x


def worker_address(_):
    from distributed import get_worker

    return get_worker().address  # raises ValueError outside a Dask worker


@pytest.mark.parametrize("backend, n_jobs", [(None, 1), ("sequential", 1), ("threading", 2), (None, 2),
                                             ("loky", 2)])
def test_local_backends_keep_order(backend, n_jobs):
    assert parallel_map(square, range(7), n_jobs=n_jobs, backend=backend) == [x * x for x in range(7)]


def test_dask_backend_on_a_local_cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        out = parallel_map(square, range(10), n_jobs=-1, backend="dask")
        assert out == [x * x for x in range(10)]
        # the work really ran on the cluster's workers
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        assert set(parallel_map(worker_address, range(8), n_jobs=-1, backend="dask")) <= workers


@pytest.mark.parametrize("kw, exc, msg", [({"n_jobs": 0}, ValueError, "n_jobs"),
                                          ({"n_jobs": -2}, ValueError, "n_jobs"),
                                          ({"backend": "spark"}, ValueError, "backend must be one of")])
def test_validation(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        parallel_map(square, [1], **kw)


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        parallel_map(3, [1])


@pytest.mark.parametrize("backend, n_jobs", [(None, 2), ("threading", 2), (None, 1)])
def test_every_path_reports_progress(monkeypatch, backend, n_jobs):
    from iclr25.utils import progress as progress_mod

    seen = []

    def recording(iterable=None, *, total=None, desc=None, **kw):
        seen.append((total, desc))
        return progress_mod._Silent(iterable)

    monkeypatch.setattr(progress_mod, "progress", recording)
    assert parallel_map(square, range(5), n_jobs=n_jobs, backend=backend, desc="pairs") == [0, 1, 4, 9, 16]
    assert seen == [(5, "pairs")]


def test_dask_without_a_client_is_a_clear_error():
    with pytest.raises(ValueError, match="needs a running dask.distributed Client"):
        parallel_map(square, range(3), n_jobs=2, backend="dask")
