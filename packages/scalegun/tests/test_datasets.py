"""Generators, the digits graph, loaders and the ``unlearn`` command on user files."""

import json

import numpy as np
import scipy.sparse as sp

from iclr25.scalegun import datasets
from iclr25.scalegun.cli import main


def test_csbm_is_homophilous_and_seeded():
    g = datasets.csbm(1000, 5000, 8, 4, seed=0, homophily=0.8)
    assert (g.adj != g.adj.T).nnz == 0 and g.adj.diagonal().sum() == 0
    e = g.edges
    same = np.mean(g.y[e[:, 0]] == g.y[e[:, 1]])
    assert 0.75 < same < 0.85
    assert 4500 < g.n_edges <= 5000
    h = datasets.csbm(1000, 5000, 8, 4, seed=0, homophily=0.8)
    assert (g.adj != h.adj).nnz == 0 and np.array_equal(g.X, h.X)
    assert len(np.intersect1d(g.train_idx, g.test_idx)) == 0 and len(g.train_idx) + len(g.test_idx) == 1000


def test_powerlaw_has_heavy_tail():
    g = datasets.powerlaw(5000, 25000, 8, 3, seed=0)
    deg = np.asarray(g.adj.sum(axis=1)).ravel()
    assert deg.max() > 20 * np.median(deg)
    assert 20000 < g.n_edges <= 25000


def test_digits_knn():
    g = datasets.digits_knn(5, seed=0)
    assert g.X.shape == (1797, 64) and set(np.unique(g.y)) == set(range(10))
    deg = np.asarray(g.adj.sum(axis=1)).ravel()
    assert deg.min() >= 5
    assert np.mean(g.y[g.edges[:, 0]] == g.y[g.edges[:, 1]]) > 0.9  # pixel neighbours share labels


def test_adversarial_edges_are_new_and_inter_class():
    g = datasets.csbm(300, 1200, 4, 3, seed=1)
    bad = datasets.adversarial_edges(g, 0.1, seed=0)
    assert len(bad) == round(0.1 * g.n_edges)
    assert np.all(g.y[bad[:, 0]] != g.y[bad[:, 1]])
    assert not g.adj[bad[:, 0], bad[:, 1]].any()
    p = datasets.with_edges(g, bad)
    assert p.n_edges == g.n_edges + len(bad)


def test_loaders_round_trip(tmp_path):
    g = datasets.csbm(50, 150, 3, 2, seed=0)
    txt = tmp_path / "g.edges"
    txt.write_text("# comment\n" + "\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    assert (datasets.load_graph(txt, n_nodes=50) != g.adj).nnz == 0
    npz = tmp_path / "g.npz"
    sp.save_npz(npz, sp.csr_matrix(g.adj))
    assert (datasets.load_graph(npz) != g.adj).nnz == 0
    req = tmp_path / "r.txt"
    req.write_text("edge 1 2 3 4  # a batch of two\nnode 5\nfeature 6 7\n")
    r = datasets.read_requests(req)
    assert [x.kind for x in r] == ["edge", "node", "feature"] and r[0].ids == (1, 2, 3, 4)


def test_unlearn_command_writes_the_ledger(tmp_path):
    g = datasets.csbm(200, 800, 5, 3, seed=0)
    np.save(tmp_path / "X.npy", g.X)
    np.save(tmp_path / "y.npy", g.y)
    np.save(tmp_path / "train.npy", g.train_idx)
    (tmp_path / "g.txt").write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    e = g.edges
    tr = [a for a in g.train_idx if a not in e[:3]]
    (tmp_path / "req.txt").write_text(f"edge {e[0, 0]} {e[0, 1]}\nedge {e[1, 0]} {e[1, 1]} {e[2, 0]} {e[2, 1]}\n"
                                      f"node {tr[0]}\nfeature {tr[1]} {tr[2]}\n")
    out = tmp_path / "ledger.json"
    rc = main(["unlearn", "--graph", str(tmp_path / "g.txt"), "--features", str(tmp_path / "X.npy"),
               "--labels", str(tmp_path / "y.npy"), "--train", str(tmp_path / "train.npy"),
               "--requests", str(tmp_path / "req.txt"), "--out", str(out), "--audit"])
    assert rc == 0
    d = json.loads(out.read_text())
    assert d["n_requests"] == 4
    assert [r["kind"] for r in d["records"]] == ["fit", "edges", "edges", "nodes", "features"]
    assert d["records"][2]["n_items"] == 2
    assert all(max(r["true_residual"]) <= max(r["data_bound"]) for r in d["records"])
