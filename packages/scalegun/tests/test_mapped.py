"""Memory-mapped CSR: the unlearner on a mapped graph gives the same results as on the in-memory graph,
without copying the graph's index arrays; the conversion normalises a user's CSR like the in-memory check."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.scalegun import (
    CertifiedUnlearner,
    MappedGraph,
    load_graph_files,
    mapped,
    powerlaw_files,
    validation,
    write_mapped_graph,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return powerlaw_files(tmp_path_factory.mktemp("g"), 1500, 7500, 8, 3, seed=2)


def _stream(u, edges, node, feat):
    recs = [u.unlearn_edges(e[None, :]) for e in edges[:3]]
    recs.append(u.unlearn_edges(edges[3:40]))  # a batch
    recs.append(u.unlearn_nodes([node]))
    recs.append(u.unlearn_features([feat]))
    return recs


@pytest.mark.parametrize("mode", ["scalegun", "cgu"])
def test_mapped_graph_gives_the_in_memory_results(folder, mode, monkeypatch):
    monkeypatch.setattr(mapped, "_BLOCK", 1000)  # several row blocks in the conversion and the checks
    g, gm = load_graph_files(folder), load_graph_files(folder, mmap=True)
    assert isinstance(gm.adj, MappedGraph) and isinstance(gm.X, np.memmap)
    assert np.array_equal(g.edges, gm.edges) and gm.n_edges == g.n_edges
    before = np.array(gm.adj.indices)
    rng = np.random.default_rng(0)
    edges = g.edges[rng.choice(g.n_edges, 40, replace=False)]
    node, feat = (int(a) for a in rng.choice(g.train_idx, 2, replace=False))
    out = []
    for graph in (g, gm):
        u = CertifiedUnlearner(graph.adj, graph.X, graph.y, graph.train_idx, mode=mode, seed=1).fit()
        out.append((u, _stream(u, edges, node, feat)))
    (u, recs), (um, recs_m) = out
    A = um._A
    assert np.shares_memory(A.indices, gm.adj.indices) and np.shares_memory(A.indptr, gm.adj.indptr)  # no copy
    assert um.r_max == u.r_max
    assert np.allclose(um.embeddings(), u.embeddings(), rtol=0, atol=1e-12)
    assert np.allclose(um.coef_, u.coef_, rtol=0, atol=1e-12)
    for r, rm in zip(recs, recs_m, strict=True):
        assert np.allclose(rm.data_bound, r.data_bound, rtol=1e-9, atol=0) and rm.retrained == r.retrained
    assert (um.current_graph() != u.current_graph()).nnz == 0
    assert np.array_equal(np.asarray(gm.adj.indices), before)  # the files are never written


def test_conversion_normalises_a_users_csr_like_the_in_memory_check(tmp_path):
    rng = np.random.default_rng(1)
    u, v = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    w = rng.choice([0.0, 1.0, 2.5], 300)  # explicit zeros, weights and self loops
    rows, cols, vals = np.r_[u, v, u[:40]], np.r_[v, u, v[:40]], np.r_[w, w, w[:40]]  # 40 duplicated entries
    order = np.argsort(rows, kind="stable")
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=60))]
    A = sp.csr_array((vals[order], cols[order], indptr), shape=(60, 60))  # unsorted, with duplicates
    assert not A.has_canonical_format
    m = MappedGraph(write_mapped_graph(A, tmp_path / "m"))
    ref = validation.as_adjacency(A, 60)
    assert (m.csr() != ref).nnz == 0 and m.nnz == ref.nnz and m.indices.dtype == np.int32
    for compressed in (True, False):
        sp.save_npz(tmp_path / "a.npz", ref, compressed=compressed)
        m2 = MappedGraph(write_mapped_graph(tmp_path / "a.npz", tmp_path / f"m{compressed}"))
        assert (m2.csr() != ref).nnz == 0
    assert isinstance(mapped.npz_arrays(tmp_path / "a.npz")["indices"], np.memmap)  # uncompressed: mapped
    B = sp.csr_array(([1.0], ([0], [1])), shape=(3, 3))
    with pytest.raises(ValueError, match=r"entry \(0, 1\) has no mirror"):
        write_mapped_graph(B, tmp_path / "bad")
    assert not (tmp_path / "bad").exists() and sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))\
        == []
    with pytest.raises(ValueError, match="shape"):
        CertifiedUnlearner(m, np.ones((59, 2)) / 2, np.zeros(59, int), [0])
    with pytest.raises(FileNotFoundError, match="indptr.npy"):
        MappedGraph(tmp_path)


@pytest.fixture(scope="module")
def cli_graph():
    from iclr25.scalegun import datasets

    return datasets.csbm(120, 500, 6, 3, seed=2)


def _cli_files(d, g):
    (d / "g.txt").write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    np.save(d / "X.npy", g.X)
    np.save(d / "y.npy", g.y)
    e = g.edges
    a, b = (int(v) for v in g.train_idx[:2])
    keep = e[(e != a).all(axis=1) & (e != b).all(axis=1)]
    (d / "req.txt").write_text(f"edge {keep[0][0]} {keep[0][1]}\nedge {keep[1][0]} {keep[1][1]} {keep[2][0]} "
                               f"{keep[2][1]}\nnode {a}\nfeature {b}\n")


def _ledger_argv(d, out, *extra):
    return ["unlearn", "--graph", str(d / "g.txt"), "--features", str(d / "X.npy"), "--labels", str(d / "y.npy"),
            "--requests", str(d / "req.txt"), "--out", str(out), *extra]


def test_cli_mmap_gives_the_in_memory_ledger_and_reuses_its_folder(tmp_path, cli_graph):
    import json

    from iclr25.scalegun.cli import main

    g = cli_graph
    _cli_files(tmp_path, g)
    maps = tmp_path / "maps"
    assert main(_ledger_argv(tmp_path, tmp_path / "mem.json")) == 0
    assert main(_ledger_argv(tmp_path, tmp_path / "map.json", "--mmap", str(maps))) == 0
    assert sorted(p.name for p in maps.iterdir()) == ["indices.npy", "indptr.npy", "source.json"]
    mem, mapped = (json.loads((tmp_path / f).read_text()) for f in ("mem.json", "map.json"))
    assert mem["n_requests"] == mapped["n_requests"] == 4
    for a, b in zip(mem["records"], mapped["records"], strict=True):
        np.testing.assert_allclose(a["data_bound"], b["data_bound"], rtol=1e-9, atol=1e-15)
    stamp = (maps / "indices.npy").stat().st_mtime_ns
    assert main(_ledger_argv(tmp_path, tmp_path / "map2.json", "--mmap", str(maps))) == 0
    assert (maps / "indices.npy").stat().st_mtime_ns == stamp  # same graph file: the maps are reused


def test_cli_mmap_refuses_a_foreign_folder_and_float32_features(tmp_path, cli_graph, capsys):
    from iclr25.scalegun.cli import main

    g = cli_graph
    _cli_files(tmp_path, g)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("mine")
    assert main(_ledger_argv(tmp_path, tmp_path / "l.json", "--mmap", str(tmp_path / "data"))) == 2
    assert "--mmap" in capsys.readouterr().err and (tmp_path / "data" / "keep.txt").exists()
    np.save(tmp_path / "X.npy", g.X.astype(np.float32))
    assert main(_ledger_argv(tmp_path, tmp_path / "l.json", "--mmap", str(tmp_path / "m"))) == 2
    err = capsys.readouterr().err
    assert "X.npy" in err and "float64" in err, err
    assert not (tmp_path / "l.json").exists()
