"""The regret-loss (paper Sec. 5): unsupervised training of sequence models to be no-regret learners.

For a model ``θ`` that maps the loss history ``ℓ_1..ℓ_{t−1}`` to a policy, draw ``N`` loss sequences
``ℓ^{(j)}`` per sample and minimise

.. math::  L(θ, k, N) = E\\Big[ \\sum_j h(R_j)\\, f(R_j, k) \\big/ \\sum_j f(R_j, k) \\Big],
           \\qquad R_j = \\mathrm{Regret}_θ(ℓ^{(j)}_{1:T}),

with ``f(R, k) = exp(k R)`` (a softmax over the ``N`` sequences, which tends to their maximum as ``k → ∞``) and
``h(x) = max(0, x)²`` (or ``x²``). No optimal actions are needed.

Models:
- :func:`make_lsa`: single-layer linear self-attention with a constant query token,
  ``g(Z_t) = Σ_{i≤t} (Vℓ_i + v_c)·((Kℓ_i + k_c)ᵀ q)``; with ``w = Kᵀq`` and ``b = k_cᵀq``,
  ``g = Σ_i [bVℓ_i + v_c wᵀℓ_i + Vℓ_iℓ_iᵀw + b v_c]``. The paper proves that for ``N = 1``, ``h(x) = x²``,
  i.i.d. zero-mean isotropic losses and a ball-shaped policy set, a global optimum has ``w = 0``, ``v_c = 0`` and
  ``bV = −c I``: the model is FTRL with a quadratic regulariser (online gradient descent).
- :func:`make_transformer`: a small causal softmax transformer over the loss history.

Output heads: ``"ball"`` (the raw output, the theorem's unconstrained/ball policy with the unit-ball comparator
``min_{‖x‖≤1} ⟨L_T, x⟩ = −‖L_T‖``) and ``"simplex"`` (softmax of the output, the probability simplex with the
best-action comparator).

References: Park et al., ICLR 2025, Sec. 5.1 (Eq. of L(θ,k,N)), Thm. 5.x (single-layer linear
self-attention yields FTRL), Sec. 5.3 (experiments with trained transformers).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["make_lsa", "make_transformer", "RegretLossConfig", "RegretLossResult", "train_regret_loss",
           "regret_loss", "sequence_regret", "lsa_structure", "LSAStructure", "TrainedAgent", "sample_training_losses"]


def _torch():
    import torch

    return torch


def _build_classes():
    torch = _torch()
    nn = torch.nn

    class _LSA(nn.Module):
        """Single-layer linear self-attention with a constant query token (see the module docstring)."""

        def __init__(self, d: int, *, seed: int = 0, b_init: float = 1.0):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            self.d = d
            self.V = nn.Parameter(0.1 * torch.randn(d, d, generator=g, dtype=torch.float64))
            self.v_c = nn.Parameter(0.1 * torch.randn(d, generator=g, dtype=torch.float64))
            self.K = nn.Parameter(0.1 * torch.randn(d, d, generator=g, dtype=torch.float64))
            self.q = nn.Parameter(torch.zeros(d, dtype=torch.float64))
            self.k_c = nn.Parameter(torch.zeros(d, dtype=torch.float64))
            with torch.no_grad():  # b = k_cᵀq starts at b_init: b = 0 is the rank-1 trap of the note
                self.q[0] = 1.0
                self.k_c[0] = b_init

        def effective(self):
            w = self.K.T @ self.q
            b = self.k_c @ self.q
            return w, b

        def forward(self, losses):  # losses (B, T, d) -> outputs for rounds 1..T, each from ℓ_{<t}
            w, b = self.effective()
            val = losses @ self.V.T + self.v_c  # (B, T, d)
            att = losses @ w + b  # (B, T)
            contrib = torch.cumsum(val * att[..., None], dim=1)
            zeros = torch.zeros_like(contrib[:, :1])
            return torch.cat([zeros, contrib[:, :-1]], dim=1)

    class _Transformer(nn.Module):
        """A small causal softmax transformer: round ``t``'s output attends to ``ℓ_1..ℓ_{t−1}``."""

        def __init__(self, d: int, *, width: int = 32, layers: int = 2, heads: int = 2, max_T: int = 256,
                     seed: int = 0):
            super().__init__()
            torch.manual_seed(seed)
            self.d, self.max_T = d, max_T
            self.inp = nn.Linear(d, width, dtype=torch.float64)
            self.start = nn.Parameter(torch.zeros(width, dtype=torch.float64))
            self.pos = nn.Parameter(0.02 * torch.randn(max_T, width, dtype=torch.float64))
            layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True,
                                               dtype=torch.float64)
            self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.out = nn.Linear(width, d, dtype=torch.float64)

        def forward(self, losses):
            B, T, d = losses.shape
            if T > self.max_T:
                raise ValueError(f"T must be at most max_T = {self.max_T}, got {T}")
            x = torch.cat([self.start.expand(B, 1, -1), self.inp(losses[:, :-1])], dim=1) + self.pos[:T]
            mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64, device=losses.device),
                              diagonal=1)
            return self.out(self.body(x, mask=mask))

    return _LSA, _Transformer


_CLASSES: tuple | None = None


def _classes():
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _build_classes()
    return _CLASSES


def make_lsa(d: int, *, seed: int = 0, b_init: float = 1.0, device=None):
    """A single-layer linear self-attention model (a torch module) for ``d`` actions; ``b_init`` is the initial
    ``b = k_cᵀq`` (away from 0: at 0 training stalls in a rank-1 solution). The weights are drawn on the CPU (the
    same model for a seed on every device) and moved to ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``)."""
    from iclr25.utils.device import torch_device

    return _classes()[0](d, seed=seed, b_init=b_init).to(torch_device(device))


def make_transformer(d: int, *, device=None, **kwargs):
    """A small causal softmax transformer (a torch module) for ``d`` actions, on ``device`` (as :func:`make_lsa`)."""
    from iclr25.utils.device import torch_device

    return _classes()[1](d, **kwargs).to(torch_device(device))


def sequence_regret(losses, outputs, *, head: str):
    """Regret of the policies given by ``outputs`` on ``losses`` (both ``(B, T, d)`` torch tensors)."""
    torch = _torch()
    L = losses.sum(dim=1)
    if head == "ball":
        return (losses * outputs).sum(dim=(1, 2)) + torch.linalg.vector_norm(L, dim=1)
    if head == "simplex":
        pi = torch.softmax(outputs, dim=-1)
        return (losses * pi).sum(dim=(1, 2)) - L.min(dim=1).values
    raise ValueError(f"head must be 'ball' or 'simplex', got {head!r}")


def regret_loss(R, *, k: float = 0.0, h: str = "relu2"):
    """``Σ_j h(R_j) softmax(k R)_j`` averaged over the batch; ``R`` is ``(batch, N)``."""
    torch = _torch()
    if h == "square":
        hR = R ** 2
    elif h == "relu2":
        hR = torch.clamp(R, min=0) ** 2
    else:
        raise ValueError(f"h must be 'square' or 'relu2', got {h!r}")
    weights = torch.softmax(k * R, dim=1)
    return (hR * weights).sum(dim=1).mean()


@dataclasses.dataclass(frozen=True)
class RegretLossConfig:
    """Training set-up. ``distribution``: ``"gaussian"`` (ℓ ~ N(0, Σ), the theorem's zero-mean losses; Σ = I
    unless ``cov`` is given) or ``"uniform_box"`` (ℓ_t ~ U(μ ± ½) clipped to [0, 1], μ ~ U(0, 1)^d, the online
    families' box)."""

    d: int = 2
    T: int = 10
    model: str = "lsa"
    head: str = "ball"
    distribution: str = "gaussian"
    N: int = 1
    k: float = 0.0
    h: str = "square"
    steps: int = 1500
    batch: int = 1024
    lr: float = 0.01
    cov: tuple[tuple[float, ...], ...] | None = None

    def __post_init__(self):
        for name, lo in (("d", 2), ("T", 2), ("N", 1), ("steps", 1), ("batch", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if self.model not in ("lsa", "transformer"):
            raise ValueError(f"model must be 'lsa' or 'transformer', got {self.model!r}")
        if self.head not in ("ball", "simplex"):
            raise ValueError(f"head must be 'ball' or 'simplex', got {self.head!r}")
        if self.distribution not in ("gaussian", "uniform_box"):
            raise ValueError(f"distribution must be 'gaussian' or 'uniform_box', got {self.distribution!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
        if not (math.isfinite(self.k) and self.k >= 0):
            raise ValueError(f"k must be a finite number >= 0, got {self.k!r}")


def sample_training_losses(cfg: RegretLossConfig, n: int, generator, *, device=None):
    """``(n, T, d)`` loss sequences from the training distribution of ``cfg``, drawn on ``device`` (default: the
    generator's device, the CPU without one)."""
    torch = _torch()
    dev = device if device is not None else (generator.device if generator is not None else "cpu")
    kw = {"generator": generator, "dtype": torch.float64, "device": dev}
    shape = (n, cfg.T, cfg.d)
    if cfg.distribution == "gaussian":
        z = torch.randn(shape, **kw)
        if cfg.cov is not None:
            C = torch.linalg.cholesky(torch.tensor(cfg.cov, dtype=torch.float64)).to(dev)
            z = z @ C.T
        return z
    mu = torch.rand((n, 1, cfg.d), **kw)
    return torch.clamp(mu + torch.rand(shape, **kw) - 0.5, 0.0, 1.0)


@dataclasses.dataclass
class RegretLossResult:
    """A trained model, its config and the loss after every step."""

    model: object
    config: RegretLossConfig
    losses: np.ndarray
    seconds: float

    def agent(self, name: str = "regret-loss"):
        return TrainedAgent(self.model, head=self.config.head, name=name)


def train_regret_loss(cfg: RegretLossConfig | None = None, *, seed: int = 0, progress_desc: str | None = None,
                      device=None, **overrides) -> RegretLossResult:
    """Minimise the regret-loss ``L(θ, k, N)`` with Adam on ``device`` (``None``: ``$ICLR25_DEVICE``, else
    ``auto``, the GPU when torch sees one); returns the trained model (left on ``device``) and the loss curve.

    The training losses are drawn on the device from a generator seeded there (:func:`iclr25.utils.device.
    torch_generator`: on the CPU the same stream as before). The models compute in float64 on every device: they
    are tiny (the step is launch-bound on a GPU), and the theorem's structure check (``bV = −cI`` to a relative
    distance of a few 1e-2) should not carry float32 rounding.
    """
    import time

    from iclr25.utils.device import torch_device, torch_generator
    from iclr25.utils.progress import progress

    torch = _torch()
    cfg = dataclasses.replace(cfg or RegretLossConfig(), **overrides)
    dev = torch_device(device)
    if dev.type == "mps":
        raise ValueError("--device mps: the regret-loss models train in float64, which MPS lacks; use --device cpu "
                         "or cuda")
    model = (make_lsa(cfg.d, seed=seed, device=dev) if cfg.model == "lsa" else
             make_transformer(cfg.d, max_T=cfg.T, seed=seed, device=dev))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch_generator(dev, seed + 1)
    curve = np.empty(cfg.steps)
    t0 = time.perf_counter()
    for step in progress(range(cfg.steps), desc=progress_desc or f"regret-loss ({cfg.model})", total=cfg.steps):
        ell = sample_training_losses(cfg, cfg.batch * cfg.N, gen, device=dev)
        R = sequence_regret(ell, model(ell), head=cfg.head).reshape(cfg.batch, cfg.N)
        loss = regret_loss(R, k=cfg.k, h=cfg.h)
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve[step] = float(loss.detach())
    return RegretLossResult(model, cfg, curve, time.perf_counter() - t0)


@dataclasses.dataclass(frozen=True)
class LSAStructure:
    """The theorem's quantities of a trained :func:`make_lsa` model: ``A = bV`` (the main block),
    ``c`` (``A ≈ −c I``), the relative distance ``‖A + cI‖ / ‖A‖`` and the scale-free sizes of the extra
    terms, ``‖w‖/|b|`` (the cubic and ``v_c wᵀ`` terms against ``bV``) and ``‖v_c‖/‖V‖``."""

    A: np.ndarray
    c: float
    rel_distance: float
    w_over_b: float
    vc_over_V: float


def lsa_structure(model) -> LSAStructure:
    """Read the theorem's structure off a trained :func:`make_lsa` model."""
    torch = _torch()
    with torch.no_grad():
        w, b = model.effective()
        A = (b * model.V).cpu().numpy()
        c = -float(np.trace(A)) / A.shape[0]
        rel = float(np.linalg.norm(A + c * np.eye(A.shape[0])) / np.linalg.norm(A))
        return LSAStructure(A, c, rel, float(torch.linalg.vector_norm(w) / abs(b)),
                            float(torch.linalg.vector_norm(model.v_c) / torch.linalg.matrix_norm(model.V)))


@dataclasses.dataclass
class TrainedAgent:
    """A trained sequence model as a full-information online agent (softmax of its output for ``"simplex"``,
    the Euclidean projection onto the simplex for ``"ball"``)."""

    model: object
    head: str = "simplex"
    name: str = "regret-loss"
    feedback: str = "full"

    def reset(self, n_actions, horizon, n_seeds, rng):
        self.d = n_actions
        self.hist = np.zeros((n_seeds, 0, n_actions))

    def policy(self):
        from .agents import project_simplex

        torch = _torch()
        with torch.no_grad():  # the history goes to the model's device; the policy comes back to the CPU
            dev = next(self.model.parameters()).device
            x = torch.as_tensor(np.concatenate([self.hist, np.zeros((self.hist.shape[0], 1, self.d))], axis=1),
                                device=dev)
            out = self.model(x)[:, -1]
            if self.head == "simplex":
                return torch.softmax(out, dim=-1).cpu().numpy()
            return project_simplex(out.cpu().numpy())

    def update(self, loss, actions=None):
        self.hist = np.concatenate([self.hist, np.asarray(loss, dtype=np.float64)[:, None]], axis=1)
