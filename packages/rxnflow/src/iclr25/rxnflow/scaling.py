"""The per-step cost of subsampled trajectory balance against the number of blocks: one TB step (batch 64, 2-step
trajectories, 8 protocols, synthetic fingerprints) timed in a fresh process, so each point's peak memory is its
own (``repro`` part 4 and the claim ``subsampling-scales``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

__all__ = ["scale_row"]

_SCALE_SCRIPT = r"""
import json, resource, sys, time
import numpy as np, torch
torch.set_num_threads(1)
from iclr25.rxnflow.estimator import draw_subsets
from iclr25.rxnflow.model import PolicyConfig, RxnFlowPolicy
n_blocks, rho, steps, n_bi = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), 8
rng = np.random.default_rng(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
torch.manual_seed(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
bits = torch.from_numpy((rng.random((n_blocks, 1191)) < 0.05).astype(np.uint8))
desc = torch.from_numpy(rng.random((n_blocks, 8)).astype(np.float32))
pools = [np.sort(rng.choice(n_blocks, n_blocks // 3, replace=False)) for _ in range(n_bi)]
pol = RxnFlowPolicy(PolicyConfig(n_uni=0, n_bi=n_bi, max_len=2))
opt = torch.optim.Adam(pol.parameters(), 1e-3, foreach=True)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
B = 64
def step():
    sub = draw_subsets([n_blocks] + [len(p) for p in pools], rho, rng, min_sampling=100)
    ids = [sub.index[0]] + [p[i] for p, i in zip(pools, sub.index[1:])]
    union = np.unique(np.concatenate(ids))
    t = torch.from_numpy(union)
    e = pol.embed_blocks(torch.cat([bits[t].float(), desc[t]], 1))
    es = [e[torch.from_numpy(np.searchsorted(union, i))] for i in ids]
    cond = pol.cond(torch.full((B,), 4.0))
    h0 = pol.encode(torch.zeros(B, 2056), torch.zeros(B, dtype=torch.long), cond)
    L0 = pol.first_logits(h0, es[0])
    lz0 = torch.logsumexp(L0 + float(sub.log_weight[0]), 1)
    a = torch.randint(L0.shape[1], (B,))
    x1 = torch.from_numpy((rng.random((B, 2056)) < 0.03).astype(np.float32))
    h1 = pol.encode(x1, torch.ones(B, dtype=torch.long), cond)
    q = pol.bi_queries(h1)
    L1 = torch.cat([pol.stop_logits(h1)[:, None]] + [q[:, j] @ es[1 + j].T for j in range(n_bi)], 1)
    w = torch.cat([torch.zeros(1)] + [torch.full((len(i),), float(lw)) for i, lw in zip(ids[1:], sub.log_weight[1:])])
    lz1 = torch.logsumexp(L1 + w, 1)
    c = torch.randint(L1.shape[1], (B,))
    logpf = (L0[torch.arange(B), a] - lz0).clamp(max=0) + (L1[torch.arange(B), c] - lz1).clamp(max=0)
    logz = pol.log_z(cond)[:, 0]
    loss = ((logz + logpf - 4.0 * torch.log(torch.rand(B) + 0.1)) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
step()
t0 = time.perf_counter()
for _ in range(steps):
    step()
dt = (time.perf_counter() - t0) / steps
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"n_blocks": n_blocks, "rho": rho, "s_per_step": dt, "peak_rss_mb": peak / 1024,
                  "step_extra_rss_mb": (peak - base) / 1024}))
"""


def scale_row(n_blocks: int, rho: float, steps: int, seed: int = 0) -> dict[str, Any]:
    """One TB step's seconds and peak memory at ``n_blocks`` and ``rho``, in a fresh process (``seed`` draws the
    synthetic library, the policy and the subsets)."""
    proc = subprocess.run([sys.executable, "-c", _SCALE_SCRIPT, str(n_blocks), str(rho), str(steps), str(seed)],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"scale benchmark failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
