"""The citation-like generator (fitted to ogbn-arxiv's statistics), its direct mapped CSR, and the memory cuts of
0.6.0 (the dense sweep, the chunked matmul, exact propagation without a normalised copy): same results as the
sparse / in-memory paths."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.scalegun import CertifiedUnlearner, MappedGraph, exact_propagation, load_graph_files, propagation
from iclr25.scalegun.citation import (
    ARXIV,
    average_clustering,
    citation_files,
    locality_cell,
    sample_edges,
    two_hop_ball,
)
from iclr25.scalegun.mapped import write_mapped_graph


@pytest.fixture(scope="module")
def arxiv_like(tmp_path_factory):
    # 20,000 nodes: large enough that the community and area structure look like arxiv's (areas of 4,234)
    return citation_files(tmp_path_factory.mktemp("c"), 20_000, 8, 5, seed=3)


def test_generator_matches_arxiv_degree_and_clustering(arxiv_like):
    g = MappedGraph(arxiv_like / "csr-mmap")
    deg = np.diff(np.asarray(g.indptr)) - 1
    # tolerances: mean degree within 3 % of 2m/n = 13.77 (the Chung-Lu over-draw is fitted at arxiv's size);
    # average clustering within 0.03 of 0.23 (a 4,000-node sample: standard error ~0.005)
    assert abs(deg.mean() / ARXIV["mean_degree"] - 1) < 0.03
    assert abs(average_clustering(g, 4000) - ARXIV["clustering"]) < 0.03
    assert deg.max() > 20 * deg.mean()  # a heavy tail (power-law weights, exponent 2.5), not a regular graph
    # locality: most edges stay inside an area of 4,234 ids
    rows = np.repeat(np.arange(g.n_nodes), np.diff(np.asarray(g.indptr)))
    cols = np.asarray(g.indices)
    off = rows != cols
    assert 0.6 < np.mean(rows[off] // 4234 == cols[off] // 4234) < 0.75


def test_direct_mapped_csr_equals_the_conversion(arxiv_like, tmp_path):
    ref = MappedGraph(write_mapped_graph(arxiv_like / "graph.npz", tmp_path / "ref"))  # checks symmetry too
    g = load_graph_files(arxiv_like, mmap=True).adj
    assert g.indices.dtype == np.int32 and g.indptr.dtype == np.int32
    assert np.array_equal(ref.indptr, g.indptr) and np.array_equal(ref.indices, g.indices)


def test_sample_edges_and_two_hop_ball(arxiv_like):
    g = MappedGraph(arxiv_like / "csr-mmap")
    e = sample_edges(g, 300, seed=1)
    A = g.csr()
    assert e.shape == (300, 2) and len(np.unique(e, axis=0)) == 300 and np.all(e[:, 0] < e[:, 1])
    assert np.all(A[e[:, 0], e[:, 1]] == 1)
    s0 = np.zeros(g.n_nodes)
    s0[np.unique(e)] = 1
    n1 = (A @ s0) > 0
    n2 = (A @ n1.astype(float)) > 0
    ball = two_hop_ball(g, e)
    assert ball["N1_frac"] == pytest.approx(n1.mean()) and ball["N2_frac"] == pytest.approx(n2.mean())
    with pytest.raises(ValueError, match="k must be at most"):
        sample_edges(g, 10**9)


def test_dense_sweep_equals_the_sparse_path(arxiv_like, monkeypatch):
    g = load_graph_files(arxiv_like)
    e = sample_edges(load_graph_files(arxiv_like, mmap=True).adj, 400, seed=2)
    out = []
    for frac in (0.125, 2.0):  # 2.0: every level takes the gathered (sparse) path
        monkeypatch.setattr(propagation, "_DENSE_FRACTION", frac)
        u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, seed=0).fit()
        rec = u.unlearn_edges(e)
        out.append((u.embeddings(), u.coef_, rec.data_bound, u._prop.invariant_error()))
    (Z0, W0, b0, inv0), (Z1, W1, b1, _) = out
    assert inv0 < 1e-12
    np.testing.assert_allclose(Z0, Z1, rtol=0, atol=1e-13)
    np.testing.assert_allclose(W0, W1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b0, b1, rtol=1e-9)


def test_exact_propagation_without_normalised_copy():
    rng = np.random.default_rng(0)
    A = sp.random_array((300, 300), density=0.03, rng=rng)
    A = ((A + A.T) > 0).astype(float) + sp.eye_array(300)
    A = sp.csr_array(A)
    X = rng.normal(size=(300, 5))
    deg = np.asarray(A.sum(axis=1)).ravel()
    P = sp.diags_array(deg ** -0.5) @ A @ sp.diags_array(deg ** -0.5)
    w = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(exact_propagation(A, X, w), w[0] * X + w[1] * (P @ X) + w[2] * (P @ (P @ X)),
                               rtol=1e-12, atol=1e-13)


def test_mapped_citation_graph_gives_the_in_memory_results(arxiv_like):
    g, gm = load_graph_files(arxiv_like), load_graph_files(arxiv_like, mmap=True)
    e = sample_edges(gm.adj, 500, seed=4)
    res = []
    for h in (g, gm):
        u = CertifiedUnlearner(h.adj, h.X, h.y, h.train_idx, seed=0).fit()
        rec = u.unlearn_edges(e)
        res.append((u.embeddings(), u.coef_, rec.data_bound))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-9)


def test_locality_cell_is_alive(arxiv_like):
    c = locality_cell(arxiv_like, seed=0, batch=200, retrains=1, device="cpu")
    assert c["batch_s"] > 0 and c["retrain_s"] > 0 and np.isfinite(c["speedup"])
    assert not c["retrained_in_request"] and c["budget_used"] <= 1.0
    assert 0 < c["S0_frac"] < c["N1_frac"] <= c["N2_frac"] <= 1


@pytest.mark.parametrize("kw, name", [({"n": 1}, "n"), ({"community": 1}, "community"), ({"p_in": 1.5}, "p_in"),
                                      ({"exponent": 2.0}, "exponent"), ({"mean_degree": 3.0}, "mean_degree"),
                                      ({"area_frac": 0}, "area_frac")])
def test_citation_files_rejects_bad_arguments(tmp_path, kw, name):
    args = {"n": 100, **kw}
    with pytest.raises(ValueError, match=name):
        citation_files(tmp_path / "x", args.pop("n"), 4, 3, **args)
