"""Training throughput (tokens/s) of our rotary GPT against plain torch.nn transformers of equal size, at the
three model sizes of the repro ladder, the models taking turns over ``--rounds`` rounds (medians). Writes
``throughput.json`` (the iclr25 results schema).

Usage: ``python benchmarks/throughput.py [--out DIR] [--seconds S] [--rounds R] [--threads N]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.results import RunResult


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/knowledge-manipulation-bench"))
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=3, help="turns per model, order rotated (default 3)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    set_torch_threads(args.threads)
    from iclr25.knowledge_manipulation.benchmarking import throughput
    from iclr25.knowledge_manipulation.repro import LADDER

    run = RunResult.start("iclr25-knowledge-manipulation", "bench", config={"threads": args.threads,
                                                                            "batch": "8 x 64 tokens",
                                                                            "rounds": args.rounds})
    for L, d, h in LADDER:
        r = throughput(n_layers=L, d_model=d, n_heads=h, batch_size=8, seq_len=64, seconds=args.seconds,
                       rounds=args.rounds)
        ours = r["ours (RoPE, packed)"]
        for peer in ("torch.nn.TransformerDecoder", "torch.nn.TransformerEncoder (causal)"):
            run.add(f"{L}L d{d}: tokens/s vs {peer}", ours, peer=r[peer], peer_name=peer, unit="tok/s", timing=True)
    run.finish().save(args.out / "throughput.json")
    print(run.to_markdown())


if __name__ == "__main__":
    main()
