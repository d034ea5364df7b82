"""The one-hidden-layer network ("piriform" hidden layer) and its full-batch gradient descent on the logistic loss.

    φ(x) = σ(W x),   f(x) = α · aᵀφ(x) / √H,
    L(θ) = (1/α²) · (1/n) Σ_i log(1 + exp(−y_i f(x_i)))  +  (λ/2)(‖W‖² + ‖a‖²),

with σ = ReLU (default) or tanh, W ∈ R^{H×D} (entries N(0, 1/D)), a ∈ R^H (entries N(0, 1)). α is the
Chizat–Bach laziness scale: α → ∞ is the lazy (kernel) regime, small α the rich, feature-learning regime.
Training is full-batch GD (``batch_size=None``) or SGD on minibatches; checkpoints are log-spaced in epochs.
The gradients are written out by hand in numpy and checked against finite differences and torch autograd.

Where it trains (``device=``, :func:`accelerator`): on the CPU the numpy loop below (the package's reference; its
numbers are the ones the claims were decided on); on an accelerator (``cuda``) the same full-batch GD (or SGD on
the same minibatches) with the same hand-written gradients in torch, in float64 on the device: hidden progress
lives in gradients many orders of magnitude below the loss once training accuracy is 1 (the logistic loss decays
like 1/t), which float32 would round away. The checkpoints' measures (SVM margin, FLD, alignment) run in
numpy/scikit-learn on the CPU; the weights come back there at each checkpoint.

References: Kumar et al., ICLR 2025, Sec. 4 ("a simple synthetic model"); Chizat, Oyallon & Bach, NeurIPS 2019
(laziness scale); Soudry et al., JMLR 2018 and Lyu & Li, ICLR 2020 (logistic GD → max margin).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .geometry import example_flips, fisher_discriminant, kernel_alignment, normalised_margin

__all__ = ["MLPParams", "TrainConfig", "TrainingRun", "Checkpoint", "init_mlp", "hidden", "forward",
           "loss_and_grad", "train_mlp", "log_epochs", "LinearGDRun", "linear_logistic_gd", "to_torch",
           "logistic_loss", "accelerator", "device_name"]


@dataclasses.dataclass(frozen=True)
class MLPParams:
    """Weights of f(x) = α aᵀσ(Wx)/√H: ``W`` (H, D), ``a`` (H,), ``alpha``, ``activation``."""

    W: np.ndarray
    a: np.ndarray
    alpha: float = 1.0
    activation: str = "relu"

    @property
    def width(self) -> int:
        return int(self.W.shape[0])

    def norm(self) -> float:
        return float(np.sqrt(np.sum(self.W ** 2) + np.sum(self.a ** 2)))


def init_mlp(input_dim: int, width: int = 128, *, alpha: float = 1.0, activation: str = "relu",
             seed: int = 0) -> MLPParams:
    """Standard initialisation: W_ij ~ N(0, 1/D), a_j ~ N(0, 1)."""
    if activation not in ("relu", "tanh"):
        raise ValueError(f"activation must be 'relu' or 'tanh', got {activation!r}")
    for name, v in (("input_dim", input_dim), ("width", width)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    rng = np.random.default_rng(seed)
    return MLPParams(rng.standard_normal((width, input_dim)) / math.sqrt(input_dim), rng.standard_normal(width),
                     float(alpha), activation)


def _act(u: np.ndarray, activation: str) -> tuple[np.ndarray, np.ndarray]:
    if activation == "relu":
        return np.maximum(u, 0.0), (u > 0).astype(u.dtype)
    t = np.tanh(u)
    return t, 1.0 - t * t


def hidden(params: MLPParams, X: np.ndarray) -> np.ndarray:
    """Hidden-layer activations φ(x) = σ(Wx), shape (n, H)."""
    return _act(np.asarray(X, dtype=np.float64) @ params.W.T, params.activation)[0]


def forward(params: MLPParams, X: np.ndarray) -> np.ndarray:
    """Network outputs f(x) = α aᵀφ(x)/√H, shape (n,)."""
    return params.alpha * hidden(params, X) @ params.a / math.sqrt(params.width)


def logistic_loss(margins: np.ndarray) -> np.ndarray:
    """log(1 + exp(−m)), computed stably."""
    return np.logaddexp(0.0, -margins)


def loss_and_grad(params: MLPParams, X: np.ndarray, y: np.ndarray, *, weight_decay: float = 0.0
                  ) -> tuple[float, np.ndarray, np.ndarray]:
    """L(θ) and (∂L/∂W, ∂L/∂a) (see the module docstring).

    With m_i = y_i f(x_i), g_i = ∂L/∂f_i = −y_i s(−m_i) / (α² n) (s the logistic sigmoid):
    ∂L/∂a = (α/√H) Σ_i g_i φ_i + λa,  ∂L/∂W = (α/√H) Σ_i g_i (a ∘ σ'(Wx_i)) x_iᵀ + λW.
    """
    u = X @ params.W.T
    phi, dphi = _act(u, params.activation)
    c = params.alpha / math.sqrt(params.width)
    f = c * phi @ params.a
    m = y * f
    n = len(y)
    alpha2 = params.alpha ** 2
    loss = float(np.mean(logistic_loss(m)) / alpha2)
    g = -y * 0.5 * (1.0 - np.tanh(0.5 * m)) / (alpha2 * n)   # s(−m) = (1 − tanh(m/2))/2
    ga = c * (phi.T @ g)
    gW = c * ((g[:, None] * dphi) * params.a[None, :]).T @ X
    if weight_decay:
        loss += 0.5 * weight_decay * (float(np.sum(params.W ** 2)) + float(np.sum(params.a ** 2)))
        ga = ga + weight_decay * params.a
        gW = gW + weight_decay * params.W
    return loss, gW, ga


def accelerator(device: Any = None) -> Any:
    """The torch device the GD runs on for ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``, the GPU when
    torch sees one; :func:`iclr25.utils.device.torch_device`), or ``None`` for the CPU, where the numpy loop runs.
    ``mps`` is refused in one line: the GD needs float64 (module docstring), which MPS lacks. Imports torch only
    when ``device`` is not ``"cpu"``."""
    if isinstance(device, str) and device.strip().lower() == "cpu":
        return None
    from iclr25.utils.device import torch_device  # noqa: PLC0415

    dev = torch_device(device)
    if dev.type == "mps":
        raise ValueError("--device mps: the network trains in float64 (late-time gradients are far below the "
                         "loss), which MPS lacks; use --device cpu or cuda")
    return None if dev.type == "cpu" else dev


def device_name(device: Any = None) -> str:
    """Where :func:`train_mlp` runs for ``device``, for run records: ``cpu`` (numpy) or the accelerator's name."""
    from iclr25.utils.device import describe_device  # noqa: PLC0415

    dev = accelerator(device)
    return "cpu" if dev is None else describe_device(dev)


def _t(x: np.ndarray, dev: Any) -> Any:
    """A float64 copy of ``x`` on ``dev`` (never a view of the caller's array: the GD updates it in place)."""
    import torch  # noqa: PLC0415

    return torch.tensor(np.asarray(x, dtype=np.float64), dtype=torch.float64, device=dev)


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy().copy()


def _grad_torch(W: Any, a: Any, X: Any, y: Any, alpha: float, activation: str, weight_decay: float
                ) -> tuple[Any, Any]:
    """:func:`loss_and_grad`'s gradients in torch, on the device of its tensors (the same formulas)."""
    import torch  # noqa: PLC0415

    u = X @ W.T
    if activation == "relu":
        phi, dphi = torch.clamp_min(u, 0.0), (u > 0).to(u.dtype)
    else:
        phi = torch.tanh(u)
        dphi = 1.0 - phi * phi
    c = alpha / math.sqrt(W.shape[0])
    m = y * (c * phi @ a)
    g = -y * 0.5 * (1.0 - torch.tanh(0.5 * m)) / (alpha ** 2 * y.shape[0])
    ga = c * (phi.T @ g)
    gW = c * ((g[:, None] * dphi) * a[None, :]).T @ X
    if weight_decay:
        ga = ga + weight_decay * a
        gW = gW + weight_decay * W
    return gW, ga


def _accuracy_torch(W: Any, a: Any, X: Any, y: Any, alpha: float, activation: str) -> float:
    import torch  # noqa: PLC0415

    u = X @ W.T
    phi = torch.clamp_min(u, 0.0) if activation == "relu" else torch.tanh(u)
    f = alpha * phi @ a / math.sqrt(W.shape[0])
    return float((y * f > 0).to(torch.float64).mean())


def log_epochs(n_epochs: int, n_checkpoints: int = 40) -> np.ndarray:
    """0 and about ``n_checkpoints`` log-spaced epochs in [1, n_epochs], unique integers, ending at n_epochs."""
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, (int, np.integer)) or n_epochs < 1:
        raise ValueError(f"n_epochs must be an integer >= 1, got {n_epochs!r}")
    if isinstance(n_checkpoints, bool) or not isinstance(n_checkpoints, (int, np.integer)) or n_checkpoints < 2:
        raise ValueError(f"n_checkpoints must be an integer >= 2, got {n_checkpoints!r}")
    e = np.unique(np.round(np.logspace(0, math.log10(n_epochs), n_checkpoints)).astype(int))
    return np.unique(np.concatenate([[0], e, [n_epochs]]))


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of :func:`train_mlp` (defaults: the package's rich-regime setting)."""

    width: int = 128
    activation: str = "relu"
    alpha: float = 1.0
    lr: float = 1.0
    n_epochs: int = 2000
    weight_decay: float = 0.0
    batch_size: int | None = None
    n_checkpoints: int = 40

    def __post_init__(self) -> None:
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
        if not (isinstance(self.weight_decay, (int, float)) and math.isfinite(self.weight_decay)
                and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be a finite number >= 0, got {self.weight_decay!r}")
        if self.batch_size is not None and (isinstance(self.batch_size, bool) or
                                            not isinstance(self.batch_size, int) or self.batch_size < 1):
            raise ValueError(f"batch_size must be None (full batch) or an integer >= 1, got {self.batch_size!r}")
        log_epochs(self.n_epochs, self.n_checkpoints)
        if self.activation not in ("relu", "tanh"):
            raise ValueError(f"activation must be 'relu' or 'tanh', got {self.activation!r}")


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """The network at one epoch, and what the monitor measured there."""

    epoch: int
    params: MLPParams
    train_loss: float
    train_acc: float
    test_acc: float
    margin: float            # normalised hidden-layer SVM margin on the training set (nan if not separable)
    fld: float               # Fisher discriminant of the training set's hidden features
    alignment: float         # kernel–task alignment of the training set's hidden kernel
    output_margin: float     # min_i y_i f(x_i) / ‖θ‖² (the normalised margin of the 2-homogeneous ReLU network)
    test_correct: np.ndarray


@dataclasses.dataclass(frozen=True)
class TrainingRun:
    """Checkpoints of one training run (log-spaced epochs) and the accessors of its curves."""

    checkpoints: tuple[Checkpoint, ...]
    config: TrainConfig

    def curve(self, name: str) -> np.ndarray:
        return np.array([getattr(c, name) for c in self.checkpoints], dtype=np.float64)

    @property
    def epochs(self) -> np.ndarray:
        return np.array([c.epoch for c in self.checkpoints])

    @property
    def E0(self) -> int | None:
        """First checkpointed epoch with training accuracy 1 (None if never)."""
        acc = self.curve("train_acc")
        hit = np.flatnonzero(acc >= 1.0)
        return int(self.epochs[hit[0]]) if len(hit) else None

    def at(self, epoch: int) -> Checkpoint:
        """The checkpoint at ``epoch`` or the first one after it."""
        i = int(np.searchsorted(self.epochs, epoch))
        if i >= len(self.checkpoints):
            raise ValueError(f"epoch must be at most {int(self.epochs[-1])}, got {epoch}")
        return self.checkpoints[i]

    def flips(self, start_epoch: int):
        """Held-out examples wrong at ``start_epoch`` that become right and stay right (:func:`example_flips`)."""
        i = int(np.searchsorted(self.epochs, start_epoch))
        C = np.stack([c.test_correct for c in self.checkpoints])
        return example_flips(C, start=min(i, len(self.checkpoints) - 2))


def _measure(epoch: int, p: MLPParams, X, y, Xt, yt, wd: float, y_acc=None) -> Checkpoint:
    loss, _, _ = loss_and_grad(p, X, y, weight_decay=wd)
    H = hidden(p, X)
    f = forward(p, X)
    ft = forward(p, Xt)
    yy = y if y_acc is None else y_acc
    return Checkpoint(epoch=int(epoch), params=p, train_loss=loss, train_acc=float(np.mean(yy * f > 0)),
                      test_acc=float(np.mean(yt * ft > 0)),
                      margin=normalised_margin(H, yy, require_separable=False),
                      fld=fisher_discriminant(H, yy), alignment=kernel_alignment(H, yy),
                      output_margin=float(np.min(yy * f) / max(p.norm() ** 2, 1e-300)),
                      test_correct=(yt * ft > 0))


def train_mlp(X: object, y: object, X_test: object, y_test: object, config: TrainConfig | None = None, *,
              init: MLPParams | None = None, epochs: Sequence[int] | None = None, seed: int = 0,
              callback: Callable[[int, MLPParams], None] | None = None, progress: bool = False,
              measure: bool = True, device: Any = None) -> TrainingRun:
    """Train f by GD (or SGD with ``config.batch_size``) on the logistic loss; measure at log-spaced epochs.

    ``init`` continues from given weights (its α/activation are used); ``epochs`` overrides the checkpoint
    epochs; ``callback(epoch, params)`` is called at every checkpoint (e.g. a :class:`HiddenProgressMonitor`).
    ``measure=False`` only stores the weights (the metrics are ``nan``). ``device``: where the GD runs (module
    docstring: numpy on the CPU, torch float64 on an accelerator; ``None``: ``$ICLR25_DEVICE`` or ``auto``); the
    checkpoints hold numpy weights on the CPU either way.
    """
    cfg = config or TrainConfig()
    Xa = np.asarray(X, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    Xt = np.asarray(X_test, dtype=np.float64)
    yt = np.asarray(y_test, dtype=np.float64)
    if Xa.ndim != 2 or ya.shape != (Xa.shape[0],):
        raise ValueError(f"X must be (n, D) and y (n,); got {Xa.shape} and {ya.shape}")
    if Xt.ndim != 2 or Xt.shape[1] != Xa.shape[1] or yt.shape != (Xt.shape[0],):
        raise ValueError(f"X_test must be (m, {Xa.shape[1]}) and y_test (m,); got {Xt.shape} and {yt.shape}")
    for name, arr in (("X", Xa), ("y", ya), ("X_test", Xt), ("y_test", yt)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
    for name, arr in (("y", ya), ("y_test", yt)):
        if not np.all(np.isin(arr, (-1.0, 1.0))):
            raise ValueError(f"{name} must hold labels -1 and +1 only")
    p = init or init_mlp(Xa.shape[1], cfg.width, alpha=cfg.alpha, activation=cfg.activation, seed=seed)
    if p.W.shape[1] != Xa.shape[1]:
        raise ValueError(f"init has input dimension {p.W.shape[1]}, X has {Xa.shape[1]}")
    ep = log_epochs(cfg.n_epochs, cfg.n_checkpoints) if epochs is None else np.unique(np.asarray(epochs, int))
    if ep.size == 0 or ep[0] < 0:
        raise ValueError("epochs must be non-negative integers")
    rng = np.random.default_rng(seed + 7919)
    dev = accelerator(device)
    if dev is not None:  # the same loop in torch on the device (float64); weights back on the CPU per checkpoint
        Xd, yd = _t(Xa, dev), _t(ya, dev)
        Wd, ad = _t(p.W, dev), _t(p.a, dev)
    W, a = p.W.copy(), p.a.copy()
    out = []
    n = len(ya)
    from iclr25.utils.progress import progress as _progress

    bar = _progress(total=int(ep[-1]), desc="train") if progress else None
    e = 0
    for target in ep:
        while e < target and dev is not None:
            if cfg.batch_size is None or cfg.batch_size >= n:
                gW, ga = _grad_torch(Wd, ad, Xd, yd, p.alpha, p.activation, cfg.weight_decay)
                Wd -= cfg.lr * gW
                ad -= cfg.lr * ga
            else:
                perm = rng.permutation(n)  # drawn on the CPU: the same minibatches on every device
                for s in range(0, n, cfg.batch_size):
                    import torch  # noqa: PLC0415

                    b = torch.as_tensor(perm[s:s + cfg.batch_size], device=dev)
                    gW, ga = _grad_torch(Wd, ad, Xd[b], yd[b], p.alpha, p.activation, cfg.weight_decay)
                    Wd -= cfg.lr * gW
                    ad -= cfg.lr * ga
            e += 1
            if bar is not None:
                bar.update(1)
        if dev is not None:
            import torch  # noqa: PLC0415

            if bool((~torch.isfinite(Wd)).any()) or bool((~torch.isfinite(ad)).any()):
                raise ValueError(f"training diverged by epoch {e} (lr = {cfg.lr} too large?)")
            W, a = _np(Wd), _np(ad)
        while e < target:
            if cfg.batch_size is None or cfg.batch_size >= n:
                _, gW, ga = loss_and_grad(dataclasses.replace(p, W=W, a=a), Xa, ya, weight_decay=cfg.weight_decay)
                W -= cfg.lr * gW
                a -= cfg.lr * ga
            else:
                perm = rng.permutation(n)
                for s in range(0, n, cfg.batch_size):
                    b = perm[s:s + cfg.batch_size]
                    _, gW, ga = loss_and_grad(dataclasses.replace(p, W=W, a=a), Xa[b], ya[b],
                                              weight_decay=cfg.weight_decay)
                    W -= cfg.lr * gW
                    a -= cfg.lr * ga
            e += 1
            if bar is not None:
                bar.update(1)
        if dev is None and not (np.all(np.isfinite(W)) and np.all(np.isfinite(a))):  # (the device path checked there)
            raise ValueError(f"training diverged by epoch {e} (lr = {cfg.lr} too large?)")
        q = dataclasses.replace(p, W=W.copy(), a=a.copy())
        if measure:
            out.append(_measure(int(target), q, Xa, ya, Xt, yt, cfg.weight_decay))
        else:
            nan = float("nan")
            out.append(Checkpoint(int(target), q, nan, nan, nan, nan, nan, nan, nan, np.zeros(0, dtype=bool)))
        if callback is not None:
            callback(int(target), q)
    if bar is not None:
        bar.close()
    return TrainingRun(tuple(out), cfg)


def to_torch(params: MLPParams, *, device: Any = "cpu"):
    """The same network as a ``torch.nn.Sequential`` (Linear(D, H, no bias), activation, Linear(H, 1, no bias)
    scaled by α/√H), float64, on ``device`` (default the CPU; ``None``: ``$ICLR25_DEVICE`` or ``auto``). Its
    module ``[1]`` (the activation) outputs the hidden layer φ(x)."""
    import torch

    from iclr25.utils.device import torch_device  # noqa: PLC0415

    dev = torch_device(device)
    H, D = params.W.shape
    first = torch.nn.Linear(D, H, bias=False, dtype=torch.float64, device=dev)
    last = torch.nn.Linear(H, 1, bias=False, dtype=torch.float64, device=dev)
    with torch.no_grad():
        first.weight.copy_(torch.as_tensor(params.W, device=dev))
        last.weight.copy_(torch.as_tensor(params.a * params.alpha / math.sqrt(H), device=dev)[None, :])
    act = torch.nn.ReLU() if params.activation == "relu" else torch.nn.Tanh()
    return torch.nn.Sequential(first, act, last, torch.nn.Flatten(0))


# ------------------------------------------------------------------------------- linear logistic regression
@dataclasses.dataclass(frozen=True)
class LinearGDRun:
    """GD on the linear logistic loss: ``steps`` (checkpoints), ``w`` (n_checkpoints, d), ``loss``."""

    steps: np.ndarray
    w: np.ndarray
    loss: np.ndarray

    def directions(self) -> np.ndarray:
        nrm = np.linalg.norm(self.w, axis=1, keepdims=True)
        return np.divide(self.w, nrm, out=np.full_like(self.w, np.nan), where=nrm > 0)


def linear_logistic_gd(X: object, y: object, *, lr: float = 1.0, n_steps: int = 100_000,
                       n_checkpoints: int = 30) -> LinearGDRun:
    """w_{t+1} = w_t − η ∇L(w_t),  L(w) = (1/n) Σ log(1 + exp(−y_i wᵀx_i)),  w_0 = 0 (no bias, as in Soudry et al.).

    On separable data w_t/‖w_t‖ → the L2 max-margin direction (at rate 1/log t) and L(w_t) ~ 1/t."""
    Xa = np.asarray(X, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    if Xa.ndim != 2 or ya.shape != (Xa.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,); got {Xa.shape} and {ya.shape}")
    if not (isinstance(lr, (int, float)) and lr > 0):
        raise ValueError(f"lr must be a number > 0, got {lr!r}")
    steps = log_epochs(n_steps, n_checkpoints)
    A = ya[:, None] * Xa
    w = np.zeros(Xa.shape[1])
    ws, losses = [], []
    t = 0
    n = len(ya)
    for target in steps:
        while t < target:
            m = A @ w
            w -= lr * (-(0.5 * (1.0 - np.tanh(0.5 * m))) @ A / n)
            t += 1
        ws.append(w.copy())
        losses.append(float(np.mean(logistic_loss(A @ w))))
    return LinearGDRun(steps, np.array(ws), np.array(losses))
