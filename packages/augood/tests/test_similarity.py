import numpy as np
import pytest
from rdkit import Chem, DataStructs
from rdkit.Chem import MACCSkeys, rdFingerprintGenerator

from iclr25.augood import fingerprints, max_similarity, similarity_matrix
from iclr25.augood.sequence import identity_matrix

SMILES = ["CCO", "CCCO", "CCCCO", "c1ccccc1", "c1ccccc1O", "c1ccccc1N", "CC(=O)O", "CC(=O)OC", "CCN(CC)CC",
          "C1CCCCC1", "C1CCNCC1", "O=C(O)c1ccccc1O", "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "CN1CCC[C@H]1c1cccnc1"]


def _rdkit_dense(smiles, bulk, gen=None):
    gen = gen or rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    fps = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles]
    return np.array([bulk(f, fps) for f in fps])


@pytest.mark.parametrize("kind,bulk", [("tanimoto", DataStructs.BulkTanimotoSimilarity),
                                       ("dice", DataStructs.BulkDiceSimilarity),
                                       ("cosine", DataStructs.BulkCosineSimilarity)])
def test_matches_rdkit_bulk(kind, bulk, small_sim):
    smiles = small_sim[3][:150]
    ref = _rdkit_dense(smiles, bulk)
    np.fill_diagonal(ref, 0.0)
    ours = similarity_matrix(smiles, kind=kind, min_threshold=0.0).toarray()
    np.testing.assert_allclose(ours, ref, atol=1e-6)


def test_thresholded_matrix_is_rdkit_bulk_tanimoto_thresholded(small_sim):
    """Issue 65: at the default threshold (0.30) the sparse output is exactly RDKit's BulkTanimotoSimilarity with
    the pairs below 0.30 (in float32) dropped: the same pairs, the same float32 values."""
    smiles = small_sim[3][:200]
    ref = _rdkit_dense(smiles, DataStructs.BulkTanimotoSimilarity).astype(np.float32)
    np.fill_diagonal(ref, 0.0)
    ref[ref < np.float32(0.3)] = 0.0
    ours = similarity_matrix(smiles)
    assert ours.has_sorted_indices and ours.nnz == np.count_nonzero(ref) > 0
    np.testing.assert_array_equal(ours.toarray(), ref)
    cross = similarity_matrix(smiles[:60], smiles[60:])
    np.testing.assert_array_equal(cross.toarray(), ref[:60, 60:])


@pytest.mark.parametrize("kind", ["tanimoto", "dice", "cosine"])
def test_wide_fingerprints_use_int16_counts_and_match_brute_force(monkeypatch, kind):
    """Sets of more than 255 on-bits take the int16 path; tiny sub-tiles exercise the candidate bounds."""
    from iclr25.augood import allpairs

    rng = np.random.default_rng(3)
    bits = rng.random((120, 2048)) < rng.uniform(0.05, 0.3, size=(120, 1))  # 100 to 600 on-bits per row
    assert bits.sum(axis=1).max() > 255
    assert allpairs._count_dtype(bits.sum(axis=1)) is np.int16
    x = bits.astype(np.float64)
    inter, a = x @ x.T, x.sum(axis=1)
    ref = {"tanimoto": inter / (a[:, None] + a[None, :] - inter), "dice": 2 * inter / (a[:, None] + a[None, :]),
           "cosine": inter / np.sqrt(a[:, None] * a[None, :])}[kind].astype(np.float32)
    np.fill_diagonal(ref, 0.0)
    monkeypatch.setattr(allpairs, "SUBTILE", 7)
    monkeypatch.setattr(allpairs, "BLOCK_ROWS", 16)
    monkeypatch.setattr(allpairs, "TILE_COLS", 50)
    for thr in (0.0, 0.15, 0.3):
        got = similarity_matrix(bits.astype(np.uint8), kind=kind, min_threshold=thr)
        np.testing.assert_allclose(got.toarray(), np.where(ref >= np.float32(thr), ref, 0), rtol=1e-6, atol=0)
        resorted = got.copy()
        resorted.has_sorted_indices = False
        resorted.sort_indices()  # the flag set by the two counting sorts is true
        np.testing.assert_array_equal(resorted.indices, got.indices)


def test_maccs_matches_rdkit():
    fps = [MACCSkeys.GenMACCSKeys(Chem.MolFromSmiles(s)) for s in SMILES]
    ref = np.array([DataStructs.BulkTanimotoSimilarity(f, fps) for f in fps])
    np.fill_diagonal(ref, 0.0)
    np.testing.assert_allclose(similarity_matrix(SMILES, fingerprint="maccs", min_threshold=0).toarray(), ref, atol=1e-6)


def test_threshold_diagonal_and_symmetry():
    full = similarity_matrix(SMILES, min_threshold=0.0).toarray()
    S = similarity_matrix(SMILES, min_threshold=0.3)
    dense = S.toarray()
    assert np.all(np.diag(dense) == 0)
    np.testing.assert_array_equal(dense, dense.T)
    assert np.all(S.data >= np.float32(0.3))
    np.testing.assert_array_equal(dense, np.where(full >= np.float32(0.3), full, 0))


def test_cross_similarity_and_max(small_sim):
    smiles = small_sim[3]
    q, t = smiles[:37], smiles[37:200]
    cross = similarity_matrix(q, t, min_threshold=0.0).toarray()
    ref = _rdkit_dense(q + t, DataStructs.BulkTanimotoSimilarity)[:37, 37:200]
    np.testing.assert_allclose(cross, ref, atol=1e-6)
    np.testing.assert_allclose(max_similarity(q, t), ref.max(axis=1), atol=1e-6)
    # Mols, SMILES and precomputed fingerprints give the same matrix
    mols = [Chem.MolFromSmiles(s) for s in q]
    np.testing.assert_array_equal(similarity_matrix(mols, t, min_threshold=0.0).toarray(), cross)
    np.testing.assert_array_equal(similarity_matrix(fingerprints(q), fingerprints(t).toarray(), min_threshold=0.0).toarray(), cross)


@pytest.mark.parametrize("min_threshold", [0.0, 0.3, 0.55])
def test_tiles_are_seamless_and_match_dense(monkeypatch, small_sim, min_threshold):
    from iclr25.augood import allpairs

    fp = small_sim[1]
    dense = similarity_matrix(fp, min_threshold=0.0).toarray()
    expected = np.where(dense >= np.float32(min_threshold), dense, 0)
    monkeypatch.setattr(allpairs, "BLOCK_ROWS", 37)  # many small, unaligned query blocks and target tiles
    monkeypatch.setattr(allpairs, "TILE_COLS", 53)
    tiled = similarity_matrix(fp, min_threshold=min_threshold)
    np.testing.assert_array_equal(tiled.toarray(), expected)
    assert tiled.has_sorted_indices and np.all(tiled.data >= np.float32(min_threshold))
    cross = similarity_matrix(fp[:90], fp[90:], min_threshold=min_threshold).toarray()
    np.testing.assert_array_equal(cross, np.where(dense[:90, 90:] >= np.float32(min_threshold), dense[:90, 90:], 0))
    np.testing.assert_array_equal(max_similarity(fp[:90], fp[90:]), dense[:90, 90:].max(axis=1))


def test_default_is_sparse_and_derived_from_the_grid(small_sim):
    from iclr25.augood import threshold_grid

    fp = small_sim[1]
    full = similarity_matrix(fp, min_threshold=0.0)
    default = similarity_matrix(fp)  # 0.30: the default grid's lowest λ
    assert default.data.min() >= np.float32(0.3) and default.nnz < full.nnz / 5
    grid = similarity_matrix(fp, thresholds=threshold_grid(0.5, 0.9, 0.1))
    assert grid.data.min() >= np.float32(0.5)
    np.testing.assert_array_equal(grid.toarray(), np.where(full.toarray() >= np.float32(0.5), full.toarray(), 0))
    with pytest.raises(ValueError, match=r"min_threshold must be <= min\(thresholds\)"):
        similarity_matrix(fp, min_threshold=0.6, thresholds=[0.5, 0.7])


@pytest.mark.parametrize("backend,n_jobs", [("threading", 2), (None, 2)])
def test_parallel_map_backends_give_the_same_matrix(small_sim, backend, n_jobs):
    fp = small_sim[1]
    ref = similarity_matrix(fp)
    par = similarity_matrix(fp, n_jobs=n_jobs, backend=backend)
    assert (ref != par).nnz == 0


def test_sequence_identity():
    seqs = ["ACDEFGHIKL", "ACDEFGHIKL", "ACDQFGHIKL", "WWWWWWWWWW"]
    ident = identity_matrix(seqs)
    assert ident[0, 1] == 1.0
    assert ident[0, 2] == pytest.approx(0.9)
    assert ident[0, 3] < 0.2
    S = similarity_matrix(seqs, kind="identity", min_threshold=0.5).toarray()
    assert S[0, 1] == 1.0 and S[0, 3] == 0.0 and S[0, 0] == 0.0
    assert identity_matrix(["ACDEF"], ["ACDEFGHIKL"], denominator="longest")[0, 0] == pytest.approx(0.5)


def test_runs_on_a_dask_cluster(small_sim):
    """The same call on Dask (extra [dask]): an in-process LocalCluster stands in for a real cluster."""
    from distributed import Client, LocalCluster

    fp = small_sim[1]
    ref = similarity_matrix(fp)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster):
        par = similarity_matrix(fp, backend="dask", n_jobs=2)
        best = max_similarity(fp[:50], fp[50:], backend="dask", n_jobs=2)
    assert (ref != par).nnz == 0
    np.testing.assert_array_equal(best, max_similarity(fp[:50], fp[50:]))
