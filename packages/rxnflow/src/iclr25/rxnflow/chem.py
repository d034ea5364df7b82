"""RDKit glue: quiet parsing, canonical SMILES, block and state features, running one reaction.

Block features follow the paper (Seo et al. 2025, Sec. 3.2 / reference ``envs/building_block.py``):
MACCS keys (167 bits) + Morgan radius-2 bits (1024) + 8 scaled descriptors
(MW/100, heavy atoms/10, HBA/10, HBD/10, aromatic rings/10, aliphatic rings/10, logP/10, TPSA/100).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np
from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import Descriptors, MACCSkeys, rdFingerprintGenerator, rdMolDescriptors
from rdkit.Chem.rdChemReactions import ChemicalReaction

__all__ = ["quiet_rdkit", "mol_from_smiles", "canonical", "block_features", "state_fingerprints",
           "run_reaction", "N_BLOCK_FEATURES", "N_STATE_BITS"]

N_MORGAN = 1024
N_MACCS = 167
N_DESC = 8
N_BLOCK_FEATURES = N_MACCS + N_MORGAN + N_DESC
N_STATE_BITS = 2048

_MORGAN_BLOCK = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=N_MORGAN)
_MORGAN_STATE = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=N_STATE_BITS)


@contextlib.contextmanager
def quiet_rdkit() -> Iterator[None]:
    """Silence RDKit's C++ log (parse errors would otherwise print to stderr beside our own message)."""
    RDLogger.DisableLog("rdApp.*")
    try:
        yield
    finally:
        RDLogger.EnableLog("rdApp.*")


def mol_from_smiles(smiles: str) -> Chem.Mol | None:
    """Parse and sanitise one SMILES quietly; ``None`` when RDKit rejects it."""
    if not isinstance(smiles, str) or not smiles.strip():
        return None
    with quiet_rdkit():
        mol = Chem.MolFromSmiles(smiles.strip())
    return mol


def canonical(smiles_or_mol: str | Chem.Mol) -> str | None:
    """RDKit canonical isomeric SMILES, or ``None`` for an invalid input."""
    mol = mol_from_smiles(smiles_or_mol) if isinstance(smiles_or_mol, str) else smiles_or_mol
    if mol is None:
        return None
    return Chem.MolToSmiles(mol)


def _descriptors(mol: Chem.Mol) -> list[float]:
    return [Descriptors.MolWt(mol) / 100, mol.GetNumHeavyAtoms() / 10, rdMolDescriptors.CalcNumHBA(mol) / 10,
            rdMolDescriptors.CalcNumHBD(mol) / 10, rdMolDescriptors.CalcNumAromaticRings(mol) / 10,
            rdMolDescriptors.CalcNumAliphaticRings(mol) / 10, Descriptors.MolLogP(mol) / 10,
            rdMolDescriptors.CalcTPSA(mol) / 100]


def block_features(mols: Sequence[Chem.Mol]) -> np.ndarray:
    """``(n, 1199)`` float32 block features: MACCS ‖ Morgan(r=2, 1024) ‖ 8 descriptors (paper Sec. 3.2)."""
    out = np.zeros((len(mols), N_BLOCK_FEATURES), dtype=np.float32)
    for i, mol in enumerate(mols):
        arr = np.zeros((N_MACCS,), dtype=np.float32)
        DataStructs.ConvertToNumpyArray(MACCSkeys.GenMACCSKeys(mol), arr)
        out[i, :N_MACCS] = arr
        out[i, N_MACCS:N_MACCS + N_MORGAN] = _MORGAN_BLOCK.GetFingerprintAsNumPy(mol)
        out[i, N_MACCS + N_MORGAN:] = _descriptors(mol)
    return out


def state_fingerprints(mols: Sequence[Chem.Mol]) -> np.ndarray:
    """``(n, 2048 + 8)`` float32 state features: Morgan r=2 bits ‖ the 8 block descriptors.

    This CPU-friendly fingerprint MLP input replaces the paper's graph transformer (no compiled graph
    extensions are needed).
    """
    out = np.zeros((len(mols), N_STATE_BITS + N_DESC), dtype=np.float32)
    for i, mol in enumerate(mols):
        out[i, :N_STATE_BITS] = _MORGAN_STATE.GetFingerprintAsNumPy(mol)
        out[i, N_STATE_BITS:] = _descriptors(mol)
    return out


def run_reaction(rxn: ChemicalReaction, reactants: Sequence[Chem.Mol]) -> str | None:
    """Run ``rxn`` on ``reactants`` (in template order) and return the product's canonical SMILES.

    Every product set from ``RunReactants`` is sanitised; the deterministic rule "smallest canonical SMILES of
    the valid single products" picks one (the reference keeps the first unique product, which depends on
    atom order; sorting makes replay independent of it). ``None`` when no valid product exists.
    """
    with quiet_rdkit():
        try:
            outcomes = rxn.RunReactants(tuple(reactants), 20)
        except (RuntimeError, ValueError):
            return None
        found: set[str] = set()
        for prods in outcomes:
            if len(prods) != 1:
                continue
            p = Chem.Mol(prods[0])
            try:
                Chem.SanitizeMol(p)
                p = Chem.RemoveHs(p)
                smi = Chem.MolToSmiles(p)
                check = Chem.MolFromSmiles(smi)
            except (Chem.rdchem.MolSanitizeException, RuntimeError, ValueError):
                continue
            if check is not None and "." not in smi:
                found.add(Chem.MolToSmiles(check))
    return min(found) if found else None
