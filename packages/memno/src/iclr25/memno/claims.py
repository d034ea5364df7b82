"""The paper's claims that this package checks, in the federation's claims registry (``iclr25.utils.claims``).

- ``mori-zwanzig-memory``: on a linear PDE observed through its low modes, one past frame makes a linear
  predictor far better than any Markovian one (the paper's §3 argument; exact least squares, no training);
- ``memno-beats-ffno-low-res``, ``memno-ratio-low-res`` and ``memno-beats-linear-extrapolation``: on
  Kuramoto-Sivashinsky seen at 32 points (ν = 0.075, developed chaos after a 5 s burn-in) MemNO's one-step
  error is below FFNO's (identical Markovian layers and budget; the memory layer is the only difference), by
  the paper's kind of ratio, and below the simplest memory predictor (linear extrapolation from two frames);

The resolution trend (the ratio closer to 1 at 128 points) is not a registry claim: at the test rung it held at
4 of 5 seeds (|log ratio| difference −0.30, −0.00, −0.20, −0.32, −0.31) and costs 15 s per seed; the repro's
resolution rows show it.

Rungs: ``test`` (seeds 0, 1, 2; the demo's model, 48 training trajectories, 30 epochs) and ``repro`` (seeds
0-4; the repro's configuration, 64 / 64 trajectories, 3 FFNO layers, 60 epochs), both at resolution 32 on a
256-point solver grid; ``paper`` (seeds 0, 1, 2; for a GPU: ``iclr25 claims memno --rung paper --estimate``), the
full-size S4FFNO on 512 / 128 trajectories solved on the paper's 512-point grid, 100 epochs. The device is
``$ICLR25_DEVICE`` (``iclr25 claims memno --device``), else ``auto``.
"""

from __future__ import annotations

import functools
from typing import Any

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement, RungCost, smoke_run
from iclr25.utils.device import default_device

__all__ = ["REGISTRY", "CONFIG", "SCALES", "low_res"]

REGISTRY = ClaimRegistry(
    "iclr25-memno", seeds={"test": (0, 1, 2), "repro": (0, 1, 2, 3, 4), "paper": (0, 1, 2)},
    costs={"paper": RungCost(
        gpu_hours=0.05, memory_gb=2, hardware="one CUDA GPU of any size",
        what="KS with the paper's 512-point ground truth and T = 2.5 in 25 steps, seen at 32 points (ν = 0.075); "
             "full-size S4FFNO vs FFNO (width 32, 4 layers, 16 modes, S4D state 64; 0.16 M parameters) on 512 / "
             "128 trajectories, 100 epochs, batch 32; the paper's own sizes are not public. Estimated, not measured "
             "on a GPU: 3,200 steps at <= 10 ms (launch-bound) plus ~30 s of ETDRK4 on the CPU; on one CPU core a "
             "step takes 0.2 s (~0.2 CPU-hours per seed with --force)",
        data="nothing to provide: the trajectories are solved here (the paper's benchmark files are not public)")})

#: the repro's configuration (64 train / 64 test trajectories, width 16, 3 FFNO layers, modes = resolution // 2,
#: 60 epochs) on a 256-point solver grid (the res-32 ratio of seed 0: 0.597 here vs 0.596 on 512 points)
CONFIG: dict[str, Any] = {"n_train": 64, "n_test": 64, "width": 16, "n_layers": 3, "batch_size": 16,
                          "t_burn": 5.0, "n_x": 256, "with_rollout": False}
#: per rung: the comparison's configuration and its epochs. The test rung is the demo's model (2 FFNO layers,
#: 48 training trajectories, batch 8) trained 30 epochs, so three seeds fit the suite.
SCALES: dict[str, tuple[dict[str, Any], int]] = {
    "test": ({**CONFIG, "n_train": 48, "n_test": 32, "n_layers": 2, "batch_size": 8}, 30),
    "repro": (CONFIG, 60),
    "paper": ({**CONFIG, "n_train": 512, "n_test": 128, "width": 32, "n_layers": 4, "batch_size": 32, "n_x": 512},
              100),
}


@functools.lru_cache(maxsize=8)
def low_res(seed: int, rung: str = "test", *, device: str | None = None, smoke: bool = False) -> dict[str, float]:
    """One-step nRMSE of FFNO, MemNO and the trivial predictors at res 32, ν = 0.075 (``seed``), trained on
    ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``); ``smoke``: the rung's configuration for one training
    step (``iclr25 claims --smoke``)."""
    import torch  # noqa: PLC0415

    from .experiments import Setting, compare_models  # noqa: PLC0415

    torch.set_num_threads(1)  # tiny tensors: more intra-op threads only add contention on 2 shared cores
    cfg, epochs = SCALES[rung]
    if smoke:  # one batch of training trajectories, one epoch: one optimiser step per model
        cfg, epochs = {**cfg, "n_train": cfg["batch_size"], "n_test": 4}, 1
    out = compare_models(Setting(32, 0.075), ["ffno", "memno"], epochs=epochs, seed=seed, device=device, **cfg)
    return {k: float(out[k]["eval"].nrmse) for k in ("ffno", "memno", "do-nothing", "linear-extrapolation")}


@REGISTRY.measures(
    Claim("mori-zwanzig-memory", kind="main",
          statement="on a linear PDE observed through its low modes, a predictor with memory is arbitrarily "
                    "better than any Markovian one (Mori-Zwanzig)",
          paper="memory arbitrarily better than Markovian (§3, linear example)",
          metric="Markovian / one-past-frame relative one-step error, least squares, u_t = ν u_xx + 1.5 cos(6x) u "
                 "seen through |m| ≤ 8",
          direction="higher", threshold=100.0, rule="every_seed",
          note="gain 780-846 at seeds 0-5; the threshold 100 reads 'arbitrarily better' as two orders of "
               "magnitude; margin 0 <= max_margin 701.5 from calibration seeds 100-109"),
)
def _mori_zwanzig(seed: int, rung: str) -> dict[str, float]:
    from .theory import mori_zwanzig_toy  # noqa: PLC0415

    del rung
    return {"mori-zwanzig-memory": mori_zwanzig_toy(history=(0, 1), seed=seed).memory_gain}


@REGISTRY.measures(
    Claim("memno-beats-ffno-low-res", kind="main",
          statement="with the PDE supplied at low resolution, MemNO's error is well below the Markovian FFNO's",
          paper="up to 6× lower error at low resolution",
          metric="one-step nRMSE, KS res 32, ν = 0.075, held-out trajectories",
          direction="lower", baseline="FFNO (same layers, data, budget)", margin=0.04, rule="every_seed",
          note="test rung, seeds 0-4: MemNO 0.258-0.284, FFNO 0.373-0.390, gap >= 0.089 at every seed; margin "
               "0.04 <= max_margin 0.078 from calibration seeds 100-109"),
    Claim("memno-ratio-low-res", kind="main",
          statement="MemNO's error is a clear fraction of FFNO's at low resolution",
          paper="MemNO/FFNO ≈ 1/6 at the paper's scale; the paper note's small-scale bar: ≤ 0.7",
          metric="MemNO / FFNO one-step nRMSE, KS res 32, ν = 0.075",
          direction="lower", threshold=0.7, rule="mean_ci", rungs=("repro", "paper"),
          note="the paper note's small-scale bar 0.7, set before any run (0.4.0 loosened it to 0.85 after the "
               "test rung's 30 epochs missed it; restored, issue 58); decided at the repro rung (60 epochs, 3 "
               "layers) and the paper rung, not the test rung, by the mean-interval rule (the bar is on the "
               "mean: 0.632 at seeds 0-2 of 0.4's repro)"),
    Claim("memno-beats-linear-extrapolation", kind="secondary",
          statement="MemNO's gain is more than a trivial use of the past: it beats linear extrapolation from the "
                    "last two frames",
          paper="",
          metric="one-step nRMSE, KS res 32, ν = 0.075",
          direction="lower", baseline="linear extrapolation 2u_t − u_{t−1}", margin=0.01, rule="every_seed",
          note="test rung, seeds 0-4: gap to linear extrapolation 0.071, 0.026, 0.036, 0.043, 0.060; margin "
               "0.01 <= max_margin 0.016 from calibration seeds 100-109"),
)
def _low_res(seed: int, rung: str) -> dict[str, Any]:
    r = low_res(seed, rung, device=default_device(), smoke=smoke_run())
    return {"memno-beats-ffno-low-res": Measurement(r["memno"], reference=r["ffno"]),
            "memno-ratio-low-res": r["memno"] / r["ffno"],
            "memno-beats-linear-extrapolation": Measurement(r["memno"], reference=r["linear-extrapolation"])}
