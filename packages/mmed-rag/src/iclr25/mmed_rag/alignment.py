"""``iclr25 mmed-rag align``: RAG-PT of the user's own Hugging Face LLaVA-style model, end to end: retrieve
reports for the training images, mine the cross-modality (D_cm, a real mismatched image) and overall-alignment
(D_oa1, D_oa2) pairs from that model's own answers, DPO (LoRA through ``peft`` for large models, as the
reference; every weight for tiny ones), evaluate before and after, and save the aligned model.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3.3 RAG-PT; the reference's ``train_dpo_2stages.py``: LoRA,
reference = adapters disabled).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .data import MedDataset
from .evaluation import PACKAGE, hf_eval, load_split

__all__ = ["align"]


def _mine(hf: Any, rs: Any, train: MedDataset, args: argparse.Namespace, rng: np.random.Generator) -> Any:
    """Preference pairs from the model's own answers on up to ``--mine`` training questions."""
    from .data import vqa_items
    from .experiments import mismatched_images
    from .preference import Examples, mine_preferences

    img, fnd, ans = vqa_items(train)
    pick = np.sort(rng.choice(len(img), min(args.mine, len(img)), replace=False))
    ctx = rs.retrieve(train.images, k_max=args.k, rule="gap", gamma=args.gamma).reports
    cm_all = mismatched_images(train, args.cm_image, seed=args.seed)
    data = Examples(train.images[img[pick]], [ctx[img[i]] for i in pick],
                    [train.question(img[i], fnd[i]) for i in pick],
                    ["yes" if ans[i] else "no" for i in pick])
    return mine_preferences(hf, data, seed=args.seed, cm_images=cm_all[pick])


def _report(run: RunResult, before: dict[str, float], after: dict[str, float], prior: float,
            st: dict[str, Any]) -> None:
    run.add("VQA accuracy with the retrieved reports, after RAG-PT", after["accuracy"], peer=before["accuracy"],
            peer_name="the same model before RAG-PT", higher_is_better=True, headline=True)
    run.add("VQA accuracy, the better constant answer on these questions", prior)
    run.add("VQA accuracy without reports, after / before", after["accuracy_no_rag"], peer=before["accuracy_no_rag"],
            peer_name="before", higher_is_better=True)
    if "copy_rate" in after:
        run.add("copy rate after RAG-PT (follows the reports against a contradicting real image, balanced)",
                after["copy_rate"], peer=before["copy_rate"], peer_name="before RAG-PT (any constant answer: 0.5)",
                higher_is_better=False)
        run.add("conflict questions", after["conflicts"])
    for k in ("loss", "first_loss", "reward_accuracy", "margin", "parameters"):
        run.add(f"DPO {k}", float(st[k]))


def _save(hf: Any, model_dir: Path, *, overwrite: bool = False) -> None:
    """The aligned model as a plain LLaVA folder (weights, tokenizer, image processor): written into a staging
    folder, then moved in file by file with ``manifest.json`` (every part's size and SHA-256) last, so a save
    cut short or parts of two runs are refused when the folder is loaded again (``--hf-path``)."""
    from iclr25.utils.checkpoints import MANIFEST, write_manifest

    from .index import write_folder

    def write(tmp: Path) -> None:
        hf.model.save_pretrained(tmp)
        hf.tokenizer.save_pretrained(tmp)
        if hf.image_processor is not None:
            hf.image_processor.save_pretrained(tmp)
        parts = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file())
        write_manifest(tmp, parts, meta={"format": "iclr25-mmed-rag aligned LLaVA/1"})

    write_folder(model_dir, write, overwrite=overwrite, marker=MANIFEST, flag="--out")


def align(args: argparse.Namespace) -> int:
    """RAG-PT of the user's own Hugging Face LLaVA-style model: retrieve reports for DATA's training images
    with INDEX, mine D_cm (a real mismatched image of another domain), D_oa1 and D_oa2 pairs from the model's
    own answers, DPO (LoRA through peft for large models, every weight for tiny ones), evaluate before and
    after on DATA's test images, and save the aligned model to OUT/model (a plain LLaVA folder)."""
    train = load_split(args.data, "train", labels_for="align", args=args)
    test = load_split(args.data, "test", labels_for="align", args=args)
    set_torch_threads(args.threads)
    seed_everything(args.seed)
    from .data import vqa_items
    from .hf import load_hf_vlm, train_dpo_hf
    from .rag import RetrievalSystem

    hf = load_hf_vlm(args.hf_path, device=getattr(args, "device", None), dtype=getattr(args, "dtype", None),
                     device_map=getattr(args, "device_map", None))
    rs = RetrievalSystem.load(args.index)
    run = RunResult.start(PACKAGE, "align", seed=args.seed, config={
        "data": str(args.data), "index": str(args.index), "hf_path": str(args.hf_path), "mine": args.mine,
        "limit": args.limit, "steps": args.steps, "lr": args.lr, "beta": args.beta, "lora": args.lora,
        "batch_size": args.batch_size, "k": args.k, "gamma": args.gamma, "cm_image": args.cm_image})
    from ._device import ran_on

    run.machine["device"] = ran_on()
    rng = np.random.default_rng(args.seed)
    pairs = _mine(hf, rs, train, args, rng)
    print(f"pairs: {pairs.stats}", flush=True)
    for k in ("cm", "oa1", "oa2"):
        run.add(f"pairs {k}", float(len(pairs.only((k,)))))
    # evaluation questions
    tctx = rs.retrieve(test.images, k_max=args.k, rule="gap", gamma=args.gamma).reports
    timg, _, tans = vqa_items(test)
    tpick = np.sort(rng.choice(len(timg), min(args.limit, len(timg)), replace=False))
    before = hf_eval(hf, test, tctx, tpick, seed=args.seed)
    hf, st = train_dpo_hf(hf, pairs, steps=args.steps, batch_size=args.batch_size, lr=args.lr, beta=args.beta,
                          lora=args.lora, seed=args.seed, log=lambda m: print(m, flush=True))
    after = hf_eval(hf, test, tctx, tpick, seed=args.seed)
    _report(run, before, after, float(max(tans[tpick].mean(), 1 - tans[tpick].mean())), st)
    model_dir = args.out / "model"
    _save(hf, model_dir, overwrite=args.overwrite)
    run.notes = f"DPO mode: {st['mode']}; the aligned model is in {model_dir} (answer with: ask --hf-path {model_dir})"
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0
