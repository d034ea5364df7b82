"""``iclr25 scalegun repro``: the reduced-scale reproduction. Chung-Lu power-law graphs of about 100k, 300k and
1M edges (F = 64, two hops): per-request time of ScaleGUN, CGU and retraining, accuracy gap to retraining,
retrains per 1000 requests, memory; then the claims registry's repro rung.

References: ScaleGUN Sec. 5 (Tables 2-4 efficiency and utility).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.guards import check_size
from iclr25.utils.io import atomic_write
from iclr25.utils.memory import peak_rss_bytes
from iclr25.utils.outputs import check_output_path
from iclr25.utils.progress import progress
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from . import datasets
from .claims import REGISTRY
from .figures import repro_figure

__all__ = ["repro", "run_repro", "repro_table", "check_sizes"]

PACKAGE = "iclr25-scalegun"

#: Measured cost model of one ``repro`` size (README, 1M-20M edges): peak RSS growth per edge, and seconds per
#: edge to generate and fit, and per request and edge (CGU's re-propagations dominate); rough, to refuse 10^12.
BYTES_PER_EDGE = 810.0
FIT_S_PER_EDGE = 6e-6
REQUEST_S_PER_EDGE = 6e-8


def repro(args: argparse.Namespace) -> int:
    """The ``repro`` command: sizes checked before any work (and before torch is imported), then
    :func:`run_repro`; writes ``results.json``, ``table.md``, ``time_vs_size.png`` and ``claims.json``."""
    # --out was checked before the command ran; a previous run is any of the files it writes there
    check_output_path(args.out, kind="folder", overwrite=args.overwrite,
                      run_files=("results.json", "table.md", "time_vs_size.png", "claims.json"))
    check_sizes(args)
    from .model import model_device  # noqa: PLC0415 - after the size check: torch stays out of it

    dev = model_device(args.device)
    seed_everything(args.seed)
    run, rows = run_repro(args.out, args.seed, sizes=tuple(args.sizes), n_requests=args.requests, device=dev)
    run.save(args.out / "results.json")
    table = repro_table(rows)
    with atomic_write(args.out / "table.md") as f:
        f.write(table)
    print(run.to_markdown())
    print(table)
    _claims(args.out, args.device)
    return 0


def check_sizes(args: argparse.Namespace) -> None:
    """``--sizes`` and ``--requests`` before any work: positive, and an estimate that fits this machine."""
    bad = [s for s in args.sizes if s < 100]
    if bad:
        raise ValueError(f"--sizes must be numbers of edges >= 100, got {bad[0]}")
    if args.requests < 1:
        raise ValueError(f"--requests must be an integer >= 1, got {args.requests}")
    m = max(args.sizes)
    check_size(f"--sizes {m} --requests {args.requests}", bytes_needed=BYTES_PER_EDGE * m,
               seconds_needed=sum(FIT_S_PER_EDGE * s + args.requests * REQUEST_S_PER_EDGE * s for s in args.sizes),
               force=args.force)


def _claims(out: Path, device: str | None = None) -> None:
    """The claims registry's repro rung on ``device``, written to ``claims.json`` (one verdict line per claim)."""
    from iclr25.utils.device import device_scope  # noqa: PLC0415

    with device_scope(device):  # the measuring code's device=None resolves to it
        report = REGISTRY.run("repro", command="iclr25 scalegun repro")
    report.save(out / "claims.json")
    for r in report.results:
        print(f"claim {r.claim.id}: {r.verdict} (expected: {r.claim.expect})")


def _rss_mb() -> float:
    return peak_rss_bytes() / 2**20


def run_repro(out: Path, seed: int = 0, *, sizes: tuple[int, ...] = (100_000, 300_000, 1_000_000),
              n_requests: int = 200, n_cgu: int = 3, n_retrain: int = 2, device: Any = None
              ) -> tuple[RunResult, list[dict]]:
    """Power-law graphs of ``sizes`` edges (n = m / 10, F = 64, 5 classes, 2 hops, 10% training nodes); the
    models compute on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``), recorded in ``results.json``."""
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    from .model import model_device  # noqa: PLC0415 - torch stays out of --help and the size check
    from .unlearner import CONFIG_KEYS  # noqa: PLC0415

    cfg = dict(sizes=list(sizes), avg_degree=20, features=64, classes=5, signal=0.3, hops=2, r_max=None, epsilon=1.0,
               delta=1e-4, lam=1e-2, sigma=0.1, n_requests=n_requests, n_cgu=n_cgu, n_retrain=n_retrain)
    dev = model_device(device)
    run = RunResult.start(PACKAGE, "repro", seed=seed, config=cfg)
    run.machine["device"] = describe_device(dev)
    rows = []
    # r_max=None: the default rule (r_max_rule) picks the threshold from n and the budget at each size
    kw = {k: cfg[k] for k in CONFIG_KEYS} | {"seed": seed, "device": dev}
    for m in sizes:
        row = _measure_size(m, kw, seed=seed, n_requests=n_requests, n_cgu=n_cgu, n_retrain=n_retrain)
        rows.append(row)
        _add_size(run, row)
    repro_figure(out, rows)
    run.add_figure(out / "time_vs_size.png", relative_to=out)
    return run.finish(), rows


def _measure_size(m: int, kw: dict[str, Any], *, seed: int, n_requests: int, n_cgu: int,
                  n_retrain: int) -> dict[str, Any]:
    """One graph of ``m`` edges: ScaleGUN on ``n_requests`` single-edge requests, CGU on the first ``n_cgu``,
    retraining on the first ``n_retrain``, and retraining from scratch on the edited graph for the accuracy."""
    from .unlearner import CertifiedUnlearner  # noqa: PLC0415

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
    return row


def _add_size(run: RunResult, row: dict[str, Any]) -> None:
    """One size's metrics, each ScaleGUN figure beside its peer (CGU, retraining)."""
    tag = f"{row['edges'] // 1000}k edges"
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
