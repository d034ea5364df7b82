"""The reduced-scale reproduction: convergence, parity, robustness, scaling in ``k`` and the mask peers.

Each experiment returns plain dictionaries (so that ``repro``, the benchmarks and the tests share them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from iclr25.utils.progress import progress

from .altmin import _randomized_right_vectors, weighted_low_rank
from .costmodel import round_flops
from .datasets import planted

__all__ = ["convergence", "robustness", "scaling", "masks", "loglog_slope", "softimpute_peer"]


def convergence(n: int = 1000, k: int = 16, *, weights: str = "dense", noise: float = 1e-3, p: float = 0.3,
                n_iter: int = 15, solvers: tuple[str, ...] = ("exact", "sketch"), seed: int = 0,
                **options: Any) -> dict[str, Any]:
    """Recovery error per round of each solver on one planted problem."""
    prob = planted(n, n, k, weights=weights, noise=noise, p=p, seed=seed)
    out: dict[str, Any] = {"n": n, "k": k, "weights": weights, "noise": noise, "p": p}
    for solver in solvers:
        res = weighted_low_rank(prob.M, prob.W, k, solver=solver, n_iter=n_iter, truth=prob.truth, seed=seed,
                                **options)
        out[solver] = {"errors": res.recovery_errors.tolist(), "seconds": res.round_seconds.tolist(),
                       "steps": [h.solver_steps for h in res.history]}
    return out


def robustness(n: int = 600, k: int = 8, *, tols: tuple[float, ...] = (1e-2, 1e-4, 1e-8), noise: float = 1e-3,
               n_iter: int = 15, refine: str = "gd", seed: int = 0) -> dict[str, Any]:
    """Final recovery error against the solver tolerance ``ε₀`` (the paper's robust analysis).

    ``refine="gd"`` (the paper's preconditioned gradient descent) converges slowly enough that each ``ε₀``
    really is the binding stopping rule.
    """
    prob = planted(n, n, k, noise=noise, seed=seed)
    exact = weighted_low_rank(prob.M, prob.W, k, solver="exact", n_iter=n_iter, truth=prob.truth, seed=seed)
    out: dict[str, Any] = {"n": n, "k": k, "exact": float(exact.recovery_errors[-1]), "tol": {}}
    for tol in tols:
        res = weighted_low_rank(prob.M, prob.W, k, solver="sketch", n_iter=n_iter, tol=tol, refine=refine,
                                refine_steps=500, truth=prob.truth, seed=seed)
        out["tol"][tol] = {"error": float(res.recovery_errors[-1]),
                           "steps": int(sum(h.solver_steps for h in res.history))}
    return out


def loglog_slope(x: Any, y: Any) -> float:
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def scaling(n: int = 4000, ks: tuple[int, ...] = (16, 32, 64, 128), *, rounds: int = 2, noise: float = 1e-3,
            solvers: tuple[str, ...] = ("exact", "sketch", "pcg"), seed: int = 0, **options: Any) -> dict[str, Any]:
    """Time per round against ``k`` at ``n = d``, the solvers run alternately on the same problem.

    Every solver starts from the same SVD initialisation and runs ``rounds`` rounds; the time per round is
    the median of its rounds. The flop model (:func:`~iclr25.weighted_lowrank.costmodel.round_flops`) is
    evaluated with the refinement steps each round actually took.
    """
    rows = []
    for k in progress(ks, desc="k sweep", total=len(ks)):
        prob = planted(n, n, k, noise=noise, seed=seed)
        Y0 = _randomized_right_vectors(prob.W * prob.M, k, np.random.default_rng(seed))
        row: dict[str, Any] = {"k": k}
        for solver in solvers:
            res = weighted_low_rank(prob.M, prob.W, k, solver=solver, n_iter=rounds, init=Y0,
                                    truth=prob.truth, seed=seed, **options)
            steps = int(np.median([h.solver_steps for h in res.history]))
            row[solver] = {
                "seconds": float(np.median(res.round_seconds)),
                "error": float(res.recovery_errors[-1]),
                "steps": steps,
                "gflop": round_flops(n, n, k, solver=solver, steps=steps,
                                     sketch=options.get("sketch", "countsketch"),
                                     sketch_size=options.get("sketch_size")) / 1e9,
            }
        rows.append(row)
    out: dict[str, Any] = {"n": n, "rows": rows}
    for solver in solvers:
        out[f"slope_{solver}"] = loglog_slope([r["k"] for r in rows], [r[solver]["seconds"] for r in rows])
    return out


def masks(n: int = 1000, k: int = 10, *, p: float = 0.3, noise: float = 1e-3, n_iter: int = 15, seed: int = 0,
          peer_python: str | None = None) -> dict[str, Any]:
    """Matrix completion (``W`` = Bernoulli(p)/p, CSR): ours against the truncated SVD of ``W ∘ M`` and SoftImpute."""
    prob = planted(n, n, k, weights="mask", noise=noise, p=p, seed=seed)
    out: dict[str, Any] = {"n": n, "k": k, "p": p}
    for solver in ("sketch", "exact"):
        t0 = time.perf_counter()
        res = weighted_low_rank(prob.M, prob.W, k, solver=solver, n_iter=n_iter, seed=seed)
        out[solver] = {"error": prob.recovery_error(res.reconstruct()), "seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    WM = sp.csr_array(prob.W).multiply(prob.M).tocsr()
    U, s, Vt = spla.svds(WM, k=k, random_state=seed)
    out["svd"] = {"error": prob.recovery_error((U * s) @ Vt), "seconds": time.perf_counter() - t0}
    out["softimpute"] = softimpute_peer(prob, k, peer_python=peer_python)
    return out


_SOFTIMPUTE = r"""
import json, sys, time
import numpy as np
from fancyimpute import SoftImpute
X = np.load(sys.argv[1])
t0 = time.perf_counter()
Z = SoftImpute(max_rank=int(sys.argv[2]), verbose=False).fit_transform(X)
seconds = time.perf_counter() - t0
np.save(sys.argv[3], Z)
import fancyimpute
print(json.dumps({"seconds": seconds, "version": fancyimpute.__version__}))
"""


def softimpute_peer(prob: Any, k: int, *, peer_python: str | None = None) -> dict[str, Any]:
    """fancyimpute's SoftImpute (``max_rank=k``) on the observed entries, run by ``peer_python`` (an interpreter
    with fancyimpute; default: this one, or ``$ICLR25_FANCYIMPUTE_PYTHON``). Returns the reason when unavailable.
    """
    python = peer_python or os.environ.get("ICLR25_FANCYIMPUTE_PYTHON") or sys.executable
    obs = np.where(sp.csr_array(prob.W).toarray() > 0, prob.M, np.nan)
    with tempfile.TemporaryDirectory(prefix="wlr-softimpute-") as tmp:
        src, dst = Path(tmp) / "x.npy", Path(tmp) / "z.npy"
        np.save(src, obs)
        try:
            proc = subprocess.run([python, "-c", _SOFTIMPUTE, str(src), str(k), str(dst)], capture_output=True,
                                  text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": None, "seconds": None, "note": f"SoftImpute did not run: {exc}"}
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return {"error": None, "seconds": None, "note": f"fancyimpute unavailable: {last}"}
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        Z = np.load(dst)
    return {"error": prob.recovery_error(Z), "seconds": info["seconds"], "note": f"fancyimpute {info['version']}"}
