"""The synthetic odour-discrimination task: n-hot odour mixtures through a fixed random projection.

An odour is an n-hot vector m ∈ {0, 1}^k over k odorants (a mixture of n components); its label is
y = +1 when the target odorant is in the mixture, else −1. The "bulb" input is a fixed random projection

    x = g(P m / √n),   P ∈ R^{D×k},  P_ij ~ N(0, 1),

with g the identity (``projection="linear"``, default) or tanh (``projection="tanh"``; reviewer 4's question
whether the projection adds a nonlinearity is left as this knob). The overlap between odours is the expected
fraction of components two random mixtures share, n/k: more components per mixture (at fixed k) means more
overlapping odours and a weaker target signal per input.

References: Kumar, Bordelon, Pehlevan, Murthy & Gershman, "Do Mice Grok? Glimpses of Hidden Progress in Sensory
Cortex", ICLR 2025 (arXiv 2411.03541), Sec. "A synthetic model" (the task design of Berners-Lee et al. 2023).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

__all__ = ["OdourTask", "make_odour_task", "shifted_labels", "PROTOCOLS"]

#: Label shifts after training: ``reversal`` (y → −y), ``non_reversal`` (extradimensional shift: the label of
#: the mixtures that contain a second odorant flips, the others keep theirs), ``new_target`` (a new target
#: odorant, y' = +1 iff it is in the mixture).
PROTOCOLS = ("reversal", "non_reversal", "new_target")


@dataclasses.dataclass(frozen=True)
class OdourTask:
    """A train/test split of odour mixtures, their projected inputs and labels.

    Attributes: ``mixtures_*`` (n, k) 0/1 arrays, ``X_*`` (n, D) inputs, ``y_*`` (n,) labels in {−1, +1}
    (``y_train`` after label noise; ``y_train_clean`` without), ``projection`` (D, k), ``target`` (odorant index),
    ``overlap`` = n_components / n_odorants.
    """

    mixtures_train: np.ndarray
    mixtures_test: np.ndarray
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    y_train_clean: np.ndarray
    projection: np.ndarray
    target: int
    n_odorants: int
    n_components: int
    nonlinearity: str

    @property
    def overlap(self) -> float:
        return self.n_components / self.n_odorants

    def encode(self, mixtures: np.ndarray) -> np.ndarray:
        """Inputs x = g(P m / √n) of (n, k) 0/1 mixtures."""
        m = np.asarray(mixtures, dtype=np.float64)
        if m.ndim != 2 or m.shape[1] != self.n_odorants:
            raise ValueError(f"mixtures must have shape (n, {self.n_odorants}), got {m.shape}")
        u = m @ self.projection.T / math.sqrt(self.n_components)
        return np.tanh(u) if self.nonlinearity == "tanh" else u


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def make_odour_task(n_odorants: int = 16, n_components: int = 4, *, n_train: int = 48, n_test: int = 500,
                    input_dim: int = 100, projection: str = "linear", label_noise: float = 0.0,
                    target: int = 0, seed: int = 0) -> OdourTask:
    """Sample a balanced odour task: half of the mixtures contain the target odorant.

    ``n_train`` training and up to ``n_test`` held-out ("probe") mixtures, disjoint, each class half of each set.
    ``label_noise`` flips that fraction of the training labels (``y_train_clean`` keeps the true ones).

    Examples
    --------
    >>> t = make_odour_task(16, 4, n_train=40, n_test=100, seed=0)
    >>> t.X_train.shape, float(t.y_train.mean()), t.overlap
    ((40, 100), 0.0, 0.25)
    """
    k = _check_int("n_odorants", n_odorants, 2)
    n = _check_int("n_components", n_components, 1)
    if n >= k:
        raise ValueError(f"n_components must be below n_odorants = {k}, got {n}")
    n_train = _check_int("n_train", n_train, 4)
    n_test = _check_int("n_test", n_test, 2)
    D = _check_int("input_dim", input_dim, 1)
    if projection not in ("linear", "tanh"):
        raise ValueError(f"projection must be 'linear' or 'tanh', got {projection!r}")
    if not (isinstance(label_noise, (int, float)) and 0.0 <= label_noise < 0.5):
        raise ValueError(f"label_noise must be a number in [0, 0.5), got {label_noise!r}")
    target = _check_int("target", target, 0)
    if target >= k:
        raise ValueError(f"target must be an odorant index below n_odorants = {k}, got {target}")
    rng = np.random.default_rng(seed)
    combos = np.array(list(itertools.combinations(range(k), n)), dtype=np.int64) if math.comb(k, n) <= 200_000 \
        else None
    if combos is None:
        raise ValueError(f"C(n_odorants, n_components) = {math.comb(k, n)} mixtures is too many; use fewer odorants")
    has = (combos == target).any(axis=1)
    pos, neg = np.flatnonzero(has), np.flatnonzero(~has)
    rng.shuffle(pos)
    rng.shuffle(neg)
    half_tr = n_train // 2
    if half_tr + 1 > min(len(pos), len(neg)):
        raise ValueError(f"n_train = {n_train} needs {half_tr + 1} mixtures of each class, the task has "
                         f"{min(len(pos), len(neg))}")
    half_te = min(n_test // 2, len(pos) - half_tr, len(neg) - half_tr)
    idx_tr = np.concatenate([pos[:half_tr], neg[:n_train - half_tr]])
    idx_te = np.concatenate([pos[half_tr:half_tr + half_te], neg[n_train - half_tr:n_train - half_tr + half_te]])

    def onehot(idx):
        m = np.zeros((len(idx), k))
        m[np.arange(len(idx))[:, None], combos[idx]] = 1.0
        return m

    P = rng.standard_normal((D, k))
    m_tr, m_te = onehot(idx_tr), onehot(idx_te)
    y_tr = np.where(has[idx_tr], 1.0, -1.0)
    y_te = np.where(has[idx_te], 1.0, -1.0)
    y_noisy = y_tr.copy()
    n_flip = int(round(label_noise * n_train))
    if n_flip:
        y_noisy[rng.choice(n_train, n_flip, replace=False)] *= -1
    task = OdourTask(m_tr, m_te, np.empty((0, D)), np.empty((0, D)), y_noisy, y_te, y_tr, P, target, k, n,
                     projection)
    return dataclasses.replace(task, X_train=task.encode(m_tr), X_test=task.encode(m_te))


def shifted_labels(task: OdourTask, protocol: str, *, second: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Train and test labels after a task change (one of :data:`PROTOCOLS`).

    * ``reversal``: y' = −y (the same relevant odorant, reversed reward);
    * ``non_reversal``: y' = y·s with s = −1 for mixtures that contain odorant ``second``, +1 otherwise (half the
      training mixtures keep their label, an extradimensional shift);
    * ``new_target``: y' = +1 iff odorant ``second`` is in the mixture.

    ``second`` defaults to the odorant after the target.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    j = (task.target + 1) % task.n_odorants if second is None else _check_int("second", second, 0)
    if j >= task.n_odorants or j == task.target:
        raise ValueError(f"second must be an odorant index below {task.n_odorants} other than the target "
                         f"{task.target}, got {j}")
    out = []
    for m, y in ((task.mixtures_train, task.y_train), (task.mixtures_test, task.y_test)):
        s = np.where(m[:, j] > 0, 1.0, -1.0)
        out.append(-y if protocol == "reversal" else (y * -s if protocol == "non_reversal" else s))
    return out[0], out[1]
