"""The demo and the reduced-scale reproduction behind ``iclr25 scalegun demo`` / ``repro``.

``demo``: scikit-learn digits as a 10-NN graph; a stream of edge, node and feature removals unlearned by
ScaleGUN and by CGU (exact re-propagation) side by side, every request audited against the exact embeddings.

``repro``: Chung-Lu power-law graphs of about 100k, 300k and 1M edges (F = 64, two hops): per-request time
of ScaleGUN, CGU and retraining, accuracy gap to retraining, retrains per 1000 requests, memory.

References: ScaleGUN Sec. 5 (Fig. 2 bounds; Tables 2-4 efficiency and utility).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.memory import current_rss_bytes, peak_rss_bytes, reset_peak_rss
from iclr25.utils.parallel import parallel_map
from iclr25.utils.progress import progress
from iclr25.utils.results import RunResult

from . import datasets
from .unlearner import CertifiedUnlearner

__all__ = ["run_demo", "run_repro", "sweep", "run_cell", "float32_comparison"]

PACKAGE = "iclr25-scalegun"
# the config entries that are CertifiedUnlearner arguments (so results.json records what actually ran)
_UNLEARNER_KEYS = ("hops", "r_max", "epsilon", "delta", "lam", "sigma")


def _stream(u: CertifiedUnlearner, edges: np.ndarray, nodes: np.ndarray, feats: np.ndarray, desc: str) -> list:
    recs = []
    for e in progress(edges, total=len(edges), desc=f"{desc} edges"):
        recs.append(u.unlearn_edges(e[None, :]))
    for a in nodes:
        recs.append(u.unlearn_nodes([a]))
    for a in feats:
        recs.append(u.unlearn_features([a]))
    return recs


def run_demo(out: Path, seed: int = 0) -> RunResult:
    """Digits kNN graph: 60 edge + 10 node + 10 feature removals, ScaleGUN vs CGU, audited."""
    cfg: dict[str, Any] = dict(dataset="sklearn digits, 10-NN graph", hops=2, r_max=None, epsilon=1.0,
                               delta=1e-4, lam=1e-2, sigma=0.1, n_edges=60, n_nodes=10, n_features=10)
    run = RunResult.start(PACKAGE, "demo", seed=seed, config=cfg)
    g = datasets.digits_knn(10, seed=seed)
    rng = np.random.default_rng(seed)
    edges = g.edges[rng.choice(g.n_edges, cfg["n_edges"], replace=False)]
    picked = rng.choice(g.train_idx, cfg["n_nodes"] + cfg["n_features"], replace=False)
    nodes, feats = picked[: cfg["n_nodes"]], picked[cfg["n_nodes"]:]
    kw = {k: cfg[k] for k in _UNLEARNER_KEYS} | {"seed": seed}
    sg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, audit=True, **kw).fit()
    run.config.update(r_max_chosen=sg.r_max, r_max_abs_chosen=sg.r_max_abs)  # r_max=None: the default rule
    acc0 = sg.score(g.test_idx)
    recs = _stream(sg, edges, nodes, feats, "scalegun")
    cg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="cgu", **kw).fit()
    recs_cgu = _stream(cg, edges, nodes, feats, "cgu")
    keep = np.setdiff1d(g.train_idx, picked)
    edited = sg.exact_embeddings()
    rt = CertifiedUnlearner(sg.current_graph(), sg.current_features(), g.y, keep, standardize=False, mode="retrain",
                            **{**kw, "seed": seed + 1}).fit()
    true = np.array([r.true_residual for r in recs])
    data = np.array([r.data_bound for r in recs])
    worst = np.array([r.worst_case_bound for r in recs])
    ordered = (true <= data).all(axis=1) & (data.max(axis=1) <= worst)
    t_sg = np.mean([r.total_s for r in recs])
    t_cg = np.mean([r.total_s for r in recs_cgu])
    # the headline: the certificate holds over all 80 requests without retraining (the data-dependent bound, the
    # audited quantity the paper's Fig. 2 plots, stays below the noise budget)
    run.add("max data-dependent bound over 80 requests", float(data.max()), peer=sg.budget,
            peer_name="certification budget sigma*eps/c(delta)", higher_is_better=False, headline=True)
    run.add("test accuracy after unlearning", sg.score(g.test_idx), peer=rt.score(g.test_idx),
            peer_name="retrain on edited graph", higher_is_better=True)
    run.add("test accuracy before unlearning", acc0, higher_is_better=True)
    run.add("CGU test accuracy after unlearning", cg.score(g.test_idx), higher_is_better=True)
    run.add("requests with true <= data-dependent <= worst-case bound", float(ordered.mean()),
            higher_is_better=True)
    run.add("max true gradient residual", float(true.max()), higher_is_better=False)
    run.add("budget sigma*eps/c(delta)", sg.budget)
    run.add("retrains in 80 requests", sg.ledger.n_retrains, higher_is_better=False)
    run.add("max |Z_hat - Z| (embedding error)", float(np.abs(sg.embeddings() - edited).max()),
            higher_is_better=False)
    run.add("per-request time", t_sg, peer=t_cg, peer_name="CGU (exact re-propagation)", unit="s",
            higher_is_better=False, timing=True)
    run.add("per-request embedding update", np.mean([r.update_s for r in recs]),
            peer=np.mean([r.update_s for r in recs_cgu]), peer_name="CGU", unit="s", higher_is_better=False,
            timing=True)
    _demo_figure(out, recs, sg.budget, (cfg["n_edges"], cfg["n_nodes"], cfg["n_features"]))
    run.add_figure(out / "bounds.png", relative_to=out)
    sg.ledger.to_json(out / "ledger.json")
    return run.finish()


def _demo_figure(out: Path, recs: list, budget: float, counts: tuple[int, int, int] = (60, 10, 10)) -> None:
    """The three bounds per request on a log scale, the budget, retrain events (only when there are any) and
    the legend outside the axes, so it covers no line; request numbers are integers."""
    from matplotlib.ticker import MaxNLocator

    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(1, 1, size=(6.4, 3.6))
    x = np.arange(1, len(recs) + 1)
    ax.semilogy(x, [max(r.worst_case_bound, 1e-12) for r in recs], label="worst-case bound", color="C3")
    ax.semilogy(x, [max(r.data_bound) for r in recs], label="data-dependent bound", color="C0")
    ax.semilogy(x, [max(r.true_residual) for r in recs], label="true gradient residual", color="C2")
    ax.axhline(budget, color="k", ls="--", lw=1, label="budget σε/c(δ)")
    retrains = [r_i for r_i, r in zip(x, recs, strict=True) if r.retrained]
    for k, r_i in enumerate(retrains):
        ax.axvline(r_i, color="0.6", lw=0.6, label="retrain" if k == 0 else None)
    edges, nodes, feats = counts
    for b in (edges + 0.5, edges + nodes + 0.5):  # where the request kind changes
        ax.axvline(b, color="0.85", lw=3, zorder=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0.5, len(recs) + 0.5)
    ax.set_xlabel(f"request ({edges} edges, then {nodes} nodes, then {feats} features; "
                  f"{len(retrains)} retrain{'s' if len(retrains) != 1 else ''})")
    ax.set_ylabel("gradient residual norm\n(max over classes)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    savefig(fig, out / "bounds.png")


def _rss_mb() -> float:
    return peak_rss_bytes() / 2**20


def run_repro(out: Path, seed: int = 0, *, sizes: tuple[int, ...] = (100_000, 300_000, 1_000_000),
              n_requests: int = 200, n_cgu: int = 3, n_retrain: int = 2) -> tuple[RunResult, list[dict]]:
    """Power-law graphs of ``sizes`` edges (n = m / 10, F = 64, 5 classes, 2 hops, 10% training nodes)."""
    cfg = dict(sizes=list(sizes), avg_degree=20, features=64, classes=5, signal=0.3, hops=2, r_max=None, epsilon=1.0,
               delta=1e-4, lam=1e-2, sigma=0.1, n_requests=n_requests, n_cgu=n_cgu, n_retrain=n_retrain)
    run = RunResult.start(PACKAGE, "repro", seed=seed, config=cfg)
    rows = []
    # r_max=None: the default rule (r_max_rule) picks the threshold from n and the budget at each size
    kw = {k: cfg[k] for k in _UNLEARNER_KEYS} | {"seed": seed}
    for m in sizes:
        g = datasets.powerlaw(m // 10, m, 64, 5, seed=seed, signal=0.3)
        rng = np.random.default_rng(seed)
        order = rng.permutation(g.n_edges)
        req = g.edges[order[:n_requests]]
        rss0 = _rss_mb()
        t0 = time.perf_counter()
        sg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, **kw).fit()
        t_init = time.perf_counter() - t0
        rss1 = _rss_mb()
        recs = [sg.unlearn_edges(e[None, :]) for e in progress(req, total=len(req), desc=f"scalegun m={m}")]
        cg = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="cgu", **kw).fit()
        recs_cg = [cg.unlearn_edges(e[None, :]) for e in req[:n_cgu]]
        rt = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, mode="retrain", **kw).fit()
        recs_rt = [rt.unlearn_edges(e[None, :]) for e in req[:n_retrain]]
        # accuracy of retraining from scratch on the exact embeddings of the same edited graph
        ref = CertifiedUnlearner(sg.current_graph(), sg.current_features(), g.y, g.train_idx, standardize=False, mode="retrain",
                                 **{**kw, "seed": seed + 1}).fit()
        row = dict(
            edges=g.n_edges, nodes=g.n_nodes,
            scalegun_update_s=float(np.mean([r.update_s for r in recs])),
            scalegun_total_s=float(np.mean([r.total_s for r in recs])),
            cgu_update_s=float(np.mean([r.update_s for r in recs_cg])),
            cgu_total_s=float(np.mean([r.total_s for r in recs_cg])),
            retrain_total_s=float(np.mean([r.total_s for r in recs_rt])),
            acc_scalegun=sg.score(g.test_idx), acc_retrain=ref.score(g.test_idx),
            retrains_per_1000=1000.0 * sg.ledger.n_retrains / len(recs),
            repushes_per_1000=1000.0 * sg.ledger.n_repushes / len(recs),
            max_budget_used=float(max(r.budget_used for r in recs)),
            state_mb=sg.nbytes() / 2**20, rss_growth_mb=rss1 - rss0, init_s=t_init, r_max=sg.r_max,
            r_max_abs=sg.r_max_abs)
        row["update_speedup_vs_cgu"] = row["cgu_update_s"] / row["scalegun_update_s"]
        row["total_speedup_vs_cgu"] = row["cgu_total_s"] / row["scalegun_total_s"]
        row["total_speedup_vs_retrain"] = row["retrain_total_s"] / row["scalegun_total_s"]
        rows.append(row)
        tag = f"{g.n_edges // 1000}k edges"
        run.add(f"{tag}: ScaleGUN update per request", row["scalegun_update_s"], peer=row["cgu_update_s"],
                peer_name="CGU re-propagation", unit="s", higher_is_better=False, timing=True)
        run.add(f"{tag}: ScaleGUN total per request", row["scalegun_total_s"], peer=row["retrain_total_s"],
                peer_name="retrain", unit="s", higher_is_better=False, timing=True)
        run.add(f"{tag}: CGU total per request", row["cgu_total_s"], unit="s", higher_is_better=False,
                timing=True)
        run.add(f"{tag}: test accuracy", row["acc_scalegun"], peer=row["acc_retrain"], peer_name="retrain",
                higher_is_better=True)
        run.add(f"{tag}: retrains per 1000 requests", row["retrains_per_1000"], higher_is_better=False)
        run.add(f"{tag}: full re-pushes per 1000 requests", row["repushes_per_1000"], higher_is_better=False)
        run.add(f"{tag}: unlearner state", row["state_mb"], unit="MiB", higher_is_better=False)
        run.add(f"{tag}: peak RSS growth while fitting", row["rss_growth_mb"], unit="MiB", higher_is_better=False,
                timing=True)
        del sg, cg, rt, ref
    _repro_figure(out, rows)
    run.add_figure(out / "time_vs_size.png", relative_to=out)
    return run.finish(), rows


def _repro_figure(out: Path, rows: list[dict]) -> None:
    from iclr25.utils.plotting import savefig, subplots

    fig, ax = subplots(1, 1, size=(5.0, 3.6))
    m = [r["edges"] for r in rows]
    ax.loglog(m, [r["scalegun_total_s"] for r in rows], "o-", label="ScaleGUN (push + Newton)")
    ax.loglog(m, [r["scalegun_update_s"] for r in rows], "o:", color="C0", label="ScaleGUN update only")
    ax.loglog(m, [r["cgu_total_s"] for r in rows], "s-", label="CGU (re-propagation + Newton)")
    ax.loglog(m, [r["retrain_total_s"] for r in rows], "^-", label="retrain from scratch")
    ax.set_xlabel("undirected edges")
    ax.set_ylabel("seconds per single-edge request")
    ax.legend(fontsize=8)
    savefig(fig, out / "time_vs_size.png")


def repro_table(rows: list[dict]) -> str:
    """The README "Results" table of :func:`run_repro`."""
    head = ("| edges | nodes | ScaleGUN update s | CGU update s | update speed-up | ScaleGUN total s | CGU total s "
            "| retrain s | total speed-up vs retrain | acc ScaleGUN | acc retrain | retrains / 1000 | re-pushes / 1000 "
            "| state MiB |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        lines.append(
            f"| {r['edges']:,} | {r['nodes']:,} | {r['scalegun_update_s']:.2e} | {r['cgu_update_s']:.3f} | "
            f"{r['update_speedup_vs_cgu']:.0f}x | {r['scalegun_total_s']:.2e} | {r['cgu_total_s']:.3f} | "
            f"{r['retrain_total_s']:.3f} | {r['total_speedup_vs_retrain']:.0f}x | {r['acc_scalegun']:.4f} | "
            f"{r['acc_retrain']:.4f} | {r['retrains_per_1000']:.0f} | {r['repushes_per_1000']:.0f} | "
            f"{r['state_mb']:.0f} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ sweep
def _median(xs: list[float]) -> float:
    return float(np.median(xs)) if xs else float("nan")


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """One sweep cell: load (or generate) a graph, fit ScaleGUN, unlearn ``requests[b]`` random requests of
    each batch size ``b`` (edges never repeat), and time the baselines on the edited graph: one exact
    re-propagation (CGU's per-request embedding update) and a retraining (re-propagation plus L-BFGS from
    scratch with fresh noise). Module-level and picklable, so :func:`sweep` can ship it to any backend.

    ``cell`` keys: ``graph`` (a folder written by :func:`powerlaw_files`, or ``{"n": .., "m": ..}`` for
    :func:`datasets.powerlaw`), ``mmap`` (a folder's graph and features memory-mapped), ``train_keep`` (the
    fraction of the training nodes kept, default 1), ``seed``, ``batches`` (e.g. ``[1, 5000]``), ``requests`` (counts, same
    length), ``baseline_repeats``, and ``unlearner`` (keyword arguments of :class:`CertifiedUnlearner`).
    """
    import torch

    from .model import train_ovr
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
    Y, t = u._Y, u._t
    for _ in range(int(cell.get("baseline_repeats", 1))):
        t0 = time.perf_counter()
        Z = exact_propagation(u._A, X_now, u.weights, u._deg)
        reprop.append(time.perf_counter() - t0)
        Zt = torch.as_tensor(Z[u.train_idx], dtype=torch.float64)
        del Z
        b = u.sigma * torch.randn(Zt.shape[1], Y.shape[1], generator=torch.Generator().manual_seed(seed + 1),
                                  dtype=torch.float64)
        t1 = time.perf_counter()
        train_ovr(Zt, Y, t, u.lam, b, max_iter=u.max_iter)
        retrain.append(reprop[-1] + time.perf_counter() - t1)
        del Zt
    p = u._prop
    out.update(repropagation_s=_median(reprop), retrain_s=_median(retrain), state_bytes=int(u.nbytes()),
               model_state_bytes=PushPropagator.state_bytes(p.n, p.A.nnz, p.F, u.hops, p.dtype.itemsize),
               # the peak since the start is at least the reading at the start (the kernel's high-water
               # mark can lag a reading taken just after its reset)
               peak_rss_bytes=max(peak_rss_bytes(), rss_start), rss_start_bytes=rss_start, accuracy=u.score(g.test_idx),
               flushes=u.ledger.n_repushes, retrains=u.ledger.n_retrains)
    return out


def sweep(graphs: list[Any], *, seeds: tuple[int, ...] = (0,), batches: tuple[int, ...] = (1, 5000),
          requests: tuple[int, ...] = (20, 2), baseline_repeats: int = 1, n_jobs: int = 1,
          backend: str | None = None, mmap: bool = False, train_keep: float = 1.0, **unlearner: Any) -> list[dict[str, Any]]:
    """The evaluation sweep, graphs x seeds (each cell runs every request size on one fitted unlearner),
    through :func:`iclr25.utils.parallel.parallel_map`: ``n_jobs=1`` runs here; ``backend="dask"`` with a
    running ``distributed.Client`` runs the cells on a Dask cluster unchanged (each worker needs the graph
    folders on a shared path, or generates ``{"n", "m"}`` graphs itself); ``mmap=True`` memory-maps the
    folders' graphs and features (:func:`load_graph_files`); ``train_keep < 1`` subsamples the training nodes.
    Returns :func:`run_cell`'s dicts.
    """
    cells = [dict(graph=gr, seed=s, batches=list(batches), requests=list(requests), mmap=mmap, train_keep=train_keep,
                  baseline_repeats=baseline_repeats, unlearner=unlearner) for gr in graphs for s in seeds]
    return parallel_map(run_cell, cells, n_jobs=n_jobs, backend=backend, desc="sweep")


def float32_comparison(g: datasets.GraphData, n_requests: int = 10, seed: int = 0, *, epsilon: float = 1.0,
                       delta: float = 1e-4, sigma: float = 0.1) -> dict[str, Any]:
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
    """
    import torch

    from .certificate import R_MAX_FRACTION, noise_multiplier, residual_budget
    from .model import ovr_gradient

    rng = np.random.default_rng(seed)
    edges = g.edges[rng.choice(g.n_edges, n_requests, replace=False)]
    ref = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx, epsilon=epsilon, delta=delta, sigma=sigma).fit()
    kw = dict(r_max=ref.r_max, sigma=0.0, seed=seed)
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
    Zt = torch.as_tensor(Z[u32.train_idx], dtype=torch.float64)
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
