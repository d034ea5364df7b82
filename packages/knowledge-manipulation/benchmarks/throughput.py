"""Training throughput of our rotary GPT against plain torch.nn transformers of equal size, at the three model
sizes of the repro ladder (issue 65: the speed record behind the EVIDENCE.md speed table).

    python benchmarks/throughput.py --out benchmarks [--seconds 12] [--rounds 5] [--threads 1]

Per size, ``benchmarking.throughput`` times one AdamW training step of each model (ours: RoPE, packed with
document masks and per-document positions; ``torch.nn.TransformerDecoder`` with a one-token memory;
``torch.nn.TransformerEncoder`` with a causal mask) on the same 8 x 64-token batch: the three models take turns
over ``--rounds`` rounds of ``--seconds / --rounds`` seconds each, the order rotated every round, and each rate is
the median over the rounds. Writes ``DIR/throughput.json``, a speed record (``iclr25.utils.bench.speed_record``
+ ``write_record``: processor, cores, BLAS kernel, load at start and end, date, command) with one row per size
and peer; a row's times are seconds per training step (504 predicted tokens), so the table's ``peer / ours`` is
ours tokens/s over the peer's (above 1: ours is faster). ``make speed-tables`` renders it into EVIDENCE.md.
"""

from __future__ import annotations

import os
import sys
import time

PEERS = ("torch.nn.TransformerDecoder", "torch.nn.TransformerEncoder (causal)")
OURS = "ours (RoPE, packed)"
BATCH, SEQ_LEN = 8, 64


def main() -> int:
    from iclr25.utils.bench import benchmark_parser

    ap = benchmark_parser(__doc__, out="results/knowledge-manipulation-bench", raw=True)
    ap.add_argument("--seconds", type=float, default=12.0,
                    help="timed seconds per model and size, split over the rounds (default 12)")
    ap.add_argument("--rounds", type=int, default=5, help="turns per model, order rotated (default 5; at least 3)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args()
    if args.rounds < 3:
        ap.error(f"--rounds must be at least 3 (a median of 3 or more turns), got {args.rounds}")
    if not args.seconds > 0:
        ap.error(f"--seconds must be > 0, got {args.seconds}")
    if args.threads < 1:
        ap.error(f"--threads must be >= 1, got {args.threads}")
    if args.out.exists() and not args.out.is_dir():
        ap.error(f"--out must be a folder, {args.out} is a file")

    from iclr25.utils.bench import speed_record, write_record
    from iclr25.utils.cli import set_torch_threads

    set_torch_threads(args.threads)
    import torch

    from iclr25.knowledge_manipulation.benchmarking import throughput
    from iclr25.knowledge_manipulation.repro import LADDER

    command = "python benchmarks/throughput.py --out benchmarks" + "".join(
        f" {flag} {value:g}" for flag, value, default in (("--seconds", args.seconds, 12.0),
                                                          ("--rounds", args.rounds, 5),
                                                          ("--threads", args.threads, 1)) if value != default)
    tokens = BATCH * (SEQ_LEN - 1)  # predicted tokens per training step
    load0 = os.getloadavg()[0]
    t_start = time.perf_counter()
    rows = []
    for L, d, h in LADDER:
        r = throughput(n_layers=L, d_model=d, n_heads=h, batch_size=BATCH, seq_len=SEQ_LEN, seconds=args.seconds,
                       rounds=args.rounds)
        for peer in PEERS:
            rows.append({"case": f"{L}L d{d}, {h} heads", "ours": OURS, "ours_s": tokens / r[OURS],
                         "peer": peer, "peer_s": tokens / r[peer],
                         "ours_tokens_per_s": r[OURS], "peer_tokens_per_s": r[peer],
                         "ours_params": int(r[f"params {OURS}"]), "peer_params": int(r[f"params {peer}"])})
            print(f"{L}L d{d}: ours {r[OURS]:,.0f} tok/s, {peer} {r[peer]:,.0f} tok/s "
                  f"(ours / peer {r[OURS] / r[peer]:.2f})", flush=True)
    note = (f"Times are seconds per AdamW training step on {BATCH} x {SEQ_LEN}-token batches ({tokens} predicted "
            f"tokens), so peer / ours = our tokens/s over the peer's (above 1: ours is faster). The three models "
            f"take turns, {args.rounds} rounds of {args.seconds / args.rounds:.2g} s per model, the order rotated "
            f"every round; medians over the rounds. {args.threads} torch thread(s), torch {torch.__version__}, "
            f"float32. Ours pays for the block-diagonal document mask and the RoPE rotation; "
            f"TransformerEncoder has a causal mask only.")
    record = speed_record(rows, command=command, repeats=args.rounds, note=note)
    record["wall_s"] = time.perf_counter() - t_start
    record["config"] = {"batch": BATCH, "seq_len": SEQ_LEN, "seconds": args.seconds, "rounds": args.rounds,
                        "threads": args.threads, "ladder": [list(x) for x in LADDER]}
    path = write_record(args.out / "throughput.json", record, load_start=load0)
    print(f"wrote {path}; load {load0:.2f} -> {os.getloadavg()[0]:.2f}; {record['wall_s']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
