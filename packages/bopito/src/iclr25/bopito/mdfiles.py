"""Trajectories of the user's own MD (issue 63): ``.xtc``, ``.dcd``, ``.h5`` (mdtraj's HDF5) or ``.npy`` coordinates
with a PDB topology, read by mdtraj and featurised as the shipped alanine-dipeptide data are.

Features: every backbone φ (C-N-Cα-C over consecutive residues) and ψ (N-Cα-C-N) that mdtraj finds in the
topology, as ``(sin φ_1, cos φ_1, …, sin ψ_1, cos ψ_1, …)``; for alanine dipeptide (Ace-Ala-NMe, one φ and one ψ)
that is exactly :func:`iclr25.bopito.alanine.featurize`'s ``(sin φ, cos φ, sin ψ, cos ψ)``. One file is one
trajectory; files of different lengths are cut to the shortest (the models need ``(n_traj, n_frames, dim)``).

Files stream: mdtraj reads ``chunk`` frames at a time and keeps only the dihedrals' atoms; an ``.npy`` is
memory-mapped (``(n_frames, n_atoms, 3)`` or ``(n_frames, 3 n_atoms)``, never unpickled; ``n_atoms`` is the
topology's, or its heavy atoms' as in mdshare's ``*-heavy-atom-positions.npy``). A malformed, truncated or
mismatched file is a one-line :class:`~iclr25.utils.io.DataFileError` naming it.

mdtraj (and PyTables for ``.h5``) is the optional extra ``traj``: ``pip install 'iclr25-bopito[traj]'``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, existing_file

from .alanine import dihedrals
from .systems import Trajectories

__all__ = ["MD_SUFFIXES", "TOPOLOGY_SUFFIXES", "load_topology", "backbone_dihedrals", "read_dihedrals",
           "load_md_trajectories"]

#: trajectory formats read through mdtraj (``.npy``: coordinates, with a topology)
MD_SUFFIXES = (".xtc", ".dcd", ".h5", ".npy")
TOPOLOGY_SUFFIXES = (".pdb",)
#: frames per chunk when streaming a file
CHUNK = 10_000
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _require_mdtraj(path: str | os.PathLike[str] | None = None) -> Any:
    try:
        import mdtraj  # noqa: PLC0415
    except ImportError as e:
        where = f"{path}: " if path is not None else ""
        raise ImportError(f"{where}reading .xtc/.dcd/.h5/.npy trajectories and PDB topologies needs mdtraj: pip "
                          "install 'iclr25-bopito[traj]'") from e
    return mdtraj


@contextlib.contextmanager
def _quiet_c_output() -> Iterator[None]:
    """Silence what mdtraj's C readers print on file descriptors 1 and 2 ("dcdplugin) detected ...", "(xdrfile
    error) ..."): an error reaches the user once, as the exception's one line."""
    try:
        fds = (sys.stdout.fileno(), sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # replaced streams (pytest capture): nothing to redirect
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in fds]
    with tempfile.TemporaryFile() as sink:
        try:
            for fd in fds:
                os.dup2(sink.fileno(), fd)
            yield
        finally:
            for fd, s in zip(fds, saved, strict=True):
                os.dup2(s, fd)
                os.close(s)


def _reason(exc: BaseException) -> str:
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {first[:160]}" if first else type(exc).__name__


def load_topology(path: str | os.PathLike[str]) -> Any:
    """An mdtraj ``Topology`` from a PDB file; a file with no atoms or one mdtraj cannot parse is a
    :class:`DataFileError` naming it."""
    md = _require_mdtraj()
    p, _ = existing_file(path, TOPOLOGY_SUFFIXES, "topology")
    try:
        with open(p, "rb") as fh:
            has_atoms = any(line.startswith((b"ATOM", b"HETATM")) for line in fh)
    except OSError as exc:
        raise DataFileError(p, f"cannot be read ({_reason(exc)})") from exc
    if not has_atoms:
        raise DataFileError(p, "no ATOM/HETATM records: not a PDB topology")
    try:
        with _quiet_c_output():
            top = md.load_topology(str(p))
    except Exception as exc:  # noqa: BLE001 - mdtraj's parsers raise many kinds; each becomes one line
        raise DataFileError(p, f"not a readable PDB topology ({_reason(exc)})") from exc
    if top.n_atoms == 0:
        raise DataFileError(p, "no ATOM/HETATM records: not a PDB topology")
    return top


def backbone_dihedrals(topology: Any, *, name: str = "the topology") -> tuple[np.ndarray, np.ndarray]:
    """Atom indices ``(n_φ, 4)`` and ``(n_ψ, 4)`` of the backbone dihedrals mdtraj finds in ``topology``
    (alanine dipeptide: ``[[C_ace, N, Cα, C]]`` and ``[[N, Cα, C, N_nme]]``); none is a ``ValueError``."""
    md = _require_mdtraj()
    probe = md.Trajectory(np.zeros((1, topology.n_atoms, 3), dtype=np.float32), topology)
    phi = np.asarray(md.compute_phi(probe)[0], dtype=np.int64).reshape(-1, 4)
    psi = np.asarray(md.compute_psi(probe)[0], dtype=np.int64).reshape(-1, 4)
    if len(phi) + len(psi) == 0:
        raise ValueError(f"{name}: no backbone phi/psi dihedral (C-N-CA-C or N-CA-C-N over consecutive residues, "
                         "PDB atom names); the features are backbone dihedrals, so a peptide or protein is expected")
    return phi, psi


def _check_hdf5(p: Path) -> None:
    with open(p, "rb") as fh:
        if fh.read(8) != _HDF5_SIGNATURE:
            raise DataFileError(p, "not an HDF5 file (no HDF5 signature); .h5 trajectories are mdtraj's HDF5 format")


def _h5_topology(md: Any, p: Path) -> Any:
    """The topology an mdtraj ``.h5`` trajectory carries."""
    _check_hdf5(p)
    try:
        with _quiet_c_output(), md.open(str(p)) as fh:
            top = fh.topology
    except Exception as exc:  # noqa: BLE001 - PyTables raises its own kinds
        raise DataFileError(p, f"not a readable .h5 trajectory ({_reason(exc)})") from exc
    if top is None or top.n_atoms == 0:
        raise DataFileError(p, "holds no topology; pass --top PDB")
    return top


def _frames_atoms(md: Any, p: Path) -> int:
    """Atoms per frame of an mdtraj-readable file (reads one frame)."""
    with md.open(str(p)) as fh:
        r = fh.read(n_frames=1)
    xyz = r.coordinates if hasattr(r, "coordinates") else r[0]
    xyz = np.asarray(xyz)
    if xyz.ndim != 3 or xyz.shape[0] < 1:
        raise DataFileError(p, "holds no frame")
    return int(xyz.shape[1])


def _npy_frames(p: Path, n_atoms: int, n_heavy: int) -> tuple[np.ndarray, bool]:
    """The memory-mapped coordinates ``(n_frames, n, 3)`` of an ``.npy`` and whether they are the heavy atoms."""
    try:
        a = np.load(p, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise DataFileError(p, f"cannot read as .npy ({_reason(exc)})") from exc
    if a.dtype.kind not in "fiu":
        raise DataFileError(p, f"coordinates must be numeric, got dtype {a.dtype}")
    if a.ndim == 2 and a.shape[1] % 3 == 0:
        a = a.reshape(a.shape[0], a.shape[1] // 3, 3)
    if a.ndim != 3 or a.shape[2] != 3 or a.shape[1] not in (n_atoms, n_heavy):
        heavy = f" or {n_heavy} (its heavy atoms)" if n_heavy != n_atoms else ""
        raise DataFileError(p, f"coordinates must have shape (n_frames, n_atoms, 3) or (n_frames, 3 n_atoms) with "
                               f"n_atoms = {n_atoms} (the topology's atoms){heavy}, got {a.shape}")
    return a, a.shape[1] != n_atoms


def read_dihedrals(path: str | os.PathLike[str], topology: Any | None, atoms: np.ndarray, *,
                   top_name: str = "the topology", stride: int = 1,
                   chunk: int = CHUNK) -> tuple[np.ndarray, float | None]:
    """Dihedral angles (radians) ``(n_frames, len(atoms))`` of one trajectory file and its frame spacing in ps
    (``None`` where the file has no times: ``.npy``, or a ``.dcd`` without them). ``topology``: an mdtraj
    ``Topology`` (``None`` only for ``.h5``, which holds its own). Streams ``chunk`` frames at a time."""
    md = _require_mdtraj()
    p, suffix = existing_file(path, MD_SUFFIXES, "trajectory")
    atoms = np.asarray(atoms, dtype=np.int64).reshape(-1, 4)
    sel = np.unique(atoms)
    local = np.searchsorted(sel, atoms)
    out: list[np.ndarray] = []
    times: list[np.ndarray] = []
    if suffix == ".npy":
        heavy = [a.index for a in topology.atoms if a.element is None or a.element.symbol != "H"]
        xyz, is_heavy = _npy_frames(p, topology.n_atoms, len(heavy))
        if is_heavy:
            pos = {a: i for i, a in enumerate(heavy)}
            missing = [int(a) for a in sel if int(a) not in pos]
            if missing:  # pragma: no cover - backbone dihedral atoms are heavy atoms
                raise DataFileError(p, f"heavy-atom coordinates lack the dihedral atoms {missing}")
            sel = np.array([pos[int(a)] for a in sel], dtype=np.int64)
        for i in range(0, xyz.shape[0], chunk * stride):
            block = np.asarray(xyz[i:i + chunk * stride:stride][:, sel], dtype=np.float64)
            if not np.all(np.isfinite(block)):
                raise DataFileError(p, "coordinates contain NaN or inf")
            out.append(np.stack([dihedrals(block, tuple(int(j) for j in q)) for q in local], axis=-1))
        angles = np.concatenate(out) if out else np.zeros((0, len(atoms)))
        return angles, None
    if suffix == ".h5":
        _check_hdf5(p)
    try:
        with _quiet_c_output():
            n_file = _frames_atoms(md, p)
    except DataFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - each reader of mdtraj fails in its own way
        raise DataFileError(p, f"not a readable {suffix} trajectory ({_reason(exc)})") from exc
    if suffix == ".h5" and topology is None:
        topology = _h5_topology(md, p)
        top_name = f"{p} (its topology)"
    if topology is None:
        raise ValueError(f"{p}: {suffix} files carry no topology; pass --top PDB")
    if n_file != topology.n_atoms:
        raise DataFileError(p, f"{n_file} atoms per frame, but {top_name} has {topology.n_atoms}; pass the PDB the "
                               "trajectory was written with")
    n_read = 0
    try:
        with _quiet_c_output():
            for ch in md.iterload(str(p), top=topology, chunk=chunk, stride=stride, atom_indices=sel):
                xyz = np.asarray(ch.xyz, dtype=np.float64)
                if not np.all(np.isfinite(xyz)):
                    raise DataFileError(p, f"coordinates contain NaN or inf (frames {n_read}-{n_read + len(xyz)})")
                out.append(np.stack([dihedrals(xyz, tuple(int(j) for j in q)) for q in local], axis=-1))
                if ch.time is not None:
                    times.append(np.asarray(ch.time, dtype=np.float64))
                n_read += len(xyz)
    except DataFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or corrupt file fails inside mdtraj's reader
        raise DataFileError(p, f"unreadable after {n_read} frame(s), truncated or corrupt ({_reason(exc)})") from exc
    angles = np.concatenate(out) if out else np.zeros((0, len(atoms)))
    dt: float | None = None
    t = np.concatenate(times) if times else np.zeros(0)
    if suffix != ".dcd" and len(t) == len(angles) and len(t) >= 2:  # a DCD's "times" are frame numbers
        d = np.diff(t)
        if np.all(d > 0) and np.allclose(d, d[0], rtol=1e-4, atol=1e-6):
            dt = float(d[0])
    return angles, dt


def load_md_trajectories(paths: Sequence[str | os.PathLike[str]], top: str | os.PathLike[str] | None = None, *,
                         stride: int = 1, chunk: int = CHUNK, quiet: bool = False) -> Trajectories:
    """Read MD trajectory files (one trajectory each) into :class:`~iclr25.bopito.systems.Trajectories` of
    backbone dihedral features (see the module). ``top``: a PDB (required except for ``.h5``, which carries its
    topology); ``stride``: keep every ``stride``-th frame. ``frame_dt`` is the files' frame spacing in ps (1.0,
    "frame", where they have no times)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise ValueError("trajectory files: expected at least one .xtc, .dcd, .h5 or .npy file")
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride must be an integer >= 1, got {stride!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
    files = [existing_file(p, MD_SUFFIXES, "trajectory") for p in paths]
    _require_mdtraj(files[0][0])
    topology = None
    top_name = "the topology"
    if top is not None:
        topology = load_topology(top)
        top_name = str(top)
    else:
        bad = [str(p) for p, s in files if s != ".h5"]
        if bad:
            raise ValueError(f"{bad[0]}: .xtc, .dcd and .npy trajectories need a topology: pass --top PDB (the PDB "
                             "the trajectory was written with)")
    angles: list[np.ndarray] = []
    dts: list[float | None] = []
    phi = psi = None
    for p, _suffix in files:
        t = topology
        if t is None:  # an .h5 with its own topology
            t = _h5_topology(_require_mdtraj(), p)
        ph, ps = backbone_dihedrals(t, name=top_name if topology is not None else str(p))
        if phi is None:
            phi, psi = ph, ps
        elif not (np.array_equal(ph, phi) and np.array_equal(ps, psi)):
            raise DataFileError(p, "its topology's backbone dihedrals differ from the first file's; one molecule per "
                                   "training set")
        a, dt = read_dihedrals(p, t, np.concatenate([ph, ps]), top_name=top_name, stride=stride, chunk=chunk)
        if len(a) < 2:
            raise DataFileError(p, f"{len(a)} frame(s) after --stride {stride}; a trajectory needs at least 2")
        angles.append(a)
        dts.append(dt)
    known = [d for d in dts if d is not None]
    if known and not np.allclose(known, known[0], rtol=1e-4):
        i = next(i for i, d in enumerate(dts) if d is not None and not np.isclose(d, known[0], rtol=1e-4))
        raise DataFileError(files[i][0], f"frame spacing {dts[i]:g} ps differs from the other files' {known[0]:g} ps; "
                                         "the frames of one training set share one spacing")
    lengths = [len(a) for a in angles]
    n = min(lengths)
    if not quiet and len(set(lengths)) > 1:
        print(f"trajectories of {min(lengths)}-{max(lengths)} frames: each cut to the shortest, {n} frames")
    ang = np.stack([a[:n] for a in angles])
    x = np.stack([f(ang) for f in (np.sin, np.cos)], axis=-1).reshape(len(angles), n, -1)
    assert phi is not None and psi is not None
    params = {"files": [str(p) for p, _ in files], "topology": None if top is None else str(top),
              "stride": int(stride), "frames_per_file": lengths, "n_frames_used": n,
              "features": "(sin, cos) of each backbone phi, then each psi",
              "phi_atoms": phi.tolist(), "psi_atoms": psi.tolist(),
              "frame_unit": "ps" if known else "frame"}
    return Trajectories(x, known[0] if known else 1.0, "md", params)
