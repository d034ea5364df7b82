"""The experiments that the benchmarks, the tests and the README share: the evaluation sweep (graphs x seeds,
each cell one fitted unlearner and its baselines, on any :func:`iclr25.utils.parallel.parallel_map` backend) and
the measured certificate impact of float32.

The demo lives in :mod:`iclr25.scalegun.demo`, the reduced-scale reproduction in :mod:`iclr25.scalegun.repro`
(``run_demo``, ``run_repro`` and ``repro_table`` are still importable from here, with a ``DeprecationWarning``).

References: ScaleGUN Sec. 5 (Tables 2-4 efficiency and utility).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from iclr25.utils.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss
from iclr25.utils.parallel import parallel_map

from . import datasets
from .unlearner import CertifiedUnlearner

__all__ = ["sweep", "run_cell", "retrain_from_scratch", "float32_comparison"]

#: the functions that moved out of this module in 0.3.2, and the module each lives in now
_MOVED = {"run_demo": "demo", "run_repro": "repro", "repro_table": "repro"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        from . import demo, repro  # noqa: PLC0415 - only for the deprecated names

        where = demo if _MOVED[name] == "demo" else repro
        warnings.warn(f"iclr25.scalegun.experiments.{name} moved to iclr25.scalegun.{_MOVED[name]}.{name}; "
                      "the old name will be removed in 0.4", DeprecationWarning, stacklevel=2)
        return getattr(where, name)
    raise AttributeError(f"module 'iclr25.scalegun.experiments' has no attribute {name!r}")


# ------------------------------------------------------------------------------------------------ sweep
def _median(xs: list[float]) -> float:
    return float(np.median(xs)) if xs else float("nan")


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """One sweep cell: load (or generate) a graph, fit ScaleGUN, unlearn ``requests[b]`` random requests of
    each batch size ``b`` (edges never repeat), and time the baselines on the edited graph: one exact
    re-propagation (CGU's per-request embedding update) and a retraining (re-propagation plus L-BFGS from
    scratch with fresh noise). Module-level and picklable, so :func:`sweep` can ship it to any backend.

    The unlearner and the retraining baseline compute on ``cell["unlearner"]["device"]`` (default
    ``$ICLR25_DEVICE`` or ``auto``): the baseline's training rows and noise are put on the unlearner's device
    (0.5 built them on the CPU, which failed on a CUDA machine); the propagations run in numpy on the CPU.

    ``cell`` keys: ``graph`` (a folder written by :func:`powerlaw_files`, or ``{"n": .., "m": ..}`` for
    :func:`datasets.powerlaw`), ``mmap`` (a folder's graph and features memory-mapped), ``train_keep`` (the
    fraction of the training nodes kept, default 1), ``seed``, ``batches`` (e.g. ``[1, 5000]``), ``requests`` (counts, same
    length), ``baseline_repeats``, and ``unlearner`` (keyword arguments of :class:`CertifiedUnlearner`).
    """
    from .propagation import PushPropagator, exact_propagation
    from .streaming import load_graph_files

    reset_peak_rss()
    rss_start = current_rss_bytes()
    seed = int(cell.get("seed", 0))
    t0 = time.perf_counter()
    spec = cell["graph"]
    if isinstance(spec, dict):
        g = datasets.powerlaw(int(spec["n"]), int(spec["m"]), int(spec.get("features", 64)),
                              int(spec.get("classes", 5)), seed=seed, signal=float(spec.get("signal", 0.3)))
    else:
        g = load_graph_files(spec, mmap=bool(cell.get("mmap", False)))
    load_s = time.perf_counter() - t0
    edges = g.edges
    train = g.train_idx
    keep = float(cell.get("train_keep", 1.0))
    if keep < 1.0:  # a smaller training set (the Newton step's cost scales with it)
        k = max(1, int(round(keep * len(train))))
        train = np.sort(np.random.default_rng(seed).choice(train, k, replace=False))
    t0 = time.perf_counter()
    u = CertifiedUnlearner(g.adj, g.X, g.y, train, seed=seed, **cell.get("unlearner", {})).fit()
    fit_s = time.perf_counter() - t0
    order = np.random.default_rng(seed).permutation(len(edges))
    at = 0
    out: dict[str, Any] = dict(graph=str(spec), mmap=bool(cell.get("mmap", False)), train=len(train), seed=seed,
                               nodes=g.n_nodes, edges=len(edges), load_s=load_s,
                               fit_s=fit_s, r_max=u.r_max, r_max_abs=u.r_max_abs, batches={})
    for b, k in zip(cell["batches"], cell["requests"], strict=True):
        recs = []
        for _ in range(int(k)):
            recs.append(u.unlearn_edges(edges[order[at:at + b]]))
            at += b
        out["batches"][str(b)] = dict(
            update_s=_median([r.update_s for r in recs]), newton_s=_median([r.unlearn_s for r in recs]),
            total_s=_median([r.total_s for r in recs]), max_total_s=max(r.total_s for r in recs),
            cg_iterations=_median([r.cg_iterations for r in recs]), flushes=sum(r.repushed for r in recs),
            retrains=sum(r.retrained for r in recs), max_budget_used=max(r.budget_used for r in recs),
            rows_changed_fraction=_median([r.rows_changed / g.n_nodes for r in recs]), requests=len(recs))
    del edges
    reprop, retrain = [], []
    X_now = u.current_features()
    for _ in range(int(cell.get("baseline_repeats", 1))):
        t0 = time.perf_counter()
        Z = exact_propagation(u._A, X_now, u.weights, u._deg)
        reprop.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        retrain_from_scratch(u, Z[u.train_idx], seed + 1)
        retrain.append(reprop[-1] + time.perf_counter() - t1)
        del Z
    p = u._prop
    out.update(repropagation_s=_median(reprop), retrain_s=_median(retrain), state_bytes=int(u.nbytes()),
               model_state_bytes=PushPropagator.state_bytes(p.n, p.A.nnz, p.F, u.hops, p.dtype.itemsize),
               # the peak since the start is at least the reading at the start (the kernel's high-water
               # mark can lag a reading taken just after its reset)
               peak_rss_bytes=max(peak_rss_bytes(), rss_start), rss_start_bytes=rss_start, accuracy=u.score(g.test_idx),
               flushes=u.ledger.n_repushes, retrains=u.ledger.n_retrains)
    return out


def retrain_from_scratch(u: CertifiedUnlearner, Z_train: np.ndarray, seed: int) -> Any:
    """The retraining baseline's training step: L-BFGS from ``W = 0`` on the exact training embeddings
    ``Z_train`` (float64, on the unlearner's device) with fresh noise drawn from ``seed`` (on the CPU, then moved:
    the same noise on every device), the unlearner's labels, weights and ``lam``. Returns ``W`` on the CPU (the
    copy also waits for an accelerator, so a timing around it is the step's)."""
    import torch

    from .model import train_ovr

    dev = u.device
    Zt = torch.as_tensor(Z_train, dtype=torch.float64, device=dev)
    b = u.sigma * torch.randn(Zt.shape[1], u._Y.shape[1], generator=torch.Generator().manual_seed(seed),
                              dtype=torch.float64)
    return train_ovr(Zt, u._Y, u._t, u.lam, b.to(dev), max_iter=u.max_iter, n=u._n_active()).cpu()


def sweep(graphs: list[Any], *, seeds: tuple[int, ...] = (0,), batches: tuple[int, ...] = (1, 5000),
          requests: tuple[int, ...] = (20, 2), baseline_repeats: int = 1, n_jobs: int = 1,
          backend: str | None = None, mmap: bool = False, train_keep: float = 1.0, **unlearner: Any) -> list[dict[str, Any]]:
    """The evaluation sweep, graphs x seeds (each cell runs every request size on one fitted unlearner),
    through :func:`iclr25.utils.parallel.parallel_map`: ``n_jobs=1`` runs here; ``backend="dask"`` with a
    running ``distributed.Client`` runs the cells on a Dask cluster unchanged (each worker needs the graph
    folders on a shared path, or generates ``{"n", "m"}`` graphs itself); ``mmap=True`` memory-maps the
    folders' graphs and features (:func:`load_graph_files`); ``train_keep < 1`` subsamples the training nodes;
    ``device=`` (among ``unlearner``) is where each cell's model computes (:class:`CertifiedUnlearner`). Returns :func:`run_cell`'s dicts.
    """
    cells = [dict(graph=gr, seed=s, batches=list(batches), requests=list(requests), mmap=mmap, train_keep=train_keep,
                  baseline_repeats=baseline_repeats, unlearner=unlearner) for gr in graphs for s in seeds]
    return parallel_map(run_cell, cells, n_jobs=n_jobs, backend=backend, desc="sweep")


def float32_comparison(g: datasets.GraphData, n_requests: int = 10, seed: int = 0, *, epsilon: float = 1.0,
                       delta: float = 1e-4, sigma: float = 0.1, device: Any = None) -> dict[str, Any]:
    """The certificate impact of ``dtype="float32"``, measured: twin unlearners (float32 and float64 push
    state, ``sigma = 0`` so that float32 can be fitted; the same r_max, the float64 rule's) take the same
    ``n_requests`` single-edge removals; then, against the exact float64 embeddings of the edited graph:

    * ``err32`` / ``err64``: ``||Z_hat - Z||_F`` of each state (residues plus rounding), and ``rounding``:
      ``||Z_hat32 - Z_hat64||_F`` (what float32's rounding really costs);
    * ``allowance32`` / ``allowance64``: the rounding allowance that the bound adds to ``rho``
      (:meth:`PushPropagator.rounding_allowance`) and ``rho32`` the whole of float32's ``rho``;
    * ``approx32`` / ``approx32_measured``: float32's propagation-error term (max over classes) with that
      ``rho``, and with ``err32`` in its place; ``approx64``: float64's;
    * ``true32``: the gradient residual of float32's model on the exact embeddings (what the certificate
      bounds) and ``bound32`` its data-dependent bound;
    * ``budget``: ``sigma epsilon / c(delta)`` at the given ``(epsilon, delta, sigma)``, and
      ``epsilon32`` / ``epsilon32_measured``: the smallest epsilon at which float32's term fits the rule's
      share (10%) of the budget with the allowance, and with the measured error.

    The models compute on ``device`` (:class:`CertifiedUnlearner`; float64 there, whatever the push state's
    dtype).
    """
    import torch

    from .certificate import R_MAX_FRACTION, noise_multiplier, residual_budget
    from .model import ovr_gradient

    rng = np.random.default_rng(seed)
    edges = g.edges[rng.choice(g.n_edges, n_requests, replace=False)]
    ref = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=epsilon, delta=delta, sigma=sigma,
                             device=device).fit()
    kw = dict(r_max=ref.r_max, sigma=0.0, seed=seed, device=device)
    u64 = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, **kw).fit()
    u32 = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, dtype="float32", **kw).fit()
    for e in edges:
        u64.unlearn_edges(e[None, :])
        rec32 = u32.unlearn_edges(e[None, :])
    Z = u64.exact_embeddings()
    err32 = float(np.linalg.norm(u32.embeddings().astype(np.float64) - Z))
    err64 = float(np.linalg.norm(u64.embeddings() - Z))
    rounding = float(np.linalg.norm(u32.embeddings().astype(np.float64) - u64.embeddings()))
    p32, p64 = u32._prop, u64._prop
    rho32 = p32.residue_bound() + p32.rounding_allowance()
    spec, _ = u32._active_stats()
    an, wn = u32._approx_parts()
    approx_measured = float(np.max(err32 * an + 0.25 * wn * err32 * (spec + err32)))
    Zt = torch.as_tensor(Z[u32.train_idx], dtype=torch.float64, device=u32.device)
    true32 = float(torch.linalg.vector_norm(ovr_gradient(u32.W_, Zt, u32._Y, u32._t, u32.lam, u32._b),
                                            dim=0).max())
    budget = residual_budget(sigma, epsilon, delta)
    approx32 = float(np.max(rec32.approx_term))

    def eps_for(term: float) -> float:  # sigma eps / c(delta) * fraction >= term
        return term * noise_multiplier(delta) / (sigma * R_MAX_FRACTION)

    return dict(nodes=g.n_nodes, edges=g.n_edges, requests=n_requests, r_max=ref.r_max, err32=err32,
                err64=err64, rounding=rounding, allowance32=p32.rounding_allowance(), allowance64=p64.rounding_allowance(),
                rho32=rho32, approx32=approx32, approx32_measured=approx_measured,
                approx64=float(np.max(u64.ledger[-1].approx_term)), true32=true32,
                bound32=float(np.max(rec32.data_bound)), budget=budget, epsilon32=eps_for(approx32),
                epsilon32_measured=eps_for(approx_measured), state_bytes32=p32.nbytes(),
                state_bytes64=p64.nbytes())
