"""Large-graph plumbing at small scale: the streamed generator, the edge-list fast path, the sweep on Dask."""

import numpy as np
import pytest

from iclr25.scalegun import datasets, load_graph_files, powerlaw_files, streaming, sweep


def test_streamed_generator_writes_a_valid_graph_in_blocks(tmp_path, monkeypatch):
    """Several chunks and row blocks (shrunk here) give the same CSR as one block; the graph is symmetric,
    loop-free, power-law and reproducible from the seed."""
    monkeypatch.setattr(streaming, "_CHUNK", 1500)
    monkeypatch.setattr(streaming, "_BLOCK_ENTRIES", 2000)
    a = load_graph_files(powerlaw_files(tmp_path / "a", 2000, 10000, 8, 3, seed=5))
    monkeypatch.setattr(streaming, "_BLOCK_ENTRIES", 10**9)
    b = load_graph_files(powerlaw_files(tmp_path / "b", 2000, 10000, 8, 3, seed=5))
    assert (a.adj != b.adj).nnz == 0 and np.array_equal(a.X, b.X) and np.array_equal(a.train_idx, b.train_idx)
    A = a.adj
    assert (A != A.T).nnz == 0 and A.diagonal().sum() == 0 and A.has_sorted_indices
    assert 8000 < a.n_edges <= 10000
    deg = np.asarray(A.sum(axis=1)).ravel()
    assert deg.max() > 15 * np.median(deg)
    assert np.mean(a.y[a.edges[:, 0]] == a.y[a.edges[:, 1]]) > 0.7
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(streaming.GRAPH_FILES)  # no scratch
    c = load_graph_files(powerlaw_files(tmp_path / "c", 2000, 10000, 8, 3, seed=6))
    assert (a.adj != c.adj).nnz > 0


def test_load_graph_files_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing graph.npz"):
        load_graph_files(tmp_path)


def test_edge_list_fast_path_equals_the_line_reader(tmp_path):
    g = datasets.csbm(300, 1500, 3, 2, seed=0)
    body = "\n".join(f"{u} {v}" for u, v in g.edges)
    (tmp_path / "g.txt").write_text("# a comment\n\n" + body + "\n")
    (tmp_path / "g.csv").write_text("source,target\n" + body.replace(" ", ",") + "\n")
    fast = datasets._fast_edge_text(tmp_path / "g.txt", 300)
    assert fast is not None and fast.shape == (g.n_edges, 2)
    for name in ("g.txt", "g.csv"):
        assert (datasets.load_graph(tmp_path / name, n_nodes=300) != g.adj).nnz == 0
    (tmp_path / "bad.txt").write_text("0 1\n1 2 3\n")
    assert datasets._fast_edge_text(tmp_path / "bad.txt", None) is None  # the line reader names line 2
    with pytest.raises(ValueError, match="line 2"):
        datasets.load_graph(tmp_path / "bad.txt")


def test_sweep_runs_through_parallel_map_and_on_dask(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    d = powerlaw_files(tmp_path / "g", 1500, 7500, 8, 3, seed=0)
    kw = dict(batches=(1, 50), requests=(3, 1))
    local = sweep([str(d), {"n": 1000, "m": 5000, "features": 8, "classes": 3}], **kw)
    assert [c["nodes"] for c in local] == [1500, 1000]
    cell = local[0]
    assert cell["batches"]["50"]["requests"] == 1 and cell["batches"]["1"]["requests"] == 3
    assert cell["flushes"] == 0 and cell["retrains"] == 0 and cell["retrain_s"] > 0
    assert cell["model_state_bytes"] <= cell["state_bytes"] < 1.2 * cell["model_state_bytes"]
    # a cell that allocates nothing after its start has peak == start (issue 40: `>` failed once)
    assert cell["peak_rss_bytes"] >= cell["rss_start_bytes"] > 0
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None):
        remote = sweep([str(d)], backend="dask", n_jobs=1, **kw)
    for key in ("nodes", "edges", "r_max", "accuracy"):
        assert remote[0][key] == cell[key]
    assert remote[0]["batches"]["50"]["max_budget_used"] == cell["batches"]["50"]["max_budget_used"]
