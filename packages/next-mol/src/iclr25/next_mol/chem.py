"""Molecules for NExT-Mol: parsing with errors that name the item, the SELFIES round trip that fixes the atom
order, DMT's atom and pair features, and the SELFIES-token-to-atom map of the 1D-to-3D transfer.

Every molecule that enters the 3D part goes through :func:`prepare`: the SMILES is parsed by RDKit, encoded to
SELFIES and decoded again; the decoded SMILES defines the heavy-atom order, so SELFIES token ``i`` and atom ``j``
of the returned molecule are related by the attribution map of ``selfies.decoder(..., attribute=True)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

__all__ = ["Molecule", "prepare", "prepare_many", "canonical_smiles", "token_atom_map", "atom_features",
           "pair_features", "ATOM_FEATURE_DIM", "PAIR_FEATURE_DIM"]

_ELEMENTS = ("C", "N", "O", "F", "S", "Cl", "Br", "I", "P", "B", "Si", "Se")
_CHARGES = (-1, 0, 1)
_MAX_HOPS = 8  # shortest-path one-hot: 1..7 hops, and ">= 8 or disconnected"
ATOM_FEATURE_DIM = len(_ELEMENTS) + 1 + 1 + len(_CHARGES) + 4 + 4 + 4 + 1 + 3
PAIR_FEATURE_DIM = 4 + _MAX_HOPS


@dataclasses.dataclass(frozen=True)
class Molecule:
    """A heavy-atom molecule in SELFIES atom order, with the token-to-atom map.

    ``token_map[i, j] = 1`` when SELFIES token ``i`` created heavy atom ``j``; every column holds one 1.
    """

    smiles: str            # the SMILES the user gave (after RDKit canonicalisation)
    selfies: str
    tokens: tuple[str, ...]
    decoded_smiles: str    # SMILES decoded from ``selfies``; its atom order is the order of ``mol``
    mol: object            # rdkit.Chem.Mol without hydrogens
    token_map: np.ndarray  # (n_tokens, n_atoms) 0/1

    @property
    def n_atoms(self) -> int:
        return int(self.mol.GetNumAtoms())


def _rdkit():
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    return Chem


def canonical_smiles(smiles: str, *, name: str = "smiles") -> str:
    """RDKit canonical SMILES of one molecule; ``ValueError`` naming ``name`` and the string when invalid."""
    Chem = _rdkit()
    if not isinstance(smiles, str):
        raise TypeError(f"{name} must be a SMILES string, got {type(smiles).__name__}")
    if not smiles.strip():
        raise ValueError(f"{name} is an empty SMILES string")
    mol = Chem.MolFromSmiles(smiles.strip())
    if mol is None or mol.GetNumAtoms() == 0:
        raise ValueError(f"{name} {smiles!r} is not a valid SMILES (RDKit cannot parse it)")
    if len(Chem.GetMolFrags(mol)) > 1:
        raise ValueError(f"{name} {smiles!r} has {len(Chem.GetMolFrags(mol))} fragments; give one molecule "
                         "(strip salts first)")
    return Chem.MolToSmiles(mol)


def token_atom_map(selfies_string: str, *, name: str = "selfies") -> tuple[str, object, np.ndarray]:
    """Decode a SELFIES string and map its tokens to the heavy atoms of the decoded molecule.

    Returns ``(decoded_smiles, mol, M)`` where ``M[i, j] = 1`` iff SELFIES token ``i`` is the atom token
    that created atom ``j`` of ``mol`` (RDKit atom order of ``decoded_smiles``). Branch and ring tokens (and
    the index tokens that follow them) map to no atom; per-atom LM features are ``M.T @ emb / M.sum(0)``.

    References: NExT-Mol (Liu et al., ICLR 2025), Sec. 3.3, the SELFIES-to-atom mapping of the transfer.
    """
    import selfies as sf  # noqa: PLC0415

    Chem = _rdkit()
    if not isinstance(selfies_string, str) or not selfies_string:
        raise ValueError(f"{name} must be a non-empty SELFIES string, got {selfies_string!r}")
    try:
        tokens = list(sf.split_selfies(selfies_string))
        decoded, attribution = sf.decoder(selfies_string, attribute=True)
    except Exception as exc:  # noqa: BLE001 - selfies raises its own DecoderError and plain errors
        raise ValueError(f"{name} {selfies_string!r} is not a valid SELFIES string ({exc})") from exc
    if not decoded:
        raise ValueError(f"{name} {selfies_string!r} decodes to an empty molecule")
    mol = Chem.MolFromSmiles(decoded)
    if mol is None:
        raise ValueError(f"{name} {selfies_string!r} decodes to {decoded!r}, which RDKit cannot parse")
    atom_tokens: list[int] = []
    for entry in attribution:
        tok = entry.token
        if not tok or not (tok[0].isalpha() or tok[0] == "["):
            continue  # bond characters, ring digits, parentheses
        sources = [a.index for a in (entry.attribution or []) if "Branch" not in a.token and "Ring" not in a.token]
        if len(sources) != 1:
            raise ValueError(f"{name} {selfies_string!r}: atom {tok!r} has no unique SELFIES atom token")
        atom_tokens.append(sources[0])
    if len(atom_tokens) != mol.GetNumAtoms():
        raise ValueError(f"{name} {selfies_string!r}: {len(atom_tokens)} atom tokens for "
                         f"{mol.GetNumAtoms()} atoms of {decoded!r}")
    M = np.zeros((len(tokens), mol.GetNumAtoms()), dtype=np.float32)
    M[atom_tokens, np.arange(len(atom_tokens))] = 1.0
    return decoded, mol, M


def prepare(smiles: str, *, name: str = "smiles", max_atoms: int | None = None) -> Molecule:
    """Parse one SMILES and return a :class:`Molecule` in SELFIES atom order (see the module docstring)."""
    import selfies as sf  # noqa: PLC0415

    can = canonical_smiles(smiles, name=name)
    try:
        s = sf.encoder(can)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{name} {smiles!r} cannot be encoded as SELFIES ({exc})") from exc
    if s is None:
        raise ValueError(f"{name} {smiles!r} cannot be encoded as SELFIES")
    decoded, mol, M = token_atom_map(s, name=name)
    Chem = _rdkit()
    if Chem.MolToSmiles(mol) != can:
        raise ValueError(f"{name} {smiles!r} does not survive the SELFIES round trip ({decoded!r}); "
                         "its valence or charges are outside the SELFIES alphabet")
    if max_atoms is not None and mol.GetNumAtoms() > max_atoms:
        raise ValueError(f"{name} {smiles!r} has {mol.GetNumAtoms()} heavy atoms, more than max_atoms={max_atoms}")
    return Molecule(can, s, tuple(sf.split_selfies(s)), decoded, mol, M)


def prepare_many(smiles: Sequence[str], *, name: str = "smiles", max_atoms: int | None = None) -> list[Molecule]:
    """:func:`prepare` on each item; errors name the item by index (``smiles[3] 'C1CC' is not ...``)."""
    if isinstance(smiles, str):
        raise TypeError(f"{name} must be a list of SMILES strings, not one string")
    smiles = list(smiles)
    if not smiles:
        raise ValueError(f"{name} is empty; give at least one molecule")
    return [prepare(s, name=f"{name}[{i}]", max_atoms=max_atoms) for i, s in enumerate(smiles)]


def _one_hot(value, choices) -> list[float]:
    out = [0.0] * (len(choices) + 1)
    out[choices.index(value) if value in choices else len(choices)] = 1.0
    return out


def atom_features(mol) -> np.ndarray:
    """Per-atom input features of DMT (``(n_atoms, ATOM_FEATURE_DIM)``): element, aromaticity, formal charge,
    hybridisation, hydrogen count, degree, ring membership and the chirality tag."""
    Chem = _rdkit()
    hyb = (Chem.HybridizationType.SP, Chem.HybridizationType.SP2, Chem.HybridizationType.SP3)
    chi = (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW)
    rows = []
    for a in mol.GetAtoms():
        rows.append(_one_hot(a.GetSymbol(), _ELEMENTS) + [float(a.GetIsAromatic())]
                    + _one_hot(a.GetFormalCharge(), _CHARGES)[:3]
                    + _one_hot(a.GetHybridization(), hyb)
                    + _one_hot(min(a.GetTotalNumHs(), 3), (0, 1, 2))
                    + _one_hot(min(a.GetDegree(), 4), (1, 2, 3))
                    + [float(a.IsInRing())] + _one_hot(a.GetChiralTag(), chi))
    out = np.asarray(rows, dtype=np.float32)
    assert out.shape[1] == ATOM_FEATURE_DIM
    return out


def pair_features(mol) -> np.ndarray:
    """Pair input features of DMT (``(n, n, PAIR_FEATURE_DIM)``): the bond one-hot (single, double, triple,
    aromatic; all zero for non-bonded pairs) and a shortest-path-length one-hot (1..7 hops, >= 8)."""
    Chem = _rdkit()
    n = mol.GetNumAtoms()
    out = np.zeros((n, n, PAIR_FEATURE_DIM), dtype=np.float32)
    kinds = {Chem.BondType.SINGLE: 0, Chem.BondType.DOUBLE: 1, Chem.BondType.TRIPLE: 2, Chem.BondType.AROMATIC: 3}
    for b in mol.GetBonds():
        i, j, k = b.GetBeginAtomIdx(), b.GetEndAtomIdx(), kinds.get(b.GetBondType(), 0)
        out[i, j, k] = out[j, i, k] = 1.0
    hops = Chem.GetDistanceMatrix(mol)
    idx = np.clip(hops, 1, _MAX_HOPS).astype(int) - 1
    off = ~np.eye(n, dtype=bool)
    ii, jj = np.nonzero(off)
    out[ii, jj, 4 + idx[ii, jj]] = 1.0
    return out
