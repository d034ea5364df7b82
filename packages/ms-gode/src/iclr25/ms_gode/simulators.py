"""Seeded, vectorised simulators of the systems of the continual-dynamics-learning task sequences.

Physics (the NRI / LG-ODE generators that MS-GODE uses): ``springs`` and ``charged`` particles in a box with
elastic walls, integrated by semi-implicit Euler with ``dt = 1e-3`` and one frame kept every 100 steps.

Biology (substitutes for the two VCell rule-based tutorial models of Bio-CDL): mass-action ODE networks of EGFR
signalling and of Ran-mediated nuclear transport, with the published rate and initial-amount ranges, integrated
by ``scipy.integrate.solve_ivp`` (BDF with the analytic Jacobian). Each network exposes its stoichiometry, its
conserved moieties (left null space of the stoichiometric matrix) and ``to_graph()`` from its reaction list.

References: Zhang et al., "Learning System Dynamics without Forgetting", ICLR 2025, Sec. 3 and App. (Bio-CDL);
Kipf et al., "Neural Relational Inference", ICML 2018 (springs/charged); Blinov et al. 2006 (EGFR network).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr25.utils.seeding import check_seed

from .trajectories import Trajectories

__all__ = [
    "Trajectories", "simulate_springs", "simulate_charged", "springs_energy", "MassActionNetwork", "Reaction",
    "egfr_network", "ran_network", "simulate_network", "simulate_egfr", "simulate_ran", "SYSTEMS",
    "simulate_system", "simulate_oscillators",
]

DT = 1e-3
MAX_F = 0.1 / DT  # |F| clip of the NRI generators (= 100)


def _check_int(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


def _check_pos(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not np.isfinite(value) \
            or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _reflect(loc: np.ndarray, vel: np.ndarray, box: float) -> None:
    """Elastic walls at ±box, in place (NRI ``_clamp``)."""
    over = loc > box
    loc[over] = 2 * box - loc[over]
    vel[over] = -np.abs(vel[over])
    under = loc < -box
    loc[under] = -2 * box - loc[under]
    vel[under] = np.abs(vel[under])


def _initial_state(rng: np.random.Generator, n_sims: int, n_balls: int, box: float, vel_norm: float):
    loc = rng.standard_normal((n_sims, n_balls, 2))
    loc *= box / np.abs(loc).max(axis=(1, 2), keepdims=True)  # max |x| = box, as the MS-GODE generator
    vel = rng.standard_normal((n_sims, n_balls, 2))
    vel *= vel_norm / np.linalg.norm(vel, axis=-1, keepdims=True)
    return loc, vel


def _forces(kind: str, loc: np.ndarray, strength_adj: np.ndarray) -> np.ndarray:
    diff = loc[:, :, None, :] - loc[:, None, :, :]  # (S, N, N, 2): x_i - x_j
    if kind == "springs":
        f = -(strength_adj[..., None] * diff).sum(axis=2)
    else:
        dist = np.linalg.norm(diff, axis=-1)
        dist = np.where(dist == 0, 1.0, dist)
        inv3 = strength_adj / dist ** 3
        idx = np.arange(loc.shape[1])
        inv3[:, idx, idx] = 0.0
        f = (inv3[..., None] * diff).sum(axis=2)
    return np.clip(f, -MAX_F, MAX_F)


def _particles(kind: str, n_sims: int, n_balls: int, box: float, k: float, n_frames: int, sample_every: int,
               dt: float, vel_norm: float, seed: int) -> Trajectories:
    n_sims = _check_int("n_sims", n_sims, 1)
    n_balls = _check_int("n_balls", n_balls, 2)
    n_frames = _check_int("n_frames", n_frames, 2)
    sample_every = _check_int("sample_every", sample_every, 1)
    box, k, dt, vel_norm = (_check_pos(n, v) for n, v in
                            (("box", box), ("k", k), ("dt", dt), ("vel_norm", vel_norm)))
    rng = np.random.default_rng(check_seed(seed))
    if kind == "springs":
        upper = np.triu(rng.random((n_sims, n_balls, n_balls)) < 0.5, 1)
        adj = (upper | upper.transpose(0, 2, 1)).astype(np.float64)
        strength = k * adj
    else:
        q = np.where(rng.random((n_sims, n_balls)) < 0.5, -1.0, 1.0)
        adj = q[:, :, None] * q[:, None, :]
        adj[:, np.arange(n_balls), np.arange(n_balls)] = 0.0
        strength = k * adj
    loc, vel = _initial_state(rng, n_sims, n_balls, box, vel_norm)
    _reflect(loc, vel, box)
    out = np.empty((n_sims, n_balls, n_frames, 4))
    out[:, :, 0, :2], out[:, :, 0, 2:] = loc, vel
    vel = vel + dt * _forces(kind, loc, strength)
    step, frame = 1, 1
    while frame < n_frames:
        loc = loc + dt * vel
        _reflect(loc, vel, box)
        if step % sample_every == 0:
            out[:, :, frame, :2], out[:, :, frame, 2:] = loc, vel
            frame += 1
        vel = vel + dt * _forces(kind, loc, strength)
        step += 1
    times = np.arange(n_frames) * sample_every * dt
    params = {"n_balls": n_balls, "box": box, "k": k, "n_frames": n_frames, "sample_every": sample_every,
              "dt": dt, "vel_norm": vel_norm, "seed": seed}
    return Trajectories(out, times, adj, kind, params, tuple(f"ball{i}" for i in range(n_balls)))


def simulate_springs(n_sims: int, *, n_balls: int = 5, box: float = 5.0, k: float = 0.1, n_frames: int = 120,
                     sample_every: int = 100, dt: float = DT, vel_norm: float = 0.5, seed: int = 0
                     ) -> Trajectories:
    """Balls joined by springs (each pair with probability 1/2) in a box with elastic walls.

    .. math:: F_i = -k \\sum_j A_{ij} (x_i - x_j), \\quad |F| \\le 100

    semi-implicit Euler with step ``dt``, one frame kept every ``sample_every`` steps.

    References: Kipf et al. 2018 (NRI ``SpringSim``); Zhang et al. 2025, physics tasks.
    """
    return _particles("springs", n_sims, n_balls, box, k, n_frames, sample_every, dt, vel_norm, seed)


def simulate_charged(n_sims: int, *, n_balls: int = 3, box: float = 10.0, k: float = 1.0, n_frames: int = 120,
                     sample_every: int = 100, dt: float = DT, vel_norm: float = 0.5, seed: int = 0
                     ) -> Trajectories:
    """Charged balls (charges ±1 with probability 1/2) in a box with elastic walls.

    .. math:: F_i = k \\sum_j q_i q_j \\frac{x_i - x_j}{\\lVert x_i - x_j \\rVert^3}, \\quad |F| \\le 100

    References: Kipf et al. 2018 (NRI ``ChargedParticlesSim``); Zhang et al. 2025, physics tasks.
    """
    return _particles("charged", n_sims, n_balls, box, k, n_frames, sample_every, dt, vel_norm, seed)


def springs_energy(traj: Trajectories) -> np.ndarray:
    """Total energy per simulation and frame, ``(S, T)``, of a springs simulation:

    .. math:: E = \\tfrac12 \\sum_i \\lVert v_i \\rVert^2 + \\tfrac{k}{2} \\sum_{i<j} A_{ij} \\lVert x_i - x_j \\rVert^2
    """
    if traj.system != "springs":
        raise ValueError(f"traj must be a springs simulation, got system {traj.system!r}")
    x, v = traj.values[..., :2], traj.values[..., 2:]
    kin = 0.5 * (v ** 2).sum(axis=(-1, 1))
    diff = x[:, :, None] - x[:, None, :]
    pot = 0.25 * traj.params["k"] * (traj.adjacency[:, :, :, None] * (diff ** 2).sum(-1)).sum(axis=(1, 2))
    return kin + pot


# ------------------------------------------------------------------------------------- mass-action networks
@dataclasses.dataclass(frozen=True)
class Reaction:
    """One mass-action reaction ``reactants -> products`` with rate constant parameter ``rate`` (a name)."""

    reactants: tuple[str, ...]
    products: tuple[str, ...]
    rate: str


@dataclasses.dataclass(frozen=True)
class MassActionNetwork:
    """A mass-action reaction network.

    .. math:: \\dot x = S\\, v(x), \\quad v_r(x) = k_r \\prod_{s \\in \\mathrm{reactants}(r)} x_s

    ``conserved_moieties()`` returns a basis W of the left null space of S (W S = 0), so ``W x(t)`` is constant.
    """

    name: str
    species: tuple[str, ...]
    reactions: tuple[Reaction, ...]
    default_rates: dict[str, float]
    default_initial: dict[str, float]

    def __post_init__(self) -> None:
        known = set(self.species)
        for r in self.reactions:
            bad = [s for s in (*r.reactants, *r.products) if s not in known]
            if bad:
                raise ValueError(f"reaction {r} names unknown species {bad}")
            if r.rate not in self.default_rates:
                raise ValueError(f"reaction {r} names unknown rate {r.rate!r}")

    @property
    def stoichiometry(self) -> np.ndarray:
        """(n_species, n_reactions) net stoichiometric matrix S."""
        idx = {s: i for i, s in enumerate(self.species)}
        mat = np.zeros((len(self.species), len(self.reactions)))
        for j, r in enumerate(self.reactions):
            for s in r.reactants:
                mat[idx[s], j] -= 1
            for s in r.products:
                mat[idx[s], j] += 1
        return mat

    def conserved_moieties(self) -> np.ndarray:
        """(n_conserved, n_species) orthonormal basis of the left null space of S."""
        u, sv, _ = np.linalg.svd(self.stoichiometry)
        rank = int((sv > 1e-10).sum())
        return u[:, rank:].T

    def to_graph(self, *, hops: int = 1, selected: Sequence[str] | None = None) -> np.ndarray:
        """Species adjacency from the reaction list, the Bio-CDL rule: reactant-reactant, reactant-product and
        product-product pairs of every reaction are linked; optionally raised to ``hops`` and restricted to the
        ``selected`` species. Returns a symmetric 0/1 matrix with a zero diagonal."""
        hops = _check_int("hops", hops, 1)
        idx = {s: i for i, s in enumerate(self.species)}
        n = len(self.species)
        a = np.zeros((n, n), dtype=bool)
        for r in self.reactions:
            members = [idx[s] for s in (*r.reactants, *r.products)]
            for i in members:
                a[i, members] = True
        reach = a.copy()
        for _ in range(hops - 1):
            reach = reach | ((reach.astype(int) @ a.astype(int)) > 0)
        np.fill_diagonal(reach, False)
        if selected is not None:
            bad = [s for s in selected if s not in idx]
            if bad:
                raise ValueError(f"selected names unknown species {bad}; known: {list(self.species)}")
            keep = [idx[s] for s in selected]
            reach = reach[np.ix_(keep, keep)]
        return reach.astype(np.float64)

    def _index(self) -> tuple[list[np.ndarray], np.ndarray]:
        idx = {s: i for i, s in enumerate(self.species)}
        reac = [np.array([idx[s] for s in r.reactants], dtype=np.int64) for r in self.reactions]
        return reac, self.stoichiometry

    def rhs(self, rates: np.ndarray):
        """``(f, jac)`` for ``solve_ivp``: the mass-action vector field and its Jacobian ``S dv/dx``."""
        reac, stoich = self._index()
        n_r = len(reac)

        def flux(x: np.ndarray) -> np.ndarray:
            v = rates.copy()
            for j, rs in enumerate(reac):
                for s in rs:
                    v[j] *= x[s]
            return v

        def f(_t: float, x: np.ndarray) -> np.ndarray:
            return stoich @ flux(x)

        def jac(_t: float, x: np.ndarray) -> np.ndarray:
            dv = np.zeros((n_r, x.size))
            for j, rs in enumerate(reac):
                for a_pos, s in enumerate(rs):
                    others = np.delete(rs, a_pos)
                    dv[j, s] += rates[j] * np.prod(x[others])
            return stoich @ dv

        return f, jac


def _egfr() -> MassActionNetwork:
    # Dimer species D_<y1>_<y2>: Y1 in {u, p, pG} (Grb2 bound to pY1), Y2 in {u, p, pSu, pSp} (ShcU/ShcP bound)
    y1s, y2s = ("u", "p", "pG"), ("u", "p", "pSu", "pSp")
    dimers = [f"D_{a}_{b}" for a in y1s for b in y2s]
    species = ("L", "R", "LR", "Grb2", "ShcU", "ShcP", *dimers)
    rx: list[Reaction] = [
        Reaction(("L", "R"), ("LR",), "kp_LR"), Reaction(("LR",), ("L", "R"), "km_LR"),
        Reaction(("LR", "LR"), ("D_u_u",), "kp_D"), Reaction(("D_u_u",), ("LR", "LR"), "km_D"),
        Reaction(("ShcP",), ("ShcU",), "k_ShcP_dephos"),
    ]
    for b in y2s:  # Y1 phosphorylation / dephosphorylation and Grb2 binding
        rx += [Reaction((f"D_u_{b}",), (f"D_p_{b}",), "kp_Y1"), Reaction((f"D_p_{b}",), (f"D_u_{b}",), "km_Y1"),
               Reaction((f"D_p_{b}", "Grb2"), (f"D_pG_{b}",), "kp_Grb2"),
               Reaction((f"D_pG_{b}",), (f"D_p_{b}", "Grb2"), "km_Grb2")]
    for a in y1s:  # Y2 phosphorylation / dephosphorylation, ShcU/ShcP binding, Shc phosphorylation on receptor
        rx += [Reaction((f"D_{a}_u",), (f"D_{a}_p",), "kp_Y2"), Reaction((f"D_{a}_p",), (f"D_{a}_u",), "km_Y2"),
               Reaction((f"D_{a}_p", "ShcU"), (f"D_{a}_pSu",), "kp_ShcU"),
               Reaction((f"D_{a}_pSu",), (f"D_{a}_p", "ShcU"), "km_ShcU"),
               Reaction((f"D_{a}_p", "ShcP"), (f"D_{a}_pSp",), "kp_ShcP"),
               Reaction((f"D_{a}_pSp",), (f"D_{a}_p", "ShcP"), "km_ShcP"),
               Reaction((f"D_{a}_pSu",), (f"D_{a}_pSp",), "k_Shc_phos")]
    rates = {"kp_LR": 0.003, "km_LR": 0.06, "kp_D": 0.001, "km_D": 0.1, "kp_Y1": 0.5, "km_Y1": 4.5,
             "kp_Y2": 0.5, "km_Y2": 4.5, "kp_Grb2": 0.001, "km_Grb2": 0.05, "kp_ShcU": 0.045, "km_ShcU": 0.6,
             "kp_ShcP": 4.5e-4, "km_ShcP": 0.3, "k_Shc_phos": 3.0, "k_ShcP_dephos": 0.005}
    init = {s: 0.0 for s in species}
    init.update({"Grb2": 100.0, "L": 680.0, "R": 58.0, "ShcP": 0.0, "ShcU": 150.0})
    return MassActionNetwork("egfr", species, tuple(rx), rates, init)


def _ran() -> MassActionNetwork:
    # cargo C with three sites p1..p3 modified in sequence (C0 -> C1 -> C2 -> C3) in the cytosol; fully modified
    # cargo binds Ran in the cytosol, the complex crosses the envelope, is released by Ran in the nucleus, and
    # nuclear Ran is captured by RCC1. Export of C and Ran closes the cycle.
    species = ("C0", "C1", "C2", "C3", "Ran_cyt", "Ran_C_cyt", "Ran_C_nuc", "Ran_nuc", "C_nuc", "RCC1",
               "Ran_RCC1")
    rx = (
        Reaction(("C0",), ("C1",), "kf_p1"), Reaction(("C1",), ("C0",), "kr_p1"),
        Reaction(("C1",), ("C2",), "kf_p2"), Reaction(("C2",), ("C1",), "kr_p2"),
        Reaction(("C2",), ("C3",), "kf_p3"), Reaction(("C3",), ("C2",), "kr_p3"),
        Reaction(("Ran_cyt", "C3"), ("Ran_C_cyt",), "kf_cyt"), Reaction(("Ran_C_cyt",), ("Ran_cyt", "C3"), "kr_cyt"),
        Reaction(("Ran_C_cyt",), ("Ran_C_nuc",), "k_import"), Reaction(("Ran_C_nuc",), ("Ran_C_cyt",), "k_export"),
        Reaction(("Ran_C_nuc",), ("Ran_nuc", "C_nuc"), "kr_nuc"), Reaction(("Ran_nuc", "C_nuc"), ("Ran_C_nuc",),
                                                                          "kf_nuc"),
        Reaction(("Ran_nuc", "RCC1"), ("Ran_RCC1",), "kf_RCC1"), Reaction(("Ran_RCC1",), ("Ran_nuc", "RCC1"),
                                                                         "kr_RCC1"),
        Reaction(("C_nuc",), ("C0",), "k_C_out"), Reaction(("Ran_nuc",), ("Ran_cyt",), "k_Ran_out"),
    )
    rates = {"kf_p1": 10.0, "kr_p1": 1.0, "kf_p2": 10.0, "kr_p2": 1.0, "kf_p3": 10.0, "kr_p3": 1.0,
             "kf_cyt": 1.0, "kr_cyt": 100.0, "kf_nuc": 1.0, "kr_nuc": 100.0, "kf_RCC1": 1.0, "kr_RCC1": 100.0,
             "k_import": 1.0, "k_export": 0.5, "k_C_out": 0.5, "k_Ran_out": 0.5}
    init = {s: 0.0 for s in species}
    init.update({"C0": 1e-3, "Ran_cyt": 1e-3, "Ran_C_nuc": 5e-4, "RCC1": 5e-4})
    return MassActionNetwork("ran", species, rx, rates, init)


def egfr_network() -> MassActionNetwork:
    """The EGFR signalling network (mass-action re-derivation of VCell's ``Rule-based_egfr_tutorial``):
    ligand binding, receptor dimerisation, Y1/Y2 (de)phosphorylation, Grb2 binding to pY1, ShcU/ShcP binding to
    pY2, Shc phosphorylation on the receptor and ShcP dephosphorylation; 18 species, default rates of the note."""
    return _egfr()


def ran_network() -> MassActionNetwork:
    """Ran nuclear transport (mass-action re-derivation of VCell's ``rule-based_Ran_transport``): cargo sites
    p1..p3, Ran-cargo binding in cytosol and nucleus, Ran-RCC1 binding, transport across the envelope."""
    return _ran()


#: The published randomisation: per-simulation initial amounts and per-config rates.
_BIO_RANDOM = {
    # EGFR: initial amounts U[±90%] per simulation; rates ±50% per config (drawn, but the released config
    # generator does not write them, so by default configs differ only in initial conditions)
    "egfr": {"initial": {s: (0.1, 1.9) for s in ("Grb2", "L", "R", "ShcU")},
             "rates": {}, "t_end": 20.0},
    # Ran: rates drawn once per config; initial Ran_C_nuc and RCC1 U[0, 1e-3] µM per simulation
    "ran": {"initial_abs": {"Ran_C_nuc": (0.0, 1e-3), "RCC1": (0.0, 1e-3)},
            "rates": {**{f"kf_p{i}": (5.0, 15.0) for i in (1, 2, 3)}, **{f"kr_p{i}": (0.5, 1.5) for i in (1, 2, 3)},
                      **{f"kf_{s}": (0.5, 1.5) for s in ("cyt", "nuc", "RCC1")},
                      **{f"kr_{s}": (50.0, 150.0) for s in ("cyt", "nuc", "RCC1")}},
            "t_end": 2.0},
}


def simulate_network(net: MassActionNetwork, initial: np.ndarray, rates: np.ndarray, times: np.ndarray, *,
                     method: str = "BDF", rtol: float = 1e-9, atol: float = 1e-14) -> np.ndarray:
    """Integrate the network from each row of ``initial`` (S, n_species) with ``rates`` (n_reactions,) and
    return ``(S, n_species, T)`` concentrations at ``times``. Stiff solvers only (``BDF``, ``LSODA``,
    ``Radau``), with the analytic Jacobian."""
    from scipy.integrate import solve_ivp  # noqa: PLC0415 - scipy is only needed by the biology simulators

    if method not in ("BDF", "LSODA", "Radau"):
        raise ValueError(f"method must be 'BDF', 'LSODA' or 'Radau' (a stiff solver), got {method!r}")
    initial = np.atleast_2d(np.asarray(initial, dtype=np.float64))
    if initial.shape[1] != len(net.species) or not np.all(np.isfinite(initial)) or np.any(initial < 0):
        raise ValueError(f"initial must be finite, non-negative, of shape (S, {len(net.species)}), got "
                         f"{initial.shape}")
    f, jac = net.rhs(np.asarray(rates, dtype=np.float64))
    out = np.empty((initial.shape[0], len(net.species), len(times)))
    for i, x0 in enumerate(initial):
        sol = solve_ivp(f, (float(times[0]), float(times[-1])), x0, method=method, t_eval=times, jac=jac,
                        rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"{net.name}: solve_ivp failed on simulation {i}: {sol.message}")
        out[i] = sol.y
    return out


def _bio(kind: str, n_sims: int, *, n_frames: int, config_seed: int, seed: int,
         randomise_rates: bool, method: str) -> Trajectories:
    n_sims = _check_int("n_sims", n_sims, 1)
    n_frames = _check_int("n_frames", n_frames, 2)
    net = egfr_network() if kind == "egfr" else ran_network()
    spec = _BIO_RANDOM[kind]
    rng_cfg = np.random.default_rng(check_seed(config_seed, "config_seed"))
    rates = dict(net.default_rates)
    ranges = dict(spec["rates"])
    if kind == "egfr" and randomise_rates:
        ranges = {k: (0.5 * v, 1.5 * v) for k, v in net.default_rates.items()}
    for name, (lo, hi) in ranges.items():
        rates[name] = float(rng_cfg.uniform(lo, hi))
    rng = np.random.default_rng(check_seed(seed))
    x0 = np.tile([net.default_initial[s] for s in net.species], (n_sims, 1))
    for name, (lo, hi) in spec.get("initial", {}).items():
        j = net.species.index(name)
        x0[:, j] = net.default_initial[name] * rng.uniform(lo, hi, n_sims)
    for name, (lo, hi) in spec.get("initial_abs", {}).items():
        x0[:, net.species.index(name)] = rng.uniform(lo, hi, n_sims)
    times = np.linspace(0.0, spec["t_end"], n_frames)
    rate_vec = np.array([rates[r.rate] for r in net.reactions])
    vals = simulate_network(net, x0, rate_vec, times, method=method)
    adj = np.broadcast_to(net.to_graph(), (n_sims, len(net.species), len(net.species))).copy()
    params = {"n_frames": n_frames, "config_seed": config_seed, "seed": seed, "rates": rates,
              "randomise_rates": randomise_rates, "method": method, "t_end": spec["t_end"]}
    return Trajectories(vals[..., None], times, adj, kind, params, net.species)


def simulate_egfr(n_sims: int, *, n_frames: int = 100, config_seed: int = 0, seed: int = 0,
                  randomise_rates: bool = False, method: str = "BDF") -> Trajectories:
    """EGFR trajectories: initial Grb2, L, R, ShcU drawn U[±90%] of 100, 680, 58, 150 nM per simulation.

    ``randomise_rates=True`` also draws every rate at ±50% per config (``config_seed``), which the released
    config generator draws but never writes (so the reference's configs differ only in initial amounts).
    """
    return _bio("egfr", n_sims, n_frames=n_frames, config_seed=config_seed, seed=seed,
                randomise_rates=randomise_rates, method=method)


def simulate_ran(n_sims: int, *, n_frames: int = 100, config_seed: int = 0, seed: int = 0,
                 method: str = "BDF") -> Trajectories:
    """Ran transport trajectories: rates drawn once per config (``config_seed``; C_p forward U[5, 15], reverse
    U[0.5, 1.5]; Ran-C and Ran-RCC1 forward U[0.5, 1.5], reverse U[50, 150]); initial Ran_C_nuc and RCC1 drawn
    U[0, 1e-3] µM per simulation."""
    return _bio("ran", n_sims, n_frames=n_frames, config_seed=config_seed, seed=seed, randomise_rates=False,
                method=method)


SYSTEMS = ("springs", "charged", "egfr", "ran")


def simulate_system(system: str, n_sims: int, *, seed: int = 0, **kwargs: Any) -> Trajectories:
    """Dispatch by name: ``springs``, ``charged``, ``egfr`` or ``ran``."""
    makers = {"springs": simulate_springs, "charged": simulate_charged, "egfr": simulate_egfr,
              "ran": simulate_ran}
    if system not in makers:
        raise ValueError(f"system must be one of {list(makers)}, got {system!r}")
    return makers[system](n_sims, seed=seed, **kwargs)


def simulate_oscillators(n_sims: int, *, omega: float, n_objects: int = 3, n_frames: int = 60,
                         dt: float | None = None, seed: int = 0) -> Trajectories:
    """Uncoupled harmonic oscillators as a user would hand them over (issue 62's two-oscillator arrays):
    ``x = A cos(omega t + phi)``, ``v = -A omega sin(omega t + phi)`` per object with ``A ~ U[0.5, 1.5]`` and
    ``phi ~ U[0, 2 pi)``, built by :meth:`Trajectories.from_arrays` (positions and velocities, no edges).
    ``dt=None`` leaves the times out (frame numbers ``0, 1, ...``, the from_arrays default: ``omega`` is then
    in radians per frame); a number gives frames ``dt`` apart (``omega`` in radians per unit of time)."""
    n_sims = _check_int("n_sims", n_sims, 1)
    n_objects = _check_int("n_objects", n_objects, 1)
    n_frames = _check_int("n_frames", n_frames, 3)
    omega = _check_pos("omega", omega)
    rng = np.random.default_rng(check_seed(seed))
    t = np.arange(n_frames, dtype=np.float64) * (1.0 if dt is None else _check_pos("dt", dt))
    amp = rng.uniform(0.5, 1.5, (n_sims, n_objects, 1))
    phase = rng.uniform(0.0, 2 * np.pi, (n_sims, n_objects, 1))
    x = amp * np.cos(omega * t + phase)
    v = -amp * omega * np.sin(omega * t + phase)
    return Trajectories.from_arrays(positions=x[..., None], velocities=v[..., None],
                                    times=None if dt is None else t, edges=[], system=f"oscillators-w{omega:g}",
                                    params={"omega": omega, "dt": dt, "seed": seed})
