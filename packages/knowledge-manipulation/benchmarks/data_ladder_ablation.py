"""Ablation of the top rung of the fine-tune data ladder (``no-cot-gap-at-double-data``, repro rung): month parity
of test people, CoT fine-tune against no-CoT fine-tune, on all 100 train people of a population of N = 200
(Stage A trained at each of seeds 0-4 with the recipe of the claims' rungs), one factor changed at a time:

- ``claim rung``: 30 fine-tune epochs, peak lr 2e-3, 30 % replay of Stage A documents (the claim's setting);
- ``90 epochs``: three times the fine-tune epochs (budget);
- ``lr 1e-3``: half the peak learning rate (hyperparameter);
- ``no replay``: no Stage A documents mixed into the fine-tune (implementation choice).

For each CoT fine-tune it also measures the two steps of the chain of thought on test people: ``month right``,
how often it writes the person's month (the retrieval step), and ``given true month``, its accuracy when the
true month is put in its prompt (forced choice of the label: the month -> parity step alone).

Writes ``data_ladder_ablation.json``. Usage: ``python benchmarks/data_ladder_ablation.py [--out DIR]
[--seeds 0 1 2 3 4]`` (about 3 min on one core).
"""

from __future__ import annotations

import dataclasses
import json
import time

from iclr25.utils.bench import benchmark_parser
from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write

NO_COT, COT = "classification:birth_month:mod2", "classification:birth_month:mod2:cot"
N, N_TRAIN = 200, 100
#: name -> (changes to the fine-tune recipe, replay fraction or None for the config's, tasks)
VARIANTS = {
    "claim rung": ({}, None, (NO_COT, COT)),
    "90 epochs": ({"epochs": 90}, None, (NO_COT, COT)),
    "lr 1e-3": ({"lr": 1e-3}, None, (NO_COT, COT)),
    "no replay": ({}, 0.0, (NO_COT, COT)),
}


def main() -> None:
    ap = benchmark_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = ap.parse_args()
    set_torch_threads(1)
    from iclr25.knowledge_manipulation.experiments import (
        eval_cot_prompt,
        eval_task,
        finetune,
        pretrain,
        retrieval_accuracy,
        test_config,
    )

    cfg = dataclasses.replace(test_config(), n_people=N)
    rows = []
    t0 = time.process_time()
    for seed in args.seeds:
        pre = pretrain(cfg, seed=seed)
        retrieval = retrieval_accuracy(pre.model, pre, "birth_date", "test").accuracy
        for name, (change, replay, tasks) in VARIANTS.items():
            row = {"seed": seed, "variant": name, "stage_a_retrieval_test": retrieval}
            for task in tasks:
                model, _ = finetune(pre, task, config=dataclasses.replace(cfg.finetune, **change), replay=replay,
                                    n_train=N_TRAIN, seed=seed)
                key = "cot" if task.endswith(":cot") else "no_cot"
                row[f"{key}_train"] = eval_task(model, pre, task, "train", seed=seed).accuracy
                te = eval_task(model, pre, task, "test", seed=seed)
                row[f"{key}_test"], row["chance"] = te.accuracy, te.chance
                if key == "cot":
                    row["month_right"] = te.cot_step
                    row["given_true_month"] = eval_cot_prompt(model, pre, NO_COT, "test", seed=seed).accuracy
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"variants": {k: {"finetune_change": v[0], "replay": v[1]} for k, v in VARIANTS.items()}, "rows": rows,
           "cpu_s": time.process_time() - t0,
           "setting": f"Stage A trained at each seed (N = {N}, 2L d64, 50 epochs, extractable mode); fine-tunes on "
                      f"{N_TRAIN} train people, evaluated on the {N - N_TRAIN} test people"}
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "data_ladder_ablation.json") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
