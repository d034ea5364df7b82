"""The whole MMed-RAG pipeline at one budget: data → router + retrievers + index → adaptive selection → SFT of a
tiny VLM → preference mining → DPO (RAG-PT) → evaluation; used by ``demo``, ``repro`` and the claim tests.

References: Xia et al., *MMed-RAG*, ICLR 2025 (§3 method, §4 Table 1 ordering and the ablation of §4.3).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .data import DOMAINS, MedDataset, Splits, generate_splits, read_report, vqa_items
from .metrics import (
    context_precision,
    copying,
    harm_rate,
    noise_accuracy,
    recall_at_k,
    report_finding_accuracy,
    report_metrics,
    vqa_metrics,
)
from .preference import (
    Examples,
    PreferencePairs,
    answer,
    mine_preferences,
    mine_report_preferences,
    train_dpo,
    train_sft,
)
from .rag import RetrievalConfig, RetrievalSystem
from .selection import select_contexts
from .vlm import REPORT_QUESTION, TinyVLM, VLMConfig, generate_reports, noise_images

__all__ = ["PipelineConfig", "PipelineResult", "run_pipeline", "run_retrieval", "retrieval_metrics", "sft_examples", "vqa_eval",
           "stated_answers", "conflict_set", "mismatched_images", "CM_IMAGES", "RUNGS", "train_rag_pt",
           "evaluate_system", "REFERENCES", "strongest_reference", "reference_votes", "image_references"]

#: How the unrelated image x_v* of the cross-modality pairs D_cm is built (:func:`mismatched_images`).
CM_IMAGES = ("mismatch", "conflict", "noise")


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    """Every budget and knob of one run (defaults: the repro's middle rung). ``report_pairs``: also mine
    report-generation pairs from ``mine_reports`` images (a report is right when its finding accuracy is at
    least ``report_threshold``); ``dpo_tasks``: which pairs DPO trains on; ``text_tower``: "cnn" or "minilm";
    ``cm_image``: the rejected image of the D_cm pairs (:data:`CM_IMAGES`, :func:`mismatched_images`);
    ``copy_ablation``: also train RAG-PT with D_cm built from each other kind of image and with no D_cm
    (metrics ``*_dcm_<kind>`` and ``*_no_dcm``); ``prevalence``: each finding's probability in the generated
    data (0.5: balanced yes/no answers, so the answer prior is 0.5); ``harmonized``: grey, histogram-equalised
    images (:func:`~iclr25.mmed_rag.data.harmonize`: the domain is not in the colour); ``image_only_steps``: the
    training steps of the image-only supervised reference (:mod:`iclr25.mmed_rag.supervised`; 0: not trained)."""

    def __post_init__(self) -> None:
        if self.cm_image not in CM_IMAGES:
            raise ValueError(f"cm_image must be one of {CM_IMAGES}, got {self.cm_image!r}")

    n_train: int = 400
    n_db: int = 200
    n_test: int = 100
    size: int = 32
    contrast: tuple[float, float] = (0.15, 1.0)
    label_noise: float = 0.15
    prevalence: float = 0.3
    router_steps: int = 100
    retriever_steps: int = 200
    text_tower: str = "cnn"
    backend: str = "faiss-flat"
    k: int = 3
    gamma: float = 0.005
    sft_steps: int = 500
    sft_context_agreement: float = 0.9
    sft_no_context: float = 0.3
    sft_report_fraction: float = 0.15
    mine_images: int = 150
    dpo_steps: int = 150
    dpo_lr: float = 2e-4
    beta: float = 0.1
    dpo_kinds: tuple[str, ...] = ("cm", "oa1", "oa2")
    report_pairs: bool = True
    mine_reports: int = 100
    report_threshold: float = 0.75
    dpo_tasks: tuple[str, ...] = ("vqa", "report")
    ablations: bool = False
    cm_image: str = "mismatch"
    copy_ablation: bool = False
    pooled_baseline: bool = True
    n_report_eval: int = 30
    harmonized: bool = False
    image_only_steps: int = 0


#: The scale ladder's budgets (XS < S < M), shared by ``repro`` (single-seed tables) and the claims registry
#: (3 seeds per rung).
RUNGS = {
    "XS": PipelineConfig(n_train=100, n_db=50, n_test=25, router_steps=30, retriever_steps=30, sft_steps=120,
                         mine_images=40, dpo_steps=30, pooled_baseline=False, n_report_eval=10, mine_reports=30),
    "S": PipelineConfig(n_train=200, n_db=120, n_test=60, router_steps=60, retriever_steps=120, sft_steps=500,
                        mine_images=80, dpo_steps=100, pooled_baseline=False, n_report_eval=20, mine_reports=60),
    "M": PipelineConfig(n_train=400, n_db=200, n_test=100, retriever_steps=200, sft_steps=1500, mine_images=150,
                        dpo_steps=150, ablations=True, pooled_baseline=True, n_report_eval=30, mine_reports=100),
}


@dataclasses.dataclass(frozen=True)
class PipelineResult:
    """``metrics`` (name → value), mining ``stats``, and the trained parts for figures and reuse."""

    metrics: dict[str, float]
    stats: dict[str, int]
    splits: Splits
    system: RetrievalSystem
    sft: TinyVLM
    rag_pt: TinyVLM
    examples: dict[str, Any]


def _contexts_agreeing(ds: MedDataset, db: MedDataset, img: np.ndarray, fnd: np.ndarray, k_max: int,
                       agreement: float, rng: np.random.Generator) -> list[list[str]]:
    """SFT contexts that state the truth of the asked finding with probability ``agreement`` each (a
    retriever that is usually right, which teaches the model to lean on its context)."""
    by = {}
    for d in range(len(DOMAINS)):
        for f in range(db.report_labels.shape[1]):
            for v in (0, 1):
                by[d, f, v] = np.flatnonzero((db.domains == d) & (db.report_labels[:, f] == v))
    out = []
    for i, f in zip(img, fnd, strict=True):
        d, truth = int(ds.domains[i]), int(ds.labels[i, f])
        k = int(rng.integers(1, k_max + 1))
        ctx = []
        for _ in range(k):
            v = truth if rng.random() < agreement else 1 - truth
            pool = by[d, int(f), v]
            if len(pool):
                ctx.append(db.reports[int(rng.choice(pool))])
        out.append(ctx)
    return out


def sft_examples(ds: MedDataset, db: MedDataset, *, k_max: int = 3, agreement: float = 0.9,
                 no_context: float = 0.3, report_fraction: float = 0.15, seed: int = 0) -> Examples:
    """VQA (4 questions per image) and report-generation SFT examples with "usually right" contexts."""
    rng = np.random.default_rng(seed)
    img, fnd, ans = vqa_items(ds)
    ctx = _contexts_agreeing(ds, db, img, fnd, k_max, agreement, rng)
    ctx = [[] if rng.random() < no_context else c for c in ctx]
    qs = [ds.question(i, f) for i, f in zip(img, fnd, strict=True)]
    vqa = Examples(ds.images[img], ctx, qs, ["yes" if a else "no" for a in ans])
    n_rep = int(round(report_fraction * len(vqa)))
    ri = rng.choice(len(ds), n_rep, replace=n_rep > len(ds))
    same = [np.flatnonzero(db.domains == ds.domains[i]) for i in ri]
    rctx = [[] if rng.random() < no_context else [db.reports[int(j)] for j in rng.choice(s, int(rng.integers(1, k_max + 1)))]
            for s in same]
    rep = Examples(ds.images[ri], rctx, [REPORT_QUESTION] * n_rep, [ds.reports[i] for i in ri])
    return Examples.concat([vqa, rep])


def _vqa_set(ds: MedDataset, contexts: list[list[str]]) -> Examples:
    img, fnd, ans = vqa_items(ds)
    return Examples(ds.images[img], [contexts[i] for i in img],
                    [ds.question(i, f) for i, f in zip(img, fnd, strict=True)],
                    ["yes" if a else "no" for a in ans])


def stated_answers(domains: Any, contexts: Sequence[Sequence[str]], findings: Any, *, vocabulary: Any = None
                   ) -> np.ndarray:
    """What the kept reports state about the asked finding, by majority of the reports that state it (read
    back with :func:`~iclr25.mmed_rag.data.read_report`, or ``vocabulary.read`` for the user's findings): (N,) 1,
    0, or −1 when none states it or they tie."""
    out = np.full(len(contexts), -1, np.int64)
    for n, (d, ctx, f) in enumerate(zip(np.asarray(domains), contexts, np.asarray(findings), strict=True)):
        said = [int((read_report(int(d), r) if vocabulary is None else vocabulary.read(r))[int(f)]) for r in ctx]
        said = [v for v in said if v >= 0]
        if said and 2 * sum(said) != len(said):
            out[n] = int(2 * sum(said) > len(said))
    return out


def conflict_set(ds: MedDataset, contexts: Sequence[Sequence[str]], *, seed: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Questions whose image is replaced by a real image that contradicts the retrieved reports (issue 41).

    For each question (:func:`~iclr25.mmed_rag.data.vqa_items` order) whose kept reports ``contexts[image]``
    state an answer s (:func:`stated_answers`), a random image of ``ds`` of the same domain whose label on the
    asked finding is 1 − s. (Same domain, other class: the question names a finding of that domain, so an
    image of another domain would have no answer to follow.) Returns ``(items, images, stated)``: the question
    indices kept, the replacement images and s.
    """
    img, fnd, _ = vqa_items(ds)
    stated = stated_answers(ds.domains[img], [contexts[i] for i in img], fnd, vocabulary=ds.vocabulary)
    rng = np.random.default_rng(seed + 11)
    swap = np.full(len(img), -1)
    for d in range(len(DOMAINS)):
        for f in range(ds.labels.shape[1]):
            for v in (0, 1):
                pool = np.flatnonzero((ds.domains == d) & (ds.labels[:, f] == 1 - v))
                sel = np.flatnonzero((ds.domains[img] == d) & (fnd == f) & (stated == v))
                if len(pool) and len(sel):
                    swap[sel] = rng.choice(pool, len(sel))
    keep = np.flatnonzero(swap >= 0)
    return keep, ds.images[swap[keep]], stated[keep]


def mismatched_images(ds: MedDataset, mode: str = "mismatch", *, seed: int = 0, per: str = "question") -> np.ndarray:
    """The unrelated image x_v* of each VQA question of ``ds`` (:func:`~iclr25.mmed_rag.data.vqa_items` order;
    ``per="image"``: of each image, for the report-generation D_cm pairs) for the cross-modality pairs D_cm:

    - ``"mismatch"``: a real image of ``ds`` of *another domain* (so of another class; the question names a
      finding that image cannot show) — the paper's "unrelated image", made real (issue 41);
    - ``"conflict"``: a real image of the same domain whose label on the asked finding is the opposite of the
      truth (the construction of the copy-rate evaluation, :func:`conflict_set`);
    - ``"noise"``: pure noise, the reference code's ``generate_gaussian_noise(image, 0, 1)``.

    Per image, "conflict" is a same-domain image whose findings differ from the image's on at least one.
    """
    if mode not in CM_IMAGES:
        raise ValueError(f"mode must be one of {CM_IMAGES}, got {mode!r}")
    if per not in ("question", "image"):
        raise ValueError(f"per must be 'question' or 'image', got {per!r}")
    if per == "image":
        return _mismatched_per_image(ds, mode, seed)
    img, fnd, ans = vqa_items(ds)
    if mode == "noise":
        return noise_images((len(img), *ds.images.shape[1:]), seed=seed)
    rng = np.random.default_rng(seed + 23)
    swap = np.empty(len(img), np.intp)
    for n, (i, f, a) in enumerate(zip(img, fnd, ans, strict=True)):
        d = ds.domains[i]
        pool = (np.flatnonzero(ds.domains != d) if mode == "mismatch" else
                np.flatnonzero((ds.domains == d) & (ds.labels[:, f] != a)))
        if not len(pool):  # one domain only / no image of the other class: fall back to any other image
            pool = np.flatnonzero(np.arange(len(ds)) != i)
        swap[n] = rng.choice(pool) if len(pool) else i
    return ds.images[swap]


def _mismatched_per_image(ds: MedDataset, mode: str, seed: int) -> np.ndarray:
    """:func:`mismatched_images` with one x_v* per image of ``ds``."""
    if mode == "noise":
        return noise_images(ds.images.shape, seed=seed)
    rng = np.random.default_rng(seed + 29)
    swap = np.empty(len(ds), np.intp)
    for i in range(len(ds)):
        d = ds.domains[i]
        pool = (np.flatnonzero(ds.domains != d) if mode == "mismatch" else
                np.flatnonzero((ds.domains == d) & (ds.labels != ds.labels[i]).any(axis=1)))
        if not len(pool):  # one domain only / no image with other findings: fall back to any other image
            pool = np.flatnonzero(np.arange(len(ds)) != i)
        swap[i] = rng.choice(pool) if len(pool) else i
    return ds.images[swap]


def vqa_eval(model: TinyVLM, data: Examples, *, conflict: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
             seed: int = 0, no_rag: np.ndarray | None = None, noise: bool = True) -> dict[str, float]:
    """Accuracy/F1/AUC without and with the contexts, harm rate, accuracy with a noise image (contexts kept;
    the paper's analysis) and, given ``conflict`` (:func:`conflict_set` of the same questions), the copy rate:
    how often the answer follows the reports against a real image that shows the opposite (balanced, a
    constant answer scores 0.5; :func:`~iclr25.mmed_rag.metrics.copying`), with the same model's reading of
    those images without reports (``image_reading``, balanced: its own eyes, the best a grounded model does).
    ``no_rag``: the same model's answers without contexts when already known (they do not depend on them);
    ``noise=False`` skips the noise-image pass."""
    y = np.array([a == "yes" for a in data.answers], dtype=np.int64)
    a0 = answer(model, data.images, [[] for _ in data.contexts], data.questions)[0] if no_rag is None else no_rag
    a1, p1 = answer(model, data.images, data.contexts, data.questions)
    m = vqa_metrics(y, a1, p1)
    out = {"accuracy": m["accuracy"], "f1": m["f1"], "auc": m["auc"], "accuracy_no_rag": float((a0 == y).mean()),
           "harm_rate": harm_rate(y, a0, a1), "yes_rate": float(np.mean(a1 == 1)), "answers_no_rag": a0}
    if noise or conflict is not None:
        an, _ = answer(model, noise_images(data.images.shape, seed=seed + 99), data.contexts, data.questions)
        out.update(noise_accuracy=noise_accuracy(y, an), yes_rate_noise=float(np.mean(an == 1)))
    if conflict is not None and len(conflict[0]):
        items, images, stated = conflict
        qs = [data.questions[i] for i in items]
        ac, _ = answer(model, images, [data.contexts[i] for i in items], qs)
        ai, _ = answer(model, images, [[] for _ in items], qs)
        c = copying(stated, ac)
        out.update(copy_rate=c["copy_rate"], follows_reports=c["follows_reports"],
                   follows_reports_always_yes=c["always_yes"], conflicts=c["n"],
                   image_reading=1.0 - copying(stated, ai)["copy_rate"],
                   copy_rate_noise=copying(stated, an[items])["copy_rate"])
    return out


#: The references of every VQA accuracy (issue 61), metric key → name: the answer prior, two model-free votes and
#: the SFT model without retrieval, with fixed-k and with gap-rule retrieval (MMed-RAG is ``acc_mmed_rag``).
REFERENCES = {
    "acc_answer_prior": "answer prior (training majority answer)",
    "acc_retrieval_vote_fixed_k": "retrieval vote (majority of the fixed-k retrieved reports, no VLM)",
    "acc_retrieval_vote_gap": "retrieval vote (majority of the gap-rule reports MMed-RAG reads, no VLM)",
    "acc_pixel_nn": "raw-pixel nearest-neighbour vote (k database images, no training)",
    "acc_image_only": "image-only supervised CNN (trained on the training images' labels, no reports)",
    "acc_no_rag": "SFT model without retrieval",
    "acc_sft_fixed_k": "SFT model + fixed-k retrieval (standard RAG)",
    "acc_sft_gap": "SFT model + gap rule",
}


def strongest_reference(M: dict[str, float]) -> tuple[str, float]:
    """The key and accuracy of the best reference in ``M`` (:data:`REFERENCES`; the first listed on a tie)."""
    keys = [k for k in REFERENCES if k in M]
    best = max(keys, key=lambda k: (M[k], -keys.index(k)))
    return best, float(M[best])


def _vote_or_prior(votes: np.ndarray, majority: int) -> np.ndarray:
    return np.where(votes < 0, majority, votes)


def reference_votes(test: MedDataset, db: MedDataset, ctx_fixed: Any, ctx_gap: Any, *, majority: int,
                    k: int) -> dict[str, float]:
    """Model-free references on ``test``'s questions: the majority of what the retrieved reports state about the
    asked finding (read back from their text, as the VLM reads them; fixed-k and gap-rule contexts), and the
    majority of the ``k`` nearest ``db`` images in raw pixels (Euclidean) over their reports' labels. A tie, or
    reports that do not state the finding, answer the training majority answer ``majority``. Nothing is tuned."""
    img, fnd, ans = vqa_items(test)
    out = {}
    for name, ctx in (("fixed_k", ctx_fixed), ("gap", ctx_gap)):
        said = stated_answers(test.domains[img], [ctx.reports[i] for i in img], fnd, vocabulary=test.vocabulary)
        out[f"acc_retrieval_vote_{name}"] = float((_vote_or_prior(said, majority) == ans).mean())
    q = test.images.reshape(len(test), -1).astype(np.float64)
    x = db.images.reshape(len(db), -1).astype(np.float64)
    d2 = (q ** 2).sum(1)[:, None] - 2 * q @ x.T + (x ** 2).sum(1)[None]
    nn = np.argsort(d2, axis=1, kind="stable")[:, :min(k, len(db))]  # (N, k)
    yes = db.report_labels[nn].sum(1)  # (N, 4) votes for "yes"
    kk = nn.shape[1]
    vote = np.where(2 * yes > kk, 1, np.where(2 * yes < kk, 0, -1))
    out["acc_pixel_nn"] = float((_vote_or_prior(vote[img, fnd], majority) == ans).mean())
    return out


def retrieval_metrics(rs: RetrievalSystem, db: MedDataset, test: MedDataset, *, k: int = 3, gamma: float = 0.005,
                      gammas: Sequence[float] = (), seed: int = 0) -> dict[str, float]:
    """Router accuracy, recall@1/5 (and of random same-domain reports), cross-domain contexts in the top 5,
    context precision on the asked finding at ranks 1, 3, 5 and 10 (``precision@r``: the top r kept), of fixed
    k and of the gap rule (γ = ``gamma`` and each of ``gammas``), with the gap rule's mean k."""
    M: dict[str, float] = {}
    top = rs.retrieve(test.images, k_max=10, rule="fixed")
    M["router_accuracy"] = float((top.domains == test.domains).mean())
    M["recall@1"] = recall_at_k(top.retrieved.labels, test.labels, 1)
    M["recall@5"] = recall_at_k(top.retrieved.labels, test.labels, 5)
    rng = np.random.default_rng(seed + 7)
    rand = np.stack([rng.choice(np.flatnonzero(db.domains == d), 5) for d in test.domains])
    M["recall@5_random"] = recall_at_k(db.report_labels[rand], test.labels, 5)
    M["cross_domain_top5"] = float((top.retrieved.domains[:, :5] != test.domains[:, None]).mean())
    img, fnd, ans = vqa_items(test)
    labels = top.retrieved.labels[img]
    width = labels.shape[1]
    for r in (1, 3, 5, 10):
        if r <= width:
            mask = np.zeros((len(img), width), bool)
            mask[:, :r] = True
            M[f"precision@{r}"] = context_precision(labels, mask, fnd, ans)
    M["precision_fixed_k"] = context_precision(labels[:, :k], np.ones((len(img), min(k, width)), bool), fnd, ans)
    for g in (gamma, *gammas):
        sel = select_contexts(top.sims[:, :k], rule="gap", k_max=k, gamma=g)
        key = "" if g == gamma else f"@{g:g}"
        M[f"precision_gap{key}"] = context_precision(labels[:, :k], sel.mask[img], fnd, ans)
        M[f"mean_k_gap{key}"] = sel.mean_k
    M["mean_k_fixed"] = float(min(k, width))
    return M


class _Clock:
    """Wall seconds per stage, written into the metrics as ``seconds_<stage>``."""

    def __init__(self, metrics: dict[str, float]) -> None:
        self.metrics, self.clock = metrics, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.metrics[f"seconds_{name}"] = now - self.clock
        self.clock = now


def _retrieval_step(cfg: PipelineConfig, sp: Splits, M: dict[str, float], *, seed: int, minilm_model: Any
                    ) -> tuple[RetrievalSystem, Any, Any]:
    """Router + per-domain retrievers (and the pooled baseline); the test set's fixed-k and gap-rule contexts."""
    rcfg = RetrievalConfig(router_steps=cfg.router_steps, retriever_steps=cfg.retriever_steps, backend=cfg.backend,
                           text_tower=cfg.text_tower)
    rs = RetrievalSystem.fit(sp.train, sp.db, config=rcfg, seed=seed, minilm_model=minilm_model)
    test = sp.test
    M.update(retrieval_metrics(rs, sp.db, test, k=cfg.k, gamma=cfg.gamma, seed=seed))
    if cfg.pooled_baseline:
        pooled = RetrievalSystem.fit(sp.train, sp.db, config=dataclasses.replace(rcfg, pooled=True),
                                     vocab=rs.vocab, seed=seed)
        cp = pooled.retrieve(test.images, k_max=10, rule="fixed")
        M["recall@5_pooled"] = recall_at_k(cp.retrieved.labels, test.labels, 5)
        M["cross_domain_top5_pooled"] = float((cp.retrieved.domains[:, :5] != test.domains[:, None]).mean())
    ctx_fixed = rs.retrieve(test.images, k_max=cfg.k, rule="fixed")
    ctx_gap = rs.retrieve(test.images, k_max=cfg.k, rule="gap", gamma=cfg.gamma)
    return rs, ctx_fixed, ctx_gap


def _split_for_mining(cfg: PipelineConfig, train: MedDataset) -> tuple[MedDataset, MedDataset]:
    """The SFT images and the held-out last ``mine_images`` training images that preference pairs are mined on."""
    n = len(train) - cfg.mine_images
    return train.subset(np.arange(n)), train.subset(np.arange(n, len(train)))


def _sft_step(cfg: PipelineConfig, sft_set: MedDataset, db: MedDataset, rs: RetrievalSystem, *, seed: int) -> TinyVLM:
    """SFT of a fresh tiny VLM on "usually right" contexts (:func:`sft_examples`)."""
    data = sft_examples(sft_set, db, k_max=cfg.k, agreement=cfg.sft_context_agreement, no_context=cfg.sft_no_context,
                        report_fraction=cfg.sft_report_fraction, seed=seed)
    return train_sft(TinyVLM(rs.vocab, VLMConfig()), data, steps=cfg.sft_steps, seed=seed)


def _mining_step(cfg: PipelineConfig, sft: TinyVLM, mine_set: MedDataset, mc: Any, M: dict[str, float], *,
                 seed: int) -> tuple[PreferencePairs, dict[str, int], Examples]:
    """D_cm / D_oa1 / D_oa2 (and report pairs) mined from the SFT model's answers with the deployed (gap-rule)
    contexts ``mc`` of ``mine_set``; returns the pairs, their statistics and the mined VQA questions."""
    mine_vqa = _vqa_set(mine_set, mc.reports)
    pairs = mine_preferences(sft, mine_vqa, seed=seed, cm_images=mismatched_images(mine_set, cfg.cm_image, seed=seed))
    if cfg.report_pairs:
        n_rep = min(cfg.mine_reports, len(mine_set))
        rep = mine_set.subset(np.arange(n_rep))
        rep_set = Examples(rep.images, mc.reports[:n_rep], [REPORT_QUESTION] * n_rep, list(rep.reports))
        pairs = PreferencePairs.concat([pairs, mine_report_preferences(
            sft, rep_set, rep.domains, rep.labels, threshold=cfg.report_threshold, seed=seed,
            cm_images=mismatched_images(rep, cfg.cm_image, seed=seed, per="image"))])
    stats = dict(pairs.stats, pairs=len(pairs), report_pairs=int((pairs.task == "report").sum()))
    for kind in ("cm", "oa1", "oa2"):
        M[f"pairs_{kind}"] = float(len(pairs.only((kind,), ("vqa",))))
    return pairs, stats, mine_vqa


def _dpo_from(cfg: PipelineConfig, sft: TinyVLM, pairs: PreferencePairs, *, seed: int) -> tuple[TinyVLM, dict]:
    """DPO of a trainable copy of ``sft`` on ``pairs`` against the frozen ``sft`` (π_ref)."""
    pol = sft.frozen_copy()
    for p in pol.parameters():
        p.requires_grad_(True)
    return train_dpo(pol, pairs, reference=sft, steps=cfg.dpo_steps, lr=cfg.dpo_lr, beta=cfg.beta, seed=seed)


def _majority_answer(train: MedDataset) -> int:
    """The training set's majority answer (1 "yes", 0 "no"): the answer prior."""
    _, _, ans_train = vqa_items(train)
    return int(ans_train.mean() >= 0.5)


def _vqa_step(test: MedDataset, majority: int, sft: TinyVLM, rag_pt: TinyVLM, ctx_fixed: Any, ctx_gap: Any,
              M: dict[str, float], *, seed: int, db: MedDataset | None = None
              ) -> tuple[Examples, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """VQA accuracy/F1/AUC, copy, harm and noise metrics of SFT (fixed k, gap rule) and MMed-RAG, with the
    trivial references (``majority``: the training set's majority answer) and, given the database ``db``, the
    model-free votes (:func:`reference_votes`); returns the gap-rule test questions and their conflict set (for
    the ablations)."""
    fixed_set = _vqa_set(test, ctx_fixed.reports)
    gap_set = _vqa_set(test, ctx_gap.reports)
    conflict = conflict_set(test, ctx_gap.reports, seed=seed)
    e_sft_gap = vqa_eval(sft, gap_set, conflict=conflict, seed=seed)
    e_sft_fixed = vqa_eval(sft, fixed_set, seed=seed, no_rag=e_sft_gap["answers_no_rag"], noise=False)
    e_pt = vqa_eval(rag_pt, gap_set, conflict=conflict, seed=seed)
    M["acc_no_rag"] = e_sft_fixed["accuracy_no_rag"]
    M["acc_sft_fixed_k"] = e_sft_fixed["accuracy"]
    M["acc_sft_gap"] = e_sft_gap["accuracy"]
    M["acc_mmed_rag"] = e_pt["accuracy"]
    M["mean_k_mmed_rag"] = ctx_gap.selection.mean_k  # the contexts the MMed-RAG row was given
    M["f1_sft_fixed_k"], M["f1_mmed_rag"] = e_sft_fixed["f1"], e_pt["f1"]
    M["auc_sft_fixed_k"], M["auc_mmed_rag"] = e_sft_fixed["auc"], e_pt["auc"]
    for name, e in (("sft_fixed_k", e_sft_fixed), ("sft", e_sft_gap), ("mmed_rag", e_pt)):
        for key in ("copy_rate", "follows_reports", "image_reading", "copy_rate_noise", "noise_accuracy",
                    "yes_rate_noise", "yes_rate"):
            if key in e:
                M[f"{key}_{name}"] = e[key]
    M["harm_rate_sft"], M["harm_rate_mmed_rag"] = e_sft_gap["harm_rate"], e_pt["harm_rate"]
    _trivial_references(test, majority, e_pt, M)
    if db is not None:
        M.update(reference_votes(test, db, ctx_fixed, ctx_gap, majority=majority,
                                 k=int(ctx_fixed.selection.k.max())))
    return gap_set, conflict


def _trivial_references(test: MedDataset, majority: int, e_pt: dict[str, Any], M: dict[str, float]) -> None:
    """The training set's majority answer; any constant answer has copy rate 0.5 (balanced); on the conflict
    questions a constant "yes" follows the reports at the share of stated "yes"; with a noise image a constant
    "yes" is right at the share of true "yes" (the shortcut of issue 41)."""
    _, _, ans_test = vqa_items(test)
    M["acc_answer_prior"] = float((ans_test == majority).mean())
    M["copy_rate_constant"] = 0.5
    M["follows_reports_always_yes"] = e_pt.get("follows_reports_always_yes", float("nan"))
    M["conflicts"] = e_pt.get("conflicts", 0.0)
    M["noise_accuracy_always_yes"] = float(ans_test.mean())
    M["noise_accuracy_always_no"] = 1.0 - M["noise_accuracy_always_yes"]


class _ReportEval:
    """Report generation (BLEU, ROUGE-L, finding accuracy) on ``n`` random test images (none: ``n`` = 0)."""

    def __init__(self, test: MedDataset, n: int, M: dict[str, float], *, seed: int) -> None:
        self.test, self.M = test, M
        self.n = min(n, len(test))
        self.sub = np.random.default_rng(seed + 3).choice(len(test), self.n, replace=False)
        self.refs = [test.reports[i] for i in self.sub]

    def __call__(self, name: str, model: TinyVLM, contexts: Any) -> list[str]:
        """Score ``model``'s reports with ``contexts`` (the contexts of every test image, indexed here)."""
        sub, test = self.sub, self.test
        hyp = generate_reports(model, test.images[sub], [contexts[i] for i in sub])
        r = report_metrics(hyp, self.refs)
        self.M[f"bleu_{name}"], self.M[f"rouge_l_{name}"] = r["bleu"], r["rouge_l"]
        self.M[f"report_factual_{name}"] = float(
            report_finding_accuracy(test.domains[sub], hyp, test.labels[sub]).mean())
        return hyp


def _dpo_ablations(cfg: PipelineConfig, sft: TinyVLM, pairs: PreferencePairs, gap_set: Examples, conflict: Any,
                   reports: _ReportEval, ctx_gap: Any, M: dict[str, float], *, seed: int) -> None:
    """RAG-PT on D_cm only, D_oa only, D_oa2 only (RULE-style), and on VQA or report pairs only."""
    variants = [("cm_only", ("cm",), cfg.dpo_tasks), ("oa_only", ("oa1", "oa2"), cfg.dpo_tasks),
                ("rule_oa2_only", ("oa2",), cfg.dpo_tasks)]
    if "report" in cfg.dpo_tasks and cfg.report_pairs:
        variants += [("vqa_pairs_only", cfg.dpo_kinds, ("vqa",)), ("report_pairs_only", cfg.dpo_kinds, ("report",))]
    for name, kinds, tasks in variants:
        if not len(pairs.only(kinds, tasks)):
            continue
        m_abl, _ = _dpo_from(cfg, sft, pairs.only(kinds, tasks), seed=seed)
        e = vqa_eval(m_abl, gap_set, conflict=conflict, seed=seed)
        M[f"acc_{name}"], M[f"copy_rate_{name}"], M[f"harm_rate_{name}"] = (
            e["accuracy"], e.get("copy_rate", float("nan")), e["harm_rate"])
        M[f"noise_accuracy_{name}"], M[f"image_reading_{name}"] = (
            e["noise_accuracy"], e.get("image_reading", float("nan")))
        if reports.n and name in ("vqa_pairs_only", "report_pairs_only"):
            reports(name, m_abl, ctx_gap.reports)


def _copy_ablation(cfg: PipelineConfig, sft: TinyVLM, pairs: PreferencePairs, mine_set: MedDataset,
                   mine_vqa: Examples, gap_set: Examples, conflict: Any, M: dict[str, float], *, seed: int) -> None:
    """The causes of copying: RAG-PT with D_cm built from each other kind of image, and without D_cm."""
    other = [k for k in CM_IMAGES if k != cfg.cm_image]
    for name in [*other, "none"]:
        if name == "none":
            sub, key = pairs.only(("oa1", "oa2"), cfg.dpo_tasks), "no_dcm"
        else:
            alt = mine_preferences(sft, mine_vqa, seed=seed, cm_images=mismatched_images(mine_set, name, seed=seed))
            sub = PreferencePairs.concat([alt.only(("cm",)), pairs.only(("oa1", "oa2"), cfg.dpo_tasks),
                                          pairs.only(("cm",), ("report",))] if "report" in cfg.dpo_tasks
                                         else [alt.only(("cm",)), pairs.only(("oa1", "oa2"), ("vqa",))])
            key = f"dcm_{name}"
            M[f"pairs_cm_{key}"] = float(len(alt.only(("cm",))))
        if not len(sub):
            continue
        m_abl, _ = _dpo_from(cfg, sft, sub, seed=seed)
        e = vqa_eval(m_abl, gap_set, conflict=conflict, seed=seed)
        for k in ("accuracy", "copy_rate", "image_reading", "yes_rate", "yes_rate_noise", "harm_rate"):
            if k in e:
                M[f"{'acc' if k == 'accuracy' else k}_{key}"] = e[k]


def _examples(cfg: PipelineConfig, test: MedDataset, rag_pt: TinyVLM, ctx_gap: Any) -> dict[str, Any]:
    """Two test images of each domain: what the data are, where the router sent them, what was retrieved."""
    ex = np.concatenate([np.flatnonzero(test.domains == d)[:2] for d in range(len(DOMAINS))])
    return {"images": test.images[ex], "domains": test.domains[ex], "routed": ctx_gap.domains[ex],
            "retrieved": [ctx_gap.reports[i] for i in ex], "truth": [test.reports[i] for i in ex],
            "generated": generate_reports(rag_pt, test.images[ex], [ctx_gap.reports[i] for i in ex])
            if cfg.n_report_eval else [""] * len(ex)}


def _splits(cfg: PipelineConfig, seed: int) -> Splits:
    return generate_splits(cfg.n_train, cfg.n_db, cfg.n_test, size=cfg.size, contrast=cfg.contrast,
                           label_noise=cfg.label_noise, prevalence=cfg.prevalence, harmonized=cfg.harmonized,
                           seed=seed)


def image_references(cfg: PipelineConfig, sp: Splits, *, seed: int = 0) -> dict[str, float]:
    """The image-only references of ``sp.test``: the accuracy of a supervised CNN trained on ``sp.train``'s
    images and labels for ``cfg.image_only_steps`` steps (``acc_image_only``; absent when 0 steps) and the
    domain accuracy of a mean-colour classifier (``mean_colour_domain_accuracy``; chance is 1/3)."""
    from .supervised import fit_image_only, image_only_accuracy, mean_colour_domain_accuracy

    out = {"mean_colour_domain_accuracy": mean_colour_domain_accuracy(sp.train, sp.test)}
    if cfg.image_only_steps:
        model = fit_image_only(sp.train, steps=cfg.image_only_steps, seed=seed)
        out["acc_image_only"] = image_only_accuracy(model, sp.test)
    return out


def run_retrieval(cfg: PipelineConfig, *, seed: int = 0) -> dict[str, float]:
    """The retrieval stage of :func:`run_pipeline` alone (same data, same seeds, same order, so the same
    retrieval metrics): router, per-domain retrievers, the pooled baseline when ``cfg.pooled_baseline``, and
    fixed-k vs gap-rule context precision. For claims that need no trained VLM (the test rung, calibration)."""
    torch.manual_seed(seed)
    sp = _splits(cfg, seed)
    M: dict[str, float] = {}
    clock = _Clock(M)
    _retrieval_step(cfg, sp, M, seed=seed, minilm_model=None)
    clock.lap("retrieval")
    return M


def run_pipeline(cfg: PipelineConfig | None = None, *, seed: int = 0, log: Any = None,
                 minilm_model: Any = None) -> PipelineResult:
    """Run every stage at the budget of ``cfg`` and return the metrics the README's Results table shows.
    ``minilm_model``: an already loaded sentence encoder for ``text_tower="minilm"`` (loaded once, reused).

    Stages: data → retrieval (router, per-domain retrievers, pooled baseline) → SFT → mining on held-out
    training images → DPO (RAG-PT) → VQA evaluation with trivial references → report generation → the DPO-data
    ablations (``cfg.ablations``) → the copy ablation (``cfg.copy_ablation``)."""
    cfg = cfg or PipelineConfig()
    say = log or (lambda *_: None)
    torch.manual_seed(seed)
    sp = _splits(cfg, seed)
    M: dict[str, float] = {}
    clock = _Clock(M)
    rs, ctx_fixed, ctx_gap = _retrieval_step(cfg, sp, M, seed=seed, minilm_model=minilm_model)
    say(f"retrieval: router {M['router_accuracy']:.3f}, recall@5 {M['recall@5']:.3f}")
    clock.lap("retrieval")
    sft_set, mine_set = _split_for_mining(cfg, sp.train)
    sft = _sft_step(cfg, sft_set, sp.db, rs, seed=seed)
    mc = rs.retrieve(mine_set.images, k_max=cfg.k, rule="gap", gamma=cfg.gamma)
    clock.lap("sft")
    pairs, stats, mine_vqa = _mining_step(cfg, sft, mine_set, mc, M, seed=seed)
    say(f"pairs: {stats}")
    clock.lap("mining")
    rag_pt, dstats = _dpo_from(cfg, sft, pairs.only(cfg.dpo_kinds, cfg.dpo_tasks), seed=seed)
    M.update({f"dpo_{k}": v for k, v in dstats.items()})
    clock.lap("dpo")
    gap_set, conflict = _vqa_step(sp.test, _majority_answer(sp.train), sft, rag_pt, ctx_fixed, ctx_gap, M, seed=seed,
                                  db=sp.db)
    reports = _ReportEval(sp.test, cfg.n_report_eval, M, seed=seed)
    if reports.n:
        reports("no_rag", sft, [[] for _ in range(len(sp.test))])
        reports("rag", sft, ctx_fixed.reports)
        reports("mmed_rag", rag_pt, ctx_gap.reports)
    clock.lap("eval")
    if cfg.ablations:
        _dpo_ablations(cfg, sft, pairs, gap_set, conflict, reports, ctx_gap, M, seed=seed)
        clock.lap("ablations")
    if cfg.copy_ablation:
        _copy_ablation(cfg, sft, pairs, mine_set, mine_vqa, gap_set, conflict, M, seed=seed)
        clock.lap("copy_ablation")
    M.update(image_references(cfg, sp, seed=seed))  # last: its seeding changes nothing above
    clock.lap("image_only")
    return PipelineResult(M, stats, sp, rs, sft, rag_pt, _examples(cfg, sp.test, rag_pt, ctx_gap))


def evaluate_system(rs: RetrievalSystem, sft: TinyVLM, rag_pt: TinyVLM, db: MedDataset, test: MedDataset, *,
                    majority: int, k: int = 3, gamma: float = 0.005, seed: int = 0) -> dict[str, float]:
    """The retrieval and VQA metrics of :func:`run_pipeline` for an already trained system (e.g. a loaded
    checkpoint, :func:`iclr25.mmed_rag.checkpoint.load_system`) on ``test``: the SFT model without retrieval,
    with fixed-k and gap-rule contexts, and the RAG-PT model with gap-rule contexts ("MMed-RAG"), beside the
    answer prior ``majority`` (the training majority answer, 1 "yes" / 0 "no")."""
    M = retrieval_metrics(rs, db, test, k=k, gamma=gamma, seed=seed)
    ctx_fixed = rs.retrieve(test.images, k_max=k, rule="fixed")
    ctx_gap = rs.retrieve(test.images, k_max=k, rule="gap", gamma=gamma)
    _vqa_step(test, majority, sft, rag_pt, ctx_fixed, ctx_gap, M, seed=seed, db=db)
    return M


def train_rag_pt(data: MedDataset, db: MedDataset, rs: RetrievalSystem, *, k: int = 3, sft_steps: int = 600,
                 dpo_steps: int = 200, beta: float = 0.1, cm_image: str = "mismatch", report_pairs: bool = True,
                 report_threshold: float = 0.75, seed: int = 0) -> tuple[TinyVLM, TinyVLM, PreferencePairs, dict]:
    """RAG-PT of a tiny VLM on a user's data (``iclr25 mmed-rag train``): SFT on the first three quarters of
    ``data`` with contexts from ``db``, D_cm / D_oa1 / D_oa2 pairs (and report pairs unless ``report_pairs`` is
    false) mined from the SFT model's own answers on the last quarter with the gap-rule contexts of ``rs``,
    then DPO against the frozen SFT model. Returns ``(sft, rag_pt, pairs, dpo_stats)``."""
    n_mine = max(1, len(data) // 4)
    fit, mine = data.subset(np.arange(len(data) - n_mine)), data.subset(np.arange(len(data) - n_mine, len(data)))
    sft = train_sft(TinyVLM(rs.vocab), sft_examples(fit, db, k_max=k, seed=seed), steps=sft_steps, seed=seed)
    ctx = rs.retrieve(mine.images, k_max=k, rule="gap")
    pairs = mine_preferences(sft, _vqa_set(mine, ctx.reports), seed=seed,
                             cm_images=mismatched_images(mine, cm_image, seed=seed))
    if report_pairs:
        reports = Examples(mine.images, ctx.reports, [REPORT_QUESTION] * len(mine), list(mine.reports))
        pairs = PreferencePairs.concat([pairs, mine_report_preferences(
            sft, reports, mine.domains, mine.labels, threshold=report_threshold, seed=seed,
            cm_images=mismatched_images(mine, cm_image, seed=seed, per="image"))])
    pol = sft.frozen_copy()
    for p in pol.parameters():
        p.requires_grad_(True)
    pol, stats = train_dpo(pol, pairs, reference=sft, steps=dpo_steps, beta=beta, seed=seed)
    return sft, pol, pairs, stats
