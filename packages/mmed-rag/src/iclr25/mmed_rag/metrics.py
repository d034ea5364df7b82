"""Evaluation: VQA accuracy / F1 / AUC, report BLEU and ROUGE-L, copy rate, harm rate, retriever recall@k and
context precision.

- copy rate (:func:`copying`): on questions where the image is replaced by a *real* image of the same domain
  that shows the opposite of what the retrieved reports state about the asked finding (the reports kept), the
  rate at which the answer follows the reports, balanced over the two stated answers, so that any constant
  answer ("always yes", "always no", the answer prior) scores exactly 0.5; 1 = copies the reports, 0 = follows
  the image. (The paper's analysis, accuracy with a noise image and the context kept, is :func:`noise_accuracy`:
  a model that answers "yes" to every noise image scores the share of true "yes" there, a shortcut.)
- harm rate: among questions answered correctly without retrieval, the fraction answered wrongly with it;
- recall@k: the fraction of queries with at least one of the top-k reports stating exactly the query's
  findings (all four labels);
- context precision: the fraction of selected reports whose stated label for the asked finding is the truth.

References: Xia et al., *MMed-RAG*, ICLR 2025, §4 (metrics) and §3.3 (the 55.08% noisy-image analysis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["vqa_metrics", "auc", "report_metrics", "copying", "noise_accuracy", "harm_rate", "recall_at_k", "context_precision",
           "report_finding_accuracy"]


def _binary(name: str, x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 1 or not np.isin(a, (0, 1)).all():
        raise ValueError(f"{name} must be a 1-D array of 0/1, got shape {a.shape}")
    return a.astype(np.int64)


def auc(y_true: Any, score: Any) -> float:
    """ROC AUC by the Mann–Whitney statistic (ties count 1/2); NaN when one class is absent."""
    y = _binary("y_true", y_true)
    s = np.asarray(score, dtype=np.float64)
    if s.shape != y.shape:
        raise ValueError(f"score must have the shape of y_true {y.shape}, got {s.shape}")
    pos, neg = s[y == 1], s[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    allv = np.concatenate([pos, neg])
    ranks = np.empty(len(allv))
    ranks[np.argsort(allv, kind="mergesort")] = np.arange(1, len(allv) + 1)
    _, inv, counts = np.unique(allv, return_inverse=True, return_counts=True)
    ranks = (np.bincount(inv, weights=ranks) / counts)[inv]  # ties share their mean rank
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def vqa_metrics(y_true: Any, y_pred: Any, p_yes: Any | None = None) -> dict[str, float]:
    """Accuracy, F1 (of "yes") and, given P(yes), AUC."""
    y, p = _binary("y_true", y_true), _binary("y_pred", y_pred)
    if y.shape != p.shape:
        raise ValueError(f"y_pred must have the shape of y_true {y.shape}, got {p.shape}")
    tp = int(((y == 1) & (p == 1)).sum())
    f1 = 2 * tp / max(1, 2 * tp + int(((y == 0) & (p == 1)).sum()) + int(((y == 1) & (p == 0)).sum()))
    out = {"accuracy": float((y == p).mean()), "f1": float(f1)}
    if p_yes is not None:
        out["auc"] = auc(y, p_yes)
    return out


def report_metrics(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Corpus BLEU (``sacrebleu``, 0-100) and mean ROUGE-L F (``rouge-score``, 0-100)."""
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"hypotheses and references must be non-empty and of equal length, got "
                         f"{len(hypotheses)} and {len(references)}")
    import sacrebleu
    from rouge_score import rouge_scorer

    bleu = sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    rl = np.mean([scorer.score(r, h)["rougeL"].fmeasure for h, r in zip(hypotheses, references, strict=True)])
    return {"bleu": float(bleu), "rouge_l": float(100 * rl)}


def report_finding_accuracy(domains: Any, hypotheses: Sequence[str], labels: Any) -> np.ndarray:
    """Per report, the fraction of the four findings it states correctly (:func:`~iclr25.mmed_rag.data.read_report`;
    a finding it does not state, or states both ways, counts as wrong): the factual accuracy of a report."""
    from .data import read_report

    d, y = np.asarray(domains), np.asarray(labels)
    if not (len(d) == len(hypotheses) == len(y)) or y.ndim != 2:
        raise ValueError(f"mismatched counts: {len(d)} domains, {len(hypotheses)} reports, labels of shape {y.shape}")
    if len(d) == 0:
        return np.zeros(0)
    said = np.stack([read_report(int(di), h) for di, h in zip(d, hypotheses, strict=True)])
    return (said == y).mean(1)


def noise_accuracy(y_true: Any, y_pred_noise_image: Any) -> float:
    """Accuracy with a noise image and the context kept (the paper's 55.08 % analysis; not a copy measure on its
    own: a constant answer scores the share of that answer)."""
    y, p = _binary("y_true", y_true), _binary("y_pred_noise_image", y_pred_noise_image)
    return float((y == p).mean())


def copying(stated: Any, y_pred: Any) -> dict[str, float]:
    """How often the answer follows the retrieved reports against the image.

    ``stated`` (N,) 0/1: what the kept reports state about the asked finding; ``y_pred`` (N,) 0/1: the answers
    with an image that shows the opposite (1 − stated). Returns ``copy_rate`` = ½ Σ_s P(pred = s | stated = s)
    (balanced over the two stated answers present; any constant answer scores 0.5), ``follows_reports`` =
    P(pred = stated) (raw), ``follows_image`` = 1 − follows_reports, ``always_yes`` / ``always_no`` = the raw
    rate of a constant answer (the share of stated "yes" / "no"), and ``n``.

    Examples
    --------
    >>> copying([1, 1, 1, 0], [1, 1, 1, 1])["copy_rate"]  # "always yes": raw 0.75, balanced 0.5
    0.5
    """
    s, p = _binary("stated", stated), _binary("y_pred", y_pred)
    if s.shape != p.shape or len(s) == 0:
        raise ValueError(f"y_pred must have the non-empty shape of stated {s.shape}, got {p.shape}")
    follows = p == s
    bal = float(np.mean([follows[s == v].mean() for v in (0, 1) if (s == v).any()]))
    return {"copy_rate": bal, "follows_reports": float(follows.mean()), "follows_image": float(1 - follows.mean()),
            "always_yes": float(s.mean()), "always_no": float(1 - s.mean()), "n": float(len(s))}


def harm_rate(y_true: Any, y_pred_no_rag: Any, y_pred_rag: Any) -> float:
    """P(wrong with RAG | right without RAG)."""
    y = _binary("y_true", y_true)
    a, b = _binary("y_pred_no_rag", y_pred_no_rag), _binary("y_pred_rag", y_pred_rag)
    right = a == y
    return float(((b != y) & right).sum() / max(1, right.sum()))


def recall_at_k(retrieved_labels: Any, query_labels: Any, k: int) -> float:
    """Fraction of queries whose top-k reports include one with exactly the query's labels (B, K, 4)/(B, 4)."""
    r, q = np.asarray(retrieved_labels), np.asarray(query_labels)
    if r.ndim != 3 or q.shape != (r.shape[0], r.shape[2]):
        raise ValueError(f"retrieved_labels must be (B, K, F) and query_labels (B, F); got {r.shape}, {q.shape}")
    return float((r[:, :k] == q[:, None]).all(-1).any(-1).mean())


def context_precision(retrieved_labels: Any, mask: Any, finding: Any, answer: Any) -> float:
    """Mean over queries of the fraction of selected reports that state the true answer to the asked finding."""
    r, m = np.asarray(retrieved_labels), np.asarray(mask, dtype=bool)
    f, a = np.asarray(finding), np.asarray(answer)
    said = r[np.arange(len(r)), :, f][:, :m.shape[1]]  # (B, K)
    ok = (said == a[:, None]) & m
    return float((ok.sum(1) / np.maximum(1, m.sum(1))).mean())
