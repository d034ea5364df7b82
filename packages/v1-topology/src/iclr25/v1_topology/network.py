"""The self-evolving E-I spiking network (SESNN): leaky integrate-and-fire E and I sheets on a torus, each E
neuron seeing a retinotopic image patch, with Hebbian-Oja, correlation-measuring and threshold plasticity.

Dynamics (per Euler step, all images of a batch at once; E-I Net form, paper note §2):

.. math::
    u_E \\leftarrow e^{-\\Delta t/\\tau} u_E + \\tfrac{\\Delta t}{\\tau} g\\,Q x
        + g_{EE} W_{EE} s_E(t-1) - W_{EI} s_I(t-1),\\qquad
    u_I \\leftarrow e^{-\\Delta t/\\tau} u_I + W_{IE} s_E(t-1) - W_{II} s_I(t-1)

with spikes ``s = [u ≥ θ]`` and reset ``u ← 0``. ``Q x`` is neuron i's weights on its own patch, centred at
retinal position ``stride · (row, col)`` (visual-field overlap 1 − stride/patch). Recurrent weights live inside
fixed radii on the torus: E→E ``r_ee`` ("localized connectivity"), E→I / I→E / I→I ``r_ei``/``r_ii``
("long-range competition").

Learning once per batch from spike counts ``a`` per image (the mean-rate switch, ``learning="rate"``) or
from spike coincidences (``learning="spike"``):

* HO (Hebbian-Oja), input→E and E→E: ΔQ_ik = η Σ_b a_ib (x_ibk − a_ib Q_ik).
* CM (correlation measuring), E→I, I→E, I→I: ΔW_ij = η Σ_b (a_ib a_jb − ⟨a_i⟩⟨a_j⟩ (1 + W_ij)), W ≥ 0.
* Threshold homeostasis: Δθ_i = γ (r_i − p) with r the rate in spikes per unit time.

References:
    Zhong et al. (2025) ICLR "Emergent Orientation Maps"; Zhong et al. (2024) NeurIPS (SESNN);
    King, Zylberberg & DeWeese (2013) J. Neurosci. 33:5475 (E-I Net rules HO, CM, threshold).
    Constants are a documented reconstruction (no official code): see the README.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr25.utils.io import DataFileError, read_npz, save_npz
from iclr25.utils.seeding import check_seed

__all__ = ["NetworkConfig", "SESNN", "SimulationResult", "sheet_positions", "patch_indices", "sample_patches"]

_DTYPE = np.float32


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    """Every constant of the network (a reconstruction from the paper and E-I Net; lengths in E lattice units,
    retinal lengths in pixels)."""

    n_side: int = 32
    i_stride: int = 2
    patch: int = 8
    stride: int = 2
    r_ee: float = 1.5
    r_ei: float = 4.0
    r_ii: float = 4.0
    dt: float = 0.1
    tau: float = 1.0
    n_steps: int = 30
    input_gain: float = 1.0
    p_e: float = 0.05
    p_i: float = 0.1
    ee_gain: float = 3.0
    w_ee0: float = 0.15
    w_ie0: float = 0.05
    w_ei0: float = 0.3
    w_ii0: float = 0.05
    lr_q: float = 0.3
    lr_ee: float = 0.01
    lr_ie: float = 0.05
    lr_ei: float = 0.05
    lr_ii: float = 0.05
    lr_theta: float = 0.5
    batch: int = 100
    learning: str = "rate"
    whiten_f0: float = 0.4

    def __post_init__(self) -> None:
        for name in ("n_side", "i_stride", "patch", "stride", "n_steps", "batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.n_side % self.i_stride:
            raise ValueError(f"n_side ({self.n_side}) must be a multiple of i_stride ({self.i_stride})")
        if self.n_side < 4:
            raise ValueError(f"n_side must be >= 4, got {self.n_side}")
        for name in ("r_ee", "r_ei", "r_ii", "dt", "tau", "input_gain", "ee_gain", "p_e", "p_i", "whiten_f0"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        for name in ("w_ee0", "w_ie0", "w_ei0", "w_ii0", "lr_q", "lr_ee", "lr_ie", "lr_ei", "lr_ii", "lr_theta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.learning not in ("rate", "spike"):
            raise ValueError(f"learning must be 'rate' (mean-rate) or 'spike' (coincidences), got {self.learning!r}")
        if max(self.r_ee, self.r_ei, self.r_ii) > self.n_side / 2:
            raise ValueError(f"connection radii must be <= n_side/2 = {self.n_side / 2} on the torus, got "
                             f"r_ee={self.r_ee}, r_ei={self.r_ei}, r_ii={self.r_ii}")

    @property
    def overlap(self) -> float:
        """Visual-field overlap of neighbouring E neurons, 1 − stride/patch (0 when stride ≥ patch)."""
        return max(0.0, 1.0 - self.stride / self.patch)

    @property
    def retina(self) -> int:
        """Side of the periodic retina in pixels (stride · n_side)."""
        return self.stride * self.n_side

    @property
    def n_e(self) -> int:
        return self.n_side ** 2

    @property
    def n_i(self) -> int:
        return (self.n_side // self.i_stride) ** 2

    def replace(self, **changes: Any) -> NetworkConfig:
        return from_mapping({**dataclasses.asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def from_mapping(d: Mapping[str, Any], *, source: str = "config") -> NetworkConfig:
    """A :class:`NetworkConfig` from a mapping; unknown keys are an error that names them."""
    from iclr25.utils.io import dataclass_from_mapping  # noqa: PLC0415

    return dataclass_from_mapping(NetworkConfig, d, what=source)


# -------------------------------------------------------------------------------------- geometry
def sheet_positions(cfg: NetworkConfig) -> tuple[np.ndarray, np.ndarray]:
    """``(row, col)`` positions of the E sites and of the I sites (the I sheet is every ``i_stride``-th site,
    centred between E sites), in E lattice units."""
    n = cfg.n_side
    r, c = np.mgrid[0:n, 0:n]
    pe = np.stack([r.ravel(), c.ravel()], 1).astype(np.float64)
    m = n // cfg.i_stride
    r, c = np.mgrid[0:m, 0:m]
    off = (cfg.i_stride - 1) / 2
    pi = np.stack([r.ravel(), c.ravel()], 1).astype(np.float64) * cfg.i_stride + off
    return pe, pi


def _torus_d(a: np.ndarray, b: np.ndarray, L: float) -> np.ndarray:
    d = np.abs(a[:, None, :] - b[None, :, :])
    d = np.minimum(d, L - d)
    return np.sqrt((d ** 2).sum(-1))


def distance_matrices(cfg: NetworkConfig) -> dict[str, np.ndarray]:
    """Torus distances post × pre for the four projections ``ee``, ``ie`` (E→I), ``ei`` (I→E), ``ii``."""
    pe, pi = sheet_positions(cfg)
    L = float(cfg.n_side)
    return {"ee": _torus_d(pe, pe, L), "ie": _torus_d(pi, pe, L), "ei": _torus_d(pe, pi, L), "ii": _torus_d(pi, pi, L)}


def patch_indices(cfg: NetworkConfig) -> np.ndarray:
    """Flat indices into the periodic ``retina × retina`` image of each E neuron's ``patch²`` pixels,
    shape ``(n_e, patch²)``: neuron (r, c) sees the patch whose corner is at ``stride · (r, c)``."""
    n, P, s, R = cfg.n_side, cfg.patch, cfg.stride, cfg.retina
    r, c = np.mgrid[0:n, 0:n]
    dr, dc = np.mgrid[0:P, 0:P]
    rows = (s * r.ravel()[:, None] + dr.ravel()[None, :]) % R
    cols = (s * c.ravel()[:, None] + dc.ravel()[None, :]) % R
    return (rows * R + cols).astype(np.intp)


def sample_patches(images: Sequence[np.ndarray], cfg: NetworkConfig, n: int, rng: np.random.Generator,
                   idx: np.ndarray | None = None) -> np.ndarray:
    """``n`` random retina-sized crops of random images, cut into every E neuron's patch:
    ``(n, n_e, patch²)`` float32 (crops wrap around the image when it is smaller than the retina)."""
    if idx is None:
        idx = patch_indices(cfg)
    R = cfg.retina
    which = rng.integers(0, len(images), size=n)
    out = np.empty((n, idx.shape[0], idx.shape[1]), dtype=_DTYPE)
    pr, pc = np.divmod(idx, R)
    for k in np.unique(which):  # a loop over the ~10 images, vectorised over the samples of each
        img = images[int(k)]
        H, W = img.shape
        sel = np.nonzero(which == k)[0]
        r0 = rng.integers(0, max(1, H - R + 1), size=sel.size)
        c0 = rng.integers(0, max(1, W - R + 1), size=sel.size)
        # a random symmetry of the square (transpose, flips) per crop: photographs over-represent cardinal
        # orientations, which would otherwise bias every receptive field towards them
        t = rng.integers(0, 8, size=sel.size)[:, None, None]
        qr = np.where(t & 1, pc[None], pr[None])
        qc = np.where(t & 1, pr[None], pc[None])
        qr = np.where(t & 2, R - 1 - qr, qr)
        qc = np.where(t & 4, R - 1 - qc, qc)
        rr = (r0[:, None, None] + qr) % H
        cc = (c0[:, None, None] + qc) % W
        out[sel] = img[rr, cc]
    return out


# ---------------------------------------------------------------------------------------- network
@dataclasses.dataclass(frozen=True)
class SimulationResult:
    """Spike counts of one batch: ``counts_e`` (batch, n_e), ``counts_i`` (batch, n_i); ``coinc`` holds the
    windowed spike coincidences of the recurrent projections in ``learning="spike"`` mode."""

    counts_e: np.ndarray
    counts_i: np.ndarray
    coinc: dict[str, np.ndarray] | None = None


class SESNN:
    """The network: a config plus its learned arrays ``Q`` (n_e, patch²), ``W_ee``, ``W_ie``, ``W_ei``,
    ``W_ii`` (post × pre) and thresholds ``theta_e``, ``theta_i``; ``samples_seen`` counts training images.

    Examples
    --------
    >>> net = SESNN(NetworkConfig(n_side=8, patch=4, stride=1, r_ee=1.0, r_ei=2.0, r_ii=2.0), seed=0)
    >>> x = np.zeros((3, net.cfg.n_e, 16), dtype=np.float32)
    >>> net.simulate(x).counts_e.shape
    (3, 64)
    """

    ARRAYS = ("Q", "W_ee", "W_ie", "W_ei", "W_ii", "theta_e", "theta_i", "avg_e", "avg_i")

    def __init__(self, cfg: NetworkConfig | None = None, *, seed: int = 0):
        cfg = NetworkConfig() if cfg is None else cfg
        if not isinstance(cfg, NetworkConfig):
            raise TypeError(f"cfg must be a NetworkConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.seed = check_seed(seed)
        rng = np.random.default_rng([self.seed, 0])
        D = distance_matrices(cfg)
        self.distances = D
        self.masks = {"ee": (D["ee"] <= cfg.r_ee) & (D["ee"] > 0), "ie": D["ie"] <= cfg.r_ei,
                      "ei": D["ei"] <= cfg.r_ei, "ii": (D["ii"] <= cfg.r_ii) & (D["ii"] > 0)}
        Q = rng.normal(size=(cfg.n_e, cfg.patch ** 2))
        self.Q = (Q / np.linalg.norm(Q, axis=1, keepdims=True)).astype(_DTYPE)
        self.W_ee = (cfg.w_ee0 * self.masks["ee"]).astype(_DTYPE)
        self.W_ie = (cfg.w_ie0 * self.masks["ie"]).astype(_DTYPE)
        self.W_ei = (cfg.w_ei0 * self.masks["ei"]).astype(_DTYPE)
        self.W_ii = (cfg.w_ii0 * self.masks["ii"]).astype(_DTYPE)
        self.theta_e = np.full(cfg.n_e, 0.5, dtype=_DTYPE)
        self.theta_i = np.full(cfg.n_i, 0.5, dtype=_DTYPE)
        T = cfg.n_steps * cfg.dt
        self.avg_e = np.full(cfg.n_e, cfg.p_e * T, dtype=np.float64)
        self.avg_i = np.full(cfg.n_i, cfg.p_i * T, dtype=np.float64)
        self.samples_seen = 0
        self.batches_seen = 0
        self._idx = patch_indices(cfg)

    # ------------------------------------------------------------------------------ simulation
    def drive(self, patches: np.ndarray) -> np.ndarray:
        """Feed-forward drive ``g · Q_i · x_i`` of every E neuron for a batch of patches ``(B, n_e, P²)``."""
        return self.cfg.input_gain * np.einsum("nk,bnk->bn", self.Q, patches, optimize=True)

    def _check_patches(self, patches: Any) -> np.ndarray:
        x = np.asarray(patches, dtype=_DTYPE)
        want = (self.cfg.n_e, self.cfg.patch ** 2)
        if x.ndim != 3 or x.shape[1:] != want:
            raise ValueError(f"patches must have shape (batch, n_e={want[0]}, patch²={want[1]}), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("patches must be finite (no NaN/inf)")
        return x

    def simulate(self, patches: Any, *, n_steps: int | None = None, record: bool = False) -> SimulationResult:
        """Run the LIF network on a batch of static stimuli (``(B, n_e, patch²)``) and count spikes.

        Spikes are propagated as a sparse (batch × neurons) matrix times the dense weights, so one step costs
        O(spikes · n) rather than O(batch · n²). ``record=True`` also returns windowed coincidences (±1 step)
        of every recurrent projection (for ``learning="spike"``).
        """
        x = self._check_patches(patches)
        cfg = self.cfg
        T = cfg.n_steps if n_steps is None else int(n_steps)
        B, ne, ni = x.shape[0], cfg.n_e, cfg.n_i
        ff = self.drive(x) * (cfg.dt / cfg.tau)
        decay = _DTYPE(math.exp(-cfg.dt / cfg.tau))
        # one signed matrix, pre (E then I) × post (E then I)
        M = np.zeros((ne + ni, ne + ni), dtype=_DTYPE)
        M[:ne, :ne] = cfg.ee_gain * self.W_ee.T
        M[:ne, ne:] = self.W_ie.T
        M[ne:, :ne] = -self.W_ei.T
        M[ne:, ne:] = -self.W_ii.T
        theta = np.concatenate([self.theta_e, self.theta_i]).astype(_DTYPE)
        u = np.zeros((B, ne + ni), dtype=_DTYPE)
        ext = np.zeros((B, ne + ni), dtype=_DTYPE)
        ext[:, :ne] = ff
        counts = np.zeros((B, ne + ni), dtype=np.int32)
        rec_input = np.zeros((B, ne + ni), dtype=_DTYPE)
        trains: list[tuple[np.ndarray, np.ndarray]] = []
        for _ in range(T):  # time steps (all images and neurons vectorised)
            u *= decay
            u += ext
            u += rec_input
            spk = u >= theta
            u[spk] = 0.0
            counts += spk
            rows, cols = np.nonzero(spk)
            if record:
                trains.append((rows, cols))
            if rows.size == 0:
                rec_input[:] = 0.0
            elif rows.size > 0.05 * spk.size:
                rec_input = spk.astype(_DTYPE) @ M
            else:
                S = sp.csr_matrix((np.ones(rows.size, dtype=_DTYPE), cols, np.searchsorted(rows, np.arange(B + 1))),
                                  shape=(B, ne + ni))
                rec_input = np.asarray(S @ M, dtype=_DTYPE)
        coinc = self._coincidences(trains, B, T) if record else None
        return SimulationResult(counts[:, :ne], counts[:, ne:], coinc)

    def _coincidences(self, trains: list[tuple[np.ndarray, np.ndarray]], B: int, T: int) -> dict[str, np.ndarray]:
        """Σ_b Σ_t s_i(t) Σ_{|t'-t|≤1} s_j(t'), scaled by T/3 so that independent trains match Σ_b a_i a_j."""
        ne, ni = self.cfg.n_e, self.cfg.n_i
        n = ne + ni
        if not trains:
            trains = [(np.zeros(0, np.intp), np.zeros(0, np.intp))]
        rows = np.concatenate([r for r, _ in trains])
        ts = np.concatenate([np.full(r.size, t) for t, (r, _) in enumerate(trains)])
        cols = np.concatenate([c for _, c in trains])
        A = sp.csr_matrix((np.ones(rows.size), (rows * T + ts, cols)), shape=(B * T, n))
        # window of +-1 step that never joins the last step of one image to the first of the next
        off = np.ones(B * T - 1)
        off[np.arange(1, B) * T - 1] = 0.0
        shift = sp.eye(B * T, format="csr") + sp.diags(off, 1) + sp.diags(off, -1)
        C = np.asarray((A.T @ (shift @ A)).todense()) * (T / 3.0)
        return {"ee": C[:ne, :ne], "ie": C[ne:, :ne], "ei": C[:ne, ne:], "ii": C[ne:, ne:]}

    # -------------------------------------------------------------------------------- learning
    def learn(self, patches: np.ndarray, sim: SimulationResult) -> None:
        """One batch of plasticity (HO for input→E and E→E, CM for E→I, I→E and I→I, threshold homeostasis)."""
        cfg = self.cfg
        x = patches
        a_e = sim.counts_e.astype(np.float64)
        a_i = sim.counts_i.astype(np.float64)
        B = a_e.shape[0]
        T = cfg.n_steps * cfg.dt
        if cfg.learning == "spike" and sim.coinc is not None:
            P = sim.coinc
        else:
            P = {"ee": a_e.T @ a_e, "ie": a_i.T @ a_e, "ei": a_e.T @ a_i, "ii": a_i.T @ a_i}
        # HO: input -> E
        # written as a relaxation Q <- Q + lam (Σ a x / Σ a² - Q), lam = min(1, η Σ a² / B): the same fixed point
        # and small-step dynamics as Oja's rule, but it cannot overshoot when a neuron fires many spikes
        hebb = np.einsum("bn,bnk->nk", a_e.astype(_DTYPE), x, optimize=True)
        sq = (a_e ** 2).sum(0)[:, None]
        lam = np.minimum(1.0, cfg.lr_q * sq / B)
        self.Q += (lam * (hebb / np.maximum(sq, 1e-12) - self.Q)).astype(_DTYPE)
        # HO: E -> E (post i, pre j)
        lam = np.minimum(1.0, cfg.lr_ee * sq / B)
        target = P["ee"] / np.maximum(sq, 1e-12)
        self.W_ee = np.clip(self.W_ee + lam * (target - self.W_ee) * self.masks["ee"], 0, None).astype(_DTYPE)
        # moving averages of the counts (E-I Net: a long window)
        self.avg_e = 0.9 * self.avg_e + 0.1 * a_e.mean(0)
        self.avg_i = 0.9 * self.avg_i + 0.1 * a_i.mean(0)
        for key, post, pre, lr in (("ie", self.avg_i, self.avg_e, cfg.lr_ie), ("ei", self.avg_e, self.avg_i, cfg.lr_ei),
                                   ("ii", self.avg_i, self.avg_i, cfg.lr_ii)):
            name = "W_" + key
            W = getattr(self, name)
            dW = P[key] - B * np.outer(post, pre) * (1.0 + W)
            setattr(self, name, np.clip(W + (lr / B) * dW * self.masks[key], 0, None).astype(_DTYPE))
        # homeostasis: rates in spikes per unit time
        self.theta_e += _DTYPE(cfg.lr_theta) * (a_e.mean(0) / T - cfg.p_e).astype(_DTYPE)
        self.theta_i += _DTYPE(cfg.lr_theta) * (a_i.mean(0) / T - cfg.p_i).astype(_DTYPE)
        self.samples_seen += B
        self.batches_seen += 1

    def train_batch(self, images: Sequence[np.ndarray], rng: np.random.Generator) -> SimulationResult:
        """Sample one batch of patches from ``images``, simulate and learn."""
        x = sample_patches(images, self.cfg, self.cfg.batch, rng, self._idx)
        sim = self.simulate(x, record=self.cfg.learning == "spike")
        self.learn(x, sim)
        return sim

    # ---------------------------------------------------------------------------- checkpoints
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write a safe checkpoint (``.npz`` of plain arrays + the config as JSON text; no pickles), atomically."""
        arrays = {k: getattr(self, k) for k in self.ARRAYS}
        meta = {"config": self.cfg.to_dict(), "seed": self.seed, "samples_seen": self.samples_seen,
                "batches_seen": self.batches_seen, "format": "iclr25-v1-topology-sesnn-1"}
        return save_npz(path, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SESNN:
        """Read a checkpoint written by :meth:`save`; errors name the file."""
        arrays = read_npz(path, required=("meta", *cls.ARRAYS), what="network checkpoint")
        try:
            meta = json.loads(str(arrays["meta"]))
            cfg = from_mapping(meta["config"], source=f"{path}: config")
            net = cls(cfg, seed=int(meta["seed"]))
        except (ValueError, TypeError, KeyError) as exc:
            raise DataFileError(path, f"not a v1-topology network checkpoint ({exc})") from exc
        for k in cls.ARRAYS:
            a = arrays[k]
            want = getattr(net, k).shape
            if a.shape != want or not np.all(np.isfinite(a)):
                raise DataFileError(path, f"array {k!r} has shape {a.shape} (expected {want}) or NaN/inf values")
            setattr(net, k, a.astype(getattr(net, k).dtype))
        net.samples_seen = int(meta["samples_seen"])
        net.batches_seen = int(meta["batches_seen"])
        return net
