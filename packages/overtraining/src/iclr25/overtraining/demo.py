"""``iclr25 overtraining demo``: the odour-task network trained past E0, its hidden progress and the linear
max-margin check, on built-in data in under 30 s."""

from __future__ import annotations

import argparse

from iclr25.utils.io import naming_write_errors as writing
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .figures import progress_figure, table

PACKAGE = "iclr25-overtraining"


def demo(args: argparse.Namespace) -> int:
    from .experiments import DEFAULT_CONFIG, DEFAULT_TASK, hidden_progress, linear_max_margin
    from .network import device_name

    seed_everything(args.seed)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config={"task": DEFAULT_TASK, "train": vars(DEFAULT_CONFIG), "factor": 20,
                                  "linear_check": "GD on the logistic loss, 40 separable points in 2-D, 1e5 steps"})
    run.machine["device"] = device_name(args.device)
    hp = hidden_progress(seed=args.seed)  # on --device (the command's device_scope)
    lin = linear_max_margin(100_000, seed=args.seed)
    run.add("E0 (first epoch with training accuracy 1)", hp.E0)
    run.add("normalised hidden margin at 20*E0", hp.margin_end, peer=hp.margin_E0,
            peer_name="margin at E0 (behaviour already at ceiling)", higher_is_better=True, headline=True,
            claim="hidden-margin-grows")
    run.add("normalised hidden margin at 20*E0 / at E0", hp.margin_ratio, higher_is_better=True)
    run.add("held-out accuracy gain E0 -> 20*E0", hp.test_gain, higher_is_better=True)
    run.add("held-out examples flipping wrong -> right after E0", hp.n_flips)
    run.add("min training accuracy in [E0, 20*E0]", hp.train_acc_min_after_E0)
    run.add("Fisher discriminant at 20*E0 / at E0", hp.fld_end / hp.fld_E0)
    run.add("linear logistic GD: cos(w_t, w_SVM) at 1e5 steps", float(lin["cosine"][-1]), higher_is_better=True)
    t_loss = lin["t_loss"][lin["steps"] >= 1000]
    run.add("linear logistic GD: max/min of t*loss(t) over t in [1e3, 1e5]", float(t_loss.max() / t_loss.min()))
    run.add_figure(progress_figure([hp], args.out / "hidden_progress.png",
                                   title="hidden progress after behaviour saturates (E0 dotted, 20*E0 dashed)"),
                   relative_to=args.out)
    with writing(args.out / "results.json"):
        run.finish().save(args.out / "results.json")
    rows = [{"epoch": c.epoch, "train_acc": c.train_acc, "test_acc": c.test_acc, "margin": c.margin, "fld": c.fld,
             "alignment": c.alignment} for c in hp.run.checkpoints if c.epoch <= hp.end_epoch][::3]
    print(table(rows, ["epoch", "train_acc", "test_acc", "margin", "fld", "alignment"]))
    print()
    print(run.to_markdown())
    return 0
