"""Cost of memory: MemNO vs FFNO time per training epoch at equal width, and streaming vs re-running.

    python benchmarks/cost.py [--out DIR] [--threads N]

Writes DIR/results.json and prints a table with the ratios measured in the same run (alternating timing,
``iclr25.utils.bench.compare``). The paper's budget: MemNO's epoch at most 1.3x FFNO's. On the CPU (the timings
do not synchronise an accelerator).
"""

from __future__ import annotations

import torch

from iclr25.memno import make_model, rollout, rollout_full
from iclr25.utils.bench import benchmark_parser, compare, format_table, to_run_result


def epoch_fn(model: torch.nn.Module, u: torch.Tensor, batch_size: int):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def run() -> None:
        for start in range(0, u.shape[0], batch_size):
            pred = model(u[start:start + batch_size, :-1])
            loss = (pred - u[start:start + batch_size, 1:]).pow(2).mean()
            model.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return run


def main() -> None:
    parser = benchmark_parser(__doc__, out="results/memno-bench-cost", raw=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    rows = []
    config = {"n_traj": 64, "T": 26, "batch_size": 16, "width": 32, "n_layers": 4, "modes": 16}
    for res in (32, 64):
        u = torch.randn(config["n_traj"], config["T"], res, generator=gen)
        kw = {"width": config["width"], "n_layers": config["n_layers"], "modes": config["modes"]}  # 16 at both resolutions
        mem, ffno = make_model("memno", device="cpu", **kw), make_model("ffno", device="cpu", **kw)
        rows.append(compare(epoch_fn(mem, u, config["batch_size"]), epoch_fn(ffno, u, config["batch_size"]),
                            names=(f"MemNO epoch, res {res}", f"FFNO epoch, res {res}"), repeats=args.repeats))
    # streaming: an autoregressive rollout of 25 steps with the cached S4 state vs re-running the history
    mem = make_model("memno", width=32, n_layers=4, modes=16, device="cpu")
    u0 = torch.randn(16, 32, generator=gen)
    rows.append(compare(lambda: rollout(mem, u0, 25, device="cpu"), lambda: rollout_full(mem, u0, 25, device="cpu"),
                        names=("MemNO rollout 25 steps, streaming", "MemNO rollout, re-run full history"),
                        repeats=args.repeats))
    print(format_table(rows))
    for r in rows[:2]:
        print(f"{r.ours.name}: MemNO / FFNO time = {r.ours.median / r.peer.median:.2f}x")
    print(f"streaming speed-up over re-running the history: {rows[2].speedup:.2f}x "
          f"({rows[2].ours.median / 25 * 1e3:.2f} ms per step vs {rows[2].peer.median / 25 * 1e3:.2f} ms)")
    run = to_run_result("iclr25-memno", rows, command="bench-cost", config=config)
    run.save(args.out / "results.json")


if __name__ == "__main__":
    main()
