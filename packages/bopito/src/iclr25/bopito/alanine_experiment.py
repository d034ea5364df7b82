"""The alanine-dipeptide experiment at reduced scale (the paper's Sec. 5.2 system): a Boltzmann prior trained
on equilibrium frames, ITO and BoPITO trained on short trajectories (a data ladder), deeptime's MSM on the same
short trajectories as the peer, and the paper's measures against the equilibrium MD:

- **long-lag equilibrium**: samples at a lag far beyond N_max (and the slowest timescale) from one fixed
  start; error of the φ and ψ free energies against the equilibrium MD (``free_energy_error``, kT);
- **data efficiency**: the φ correlation function ``C(N)`` (φ as (sin φ, cos φ), dot product, as the paper)
  against the equilibrium MD's, mean absolute error over lags; BoPITO on n trajectories vs ITO on more;
- **kinetics**: λ̂ (the slowest eigenvalue per frame) from an MSM of the data; slowest implied timescale and
  VAMP-2 of BoPITO chains against an MSM of the equilibrium MD.

Everything runs on the shipped dihedral set (:func:`iclr25.bopito.alanine.load_shipped`) or on a set made by
``iclr25 bopito alanine-md``; no MD is run here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .alanine import FEATURE_BOX, AlanineData, angles_from_features, featurize
from .sampling import sample, sample_chain, sample_equilibrium
from .training import fit_model

__all__ = ["AlanineScale", "ALANINE_SCALES", "phi_correlation", "md_phi_correlation", "free_energy_error",
           "grid_states", "fit_grid_msm", "run_alanine"]


def phi_correlation(phi0: Any, phiN: Any) -> np.ndarray:
    """Normalised cross-correlation of φ embedded as (sin φ, cos φ), dot product (the paper's measure), along
    the last axis: ``C = E[(e_0 − μ_0)·(e_N − μ_N)] / E[|e_0 − μ_0|²]``."""
    a, b = np.asarray(phi0, dtype=np.float64), np.asarray(phiN, dtype=np.float64)
    ea = np.stack([np.sin(a), np.cos(a)], -1)
    eb = np.stack([np.sin(b), np.cos(b)], -1)
    da = ea - ea.mean(-2, keepdims=True)
    db = eb - eb.mean(-2, keepdims=True)
    return (da * db).sum(-1).mean(-1) / (da * da).sum(-1).mean(-1)


def md_phi_correlation(angles: np.ndarray, lags: Sequence[int]) -> np.ndarray:
    """``C(N)`` of the equilibrium MD: all pairs (t, t + N) of every run."""
    phi = np.asarray(angles)[..., 0]
    out = []
    for n in lags:
        if n >= phi.shape[1]:
            raise ValueError(f"lag {n} needs runs longer than {phi.shape[1]} frames")
        out.append(phi_correlation(phi[:, : phi.shape[1] - n].ravel(), phi[:, n:].ravel()) if n else 1.0)
    return np.array(out, dtype=np.float64)


def _marginal_f(a: np.ndarray, bins: int) -> np.ndarray:
    h, _ = np.histogram(np.asarray(a).ravel(), bins=bins, range=(-np.pi, np.pi))
    p = (h + 0.5) / (h.sum() + 0.5 * bins)
    return -np.log(p)


def free_energy_error(angles: np.ndarray, angles_ref: np.ndarray, bins: int = 24) -> float:
    """Error of the φ and ψ free energies (kT) of ``angles`` ``(..., 2)`` against ``angles_ref``: for each
    marginal the reference-weighted mean ``Σ_b p_ref(b) |ΔF(b) − ⟨ΔF⟩|`` over ``bins`` bins (the free
    energy is defined up to a constant, removed by the weighted mean), averaged over φ and ψ. Histograms
    carry a pseudo-count of 0.5 per bin."""
    a, r = np.asarray(angles).reshape(-1, 2), np.asarray(angles_ref).reshape(-1, 2)
    errs = []
    for d in range(2):
        f_ref = _marginal_f(r[:, d], bins)
        p_ref = np.exp(-f_ref)
        p_ref /= p_ref.sum()
        diff = _marginal_f(a[:, d], bins) - f_ref
        diff -= p_ref @ diff
        errs.append(float(p_ref @ np.abs(diff)))
    return float(np.mean(errs))


def grid_states(angles: np.ndarray, n: int = 10) -> np.ndarray:
    """Regular ``n × n`` grid states on the (φ, ψ) torus, integer per frame (shape of ``angles[..., 0]``)."""
    a = np.asarray(angles)
    i = np.clip(((a[..., 0] + np.pi) / (2 * np.pi) * n).astype(np.int64), 0, n - 1)
    j = np.clip(((a[..., 1] + np.pi) / (2 * np.pi) * n).astype(np.int64), 0, n - 1)
    return (i * n + j).astype(np.int32)


@dataclasses.dataclass(frozen=True)
class GridMSM:
    """deeptime's reversible MLE MSM on (φ, ψ) grid states: the peer, and the reference kinetics."""

    lagtime: int
    transition_matrix: np.ndarray
    stationary: np.ndarray
    states: np.ndarray  # grid-state id of each active state
    feature: np.ndarray  # mean (sin φ, cos φ) of each active state in the data
    timescales: np.ndarray  # frames

    @property
    def lambda_hat(self) -> float:
        """The slowest eigenvalue per frame, ``λ̂ = exp(−1 / t_2)``."""
        return float(np.exp(-1.0 / self.timescales[0]))

    def phi_correlation(self, lags: Sequence[int]) -> np.ndarray:
        """``C(N)`` of (sin φ, cos φ) from ``T^{N/τ}`` (lags: multiples of τ)."""
        f = self.feature - self.stationary @ self.feature
        var = self.stationary @ (f * f).sum(-1)
        out = []
        for n in lags:
            if n % self.lagtime:
                raise ValueError(f"lag {n} is not a multiple of the MSM lagtime {self.lagtime}")
            g = np.linalg.matrix_power(self.transition_matrix, int(n // self.lagtime)) @ f
            out.append(float(self.stationary @ (f * g).sum(-1) / var))
        return np.array(out)

    def sample_angles(self, n: int, n_grid: int, seed: int = 0) -> np.ndarray:
        """``n`` (φ, ψ) samples of the stationary distribution, uniform inside each grid cell."""
        rng = np.random.default_rng(seed)
        s = self.states[rng.choice(len(self.stationary), size=n, p=self.stationary)]
        i, j = s // n_grid, s % n_grid
        w = 2 * np.pi / n_grid
        return np.stack([-np.pi + (i + rng.random(n)) * w, -np.pi + (j + rng.random(n)) * w], -1)


def fit_grid_msm(angles: np.ndarray, lagtime: int, *, n_grid: int = 10, n_timescales: int = 3) -> GridMSM:
    """deeptime ``MaximumLikelihoodMSM`` (reversible) on the (φ, ψ) grid, largest connected set."""
    from deeptime.markov import TransitionCountEstimator  # noqa: PLC0415
    from deeptime.markov.msm import MaximumLikelihoodMSM  # noqa: PLC0415

    a = np.asarray(angles)
    dtrajs = [np.ascontiguousarray(d) for d in grid_states(a, n_grid)]
    counts = TransitionCountEstimator(lagtime=int(lagtime), count_mode="sliding").fit(dtrajs).fetch_model()
    counts = counts.submodel_largest()
    msm = MaximumLikelihoodMSM(reversible=True).fit(counts).fetch_model()
    symbols = np.asarray(msm.count_model.state_symbols)
    flat = grid_states(a, n_grid).ravel()
    phi = a[..., 0].ravel()
    emb = np.stack([np.sin(phi), np.cos(phi)], -1)
    feat = np.stack([emb[flat == s].mean(0) for s in symbols])
    k = min(n_timescales, msm.n_states - 1)
    ts = np.asarray(msm.timescales(k)) if k >= 1 else np.array([np.inf])
    return GridMSM(int(lagtime), np.asarray(msm.transition_matrix), np.asarray(msm.stationary_distribution),
                   symbols, feat, ts)


def vamp2_grid(angles: np.ndarray, lagtime: int, n_grid: int = 6, dim: int = 4) -> float:
    """VAMP-2 (deeptime ``VAMP``, ``dim`` singular values incl. the constant) of (φ, ψ) grid indicators."""
    from deeptime.decomposition import VAMP  # noqa: PLC0415

    d = grid_states(np.asarray(angles), n_grid)
    eye = np.eye(n_grid * n_grid)
    model = VAMP(lagtime=int(lagtime), dim=dim).fit([eye[x] for x in d]).fetch_model()
    return float(model.score(r=2))


@dataclasses.dataclass(frozen=True)
class AlanineScale:
    """Data ladder, model size and budget of one rung (the same for prior, ITO and BoPITO)."""

    ladder: tuple[int, ...] = (25, 100)  # numbers of short trajectories
    short_frames: int | None = None  # frames per short trajectory used (None: all)
    steps: int = 600
    bg_steps: int = 600
    width: int = 48
    emb_dim: int = 16
    batch_size: int = 256
    n_eval: int = 600
    long_lag: int = 20_000
    acf_lags: tuple[int, ...] = (1, 5, 10, 20, 50, 100, 200)
    msm_lag: int = 10
    chain_lag: int = 10
    chain_steps: int = 0  # 0: no chains (kinetics not measured)
    n_chains: int = 200
    eq_stride: int = 5  # equilibrium frames for the prior: every eq_stride-th
    n_grid: int = 10


ALANINE_SCALES = {
    "test": AlanineScale(),
    "alanine": AlanineScale(ladder=(25, 100, 250), steps=3000, bg_steps=4000, width=64, emb_dim=32,
                          batch_size=512, n_eval=1500, chain_steps=200, n_chains=300),
}


def _x_start() -> np.ndarray:
    """The fixed start of the long-lag test: φ = −80°, ψ = 70° (the C7eq basin)."""
    return featurize(np.radians([[-80.0, 70.0]]))[0]


def run_alanine(data: AlanineData, seeds: Sequence[int], scale: AlanineScale = AlanineScale(), *,
                desc: bool = False) -> dict[str, Any]:
    """Train and score prior, ITO and BoPITO (one ensemble member per seed and ladder rung) and the MSM peer.

    Each seed draws its own subsets of the short trajectories (nested: the rung of n holds the first n of a
    permutation) and of the equilibrium frames (the prior's data: the equilibrium runs of that seed's half).
    Returns per-seed, per-rung numbers and the references.
    """
    import torch  # noqa: PLC0415

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    seeds = [int(s) for s in seeds]
    sc = scale
    eq, short = data.equilibrium, data.short
    if sc.short_frames is not None:
        short = short[:, : sc.short_frames]
    n_frames = short.shape[1]
    max_lag = n_frames - 1
    if max(sc.ladder) > short.shape[0]:
        raise ValueError(f"ladder rung {max(sc.ladder)} needs {max(sc.ladder)} short trajectories, the data "
                         f"hold {short.shape[0]}")
    # references from the equilibrium MD
    acf_lags = [n for n in sc.acf_lags if n < eq.shape[1] // 2]
    c_md = md_phi_correlation(eq, acf_lags)
    msm_md = fit_grid_msm(eq, sc.msm_lag, n_grid=sc.n_grid)
    # λ̂ from the data the models see (short runs) and from the equilibrium runs
    msm_short_full = fit_grid_msm(short, sc.msm_lag, n_grid=sc.n_grid)
    lam_hat = msm_short_full.lambda_hat
    # members: (seed, rung)
    members = [(s, n) for s in seeds for n in sc.ladder]
    subsets = {}
    for s in seeds:
        perm = np.random.default_rng(5000 + s).permutation(short.shape[0])
        for n in sc.ladder:
            subsets[(s, n)] = perm[:n]
    short_feat = featurize(short)
    dyn_data = [short_feat[subsets[m]] for m in members]
    eq_feat = featurize(eq[:, :: sc.eq_stride])
    prior_data = []
    for s in seeds:
        runs = np.random.default_rng(6000 + s).permutation(eq.shape[0])[: max(1, eq.shape[0] // 2)]
        prior_data.append(eq_feat[runs])
    kw: dict[str, Any] = {"width": sc.width, "depth": 3, "emb_dim": sc.emb_dim, "n_diffusion": 500,
                          "batch_size": sc.batch_size, "lr": 1e-3, "box": FEATURE_BOX, "dim": 4}
    s0 = 10 * seeds[0]
    t1 = time.perf_counter()
    bg = fit_model("bg", prior_data, n_models=len(seeds), steps=sc.bg_steps, seed=s0 + 1,
                   desc="alanine prior" if desc else None, **kw)
    prior = bg.model.select([seeds.index(s) for s, _ in members])
    ito = fit_model("ito", dyn_data, n_models=len(members), max_lag=max_lag, steps=sc.steps, seed=s0 + 2,
                    desc="alanine ITO" if desc else None, **kw)
    bop = fit_model("bopito", dyn_data, prior=prior, n_models=len(members), max_lag=max_lag,
                    lambda_hat=lam_hat, steps=sc.steps, seed=s0 + 2, desc="alanine BoPITO" if desc else None,
                    **kw)
    t_train = time.perf_counter() - t1
    # long-lag equilibrium from the fixed start
    x0 = np.tile(_x_start(), (sc.n_eval, 1))
    long = {name: angles_from_features(sample(m.model, x0, sc.long_lag, steps=50, seed=s0 + 3))
            for name, m in (("ito", ito), ("bopito", bop))}
    prior_samples = angles_from_features(sample_equilibrium(bg.model, sc.n_eval, steps=50, seed=s0 + 4))
    fe = {name: [free_energy_error(v[k], eq) for k in range(len(members))] for name, v in long.items()}
    fe_prior = [free_energy_error(prior_samples[k], eq) for k in range(len(seeds))]
    # C(N) from equilibrium starts (frames of the equilibrium MD)
    rng = np.random.default_rng(s0 + 5)
    starts = eq.reshape(-1, 2)[rng.choice(eq.shape[0] * eq.shape[1], size=sc.n_eval, replace=False)]
    L = len(acf_lags)
    cond = np.tile(featurize(starts), (L, 1))
    lag_col = np.repeat(np.asarray(acf_lags, dtype=np.float64), sc.n_eval)
    c_err: dict[str, list[float]] = {}
    c_model: dict[str, list[list[float]]] = {}
    for name, m in (("ito", ito), ("bopito", bop)):
        xs = angles_from_features(sample(m.model, cond, lag_col, steps=50, seed=s0 + 6))  # (K, L*B, 2)
        phiN = xs[..., 0].reshape(len(members), L, sc.n_eval)
        c = phi_correlation(np.broadcast_to(starts[:, 0], phiN.shape), phiN)
        c_model[name] = c.tolist()
        c_err[name] = np.abs(c - c_md[None]).mean(axis=1).tolist()
    # MSM peer on the same short trajectories (lags that are multiples of its lagtime; C(N) of the others
    # by the MSM at lag 1)
    msm_err, msm_fe, msm_ts = [], [], []
    for m in members:
        sub = short[subsets[m]]
        pk = fit_grid_msm(sub, 1, n_grid=sc.n_grid)
        c_pk = pk.phi_correlation(acf_lags)
        msm_err.append(float(np.abs(c_pk - c_md).mean()))
        msm_fe.append(free_energy_error(pk.sample_angles(sc.n_eval, sc.n_grid, seed=m[0]), eq))
        try:
            msm_ts.append(float(fit_grid_msm(sub, sc.msm_lag, n_grid=sc.n_grid).timescales[0]))
        except (ValueError, IndexError):
            msm_ts.append(float("nan"))
    # kinetics of BoPITO / ITO chains (repro)
    kin: dict[str, Any] = {}
    if sc.chain_steps:
        idx = rng.choice(eq.shape[0] * eq.shape[1], size=sc.n_chains, replace=False)
        x0c = featurize(eq.reshape(-1, 2)[idx])
        for name, m in (("ito", ito), ("bopito", bop)):
            ch = angles_from_features(sample_chain(m.model, x0c, sc.chain_lag, sc.chain_steps, steps=50,
                                                   seed=s0 + 7))  # (K, n, S+1, 2)
            ts, v2 = [], []
            for k in range(len(members)):
                try:
                    ts.append(float(fit_grid_msm(ch[k], 1, n_grid=sc.n_grid).timescales[0]) * sc.chain_lag)
                except (ValueError, IndexError):
                    ts.append(float("nan"))
                v2.append(vamp2_grid(ch[k], 1))
            kin[name] = {"timescale": ts, "vamp2": v2}
        kin["md"] = {"timescale": float(msm_md.timescales[0]),
                     "vamp2": vamp2_grid(eq[:, :: sc.chain_lag], 1)}
    # trivial references
    # trivial references, with as many samples as the models (the histograms' pseudo-counts depend on it)
    uniform = np.random.default_rng(1).uniform(-np.pi, np.pi, (sc.n_eval, 2))
    stay = np.tile(np.radians([[-80.0, 70.0]]), (sc.n_eval, 1))
    eq_draw = eq.reshape(-1, 2)[np.random.default_rng(2).choice(eq.shape[0] * eq.shape[1], sc.n_eval)]
    res = {
        "seeds": seeds, "ladder": list(sc.ladder), "members": [list(m) for m in members],
        "max_lag": max_lag, "long_lag": sc.long_lag, "acf_lags": acf_lags, "c_md": c_md.tolist(),
        "lambda_hat": lam_hat, "lambda_hat_equilibrium": msm_md.lambda_hat,
        "timescale_md": float(msm_md.timescales[0]), "timescales_md": msm_md.timescales.tolist(),
        "fe": fe, "fe_prior": fe_prior, "c_err": c_err, "c_model": c_model,
        "msm": {"c_err": msm_err, "fe": msm_fe, "timescale": msm_ts},
        "kinetics": kin,
        "trivial": {"fe_uniform": free_energy_error(uniform, eq), "fe_start_only": free_energy_error(stay, eq),
                    "c_err_zero": float(np.abs(c_md).mean()),
                    "fe_md_sample": free_energy_error(eq_draw, eq),
                    "fe_md_half": free_energy_error(eq[: eq.shape[0] // 2], eq[eq.shape[0] // 2:])},
        "seconds_train": t_train, "seconds": time.perf_counter() - t0,
        "scale": dataclasses.asdict(sc), "data_meta": data.meta,
    }
    return res


def per_member(res: dict[str, Any], key: Any, seed: int, n: int) -> float:
    """The value of ``key`` (a list over members) for member (seed, n)."""
    return float(key[res["members"].index([seed, n])])
