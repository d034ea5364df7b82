"""Docking with AutoDock Vina on the CPU: a receptor in PDBQT, a box, and a cached oracle (the paper docks with
UniDock, Vina on a GPU).

Install the extra: ``pip install "iclr25-rxnflow[docking]"`` (``vina`` 1.2.7, ``meeko`` for the ligands, ``gemmi``
that meeko imports). Pieces:

- :func:`receptor_pdbqt`: a protein PDB (with hydrogens, as a prepared complex ships it) written as a rigid Vina
  receptor: AutoDock atom types from the residue and atom names (aromatic carbons ``A``, acceptor nitrogens
  ``NA``, ``OA``, ``SA``, polar hydrogens ``HD``; non-polar hydrogens dropped). Vina's scoring reads only the types
  and coordinates, so the charge column is 0.
- :func:`ligand_box`: the box around a bound ligand (its centre, its extent plus padding).
- :func:`t4_lysozyme`: T4 lysozyme L99A with its bound p-xylene: the files that ``openmmtools``' wheel ships
  (``openmmtools/data/T4-lysozyme-L99A-implicit``, MIT), bundled with this package (nothing is downloaded).
- :class:`VinaOracle`: Vina maps computed once per receptor and box; each new SMILES gets an RDKit conformer,
  meeko's PDBQT and one Vina docking run (``exhaustiveness``, one CPU thread); scores are cached by SMILES, and the
  CPU time of every call is kept (:attr:`VinaOracle.cpu_per_call`, :meth:`VinaOracle.estimate`).
- ``vina_reward(oracle)``: the paper's reward ``-0.1 * min(0, Vina)`` for :class:`~iclr25.rxnflow.rewards.Reward`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["receptor_pdbqt", "ligand_box", "t4_lysozyme", "Target", "VinaOracle", "vina_reward", "DOCKING_HINT",
           "CPU_S_PER_CALL", "estimate_cpu_s"]

DOCKING_HINT = 'pip install "iclr25-rxnflow[docking]" (vina, meeko, gemmi)'

#: CPU seconds of one Vina call (embedding, meeko, docking) at exhaustiveness 1 on one thread, rounded up from the
#: docking claim's calls on T4 lysozyme L99A (1.31-1.65 s mean per seed at calibration seeds 100-102; the decision
#: seeds' in docs/docking/claims.json, ``cpu_s_per_call``); larger ligands and larger boxes take longer
CPU_S_PER_CALL = 1.5


def estimate_cpu_s(n_calls: int, exhaustiveness: int = 1) -> float:
    """Rough CPU seconds of ``n_calls`` distinct Vina calls (:data:`CPU_S_PER_CALL`, linear in
    ``exhaustiveness``), before any call was timed; :meth:`VinaOracle.estimate` uses the calls it made."""
    return float(n_calls) * CPU_S_PER_CALL * max(1, exhaustiveness)

#: aromatic ring atoms of the standard residues (AutoDock type A)
_AROMATIC = {"PHE": {"CG", "CD1", "CD2", "CE1", "CE2", "CZ"}, "TYR": {"CG", "CD1", "CD2", "CE1", "CE2", "CZ"},
             "TRP": {"CG", "CD1", "CD2", "CE2", "CE3", "CZ2", "CZ3", "CH2"},
             "HIS": {"CG", "CD2", "CE1"}, "HID": {"CG", "CD2", "CE1"}, "HIE": {"CG", "CD2", "CE1"},
             "HIP": {"CG", "CD2", "CE1"}}
_HIS_N = {"ND1", "NE2"}


@dataclasses.dataclass(frozen=True)
class _Atom:
    serial: int
    name: str
    res: str
    chain: str
    resseq: str
    xyz: np.ndarray
    element: str


def _read_pdb_atoms(pdb: str | Path, what: str = "receptor") -> list[_Atom]:
    path = Path(pdb)
    if not path.is_file():
        raise FileNotFoundError(f"{what}: {path} is not a file (a PDB with hydrogens)")
    atoms = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.startswith(("ATOM", "HETATM")):
            continue
        try:
            xyz = np.array([float(line[30:38]), float(line[38:46]), float(line[46:54])])
        except ValueError:
            raise ValueError(f"{what}: {path}:{i}: no x, y, z in columns 31-54 of this ATOM line") from None
        name, res = line[12:16].strip(), line[17:20].strip().upper()
        element = line[76:78].strip().upper() if len(line) >= 78 else ""
        if not element:  # old files: the element from the atom name (first letter that is not a digit)
            element = next((c for c in name if c.isalpha()), "").upper()
        if not np.all(np.isfinite(xyz)):
            raise ValueError(f"{what}: {path}:{i}: non-finite coordinates")
        atoms.append(_Atom(i, name, res, line[21:22], line[22:27], xyz, element))
    if not atoms:
        raise ValueError(f"{what}: {path} has no ATOM/HETATM lines")
    return atoms


def _types(atoms: Sequence[_Atom]) -> list[str | None]:
    """AutoDock 4 types; ``None`` for a non-polar hydrogen (merged away, as AutoDock's receptor preparation)."""
    xyz = np.stack([a.xyz for a in atoms])
    heavy = np.array([a.element not in ("H", "D") for a in atoms])
    hidx = np.flatnonzero(~heavy)
    hidx_heavy = np.flatnonzero(heavy)
    # the heavy atom each hydrogen is bonded to (nearest, within 1.3 A)
    bonded: dict[int, int] = {}
    if len(hidx) and len(hidx_heavy):
        for h in hidx:
            d = np.linalg.norm(xyz[hidx_heavy] - xyz[h], axis=1)
            j = int(np.argmin(d))
            if d[j] < 1.3:
                bonded[int(h)] = int(hidx_heavy[j])
    n_h = np.zeros(len(atoms), dtype=int)
    for j in bonded.values():
        n_h[j] += 1
    out: list[str | None] = []
    for i, a in enumerate(atoms):
        e = a.element
        if e in ("H", "D"):
            j = bonded.get(i)
            out.append("HD" if j is not None and atoms[j].element in ("N", "O", "S") else None)
        elif e == "C":
            out.append("A" if a.name in _AROMATIC.get(a.res, ()) else "C")
        elif e == "N":
            # histidine ring nitrogens without a hydrogen accept an H-bond; every other protein N donates or is
            # an amide/ammonium nitrogen
            out.append("NA" if a.res in _AROMATIC and a.res != "PHE" and a.name in _HIS_N and n_h[i] == 0 else "N")
        elif e == "O":
            out.append("OA")
        elif e == "S":
            out.append("SA")
        elif e in ("ZN", "MG", "MN", "CA", "FE", "CL", "BR", "I", "F", "P"):
            out.append(e.capitalize() if len(e) == 2 else e)
        else:
            raise ValueError(f"receptor: atom {a.name!r} of {a.res} (line {a.serial}) has element {e!r}, which Vina "
                             "cannot type; remove it (waters, ions, ligands) from the PDB")
    return out


def receptor_pdbqt(pdb: str | Path, out: str | Path, *, drop: Sequence[str] = ("HOH", "WAT")) -> Path:
    """Write ``pdb`` (a protein with hydrogens) as a rigid Vina receptor ``out`` (PDBQT); residues named in ``drop``
    (waters) are left out. Returns ``out``."""
    atoms = [a for a in _read_pdb_atoms(pdb) if a.res not in set(drop)]
    lines = []
    for k, (a, t) in enumerate(zip(atoms, _types(atoms), strict=True), 1):
        if t is None:
            continue
        name = a.name if len(a.name) == 4 else f" {a.name:<3s}"
        x, y, z = a.xyz
        lines.append(f"ATOM  {k % 100000:5d} {name} {a.res:>3s} {a.chain or ' '}{a.resseq:>5s}   "
                     f"{x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00    {0.0:+6.3f} {t:<2s}")
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out


def ligand_box(ligand: str | Path, *, padding: float = 6.0, min_size: float = 16.0
               ) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """``(center, size)`` of a docking box around a bound ligand (PDB or MOL2 file): its heavy atoms' centre, and
    their extent plus ``padding`` on each side (at least ``min_size`` Angstrom per axis)."""
    path = Path(ligand)
    if not path.is_file():
        raise FileNotFoundError(f"ligand: {path} is not a file")
    xyz = []
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if path.suffix.lower() == ".mol2":
        inside = False
        for line in text:
            if line.startswith("@<TRIPOS>"):
                inside = line.strip() == "@<TRIPOS>ATOM"
                continue
            f = line.split()
            if inside and len(f) >= 6 and not f[5].upper().startswith("H"):
                xyz.append([float(f[2]), float(f[3]), float(f[4])])
    else:
        for a in _read_pdb_atoms(path, "ligand"):
            if a.element not in ("H", "D"):
                xyz.append(a.xyz)
    if not xyz:
        raise ValueError(f"ligand: no heavy atoms read from {path}")
    arr = np.asarray(xyz, dtype=float)
    lo, hi = arr.min(0), arr.max(0)
    center = tuple(float(v) for v in (lo + hi) / 2)
    size = tuple(float(max(min_size, v + 2 * padding)) for v in hi - lo)
    return center, size  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class Target:
    """A docking target: the receptor PDB, the bound ligand that gives the pocket, the box, and where it came from."""

    name: str
    receptor_pdb: Path
    ligand: Path
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    source: str


#: where the bundled T4 lysozyme L99A files came from (openmmtools' wheel; MIT, its license beside them)
T4L_SOURCE = "openmmtools 0.27.0 (MIT): openmmtools/data/T4-lysozyme-L99A-implicit/{receptor.pdb,ligand.mol2}"


def t4_lysozyme(*, padding: float = 6.0) -> Target:
    """T4 lysozyme L99A with its bound p-xylene (``receptor.pdb`` with hydrogens, ``ligand.mol2``): the files that
    ``openmmtools``' wheel ships, bundled with this package unchanged (``iclr25/rxnflow/data/t4l_l99a``, with
    openmmtools' MIT license), so nothing is downloaded and openmmtools is not needed. The box is the ligand's
    (:func:`ligand_box`)."""
    from importlib.resources import files

    folder = Path(str(files("iclr25.rxnflow") / "data" / "t4l_l99a"))
    if not (folder / "receptor.pdb").is_file() or not (folder / "ligand.mol2").is_file():
        raise FileNotFoundError(f"T4 lysozyme L99A: {folder} lacks receptor.pdb or ligand.mol2 (a broken install; "
                                "reinstall iclr25-rxnflow, or give your own --receptor and --center)")
    center, size = ligand_box(folder / "ligand.mol2", padding=padding)
    return Target("T4 lysozyme L99A", folder / "receptor.pdb", folder / "ligand.mol2", center, size, T4L_SOURCE)


def _import_docking():
    try:
        import meeko  # noqa: F401
        import vina  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"docking needs AutoDock Vina and meeko ({exc.name} is missing): {DOCKING_HINT}") from None


class VinaOracle:
    """AutoDock Vina scores (kcal/mol, lower is better) of molecules in one receptor's box, cached by SMILES.

    ``receptor``: a PDBQT file (:func:`receptor_pdbqt`); ``center``/``size``: the box (Angstrom). The maps are
    computed once; each new molecule is embedded by RDKit (ETKDG, ``seed``), prepared by meeko and docked with
    ``exhaustiveness`` on one CPU thread. A molecule that cannot be embedded, prepared or typed by Vina (boron)
    scores ``None``. Vina's
    random stream runs on from one docking to the next, so a seed gives the same scores for the same sequence of
    new molecules (a score is kept for the molecule's first call).
    """

    def __init__(self, receptor: str | Path, center: Sequence[float], size: Sequence[float] = (20.0, 20.0, 20.0), *,
                 exhaustiveness: int = 4, seed: int = 0, spacing: float = 0.375):
        _import_docking()
        from vina import Vina

        receptor = Path(receptor)
        if not receptor.is_file():
            raise FileNotFoundError(f"receptor: {receptor} is not a file (a PDBQT; write one with receptor_pdbqt)")
        center, size = [float(v) for v in center], [float(v) for v in size]
        if len(center) != 3 or len(size) != 3 or not all(map(math.isfinite, center + size)):
            raise ValueError(f"center and size must be 3 finite numbers each (x, y, z), got {center} and {size}")
        if min(size) <= 0:
            raise ValueError(f"size: every box edge must be > 0 Angstrom, got {size}")
        if isinstance(exhaustiveness, bool) or not isinstance(exhaustiveness, int) or exhaustiveness < 1:
            raise ValueError(f"exhaustiveness must be an integer >= 1, got {exhaustiveness!r}")
        self.receptor, self.center, self.size = receptor, center, size
        self.exhaustiveness, self.seed = exhaustiveness, int(seed)
        t0 = time.process_time()
        # Vina reads seed 0 as "draw a random seed": ours is shifted by one so that every seed is reproducible
        self._vina = Vina(sf_name="vina", cpu=1, seed=self.seed % 2_147_483_646 + 1, verbosity=0)
        self._vina.set_receptor(str(receptor))
        self._vina.compute_vina_maps(center=center, box_size=size, spacing=spacing)
        self.setup_cpu_s = time.process_time() - t0
        self.cache: dict[str, float | None] = {}
        self.cpu_per_call: list[float] = []
        #: CPU seconds of each molecule's docking (kept in the cache file, so a rerun from the cache reports them)
        self.cpu_s: dict[str, float] = {}

    def ligand_pdbqt(self, smiles: str) -> str | None:
        """meeko's PDBQT of one RDKit conformer of ``smiles`` (``None`` when it cannot be embedded or prepared)."""
        from meeko import MoleculePreparation, PDBQTWriterLegacy
        from rdkit import Chem
        from rdkit.Chem import AllChem

        from .chem import mol_from_smiles

        mol = mol_from_smiles(smiles)
        if mol is None:
            return None
        mh = Chem.AddHs(mol)
        params = AllChem.ETKDGv3()
        params.randomSeed = self.seed
        if AllChem.EmbedMolecule(mh, params) != 0:
            return None
        try:
            setups = MoleculePreparation().prepare(mh)
            text, ok, _ = PDBQTWriterLegacy.write_string(setups[0])
        except (RuntimeError, ValueError):
            return None
        return text if ok else None

    def score(self, smiles: str) -> float | None:
        """The best Vina score of ``smiles`` in the box (cached; ``None`` for a molecule that cannot be prepared)."""
        if smiles in self.cache:
            return self.cache[smiles]
        t0 = time.process_time()
        value = None
        pdbqt = self.ligand_pdbqt(smiles)
        if pdbqt is not None:
            try:  # an element Vina cannot type (boron of a boronic acid) is refused as a TypeError
                self._vina.set_ligand_from_string(pdbqt)
                self._vina.dock(exhaustiveness=self.exhaustiveness, n_poses=1)
                value = float(self._vina.energies(n_poses=1)[0][0])
            except (TypeError, RuntimeError, ValueError):
                value = None
        self.cpu_per_call.append(time.process_time() - t0)
        self.cpu_s[smiles] = self.cpu_per_call[-1]
        self.cache[smiles] = value
        return value

    def estimate(self, n_calls: int) -> float:
        """CPU seconds of ``n_calls`` more distinct molecules, from the mean of the calls so far (the setup
        excluded; a rough 10 s per call before any call)."""
        if not self.cpu_per_call:
            return estimate_cpu_s(n_calls, self.exhaustiveness)
        return float(np.mean(self.cpu_per_call)) * n_calls

    def _key(self) -> dict:
        import hashlib

        return {"receptor_sha256": hashlib.sha256(self.receptor.read_bytes()).hexdigest(),
                "center": [round(v, 4) for v in self.center], "size": [round(v, 4) for v in self.size],
                "exhaustiveness": self.exhaustiveness, "seed": self.seed}

    def load_cache(self, path: str | Path, *, flag: str = "cache") -> int:
        """Add the scores of a cache file written by :meth:`save_cache` for the same receptor, box,
        exhaustiveness and seed (another one is refused in one line naming ``flag``); returns how many."""
        import json

        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            key, scores = data["key"], data["scores"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{flag}: {path} is not a Vina score cache written by this package "
                             f"({type(exc).__name__})") from None
        if key != self._key():
            raise ValueError(f"{flag}: {path} holds scores for another receptor, box, exhaustiveness or seed "
                             f"({key.get('center')}, {key.get('size')}, exhaustiveness {key.get('exhaustiveness')}); "
                             "give another file")
        if not isinstance(scores, dict) or not all(v is None or isinstance(v, (int, float)) for v in scores.values()):
            raise ValueError(f"{flag}: {path}: scores must map SMILES to numbers or null")
        for smi, v in scores.items():
            self.cache.setdefault(str(smi), None if v is None else float(v))
        cpu = data.get("cpu_s") or {}
        if isinstance(cpu, dict):
            for smi, t in cpu.items():
                if isinstance(t, (int, float)):
                    self.cpu_s.setdefault(str(smi), float(t))
        return len(scores)

    def save_cache(self, path: str | Path) -> Path:
        """Write every score so far (and the receptor, box, exhaustiveness and seed they belong to) as JSON,
        atomically."""
        import json

        from iclr25.utils.io import atomic_write

        path = Path(path)
        with atomic_write(path) as f:
            json.dump({"key": self._key(), "scores": self.cache, "cpu_s": self.cpu_s}, f)
        return path


def vina_reward(oracle: VinaOracle):
    """``fn(mol) -> -0.1 * min(0, Vina)`` (the paper's docking reward; 0 for a molecule Vina cannot dock)."""
    from rdkit import Chem

    def fn(mol) -> float:
        v = oracle.score(Chem.MolToSmiles(mol))
        return 0.0 if v is None else -0.1 * min(0.0, v)

    fn.__name__ = "vina"
    return fn
