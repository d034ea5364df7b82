"""The command implementations behind :mod:`iclr25.mmed_rag.cli` (imported on first use: torch, faiss)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.io import atomic_write
from iclr25.utils.results import RunResult
from iclr25.utils.seeding import seed_everything

from .data import MedDataset, generate_splits, load_dataset

PACKAGE = "iclr25-mmed-rag"

DEMO = dict(n_train=40, n_db=30, n_test=12, router_steps=40, retriever_steps=12, sft_steps=24, dpo_steps=10,
            mine_images=16, pooled_baseline=False, n_report_eval=2, report_pairs=False)
DETAILS = ("recall@5", "precision_fixed_k", "precision_gap", "mean_k_mmed_rag", "acc_sft_fixed_k", "harm_rate_sft",
           "harm_rate_mmed_rag", "bleu_no_rag", "bleu_mmed_rag", "rouge_l_no_rag", "rouge_l_mmed_rag")


def _data_file(path: Path, name: str) -> Path:
    """``path`` itself when it is a file, else ``path/<name>.npz``."""
    if path.is_dir():
        return path / f"{name}.npz"
    if path.suffix.lower() != ".npz":
        raise ValueError(f"{path}: expected a data folder (from 'generate') or an .npz file")
    return path


def _load(path: Path, name: str) -> MedDataset:
    return load_dataset(_data_file(path, name))


def demo(args: argparse.Namespace) -> int:
    set_torch_threads(args.threads)
    from .experiments import PipelineConfig, run_pipeline
    from .figures import plot_examples

    cfg = PipelineConfig(**DEMO)
    run = RunResult.start(PACKAGE, "demo", seed=args.seed, config=dataclasses.asdict(cfg))
    seed_everything(args.seed)
    res = run_pipeline(cfg, seed=args.seed)
    m = res.metrics
    acc = run.add("VQA accuracy, MMed-RAG (router + gap rule + RAG-PT)", m["acc_mmed_rag"], peer=m["acc_no_rag"],
                  peer_name="the same SFT model without retrieval", higher_is_better=True, headline=True)
    run.add("router accuracy", m["router_accuracy"], peer=1 / 3, peer_name="chance (3 domains)",
            higher_is_better=True, headline=True)
    run.add("VQA accuracy, answer prior (training majority answer)", m["acc_answer_prior"], higher_is_better=True)
    run.add("copy rate, MMed-RAG (follows the reports against a contradicting real image, balanced)",
            m["copy_rate_mmed_rag"], peer=m["copy_rate_constant"], peer_name="any constant answer",
            higher_is_better=False)
    run.add("copy rate, SFT (same images and reports)", m["copy_rate_sft"], peer=m["copy_rate_constant"],
            peer_name="any constant answer", higher_is_better=False)
    run.add("accuracy with a noise image (reports kept), MMed-RAG", m["noise_accuracy_mmed_rag"],
            peer=m["noise_accuracy_always_yes"], peer_name="constant 'yes'")
    run.add("'yes' answers to noise images, MMed-RAG", m["yes_rate_noise_mmed_rag"])
    for k in DETAILS:
        run.add(k, m[k])
    if not acc.holds:
        prior_only = max(abs(m["acc_mmed_rag"] - m["acc_answer_prior"]), abs(m["acc_no_rag"] - m["acc_answer_prior"]))
        why = ("with and without retrieval it gives the majority answer to every question" if prior_only < 1e-9
               else "RAG-PT on the few pairs it mines does not help")
        run.headline_note = (
            f"VQA accuracy does not beat no retrieval at the demo's 60-s budget (MMed-RAG {m['acc_mmed_rag']:.3f}, "
            f"no retrieval {m['acc_no_rag']:.3f}, answer prior {m['acc_answer_prior']:.3f}): the tiny VLM is "
            f"undertrained, {why} (README Results: the ladder and the claims over seeds)")
    args.out.mkdir(parents=True, exist_ok=True)
    run.add_figure(plot_examples(res.examples, args.out / "examples.png"), relative_to=args.out)
    run.notes = (f"preference pairs mined: {res.stats}. Copy rate: on questions whose image is replaced by a real "
                 "image of the same domain that shows the opposite of what the retrieved reports state, the rate at "
                 "which the answer follows the reports, balanced over stated yes/no (any constant answer scores "
                 "0.5; issue 41). Accuracy with a noise image is the paper's analysis, beside a constant 'yes'.")
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def generate(args: argparse.Namespace) -> int:
    from .figures import plot_examples

    if args.contrast_lo > args.contrast_hi:
        raise ValueError(f"--contrast-lo ({args.contrast_lo}) must not exceed --contrast-hi ({args.contrast_hi})")
    if args.label_noise >= 0.5:
        raise ValueError(f"--label-noise must be < 0.5, got {args.label_noise}")
    if not 16 <= args.size <= 128:
        raise ValueError(f"--size must lie in 16..128, got {args.size}")
    sp = generate_splits(args.n_train, args.n_db, args.n_test, size=args.size,
                         contrast=(args.contrast_lo, args.contrast_hi), label_noise=args.label_noise, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("train", "db", "test"):
        getattr(sp, name).save(args.out / f"{name}.npz")
    t = sp.test
    ex = np.concatenate([np.flatnonzero(t.domains == d)[:2] for d in range(3)])
    plot_examples({"images": t.images[ex], "domains": t.domains[ex], "retrieved": [[] for _ in ex],
                   "truth": [t.reports[i] for i in ex], "generated": [""] * len(ex)}, args.out / "examples.png")
    print(f"wrote {args.out}/train.npz ({len(sp.train)}), db.npz ({len(sp.db)}), test.npz ({len(sp.test)}), "
          "examples.png")
    return 0


def build_index(args: argparse.Namespace) -> int:
    train = _load(args.data, "train")  # the user's files are read before torch is imported
    db = _load(args.data, "db") if args.data.is_dir() else train
    set_torch_threads(args.threads)
    from .rag import RetrievalConfig, RetrievalSystem

    cfg = RetrievalConfig(router_steps=args.router_steps, retriever_steps=args.steps, backend=args.backend,
                          pooled=args.pooled, text_tower=args.text_tower)
    rs = RetrievalSystem.fit(train, db, config=cfg, seed=args.seed)
    rs.save(args.out, overwrite=args.overwrite)
    print(f"wrote {args.out}: {rs.index!r}, backend {args.backend}")
    return 0


def train(args: argparse.Namespace) -> int:
    if args.report_threshold <= 0:
        raise ValueError(f"--report-threshold must lie in (0, 1], got {args.report_threshold}")
    data = _load(args.data, "train")
    db = _load(args.data, "db") if args.data.is_dir() else data
    set_torch_threads(args.threads)
    import torch

    from .experiments import _vqa_set, mismatched_images, sft_examples
    from .preference import (
        Examples,
        PreferencePairs,
        mine_preferences,
        mine_report_preferences,
        train_dpo,
        train_sft,
    )
    from .rag import RetrievalSystem
    from .vlm import REPORT_QUESTION, TinyVLM

    rs = RetrievalSystem.load(args.index)
    seed_everything(args.seed)
    n_mine = max(1, len(data) // 4)
    fit, mine = data.subset(np.arange(len(data) - n_mine)), data.subset(np.arange(len(data) - n_mine, len(data)))
    sft = train_sft(TinyVLM(rs.vocab), sft_examples(fit, db, k_max=args.k, seed=args.seed), steps=args.sft_steps,
                    seed=args.seed)
    ctx = rs.retrieve(mine.images, k_max=args.k, rule="gap")
    pairs = mine_preferences(sft, _vqa_set(mine, ctx.reports), seed=args.seed,
                             cm_images=mismatched_images(mine, args.cm_image, seed=args.seed))
    if not args.no_report_pairs:
        reports = Examples(mine.images, ctx.reports, [REPORT_QUESTION] * len(mine), list(mine.reports))
        pairs = PreferencePairs.concat([pairs, mine_report_preferences(sft, reports, mine.domains, mine.labels,
                                                                       threshold=args.report_threshold,
                                                                       seed=args.seed)])
    pol = sft.frozen_copy()
    for p in pol.parameters():
        p.requires_grad_(True)
    pol, stats = train_dpo(pol, pairs, reference=sft, steps=args.dpo_steps, beta=args.beta, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, m in (("sft", sft), ("rag_pt", pol)):
        with atomic_write(args.out / f"{name}.pt", "wb") as f:
            torch.save(m.state_dict(), f)
    with atomic_write(args.out / "pairs.json") as f:
        json.dump({"stats": pairs.stats, "dpo": stats}, f, indent=1)
    print(f"wrote {args.out}: sft.pt, rag_pt.pt; pairs {pairs.stats}; DPO {stats}")
    return 0


def evaluate(args: argparse.Namespace) -> int:
    test = _load(args.data, "test")
    set_torch_threads(args.threads)
    from .data import vqa_items
    from .metrics import context_precision, recall_at_k
    from .rag import RetrievalSystem, _load_state

    rs = RetrievalSystem.load(args.index)
    run = RunResult.start(PACKAGE, "evaluate", seed=args.seed, config={"data": str(args.data), "index": str(args.index), "k": args.k,
                                                                    "rule": args.rule, "gamma": args.gamma,
                                                                    "threshold": args.threshold})
    ctx = rs.retrieve(test.images, k_max=args.k, rule=args.rule, gamma=args.gamma, threshold=args.threshold)
    fixed = rs.retrieve(test.images, k_max=args.k, rule="fixed")
    img, fnd, ans = vqa_items(test)
    run.add("router_accuracy", float((ctx.domains == test.domains).mean()))
    run.add("recall@1", recall_at_k(fixed.retrieved.labels, test.labels, 1))
    run.add(f"recall@{args.k}", recall_at_k(fixed.retrieved.labels, test.labels, args.k))
    run.add("precision_fixed_k", context_precision(fixed.retrieved.labels[img], fixed.selection.mask[img], fnd, ans))
    run.add(f"precision_{args.rule}", context_precision(ctx.retrieved.labels[img], ctx.selection.mask[img], fnd, ans))
    run.add(f"mean_k_{args.rule}", ctx.selection.mean_k)
    if args.model is not None:
        from .experiments import _vqa_set, conflict_set, vqa_eval
        from .vlm import TinyVLM

        conflicts = {label: conflict_set(test, c.reports, seed=args.seed)
                     for label, c in (("fixed_k", fixed), (args.rule, ctx))}
        for name in ("sft", "rag_pt"):
            m = TinyVLM(rs.vocab)
            m.load_state_dict(_load_state(args.model / f"{name}.pt"))
            for label, c in (("fixed_k", fixed), (args.rule, ctx)):
                e = vqa_eval(m.eval(), _vqa_set(test, c.reports), conflict=conflicts[label], seed=args.seed)
                for k, v in e.items():
                    if k != "answers_no_rag":
                        run.add(f"{name}_{label}_{k}", v)
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def repro(args: argparse.Namespace) -> int:
    from .repro import run_repro

    set_torch_threads(args.threads)
    if args.ladder:
        from .repro import run_ladder

        return run_ladder(args.out)
    return run_repro(args.out, seed=args.seed, quick=args.quick)


def ask(args: argparse.Namespace) -> int:
    """VQA on the user's test data with the user's own answering model: an OpenAI-compatible endpoint
    (``--endpoint``) or a local Hugging Face LLaVA folder (``--hf-path``), with the retrieved reports of
    ``--index`` in the reference's prompt; accuracy with and without the reports and the copy rate."""
    import os

    if (args.endpoint is None) == (args.hf_path is None):
        raise ValueError("give exactly one answering model: --endpoint URL (with --model) or --hf-path DIR")
    if args.endpoint is not None and not args.model:
        raise ValueError("--endpoint needs --model NAME (the model name the server expects)")
    test = _load(args.data, "test")
    set_torch_threads(args.threads)
    from .data import DOMAINS, question, vqa_items
    from .experiments import conflict_set
    from .hf import rag_prompt
    from .metrics import copying
    from .rag import RetrievalSystem

    if args.endpoint is not None:
        from .endpoint import EndpointVLM

        key = os.environ.get(args.api_key_env) if args.api_key_env else None
        vlm = EndpointVLM(args.endpoint, args.model, api_key=key, timeout=args.timeout)

        def predict(images: np.ndarray, prompts: list[str]) -> np.ndarray:
            return vlm.answers(images, prompts)
    else:
        from .hf import load_hf_vlm

        hf = load_hf_vlm(args.hf_path)

        def predict(images: np.ndarray, prompts: list[str]) -> np.ndarray:
            # the folder's image processor (else a resize to the tower's size) and its chat template
            return np.concatenate([(hf.yes_probability(hf.pixels(images[s:s + 16]), prompts[s:s + 16]) > 0.5
                                    ).astype(np.int64) for s in range(0, len(prompts), 16)])

    rs = RetrievalSystem.load(args.index)
    run = RunResult.start(PACKAGE, "ask", seed=args.seed, config={
        "data": str(args.data), "index": str(args.index), "endpoint": args.endpoint, "model": args.model,
        "hf_path": None if args.hf_path is None else str(args.hf_path), "k": args.k, "gamma": args.gamma,
        "limit": args.limit, "timeout": args.timeout})
    ctx = rs.retrieve(test.images, k_max=args.k, rule="gap", gamma=args.gamma)
    img, fnd, ans = vqa_items(test)
    rng = np.random.default_rng(args.seed)
    pick = np.sort(rng.choice(len(img), min(args.limit, len(img)), replace=False))
    items, cimages, stated = conflict_set(test, ctx.reports, seed=args.seed)
    inside = np.isin(items, pick)
    items, cimages, stated = items[inside], cimages[inside], stated[inside]

    def prompts(idx: np.ndarray, with_reports: bool) -> list[str]:
        return [rag_prompt(question(int(test.domains[img[i]]), int(fnd[i])),
                           ctx.reports[img[i]] if with_reports else [], domain=DOMAINS[int(test.domains[img[i]])])
                for i in idx]

    a0 = predict(test.images[img[pick]], prompts(pick, False))
    a1 = predict(test.images[img[pick]], prompts(pick, True))
    y = ans[pick]
    run.add("VQA accuracy with the retrieved reports", float((a1 == y).mean()), peer=float((a0 == y).mean()),
            peer_name="the same model without reports", higher_is_better=True)
    run.add("VQA accuracy, always 'no'", float((y == 0).mean()))
    run.add("VQA accuracy, always 'yes'", float((y == 1).mean()))
    run.add("unreadable replies (neither yes nor no)", float(np.mean(np.concatenate([a0, a1]) < 0)))
    run.add("mean k of the gap rule", ctx.selection.mean_k)
    if len(items):
        ac = predict(cimages, prompts(items, True))
        c = copying(stated, np.where(ac < 0, 1 - stated, ac))  # an unreadable reply does not follow the reports
        run.add("copy rate (follows the reports against a contradicting real image, balanced)", c["copy_rate"],
                peer=0.5, peer_name="any constant answer", higher_is_better=False)
        run.add("conflict questions", c["n"])
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def _hf_eval(hf, test: MedDataset, contexts: list[list[str]], pick: np.ndarray, *, seed: int) -> dict[str, float]:
    """VQA accuracy of ``hf`` on the questions ``pick`` with and without the reports, and the copy rate on
    those of them whose reports a real same-domain image contradicts."""
    from .data import question, vqa_items
    from .experiments import conflict_set
    from .metrics import copying
    from .preference import answer

    img, fnd, ans = vqa_items(test)
    qs = [question(int(test.domains[img[i]]), int(fnd[i])) for i in pick]
    ctx = [contexts[img[i]] for i in pick]
    a0, _ = answer(hf, test.images[img[pick]], [[] for _ in pick], qs)
    a1, _ = answer(hf, test.images[img[pick]], ctx, qs)
    y = ans[pick]
    out = {"accuracy": float((a1 == y).mean()), "accuracy_no_rag": float((a0 == y).mean()),
           "yes_rate": float((a1 == 1).mean())}
    items, cimages, stated = conflict_set(test, contexts, seed=seed)
    inside = np.isin(items, pick)
    items, cimages, stated = items[inside], cimages[inside], stated[inside]
    if len(items):
        cq = [question(int(test.domains[img[i]]), int(fnd[i])) for i in items]
        ac, _ = answer(hf, cimages, [contexts[img[i]] for i in items], cq)
        out["copy_rate"] = copying(stated, ac)["copy_rate"]
        out["conflicts"] = float(len(items))
    return out


def align(args: argparse.Namespace) -> int:
    """RAG-PT of the user's own Hugging Face LLaVA-style model: retrieve reports for DATA's training images
    with INDEX, mine D_cm (a real mismatched image of another domain), D_oa1 and D_oa2 pairs from the model's
    own answers, DPO (LoRA through peft for large models, every weight for tiny ones), evaluate before and
    after on DATA's test images, and save the aligned model to OUT/model (a plain LLaVA folder)."""
    train = _load(args.data, "train")
    test = _load(args.data, "test")
    set_torch_threads(args.threads)
    seed_everything(args.seed)
    from .data import question, vqa_items
    from .experiments import mismatched_images
    from .hf import load_hf_vlm, train_dpo_hf
    from .preference import Examples, mine_preferences
    from .rag import RetrievalSystem

    hf = load_hf_vlm(args.hf_path)
    rs = RetrievalSystem.load(args.index)
    run = RunResult.start(PACKAGE, "align", seed=args.seed, config={
        "data": str(args.data), "index": str(args.index), "hf_path": str(args.hf_path), "mine": args.mine,
        "limit": args.limit, "steps": args.steps, "lr": args.lr, "beta": args.beta, "lora": args.lora,
        "batch_size": args.batch_size, "k": args.k, "gamma": args.gamma, "cm_image": args.cm_image})
    rng = np.random.default_rng(args.seed)
    # mining questions: up to --mine of the training images' questions, with their retrieved reports
    img, fnd, ans = vqa_items(train)
    pick = np.sort(rng.choice(len(img), min(args.mine, len(img)), replace=False))
    ctx = rs.retrieve(train.images, k_max=args.k, rule="gap", gamma=args.gamma).reports
    cm_all = mismatched_images(train, args.cm_image, seed=args.seed)
    data = Examples(train.images[img[pick]], [ctx[img[i]] for i in pick],
                    [question(int(train.domains[img[i]]), int(fnd[i])) for i in pick],
                    ["yes" if ans[i] else "no" for i in pick])
    pairs = mine_preferences(hf, data, seed=args.seed, cm_images=cm_all[pick])
    print(f"pairs: {pairs.stats}", flush=True)
    for k in ("cm", "oa1", "oa2"):
        run.add(f"pairs {k}", float(len(pairs.only((k,)))))
    # evaluation questions
    tctx = rs.retrieve(test.images, k_max=args.k, rule="gap", gamma=args.gamma).reports
    timg, _, tans = vqa_items(test)
    tpick = np.sort(rng.choice(len(timg), min(args.limit, len(timg)), replace=False))
    before = _hf_eval(hf, test, tctx, tpick, seed=args.seed)
    hf, st = train_dpo_hf(hf, pairs, steps=args.steps, batch_size=args.batch_size, lr=args.lr, beta=args.beta,
                          lora=args.lora, seed=args.seed, log=lambda m: print(m, flush=True))
    after = _hf_eval(hf, test, tctx, tpick, seed=args.seed)
    prior = float(max(tans[tpick].mean(), 1 - tans[tpick].mean()))
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
    model_dir = args.out / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    hf.model.save_pretrained(model_dir)
    hf.tokenizer.save_pretrained(model_dir)
    if hf.image_processor is not None:
        hf.image_processor.save_pretrained(model_dir)
    run.notes = f"DPO mode: {st['mode']}; the aligned model is in {model_dir} (answer with: ask --hf-path {model_dir})"
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0
