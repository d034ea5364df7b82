"""Direct preference optimisation: the loss, rewards, margins and summed answer log-probabilities.

With the summed answer log-probabilities of the policy π_θ and the frozen reference π_ref on the chosen
(x, y_w) and rejected (x', y_l) sides (x' = x with a noise image for cross-modality pairs),

    h      = (log π_θ(y_w|x) − log π_ref(y_w|x)) − (log π_θ(y_l|x') − log π_ref(y_l|x'))
    loss   = −log σ(β h)                               (TRL's ``loss_type="sigmoid"``, no label smoothing)
    r_w    = β (log π_θ(y_w|x) − log π_ref(y_w|x)),    r_l = β (log π_θ(y_l|x') − log π_ref(y_l|x'))
    margin = r_w − r_l,   accuracy = 1[r_w > r_l]

References: Rafailov et al., *Direct Preference Optimization*, NeurIPS 2023, eq. 7; Xia et al., *MMed-RAG*,
ICLR 2025, eq. 4-5 (RAG-PT; β = 0.1 in the reference code's ``dpo_loss``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["DPOOutput", "dpo_loss", "sequence_logps"]


@dataclasses.dataclass(frozen=True)
class DPOOutput:
    """Per-pair DPO quantities (torch tensors of shape (B,)); ``loss`` is their mean (a scalar)."""

    loss: Any
    losses: Any
    chosen_rewards: Any
    rejected_rewards: Any
    margins: Any
    accuracies: Any


def _check(name: str, t: Any, shape: Any) -> None:
    import torch

    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one summed log-probability per pair), got shape {tuple(t.shape)}")
    if shape is not None and t.shape != shape:
        raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {tuple(shape)} like policy_chosen_logps")


def dpo_loss(policy_chosen_logps: Any, policy_rejected_logps: Any, reference_chosen_logps: Any,
             reference_rejected_logps: Any, *, beta: float = 0.1) -> DPOOutput:
    """The sigmoid DPO loss (module docstring), rewards detached as in TRL's ``DPOTrainer.dpo_loss``.

    Examples
    --------
    >>> import torch
    >>> out = dpo_loss(torch.tensor([-1.0]), torch.tensor([-2.0]), torch.tensor([-1.5]), torch.tensor([-1.5]))
    >>> round(float(out.loss), 6), round(float(out.margins[0]), 6)
    (0.644397, 0.1)
    """
    import torch.nn.functional as F

    if not (isinstance(beta, (int, float)) and beta > 0):
        raise ValueError(f"beta must be a number > 0, got {beta!r}")
    _check("policy_chosen_logps", policy_chosen_logps, None)
    for name, t in (("policy_rejected_logps", policy_rejected_logps),
                    ("reference_chosen_logps", reference_chosen_logps),
                    ("reference_rejected_logps", reference_rejected_logps)):
        _check(name, t, policy_chosen_logps.shape)
    chosen = policy_chosen_logps - reference_chosen_logps
    rejected = policy_rejected_logps - reference_rejected_logps
    logits = chosen - rejected
    losses = -F.logsigmoid(beta * logits)
    chosen_rewards = beta * chosen.detach()
    rejected_rewards = beta * rejected.detach()
    return DPOOutput(losses.mean(), losses, chosen_rewards, rejected_rewards, chosen_rewards - rejected_rewards,
                     (chosen_rewards > rejected_rewards).float())


def sequence_logps(logits: Any, labels: Any, *, ignore_index: int = -100) -> Any:
    """Summed log-probabilities of the answer tokens: Σ_t log softmax(logits_{t-1})[labels_t] over t with
    ``labels_t != ignore_index`` (TRL's ``_get_batch_logps``: logits at t predict the token at t+1).

    ``logits`` is (B, T, V), ``labels`` (B, T) with the prompt masked by ``ignore_index``; returns (B,).
    """
    import torch

    if logits.ndim != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(f"logits must be (B, T, V) and labels (B, T); got {tuple(logits.shape)} and "
                         f"{tuple(labels.shape)}")
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1]
    mask = labels != ignore_index
    labels[~mask] = 0
    per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return (per_token * mask).sum(-1)
