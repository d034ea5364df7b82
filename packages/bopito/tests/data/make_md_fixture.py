"""Writes the all-atom MD fixture of tests/test_mdfiles.py (run once, from packages/bopito; the files are committed):
``ala2-allatom.pdb`` (alanine dipeptide, 22 atoms with hydrogens, the layout of mdshare's
``alanine-dipeptide-nowater.pdb``: ACE-ALA-NME, one model) and ``ala2-gbsa.xtc`` (40 frames 1 ps apart of real
Langevin MD of openmmtools' alanine-dipeptide-gbsa system, as mdshare's ``alanine-dipeptide-*-nowater.xtc`` hold
frames 1 ps apart), written by mdtraj. Needs the extras ``solvent`` and ``traj``: OpenMM, openmmtools' files,
mdtraj."""

from pathlib import Path

import mdtraj as md
import numpy as np
import openmm
from openmm import unit

from iclr25.bopito.alanine import build_alanine_gbsa

HERE = Path(__file__).parent


def main() -> None:
    system, top, pos = build_alanine_gbsa()
    integ = openmm.LangevinMiddleIntegrator(300 * unit.kelvin, 1 / unit.picosecond, 2 * unit.femtosecond)
    integ.setRandomNumberSeed(7)
    ctx = openmm.Context(system, integ, openmm.Platform.getPlatformByName("CPU"), {"Threads": "1"})
    ctx.setPositions(pos * unit.nanometer)
    ctx.setVelocitiesToTemperature(300 * unit.kelvin, 7)
    integ.step(5000)  # 10 ps of burn-in
    frames = []
    for _ in range(40):
        integ.step(500)
        frames.append(ctx.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer))
    mtop = md.Topology.from_openmm(top)
    tr = md.Trajectory(np.asarray(frames, dtype=np.float32), mtop, time=np.arange(1.0, 41.0))
    tr[0].save_pdb(str(HERE / "ala2-allatom.pdb"))
    tr.save_xtc(str(HERE / "ala2-gbsa.xtc"))


if __name__ == "__main__":
    main()
