"""Evaluation on the user's own files (the evaluation code the reference does not ship, issue #24 of its
repository): ``iclr25 mmed-rag evaluate`` (retrieval: router accuracy, recall@k, context precision; a tiny VLM
from ``train``: VQA accuracy/F1/AUC, harm and copy rates, without, with fixed-k and with adaptive RAG) and
``iclr25 mmed-rag ask`` (the same VQA questions put to the user's own answering model: an OpenAI-compatible
endpoint or a local Hugging Face LLaVA-style folder, with and without the retrieved reports, and the copy
rate on images that contradict them). Each command writes ``OUT/results.json``.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§4: VQA accuracy/F1/AUC; the copy analysis of §2).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from iclr25.utils.cli import set_torch_threads
from iclr25.utils.results import RunResult

from .data import MedDataset, load_dataset

__all__ = ["PACKAGE", "data_file", "load_split", "evaluate", "ask", "hf_eval", "UnlabeledDataError"]

PACKAGE = "iclr25-mmed-rag"


def data_file(path: Path, name: str) -> Path:
    """``path`` itself when it is a file, else ``path/<name>.npz``."""
    if path.is_dir():
        return path / f"{name}.npz"
    if path.suffix.lower() != ".npz":
        raise ValueError(f"{path}: expected a data folder (from 'generate') or an .npz file")
    return path


class UnlabeledDataError(ValueError):
    """A data file without ``labels`` given to a command that scores or trains against them."""


def load_split(path: Path, name: str, *, labels_for: str | None = None, args: argparse.Namespace | None = None
               ) -> MedDataset:
    """The split ``name`` (train / db / test) of a data folder, or the one ``.npz`` file ``path``, or of a folder
    of images with their reports (:mod:`iclr25.mmed_rag.userdata`: the IU-Xray, MIMIC-CXR, R2Gen or plain
    layout; findings from ``args.findings``, images resized to ``args.image_size``).

    ``labels_for``: the command that needs the images' ``labels`` (scores answers against them or trains on
    them); a file without them is refused in one line naming the file (it would otherwise be read with all-"no"
    labels, scoring an always-"yes" model 0). A report folder's labels are the findings its reports state."""
    from .userdata import FindingVocabulary, is_report_folder, read_folder

    if is_report_folder(path):
        findings = getattr(args, "findings", None)
        vocab = FindingVocabulary.load(findings) if findings is not None else None
        return read_folder(path, name, vocabulary=vocab, size=getattr(args, "image_size", 32))
    f = data_file(path, name)
    ds = load_dataset(f)
    if labels_for is not None:
        with np.load(f) as z:
            has = "labels" in z.files
        if not has:
            raise UnlabeledDataError(
                f"{f}: no 'labels' array (the findings each image shows, (N, 4) 0/1); {labels_for} scores or "
                "trains answers against them, so an unlabeled file is refused (build-index needs none)")
    return ds


def check_findings(ds: MedDataset, rs, what: str) -> None:
    """The data's findings must be those the index was built with (one line otherwise)."""
    width = rs.index.label_width()
    if ds.n_findings != width:
        raise ValueError(f"{what}: the data have {ds.n_findings} findings but the index was built with {width}; "
                         "give build-index and this command the same --findings file")


def _model_metrics(run: RunResult, test: MedDataset, rs, fixed, ctx, args: argparse.Namespace) -> None:
    """The SFT and RAG-PT models of ``args.model`` with fixed-k and with ``args.rule`` contexts."""
    from iclr25.utils.checkpoints import verify_manifest

    from .experiments import _vqa_set, conflict_set, vqa_eval
    from .rag import _load_state
    from .vlm import TinyVLM

    # whole or refused: a train cut short, or sft.pt and rag_pt.pt of two trainings
    verify_manifest(args.model, ["sft.pt", "rag_pt.pt"], what="model folder (train)")

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


def evaluate(args: argparse.Namespace) -> int:
    """``evaluate``: retrieval metrics of ``--index`` on DATA's test split and, with ``--model``, the VLM
    without RAG, with fixed-k RAG and with adaptive RAG."""
    test = load_split(args.data, "test", labels_for="evaluate", args=args)
    set_torch_threads(args.threads)
    from .data import vqa_items
    from .metrics import context_precision, recall_at_k
    from .rag import RetrievalSystem

    rs = RetrievalSystem.load(args.index)
    check_findings(test, rs, "evaluate")
    run = RunResult.start(PACKAGE, "evaluate", seed=args.seed, config={"data": str(args.data), "index": str(args.index), "k": args.k,
                                                                    "rule": args.rule, "gamma": args.gamma,
                                                                    "threshold": args.threshold})
    from ._device import ran_on

    run.machine["device"] = ran_on()
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
        _model_metrics(run, test, rs, fixed, ctx, args)
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def _predictor(args: argparse.Namespace, api_key: str | None) -> Callable[[np.ndarray, list[str]], np.ndarray]:
    """The answering model of ``ask``: yes (1) / no (0) / unreadable (−1) per (image, prompt)."""
    if args.endpoint is not None:
        from .endpoint import EndpointVLM

        vlm = EndpointVLM(args.endpoint, args.model, api_key=api_key, timeout=args.timeout)
        return vlm.answers
    from .hf import load_hf_vlm

    hf = load_hf_vlm(args.hf_path, device=getattr(args, "device", None), dtype=getattr(args, "dtype", None),
                     device_map=getattr(args, "device_map", None))

    def predict(images: np.ndarray, prompts: list[str]) -> np.ndarray:
        # the folder's image processor (else a resize to the tower's size) and its chat template
        return np.concatenate([(hf.yes_probability(hf.pixels(images[s:s + 16]), prompts[s:s + 16]) > 0.5
                                ).astype(np.int64) for s in range(0, len(prompts), 16)])
    return predict


def ask(args: argparse.Namespace) -> int:
    """``ask``: VQA on the user's test data with the user's own answering model: an OpenAI-compatible endpoint
    (``--endpoint``) or a local Hugging Face LLaVA folder (``--hf-path``), with the retrieved reports of
    ``--index`` in the reference's prompt; accuracy with and without the reports and the copy rate."""
    if (args.endpoint is None) == (args.hf_path is None):
        raise ValueError("give exactly one answering model: --endpoint URL (with --model) or --hf-path DIR")
    if args.endpoint is not None and not args.model:
        raise ValueError("--endpoint needs --model NAME (the model name the server expects)")
    from iclr25.utils.endpoint import api_key_from_env

    api_key = api_key_from_env(args.api_key_env) if args.endpoint is not None else None
    test = load_split(args.data, "test", labels_for="ask", args=args)
    set_torch_threads(args.threads)
    from .data import DOMAINS, vqa_items
    from .experiments import conflict_set
    from .hf import rag_prompt
    from .rag import RetrievalSystem

    rs = RetrievalSystem.load(args.index)
    check_findings(test, rs, "ask")
    predict = _predictor(args, api_key)
    run = RunResult.start(PACKAGE, "ask", seed=args.seed, config={
        "data": str(args.data), "index": str(args.index), "endpoint": args.endpoint, "model": args.model,
        "hf_path": None if args.hf_path is None else str(args.hf_path), "k": args.k, "gamma": args.gamma,
        "limit": args.limit, "timeout": args.timeout})
    from ._device import ran_on

    run.machine["device"] = ran_on()
    ctx = rs.retrieve(test.images, k_max=args.k, rule="gap", gamma=args.gamma)
    img, fnd, ans = vqa_items(test)
    rng = np.random.default_rng(args.seed)
    pick = np.sort(rng.choice(len(img), min(args.limit, len(img)), replace=False))
    items, cimages, stated = conflict_set(test, ctx.reports, seed=args.seed)
    inside = np.isin(items, pick)
    items, cimages, stated = items[inside], cimages[inside], stated[inside]

    def prompts(idx: np.ndarray, with_reports: bool) -> list[str]:
        return [rag_prompt(test.question(img[i], fnd[i]),
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
    run.add("unreadable replies without the reports", float(np.mean(a0 < 0)))
    run.add("unreadable replies with the reports", float(np.mean(a1 < 0)))
    run.add("mean k of the gap rule", ctx.selection.mean_k)
    if len(items):
        ac = predict(cimages, prompts(items, True))
        _conflict_metrics(run, stated, ac)
    args.out.mkdir(parents=True, exist_ok=True)
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())
    return 0


def _conflict_metrics(run: RunResult, stated: np.ndarray, replies: np.ndarray) -> None:
    """The copy rate of ``ask`` over the conflict replies that are "yes" or "no": a reply that is neither is
    counted as unparsed (its share reported), never as following the image (nor the reports); with no readable
    reply the copy rate is not given (None)."""
    from .metrics import copying

    ok = replies >= 0
    run.add("unreadable replies on the conflict questions", float(np.mean(~ok)))
    c = copying(stated[ok], replies[ok]) if ok.any() else None
    run.add("copy rate (follows the reports against a contradicting real image, balanced)",
            None if c is None else c["copy_rate"], peer=0.5, peer_name="any constant answer", higher_is_better=False)
    run.add("conflict questions", float(len(stated)))
    run.add("conflict questions answered yes or no (the copy rate's questions)", float(ok.sum()))


def hf_eval(hf, test: MedDataset, contexts: list[list[str]], pick: np.ndarray, *, seed: int) -> dict[str, float]:
    """VQA accuracy of ``hf`` on the questions ``pick`` with and without the reports, and the copy rate on
    those of them whose reports a real same-domain image contradicts."""
    from .data import vqa_items
    from .experiments import conflict_set
    from .metrics import copying
    from .preference import answer

    img, fnd, ans = vqa_items(test)
    qs = [test.question(img[i], fnd[i]) for i in pick]
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
        cq = [test.question(img[i], fnd[i]) for i in items]
        ac, _ = answer(hf, cimages, [contexts[img[i]] for i in items], cq)
        out["copy_rate"] = copying(stated, ac)["copy_rate"]
        out["conflicts"] = float(len(items))
    return out
