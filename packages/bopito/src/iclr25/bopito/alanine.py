"""Alanine dipeptide (Ace-Ala-NMe) with OpenMM: the paper's molecular system at reduced scale.

The molecule is built offline: heavy atoms from standard peptide internal coordinates (bond lengths, angles
and ω = 180° of Engh & Huber, 1991, the L-alanine Cβ placed with the N-C-Cα-Cβ improper of 122.7° as in
PeptideBuilder, Tien et al. 2013; φ = −80°, ψ = 150°), hydrogens added by OpenMM's ``Modeller`` from the
templates that ship with OpenMM, then energy-minimised. Force field: Amber ff14SB (``amber14-all.xml``,
shipped with OpenMM) **in vacuum** (the paper's data are explicit-water MD: a reduction, see the README).
Langevin dynamics (``LangevinMiddleIntegrator``) at 300 K, friction 1/ps, 2 fs steps, bonds to hydrogen
constrained; one frame is 1 ps (500 steps), the paper's frame spacing.

Throughput: many copies of the molecule are simulated in one OpenMM ``System``, 10 nm apart with a 2 nm
cutoff and reaction-field dielectric 1, so copies do not interact and each feels exactly its vacuum forces
(the reaction-field shift with ε = 1 is a constant per pair: forces are those of ``NoCutoff``; checked by a
test). Every frame each copy is translated back to its home cell (a rigid translation does not change the
dynamics). That is about 15× faster than one molecule per context on one CPU core.

Features: the backbone dihedrals φ = (C_ace, N, Cα, C) and ψ = (N, Cα, C, N_nme); the models see
``(sin φ, cos φ, sin ψ, cos ψ)`` (the paper embeds φ as (sin φ, cos φ)).

Platform (issue 59): ``platform="auto"`` runs on OpenMM's CUDA platform when OpenMM has one (mixed precision), else
on its CPU platform with one thread (the shipped data's); ``CPU``, ``CUDA``, ``OpenCL`` and ``Reference`` name one
(:func:`openmm_platform`; a platform OpenMM lacks is a one-line error naming ``--platform``).

Solvent (issue 63): ``MDConfig(solvent="gbsa")`` is openmmtools' alanine-dipeptide-gbsa system (Amber ff96, OBC1
implicit solvent; many copies in one ``System`` as in vacuum); ``solvent="tip3p"`` is openmmtools'
alanine-dipeptide-explicit system (Amber ff96 in a 3.3 nm box of 749 TIP3P waters, 2269 atoms, PME with a 0.9 nm
cutoff switched from 0.75 nm and the dispersion correction, as ``AlanineDipeptideExplicit``; NVT at the box of the
files), one molecule per OpenMM ``Context``, the trajectories run one after another (about 40x slower per
molecule-ns than GBSA on one CPU core: a reduced-length path). Both read the files shipped in openmmtools' wheel
without importing it (extra ``solvent``). A small GBSA data set ships too (:func:`load_shipped` ``("gbsa")``), and
a smaller explicit-water one in frames of 0.1 ps (``MDConfig(steps_per_frame=50)``; ``load_shipped("tip3p")``).

OpenMM is an optional dependency (extra ``md``): everything else in this package, including the shipped
dihedral data set (:func:`load_shipped`), works without it.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, read_npz
from iclr25.utils.progress import progress
from iclr25.utils.seeding import check_seed

__all__ = ["MDConfig", "AlanineData", "build_alanine_dipeptide", "simulate_alanine", "dihedrals", "featurize",
           "angles_from_features", "openmm_platform", "load_shipped", "load_alanine", "load_data", "save_data", "generate_data", "PHI_ATOMS", "PSI_ATOMS", "FEATURE_BOX", "SHIPPED", "SOLVENTS",
           "build_alanine_gbsa", "build_alanine_explicit", "gbsa_files", "SHIPPED_SETS"]

#: atom indices (in the built topology) of φ and ψ
PHI_ATOMS = (4, 6, 8, 10)
PSI_ATOMS = (6, 8, 10, 16)
#: φ and ψ in the topology of openmmtools' alanine-dipeptide-gbsa and -explicit files (Amber's atom order; the
#: explicit files' waters come after the peptide's 22 atoms)
GBSA_PHI_ATOMS = (4, 6, 8, 14)
GBSA_PSI_ATOMS = (6, 8, 14, 16)
#: ``MDConfig.solvent``: the built molecule in vacuum (Amber ff14SB, the shipped data), openmmtools'
#: alanine-dipeptide-gbsa system (Amber ff96, OBC GBSA implicit solvent, as ``AlanineDipeptideImplicit``) or its
#: alanine-dipeptide-explicit system (Amber ff96, TIP3P water, PME, as ``AlanineDipeptideExplicit``)
SOLVENTS = ("vacuum", "gbsa", "tip3p")
#: the models' box for (sin φ, cos φ, sin ψ, cos ψ)
FEATURE_BOX = ((-1.05, 1.05),) * 4
#: the compressed dihedral data set shipped in the wheel
SHIPPED = Path(__file__).with_name("data") / "alanine_dihedrals.npz"
#: the shipped data sets by solvent (``load_shipped(solvent)``): vacuum, OBC GBSA implicit solvent, and TIP3P explicit
#: water (a reduced length in frames of 0.1 ps: see its ``meta``)
SHIPPED_SETS = {"vacuum": SHIPPED, "gbsa": Path(__file__).with_name("data") / "alanine_gbsa_dihedrals.npz",
                "tip3p": Path(__file__).with_name("data") / "alanine_tip3p_dihedrals.npz"}
_SPACING_NM = 10.0


@dataclasses.dataclass(frozen=True)
class MDConfig:
    """Simulation settings (the defaults are the ones the shipped data were made with)."""

    temperature: float = 300.0  # K
    friction: float = 1.0  # 1/ps
    timestep_fs: float = 2.0
    steps_per_frame: int = 500  # 1 ps per frame
    forcefield: str = "amber14-all.xml"  # vacuum only; gbsa: the prmtop's Amber ff96 with OBC1 (mbondi2 radii)
    solvent: str = "vacuum"  # one of SOLVENTS

    def __post_init__(self) -> None:
        if self.solvent not in SOLVENTS:
            raise ValueError(f"solvent must be one of {', '.join(SOLVENTS)}, got {self.solvent!r}")

    def dihedral_atoms(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """φ and ψ atom indices in this solvent's topology."""
        return (PHI_ATOMS, PSI_ATOMS) if self.solvent == "vacuum" else (GBSA_PHI_ATOMS, GBSA_PSI_ATOMS)

    def describe(self) -> str:
        if self.solvent == "vacuum":
            return "alanine dipeptide (Ace-Ala-NMe), Amber ff14SB, vacuum"
        if self.solvent == "tip3p":
            return ("alanine dipeptide (Ace-Ala-NMe), Amber ff96, TIP3P explicit water (openmmtools' "
                    "alanine-dipeptide-explicit prmtop/crd, 749 waters, PME 0.9 nm, NVT, as its "
                    "AlanineDipeptideExplicit)")
        return ("alanine dipeptide (Ace-Ala-NMe), Amber ff96, OBC GBSA implicit solvent (openmmtools' "
                "alanine-dipeptide-gbsa prmtop/crd, OBC1 as its AlanineDipeptideImplicit)")


def _require_openmm() -> Any:
    try:
        import openmm  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError("alanine dipeptide MD needs OpenMM: pip install 'iclr25-bopito[md]' "
                          "(the shipped dihedral data need no OpenMM)") from e
    return openmm


PLATFORMS = ("CPU", "CUDA", "OpenCL", "Reference")


def openmm_platform(spec: str = "auto") -> str:
    """The OpenMM platform name for ``--platform`` ``spec``: ``auto`` is CUDA when OpenMM has a CUDA platform that
    works here, else CPU; a named platform must exist (a one-line ``ValueError`` naming ``--platform`` and what
    OpenMM has otherwise)."""
    openmm = _require_openmm()
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    if spec == "auto":
        return "CUDA" if "CUDA" in names else "CPU"
    if spec not in PLATFORMS:
        raise ValueError(f"--platform must be auto, {', '.join(PLATFORMS)}, got {spec!r}")
    if spec not in names:
        raise ValueError(f"--platform {spec}: OpenMM {openmm.__version__} has no {spec} platform here (it has "
                         f"{', '.join(names) or 'none'}; CUDA needs OpenMM's CUDA build, e.g. conda's openmm with "
                         "cuda-version)")
    return spec


def _platform_properties(name: str) -> dict[str, str]:
    return {"CPU": {"Threads": "1"}, "CUDA": {"Precision": "mixed"}, "OpenCL": {"Precision": "mixed"}}.get(name, {})


def _place(a: np.ndarray, b: np.ndarray, c: np.ndarray, bond: float, angle: float, torsion: float) -> np.ndarray:
    """Natural-extension reference frame: the atom bonded to ``c`` at ``bond`` Å, angle b-c-new ``angle``
    degrees and dihedral a-b-c-new ``torsion`` degrees."""
    ang, tor = math.radians(angle), math.radians(torsion)
    bc = (c - b) / np.linalg.norm(c - b)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    return c + bond * (-math.cos(ang) * bc + math.sin(ang) * math.cos(tor) * m + math.sin(ang) * math.sin(tor) * n)


def _heavy_atom_pdb(phi: float = -80.0, psi: float = 150.0) -> str:
    X: dict[str, np.ndarray] = {"ACE CH3": np.zeros(3), "ACE C": np.array([1.52, 0.0, 0.0])}
    a = math.radians(180.0 - 116.6)
    X["ALA N"] = X["ACE C"] + 1.33 * np.array([math.cos(a), math.sin(a), 0.0])
    X["ALA CA"] = _place(X["ACE CH3"], X["ACE C"], X["ALA N"], 1.46, 121.7, 180.0)  # ω = 180
    X["ALA C"] = _place(X["ACE C"], X["ALA N"], X["ALA CA"], 1.52, 111.0, phi)
    X["NME N"] = _place(X["ALA N"], X["ALA CA"], X["ALA C"], 1.33, 116.2, psi)
    X["NME C"] = _place(X["ALA CA"], X["ALA C"], X["NME N"], 1.45, 121.7, 180.0)  # ω = 180
    X["ACE O"] = _place(X["ALA CA"], X["ALA N"], X["ACE C"], 1.23, 123.0, 0.0)
    X["ALA O"] = _place(X["ALA N"], X["ALA CA"], X["ALA C"], 1.23, 120.5, psi + 180.0)
    X["ALA CB"] = _place(X["ALA N"], X["ALA C"], X["ALA CA"], 1.53, 109.5, 122.686)  # L-alanine
    lines, i = [], 1
    for res, rid, names in (("ACE", 1, ("CH3", "C", "O")), ("ALA", 2, ("N", "CA", "C", "O", "CB")),
                            ("NME", 3, ("N", "C"))):
        for nm in names:
            x = X[f"{res} {nm}"]
            lines.append(f"ATOM  {i:5d} {nm:^4s} {res} A{rid:4d}    {x[0]:8.3f}{x[1]:8.3f}{x[2]:8.3f}"
                         f"  1.00  0.00           {nm[0]}")
            i += 1
    return "\n".join([*lines, "END"]) + "\n"


def build_alanine_dipeptide(config: MDConfig = MDConfig()) -> tuple[Any, Any, np.ndarray]:
    """Build Ace-Ala-NMe offline: returns ``(forcefield, topology, positions)`` (positions in nm, ``(22, 3)``,
    energy-minimised in vacuum)."""
    openmm = _require_openmm()
    from openmm import app, unit  # noqa: PLC0415

    pdb = app.PDBFile(io.StringIO(_heavy_atom_pdb()))
    ff = app.ForceField(config.forcefield)
    mod = app.Modeller(pdb.topology, pdb.positions)
    mod.addHydrogens(ff)
    system = ff.createSystem(mod.topology, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)
    ctx = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    ctx.setPositions(mod.positions)
    ctx.applyConstraints(1e-6)
    openmm.LocalEnergyMinimizer.minimize(ctx, 1.0, 2000)
    pos = ctx.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    return ff, mod.topology, np.asarray(pos, dtype=np.float64)


def dihedrals(pos: np.ndarray, atoms: tuple[int, int, int, int]) -> np.ndarray:
    """Dihedral angles (radians, in (−π, π]) of ``atoms`` for positions ``(..., n_atoms, 3)``."""
    p = np.asarray(pos, dtype=np.float64)
    b0 = p[..., atoms[0], :] - p[..., atoms[1], :]
    b1 = p[..., atoms[2], :] - p[..., atoms[1], :]
    b2 = p[..., atoms[3], :] - p[..., atoms[2], :]
    b1n = b1 / np.linalg.norm(b1, axis=-1, keepdims=True)
    v = b0 - np.sum(b0 * b1n, axis=-1, keepdims=True) * b1n
    w = b2 - np.sum(b2 * b1n, axis=-1, keepdims=True) * b1n
    x = np.sum(v * w, axis=-1)
    y = np.sum(np.cross(b1n, v) * w, axis=-1)
    return np.arctan2(y, x)


def featurize(angles: Any) -> np.ndarray:
    """``(..., 2)`` angles (φ, ψ) in radians → ``(..., 4)`` features ``(sin φ, cos φ, sin ψ, cos ψ)``."""
    a = np.asarray(angles, dtype=np.float64)
    if a.ndim < 1 or a.shape[-1] != 2:
        raise ValueError(f"angles must have shape (..., 2) (phi, psi), got {a.shape}")
    return np.stack([np.sin(a[..., 0]), np.cos(a[..., 0]), np.sin(a[..., 1]), np.cos(a[..., 1])], axis=-1)


def angles_from_features(f: Any) -> np.ndarray:
    """Features ``(..., 4)`` → angles ``(..., 2)`` (φ, ψ) by ``atan2`` (projects model samples onto the torus)."""
    a = np.asarray(f, dtype=np.float64)
    if a.ndim < 1 or a.shape[-1] != 4:
        raise ValueError(f"features must have shape (..., 4), got {a.shape}")
    return np.stack([np.arctan2(a[..., 0], a[..., 1]), np.arctan2(a[..., 2], a[..., 3])], axis=-1)


def gbsa_files(solvent: str = "gbsa") -> tuple[Path, Path]:
    """``(prmtop, crd)`` of alanine dipeptide in OBC GBSA (``solvent="gbsa"``) or in TIP3P water (``"tip3p"``)
    shipped in openmmtools' wheel (``openmmtools/data/alanine-dipeptide-gbsa`` or ``-explicit``), found without
    importing openmmtools (extra ``solvent``)."""
    import importlib.util  # noqa: PLC0415

    folder = {"gbsa": "alanine-dipeptide-gbsa", "tip3p": "alanine-dipeptide-explicit"}.get(solvent)
    if folder is None:
        raise ValueError(f"solvent must be gbsa or tip3p, got {solvent!r}")
    spec = importlib.util.find_spec("openmmtools")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for f in folders:
        d = Path(f) / "data" / folder
        prmtop, crd = d / "alanine-dipeptide.prmtop", d / "alanine-dipeptide.crd"
        if prmtop.is_file() and crd.is_file():
            return prmtop, crd
    what = "implicit solvent" if solvent == "gbsa" else "explicit water"
    raise ImportError(f"alanine dipeptide in {what} (--solvent {solvent}) reads openmmtools' {folder} files: pip "
                      "install 'iclr25-bopito[solvent]'")


def _explicit_system() -> tuple[Any, Any, np.ndarray, Any]:
    """openmmtools' alanine-dipeptide-explicit: ``(system, topology, crd positions in nm, box vectors)``, the
    system as ``AlanineDipeptideExplicit`` builds it (PME, 0.9 nm cutoff switched from 0.75 nm, dispersion
    correction, Ewald tolerance 5e-4, rigid TIP3P, bonds to hydrogen constrained)."""
    openmm = _require_openmm()
    from openmm import app, unit  # noqa: PLC0415

    prmtop_path, crd_path = gbsa_files("tip3p")
    prmtop = app.AmberPrmtopFile(str(prmtop_path))
    system = prmtop.createSystem(nonbondedMethod=app.PME, nonbondedCutoff=0.9 * unit.nanometer,
                                 constraints=app.HBonds, rigidWater=True)
    for f in system.getForces():
        if isinstance(f, openmm.NonbondedForce):
            f.setUseDispersionCorrection(True)
            f.setEwaldErrorTolerance(5e-4)
            f.setUseSwitchingFunction(True)
            f.setSwitchingDistance(0.75 * unit.nanometer)
    crd = app.AmberInpcrdFile(str(crd_path))
    box = crd.getBoxVectors(asNumpy=True)
    system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2])
    pos = crd.getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    return system, prmtop.topology, np.asarray(pos, dtype=np.float64), box


def build_alanine_explicit() -> tuple[Any, Any, np.ndarray]:
    """openmmtools' alanine dipeptide in TIP3P water: ``(system, topology, positions)`` (nm, ``(2269, 3)``, the crd
    structure energy-minimised with this system (100 iterations on the one-thread CPU platform), once per process)."""
    system, top, _, _ = _explicit_system()
    return system, top, _explicit_minimised().copy()


@functools.lru_cache(maxsize=1)
def _explicit_minimised() -> np.ndarray:
    openmm = _require_openmm()
    from openmm import unit  # noqa: PLC0415

    system, _, pos, _ = _explicit_system()
    ctx = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("CPU"),
                         {"Threads": "1"})
    ctx.setPositions(pos * unit.nanometer)
    ctx.applyConstraints(1e-6)
    openmm.LocalEnergyMinimizer.minimize(ctx, 10.0, 100)  # the files' box is equilibrated: 100 iterations
    pos = ctx.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    return np.asarray(pos, dtype=np.float64)


def _simulate_explicit(n_traj: int, n_frames: int, start: Any, burn_in: int, seed: int, config: MDConfig,
                       snapshot_every: int, desc: str | None, platform: str) -> dict[str, np.ndarray]:
    """:func:`simulate_alanine` for ``solvent="tip3p"``: one molecule in its water box per ``Context``, the
    trajectories one after another (each from its start, fresh velocities at ``seed + 1 + i``)."""
    openmm = _require_openmm()
    from openmm import unit  # noqa: PLC0415

    system, _, pos, box = _explicit_system()
    if start is None:
        pos = _explicit_minimised()
        x0 = np.broadcast_to(pos, (n_traj, *pos.shape))
    else:
        x0 = np.asarray(start, dtype=np.float64)
        if x0.shape != (n_traj, *pos.shape) or not np.all(np.isfinite(x0)):
            raise ValueError(f"start must be finite positions of shape ({n_traj}, {pos.shape[0]}, 3) nm, "
                             f"got {x0.shape}")
    integ = openmm.LangevinMiddleIntegrator(config.temperature * unit.kelvin, config.friction / unit.picosecond,
                                            config.timestep_fs * unit.femtosecond)
    integ.setRandomNumberSeed(int(seed) % (2**31 - 1) + 1)
    try:
        ctx = openmm.Context(system, integ, openmm.Platform.getPlatformByName(platform),
                             _platform_properties(platform))
    except Exception as exc:  # noqa: BLE001 - OpenMM raises its own OpenMMException (no driver, no device)
        raise ValueError(f"--platform {platform}: OpenMM cannot run on it here "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    phi_atoms, psi_atoms = config.dihedral_atoms()
    out = np.empty((n_traj, n_frames, 2), dtype=np.float32)
    snaps: list[list[np.ndarray]] = [[] for _ in range(n_traj)]
    t0 = time.time()
    for i in progress(range(n_traj), desc=desc):
        ctx.setPeriodicBoxVectors(box[0], box[1], box[2])
        ctx.setPositions(x0[i] * unit.nanometer)
        ctx.applyConstraints(1e-6)
        ctx.setVelocitiesToTemperature(config.temperature * unit.kelvin, int(seed) % (2**31 - 2) + 1 + i)
        for f in range(burn_in + n_frames):
            integ.step(config.steps_per_frame)
            if f < burn_in:
                continue
            x = ctx.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
            x = np.asarray(x, dtype=np.float64)  # unwrapped: the peptide stays whole
            out[i, f - burn_in, 0] = dihedrals(x, phi_atoms)
            out[i, f - burn_in, 1] = dihedrals(x, psi_atoms)
            if snapshot_every and (f - burn_in + 1) % snapshot_every == 0:
                snaps[i].append(x)
    res = {"angles": out, "seconds": np.float64(time.time() - t0)}
    if snapshot_every:
        res["snapshots"] = (np.stack([np.stack(s) for s in snaps]) if snaps[0]
                            else np.empty((n_traj, 0, pos.shape[0], 3)))
    return res


def _gbsa_system(nonbonded: str = "cutoff") -> tuple[Any, Any, np.ndarray]:
    """openmmtools' alanine-dipeptide-gbsa: ``(system, topology, crd positions in nm)``, the system as
    ``AlanineDipeptideImplicit`` builds it (OBC1, bonds to hydrogen constrained), with ``nonbonded`` "cutoff"
    (CutoffNonPeriodic, 2 nm, reaction-field dielectric 1: for the replica system) or "none" (NoCutoff)."""
    openmm = _require_openmm()
    from openmm import app, unit  # noqa: PLC0415

    prmtop_path, crd_path = gbsa_files()
    prmtop = app.AmberPrmtopFile(str(prmtop_path))
    kw: dict[str, Any] = ({"nonbondedMethod": app.CutoffNonPeriodic, "nonbondedCutoff": 2.0 * unit.nanometer}
                          if nonbonded == "cutoff" else {"nonbondedMethod": app.NoCutoff})
    system = prmtop.createSystem(implicitSolvent=app.OBC1, constraints=app.HBonds, **kw)
    for f in system.getForces():
        if isinstance(f, openmm.NonbondedForce):
            f.setReactionFieldDielectric(1.0)  # constant shift per pair: the no-cutoff forces exactly
    pos = app.AmberInpcrdFile(str(crd_path)).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    return system, prmtop.topology, np.asarray(pos, dtype=np.float64)


def build_alanine_gbsa() -> tuple[Any, Any, np.ndarray]:
    """openmmtools' alanine dipeptide in OBC GBSA: ``(system, topology, positions)`` (nm, ``(22, 3)``, the crd
    structure energy-minimised with the no-cutoff system on the Reference platform, once per process)."""
    system, top, _ = _gbsa_system("none")
    return system, top, _gbsa_minimised().copy()


@functools.lru_cache(maxsize=1)
def _gbsa_minimised() -> np.ndarray:
    openmm = _require_openmm()
    from openmm import unit  # noqa: PLC0415

    system, _, pos = _gbsa_system("none")
    ctx = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    ctx.setPositions(pos * unit.nanometer)
    ctx.applyConstraints(1e-6)
    openmm.LocalEnergyMinimizer.minimize(ctx, 1.0, 2000)
    pos = ctx.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    return np.asarray(pos, dtype=np.float64)


def _replicate(system: Any, n_copies: int) -> Any:
    """``n_copies`` of a one-molecule ``system`` in one OpenMM ``System`` (particles of copy k at k·n + i); the
    copies share no term (placed 10 nm apart, beyond the 2 nm cutoff, they do not interact). The centre-of-mass
    remover is dropped (it would couple the copies)."""
    openmm = _require_openmm()
    n = system.getNumParticles()
    out = openmm.System()
    for k in range(n_copies):
        for i in range(n):
            out.addParticle(system.getParticleMass(i))
        for c in range(system.getNumConstraints()):
            i, j, d = system.getConstraintParameters(c)
            out.addConstraint(i + k * n, j + k * n, d)
    for f in system.getForces():
        if isinstance(f, openmm.CMMotionRemover):
            continue
        g = openmm.XmlSerializer.clone(f)
        for k in range(1, n_copies):
            o = k * n
            if isinstance(f, openmm.HarmonicBondForce):
                for b in range(f.getNumBonds()):
                    i, j, r0, kb = f.getBondParameters(b)
                    g.addBond(i + o, j + o, r0, kb)
            elif isinstance(f, openmm.HarmonicAngleForce):
                for b in range(f.getNumAngles()):
                    i, j, m, a0, ka = f.getAngleParameters(b)
                    g.addAngle(i + o, j + o, m + o, a0, ka)
            elif isinstance(f, openmm.PeriodicTorsionForce):
                for b in range(f.getNumTorsions()):
                    i, j, m, q, per, ph, kt = f.getTorsionParameters(b)
                    g.addTorsion(i + o, j + o, m + o, q + o, per, ph, kt)
            elif isinstance(f, openmm.NonbondedForce):
                for i in range(n):
                    g.addParticle(*f.getParticleParameters(i))
                for e in range(f.getNumExceptions()):
                    i, j, qq, sig, eps = f.getExceptionParameters(e)
                    g.addException(i + o, j + o, qq, sig, eps)
            elif isinstance(f, openmm.CustomGBForce):
                for i in range(n):
                    g.addParticle(f.getParticleParameters(i))
                for e in range(f.getNumExclusions()):
                    i, j = f.getExclusionParticles(e)
                    g.addExclusion(i + o, j + o)
            else:  # pragma: no cover - the prmtop's system has only the forces above
                raise ValueError(f"cannot replicate an OpenMM {type(f).__name__}")
        out.addForce(g)
    return out


def _replica_context(n_copies: int, config: MDConfig, seed: int, platform: str = "CPU"
                     ) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    openmm = _require_openmm()
    from openmm import app, unit  # noqa: PLC0415

    homes = _SPACING_NM * np.stack(np.unravel_index(np.arange(n_copies), (64, 64, 64)), axis=1).astype(float)
    if config.solvent == "gbsa":
        _, _, pos = build_alanine_gbsa()
        system = _replicate(_gbsa_system("cutoff")[0], n_copies)
    else:
        ff, top, pos = build_alanine_dipeptide(config)
        mod = app.Modeller(top, pos * unit.nanometer)
        for k in range(1, n_copies):
            mod.add(top, (pos + homes[k]) * unit.nanometer)
        system = ff.createSystem(mod.topology, nonbondedMethod=app.CutoffNonPeriodic,
                                 nonbondedCutoff=2.0 * unit.nanometer, constraints=app.HBonds)
    for i in reversed(range(system.getNumForces())):
        f = system.getForce(i)
        if isinstance(f, openmm.NonbondedForce):
            f.setReactionFieldDielectric(1.0)  # constant shift per pair: the vacuum forces exactly
        if isinstance(f, openmm.CMMotionRemover):
            system.removeForce(i)  # it would couple the copies (one centre of mass for all)
    integ = openmm.LangevinMiddleIntegrator(config.temperature * unit.kelvin, config.friction / unit.picosecond,
                                            config.timestep_fs * unit.femtosecond)
    integ.setRandomNumberSeed(int(seed) % (2**31 - 1) + 1)
    try:
        plat = openmm.Platform.getPlatformByName(platform)
        ctx = openmm.Context(system, integ, plat, _platform_properties(platform))
    except Exception as exc:  # noqa: BLE001 - OpenMM raises its own OpenMMException (no driver, no device)
        raise ValueError(f"--platform {platform}: OpenMM cannot run on it here "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    return ctx, integ, pos, homes


def simulate_alanine(n_traj: int, n_frames: int, *, start: Any = None, burn_in: int = 0, seed: int = 0,
                     config: MDConfig = MDConfig(), snapshot_every: int = 0,
                     desc: str | None = "alanine MD", platform: str = "CPU") -> dict[str, np.ndarray]:
    """Simulate ``n_traj`` independent copies of alanine dipeptide for ``burn_in + n_frames`` frames of 1 ps.

    ``start``: positions ``(n_traj, 22, 3)`` in nm (e.g. frames of an equilibrium run), or ``None`` for the
    minimised built structure. Velocities are drawn from Maxwell-Boltzmann at ``seed`` (OpenMM's CPU platform
    is not bitwise reproducible: the same seed gives statistically, not numerically, equal runs).
    Returns ``{"angles": (n_traj, n_frames, 2) φ, ψ in radians, "seconds": wall}`` and, with
    ``snapshot_every = s > 0``, ``"snapshots": (n_traj, n_frames // s, 22, 3)`` positions (nm, centred) of
    every s-th saved frame. ``platform``: OpenMM's platform (:func:`openmm_platform`; ``"auto"`` allowed), CPU
    by default. With ``config.solvent == "tip3p"`` the positions are the whole water box's (``(n_traj, 2269, 3)``,
    unwrapped) and the trajectories run one after another.
    """
    openmm = _require_openmm()
    platform = openmm_platform(platform)
    from openmm import unit  # noqa: PLC0415

    seed = check_seed(seed)
    if isinstance(n_traj, bool) or not isinstance(n_traj, int | np.integer) or n_traj < 1:
        raise ValueError(f"n_traj must be a positive integer, got {n_traj!r}")
    if isinstance(n_frames, bool) or not isinstance(n_frames, int | np.integer) or n_frames < 1:
        raise ValueError(f"n_frames must be a positive integer, got {n_frames!r}")
    if config.solvent == "tip3p":
        return _simulate_explicit(int(n_traj), int(n_frames), start, int(burn_in), seed, config, snapshot_every,
                                  desc, platform)
    t0 = time.time()
    ctx, integ, pos, homes = _replica_context(int(n_traj), config, seed, platform)
    if start is None:
        x = np.broadcast_to(pos, (n_traj, *pos.shape)).copy()
    else:
        x = np.asarray(start, dtype=np.float64)
        if x.shape != (n_traj, *pos.shape) or not np.all(np.isfinite(x)):
            raise ValueError(f"start must be finite positions of shape ({n_traj}, {pos.shape[0]}, 3) nm, "
                             f"got {x.shape}")
    x = x - x.mean(axis=1, keepdims=True) + homes[:, None, :] + pos.mean(axis=0)
    ctx.setPositions(x.reshape(-1, 3) * unit.nanometer)
    ctx.applyConstraints(1e-6)
    ctx.setVelocitiesToTemperature(config.temperature * unit.kelvin, seed + 1)
    n_atoms = pos.shape[0]
    phi_atoms, psi_atoms = config.dihedral_atoms()
    out = np.empty((n_traj, n_frames, 2), dtype=np.float32)
    snaps = []
    for f in progress(range(burn_in + n_frames), desc=desc):
        integ.step(config.steps_per_frame)
        st = ctx.getState(getPositions=True)
        x = st.getPositions(asNumpy=True).value_in_unit(unit.nanometer).reshape(n_traj, n_atoms, 3)
        if f >= burn_in:
            out[:, f - burn_in, 0] = dihedrals(x, phi_atoms)
            out[:, f - burn_in, 1] = dihedrals(x, psi_atoms)
            if snapshot_every and (f - burn_in + 1) % snapshot_every == 0:
                snaps.append(x - x.mean(axis=1, keepdims=True))
        # back to the home cells (a rigid translation per copy: the dynamics do not change)
        shift = np.round((x.mean(axis=1) - homes) / _SPACING_NM * 4) / 4 * _SPACING_NM
        if np.any(shift != 0):
            ctx.setPositions((x - shift[:, None, :]).reshape(-1, 3) * unit.nanometer)
    res = {"angles": out, "seconds": np.float64(time.time() - t0)}
    if snapshot_every:
        res["snapshots"] = np.stack(snaps, axis=1) if snaps else np.empty((n_traj, 0, n_atoms, 3))
    del openmm
    return res


@dataclasses.dataclass(frozen=True)
class AlanineData:
    """Dihedral data of alanine dipeptide: ``equilibrium`` ``(n_eq, F_eq, 2)`` and ``short`` ``(n_short,
    F_short, 2)`` angles in radians, frame spacing 1 ps, and the provenance ``meta``."""

    equilibrium: np.ndarray
    short: np.ndarray
    meta: dict[str, Any]

    def features(self, which: str = "short") -> np.ndarray:
        return featurize(getattr(self, which))


_QUANT = 1e4  # angles stored as int16 of 1e-4 rad


def save_data(path: str | Path, data: AlanineData) -> Path:
    """Write ``data`` as a compressed ``.npz`` (angles as int16 multiples of 1e-4 rad; JSON metadata)."""
    import json  # noqa: PLC0415

    from iclr25.utils.io import atomic_path  # noqa: PLC0415

    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, equilibrium=np.round(data.equilibrium * _QUANT).astype(np.int16),
                            short=np.round(data.short * _QUANT).astype(np.int16),
                            meta=np.array(json.dumps(data.meta)))
    return path


def load_data(path: str | Path) -> AlanineData:
    """Read a data set written by :func:`save_data` (or ``iclr25 bopito alanine-md``)."""
    import json  # noqa: PLC0415

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"alanine data file {str(path)!r} does not exist")
    what = "not an alanine dihedral data set (arrays equilibrium, short, meta)"
    try:
        z = read_npz(path, required=("equilibrium", "short", "meta"), what="alanine dihedral data")
        eq = z["equilibrium"].astype(np.float64) / _QUANT
        sh = z["short"].astype(np.float64) / _QUANT
        meta = json.loads(str(z["meta"]))
    except DataFileError as e:
        raise ValueError(f"{str(path)!r} is {what}: {e.problem}") from e
    except (TypeError, ValueError) as e:
        raise ValueError(f"{str(path)!r} is {what}: {e}") from e
    for name, a in (("equilibrium", eq), ("short", sh)):
        if a.ndim != 3 or a.shape[2] != 2:
            raise ValueError(f"{name} in {str(path)!r} must have shape (n_traj, n_frames, 2), got {a.shape}")
    return AlanineData(eq, sh, meta)


def load_shipped(solvent: str = "vacuum") -> AlanineData:
    """A dihedral data set shipped in the wheel (made by ``iclr25 bopito alanine-md``; see its ``meta``):
    ``"vacuum"`` (default), ``"gbsa"`` (OBC GBSA implicit solvent, smaller: see its ``meta["command"]``) or
    ``"tip3p"`` (TIP3P explicit water, about 0.3 ns in frames of 0.1 ps: ``meta["frame_ps"]``)."""
    if solvent not in SHIPPED_SETS:
        raise ValueError(f"solvent must be one of {', '.join(SHIPPED_SETS)} (the shipped sets), got {solvent!r}")
    return load_data(SHIPPED_SETS[solvent])


def load_alanine(path: str | Path | None = None) -> AlanineData:
    """Alanine-dipeptide dihedrals: the shipped set (``path=None``) or one written by ``alanine-md``."""
    return load_shipped() if path is None else load_data(path)


def generate_data(*, n_eq: int, eq_frames: int, n_short: int, short_frames: int, burn_in: int = 100,
                  seed: int = 0, config: MDConfig = MDConfig(), desc: bool = True, platform: str = "CPU"
                  ) -> AlanineData:
    """The MD of the alanine experiment: ``n_eq`` equilibrium runs of ``eq_frames`` frames after ``burn_in``
    frames, then ``n_short`` short trajectories of ``short_frames`` frames started from frames of those runs
    taken at random (fresh velocities), on OpenMM's ``platform`` (:func:`openmm_platform`)."""
    seed = check_seed(seed)
    t0, c0 = time.time(), time.process_time()
    snap = max(1, eq_frames // 20)
    eq = simulate_alanine(n_eq, eq_frames, burn_in=burn_in, seed=seed, config=config, snapshot_every=snap,
                          desc="equilibrium MD" if desc else None, platform=platform)
    # the short runs start from frames of the equilibrium runs (every ``snap``-th frame), drawn at random, with
    # fresh velocities: the paper starts them from samples of its Boltzmann generator
    pool = eq["snapshots"].reshape(-1, *eq["snapshots"].shape[2:])
    pick = np.random.default_rng(seed + 11).choice(len(pool), size=n_short, replace=n_short > len(pool))
    t1 = time.time()
    sh = simulate_alanine(n_short, short_frames, start=pool[pick], seed=seed + 1, config=config,
                          desc="short MD" if desc else None, platform=platform)
    meta = {"system": config.describe(), "md": dataclasses.asdict(config),
            "frame_ps": config.timestep_fs * config.steps_per_frame / 1000.0, "seed": seed,
            "n_eq": n_eq, "eq_frames": eq_frames, "n_short": n_short, "short_frames": short_frames,
            "burn_in_frames": burn_in, "short_starts": f"equilibrium-run frames (every {snap}-th), at random",
            "seconds_equilibrium": round(t1 - t0, 1),
            "seconds_short": round(time.time() - t1, 1), "cpu_seconds": round(time.process_time() - c0, 1),
            "load_at_end": [round(v, 2) for v in __import__("os").getloadavg()]}
    return AlanineData(eq["angles"].astype(np.float64), sh["angles"].astype(np.float64), meta)
