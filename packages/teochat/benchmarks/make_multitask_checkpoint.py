"""The shipped multi-task checkpoint (issue 60): one assistant that answers every task type, as the paper's
TEOChat is one model for all of them.

It starts from the shipped task-specific localisation checkpoint (``demo-temporal.npz``: change localisation and
single-image detection, 5000 steps, d=64, 3 layers) and is trained ``--steps`` more on every task of the repro's
nine-task mix (task-balanced batches) on the balanced generator (``make_data``'s default since 0.8), seed 0's
training split (2400 sequences). At each rung of ``--ladder`` it is scored per task on seed 0's held-out split,
beside the two task-specific localisation checkpoints (on the tasks they were trained for) and the one-frame
references (:mod:`iclr25.teochat.references`: rules chosen on the training split, reported on the test split;
the strongest of them per task), and the two-frame pixel difference.

    python benchmarks/make_multitask_checkpoint.py --out benchmarks --docs docs --ship --overwrite

Writes ``multitask.json`` (``--out``), the generated table ``multitask.md`` (``--docs``) and, with ``--ship``,
``demo-multitask.npz`` and a copy of ``multitask.json`` into the package's weights folder with its
``manifest.json`` rewritten over every shipped part.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import torch
from _outputs import add_out, parse_checked  # the sibling module (benchmarks/ is the script's folder)

from iclr25.teochat.assistant import Assistant, TrainConfig, train_assistant
from iclr25.teochat.experiments import REPRO_TASKS, make_data
from iclr25.teochat.metrics import evaluate_predictions
from iclr25.teochat.pretrained import PARTS, PRETRAINED, weights_folder
from iclr25.teochat.references import ONE_FRAME, PIXEL_DIFFERENCE, one_frame_scores
from iclr25.utils.checkpoints import write_manifest
from iclr25.utils.io import atomic_write

NAMES = {"tsc": "temporal scene classification (acc.)", "loc": "change localisation (pixel F1)",
         "damage": "damage classification (inv. F1)", "sre": "referring expressions (pixel F1)",
         "qa": "change QA (acc.)", "rqa": "region change QA (acc.)", "tre": "temporal referring (acc.)",
         "rtqa": "region temporal QA (acc.)", "det1": "single-image building detection (pixel F1)"}
#: what the task-specific checkpoints were trained on (``weights/demo.json``)
SPECIFIC_TASKS = ("loc", "det1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=2500)
    ap.add_argument("--ladder", default="500,1000,2500", help="steps at which the model is scored")
    ap.add_argument("--n-train", type=int, default=2400)
    ap.add_argument("--n-test", type=int, default=240)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--init", choices=("temporal", "none"), default="temporal",
                    help="start from the shipped localisation checkpoint (default) or from scratch")
    add_out(ap, "--out", "results/teochat-multitask", ("multitask.json",))
    ap.add_argument("--docs", type=Path, default=None, help="folder for the generated table multitask.md")
    ap.add_argument("--ship", action="store_true", help="write demo-multitask.npz into the package's weights")
    args = parse_checked(ap)
    ladder = sorted({int(s) for s in args.ladder.split(",")} | {args.steps})
    torch.set_num_threads(1)
    t0 = time.process_time()
    data = make_data(args.n_train, args.n_test, seed=args.seed, tasks=REPRO_TASKS, balanced_looks=True)
    ex = list(data.test)

    def scores(asst) -> dict[str, float]:
        s = evaluate_predictions(ex, asst.predict(ex, data.test_seqs))
        return {t: float(v) for t, v in s.scores.items()}

    def shipped(name: str) -> Assistant:  # before the multi-task parts exist (load_pretrained wants them all)
        return Assistant.load(weights_folder() / PRETRAINED[name])

    init = shipped("temporal") if args.init == "temporal" else None
    mcfg = shipped("temporal").model.cfg
    rows: list[dict] = []

    def on_rung(step: int, asst) -> None:
        rows.append({"steps": step, "scores": scores(asst), "cpu_s": round(time.process_time() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)

    asst = train_assistant(data.train_seqs, data.train, seed=args.seed, model_config=mcfg, init=init,
                           config=TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr),
                           callback=on_rung, callback_steps=ladder, desc="multitask")
    specific = {}
    for name, label in (("temporal", "task-specific TEOChat checkpoint (localisation + detection)"),
                        ("last_frame", "task-specific last-frame checkpoint (localisation + detection)")):
        sub = [e for e in ex if e.task in SPECIFIC_TASKS]
        s = evaluate_predictions(sub, shipped(name).predict(sub, data.test_seqs))
        specific[label] = {t: float(v) for t, v in s.scores.items()}
    refs = one_frame_scores(data)
    strongest = {t: max(((k, v) for k, v in r.items() if k in ONE_FRAME), key=lambda kv: kv[1])
                 for t, r in refs.items()}
    import importlib.metadata

    cmd = (f"python benchmarks/make_multitask_checkpoint.py --seed {args.seed} --steps {args.steps} --ladder "
           f"{','.join(map(str, ladder))} --n-train {args.n_train} --n-test {args.n_test} --batch-size "
           f"{args.batch_size} --lr {args.lr} --init {args.init}")
    out = {"command": cmd, "version": importlib.metadata.version("iclr25-teochat"), "torch": torch.__version__,
           "seed": args.seed, "model": {"d_model": mcfg.d_model, "n_layers": mcfg.n_layers},
           "init": "demo-temporal.npz" if init is not None else None, "tasks": list(REPRO_TASKS),
           "generator": "balanced_looks=True", "ladder": rows, "task_specific": specific,
           "references": refs, "strongest_one_frame": {t: {"name": k, "score": v} for t, (k, v) in strongest.items()},
           "test_questions": {t: sum(e.task == t for e in ex) for t in REPRO_TASKS},
           "cpu_seconds": round(time.process_time() - t0, 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out / "multitask.json") as f:
        f.write(json.dumps(out, indent=1, allow_nan=False) + "\n")
    if args.docs is not None:
        args.docs.mkdir(parents=True, exist_ok=True)
        with atomic_write(args.docs / "multitask.md") as f:
            f.write(table(out))
    if args.ship:
        w = weights_folder()
        asst.save_npz(w / "demo-multitask.npz")
        shutil.copyfile(args.out / "multitask.json", w / "multitask.json")
        old = json.loads((w / "manifest.json").read_text(encoding="utf-8"))["meta"]
        write_manifest(w, [p for p in PARTS if (w / p).is_file()],
                       meta={**old, "multitask_command": cmd})
    print(table(out))


def table(out: dict) -> str:
    """The generated markdown table of ``multitask.json``."""
    last = out["ladder"][-1]
    steps = [r["steps"] for r in out["ladder"]]
    lines = [f"# One assistant for every task (issue 60; generated by `{out['command']}`, iclr25-teochat "
             f"{out['version']}; do not edit)", "",
             f"The shipped multi-task checkpoint (`load_pretrained(\"multitask\")`, d={out['model']['d_model']}, "
             f"{out['model']['n_layers']} layers; from `{out['init']}`, then {last['steps']} steps on the nine "
             f"tasks, balanced generator) on seed {out['seed']}'s held-out split, per task, beside the task-specific "
             "localisation checkpoints (trained on localisation and detection only) and the strongest one-frame "
             "reference (rules chosen on the training split). Ladder: the same run scored at "
             f"{', '.join(map(str, steps))} steps.", "",
             "| task | " + " | ".join(f"multi-task, {s} steps" for s in steps)
             + " | task-specific TEOChat | task-specific last-frame | strongest one-frame reference |",
             "|---|" + "---|" * (len(steps) + 3)]
    spec = list(out["task_specific"].values())
    for task, name in NAMES.items():
        if task not in last["scores"]:
            continue
        vals = " | ".join(f"{r['scores'].get(task, float('nan')):.3f}" for r in out["ladder"])
        sp = " | ".join(f"{s[task]:.3f}" if task in s else "-" for s in spec)
        st = out["strongest_one_frame"].get(task)
        ref = f"{st['score']:.3f} ({st['name']})" if st else "-"
        lines.append(f"| {name} | {vals} | {sp} | {ref} |")
    pd = out["references"].get("loc", {}).get(PIXEL_DIFFERENCE)
    if pd is not None:
        lines += ["", f"Two-frame pixel difference (no model, threshold chosen on the training split), change "
                      f"localisation: {pd:.3f}."]
    lines += ["", f"CPU: {out['cpu_seconds']:.0f} s (one thread).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
