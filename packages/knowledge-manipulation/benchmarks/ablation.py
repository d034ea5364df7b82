"""Ablation of the no-CoT classification result that does not reproduce at N = 1000 (repro: month-parity
accuracy on test people 0.85 without CoT in extractable mode, 2L d64): the candidate causes one at a time,
from one Stage A checkpoint, and the population-size ladder. Writes ``ablation.json``.

Usage: ``python benchmarks/ablation.py [--out DIR]`` (about 3 min on one core).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write

NO_COT, COT = "classification:birth_month:mod2", "classification:birth_month:mod2:cot"


def reworded(pre, rows: list, cot: bool) -> None:
    """The same fine-tune with a question that does not begin like the retrieval question:
    "<name> birth month modulo 2?" (name first; every word in the vocabulary)."""
    import numpy as np

    from iclr25.knowledge_manipulation.experiments import _stage_a_docs
    from iclr25.knowledge_manipulation.tasks import build_task
    from iclr25.knowledge_manipulation.training import Docs, encode_docs, evaluate, pack, train_steps

    task = COT if cot else NO_COT
    pop, tok, cfg = pre.population, pre.tokenizer, pre.config.finetune

    def qas(people, seed):
        return [dataclasses.replace(q, prompt=f"{pop.people[q.person].name} birth month modulo 2?")
                for q in build_task(pop, task, people=people, seed=seed)]

    rng = np.random.default_rng(7)
    model = __import__("copy").deepcopy(pre.model)
    docs = encode_docs(tok, qas=qas("train", 0) * cfg.epochs)
    stage_a = _stage_a_docs(pop, tok, pre.config, rng, cfg.epochs // 4 + 1)
    pick = rng.choice(len(stage_a), size=min(len(stage_a), int(round(0.3 / 0.7 * len(docs)))), replace=False)
    docs = docs + Docs([stage_a.ids[k] for k in pick], [stage_a.mask[k] for k in pick])
    train_steps(model, pack(docs, cfg.seq_len, rng=rng), cfg)
    tr, te = evaluate(model, tok, qas("train", 0)), evaluate(model, tok, qas("test", 1))
    rows.append({"variant": "question reworded, name first", "task": task, "N": len(pop), "train": tr.accuracy,
                 "test": te.accuracy, "chance": te.chance})
    print(f"{'question reworded: <name> birth month modulo 2?':55s} {task:38s} train {tr.accuracy:.3f} "
          f"test {te.accuracy:.3f} chance {te.chance:.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/knowledge-manipulation-ablation"))
    args = ap.parse_args()
    set_torch_threads(1)
    from iclr25.knowledge_manipulation.experiments import eval_task, finetune, pretrain
    from iclr25.knowledge_manipulation.repro import repro_plan

    rows = []

    def one(pre, label, task=NO_COT, **kw):
        t0 = time.perf_counter()
        model, _ = finetune(pre, task, seed=0, **kw)
        tr, te = eval_task(model, pre, task, "train"), eval_task(model, pre, task, "test")
        rows.append({"variant": label, "task": task, "N": len(pre.population), "train": tr.accuracy,
                     "test": te.accuracy, "chance": te.chance})
        print(f"{label:55s} {task:38s} train {tr.accuracy:.3f} test {te.accuracy:.3f} chance {te.chance:.3f} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)

    base = repro_plan(1000)["extractable 2L d64"]
    pre = pretrain(base, seed=0)
    for cot in (False, True):
        reworded(pre, rows, cot)
    one(pre, "repro setting (20 epochs, replay 0.3, 500 train people)")
    one(pre, "no replay", replay=0.0)
    one(pre, "5 fine-tune epochs", config=dataclasses.replace(base.finetune, epochs=5))
    one(pre, "fine-tune on 100 of the 500 train people", n_train=100)
    one(pre, "fine-tune on 100 train people, CoT", task=COT, n_train=100)
    for n in (200, 500):
        cfg = dataclasses.replace(base, n_people=n)
        p = pretrain(cfg, seed=0)
        one(p, f"population N = {n} (same recipe)")
        one(p, f"population N = {n} (same recipe), CoT", task=COT)
    with atomic_write(args.out / "ablation.json") as f:
        json.dump({"config": base.to_dict(), "rows": rows}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
