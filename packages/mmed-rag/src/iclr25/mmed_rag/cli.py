"""Command line of ``iclr25 mmed-rag``: ``demo``, ``generate``, ``build-index``, ``train``, ``evaluate``, ``ask``,
``align``, ``repro``: the parser, the checks made before any work (inputs, ``--out``, sizes) and the thin
handlers; ``demo`` is in :mod:`.demo`, ``repro`` in :mod:`.repro`, ``evaluate`` and ``ask`` in
:mod:`.evaluation`, ``align`` in :mod:`.alignment`.

Data files are ``.npz`` archives with ``images`` (N, 3, H, W) or (N, H, W, 3) (uint8 or float in [0, 1]),
``domains`` (N,) (0 radiology, 1 pathology, 2 ophthalmology), ``reports`` (N,) strings and optionally
``labels`` / ``report_labels`` (N, 4) 0/1; ``generate`` writes ``train.npz``, ``db.npz`` and ``test.npz``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils import cli as ucli
from iclr25.utils.outputs import add_output

DESCRIPTION = ("MMed-RAG (Xia et al., ICLR 2025): domain-aware retrieval, adaptive context selection and RAG "
               "preference fine-tuning, on procedural medical images.")
DEMO_HELP = "router, retrievers, gap rule, a tiny VLM with SFT and DPO on built-in data (at most 60 s)"
REPRO_HELP = ("the paper's claims over 3 seeds at the repro rung (claims.json; --ladder: rungs XS, S, M, S-hc) "
              "and the index benchmark (at most 10 min of CPU)")
#: the ``--help`` description of a command whose handler has no docstring to read here
DESCRIPTIONS = {
    "generate": ("Write DIR/train.npz, DIR/db.npz (the retrieval database, with report label noise) and "
                 "DIR/test.npz, plus DIR/examples.png."),
    "build-index": ("DATA is a folder with train.npz and db.npz (from 'generate') or one .npz used both "
                    "to train the retrievers and as the database. Writes OUT/ with the router, one "
                    "retriever per domain, and the sharded index (manifest.json)."),
    "train": ("DATA: a folder with train.npz (or one .npz). Retrieves contexts with INDEX, trains the "
              "tiny VLM with SFT, mines D_cm/D_oa1/D_oa2 pairs from its own VQA answers and generated "
              "reports and fine-tunes with DPO against a frozen copy. Writes OUT/sft.pt, OUT/rag_pt.pt, "
              "OUT/pairs.json."),
    "evaluate": ("DATA: a folder with test.npz (or one .npz). Evaluates retrieval with INDEX and, with "
                 "--model, the VLM without RAG, with fixed-k RAG and with adaptive RAG."),
    "ask": ("DATA: a folder with test.npz (or one .npz). Retrieves reports with INDEX (gap rule), asks "
            "each yes/no question of up to --limit questions with and without the reports (the "
            "reference's RAG-PT prompt) and on images that contradict the reports (copy rate), and writes "
            "OUT/results.json. The answering model is an OpenAI-compatible chat endpoint (--endpoint URL "
            "--model NAME; images as PNG data URLs; API key from the environment variable --api-key-env) "
            "or a local Hugging Face LLaVA-style folder (--hf-path, the hf extra; never downloads)."),
    "align": ("DATA: a folder with train.npz and test.npz (your own images and reports, indexed with "
              "build-index). Retrieves reports with INDEX (gap rule), mines preference pairs from the "
              "model's own answers on up to --mine training questions (D_cm with a real mismatched image, "
              "D_oa1, D_oa2), trains DPO (LoRA through peft for large models, every weight for tiny "
              "ones), evaluates before and after on --limit test questions (accuracy with and without the "
              "reports, copy rate) and saves the aligned model to OUT/model."),
}

BACKENDS = ("numpy", "faiss-flat", "faiss-hnsw", "hnswlib")
#: The files that mark a previous run in build-index's --out (the index files of any backend, or the results.json
#: that marks a run of any command, the federation's output policy): one present means a previous run, replaced
#: only with --overwrite; every other file in --out is left alone.
INDEX_FILES = ("results.json", "config.json", "vocab.json", "router.pt", "index/manifest.json", "manifest.json",
               *(f"retriever-{d}.pt" for d in ("radiology", "pathology", "ophthalmology", "pooled")))
#: What the other commands write at the top of --out (a previous run: one of them present, kept unless --overwrite).
GENERATE_FILES = ("results.json", "train.npz", "db.npz", "test.npz", "examples.png")
TRAIN_FILES = ("results.json", "sft.pt", "rag_pt.pt", "pairs.json", "manifest.json")
MODEL_PARTS = ("sft.pt", "rag_pt.pt", "pairs.json")
RESULTS_FILES = ("results.json",)
ALIGN_FILES = ("results.json", "model/config.json", "model/manifest.json")
RULES = ("gap", "ratio", "fixed")


#: Rough costs on one core of this machine, for the size guard (an order of magnitude is enough to refuse 10^12):
#: seconds per retriever / router step (three domains), per SFT step and per DPO step of the tiny VLM, and bytes
#: per generated image (float32 images, 3 channels, plus the report text).
_S_RETRIEVER, _S_ROUTER, _S_SFT, _S_DPO = 0.03, 0.005, 0.03, 0.1


def _image_bytes(size: int) -> float:
    return 3 * size * size * 4 + 400.0


def _precheck(name: str, args: argparse.Namespace) -> None:
    """Everything that can be checked before torch and faiss are imported: inputs exist, and the requested
    sizes can finish here (:func:`iclr25.utils.guards.check_size`, ``--force`` to try anyway). ``--out`` was
    checked before this (declared with :func:`iclr25.utils.outputs.add_output`: not an input nor inside one, no
    previous run without ``--overwrite``, no symbolic link replaced, a writable place)."""
    from iclr25.utils.guards import check_size

    force = getattr(args, "force", False)
    data = getattr(args, "data", None)
    if data is not None and not data.exists():
        raise FileNotFoundError(f"DATA {data}: no such file or folder")
    if name == "train":
        _check_manifest_slot(args.out)
    if name == "generate":
        n = 3 * (args.n_train + args.n_db + args.n_test)
        check_size(f"--n-train {args.n_train} --n-db {args.n_db} --n-test {args.n_test} (3 domains, "
                   f"{args.size} px)", bytes_needed=2 * n * _image_bytes(args.size), force=force)
    elif name == "build_index":
        check_size(f"--steps {args.steps} --router-steps {args.router_steps}",
                   seconds_needed=args.steps * _S_RETRIEVER + args.router_steps * _S_ROUTER, force=force)
    elif name == "train":
        check_size(f"--sft-steps {args.sft_steps} --dpo-steps {args.dpo_steps}",
                   seconds_needed=args.sft_steps * _S_SFT + args.dpo_steps * _S_DPO, force=force)
    elif name == "align":
        check_size(f"--steps {args.steps} --mine {args.mine} --limit {args.limit}",
                   seconds_needed=(args.steps * args.batch_size + 3 * args.mine + 3 * args.limit) * 0.05, force=force)


def _check_manifest_slot(out: Path) -> None:
    """An OUT/manifest.json that a save of ours did not write is never replaced: refused before the training."""
    import json

    m = out / "manifest.json"
    if not (m.exists() or m.is_symlink()):
        return
    try:
        ours = not m.is_symlink() and json.loads(m.read_text(encoding="utf-8")).get("kind") == \
            "iclr25-checkpoint-manifest"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        ours = False
    if not ours:
        raise ValueError(f"--out {out}: {m.name} there is not a model manifest of ours; it is never replaced: choose "
                         "another folder")


#: Where each command's handler lives: cli.py for the thin ones, else the module of the command's concept.
HANDLERS = {"demo": "_demo", "repro": "_repro", "generate": "_generate", "build_index": "_build_index",
            "train": "_train", "evaluate": "iclr25.mmed_rag.evaluation:evaluate",
            "ask": "iclr25.mmed_rag.evaluation:ask", "align": "iclr25.mmed_rag.alignment:align"}


def _cmd(name: str):
    def run(args: argparse.Namespace) -> int:
        _precheck(name, args)
        spec = HANDLERS[name]
        handler = ucli.load_handler(spec) if ":" in spec else globals()[spec]
        if getattr(args, "device", None) is None:  # generate: writes data, computes nothing with torch
            return handler(args)
        from ._device import run_on_device

        return run_on_device(name, args, handler)
    return run


def _demo(args: argparse.Namespace) -> int:
    ucli.set_torch_threads(args.threads)
    from .demo import run_demo

    run_demo(args.out, seed=args.seed)
    return 0


def _repro(args: argparse.Namespace) -> int:
    ucli.set_torch_threads(args.threads)
    from .repro import run_explore, run_ladder, run_repro

    if args.ladder:
        return run_ladder(args.out)
    if args.explore:
        return run_explore(args.out, seed=args.seed, quick=args.quick)
    return run_repro(args.out, seed=args.seed, quick=args.quick)


def _generate(args: argparse.Namespace) -> int:
    """``generate``: procedural train / db / test splits and a picture of a few test images."""
    import numpy as np

    from .data import generate_splits
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


def _build_index(args: argparse.Namespace) -> int:
    """``build-index``: train the router and the retrievers, index the database, save to ``--out``."""
    from .evaluation import load_split

    train = load_split(args.data, "train", args=args)  # the user's files are read before torch is imported
    db = load_split(args.data, "db", args=args) if args.data.is_dir() else train
    ucli.set_torch_threads(args.threads)
    from .rag import RetrievalConfig, RetrievalSystem

    cfg = RetrievalConfig(router_steps=args.router_steps, retriever_steps=args.steps, backend=args.backend,
                          pooled=args.pooled, text_tower=args.text_tower)
    rs = RetrievalSystem.fit(train, db, config=cfg, seed=args.seed)
    rs.save(args.out, overwrite=args.overwrite)
    print(f"wrote {args.out}: {rs.index!r}, backend {args.backend}")
    return 0


def _train(args: argparse.Namespace) -> int:
    """``train``: RAG-PT of a tiny VLM on the user's data (:func:`iclr25.mmed_rag.experiments.train_rag_pt`);
    writes ``sft.pt``, ``rag_pt.pt`` and ``pairs.json``."""
    import json

    from iclr25.utils.checkpoints import start_save, write_manifest
    from iclr25.utils.io import atomic_write
    from iclr25.utils.seeding import seed_everything

    from .evaluation import load_split

    if args.report_threshold <= 0:
        raise ValueError(f"--report-threshold must lie in (0, 1], got {args.report_threshold}")
    data = load_split(args.data, "train", labels_for="train", args=args)
    db = load_split(args.data, "db", args=args) if args.data.is_dir() else data
    ucli.set_torch_threads(args.threads)
    import torch

    from .experiments import train_rag_pt
    from .rag import RetrievalSystem

    rs = RetrievalSystem.load(args.index)
    from .evaluation import check_findings

    check_findings(data, rs, "train")
    report_pairs = not args.no_report_pairs
    if report_pairs and data.vocabulary is not None:
        # a generated report is judged against the built-in findings' sentences; a report folder has its own
        print("train: a report folder's findings come from --findings: VQA preference pairs only (no report pairs)")
        report_pairs = False
    seed_everything(args.seed)
    sft, pol, pairs, stats = train_rag_pt(data, db, rs, k=args.k, sft_steps=args.sft_steps, dpo_steps=args.dpo_steps,
                                          beta=args.beta, cm_image=args.cm_image,
                                          report_pairs=report_pairs,
                                          report_threshold=args.report_threshold, seed=args.seed)
    # whole or refused (evaluate --model verifies): the old manifest first, the parts atomically, the manifest last
    args.out.mkdir(parents=True, exist_ok=True)
    start_save(args.out)
    for name, m in (("sft", sft), ("rag_pt", pol)):
        with atomic_write(args.out / f"{name}.pt", "wb") as f:
            torch.save({k: v.cpu() for k, v in m.state_dict().items()}, f)  # CPU weights from any device
    from ._device import ran_on

    with atomic_write(args.out / "pairs.json") as f:
        json.dump({"stats": pairs.stats, "dpo": stats, "device": ran_on()}, f, indent=1)
    write_manifest(args.out, list(MODEL_PARTS), meta={"format": "iclr25-mmed-rag model/1"})
    print(f"wrote {args.out}: sft.pt, rag_pt.pt, pairs.json, manifest.json; pairs {pairs.stats}; DPO {stats}")
    return 0


def _unit(flag: str):
    def parse(text: str) -> float:
        v = ucli.nonnegative_float(flag)(text)
        if v > 1:
            raise argparse.ArgumentTypeError(f"{flag} must lie in [0, 1], got {v}")
        return v
    return parse


_KEEP = "replace the files of a previous run in --out (files this command does not write are kept)"


def _user_data(p: argparse.ArgumentParser) -> None:
    """A folder of images with their reports (IU-Xray, MIMIC-CXR, R2Gen or plain layout) as DATA."""
    p.add_argument("--findings", type=Path, default=None, metavar="VOCAB.json",
                   help="a report folder's findings: JSON {finding: [report phrases]} (default: opacity, "
                        "cardiomegaly, effusion, nodule); build-index and the commands using its index take the same")
    p.add_argument("--image-size", type=ucli.positive_int("--image-size"), default=32,
                   help="a report folder's images are resized to this side in pixels (default 32)")


def _threads(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=ucli.positive_int("--threads"), default=1, help="torch CPU threads (default 1)")


def _add_data_commands(sub: Any) -> None:
    """``generate`` and ``build-index``: the procedural data sets and the retrieval index."""
    g = ucli.add_command(sub, "generate", _cmd("generate"), seed=True, overwrite=_KEEP, force=True, help="write procedural train/db/test data sets (.npz)",
                         description=DESCRIPTIONS["generate"])
    add_output(g, "--out", kind="folder", required=True, run_files=GENERATE_FILES,
               help="folder for train.npz, db.npz, test.npz and examples.png")
    g.add_argument("--n-train", type=ucli.positive_int("--n-train"), default=600, help="images per domain (default 600)")
    g.add_argument("--n-db", type=ucli.positive_int("--n-db"), default=300, help="database images per domain (300)")
    g.add_argument("--n-test", type=ucli.positive_int("--n-test"), default=200, help="test images per domain (200)")
    g.add_argument("--size", type=ucli.positive_int("--size"), default=32, help="image side in pixels, 16-128 (32)")
    g.add_argument("--contrast-lo", type=_unit("--contrast-lo"), default=0.15, help="lowest finding contrast (0.15)")
    g.add_argument("--contrast-hi", type=_unit("--contrast-hi"), default=1.0, help="highest finding contrast (1.0)")
    g.add_argument("--label-noise", type=_unit("--label-noise"), default=0.1,
                   help="probability a database report states a finding wrongly (0.1)")

    b = ucli.add_command(sub, "build-index", _cmd("build_index"), seed=True, overwrite=_KEEP, force=True, help="train the router and per-domain retrievers, index the database",
                         description=DESCRIPTIONS["build-index"])
    b.add_argument("data", type=Path, help="data folder or .npz file, or a folder of images with their reports")
    add_output(b, "--out", kind="folder", required=True, run_files=INDEX_FILES,
               help="index folder: config.json, vocab.json, router.pt, retriever-<domain>.pt, index/ and, last, "
                    "manifest.json; not DATA nor a folder holding it")
    b.add_argument("--backend", choices=BACKENDS, default="faiss-flat", help="index backend (default faiss-flat)")
    b.add_argument("--steps", type=ucli.positive_int("--steps"), default=300, help="retriever Adam steps (default 300)")
    b.add_argument("--router-steps", type=ucli.positive_int("--router-steps"), default=150, help="router steps (150)")
    b.add_argument("--pooled", action="store_true", help="one retriever and one shard for all domains (baseline)")
    b.add_argument("--text-tower", choices=("cnn", "minilm"), default="cnn",
                   help="cnn (from scratch, default) or minilm (packaged all-MiniLM-L6-v2, the minilm extra)")
    _user_data(b)
    _threads(b)


def _add_model_commands(sub: Any) -> None:
    """``train`` and ``evaluate``: the tiny VLM's SFT + RAG-PT, and its metrics."""
    t = ucli.add_command(sub, "train", _cmd("train"), seed=True, overwrite=_KEEP, force=True, help="SFT a tiny VLM, mine preference pairs, DPO (RAG-PT)",
                         description=DESCRIPTIONS["train"])
    t.add_argument("data", type=Path, help="data folder or .npz file")
    t.add_argument("--index", type=Path, required=True, help="index folder from build-index")
    add_output(t, "--out", kind="folder", required=True, run_files=TRAIN_FILES,
               help="model folder: sft.pt, rag_pt.pt, pairs.json and, last, manifest.json (evaluate --model "
                    "refuses a folder whose parts are not those of one save)")
    t.add_argument("--sft-steps", type=ucli.positive_int("--sft-steps"), default=600, help="SFT steps (default 600)")
    t.add_argument("--dpo-steps", type=ucli.positive_int("--dpo-steps"), default=200, help="DPO steps (default 200)")
    t.add_argument("--beta", type=ucli.positive_float("--beta"), default=0.1, help="DPO beta (default 0.1)")
    t.add_argument("--k", type=ucli.positive_int("--k"), default=3, help="contexts in the prompt, cap (default 3)")
    t.add_argument("--no-report-pairs", action="store_true", help="mine VQA preference pairs only")
    t.add_argument("--cm-image", choices=("mismatch", "conflict", "noise"), default="mismatch",
                   help="rejected image of the D_cm pairs: a real image of another domain (default), a "
                        "same-domain image of the opposite class, or noise (the reference code)")
    t.add_argument("--report-threshold", type=_unit("--report-threshold"), default=0.75,
                   help="a generated report is right when it states at least this fraction of the four "
                        "findings correctly (default 0.75)")
    _user_data(t)
    _threads(t)

    e = ucli.add_command(sub, "evaluate", _cmd("evaluate"), seed=True, overwrite=_KEEP, help="VQA acc/F1/AUC, copy and harm rates, recall@k, BLEU/ROUGE-L",
                         description=DESCRIPTIONS["evaluate"])
    e.add_argument("data", type=Path, help="data folder or .npz file, or a folder of images with their reports")
    e.add_argument("--index", type=Path, required=True, help="index folder from build-index")
    e.add_argument("--model", type=Path, help="model folder from train")
    add_output(e, "--out", kind="folder", required=True, run_files=RESULTS_FILES, help="folder for results.json")
    e.add_argument("--k", type=ucli.positive_int("--k"), default=3, help="context cap (default 3)")
    e.add_argument("--rule", choices=RULES, default="gap", help="context selection rule (default gap)")
    e.add_argument("--gamma", type=ucli.nonnegative_float("--gamma"), default=0.005, help="gap rule gamma (0.005)")
    e.add_argument("--threshold", type=ucli.positive_float("--threshold"), default=1.05, help="ratio threshold (1.05)")
    _user_data(e)
    _threads(e)


def _add_own_model_commands(sub: Any) -> None:
    """``ask`` and ``align``: your own model (an endpoint or a local HF LLaVA folder)."""
    a = ucli.add_command(sub, "ask", _cmd("ask"), seed=True, overwrite=_KEEP, help="VQA with your own model: an OpenAI-compatible endpoint or a local HF LLaVA folder",
                         description=DESCRIPTIONS["ask"])
    a.add_argument("data", type=Path, help="data folder or .npz file, or a folder of images with their reports")
    a.add_argument("--index", type=Path, required=True, help="index folder from build-index")
    add_output(a, "--out", kind="folder", required=True, run_files=RESULTS_FILES,
               help="folder for results.json (never the API key)")
    a.add_argument("--endpoint", help="OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
    a.add_argument("--model", dest="model", help="model name the endpoint serves (with --endpoint)")
    a.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key, e.g. OPENAI_API_KEY (default: none, no key "
                        "sent; a variable named here that is not set is refused)")
    a.add_argument("--timeout", type=ucli.positive_float("--timeout"), default=30.0,
                   help="seconds each request may take in all (default 30)")
    a.add_argument("--hf-path", type=Path, help="local Hugging Face LLaVA-style model folder (instead of --endpoint)")
    a.add_argument("--limit", type=ucli.positive_int("--limit"), default=40, help="questions to ask (default 40)")
    a.add_argument("--k", type=ucli.positive_int("--k"), default=3, help="context cap (default 3)")
    a.add_argument("--gamma", type=ucli.nonnegative_float("--gamma"), default=0.005, help="gap rule gamma (0.005)")
    _user_data(a)
    _threads(a)

    al = ucli.add_command(sub, "align", _cmd("align"), seed=True, overwrite=_KEEP, force=True, help="RAG-PT of your own HF LLaVA-style model: mine pairs with it, DPO, evaluate",
                          description=DESCRIPTIONS["align"])
    al.add_argument("data", type=Path, help="data folder with train.npz and test.npz")
    al.add_argument("--index", type=Path, required=True, help="index folder from build-index")
    al.add_argument("--hf-path", type=Path, required=True, help="local Hugging Face LLaVA-style model folder")
    add_output(al, "--out", kind="folder", required=True, run_files=ALIGN_FILES,
               help="folder for results.json and model/ (the aligned LLaVA folder, with manifest.json written last)")
    al.add_argument("--mine", type=ucli.positive_int("--mine"), default=200, help="training questions to mine (200)")
    al.add_argument("--limit", type=ucli.positive_int("--limit"), default=100, help="test questions to evaluate (100)")
    al.add_argument("--steps", type=ucli.positive_int("--steps"), default=100, help="DPO steps (default 100)")
    al.add_argument("--batch-size", type=ucli.positive_int("--batch-size"), default=4, help="pairs per step (4)")
    al.add_argument("--lr", type=ucli.positive_float("--lr"), default=1e-5, help="learning rate (default 1e-5)")
    al.add_argument("--beta", type=ucli.positive_float("--beta"), default=0.1, help="DPO beta (default 0.1)")
    al.add_argument("--lora", choices=("auto", "on", "off"), default="auto",
                    help="LoRA through peft (on), every weight (off), or LoRA when peft is installed and the "
                         "model has > 50 M parameters (auto, default)")
    al.add_argument("--cm-image", choices=("mismatch", "conflict", "noise"), default="mismatch",
                    help="rejected image of the D_cm pairs: a real image of another domain (default), a "
                         "same-domain image of the opposite class, or noise (the reference code)")
    al.add_argument("--k", type=ucli.positive_int("--k"), default=3, help="context cap (default 3)")
    al.add_argument("--gamma", type=ucli.nonnegative_float("--gamma"), default=0.005, help="gap rule gamma (0.005)")
    _user_data(al)
    _threads(al)


def main(argv: Sequence[str] | None = None) -> int:
    parser, sub, d, p = ucli.method_commands("mmed-rag", DESCRIPTION, demo=_cmd("demo"), demo_help=DEMO_HELP,
                                             repro=_cmd("repro"), repro_help=REPRO_HELP,
                                             demo_files=("examples.png",),
                                             repro_files=("examples.png", "ablation.png", "retrieval_ablation.png",
                                                          "results.md", "ladder.json", "ladder.md", "claims.json"),
                                             quick="the test rung and a small benchmark only (a smoke run, about 1 min); with --explore: rung XS only")
    _threads(d)
    _threads(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--ladder", action="store_true",
                      help="instead: the claims at rungs XS, S, M (with the copy ablation) and S-hc (S, high "
                           "contrast) with 3 seeds each (about 20 min of CPU; 31 min wall at load 5-8)")
    mode.add_argument("--explore", action="store_true",
                      help="instead: the single-seed exploration (rungs XS, S, M; DPO-data, retrieval and "
                           "report-generation ablations; figures), not claims (about 8 min of CPU)")
    _add_data_commands(sub)
    _add_model_commands(sub)
    _add_own_model_commands(sub)
    _add_device_arguments(d, p, sub)
    return ucli.run_main(parser, argv)


def _add_device_arguments(demo: Any, repro: Any, sub: Any) -> None:
    """``--device`` on every command that computes (``generate`` writes data only); ``ask`` and ``align`` also
    take the Hugging Face model's ``--dtype`` and accelerate's ``--device-map``."""
    from iclr25.utils.device import add_device_argument

    for p in (demo, repro, sub.choices["build-index"], sub.choices["train"], sub.choices["evaluate"]):
        add_device_argument(p)
    for p in (sub.choices["ask"], sub.choices["align"]):
        add_device_argument(p, dtype=True)
        p.add_argument("--device-map", choices=("auto",), default=None,
                       help="--hf-path: auto spreads a model too large for one GPU over the visible GPUs (and the "
                            "CPU); needs accelerate (pip install accelerate); overrides --device")
