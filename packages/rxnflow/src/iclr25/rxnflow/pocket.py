"""Pocket-specific optimisation on a CPU docking proxy (the paper docks with UniDock on a GPU).

The proxy itself (:class:`~iclr25.rxnflow.rewards.Pocket`, :data:`POCKETS`, :func:`proxy_score`,
:func:`pocket_reward`; ``--reward pocket:NAME``) lives in :mod:`iclr25.rxnflow.rewards`: a pocket holds a volume,
H-bond donor and acceptor partner sites, aromatic stacking sites and a preferred logP, and the score is Vina-like
(kcal/mol, lower is better). It is a descriptor surrogate, not a physics-based docking score; its numbers are not
Vina's. :func:`pocket_vs_screening` runs the paper's pocket-specific comparison at small scale: RxnFlow against
enumerate-and-rank screening at the same number of distinct oracle calls.

:func:`docking_comparison` runs it on a real pocket with AutoDock Vina (the ``docking`` extra; default T4 lysozyme
L99A): RxnFlow, enumerate-and-rank random synthesis (the reaction-based baseline) and a BRICS fragment GA (the
fragment-based generator without synthesis constraints, :mod:`iclr25.rxnflow.fragments`), each until the same
number of distinct molecules was docked, scored by the top-k diverse Vina score, diversity, route replay and SA.
"""

from __future__ import annotations

import dataclasses

from .rewards import POCKETS, Pocket, pocket_reward, proxy_score

__all__ = ["Pocket", "POCKETS", "PocketRun", "proxy_score", "pocket_reward", "pocket_vs_screening", "BudgetSpent",
           "OracleBudget", "MethodRun", "top_k_docking", "rxnflow_docking", "random_synthesis_docking",
           "fragment_docking", "DockingComparison", "docking_space", "docking_comparison",
           "DOCKING_MAX_BLOCK_HEAVY"]


@dataclasses.dataclass(frozen=True)
class PocketRun:
    """One pocket-specific optimisation against enumerate-and-rank at the same oracle budget: the mean proxy
    score of the top-``k`` diverse modes of RxnFlow (every molecule it docked while training) and of screening
    (as many distinct random-synthesis products, the best kept), and the budget ``oracle_calls``."""

    pocket: str
    ours: float
    screening: float
    oracle_calls: int
    steps: int


def pocket_vs_screening(space, pocket: str, *, steps: int, seed: int = 0, k: int = 30, beta: float = 16.0,
                        rho: float = 0.1, batch_size: int = 64, min_sampling: int = 10, device=None) -> PocketRun:
    """Train RxnFlow on ``pocket``'s proxy reward for ``steps`` TB steps and compare its top-``k`` diverse
    modes with enumerate-and-rank screening of the same number of distinct molecules (the strongest simple
    method at an equal oracle budget). The policy trains on ``device`` (``None``: ``$ICLR25_DEVICE``, else
    ``auto``); the proxy and RDKit's reactions run on the CPU."""
    import numpy as np
    import torch

    from .chem import mol_from_smiles
    from .gflownet import RxnFlow, TrainConfig, train
    from .rewards import Reward
    from .toy import diverse_top_k, random_synthesis

    torch.manual_seed(seed)
    found = Reward(f"pocket:{pocket}", pocket_reward(pocket))  # its cache: every molecule docked while training
    model = RxnFlow(space, found, beta=beta, seed=seed, device=device)
    res = train(model, TrainConfig(steps=steps, batch_size=batch_size, rho=rho, min_sampling=min_sampling, beta=beta),
                seed=seed, show_progress=False)
    n = len(found.cache)
    screened = Reward(f"pocket:{pocket}", pocket_reward(pocket))
    scout = RxnFlow(space, screened, beta=beta, seed=seed, device=model.device)
    draw = 0
    while len(screened.cache) < n:
        random_synthesis(scout, 256, seed=10_000 * (seed + 1) + draw)
        draw += 1

    def modes(cache: dict) -> float:
        smiles, rewards = list(cache)[:n], list(cache.values())[:n]
        idx = diverse_top_k(smiles, rewards, k=k)
        return float(np.mean([proxy_score(mol_from_smiles(smiles[i]), POCKETS[pocket]) for i in idx]))

    return PocketRun(pocket, modes(found.cache), modes(screened.cache), n, res.steps)


# ------------------------------------------------------------------------------------ docking a real pocket
class BudgetSpent(Exception):
    """Raised by :class:`OracleBudget` when a method asks for one distinct molecule more than its budget."""


class OracleBudget:
    """One method's view of a shared docking oracle (``score(smiles) -> kcal/mol or None``, cached by the
    oracle): it counts the distinct molecules this method asked for, in order (``calls``), and raises
    :class:`BudgetSpent` at the first new molecule past ``budget``. A molecule another method docked before
    costs no CPU, but counts as a call of this method too."""

    def __init__(self, score, budget: int):
        self.score, self.budget = score, int(budget)
        self.calls: dict[str, float | None] = {}

    def __call__(self, smiles: str) -> float | None:
        if smiles in self.calls:
            return self.calls[smiles]
        if len(self.calls) >= self.budget:
            raise BudgetSpent(smiles)
        v = self.score(smiles)
        self.calls[smiles] = v
        return v


@dataclasses.dataclass(frozen=True)
class MethodRun:
    """The molecules a method docked, in the order of its oracle calls, their Vina scores (``None``: could not be
    prepared) and, where it has one, each molecule's synthesis route (``None`` for a molecule without one)."""

    name: str
    smiles: tuple[str, ...]
    scores: tuple[float | None, ...]
    routes: tuple[dict | None, ...]


def top_k_docking(run: MethodRun, budget: int, *, k: int = 10) -> dict[str, float]:
    """Metrics of the first ``budget`` oracle calls of ``run``: the mean Vina score of the top-``k`` diverse
    molecules (Tanimoto < 0.5 to each other, :func:`~iclr25.rxnflow.toy.diverse_top_k`), their diversity, the
    fraction of them whose synthesis route replays in RDKit to the same molecule (0 for a molecule without a
    route), and their mean SA score (1 easy ... 10 hard)."""
    import numpy as np

    from .chem import mol_from_smiles
    from .rewards import sa_score
    from .routes import verify_route
    from .toy import diverse_top_k, diversity

    n = min(budget, len(run.smiles))
    ok = [i for i in range(n) if run.scores[i] is not None]
    idx = [ok[j] for j in diverse_top_k([run.smiles[i] for i in ok], [-run.scores[i] for i in ok], k=k)]
    if not idx:
        return {"top_k_vina": float("nan"), "diversity": float("nan"), "replay": float("nan"), "sa": float("nan"),
                "n": 0.0, "calls": float(n)}
    return {"top_k_vina": float(np.mean([run.scores[i] for i in idx])),
            "diversity": float(diversity([run.smiles[i] for i in idx])) if len(idx) > 1 else float("nan"),
            "replay": float(np.mean([run.routes[i] is not None and verify_route(run.routes[i]) for i in idx])),
            "sa": float(np.mean([sa_score(mol_from_smiles(run.smiles[i])) for i in idx])),
            "n": float(len(idx)), "calls": float(n)}


def rxnflow_docking(space, oracle, budget: int, *, seed: int = 0, beta: float = 16.0, rho: float = 0.1,
                    batch_size: int = 4, min_sampling: int = 10, lr: float = 1e-3, device=None) -> MethodRun:
    """RxnFlow trained with trajectory balance on the docking reward ``-0.1 * min(0, Vina)`` until ``budget``
    distinct molecules were docked (``oracle``: SMILES -> kcal/mol or None); every molecule it docked while
    training, in order, with its route."""
    import torch
    from rdkit import Chem

    from .gflownet import RxnFlow, TrainConfig, train
    from .rewards import Reward

    counted = OracleBudget(oracle, budget)

    def fn(mol) -> float:
        v = counted(Chem.MolToSmiles(mol))
        return 0.0 if v is None else -0.1 * min(0.0, v)

    torch.manual_seed(seed)
    model = RxnFlow(space, Reward("vina", fn), beta=beta, seed=seed, device=device)
    routes: dict[str, dict] = {}
    plain = model.log_rewards

    def log_rewards(trajs):
        for t in trajs:
            if t.smiles is not None and not t.failed:
                routes.setdefault(Chem.MolToSmiles(Chem.MolFromSmiles(t.smiles)), t.route)
        return plain(trajs)

    model.log_rewards = log_rewards
    steps = 10 * budget // batch_size + 10  # more than the budget allows: training stops when it is spent
    try:
        train(model, TrainConfig(steps=steps, batch_size=batch_size, rho=rho, min_sampling=min_sampling, beta=beta,
                                 lr=lr), seed=seed, show_progress=False)
    except BudgetSpent:
        pass
    smiles = tuple(counted.calls)
    return MethodRun("RxnFlow", smiles, tuple(counted.calls.values()), tuple(routes.get(s) for s in smiles))


def random_synthesis_docking(space, oracle, budget: int, *, seed: int = 0, batch_size: int = 16) -> MethodRun:
    """Enumerate-and-rank (the reaction-based baseline): uniform-random synthesis in the same space (a uniform
    protocol, then a uniform action, the reference's random action) until ``budget`` distinct molecules were
    docked; each molecule with its route."""
    import numpy as np
    import torch
    from rdkit import Chem

    from .gflownet import RxnFlow

    counted = OracleBudget(oracle, budget)
    scout = RxnFlow(space, "qed", seed=seed)
    rng = np.random.default_rng(10_000 * (seed + 1))
    routes: dict[str, dict] = {}
    with torch.no_grad():
        for _ in range(100 * budget):
            trajs, _, _ = scout._rollout(batch_size, np.full(batch_size, scout.beta), rng, rho=1.0, min_sampling=1,
                                         eps=1.0)
            try:
                for t in trajs:
                    if t.smiles is None or t.failed:
                        continue
                    smi = Chem.MolToSmiles(Chem.MolFromSmiles(t.smiles))
                    routes.setdefault(smi, t.route)
                    counted(smi)
            except BudgetSpent:
                break
    smiles = tuple(counted.calls)
    return MethodRun("random synthesis", smiles, tuple(counted.calls.values()), tuple(routes.get(s) for s in smiles))


def fragment_docking(blocks, oracle, budget: int, *, seed: int = 0, max_heavy: int = 30,
                     search: bool = True) -> MethodRun:
    """The fragment-based generator without synthesis constraints (:func:`~iclr25.rxnflow.fragments.fragment_ga`
    on the BRICS fragments of the same building blocks) until ``budget`` distinct molecules were docked; its
    molecules have no route. ``search=False``: the GA's random start only (random 1-2 fragment molecules, no
    selection), an ablation of its search."""
    from .fragments import brics_fragments, fragment_ga

    counted = OracleBudget(oracle, budget)
    try:
        fragment_ga(brics_fragments(list(blocks.smiles)), counted, budget, seed=seed, max_heavy=max_heavy,
                    n_init=min(20, max(4, budget // 4)) if search else budget)
    except BudgetSpent:  # the GA stops itself at the budget; a child past it is not docked
        pass
    smiles = tuple(counted.calls)
    return MethodRun("fragment GA" if search else "random fragments", smiles, tuple(counted.calls.values()),
                     tuple(None for _ in smiles))


#: the docking comparison's library: the built-in blocks of at most this many heavy atoms (T4 lysozyme L99A's
#: cavity holds benzene-sized ligands; 2-block products of these stay fragment- to lead-sized)
DOCKING_MAX_BLOCK_HEAVY = 9


@dataclasses.dataclass(frozen=True)
class DockingComparison:
    """RxnFlow against a fragment-based generator and a reaction-based baseline at the same number of distinct
    Vina calls on one pocket: each method's run (:class:`MethodRun`), the oracle's CPU seconds per call, and the
    target's name."""

    target: str
    budget: int
    runs: dict
    cpu_per_call: tuple[float, ...]
    setup_cpu_s: float

    def metrics(self, budget: int | None = None, k: int = 10) -> dict[str, dict[str, float]]:
        """:func:`top_k_docking` of every method at ``budget`` calls (default: the whole budget)."""
        return {name: top_k_docking(run, self.budget if budget is None else budget, k=k)
                for name, run in self.runs.items()}


def docking_space(max_heavy: int = DOCKING_MAX_BLOCK_HEAVY, *, max_len: int = 2):
    """The docking comparison's synthesis space: the built-in blocks of at most ``max_heavy`` heavy atoms, the
    built-in templates, at most ``max_len`` blocks."""
    from rdkit import Chem

    from .blocks import BlockLibrary, builtin_blocks
    from .space import SynthesisSpace
    from .templates import builtin_templates

    lib = builtin_blocks(None, seed=0)
    small = [s for s in lib.smiles if Chem.MolFromSmiles(s).GetNumHeavyAtoms() <= max_heavy]
    return SynthesisSpace(BlockLibrary.from_smiles(small, source=f"built-in blocks <= {max_heavy} heavy atoms"),
                          builtin_templates(), max_len=max_len, allow_dead=True)


def docking_comparison(budget: int, *, seed: int = 0, exhaustiveness: int = 1, target=None, space=None,
                       methods: tuple[str, ...] = ("rxnflow", "random", "fragments"), rxnflow_kw: dict | None = None,
                       cache=None, device=None) -> DockingComparison:
    """The paper's pocket-specific comparison on a real pocket with AutoDock Vina (``target``: a
    :class:`~iclr25.rxnflow.docking.Target`, default T4 lysozyme L99A): RxnFlow (:func:`rxnflow_docking`),
    enumerate-and-rank random synthesis (:func:`random_synthesis_docking`) and the fragment GA
    (:func:`fragment_docking`), each until ``budget`` distinct molecules were docked, one shared Vina oracle
    (``exhaustiveness``, ``seed``; a molecule is docked once). The fragment GA's molecules are capped at the
    largest product the reaction space can make (twice the largest block). ``cache``: a Vina score file
    (:meth:`~iclr25.rxnflow.docking.VinaOracle.save_cache`; read when it exists, then written), so a rerun docks
    nothing twice; the CPU seconds per call are those measured when each molecule was docked."""
    import tempfile
    from pathlib import Path

    from rdkit import Chem

    from .docking import VinaOracle, receptor_pdbqt, t4_lysozyme

    target = t4_lysozyme() if target is None else target
    space = docking_space() if space is None else space
    with tempfile.TemporaryDirectory() as tmp:
        rec = receptor_pdbqt(target.receptor_pdb, Path(tmp) / "receptor.pdbqt")
        oracle = VinaOracle(rec, target.center, target.size, exhaustiveness=exhaustiveness, seed=seed)
    oracle.receptor = Path(target.receptor_pdb)  # the cache key: the receptor's own file
    if cache is not None and Path(cache).is_file():
        oracle.load_cache(cache)
    runs = {}
    for m in methods:
        if m == "rxnflow":
            runs["RxnFlow"] = rxnflow_docking(space, oracle.score, budget, seed=seed, device=device,
                                              **(rxnflow_kw or {}))
        elif m == "random":
            runs["random synthesis"] = random_synthesis_docking(space, oracle.score, budget, seed=seed)
        elif m in ("fragments", "random-fragments"):
            big = space.max_len * max(Chem.MolFromSmiles(s).GetNumHeavyAtoms() for s in space.blocks.smiles)
            r = fragment_docking(space.blocks, oracle.score, budget, seed=seed, max_heavy=big,
                                 search=m == "fragments")
            runs[r.name] = r
        else:
            raise ValueError(f"methods: unknown method {m!r}; have rxnflow, random, fragments, random-fragments")
    if cache is not None:
        oracle.save_cache(cache)
    docked = dict.fromkeys(s for r in runs.values() for s in r.smiles)
    cpu = tuple(oracle.cpu_s[s] for s in docked if s in oracle.cpu_s)
    return DockingComparison(target.name, budget, runs, cpu, oracle.setup_cpu_s)
