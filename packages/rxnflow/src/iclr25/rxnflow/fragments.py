"""A fragment-based generator without synthesis constraints: a fragment-growing genetic algorithm on BRICS
fragments (the paper's fragment-based baselines, e.g. FragGFN, assemble molecules from such fragments with no
reaction template and no route).

:func:`brics_fragments` cuts a block library at its BRICS bonds (RDKit, Degen et al. 2008); each fragment keeps
its labelled attachment points (``[4*]``). A molecule of :func:`fragment_ga` is a list of fragments joined at
compatible attachment points by RDKit's BRICS reverse reactions; the attachment points left open are capped with
hydrogen. The GA starts from random single fragments and pairs, then makes children of tournament-chosen parents
by growing (one more fragment), replacing a fragment, crossover (the head of one parent, the tail of another) or
shrinking; each new molecule is one oracle call, and the run stops after ``budget`` distinct calls. Its molecules
carry no synthesis route.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import BRICS

__all__ = ["brics_fragments", "join_fragments", "cap", "FragmentRun", "fragment_ga"]

_DUMMY = Chem.MolFromSmarts("[#0]")


def brics_fragments(smiles: Sequence[str], *, min_heavy: int = 2) -> list[str]:
    """The BRICS fragments (with their labelled attachment points) of ``smiles``, unique, in first-seen order;
    fragments with fewer than ``min_heavy`` heavy atoms and blocks with no BRICS bond are left out."""
    out: dict[str, None] = {}
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            continue
        for f in sorted(BRICS.BRICSDecompose(mol)):
            fm = Chem.MolFromSmiles(f)
            if fm is None or not fm.HasSubstructMatch(_DUMMY):
                continue
            if sum(a.GetAtomicNum() > 0 for a in fm.GetAtoms()) >= min_heavy:
                out[f] = None
    if not out:
        raise ValueError("blocks: no BRICS fragment with an attachment point (every block lacks a BRICS bond)")
    return list(out)


def join_fragments(a: Chem.Mol, b: Chem.Mol, rng: np.random.Generator) -> Chem.Mol | None:
    """``a`` and ``b`` joined at one pair of compatible BRICS attachment points (a random reaction and product),
    or ``None`` when none is compatible."""
    order = rng.permutation(len(BRICS.reverseReactions))
    for i in order:
        rxn = BRICS.reverseReactions[int(i)]
        if a.HasSubstructMatch(rxn._matchers[0]) and b.HasSubstructMatch(rxn._matchers[1]):
            ps = rxn.RunReactants((a, b))
        elif b.HasSubstructMatch(rxn._matchers[0]) and a.HasSubstructMatch(rxn._matchers[1]):
            ps = rxn.RunReactants((b, a))
        else:
            continue
        for j in rng.permutation(len(ps)):
            p = Chem.Mol(ps[int(j)][0])
            try:
                Chem.SanitizeMol(p)
            except (ValueError, RuntimeError):
                continue
            return p
    return None


def cap(mol: Chem.Mol) -> str | None:
    """Canonical SMILES of ``mol`` with every open attachment point replaced by hydrogen (``None`` if it fails)."""
    rw = Chem.RWMol(mol)
    for atom in rw.GetAtoms():
        if atom.GetAtomicNum() == 0:
            atom.SetAtomicNum(1)
            atom.SetIsotope(0)
    try:
        out = Chem.RemoveHs(rw.GetMol())
        Chem.SanitizeMol(out)
    except (ValueError, RuntimeError):
        return None
    smi = Chem.MolToSmiles(out)
    return smi if Chem.MolFromSmiles(smi) is not None else None


@dataclasses.dataclass(frozen=True)
class FragmentRun:
    """The molecules the GA scored, in the order of the oracle calls (``smiles``, ``scores``: lower is better,
    ``None`` where the oracle failed), and the fragments each was built from."""

    smiles: tuple[str, ...]
    scores: tuple[float | None, ...]
    parts: tuple[tuple[str, ...], ...]


def _build(parts: Sequence[str], frags: dict[str, Chem.Mol], rng: np.random.Generator,
           max_heavy: int) -> str | None:
    mol = frags[parts[0]]
    for p in parts[1:]:
        mol = join_fragments(mol, frags[p], rng)
        if mol is None:
            return None
    smi = cap(mol)
    if smi is None:
        return None
    m = Chem.MolFromSmiles(smi)
    return smi if m is not None and m.GetNumHeavyAtoms() <= max_heavy else None


def fragment_ga(fragments: Sequence[str], score: Callable[[str], float | None], budget: int, *, seed: int = 0,
                max_fragments: int = 4, max_heavy: int = 30, population: int = 20, n_init: int = 20,
                tournament: int = 3, max_tries: int = 200) -> FragmentRun:
    """Run the fragment-growing GA until ``budget`` distinct molecules were scored by ``score`` (SMILES -> a
    docking score, lower is better, or ``None``). ``population``: the best scored molecules parents are drawn
    from (tournaments of ``tournament``); ``n_init``: random 1-2 fragment molecules first; molecules have at most
    ``max_fragments`` fragments and ``max_heavy`` heavy atoms."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
    if not fragments:
        raise ValueError("fragments: empty; give BRICS fragments with attachment points (brics_fragments)")
    rng = np.random.default_rng(seed)
    RDLogger.DisableLog("rdApp.*")
    frags = {f: Chem.MolFromSmiles(f) for f in fragments}
    if any(m is None for m in frags.values()):
        raise ValueError("fragments: a fragment SMILES does not parse")
    names = list(frags)
    seen: dict[str, float | None] = {}
    parts_of: dict[str, tuple[str, ...]] = {}
    ranked: list[tuple[float, str]] = []

    def add(parts: tuple[str, ...]) -> bool:
        smi = _build(parts, frags, rng, max_heavy)
        if smi is None or smi in seen:
            return False
        v = score(smi)
        seen[smi], parts_of[smi] = v, parts
        if v is not None:
            ranked.append((v, smi))
            ranked.sort()
        return True

    def pick() -> tuple[str, ...]:
        pool = ranked[:population]
        idx = rng.integers(len(pool), size=min(tournament, len(pool)))
        return parts_of[pool[int(idx.min())][1]]  # ranked by score: the smallest index wins

    tries = 0
    while len(seen) < budget and tries < max_tries * budget:
        tries += 1
        if len(seen) < n_init or not ranked:
            k = 1 + int(rng.random() < 0.5)
            add(tuple(names[int(i)] for i in rng.integers(len(names), size=k)))
            continue
        parent = pick()
        op = rng.random()
        if op < 0.35 and len(parent) < max_fragments:  # grow
            child = (*parent, names[int(rng.integers(len(names)))])
        elif op < 0.6:  # replace one fragment
            j = int(rng.integers(len(parent)))
            child = (*parent[:j], names[int(rng.integers(len(names)))], *parent[j + 1:])
        elif op < 0.85:  # crossover: the head of one parent, the tail of another
            other = pick()
            child = (*parent[:int(rng.integers(1, len(parent) + 1))], *other[int(rng.integers(len(other))):])
            child = child[:max_fragments]
        elif len(parent) > 1:  # shrink
            j = int(rng.integers(len(parent)))
            child = (*parent[:j], *parent[j + 1:])
        else:
            continue
        add(child)
    smiles = tuple(seen)
    return FragmentRun(smiles, tuple(seen[s] for s in smiles), tuple(parts_of[s] for s in smiles))
