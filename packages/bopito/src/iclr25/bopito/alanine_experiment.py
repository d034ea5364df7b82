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
           "grid_states", "fit_grid_msm", "vamp2_grid", "vamp2_states", "simulate_msm", "chain_kinetics",
           "run_alanine", "run_ablation", "ABLATIONS"]


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


def vamp2_states(dtrajs: Any, lagtime: int, n_states: int, dim: int = 4) -> float:
    """VAMP-2 (deeptime ``VAMP``, ``dim`` singular values incl. the constant) of the indicator functions of
    ``n_states`` discrete states along ``dtrajs`` (integer arrays ``(n_traj, n_frames)`` or a list of them)."""
    from deeptime.decomposition import VAMP  # noqa: PLC0415

    eye = np.eye(int(n_states))
    model = VAMP(lagtime=int(lagtime), dim=dim).fit([eye[np.asarray(x)] for x in dtrajs]).fetch_model()
    return float(model.score(r=2))


def vamp2_grid(angles: np.ndarray, lagtime: int, n_grid: int = 6, dim: int = 4) -> float:
    """VAMP-2 (deeptime ``VAMP``, ``dim`` singular values incl. the constant) of (φ, ψ) grid indicators."""
    return vamp2_states(grid_states(np.asarray(angles), n_grid), lagtime, n_grid * n_grid, dim)


def simulate_msm(msm: GridMSM, start_angles: np.ndarray, n_steps: int, *, n_grid: int = 10,
                 seed: int = 0) -> np.ndarray:
    """Chains of the MSM's grid states (``(n, n_steps + 1)`` grid ids, one MSM lagtime per step) from the grid
    cells of ``start_angles`` (a start outside the MSM's active set is drawn from its stationary distribution):
    the MSM's own generated dynamics, scored like the diffusion models' chains."""
    rng = np.random.default_rng(seed)
    index = {int(g): i for i, g in enumerate(msm.states)}
    g0 = grid_states(np.asarray(start_angles), n_grid)
    cur = np.array([index.get(int(g), -1) for g in g0])
    bad = cur < 0
    cur[bad] = rng.choice(len(msm.stationary), size=int(bad.sum()), p=msm.stationary)
    cum = np.cumsum(msm.transition_matrix, axis=1)
    cum[:, -1] = 1.0
    out = [cur]
    for _ in range(int(n_steps)):
        cur = np.minimum((cum[cur] < rng.random(len(cur))[:, None]).sum(1), len(msm.states) - 1)
        out.append(cur)
    return np.asarray(msm.states)[np.stack(out, axis=1)]


def chain_kinetics(angles: np.ndarray, *, n_grid: int = 10) -> tuple[float, float]:
    """Slowest implied timescale (in chain steps) and VAMP-2 at one step of chains ``(n, L, 2)`` on the
    ``n_grid × n_grid`` (φ, ψ) grid (``nan`` timescale when no MSM can be fitted)."""
    try:
        ts = float(fit_grid_msm(angles, 1, n_grid=n_grid).timescales[0])
    except (ValueError, IndexError):
        ts = float("nan")
    return ts, vamp2_grid(angles, 1, n_grid=n_grid)


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
    int_max_lag: int = 0  # N_max of the interpolation models (0: interpolation not run)
    int_fit_lags: tuple[int, ...] = (5, 10)  # lags (ps) where λ_int is fitted to C_MD
    int_test_lags: tuple[int, ...] = (3, 7, 15)  # held-out lags (ps)
    int_lambda_range: tuple[float, float] = (0.3, 0.995)
    int_n_iter: int = 8
    int_steps: int | None = None  # training steps of the interpolation models (None: steps)
    int_n_fit: int | None = None  # equilibrium starts for fitting λ_int and for the held-out C (None: n_eval)
    sample_steps: int = 50  # DDIM steps of every transition of the chains and the interpolation
    max_lag: int | None = None  # N_max of the main ITO and BoPITO (None: the short trajectories' frames - 1)


ALANINE_SCALES = {
    "test": AlanineScale(),
    "alanine": AlanineScale(ladder=(25, 100, 250), steps=3000, bg_steps=4000, width=64, emb_dim=32,
                          batch_size=512, n_eval=1500, chain_steps=200, n_chains=160, chain_lag=1, msm_lag=1,
                          int_max_lag=2, int_steps=1500, int_n_fit=600),
}
#: rung "alanine-eq" (claims.py): the long-lag equilibrium claim alone at the alanine rung's scale and models, on 100
#: short trajectories only (no other ladder rungs, kinetics chains or interpolation models), so 20 seeds are affordable
ALANINE_SCALES["alanine-eq"] = dataclasses.replace(ALANINE_SCALES["alanine"], ladder=(100,), chain_steps=0,
                                                   int_max_lag=0)
#: rung "alanine-gbsa" (claims.py): the data-efficiency and interpolation claims on the shipped GBSA (implicit-solvent)
#: set at the alanine rung's models and budget; its ladder is (25, 100) (the set holds 100 short trajectories: ITO
#: on 4x BoPITO's data, as at the test rung, where the vacuum alanine rung has 10x), no kinetics chains, and the prior
#: trained on every 2nd equilibrium frame (the set's equilibrium runs are a quarter of the vacuum set's frames)
ALANINE_SCALES["alanine-gbsa"] = dataclasses.replace(ALANINE_SCALES["alanine"], ladder=(25, 100), chain_steps=0,
                                                     eq_stride=2)
#: rung "alanine-gbsa-eq" (claims.py): the long-lag equilibrium claim on the GBSA set (issue 63), the alanine-eq rung's
#: scale and models with the GBSA prior's frames (every 2nd, as at the alanine-gbsa rung)
ALANINE_SCALES["alanine-gbsa-eq"] = dataclasses.replace(ALANINE_SCALES["alanine-eq"],
                                                        eq_stride=ALANINE_SCALES["alanine-gbsa"].eq_stride)


def _x_start() -> np.ndarray:
    """The fixed start of the long-lag test: φ = −80°, ψ = 70° (the C7eq basin)."""
    return featurize(np.radians([[-80.0, 70.0]]))[0]


def _interpolation(sc: AlanineScale, dyn_data: list[np.ndarray], prior: Any, lam_hat: float, eq: np.ndarray,
                   members: list[tuple[int, int]], kw: dict[str, Any], s0: int, desc: bool) -> dict[str, Any]:
    """The paper's BoPITO interpolator on alanine dipeptide (see :func:`run_alanine`)."""
    from .analysis import fit_lambda_int  # noqa: PLC0415

    K = len(members)
    steps = sc.int_steps or sc.steps
    n_fit = sc.int_n_fit or sc.n_eval
    ito = fit_model("ito", dyn_data, n_models=K, max_lag=sc.int_max_lag, steps=steps, seed=s0 + 9,
                    desc="alanine ITO, short N_max" if desc else None, **kw)
    bop = fit_model("bopito", dyn_data, prior=prior, n_models=K, max_lag=sc.int_max_lag, lambda_hat=lam_hat,
                    steps=steps, seed=s0 + 9, desc="alanine BoPITO, short N_max" if desc else None, **kw)
    rng = np.random.default_rng(s0 + 10)
    flat = eq.reshape(-1, 2)
    pick = rng.choice(flat.shape[0], size=2 * n_fit, replace=False)
    a_fit, a_test = flat[pick[:n_fit]], flat[pick[n_fit:]]
    fit_lags, test_lags = list(sc.int_fit_lags), list(sc.int_test_lags)
    short_lags = list(range(1, sc.int_max_lag + 1))
    c_fit, c_test = md_phi_correlation(eq, fit_lags), md_phi_correlation(eq, test_lags)
    c_short = md_phi_correlation(eq, short_lags)

    def corr(model: Any, starts: np.ndarray, lags: list[int], seed: int) -> np.ndarray:
        cond = np.tile(featurize(starts), (len(lags), 1))
        lag_col = np.repeat(np.asarray(lags, dtype=np.float64), len(starts))
        xs = angles_from_features(sample(model, cond, lag_col, steps=sc.sample_steps, seed=seed))[..., 0]
        phiN = xs.reshape(model.n_models, len(lags), len(starts))
        return phi_correlation(np.broadcast_to(starts[:, 0], phiN.shape), phiN)  # (K, L)

    lam_int, err_fit = [], []
    for k in range(K):
        member = bop.model.member(k)

        def objective(lam: float, member: Any = member) -> float:
            c = corr(member.with_lambda(lambda_int=lam), a_fit, fit_lags, s0 + 11)[0]
            return float(np.abs(c - c_fit).mean())

        fit = fit_lambda_int(objective, lo=sc.int_lambda_range[0], hi=sc.int_lambda_range[1], n_iter=sc.int_n_iter)
        lam_int.append(fit.lambda_int)
        err_fit.append(fit.objective)
    c_bop = np.concatenate([corr(bop.model.member(k).with_lambda(lambda_int=lam_int[k]), a_test, test_lags, s0 + 12)
                            for k in range(K)])
    c_ito = corr(ito.model, a_test, test_lags, s0 + 12)
    c_bop_short = corr(bop.model, a_test, short_lags, s0 + 13)
    c_ito_short = corr(ito.model, a_test, short_lags, s0 + 13)
    # the same BoPITO without λ_int (λ̂ beyond N_max): the ablation of the fitted λ_int
    c_bop_hat = corr(bop.model, a_test, test_lags, s0 + 12)
    return {"max_lag": sc.int_max_lag, "fit_lags": fit_lags, "test_lags": test_lags, "c_fit": c_fit.tolist(),
            "c_test": c_test.tolist(), "lambda_int": lam_int, "err_fit": err_fit,
            "err_bopito": np.abs(c_bop - c_test).mean(1).tolist(), "err_ito": np.abs(c_ito - c_test).mean(1).tolist(),
            "err_prior": float(np.abs(c_test).mean()),
            "err_bopito_lambda_hat": np.abs(c_bop_hat - c_test).mean(1).tolist(),
            "c_bopito": c_bop.tolist(), "c_ito": c_ito.tolist(),
            "short_lags": short_lags, "c_short": c_short.tolist(),
            "err_short_bopito": np.abs(c_bop_short - c_short).mean(1).tolist(),
            "err_short_ito": np.abs(c_ito_short - c_short).mean(1).tolist()}


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
    eq, short, max_lag = _alanine_inputs(data, sc)
    # references from the equilibrium MD
    acf_lags = [n for n in sc.acf_lags if n < eq.shape[1] // 2]
    c_md = md_phi_correlation(eq, acf_lags)
    msm_md = fit_grid_msm(eq, sc.msm_lag, n_grid=sc.n_grid)
    # λ̂ from the data the models see (short runs) and from the equilibrium runs
    lam_hat = fit_grid_msm(short, sc.msm_lag, n_grid=sc.n_grid).lambda_hat
    members = [(s, n) for s in seeds for n in sc.ladder]  # one ensemble member per (seed, rung)
    subsets, dyn_data, prior_data = _alanine_training_sets(eq, short, seeds, members, sc)
    kw: dict[str, Any] = {"width": sc.width, "depth": 3, "emb_dim": sc.emb_dim, "n_diffusion": 500,
                          "batch_size": sc.batch_size, "lr": 1e-3, "box": FEATURE_BOX, "dim": 4}
    s0 = 10 * seeds[0]
    t1 = time.perf_counter()
    bg, prior, ito, bop = _fit_alanine_models(prior_data, dyn_data, seeds, members, max_lag, lam_hat, sc, kw, s0,
                                              desc)
    t_train = time.perf_counter() - t1
    fe, fe_prior = _long_lag_free_energy(eq, bg, ito, bop, members, seeds, sc, s0)
    rng = np.random.default_rng(s0 + 5)  # the equilibrium starts of C(N), then of the chains
    c_err, c_model = _correlation_errors(eq, rng, acf_lags, c_md, ito, bop, members, sc, s0)
    msm = _msm_peer(eq, short, subsets, members, acf_lags, c_md, sc)
    kin = _kinetics(eq, short, rng, subsets, ito, bop, members, sc, s0) if sc.chain_steps else {}
    # interpolation (repro): ITO and BoPITO trained on the same trajectories with N_max = int_max_lag, BoPITO's
    # λ_int fitted per member to C_MD at int_fit_lags; C error at the held-out int_test_lags against capped
    # ITO and the prior alone (C = 0)
    interp: dict[str, Any] = {}
    if sc.int_max_lag:
        interp = _interpolation(sc, dyn_data, prior, lam_hat, eq, members, kw, s0, desc)
    return {
        "seeds": seeds, "ladder": list(sc.ladder), "members": [list(m) for m in members],
        "max_lag": max_lag, "long_lag": sc.long_lag, "acf_lags": acf_lags, "c_md": c_md.tolist(),
        "lambda_hat": lam_hat, "lambda_hat_equilibrium": msm_md.lambda_hat,
        "timescale_md": float(msm_md.timescales[0]), "timescales_md": msm_md.timescales.tolist(),
        "phi_positive_fraction": float((eq[..., 0] > 0).mean()),
        "fe": fe, "fe_prior": fe_prior, "c_err": c_err, "c_model": c_model,
        "msm": msm, "kinetics": kin, "interpolation": interp, "trivial": _trivial_references(eq, c_md, sc),
        "seconds_train": t_train, "seconds": time.perf_counter() - t0,
        "scale": dataclasses.asdict(sc), "data_meta": data.meta,
    }


def _alanine_inputs(data: AlanineData, sc: AlanineScale) -> tuple[np.ndarray, np.ndarray, int]:
    """The equilibrium and short runs (cut to ``short_frames``) and the models' N_max, checked against the rung."""
    eq, short = data.equilibrium, data.short
    if sc.short_frames is not None:
        short = short[:, : sc.short_frames]
    n_frames = short.shape[1]
    max_lag = n_frames - 1 if sc.max_lag is None else int(sc.max_lag)
    if not 1 <= max_lag <= n_frames - 1:
        raise ValueError(f"max_lag must be in [1, {n_frames - 1}] for trajectories of {n_frames} frames, got {max_lag}")
    if max(sc.ladder) > short.shape[0]:
        raise ValueError(f"ladder rung {max(sc.ladder)} needs {max(sc.ladder)} short trajectories, the data "
                         f"hold {short.shape[0]}")
    return eq, short, max_lag


def _alanine_training_sets(eq: np.ndarray, short: np.ndarray, seeds: list[int], members: list[tuple[int, int]],
                           sc: AlanineScale) -> tuple[dict, list[np.ndarray], list[np.ndarray]]:
    """Each member's short trajectories (nested per seed) and each seed's equilibrium frames for its prior."""
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
    return subsets, dyn_data, prior_data


def _fit_alanine_models(prior_data: list[np.ndarray], dyn_data: list[np.ndarray], seeds: list[int],
                        members: list[tuple[int, int]], max_lag: int, lam_hat: float, sc: AlanineScale,
                        kw: dict[str, Any], s0: int, desc: bool) -> tuple[Any, Any, Any, Any]:
    """The priors (one per seed), ITO and BoPITO (one per member): ``(bg, prior per member, ito, bopito)``."""
    bg = fit_model("bg", prior_data, n_models=len(seeds), steps=sc.bg_steps, seed=s0 + 1,
                   desc="alanine prior" if desc else None, **kw)
    prior = bg.model.select([seeds.index(s) for s, _ in members])
    ito = fit_model("ito", dyn_data, n_models=len(members), max_lag=max_lag, steps=sc.steps, seed=s0 + 2,
                    desc="alanine ITO" if desc else None, **kw)
    bop = fit_model("bopito", dyn_data, prior=prior, n_models=len(members), max_lag=max_lag,
                    lambda_hat=lam_hat, steps=sc.steps, seed=s0 + 2, desc="alanine BoPITO" if desc else None,
                    **kw)
    return bg, prior, ito, bop


def _long_lag_free_energy(eq: np.ndarray, bg: Any, ito: Any, bop: Any, members: list[tuple[int, int]],
                          seeds: list[int], sc: AlanineScale, s0: int) -> tuple[dict[str, list[float]], list[float]]:
    """Free-energy error of ITO's and BoPITO's samples at ``long_lag`` from the fixed start, and the priors'."""
    x0 = np.tile(_x_start(), (sc.n_eval, 1))
    long = {name: angles_from_features(sample(m.model, x0, sc.long_lag, steps=50, seed=s0 + 3))
            for name, m in (("ito", ito), ("bopito", bop))}
    prior_samples = angles_from_features(sample_equilibrium(bg.model, sc.n_eval, steps=50, seed=s0 + 4))
    fe = {name: [free_energy_error(v[k], eq) for k in range(len(members))] for name, v in long.items()}
    fe_prior = [free_energy_error(prior_samples[k], eq) for k in range(len(seeds))]
    return fe, fe_prior


def _correlation_errors(eq: np.ndarray, rng: np.random.Generator, acf_lags: list[int], c_md: np.ndarray,
                        ito: Any, bop: Any, members: list[tuple[int, int]], sc: AlanineScale, s0: int
                        ) -> tuple[dict[str, list[float]], dict[str, list[list[float]]]]:
    """C(N) of ITO and BoPITO from equilibrium starts (frames of the MD), and its mean error against C_MD."""
    starts = eq.reshape(-1, 2)[rng.choice(eq.shape[0] * eq.shape[1], size=sc.n_eval, replace=False)]
    L = len(acf_lags)
    cond = np.tile(featurize(starts), (L, 1))
    lag_col = np.repeat(np.asarray(acf_lags, dtype=np.float64), sc.n_eval)
    c_err: dict[str, list[float]] = {}
    c_model: dict[str, list[list[float]]] = {}
    for name, m in (("ito", ito), ("bopito", bop)):
        xs = angles_from_features(sample(m.model, cond, lag_col, steps=sc.sample_steps, seed=s0 + 6))
        phiN = xs[..., 0].reshape(len(members), L, sc.n_eval)
        c = phi_correlation(np.broadcast_to(starts[:, 0], phiN.shape), phiN)
        c_model[name] = c.tolist()
        c_err[name] = np.abs(c - c_md[None]).mean(axis=1).tolist()
    return c_err, c_model


def _msm_peer(eq: np.ndarray, short: np.ndarray, subsets: dict, members: list[tuple[int, int]],
              acf_lags: list[int], c_md: np.ndarray, sc: AlanineScale) -> dict[str, list[float]]:
    """The MSM peer on each member's short trajectories: C(N) error (by the MSM at lag 1), free-energy error of
    its stationary samples and its slowest implied timescale at ``msm_lag``."""
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
    return {"c_err": msm_err, "fe": msm_fe, "timescale": msm_ts}


def _kinetics(eq: np.ndarray, short: np.ndarray, rng: np.random.Generator, subsets: dict, ito: Any, bop: Any,
              members: list[tuple[int, int]], sc: AlanineScale, s0: int) -> dict[str, Any]:
    """Kinetics of generated dynamics (repro): chains of BoPITO, ITO and of the MSM peer, one ``chain_lag`` per
    step, from the same equilibrium starts; slowest implied timescale and VAMP-2 on the n_grid x n_grid grid,
    against the equilibrium MD at the same lag and grid."""
    kin: dict[str, Any] = {}
    idx = rng.choice(eq.shape[0] * eq.shape[1], size=sc.n_chains, replace=False)
    a0 = eq.reshape(-1, 2)[idx]
    for name, m in (("ito", ito), ("bopito", bop)):
        ch = angles_from_features(sample_chain(m.model, featurize(a0), sc.chain_lag, sc.chain_steps,
                                               steps=sc.sample_steps, seed=s0 + 7))  # (K, n, S+1, 2)
        kv = [chain_kinetics(ch[k], n_grid=sc.n_grid) for k in range(len(members))]
        kin[name] = {"timescale": [t * sc.chain_lag for t, _ in kv], "vamp2": [v for _, v in kv]}
    w = 2 * np.pi / sc.n_grid
    kv = []
    for k, m in enumerate(members):
        pk = fit_grid_msm(short[subsets[m]], sc.chain_lag, n_grid=sc.n_grid)
        g = simulate_msm(pk, a0, sc.chain_steps, n_grid=sc.n_grid, seed=s0 + 8 + k)
        centres = np.stack([-np.pi + (g // sc.n_grid + 0.5) * w, -np.pi + (g % sc.n_grid + 0.5) * w], -1)
        kv.append(chain_kinetics(centres, n_grid=sc.n_grid))
    kin["msm"] = {"timescale": [t * sc.chain_lag for t, _ in kv], "vamp2": [v for _, v in kv]}
    t_md, v_md = chain_kinetics(eq[:, :: sc.chain_lag], n_grid=sc.n_grid)
    kin["md"] = {"timescale": t_md * sc.chain_lag, "vamp2": v_md}
    kin["chain_lag"] = sc.chain_lag
    return kin


def _trivial_references(eq: np.ndarray, c_md: np.ndarray, sc: AlanineScale) -> dict[str, float]:
    """Trivial references, with as many samples as the models (the histograms' pseudo-counts depend on it)."""
    uniform = np.random.default_rng(1).uniform(-np.pi, np.pi, (sc.n_eval, 2))
    stay = np.tile(np.radians([[-80.0, 70.0]]), (sc.n_eval, 1))
    eq_draw = eq.reshape(-1, 2)[np.random.default_rng(2).choice(eq.shape[0] * eq.shape[1], sc.n_eval)]
    return {"fe_uniform": free_energy_error(uniform, eq), "fe_start_only": free_energy_error(stay, eq),
            "c_err_zero": float(np.abs(c_md).mean()),
            "fe_md_sample": free_energy_error(eq_draw, eq),
            "fe_md_half": free_energy_error(eq[: eq.shape[0] // 2], eq[eq.shape[0] // 2:])}


def per_member(res: dict[str, Any], key: Any, seed: int, n: int) -> float:
    """The value of ``key`` (a list over members) for member (seed, n)."""
    return float(key[res["members"].index([seed, n])])


#: the ablation of the kinetics and interpolation claims' likely causes, one change at a time from the
#: ``alanine`` scale (README "Alanine ablation")
ABLATIONS: dict[str, dict[str, Any]] = {
    "as in repro": {},
    "3× training steps": {"steps": 9000},
    "DDIM 200 steps per transition": {"sample_steps": 200},
    "N_max = 2 ps (lags 1-2 ps only)": {"max_lag": 2},
}


def run_ablation(data: AlanineData, seeds: Sequence[int], base: AlanineScale, *, n_traj: int = 100,
                 variants: dict[str, dict[str, Any]] | None = None, desc: bool = False) -> dict[str, Any]:
    """The kinetics measures at one ladder rung (``n_traj`` short trajectories) for each variant of ``base``
    (one field changed at a time; no interpolation models): which cause moves BoPITO's error towards the
    peer's. Each variant also records the models' C(1 ps) against the MD's (the one-step memory)."""
    variants = ABLATIONS if variants is None else variants
    out: dict[str, Any] = {"seeds": [int(s) for s in seeds], "n_traj": int(n_traj), "variants": {}}
    for name, over in variants.items():
        sc = dataclasses.replace(base, ladder=(int(n_traj),), n_eval=min(base.n_eval, 300), int_max_lag=0, **over)
        res = run_alanine(data, seeds, sc, desc=desc)
        kin, it = res["kinetics"], res["interpolation"]
        t_md, v_md = float(kin["md"]["timescale"]), float(kin["md"]["vamp2"])
        row: dict[str, Any] = {"overrides": over, "seconds": res["seconds"], "timescale_md": t_md, "vamp2_md": v_md}
        for who in ("bopito", "ito", "msm"):
            ts = res["msm"]["timescale"] if who == "msm" else kin[who]["timescale"]
            row[f"its_rel_{who}"] = [abs(float(t) - t_md) / t_md for t in ts]
            row[f"vamp_err_{who}"] = [abs(float(v) - v_md) for v in kin[who]["vamp2"]]
        if it:
            row["int_bopito"], row["int_ito"], row["int_prior"] = it["err_bopito"], it["err_ito"], it["err_prior"]
        lag1 = res["acf_lags"].index(1)
        row["c1_md"] = float(res["c_md"][lag1])
        row["c1_bopito"] = [float(c[lag1]) for c in res["c_model"]["bopito"]]
        row["c1_ito"] = [float(c[lag1]) for c in res["c_model"]["ito"]]
        out["variants"][name] = row
    return out

#: rung "alanine-tip3p" (claims.py): the data-efficiency and interpolation claims on the shipped explicit-water set
#: (issue 63), a reduced length in frames of 0.1 ps (every lag below is in frames, the GBSA rung's numbers, so 0.1x
#: in ps); the GBSA rung's ladder (25, 100), models and budget; the prior on every equilibrium frame of half the runs
#: (the set has 4 runs of 500 frames)
ALANINE_SCALES["alanine-tip3p"] = dataclasses.replace(ALANINE_SCALES["alanine-gbsa"], eq_stride=1)
