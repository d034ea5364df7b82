"""Rewards of a finished molecule: QED, SA score, property windows and products of these; optional docking.

``parse_reward("qed*sa")`` builds a product; ``"logp[1,3]"`` is a window reward (1 inside [lo, hi], a Gaussian
decay of width (hi - lo)/2 outside). The SA reward is ``(10 - SA)/9`` (reference ``tasks``), SA from RDKit's
Contrib ``sascorer``. Docking (:class:`VinaReward`, :mod:`iclr25.rxnflow.docking`) needs the ``docking`` extra
(``vina``, ``meeko``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence

from rdkit import Chem
from rdkit.Chem import QED, Crippen, Descriptors, rdMolDescriptors

from .chem import mol_from_smiles

__all__ = ["Reward", "qed", "sa_reward", "sa_score", "window", "product", "parse_reward", "VinaReward",
           "REWARD_NAMES", "Pocket", "POCKETS", "proxy_score", "pocket_reward"]


@dataclasses.dataclass(frozen=True)
class Reward:
    """A named reward ``fn(mol) -> float >= 0``; calling it on SMILES caches the values."""

    name: str
    fn: Callable[[Chem.Mol], float]
    cache: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def __call__(self, smiles: str) -> float:
        v = self.cache.get(smiles)
        if v is None:
            mol = mol_from_smiles(smiles)
            v = 0.0 if mol is None else max(0.0, float(self.fn(mol)))
            self.cache[smiles] = v
        return v

    def many(self, smiles: Sequence[str]) -> list[float]:
        return [self(s) for s in smiles]


def qed(mol: Chem.Mol) -> float:
    """RDKit's quantitative estimate of drug-likeness (Bickerton et al. 2012), in (0, 1)."""
    return QED.qed(mol)


_SA = None


def sa_score(mol: Chem.Mol) -> float:
    """Ertl & Schuffenhauer's synthetic accessibility score (1 easy … 10 hard), RDKit Contrib ``sascorer``."""
    global _SA
    if _SA is None:
        import importlib
        import os
        import sys

        from rdkit.Chem import RDConfig

        sys.path.append(os.path.join(RDConfig.RDContribDir, "SA_Score"))
        _SA = importlib.import_module("sascorer")
    return float(_SA.calculateScore(mol))


def sa_reward(mol: Chem.Mol) -> float:
    """``(10 - SA) / 9`` in [0, 1] (higher is easier to make)."""
    return (10.0 - sa_score(mol)) / 9.0


_PROPS: dict[str, Callable[[Chem.Mol], float]] = {
    "logp": Crippen.MolLogP, "tpsa": rdMolDescriptors.CalcTPSA, "mw": Descriptors.MolWt,
    "hbd": rdMolDescriptors.CalcNumHBD, "hba": rdMolDescriptors.CalcNumHBA,
    "rotb": rdMolDescriptors.CalcNumRotatableBonds, "heavy": lambda m: m.GetNumHeavyAtoms(),
}
REWARD_NAMES = ("qed", "sa", "pocket:NAME", *(f"{p}[lo,hi]" for p in _PROPS))


def window(prop: str, lo: float, hi: float) -> Callable[[Chem.Mol], float]:
    """1 inside ``[lo, hi]`` of the property, ``exp(-d^2 / (2 s^2))`` outside, ``d`` the distance, ``s=(hi-lo)/2``."""
    if prop not in _PROPS:
        raise ValueError(f"reward: unknown property {prop!r}; have {sorted(_PROPS)}")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"reward: window {prop}[{lo},{hi}] needs finite lo < hi")
    f, s = _PROPS[prop], (hi - lo) / 2

    def fn(mol: Chem.Mol) -> float:
        v = f(mol)
        d = 0.0 if lo <= v <= hi else min(abs(v - lo), abs(v - hi))
        return math.exp(-d * d / (2 * s * s))

    return fn


def product(fns: Sequence[Callable[[Chem.Mol], float]]) -> Callable[[Chem.Mol], float]:
    """The product of rewards (the reference multiplies docking by QED)."""
    return lambda mol: math.prod(f(mol) for f in fns)


def parse_reward(spec: str | Reward | Callable[[Chem.Mol], float]) -> Reward:
    """``"qed"``, ``"sa"``, ``"logp[1,3]"``, a docking-proxy pocket ``"pocket:polar"`` (:mod:`.pocket`) or a
    product such as ``"qed*sa*tpsa[20,90]"``; a callable on
    molecules is wrapped as is."""
    if isinstance(spec, Reward):
        return spec
    if callable(spec):
        return Reward(getattr(spec, "__name__", "custom"), spec)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"reward must be a name like 'qed', 'sa', 'logp[1,3]' or 'qed*sa', got {spec!r}")
    parts = []
    for term in spec.replace(" ", "").lower().split("*"):
        if term == "qed":
            parts.append(qed)
        elif term == "sa":
            parts.append(sa_reward)
        elif term == "vina":
            raise ValueError("reward 'vina' needs a receptor and a box: VinaReward(receptor, center, size) in Python, "
                             "or --reward vina with --receptor/--center/--box on the command line")
        elif term.startswith("pocket:"):
            parts.append(pocket_reward(term[len("pocket:"):]))
        else:
            m = re.fullmatch(r"([a-z]+)\[([-+0-9.eE]+),([-+0-9.eE]+)\]", term)
            if not m:
                raise ValueError(f"reward: cannot parse {term!r} in {spec!r}; expected qed, sa, pocket:NAME, PROP[lo,hi] "
                                 f"with PROP one of {sorted(_PROPS)}, joined by '*'")
            parts.append(window(m.group(1), float(m.group(2)), float(m.group(3))))
    return Reward(spec, parts[0] if len(parts) == 1 else product(parts))


# ------------------------------------------------------------------------------------------- docking proxy
# A docking proxy for pocket-specific optimisation on a CPU (the paper docks with UniDock on a GPU): a pocket is
# described by what it can hold and offer (a volume of heavy atoms, H-bond donor and acceptor partner sites,
# aromatic stacking sites, a preferred lipophilicity); the score is Vina-like (kcal/mol, lower is better). Each
# buried heavy atom, satisfied H-bond partner and stacked aromatic ring lowers it; atoms beyond the volume (steric
# clash), unpaired polar groups (desolvation), rotatable bonds (entropy) and a logP away from the pocket's raise it.
# Different pockets prefer different molecules. It is a descriptor surrogate, not a physics-based docking score:
# it stands in for Vina so that the paper's pocket-specific comparison can run at small scale.
@dataclasses.dataclass(frozen=True)
class Pocket:
    """A pocket of the proxy: ``volume`` heavy atoms, ``donors``/``acceptors`` H-bond partner sites (for the
    ligand's donors and acceptors), ``aromatic`` stacking sites and a preferred ``logp``."""

    name: str
    volume: int
    donors: int
    acceptors: int
    aromatic: int
    logp: float


#: three pockets of different character (a small polar one, a large lipophilic one, a mixed one)
POCKETS = {
    "polar": Pocket("polar", volume=20, donors=3, acceptors=4, aromatic=1, logp=0.5),
    "lipophilic": Pocket("lipophilic", volume=30, donors=1, acceptors=2, aromatic=3, logp=4.0),
    "mixed": Pocket("mixed", volume=25, donors=2, acceptors=3, aromatic=2, logp=2.0),
}


def proxy_score(mol: Chem.Mol, pocket: Pocket) -> float:
    """The proxy's docking score of ``mol`` in ``pocket`` (kcal/mol-like, lower is better)."""
    heavy = mol.GetNumHeavyAtoms()
    hbd, hba = rdMolDescriptors.CalcNumHBD(mol), rdMolDescriptors.CalcNumHBA(mol)
    arom = rdMolDescriptors.CalcNumAromaticRings(mol)
    rot = rdMolDescriptors.CalcNumRotatableBonds(mol)
    logp = Crippen.MolLogP(mol)
    return (-0.3 * min(heavy, pocket.volume) + 0.5 * max(0, heavy - pocket.volume)
            - 0.6 * min(hbd, pocket.donors) + 0.4 * max(0, hbd - pocket.donors)
            - 0.45 * min(hba, pocket.acceptors) + 0.25 * max(0, hba - pocket.acceptors)
            - 0.8 * min(arom, pocket.aromatic) + 0.3 * max(0, arom - pocket.aromatic)
            + 0.15 * rot + 0.3 * abs(logp - pocket.logp))


def pocket_reward(pocket: str | Pocket):
    """``fn(mol) -> -0.1 * min(0, proxy_score)`` for a pocket of :data:`POCKETS` (by name) or a :class:`Pocket`."""
    if isinstance(pocket, str):
        if pocket not in POCKETS:
            raise ValueError(f"pocket: unknown pocket {pocket!r}; have {sorted(POCKETS)}")
        pocket = POCKETS[pocket]
    if not isinstance(pocket, Pocket):
        raise TypeError(f"pocket must be a name or a Pocket, got {type(pocket).__name__}")

    def fn(mol: Chem.Mol) -> float:
        return -0.1 * min(0.0, proxy_score(mol, pocket))

    fn.__name__ = f"pocket:{pocket.name}"
    return fn



class VinaReward:
    """``-0.1 * min(0, Vina score)`` (kcal/mol) of a molecule docked into a receptor with AutoDock Vina: a
    :class:`~iclr25.rxnflow.docking.VinaOracle` (maps computed once, scores cached by SMILES, CPU time per call
    kept in ``self.oracle``). Needs the ``docking`` extra (``pip install "iclr25-rxnflow[docking]"``), a receptor
    ``.pdbqt`` (:func:`~iclr25.rxnflow.docking.receptor_pdbqt` writes one from a PDB) and a box (center and size
    in Angstrom). CPU docking takes about a second per ligand at ``exhaustiveness=1``, so it is for small runs.
    """

    def __init__(self, receptor: str, center: Sequence[float], size: Sequence[float] = (22.5, 22.5, 22.5), *,
                 exhaustiveness: int = 8, seed: int = 0):
        from .docking import VinaOracle, vina_reward

        self.oracle = VinaOracle(receptor, center, size, exhaustiveness=exhaustiveness, seed=seed)
        self._fn = vina_reward(self.oracle)
        self.__name__ = "vina"

    def __call__(self, mol: Chem.Mol) -> float:
        return self._fn(mol)
