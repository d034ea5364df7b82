"""The per-step cost of subsampled trajectory balance against the number of blocks: one TB step (batch 64, 2-step
trajectories, 8 protocols, synthetic fingerprints) timed in a fresh process, so each point's peak memory is its
own (``repro`` part 4 and the claim ``subsampling-scales``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

__all__ = ["scale_row", "step_cost"]

_SCALE_SCRIPT = "from iclr25.rxnflow.scaling import _main; _main()"


def _main() -> None:
    """The fresh process's body: ``argv`` = n_blocks, rho, steps, seed, device; prints one JSON line."""
    n_blocks, rho, steps = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    print(json.dumps(step_cost(n_blocks, rho, steps, seed=seed, device=sys.argv[5] if len(sys.argv) > 5 else "cpu")))


def step_cost(n_blocks: int, rho: float, steps: int, *, seed: int = 0, device: Any = "cpu") -> dict[str, Any]:
    """Time ``steps`` TB steps (after one warm-up) on ``device`` in this process: seconds per step and peak memory
    (the process's RSS; on CUDA also the peak of allocated device memory, ``peak_device_mb``)."""
    import resource  # noqa: PLC0415
    import time  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    from iclr25.utils.device import torch_device  # noqa: PLC0415

    from .estimator import draw_subsets  # noqa: PLC0415
    from .model import PolicyConfig, RxnFlowPolicy  # noqa: PLC0415

    torch.set_num_threads(1)
    dev = torch_device(device)
    n_bi = 8
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    bits = torch.from_numpy((rng.random((n_blocks, 1191)) < 0.05).astype(np.uint8)).to(dev)
    desc = torch.from_numpy(rng.random((n_blocks, 8)).astype(np.float32)).to(dev)
    pools = [np.sort(rng.choice(n_blocks, n_blocks // 3, replace=False)) for _ in range(n_bi)]
    pol = RxnFlowPolicy(PolicyConfig(n_uni=0, n_bi=n_bi, max_len=2)).to(dev)
    opt = torch.optim.Adam(pol.parameters(), 1e-3, foreach=True)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    B = 64

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(dev)

    def step() -> None:
        sub = draw_subsets([n_blocks] + [len(p) for p in pools], rho, rng, min_sampling=100)
        ids = [sub.index[0]] + [p[i] for p, i in zip(pools, sub.index[1:], strict=True)]
        union = np.unique(np.concatenate(ids))
        tu = t(union)
        e = pol.embed_blocks(torch.cat([bits[tu].float(), desc[tu]], 1))
        es = [e[t(np.searchsorted(union, i))] for i in ids]
        cond = pol.cond(torch.full((B,), 4.0, device=dev))
        h0 = pol.encode(torch.zeros(B, 2056, device=dev), torch.zeros(B, dtype=torch.long, device=dev), cond)
        L0 = pol.first_logits(h0, es[0])
        lz0 = torch.logsumexp(L0 + float(sub.log_weight[0]), 1)
        a = torch.randint(L0.shape[1], (B,), device=dev)
        x1 = t((rng.random((B, 2056)) < 0.03).astype(np.float32))
        h1 = pol.encode(x1, torch.ones(B, dtype=torch.long, device=dev), cond)
        q = pol.bi_queries(h1)
        L1 = torch.cat([pol.stop_logits(h1)[:, None]] + [q[:, j] @ es[1 + j].T for j in range(n_bi)], 1)
        w = torch.cat([torch.zeros(1, device=dev)] + [torch.full((len(i),), float(lw), device=dev)
                                                      for i, lw in zip(ids[1:], sub.log_weight[1:], strict=True)])
        lz1 = torch.logsumexp(L1 + w, 1)
        c = torch.randint(L1.shape[1], (B,), device=dev)
        ar = torch.arange(B, device=dev)
        logpf = (L0[ar, a] - lz0).clamp(max=0) + (L1[ar, c] - lz1).clamp(max=0)
        logz = pol.log_z(cond)[:, 0]
        loss = ((logz + logpf - 4.0 * torch.log(torch.rand(B, device=dev) + 0.1)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    dt = (time.perf_counter() - t0) / steps
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"n_blocks": n_blocks, "rho": rho, "s_per_step": dt, "peak_rss_mb": peak / 1024,
           "step_extra_rss_mb": (peak - base) / 1024}
    if dev.type == "cuda":
        out["peak_device_mb"] = torch.cuda.max_memory_allocated(dev) / 2**20
    return out


def scale_row(n_blocks: int, rho: float, steps: int, seed: int = 0, *, device: Any = None) -> dict[str, Any]:
    """One TB step's seconds and peak memory at ``n_blocks`` and ``rho``, in a fresh process (``seed`` draws the
    synthetic library, the policy and the subsets), on ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``)."""
    from iclr25.utils.device import torch_device  # noqa: PLC0415

    dev = str(torch_device(device))  # a missing device fails here, in one line
    proc = subprocess.run([sys.executable, "-c", _SCALE_SCRIPT, str(n_blocks), str(rho), str(steps), str(seed), dev],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"scale benchmark failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
