"""Training time per epoch: MS-GODE (masked, frozen signed weights) against fine-tuning (dense) on the same
LG-ODE backbone and the same physics task, timed alternately (``iclr25.utils.bench.compare``).

    python benchmarks/epoch_time.py [--out DIR] [--repeats 5]

The issue's budget: MS-GODE's epoch at most 1.3x fine-tuning's.
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25.ms_gode import LGODE, ModelConfig, task_sequence
from iclr25.ms_gode.model import TaskTensors
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def epoch_fn(model: LGODE, tt: TaskTensors, batch_size: int):
    params = model.task_parameters(0)
    opt = torch.optim.AdamW(params, lr=1e-3)
    gen = torch.Generator().manual_seed(0)
    cut = tt.task.n_obs // 2

    def run() -> None:
        for i in range(0, len(tt.task), batch_size):
            out = model.loss(tt.batch(np.arange(i, min(i + batch_size, len(tt.task))), enc_cut=cut, target="window"),
                             generator=gen)
            opt.zero_grad(set_to_none=True)
            out.loss.backward()
            opt.step()

    return run


def main() -> None:
    parser = benchmark_parser(__doc__, out="results/ms-gode-bench-epoch", raw=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-sims", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = task_sequence("physics", args.n_sims, seed=0)[0]
    cfg = ModelConfig(hidden=24, ode_hidden=24, augment=8)
    masked = LGODE(4, cfg, masked=True, seed=0)
    masked.add_task()
    masked.set_task(0)
    dense = LGODE(4, cfg, masked=False, seed=0)
    tt = TaskTensors(task, cfg.max_gap)
    cmp = compare(epoch_fn(masked, tt, 10), epoch_fn(dense, tt, 10), names=("MS-GODE epoch", "fine-tune epoch"),
                  repeats=args.repeats)
    print(format_table([cmp]))
    print(f"MS-GODE / fine-tune time per epoch: {1 / cmp.speedup:.3f}")
    run = to_run_result("iclr25-ms-gode", [cmp], command="bench epoch_time",
                        config={"n_sims": args.n_sims, "repeats": args.repeats, "model": cfg.__dict__})
    run.add("MS-GODE / fine-tune time per epoch", 1 / cmp.speedup, higher_is_better=False, timing=True)
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "results.json")


if __name__ == "__main__":
    main()
