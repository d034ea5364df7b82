"""Your own MD (issue 63): .xtc/.dcd/.h5/.npy trajectories with a PDB topology, read by mdtraj into backbone
dihedral features, and `iclr25 bopito train DATA --top PDB` end to end. The fixtures are written here by mdtraj
itself: a heavy-atom alanine-dipeptide PDB and a few frames of known φ/ψ."""

import json
from pathlib import Path

import numpy as np
import pytest

md = pytest.importorskip("mdtraj")  # the optional extra `traj`

from iclr25.bopito.alanine import _heavy_atom_pdb, dihedrals, featurize  # noqa: E402
from iclr25.bopito.mdfiles import backbone_dihedrals, load_md_trajectories, load_topology  # noqa: E402
from iclr25.utils.io import DataFileError  # noqa: E402

#: (φ, ψ) in degrees of the fixture's frames: C7eq, αR, αL, C5, β
ANGLES = np.array([(-80.0, 150.0), (-70.0, -40.0), (60.0, 30.0), (-150.0, 160.0), (-120.0, 120.0)])


def _xyz(phi: float, psi: float) -> np.ndarray:
    """Heavy-atom coordinates (nm) of Ace-Ala-NMe built at (φ, ψ) by the package's offline builder."""
    rows = [ln for ln in _heavy_atom_pdb(phi, psi).splitlines() if ln.startswith("ATOM")]
    return np.array([[float(ln[30:38]), float(ln[38:46]), float(ln[46:54])] for ln in rows]) / 10.0


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    d = tmp_path_factory.mktemp("md")
    (d / "ala.pdb").write_text(_heavy_atom_pdb())
    top = md.load_topology(str(d / "ala.pdb"))
    xyz = np.stack([_xyz(*a) for a in ANGLES]).astype(np.float32)
    tr = md.Trajectory(xyz, top, time=np.arange(len(ANGLES)) * 2.0)  # frames 2 ps apart
    tr.save_xtc(str(d / "a.xtc"))
    tr[::-1].save_xtc(str(d / "b.xtc"))
    tr.save_dcd(str(d / "a.dcd"))
    tr.save_hdf5(str(d / "a.h5"))
    np.save(d / "a.npy", xyz)
    tr.atom_slice(range(9)).save_pdb(str(d / "nine.pdb"))  # still has φ and ψ, one atom fewer
    return d


def test_topology_gives_alanine_phi_and_psi(fixture):
    phi, psi = backbone_dihedrals(load_topology(fixture / "ala.pdb"))
    # ACE C, ALA N, CA, C and ALA N, CA, C, NME N in the heavy-atom PDB's order
    assert phi.tolist() == [[1, 3, 4, 5]] and psi.tolist() == [[3, 4, 5, 8]]


@pytest.mark.parametrize("name, tol", [("a.xtc", 0.02), ("a.dcd", 1e-3), ("a.h5", 1e-3), ("a.npy", 1e-3)])
def test_each_format_gives_the_known_dihedral_features(fixture, name, tol):
    tr = load_md_trajectories([fixture / name], fixture / "ala.pdb", chunk=2)  # streams in chunks of 2 frames
    assert tr.x.shape == (1, len(ANGLES), 4) and tr.system == "md"
    # the features are exactly the shipped data's: (sin φ, cos φ, sin ψ, cos ψ) of the frames' angles (to the
    # PDB's 0.001 Å rounding and, for .xtc, its 0.001 nm precision) ...
    np.testing.assert_allclose(tr.x[0], featurize(np.radians(ANGLES)), atol=tol)
    # ... and of mdtraj's own φ/ψ of the same coordinates
    src = fixture / ("a.xtc" if name == "a.npy" else name)
    ref = md.load(str(src)) if name == "a.h5" else md.load(str(src), top=str(fixture / "ala.pdb"))
    if name == "a.npy":
        ref.xyz = np.load(fixture / name)
    want = np.concatenate([md.compute_phi(ref)[1], md.compute_psi(ref)[1]], axis=1)
    np.testing.assert_allclose(tr.x[0], featurize(want), atol=1e-5)
    # .xtc and .h5 carry times (2 ps apart); .dcd and .npy do not
    assert tr.frame_dt == (2.0 if name in ("a.xtc", "a.h5") else 1.0)
    assert tr.params["frame_unit"] == ("ps" if name in ("a.xtc", "a.h5") else "frame")


def test_several_files_stride_and_h5_topology(fixture):
    tr = load_md_trajectories([fixture / "a.xtc", fixture / "b.xtc"], fixture / "ala.pdb")
    assert tr.x.shape == (2, 5, 4)
    np.testing.assert_allclose(tr.x[1], tr.x[0][::-1], atol=1e-6)
    s = load_md_trajectories([fixture / "a.xtc"], fixture / "ala.pdb", stride=2)
    np.testing.assert_allclose(s.x[0], tr.x[0][::2])
    assert s.frame_dt == 4.0
    h = load_md_trajectories([fixture / "a.h5"])  # the .h5 holds its topology
    np.testing.assert_allclose(h.x[0], featurize(np.radians(ANGLES)), atol=1e-3)


def test_malformed_files_are_one_error_naming_them(fixture, tmp_path):
    (tmp_path / "t.xtc").write_bytes((fixture / "a.xtc").read_bytes()[:150])  # truncated inside frame 1
    (tmp_path / "g.dcd").write_bytes(b"not a dcd file at all")
    (tmp_path / "g.h5").write_bytes(b"not hdf5")
    (tmp_path / "e.pdb").write_text("REMARK nothing here\nEND\n")
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    cases = [(["t.xtc"], fixture / "ala.pdb", "t.xtc"), (["g.dcd"], fixture / "ala.pdb", "g.dcd"),
             (["g.h5"], None, "g.h5"), ([fixture / "a.xtc"], tmp_path / "e.pdb", "e.pdb"),
             ([fixture / "a.xtc"], fixture / "nine.pdb", "10 atoms per frame, but"),
             ([fixture / "a.npy"], fixture / "nine.pdb", "a.npy"), (["bad.npy"], fixture / "ala.pdb", "bad.npy")]
    for files, top, want in cases:
        with pytest.raises(DataFileError, match=want.replace(".", r"\.")):
            load_md_trajectories([tmp_path / f if isinstance(f, str) else f for f in files], top)
    with pytest.raises(ValueError, match="--top"):
        load_md_trajectories([fixture / "a.xtc"])


def _cli(capsys, *argv):
    from iclr25.bopito.cli import main

    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr()


def test_cli_train_on_xtc_and_pdb_end_to_end(fixture, tmp_path, capsys):
    tiny = ("--steps", "3", "--width", "8", "--depth", "1", "--n-diffusion", "10", "--batch-size", "8")
    rc, out = _cli(capsys, "train", fixture / "a.xtc", fixture / "b.xtc", "--top", fixture / "ala.pdb",
                   "--out", tmp_path / "m", "--lambda-hat", "0.9", *tiny)
    assert rc == 0, out.err
    assert "read 2 trajectory file(s): 5 frames each (2 ps apart), 4 features" in out.out
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg["config"]["kind"] == "bopito" and cfg["config"]["dim"] == 4 and cfg["config"]["max_lag"] == 4
    res = json.loads((tmp_path / "m" / "results.json").read_text())
    assert res["config"]["data"] == [str(fixture / "a.xtc"), str(fixture / "b.xtc")]
    assert res["config"]["data_params"]["topology"] == str(fixture / "ala.pdb")
    # samples from the trained model start at featurised frames of the trajectory
    np.save(tmp_path / "x0.npy", featurize(np.radians(ANGLES)))
    rc, out = _cli(capsys, "sample", "--model", tmp_path / "m", "--lag", "2", "--x0", tmp_path / "x0.npy",
                   "--steps", "3", "--out", tmp_path / "s.npz")
    assert rc == 0, out.err
    with np.load(tmp_path / "s.npz") as z:
        assert z["x"].shape == (len(ANGLES), 4) and np.all(np.isfinite(z["x"]))
    # .npy coordinates with the PDB, and a DCD, train too (ITO: no λ̂)
    rc, out = _cli(capsys, "train", fixture / "a.npy", fixture / "a.dcd", "--top", fixture / "ala.pdb",
                   "--kind", "ito", "--out", tmp_path / "m2", *tiny)
    assert rc == 0, out.err


def test_cli_bad_md_input_is_one_line(fixture, tmp_path, capsys):
    (tmp_path / "g.dcd").write_bytes(b"not a dcd file at all")
    cases = [(["g.dcd", "--top", fixture / "ala.pdb"], "g.dcd"),
             ([fixture / "a.xtc"], "--top"),
             ([fixture / "a.xtc", "--top", fixture / "nine.pdb"], "a.xtc"),
             ([fixture / "a.xtc", fixture / "b.xtc", "--top", fixture / "ala.pdb", "--lambda-hat", "auto"],
              "--lambda-hat")]
    for args, want in cases:
        args = [tmp_path / a if isinstance(a, str) and not a.startswith("-") else a for a in args]
        rc, out = _cli(capsys, "train", *args, "--out", tmp_path / "m", "--steps", "2")
        assert rc == 2 and want in out.err and len(out.err.strip().splitlines()) == 1, out.err
    assert not (tmp_path / "m").exists()


DATA = Path(__file__).parent / "data"


def test_cli_train_on_real_allatom_xtc_and_pdb(tmp_path, capsys):
    # issue 63, in exactly the users' format: an all-atom PDB (22 atoms with hydrogens, ACE-ALA-NME, the layout of
    # mdshare's alanine-dipeptide-nowater.pdb) and an .xtc of real MD frames 1 ps apart (openmmtools' GBSA system,
    # written by tests/data/make_md_fixture.py and shipped here)
    xtc, pdb = DATA / "ala2-gbsa.xtc", DATA / "ala2-allatom.pdb"
    tr = load_md_trajectories([xtc], pdb)
    assert tr.x.shape == (1, 40, 4) and tr.frame_dt == 1.0
    # the features are (sin, cos) of the backbone φ, ψ that the package's own dihedral code gives on the raw
    # coordinates (Amber's atom order: φ = C(ACE) N CA C, ψ = N CA C N(NME))
    names = [(a.residue.name, a.name) for a in md.load_topology(str(pdb)).atoms]
    phi_atoms = tuple(names.index(k) for k in (("ACE", "C"), ("ALA", "N"), ("ALA", "CA"), ("ALA", "C")))
    psi_atoms = tuple(names.index(k) for k in (("ALA", "N"), ("ALA", "CA"), ("ALA", "C"), ("NME", "N")))
    xyz = md.load(str(xtc), top=str(pdb)).xyz
    want = featurize(np.stack([dihedrals(xyz, phi_atoms), dihedrals(xyz, psi_atoms)], -1))
    np.testing.assert_allclose(tr.x[0], want, atol=1e-5)
    # real MD: L-alanine's φ stays negative and the frames move (not one repeated structure)
    phi = np.arctan2(tr.x[0, :, 0], tr.x[0, :, 1])
    assert np.all(phi < 0) and np.ptp(phi) > 0.2
    tiny = ("--steps", "3", "--width", "8", "--depth", "1", "--n-diffusion", "10", "--batch-size", "8")
    rc, out = _cli(capsys, "train", xtc, "--top", pdb, "--stride", "2", "--out", tmp_path / "m",
                   "--lambda-hat", "0.95", *tiny)
    assert rc == 0, out.err
    assert "read 1 trajectory file(s): 20 frames each (2 ps apart), 4 features" in out.out
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg["config"]["kind"] == "bopito" and cfg["config"]["dim"] == 4 and cfg["config"]["max_lag"] == 19
    np.save(tmp_path / "x0.npy", tr.x[0, :3])
    rc, out = _cli(capsys, "sample", "--model", tmp_path / "m", "--lag", "5", "--x0", tmp_path / "x0.npy",
                   "--steps", "3", "--out", tmp_path / "s.npz")
    assert rc == 0, out.err
    with np.load(tmp_path / "s.npz") as z:
        assert z["x"].shape == (3, 4) and np.all(np.isfinite(z["x"]))
