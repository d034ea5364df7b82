"""Training and sampling of DMT: the Kabsch-aligned noise loss, the ancestral sampler from the x0 prediction and
the fewer-step deterministic (DDIM) sampler, on batches of padded molecules.

Devices (issue 59): :func:`make_dmt`, :func:`train_dmt`, :func:`sample_conformers` and :func:`validation_rmsd`
take ``device=`` (``None``: ``$ICLR25_DEVICE``, else ``auto``, the accelerator when torch sees one). The model is
moved there (in place), each batch is copied there once, and every draw (times, noise, rotations) is made there
from a generator seeded on that device (:func:`iclr25.utils.device.torch_generator`); conformers and losses come
back to the CPU. On the CPU the numbers are those of 0.7, bit for bit. Float32 throughout (the Kabsch SVD in
float64, :mod:`.dmt`).

References: NExT-Mol (Liu et al., ICLR 2025), Sec. 3.2 (DMT training objective and sampling).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch

from iclr25.utils.device import torch_device, torch_generator
from iclr25.utils.progress import progress

from .chem import ATOM_FEATURE_DIM, PAIR_FEATURE_DIM, Molecule, atom_features, pair_features
from .conformers import Ensemble
from .dmt import DMT, CosineVPSchedule, DMTConfig, kabsch_align, masked_center, random_rotations
from .lm import _lr_lambda
from .optim import AdamW, step_callback

__all__ = ["Graph", "graphs_of", "Batch", "collate", "noise_target", "denoising_loss", "TrainResult", "train_dmt",
           "sample_conformers", "validation_rmsd", "pos_std_of", "make_dmt", "SAMPLERS"]

SAMPLERS = ("ancestral", "ddim")


@dataclasses.dataclass(frozen=True)
class Graph:
    """Model inputs of one molecule, and its reference conformers (``(K, N, 3)`` Angstrom, may be empty)."""

    atom_feats: np.ndarray
    pair_feats: np.ndarray
    coords: np.ndarray
    lm_feats: np.ndarray | None = None

    @property
    def n_atoms(self) -> int:
        return int(self.atom_feats.shape[0])


def graphs_of(items: Sequence[Ensemble | Molecule]) -> list[Graph]:
    """:class:`Graph` of each ensemble (with its conformers) or molecule (without)."""
    out = []
    for it in items:
        mol = it.molecule if isinstance(it, Ensemble) else it
        coords = it.coords if isinstance(it, Ensemble) else np.zeros((0, mol.n_atoms, 3))
        out.append(Graph(atom_features(mol.mol), pair_features(mol.mol), np.asarray(coords, np.float32)))
    return out


@dataclasses.dataclass
class Batch:
    """Padded tensors of a batch of molecules."""

    atom_feats: torch.Tensor   # (B, N, Fa)
    pair_feats: torch.Tensor   # (B, N, N, Fp)
    mask: torch.Tensor         # (B, N) bool
    lm_feats: torch.Tensor | None = None


def collate(graphs: Sequence[Graph], device=None) -> Batch:
    """Pad ``graphs`` into one :class:`Batch` (built on the CPU, then copied to ``device`` when given)."""
    n = max(g.n_atoms for g in graphs)
    B = len(graphs)
    a = torch.zeros(B, n, ATOM_FEATURE_DIM)
    p = torch.zeros(B, n, n, PAIR_FEATURE_DIM)
    m = torch.zeros(B, n, dtype=torch.bool)
    lm = None
    if graphs[0].lm_feats is not None:
        lm = torch.zeros(B, n, graphs[0].lm_feats.shape[1])
    for i, g in enumerate(graphs):
        k = g.n_atoms
        a[i, :k] = torch.from_numpy(g.atom_feats)
        p[i, :k, :k] = torch.from_numpy(g.pair_feats)
        m[i, :k] = True
        if lm is not None:
            lm[i, :k] = torch.as_tensor(g.lm_feats)
    if device is not None:
        a, p, m = a.to(device), p.to(device), m.to(device)
        lm = None if lm is None else lm.to(device)
    return Batch(a, p, m, lm)


def pos_std_of(ensembles: Sequence[Ensemble]) -> float:
    """Coordinate scale: the standard deviation of centred reference coordinates (the paper uses 2.4777 A on
    GEOM-DRUGS with hydrogens)."""
    xs = [c - c.mean(1, keepdims=True) for e in ensembles for c in [e.coords]]
    return float(np.sqrt(np.mean(np.concatenate([x.reshape(-1, 3) for x in xs]) ** 2)))


def make_dmt(*, hidden: int = 128, pair_hidden: int = 32, n_blocks: int = 4, n_heads: int = 8,
             pos_std: float = 1.5, seed: int = 0, device=None, **kw) -> DMT:
    """A DMT for this package's features (default: DMT-mini), initialised with ``seed`` (on the CPU, so the same
    weights everywhere) and moved to ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``)."""
    dev = torch_device(device)
    torch.manual_seed(seed)
    return DMT(DMTConfig(ATOM_FEATURE_DIM, PAIR_FEATURE_DIM, hidden, pair_hidden, n_blocks, n_heads,
                         pos_std=pos_std, **kw)).to(dev)


def noise_target(x0: torch.Tensor, x_t: torch.Tensor, alpha: torch.Tensor, sigma: torch.Tensor, mask: torch.Tensor,
                 eps: torch.Tensor, *, aligned: bool = True) -> torch.Tensor:
    """The regression target of ``eps_hat``: ``eps`` itself, or with ``aligned`` the noise that remains after
    the best rotation of the clean conformer onto the noisy one,
    ``eps* = (x_t - alpha_t R* x0) / sigma_t`` with ``R* = argmin_R |x_t - alpha_t R x0|`` (Kabsch).
    """
    if not aligned:
        return eps
    with torch.no_grad():
        x0r = kabsch_align(x0, x_t, mask)
    return (x_t - alpha[:, None, None] * x0r) / sigma[:, None, None] * mask[..., None]


def denoising_loss(model: DMT, batch: Batch, x0: torch.Tensor, schedule: CosineVPSchedule, *, aligned: bool = True,
                   generator: torch.Generator | None = None, t: torch.Tensor | None = None) -> torch.Tensor:
    """``L = mean_mol mean_atoms mean_xyz (eps_hat(x_t, t) - eps*)^2`` at stratified ``t`` (NExT-Mol Eq. 3 with the
    alignment of Sec. 3.2). ``x0`` is centred, in model units; the times and the noise are drawn on its device
    (where ``generator`` must be)."""
    B = x0.shape[0]
    if t is None:
        t = schedule.stratified_times(B, generator, device=x0.device)
    alpha, sigma = schedule.alpha(t), schedule.sigma(t)
    eps = torch.randn(x0.shape, generator=generator, device=x0.device) * batch.mask[..., None]
    x_t = alpha[:, None, None] * x0 + sigma[:, None, None] * eps
    target = noise_target(x0, x_t, alpha, sigma, batch.mask, eps, aligned=aligned)
    pred = model(x_t, t, batch.atom_feats, batch.pair_feats, batch.mask, batch.lm_feats)
    m = batch.mask[..., None].float()
    per_mol = ((pred - target) ** 2 * m).sum((1, 2)) / (3 * m.sum((1, 2)))
    return per_mol.mean()


def _draw_x0(graphs: Sequence[Graph], batch: Batch, pos_std: float, rng: np.random.Generator,
             generator: torch.Generator | None) -> torch.Tensor:
    # the reference conformers are picked (numpy rng) and padded on the CPU, then copied to the batch's device,
    # where they are centred and rotated
    B, n = batch.mask.shape
    x0 = torch.zeros(B, n, 3)
    for i, g in enumerate(graphs):
        x0[i, :g.n_atoms] = torch.from_numpy(g.coords[rng.integers(len(g.coords))]) / pos_std
    x0 = masked_center(x0.to(batch.mask.device), batch.mask)
    return x0 @ random_rotations(B, generator, device=batch.mask.device).transpose(1, 2)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """Loss curve and wall time of :func:`train_dmt`."""

    steps: int
    losses: tuple[float, ...]
    seconds: float
    aligned: bool

    @property
    def final_loss(self) -> float:
        return float(np.mean(self.losses[-max(1, len(self.losses) // 10):]))


def train_dmt(model: DMT, graphs: Sequence[Graph], *, steps: int = 1000, batch_size: int = 32, lr: float = 5e-4,
              weight_decay: float = 0.05, warmup: int = 100, aligned: bool = True, seed: int = 0,
              parameters: Sequence[torch.nn.Parameter] | None = None,
              lm_features: Callable[[Sequence[int]], list[np.ndarray]] | None = None, desc: str = "DMT",
              callback: Callable[[int], None] | None = None, callback_steps: Sequence[int] = (),
              stop_after: int | None = None, device=None) -> TrainResult:
    """Train ``model`` on reference conformers (random one per molecule per step, random rotation, centred) with
    the (aligned) noise loss; AdamW, linear warm-up, cosine decay to 10%.

    ``parameters`` restricts what is trained (the transfer's stage 2); ``lm_features(indices)`` returns the
    per-atom LM features of those training molecules (recomputed each step so that the projector trains).
    ``callback(step)`` runs (model in eval mode) after each step listed in ``callback_steps`` (ladders).
    ``stop_after`` stops after that many steps of the ``steps``-long schedule (an ablation that must match a
    ladder rung of a longer run: same learning rates, same batches, same noise draws).
    ``device``: where to train (``None``: ``$ICLR25_DEVICE`` or ``auto``); the model is moved there, and
    ``lm_features`` must give features there (:class:`~iclr25.next_mol.transfer.LMFeaturizer` with the same
    ``device``).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    graphs = list(graphs)
    if not graphs or any(len(g.coords) == 0 for g in graphs):
        raise ValueError("graphs must be a non-empty list of molecules that all have reference conformers")
    schedule = CosineVPSchedule()
    dev = torch_device(device)
    model.to(dev)
    g = torch_generator(dev, seed)  # on the CPU: torch.Generator().manual_seed(seed), 0.7's stream
    rng = np.random.default_rng(seed)
    params = list(parameters) if parameters is not None else list(model.parameters())
    # torch.optim.AdamW + LambdaLR, step for step, without importing torch._dynamo (iclr25.next_mol.optim)
    opt = AdamW(params, lr=lr, weight_decay=weight_decay, lr_lambda=_lr_lambda(min(warmup, steps), steps, 0.1))
    if stop_after is not None and (isinstance(stop_after, bool) or not isinstance(stop_after, int)
                                   or not 1 <= stop_after <= steps):
        raise ValueError(f"stop_after must be an integer in [1, steps={steps}], got {stop_after!r}")
    last = steps if stop_after is None else stop_after
    model.train()
    losses = []
    t0 = time.perf_counter()
    marks = set(callback_steps)
    for step in progress(range(1, last + 1), desc=desc, total=last):
        idx = rng.integers(len(graphs), size=batch_size)
        sel = [graphs[i] for i in idx]
        batch = collate(sel, dev)
        if lm_features is not None:
            feats = lm_features(idx.tolist())
            lm = torch.zeros(*batch.mask.shape, feats[0].shape[-1], device=dev)
            for i, f in enumerate(feats):
                lm[i, :f.shape[0]] = f
            batch.lm_feats = lm
        x0 = _draw_x0(sel, batch, model.config.pos_std, rng, g)
        loss = denoising_loss(model, batch, x0, schedule, aligned=aligned, generator=g)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(loss.detach().item())
        step_callback(model, callback, step, marks)
    model.eval()
    return TrainResult(last, tuple(losses), time.perf_counter() - t0, aligned)


@torch.no_grad()
def _x0_hat(model: DMT, x: torch.Tensor, t: float, batch: Batch, schedule: CosineVPSchedule
            ) -> tuple[torch.Tensor, torch.Tensor]:
    tt = torch.full((x.shape[0],), t, device=x.device)
    eps = model(x, tt, batch.atom_feats, batch.pair_feats, batch.mask, batch.lm_feats)
    a, s = schedule.alpha(tt)[:, None, None], schedule.sigma(tt)[:, None, None]
    return (x - s * eps) / a, eps


def _size_batches(jobs: list[tuple[int, int]], graphs: Sequence[Graph], batch_size: int,
                  max_waste: float = 0.2) -> list[list[tuple[int, int]]]:
    """Split size-sorted jobs into batches of at most ``batch_size`` whose padded pair work
    ``len * n_max^2`` exceeds the real work ``sum n_i^2`` by at most ``max_waste`` (the pair stack is O(N^2))."""
    batches: list[list[tuple[int, int]]] = []
    cur: list[tuple[int, int]] = []
    real = 0
    for job in jobs:
        n2 = graphs[job[0]].n_atoms ** 2
        if cur and (len(cur) == batch_size or (len(cur) + 1) * n2 > (1 + max_waste) * (real + n2)):
            batches.append(cur)
            cur, real = [], 0
        cur.append(job)
        real += n2
    if cur:
        batches.append(cur)
    return batches


@torch.no_grad()
def sample_conformers(model: DMT, graphs: Sequence[Graph], k: int, *, steps: int = 100, sampler: str = "ancestral",
                      batch_size: int = 64, seed: int = 0, t_end: float = 1e-3, device=None) -> list[np.ndarray]:
    """``k`` conformers (Angstrom, ``(k, n_atoms, 3)``, numpy on the CPU) of each molecule, sampled on ``device``
    (``None``: ``$ICLR25_DEVICE`` or ``auto``; the model is moved there).

    ``ancestral``: ``t`` linear from ``T`` to ``t_end`` in ``steps``; from ``x0_hat = (x_t - sigma_t eps_hat)/alpha_t``,
    ``mu = (alpha_{t|s} sigma_s^2 / sigma_t^2) x_t + (alpha_s sigma_{t|s}^2 / sigma_t^2) x0_hat`` is centred and
    ``x_s = mu + (sigma_{t|s} sigma_s / sigma_t) z``; the output is the last ``mu``.
    ``ddim``: the deterministic update ``x_s = alpha_s x0_hat + sigma_s eps_hat`` (fewer steps).
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    for name, v in (("k", k), ("steps", steps), ("batch_size", batch_size)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    schedule = CosineVPSchedule()
    dev = torch_device(device)
    model.to(dev)
    gen = torch_generator(dev, seed)
    model.eval()
    jobs = [(i, j) for i in range(len(graphs)) for j in range(k)]
    jobs.sort(key=lambda ij: graphs[ij[0]].n_atoms)  # similar sizes share a batch: less padding
    out = [np.zeros((k, g.n_atoms, 3), np.float32) for g in graphs]
    ts = torch.linspace(schedule.T, t_end, steps + 1)
    for chunk in progress(_size_batches(jobs, graphs, batch_size), desc="sampling"):
        batch = collate([graphs[i] for i, _ in chunk], dev)
        m = batch.mask
        x = masked_center(torch.randn(*m.shape, 3, generator=gen, device=dev), m)
        mu = x
        for a in range(steps):
            t, s = float(ts[a]), float(ts[a + 1])
            x0, eps = _x0_hat(model, x, t, batch, schedule)
            tt, ts_ = torch.tensor(t, device=dev), torch.tensor(s, device=dev)
            at, st = schedule.alpha(tt), schedule.sigma(tt)
            as_, ss = schedule.alpha(ts_), schedule.sigma(ts_)
            if sampler == "ddim":
                mu = masked_center(as_ * x0 + ss * eps, m)
                x = mu
                continue
            a_ts = at / as_
            s2_ts = st ** 2 - a_ts ** 2 * ss ** 2
            mu = masked_center((a_ts * ss ** 2 / st ** 2) * x + (as_ * s2_ts / st ** 2) * x0, m)
            noise = masked_center(torch.randn(x.shape, generator=gen, device=dev), m)
            x = mu + (torch.sqrt(torch.clamp(s2_ts, min=0)) * ss / st) * noise
        xyz = (mu * model.config.pos_std).cpu().numpy()
        for r, (i, j) in enumerate(chunk):
            out[i][j] = xyz[r, :graphs[i].n_atoms]
    return out


@torch.no_grad()
def validation_rmsd(model: DMT, graphs: Sequence[Graph], *, t_values: Sequence[float] = (0.1, 0.3, 0.5, 0.7),
                    seed: int = 1234, device=None) -> float:
    """Rotation-invariant denoising error on held-out conformers: mean over ``t`` and molecules of the RMSD (A)
    between ``x0_hat(x_t, t)`` and ``x0`` after Kabsch alignment, at fixed noise draws. The same number judges
    models trained with the aligned and the unaligned loss. Computed on ``device`` (``None``: ``$ICLR25_DEVICE``
    or ``auto``; the model is moved there)."""
    schedule = CosineVPSchedule()
    dev = torch_device(device)
    model.to(dev)
    g = torch_generator(dev, seed)
    rng = np.random.default_rng(seed)
    model.eval()
    vals = []
    for b0 in range(0, len(graphs), 64):
        sel = list(graphs[b0:b0 + 64])
        batch = collate(sel, dev)
        x0 = _draw_x0(sel, batch, model.config.pos_std, rng, g)
        m = batch.mask
        for t in t_values:
            tt = torch.full((len(sel),), float(t), device=dev)
            a, s = schedule.alpha(tt)[:, None, None], schedule.sigma(tt)[:, None, None]
            x_t = a * x0 + s * torch.randn(x0.shape, generator=g, device=dev) * m[..., None]
            x0h, _ = _x0_hat(model, x_t, float(t), batch, schedule)
            x0h = masked_center(x0h, m)
            aligned = kabsch_align(x0h, x0, m)
            err = ((aligned - x0) ** 2 * m[..., None]).sum((1, 2)) / m.sum(1)
            vals.append(torch.sqrt(err) * model.config.pos_std)
    return torch.cat(vals).mean().item()
