"""Scale ladder and ablation of the comparison claim (``comparison-cot-beats-no-cot``, repro rung): month
comparison of two test people, CoT fine-tune against no-CoT fine-tune, from the shipped Stage A checkpoints
(N = 100, seeds 0-4), at three amounts of fine-tuning data (50, 200, 400 ordered pairs of train people).

Besides the accuracy of each fine-tune on test pairs it measures where the CoT answer goes wrong:

- ``first month`` / ``both months``: how often the CoT fine-tune writes the first person's month, and both
  months, correctly ("October and March, so ...") for test pairs: the retrieval step;
- ``given true months``: the CoT fine-tune scored with both *true* months in its prompt (forced choice of
  yes/no): the comparison step alone (does it know the order of the months?);
- ``month-parity CoT step``: for reference, how often the month-parity CoT fine-tune writes a test person's month.

Writes ``comparison_ladder.json``. Usage: ``python benchmarks/comparison_ladder.py [--out DIR] [--seeds 0 1 2 3 4]``
(about 3 min on one core).
"""

from __future__ import annotations

import dataclasses
import json
import time

from iclr25.utils.bench import benchmark_parser
from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write

CMP_NO_COT, CMP_COT = "comparison:birth_month", "comparison:birth_month:cot"
RUNGS = ((50, 30), (200, 15), (400, 10))  # (train pairs, epochs)


def month_steps(model, pre, seed: int) -> tuple[float, float]:
    """(first month right, both months right) in the CoT fine-tune's greedy answers to test pairs."""
    from iclr25.knowledge_manipulation.tasks import build_task, month_name
    from iclr25.knowledge_manipulation.training import generate

    qas = build_task(pre.population, CMP_COT, people="test", seed=seed + 1)
    prompts = pre.tokenizer.encode_batch([q.prompt for q in qas])
    texts = [pre.tokenizer.decode(g) for g in generate(model, prompts, 10)]
    first = both = 0
    for q, t in zip(qas, texts, strict=True):
        a = month_name(pre.population.people[q.person].birth_month)
        b = month_name(pre.population.people[q.other].birth_month)
        first += t.strip().startswith(a)
        both += t.strip().startswith(f"{a} and {b}")
    return first / len(qas), both / len(qas)


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = ap.parse_args()
    set_torch_threads(1)
    from iclr25.knowledge_manipulation.checkpoints import load_stage_a
    from iclr25.knowledge_manipulation.experiments import eval_cot_prompt, eval_task, finetune, test_config

    base = test_config().finetune
    rows = []
    t0 = time.process_time()
    for seed in args.seeds:
        pre = load_stage_a(seed)
        for pairs, epochs in RUNGS:
            cfg = dataclasses.replace(base, epochs=epochs)
            row = {"seed": seed, "pairs": pairs, "epochs": epochs}
            for task in (CMP_NO_COT, CMP_COT):
                model, _ = finetune(pre, task, config=cfg, n_pairs=pairs, seed=seed)
                key = "cot" if task.endswith(":cot") else "no_cot"
                row[f"{key}_train"] = eval_task(model, pre, task, "train", seed=seed).accuracy
                te = eval_task(model, pre, task, "test", seed=seed)
                row[f"{key}_test"], row["chance"] = te.accuracy, te.chance
                if key == "cot":
                    row["first_month"], row["both_months"] = month_steps(model, pre, seed)
                    row["given_true_months"] = eval_cot_prompt(model, pre, CMP_NO_COT, "test", seed=seed).accuracy
                else:
                    row["no_cot_with_cot_prompt"] = eval_cot_prompt(model, pre, task, "test", seed=seed).accuracy
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"rungs": RUNGS, "rows": rows, "cpu_s": time.process_time() - t0,
           "setting": "shipped Stage A checkpoints (N = 100, 2L d64), fine-tune lr 2e-3, 30 % replay"}
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "comparison_ladder.json") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
