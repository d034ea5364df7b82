"""One half-step of each solver: the exact solver's Gram basis built once (and what it must not change),
the sketched solver's factored preconditioner, the sketch bound to its factor, bounded refinement in k."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.weighted_lowrank import regression
from iclr25.weighted_lowrank.regression import (
    LowerInverse,
    SolverConfig,
    solve_exact,
    solve_rows,
    solve_sketch,
)
from iclr25.weighted_lowrank.sketch import HalfStepSketch
from iclr25.weighted_lowrank.weights import as_weighted_matrix


def _problem(n=90, d=70, k=6, density=1.0, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.uniform(0.5, 1.5, (n, d)) * (rng.random((n, d)) < density)
    return rng.normal(size=(n, d)), W, rng.normal(size=(d, k))


def _rebuild_per_block(M, W, F, block):
    """The 0.1 exact solver: Z = vech(f_j f_j^T) rebuilt for every block of ``block`` rows."""
    k = F.shape[1]
    iu, ju = np.triu_indices(k)
    W2 = W * W
    X = np.empty((M.shape[0], k))
    for a in range(0, M.shape[0], block):
        Z = F[:, iu] * F[:, ju]
        flat = W2[a:a + block] @ Z
        G = np.empty((flat.shape[0], k, k))
        G[:, iu, ju] = flat
        G[:, ju, iu] = flat
        X[a:a + block] = np.linalg.solve(G, ((W2 * M)[a:a + block] @ F)[:, :, None])[:, :, 0]
    return X


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cap", [1 << 28, 4000, 600])  # Z once; Z in column blocks; column blocks + super-blocks
def test_gram_basis_once_changes_no_result_to_1e_12(sparse, cap):
    M, W, F = _problem(density=0.6 if sparse else 1.0)
    ref = _rebuild_per_block(M, W, F, block=7)
    A = as_weighted_matrix(M, sp.csr_array(W) if sparse else W, max_batch_bytes=cap)
    X = solve_exact(A, F).X
    assert np.max(np.abs(X - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_gram_basis_is_built_once_per_half_step(monkeypatch):
    M, W, F = _problem()
    calls = []
    real = regression.gram_basis
    monkeypatch.setattr(regression, "gram_basis", lambda *a: calls.append(a) or real(*a))
    A = as_weighted_matrix(M, W, max_batch_bytes=8000)  # 7 rows a block: 13 blocks; Z (70 x 21) fits 8x cap
    assert len(A.row_blocks(8 * regression.exact_floats_per_row(6))) > 10
    solve_exact(A, F)
    assert len(calls) == 1
    calls.clear()
    A = as_weighted_matrix(M, W, max_batch_bytes=400)  # Z does not fit 3200 bytes: column blocks
    X = solve_exact(A, F).X
    width = 21
    col = 3200 // (8 * 70)
    super_rows = 3200 // (8 * width)
    assert len(calls) == -(-width // col) * -(-90 // super_rows)  # once per (column block, super-block)
    np.testing.assert_allclose(X, _rebuild_per_block(M, W, F, 90), rtol=0, atol=1e-10)


def test_exact_equals_lstsq_on_every_row():
    M, W, F = _problem(n=30, d=50, k=5, density=0.7, seed=4)
    X = solve_exact(as_weighted_matrix(M, W, max_batch_bytes=500), F).X
    for i in range(30):
        x = np.linalg.lstsq(W[i][:, None] * F, W[i] * M[i], rcond=None)[0]
        assert np.max(np.abs(X[i] - x)) <= 1e-10 * max(1.0, np.max(np.abs(x)))


@pytest.mark.parametrize("k", [5, 32, 33, 100])
def test_batched_lower_triangular_inverse(k):
    rng = np.random.default_rng(k)
    B = rng.normal(size=(6, k, 2 * k))
    L = np.linalg.cholesky(B @ B.transpose(0, 2, 1))
    Linv = LowerInverse(L)
    inv = Linv.dense()
    np.testing.assert_allclose(inv @ L, np.broadcast_to(np.eye(k), L.shape), atol=1e-11)
    assert np.all(np.triu(inv, 1) == 0)
    g = rng.normal(size=(6, k))
    np.testing.assert_allclose(Linv.precondition(g), np.linalg.solve(L @ L.transpose(0, 2, 1), g[:, :, None])[:, :, 0],
                               rtol=1e-8, atol=1e-10)


def test_factored_preconditioner_is_the_inverse_sketched_gram():
    M, W, F = _problem(n=12, d=300, k=8)
    A = as_weighted_matrix(M, W)
    sk = HalfStepSketch("countsketch", F, 32, np.random.default_rng(0))
    T, Sb = sk.apply(A, slice(0, 12))
    Linv, x0 = regression._sketch_preconditioner(A, slice(0, 12), sk, 0.0)
    g = np.random.default_rng(1).normal(size=(12, 8))
    G = T.transpose(0, 2, 1) @ T
    np.testing.assert_allclose(Linv.precondition(g), np.linalg.solve(G, g[:, :, None])[:, :, 0],
                               rtol=1e-9, atol=1e-12)
    x_ss = np.array([np.linalg.lstsq(T[i], Sb[i], rcond=None)[0] for i in range(12)])  # sketch-and-solve
    np.testing.assert_allclose(x0, x_ss, rtol=1e-8, atol=1e-10)


def _explicit_countsketch(sk):
    """The s x d matrix S of the shared, balanced CountSketch of dense W (bucket = position in perm // m)."""
    S = np.zeros((sk.s, sk.d))
    pos = np.empty(sk.d, dtype=int)
    pos[sk.perm] = np.arange(sk.d)
    S[pos // sk.m, np.arange(sk.d)] = sk.signs
    return S


def test_dense_countsketch_is_bound_to_its_factor_not_to_an_id():
    M, W, F = _problem(n=5, d=64, k=4)
    A = as_weighted_matrix(M, W)
    for seed in range(3):  # a new factor each time, possibly at a recycled address
        F = np.random.default_rng(seed).normal(size=(64, 4))
        sk = HalfStepSketch("countsketch", F, 16, np.random.default_rng(seed))
        S = _explicit_countsketch(sk)
        T, Sb = sk.apply(A, slice(0, 5))
        np.testing.assert_allclose(T, np.einsum("sj,ij,jk->isk", S, W, F), atol=1e-12)
        np.testing.assert_allclose(Sb, (W * M) @ S.T, atol=1e-12)
        F[:] = 0.0  # mutating the caller's array afterwards cannot change what the sketch already holds
        np.testing.assert_allclose(sk.apply(A, slice(0, 5))[0], T, atol=0)
        del F, sk


def test_refinement_steps_stay_bounded_as_k_grows():
    """s = c·k (the default 8k) keeps the preconditioned condition number (so the CG step count) independent of k: a
    deterministic proxy of the ‖W‖_0 k scaling (the cost per step is 4 ‖W‖_0 k)."""
    rng = np.random.default_rng(0)
    d, n = 2048, 24
    W = rng.uniform(0.5, 1.5, (n, d))
    steps = []
    for k in (8, 16, 32, 64, 128):
        F = np.linalg.qr(rng.normal(size=(d, k)))[0] * np.sqrt(d)
        M = rng.normal(size=(k,)) @ F.T + 0.3 * rng.normal(size=(n, d))
        res = solve_sketch(as_weighted_matrix(M, W), F, SolverConfig("sketch", tol=1e-6), rng)
        assert res.rel_gradient <= 1e-6
        steps.append(res.steps)
    assert max(steps) <= 15, steps
    assert steps[-1] - steps[1] <= 3, steps  # k = 16 -> 128 (8x): at most 3 more steps (measured 11 -> 12)


def test_solvers_split_and_dispatch_agree():
    M, W, F = _problem()
    A = as_weighted_matrix(M, W)
    rng = np.random.default_rng(0)
    for solver in ("exact", "sketch", "pcg"):
        res = solve_rows(A, F, SolverConfig(solver, tol=1e-12, refine_steps=200), rng)
        assert res.solver == solver
        np.testing.assert_allclose(res.X, solve_exact(A, F).X, rtol=1e-7, atol=1e-9)


def _sparse(n, d, density, k, seed=0):
    rng = np.random.default_rng(seed)
    W = sp.random_array((n, d), density=density, rng=rng, format="csr")
    W.data[:] = rng.uniform(0.5, 1.5, W.nnz)
    M = sp.csr_array((rng.normal(size=W.nnz), W.indices, W.indptr), shape=W.shape)
    return M, W, rng.normal(size=(d, k))


@pytest.mark.parametrize("solver", ["exact", "sketch"])
def test_sparse_half_step_memory_scales_with_nnz_not_n_times_d(solver):
    """1% density, n = d = 3000: the sparse paths never hold an n x d (or block x d) array; the sketched
    half-step on the same W stored dense does (its normal operator is two dense GEMMs)."""
    import tracemalloc

    n, k = 3000, 4
    M, W, F = _sparse(n, n, 0.01, k)  # 30 weights a row > s = 16: the sketch path is taken
    cfg = SolverConfig(solver, sketch_size=16, tol=1e-10)
    peaks = {}
    for kind, A in (("sparse", as_weighted_matrix(M, W)), ("dense", as_weighted_matrix(M.toarray(), W.toarray()))):
        tracemalloc.start()
        res = solve_rows(A, F, cfg, np.random.default_rng(0))
        peaks[kind] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        peaks[kind + " X"] = res.X
    dense_block = 8 * n * n
    assert peaks["sparse"] < 0.35 * dense_block, peaks  # measured 0.21 (sketch)
    if solver == "sketch":
        assert peaks["dense"] > 0.5 * dense_block, peaks
    np.testing.assert_allclose(peaks["sparse X"], peaks["dense X"], rtol=1e-7, atol=1e-9)


def test_sparse_sketch_takes_short_rows_exactly_and_sketches_the_rest():
    M, W, F = _sparse(200, 400, 0.05, 4)  # ~20 weights a row against s = 16: some rows short, most not
    nnz = np.diff(W.indptr)
    assert 0 < np.sum(nnz <= 16) < 200
    A = as_weighted_matrix(M, W)
    res = solve_sketch(A, F, SolverConfig("sketch", sketch_size=16, tol=1e-12, refine_steps=200),
                       np.random.default_rng(0))
    assert res.steps > 0  # the long rows were sketched and refined
    np.testing.assert_allclose(res.X, solve_exact(A, F).X, rtol=1e-8, atol=1e-10)


def test_row_by_row_lapack_inverse_from_rank_64():
    """From k = LAPACK_ROW_K the sketched Gram matrices are inverted row by row (potrf + potri): the same
    preconditioner and sketch-and-solve start as the batched Cholesky path, and a row with fewer than k weights
    (singular Gram) still falls back to QR."""
    k = regression.LAPACK_ROW_K
    M, W, F = _problem(n=5, d=900, k=k)
    A = as_weighted_matrix(M, W)
    sk = HalfStepSketch("countsketch", F, 2 * k, np.random.default_rng(0))
    T, Sb = sk.apply(A, slice(0, 5))
    assert T.flags.c_contiguous
    inv, x0 = regression._sketch_preconditioner(A, slice(0, 5), sk, 0.0)
    assert isinstance(inv, regression.ExplicitInverse)
    G = T.transpose(0, 2, 1) @ T
    g = np.random.default_rng(1).normal(size=(5, k))
    np.testing.assert_allclose(inv.precondition(g), np.linalg.solve(G, g[:, :, None])[:, :, 0], rtol=1e-8, atol=1e-12)
    x_ss = np.array([np.linalg.lstsq(T[i], Sb[i], rcond=None)[0] for i in range(5)])
    np.testing.assert_allclose(x0, x_ss, rtol=1e-7, atol=1e-10)
    W2 = W.copy()
    W2[0, k // 2:] = 0.0  # row 0: k/2 weights, a singular sketched Gram
    inv2, _ = regression._sketch_preconditioner(as_weighted_matrix(M, W2), slice(0, 5), sk, 0.0)
    assert isinstance(inv2, LowerInverse)
