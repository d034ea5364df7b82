"""``demo``: month parity without and with CoT on the claims' test rung, and the figure of the three CoT
conditions of the paper's R3 (no CoT; CoT at inference only; CoT in training and inference).

The Stage A model of a shipped seed (0-4, :mod:`.checkpoints`) is loaded, so only the two fine-tunes run (about
10 s of one core); another ``--seed`` trains Stage A first.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["demo_config", "cot_figure", "demo"]

PACKAGE = "iclr25-knowledge-manipulation"


def demo_config():
    """The built-in run of ``demo``: the claims' test rung (:func:`.experiments.test_config`) at the demo's seed,
    month parity without and with CoT (inverse search is left to the claims and ``repro``, to keep the demo near
    10 s)."""
    import dataclasses

    from .experiments import test_config

    return dataclasses.replace(test_config(),
                               tasks=("classification:birth_month:mod2", "classification:birth_month:mod2:cot"))


def cot_figure(no_cot, cot, path: Path, title: str) -> Path:
    """The demo's figure: month parity on train and test people for the three CoT conditions of the paper's R3
    (no CoT; CoT at inference only; CoT in training and inference), the majority label marked."""
    from iclr25.utils.plotting import savefig, subplots

    conds = [("no CoT", no_cot.train.accuracy, no_cot.test.accuracy),
             ("CoT at inference only\n(no-CoT fine-tune,\nCoT prompt)", no_cot.cot_prompt[0].accuracy,
              no_cot.cot_prompt[1].accuracy),
             ("CoT in training\nand inference", cot.train.accuracy, cot.test.accuracy)]
    fig, ax = subplots(size=(5.6, 3.6))
    x = range(len(conds))
    ax.bar([i - 0.2 for i in x], [c[1] for c in conds], width=0.4, label="train people", color="0.7")
    bars = ax.bar([i + 0.2 for i in x], [c[2] for c in conds], width=0.4, label="test people", color="tab:blue")
    for b, c in zip(bars, conds, strict=True):
        ax.annotate(f"{c[2]:.2f}", (b.get_x() + b.get_width() / 2, c[2]), ha="center", va="bottom", fontsize=8)
    ax.axhline(no_cot.test.chance, color="k", ls="--", lw=1, label=f"majority label ({no_cot.test.chance:.2f})")
    ax.set_xticks(list(x))
    ax.set_xticklabels([c[0] for c in conds], fontsize=7)
    ax.set_xlabel("chain-of-thought (CoT) condition")
    ax.set_ylim(0, 1.3)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("month-parity exact match (fraction)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncol=3, frameon=False)
    return savefig(fig, path)


def demo(args: argparse.Namespace) -> int:
    """``iclr25 knowledge-manipulation demo``: ``--out`` is checked by the command line before this runs."""
    from iclr25.utils.cli import set_torch_threads
    from iclr25.utils.device import describe_device, torch_device
    from iclr25.utils.results import RunResult

    dev = torch_device(getattr(args, "device", None))  # an absent device: one line naming --device, before any work
    set_torch_threads(args.threads)
    from .checkpoints import load_stage_a, shipped_seeds
    from .experiments import run_experiment

    cfg = demo_config()
    shipped = args.seed in shipped_seeds()
    run = RunResult.start(PACKAGE, "demo", seed=args.seed,
                          config=cfg.to_dict() | {"stage_a": "shipped checkpoint" if shipped else "trained now"})
    run.machine["device"] = describe_device(dev)
    res = run_experiment(cfg, seed=args.seed, pre=load_stage_a(args.seed) if shipped else None, device=dev)
    no_cot = res.finetune_of("classification:birth_month:mod2")
    cot = res.finetune_of("classification:birth_month:mod2:cot")
    run.add("month parity, test people: CoT fine-tune", cot.test.accuracy, peer=no_cot.test.accuracy,
            peer_name="no-CoT fine-tune", higher_is_better=True, headline=True,
            claim="cot-beats-no-cot")
    if cot.test.accuracy <= no_cot.test.accuracy:
        run.headline_note = (f"at seed {args.seed} CoT does not beat no-CoT on test people (the gap varies with "
                             "the seed at N = 100; the claim is decided over 10 seeds at the cot rung, N = 200 and 90 epochs: "
                             "docs/cot/claims.json)")
    res.add_to(run)
    fig = cot_figure(no_cot, cot, args.out / "cot.png",
                     f"month parity on {no_cot.test.n} test people: CoT "
                     f"{cot.test.accuracy:.2f} vs no CoT {no_cot.test.accuracy:.2f}\n(seed {args.seed}, N = "
                     f"{cfg.n_people}, {cfg.n_layers}L d={cfg.d_model}, Stage A "
                     f"{'shipped' if shipped else 'trained now'})")
    run.add_figure(fig, relative_to=args.out)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0
