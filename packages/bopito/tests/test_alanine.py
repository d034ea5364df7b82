"""Alanine dipeptide: the shipped dihedral set, the measures, and (with OpenMM) the offline-built system."""

import numpy as np
import pytest

from iclr25.bopito.alanine import (
    FEATURE_BOX,
    PHI_ATOMS,
    PSI_ATOMS,
    angles_from_features,
    dihedrals,
    featurize,
    load_data,
    load_shipped,
)
from iclr25.bopito.alanine_experiment import (
    chain_kinetics,
    fit_grid_msm,
    free_energy_error,
    md_phi_correlation,
    phi_correlation,
    simulate_msm,
    vamp2_states,
)


def test_shipped_data_has_shapes_provenance_and_alanine_basins():
    d = load_shipped()
    m = d.meta
    assert d.equilibrium.shape == (m["n_eq"], m["eq_frames"], 2)
    assert d.short.shape == (m["n_short"], m["short_frames"], 2)
    assert m["frame_ps"] == 1.0 and m["command"].startswith("iclr25 bopito alanine-md")
    assert "openmm" in m and m["md"]["temperature"] == 300.0
    phi, psi = d.equilibrium[..., 0], d.equilibrium[..., 1]
    assert np.all(np.abs(d.equilibrium) <= np.pi + 1e-3)
    # L-alanine in vacuum: phi < 0 dominates (a D-alanine or a broken build would put it at phi > 0)
    assert (phi < 0).mean() > 0.9
    # both the extended (C5/C7eq, psi > 50 deg) and the helical (psi < 50 deg) regions are visited
    assert 0.02 < (psi < np.radians(50)).mean() < 0.98
    # features round-trip and lie in the models' box
    f = featurize(d.short)
    np.testing.assert_allclose(angles_from_features(f), d.short, atol=1e-12)
    assert f.min() >= FEATURE_BOX[0][0] and f.max() <= FEATURE_BOX[0][1]


def test_shipped_gbsa_set_is_small_has_its_provenance_and_solvent_basins():
    # issue 63: the implicit-solvent set the alanine-gbsa rung decides on, shipped in the wheel
    from iclr25.bopito.alanine import SHIPPED_SETS

    d = load_shipped("gbsa")
    m = d.meta
    assert SHIPPED_SETS["gbsa"].stat().st_size < 1_000_000
    assert d.equilibrium.shape == (m["n_eq"], m["eq_frames"], 2) and d.short.shape == (m["n_short"], m["short_frames"], 2)
    assert m["md"]["solvent"] == "gbsa" and "GBSA" in m["system"] and m["command"].endswith("--solvent gbsa")
    assert m["frame_ps"] == 1.0 and m["md"]["temperature"] == 300.0
    phi, psi = d.equilibrium[..., 0], d.equilibrium[..., 1]
    assert (phi < 0).mean() > 0.9  # L-alanine
    # both the extended (C5/C7eq/PII, psi > 50 deg) and the helical (alpha_R, psi < 50 deg) regions are visited
    assert 0.02 < (psi < np.radians(50)).mean() < 0.98
    # the claims' C(N) reference needs lags to 200 ps inside each run
    assert m["eq_frames"] > 2 * 200 and m["n_short"] >= 100
    with pytest.raises(ValueError, match="solvent"):
        load_shipped("water")


def test_shipped_tip3p_set_is_small_reduced_as_stated_and_fits_the_rungs_lags():
    # issue 63: the explicit-water set the alanine-tip3p rung decides on, a reduced length in frames of 0.1 ps
    from iclr25.bopito.alanine import SHIPPED_SETS
    from iclr25.bopito.alanine_experiment import ALANINE_SCALES

    d = load_shipped("tip3p")
    m = d.meta
    assert SHIPPED_SETS["tip3p"].stat().st_size < 200_000
    assert d.equilibrium.shape == (m["n_eq"], m["eq_frames"], 2) and d.short.shape == (m["n_short"], m["short_frames"], 2)
    assert m["md"]["solvent"] == "tip3p" and "TIP3P" in m["system"]
    assert m["command"].endswith("--steps-per-frame 50 --solvent tip3p")
    assert m["md"]["steps_per_frame"] == 50 and m["frame_ps"] == 0.1 and m["md"]["temperature"] == 300.0
    assert np.all(np.isfinite(d.equilibrium)) and (d.equilibrium[..., 0] < 0).mean() > 0.9  # L-alanine
    sc = ALANINE_SCALES["alanine-tip3p"]
    # every C(N) lag of the rung (frames) inside each equilibrium run (twice over), the interpolation's held-out and
    # fitting lags too; the short runs hold N_max of the interpolation models and the ladder's largest rung
    assert max(sc.acf_lags) < m["eq_frames"] // 2 and max(sc.int_test_lags + sc.int_fit_lags) < m["eq_frames"] // 2
    assert sc.int_max_lag < m["short_frames"] and max(sc.ladder) <= m["n_short"]
    # the starts drawn without replacement (C(N), interpolation) fit in the prior's and the reference's frames
    assert m["n_eq"] * m["eq_frames"] >= max(sc.n_eval, 2 * sc.int_n_fit)


def test_measures_are_zero_for_the_reference_and_large_for_wrong_data():
    d = load_shipped()
    eq = d.equilibrium
    assert free_energy_error(eq, eq) < 1e-12
    rng = np.random.default_rng(0)
    assert free_energy_error(rng.uniform(-np.pi, np.pi, (5000, 2)), eq) > 0.5
    c = md_phi_correlation(eq, [0, 1, 5, 100])
    # in vacuum at 300 K the sampled phi dynamics (C5 <-> C7eq) relax within a few ps
    assert c[0] == 1.0 and 1.0 > c[1] > c[2] > 0.1 and abs(c[3]) < 0.1
    # independent draws are uncorrelated; identical ones perfectly correlated
    a = rng.uniform(-np.pi, np.pi, 20000)
    assert abs(phi_correlation(a, rng.uniform(-np.pi, np.pi, 20000))) < 0.03
    assert phi_correlation(a, a) == pytest.approx(1.0)
    msm = fit_grid_msm(eq, 1)
    assert 0.0 < msm.lambda_hat < 1.0 and 1.0 < msm.timescales[0] < 100
    np.testing.assert_allclose(msm.phi_correlation([0])[0], 1.0)


def test_msm_chains_have_the_msm_kinetics_and_vamp2_sees_dynamics():
    eq = load_shipped().equilibrium
    msm = fit_grid_msm(eq, 1)
    t_md, v_md = chain_kinetics(eq)
    assert t_md == pytest.approx(msm.timescales[0])
    # the 1-ps frames resolve the slowest process: VAMP-2 well above the constant's 1
    assert v_md > 1.3
    # chains of the MSM's transition matrix, started from MD frames: its own timescale and the MD's VAMP-2
    g = simulate_msm(msm, eq[:, 0], 300, seed=0)
    assert g.shape == (eq.shape[0], 301) and set(np.unique(g)) <= set(msm.states.tolist())
    w = 2 * np.pi / 10
    centres = np.stack([-np.pi + (g // 10 + 0.5) * w, -np.pi + (g % 10 + 0.5) * w], -1)
    t_ch, v_ch = chain_kinetics(centres)
    assert abs(t_ch / msm.timescales[0] - 1) < 0.15 and abs(v_ch - v_md) < 0.15
    # independent states have no dynamics: VAMP-2 of the constant alone (1) up to estimation noise
    iid = np.random.default_rng(0).integers(0, 9, size=(20, 500))
    assert abs(vamp2_states(iid, 1, 9) - 1.0) < 0.05


def test_bad_alanine_inputs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="angles"):
        featurize(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="features"):
        angles_from_features(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="does not exist"):
        load_data(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(ValueError, match="not an alanine dihedral data set"):
        load_data(bad)


def test_openmm_build_is_l_alanine_and_copies_feel_vacuum_forces():
    openmm = pytest.importorskip("openmm")
    from openmm import app, unit

    from iclr25.bopito.alanine import _replica_context, build_alanine_dipeptide, simulate_alanine

    ff, top, pos = build_alanine_dipeptide()
    assert pos.shape == (22, 3)
    names = [(a.residue.name, a.name) for a in top.atoms()]
    assert [names[i] for i in PHI_ATOMS] == [("ACE", "C"), ("ALA", "N"), ("ALA", "CA"), ("ALA", "C")]
    assert [names[i] for i in PSI_ATOMS] == [("ALA", "N"), ("ALA", "CA"), ("ALA", "C"), ("NME", "N")]
    # L-chirality: the improper N-C-CA-CB is positive (about +120 deg) for L-amino acids
    cb = [i for i, n in enumerate(names) if n == ("ALA", "CB")][0]
    assert np.degrees(dihedrals(pos, (6, 10, 8, cb))) > 90
    # the built structure keeps the built backbone (phi about -80 deg after minimisation)
    assert -120 < np.degrees(dihedrals(pos, PHI_ATOMS)) < -40
    # replica system: each copy's forces are its vacuum (NoCutoff) forces
    ctx, _, _, homes = _replica_context(3, __import__("iclr25.bopito.alanine", fromlist=["MDConfig"]).MDConfig(), 0)
    x = np.concatenate([pos + h for h in homes])
    ctx.setPositions(x * unit.nanometer)
    f_rep = ctx.getState(getForces=True).getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    system = ff.createSystem(top, nonbondedMethod=app.NoCutoff, constraints=app.HBonds)
    ref = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    ref.setPositions(pos * unit.nanometer)
    f_one = ref.getState(getForces=True).getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    for k in range(3):
        np.testing.assert_allclose(f_rep[22 * k: 22 * (k + 1)], f_one, atol=2e-3 * np.abs(f_one).max())
    # a short run gives finite dihedrals that stay in the phi < 0 region it started in (3 ps); OpenMM's CPU
    # platform is not bitwise reproducible, so no equality of two runs is asserted
    a = simulate_alanine(2, 3, seed=5, desc=None)["angles"]
    assert a.shape == (2, 3, 2) and np.all(np.isfinite(a)) and np.all(a[..., 0] < 0)


def test_gbsa_system_from_openmmtools_files_copies_feel_its_forces(tmp_path, capsys):
    # issue 63: alanine dipeptide in OBC GBSA implicit solvent from the files openmmtools' wheel ships (extra
    # `solvent`), as openmmtools' AlanineDipeptideImplicit builds it; the replica system gives each copy exactly
    # the one-molecule, no-cutoff forces
    openmm = pytest.importorskip("openmm")
    import importlib.util

    if importlib.util.find_spec("openmmtools") is None:
        pytest.skip("the optional extra `solvent` (openmmtools' data files) is not installed")
    from openmm import unit

    from iclr25.bopito.alanine import (
        GBSA_PHI_ATOMS,
        GBSA_PSI_ATOMS,
        MDConfig,
        _replica_context,
        build_alanine_gbsa,
    )
    from iclr25.bopito.cli import main

    system, top, pos = build_alanine_gbsa()
    names = [(a.residue.name, a.name) for a in top.atoms()]
    assert [names[i] for i in GBSA_PHI_ATOMS] == [("ACE", "C"), ("ALA", "N"), ("ALA", "CA"), ("ALA", "C")]
    assert [names[i] for i in GBSA_PSI_ATOMS] == [("ALA", "N"), ("ALA", "CA"), ("ALA", "C"), ("NME", "N")]
    assert any(isinstance(f, openmm.CustomGBForce) for f in system.getForces())  # the OBC GB term
    cfg = MDConfig(solvent="gbsa")
    ctx, _, _, homes = _replica_context(3, cfg, 0)
    ctx.setPositions(np.concatenate([pos + h for h in homes]) * unit.nanometer)
    kj = unit.kilojoule_per_mole / unit.nanometer
    f_rep = ctx.getState(getForces=True).getForces(asNumpy=True).value_in_unit(kj)
    ref = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    ref.setPositions(pos * unit.nanometer)
    f_one = ref.getState(getForces=True).getForces(asNumpy=True).value_in_unit(kj)
    for k in range(3):
        np.testing.assert_allclose(f_rep[22 * k: 22 * (k + 1)], f_one, atol=1e-3 * np.abs(f_one).max())
    assert np.abs(f_one).max() > 1.0  # not trivially zero
    # the command end to end at a tiny size: finite angles, L-alanine's phi < 0 kept over 4 ps
    out = tmp_path / "gbsa.npz"
    rc = main(["alanine-md", "--solvent", "gbsa", "--out", str(out), "--n-eq", "2", "--eq-frames", "2",
               "--n-short", "2", "--short-frames", "2", "--burn-in", "0", "--platform", "CPU"])
    assert rc == 0, capsys.readouterr().err
    d = load_data(out)
    assert d.equilibrium.shape == (2, 2, 2) and d.short.shape == (2, 2, 2)
    assert np.all(np.isfinite(d.equilibrium)) and np.all(d.equilibrium[..., 0] < 0)
    assert "GBSA" in d.meta["system"] and d.meta["md"]["solvent"] == "gbsa"
    assert d.meta["command"].endswith("--solvent gbsa")


def test_tip3p_system_from_openmmtools_files_runs_a_short_trajectory(tmp_path, capsys):
    # issue 63: alanine dipeptide in explicit water from openmmtools' alanine-dipeptide-explicit files (extra
    # `solvent`), built as its AlanineDipeptideExplicit (PME 0.9 nm switched from 0.75 nm, dispersion correction,
    # rigid TIP3P); one molecule per context, a reduced-length path
    openmm = pytest.importorskip("openmm")
    import importlib.util

    if importlib.util.find_spec("openmmtools") is None:
        pytest.skip("the optional extra `solvent` (openmmtools' data files) is not installed")
    from iclr25.bopito.alanine import (
        GBSA_PHI_ATOMS,
        GBSA_PSI_ATOMS,
        MDConfig,
        _explicit_system,
        simulate_alanine,
    )
    from iclr25.bopito.cli import main

    system, top, pos, box = _explicit_system()
    names = [(a.residue.name, a.name) for a in top.atoms()]
    assert len(names) == 2269 and sum(r.name == "HOH" for r in top.residues()) == 749
    assert [names[i] for i in GBSA_PHI_ATOMS] == [("ACE", "C"), ("ALA", "N"), ("ALA", "CA"), ("ALA", "C")]
    assert [names[i] for i in GBSA_PSI_ATOMS] == [("ALA", "N"), ("ALA", "CA"), ("ALA", "C"), ("NME", "N")]
    nb = [f for f in system.getForces() if isinstance(f, openmm.NonbondedForce)][0]
    assert nb.getNonbondedMethod() == openmm.NonbondedForce.PME and nb.getUseDispersionCorrection()
    assert abs(nb.getCutoffDistance()._value - 0.9) < 1e-9 and abs(nb.getSwitchingDistance()._value - 0.75) < 1e-9
    assert system.getNumConstraints() >= 3 * 749  # rigid waters (3 each) and the peptide's X-H bonds
    # 2 short trajectories of 2 frames of 0.02 ps each from the files' (equilibrated) box (MDConfig's steps per
    # frame shortened for the test): finite angles, L-alanine's phi < 0 kept, the trajectories differ (own velocities)
    cfg = MDConfig(solvent="tip3p", steps_per_frame=10)
    r = simulate_alanine(2, 2, start=np.stack([pos, pos]), seed=3, config=cfg, desc=None, snapshot_every=2)
    a = r["angles"]
    assert a.shape == (2, 2, 2) and np.all(np.isfinite(a)) and np.all(a[..., 0] < 0)
    assert not np.allclose(a[0], a[1])
    assert r["snapshots"].shape == (2, 1, 2269, 3)
    # the command refuses an impossible size in one line before any work (the estimate uses TIP3P's speed)
    rc = main(["alanine-md", "--solvent", "tip3p", "--out", str(tmp_path / "w.npz"), "--n-eq", "1000",
               "--eq-frames", "100000", "--platform", "CPU"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and not (tmp_path / "w.npz").exists()
    # --steps-per-frame scales the estimate (frames of 0.1 ps: 10x less MD than 1-ps frames) and must be positive
    rc = main(["alanine-md", "--solvent", "tip3p", "--out", str(tmp_path / "w.npz"), "--n-eq", "1000",
               "--eq-frames", "100000", "--platform", "CPU", "--steps-per-frame", "50"])
    err = capsys.readouterr().err
    assert rc == 2 and "--n-eq 1000" in err and not (tmp_path / "w.npz").exists()
    rc = main(["alanine-md", "--solvent", "tip3p", "--out", str(tmp_path / "w.npz"), "--steps-per-frame", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and "--steps-per-frame" in err and not (tmp_path / "w.npz").exists()
