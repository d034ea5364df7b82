"""The paper's data formats: PDEBench HDF5 (1-D ``tensor`` and 2-D CFD layouts) and FNO ``.mat`` (v5 and v7.3),
each written here in exactly that layout; malformed files are one line naming them; oversized reads are refused
with an estimate; HDF5 is read in blocks (memory measured)."""

import tracemalloc

import numpy as np
import pytest

from iclr25.memno import read_data
from iclr25.memno.cli import main
from iclr25.utils.io import DataFileError
from iclr25.utils.testing import one_error_line

h5py = pytest.importorskip("h5py")
scipy_io = pytest.importorskip("scipy.io")


def write_pdebench_1d(path, n=6, n_t=11, n_x=64, seed=0):
    """PDEBench 1-D layout (e.g. 1D_Burgers_Sols_Nu0.01.hdf5): tensor (n, n_t, n_x), x-coordinate (n_x,),
    t-coordinate (n_t + 1,)."""
    rng = np.random.default_rng(seed)
    x = (np.arange(n_x) + 0.5) / n_x
    tensor = np.stack([np.sin(2 * np.pi * (x[None] - 0.1 * k * np.arange(n_t)[:, None]) + rng.normal())
                       for k in range(n)]).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("tensor", data=tensor)
        f.create_dataset("x-coordinate", data=x.astype(np.float32))
        f.create_dataset("t-coordinate", data=np.linspace(0, 2, n_t + 1).astype(np.float32))
    return tensor


def write_pdebench_cfd_2d(path, n=3, n_t=5, n_x=16):
    """PDEBench 2-D CFD layout (2D_CFD_Rand_...hdf5): density, pressure, Vx, Vy (n, n_t, n_x, n_y), x-, y- and
    t-coordinate."""
    rng = np.random.default_rng(1)
    fields = {k: rng.normal(size=(n, n_t, n_x, n_x)).astype(np.float32) for k in ("density", "pressure", "Vx", "Vy")}
    with h5py.File(path, "w") as f:
        for k, v in fields.items():
            f.create_dataset(k, data=v)
        for k in ("x-coordinate", "y-coordinate"):
            f.create_dataset(k, data=((np.arange(n_x) + 0.5) / n_x).astype(np.float32))
        f.create_dataset("t-coordinate", data=np.linspace(0, 1, n_t + 1).astype(np.float32))
    return fields


def write_fno_mat(path, n=4, n_x=32, n_t=6, two_d=False):
    """FNO's Navier-Stokes .mat (MATLAB v5): a (n, s, s), u (n, s, s, T), t (1, T); 1-D: a (n, s), u (n, s, T)."""
    rng = np.random.default_rng(2)
    space = (n_x, n_x) if two_d else (n_x,)
    u = rng.normal(size=(n, *space, n_t))
    a = rng.normal(size=(n, *space))
    t = np.arange(1, n_t + 1, dtype=np.float64)[None] * 0.5
    scipy_io.savemat(path, {"a": a, "u": u, "t": t})
    return a, u


def write_mat_v73(path, arrays):
    """MATLAB v7.3: HDF5 behind a 512-byte header, arrays stored with reversed axes (column-major)."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for k, v in arrays.items():
            f.create_dataset(k, data=np.asarray(v).transpose())
    with open(path, "r+b") as fh:
        fh.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Thu Jan  1 00:00:00 2025 HDF5 schema 1.00 .")


def test_pdebench_1d_subsampling_noise_and_coordinates(tmp_path):
    f = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    tensor = write_pdebench_1d(f)
    data, used = read_data(f, resolution=16, noise=0.2, seed=3)
    assert "tensor, x-coordinate, t-coordinate" in used
    assert data.u.shape == data.target.shape == (6, 11, 16)
    np.testing.assert_array_equal(data.target, tensor[:, :, ::4])
    assert data.t.shape == (11,) and data.t[1] == pytest.approx(2 / 11)  # the extra final time is dropped
    np.testing.assert_allclose(data.x, ((np.arange(64) + 0.5) / 64)[::4], rtol=1e-6)
    ratio = float(np.std(data.u - data.target) / np.std(data.target))
    assert 0.15 < ratio < 0.25
    sub, _ = read_data(f, time_stride=2, n=2)
    assert sub.u.shape == (2, 6, 64) and np.array_equal(sub.u, sub.target)


def test_pdebench_reads_in_blocks_with_flat_memory(tmp_path, monkeypatch):
    from iclr25.memno import readers

    f = tmp_path / "big.h5"
    tensor = write_pdebench_1d(f, n=64, n_t=20, n_x=1024)  # 5 MiB at full resolution
    full = read_data(f, resolution=32)[0]
    monkeypatch.setattr(readers, "BLOCK_BYTES", 2**18)  # 256 KiB blocks: 3 trajectories each
    tracemalloc.start()
    blocked = read_data(f, resolution=32)[0]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_array_equal(blocked.target, full.target)
    np.testing.assert_array_equal(blocked.target, tensor[:, :, ::32])
    assert peak < 0.25 * tensor.nbytes, (peak, tensor.nbytes)  # never the full-resolution array


def test_pdebench_2d_cfd_layout(tmp_path, capsys):
    f = tmp_path / "2D_CFD_Rand_M0.1_Eta0.1_Zeta0.1_periodic_128_Train.hdf5"
    fields = write_pdebench_cfd_2d(f)
    data, used = read_data(f, field="Vx", resolution=8)
    assert data.u.shape == (3, 5, 8, 8) and "arrays Vx, x-coordinate, y-coordinate, t-coordinate" in used
    np.testing.assert_array_equal(data.target, fields["Vx"][:, :, ::2, ::2])
    assert read_data(f)[0].params["field"] == "density"
    assert main(["train", "--data", str(f), "--out", str(tmp_path / "run")]) == 2
    assert "2-D fields" in one_error_line(capsys.readouterr().err)


def test_fno_mat_v5_and_v73_agree(tmp_path):
    a, u = write_fno_mat(tmp_path / "ns.mat", two_d=True)
    d5, used5 = read_data(tmp_path / "ns.mat", resolution=16)
    assert d5.u.shape == (4, 7, 16, 16) and "arrays a, u, t" in used5 and "v5" in used5
    np.testing.assert_allclose(d5.target[:, 0], a[:, ::2, ::2], rtol=1e-6)
    np.testing.assert_allclose(d5.target[:, 1:], np.moveaxis(u, -1, 1)[:, :, ::2, ::2], rtol=1e-6)
    assert d5.t[0] == 0 and d5.t[-1] == pytest.approx(3.0)
    write_mat_v73(tmp_path / "ns73.mat", {"a": a, "u": u, "t": np.arange(1, 7)[None] * 0.5})
    d73, used73 = read_data(tmp_path / "ns73.mat", resolution=16)
    assert "v7.3" in used73
    np.testing.assert_array_equal(d73.target, d5.target)


def test_train_picks_the_reader_and_names_the_arrays(tmp_path, capsys):
    f = tmp_path / "burgers.hdf5"
    write_pdebench_1d(f, n=4, n_t=8, n_x=32)
    assert main(["train", "--data", str(f), "--resolution", "16", "--noise", "0.1", "--epochs", "1", "--width", "4",
                 "--layers", "1", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "--data" in out and "PDEBench HDF5" in out and "arrays tensor, x-coordinate, t-coordinate" in out
    m = tmp_path / "ks.mat"
    write_fno_mat(m, n=4, n_x=16, n_t=5)
    assert main(["train", "--data", str(m), "--epochs", "1", "--width", "4", "--layers", "1",
                 "--out", str(tmp_path / "run2")]) == 0
    assert "FNO .mat" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["bad.h5", "bad.mat"])
def test_malformed_files_are_one_line_naming_them(tmp_path, capsys, name):
    f = tmp_path / name
    f.write_text("not a data file\n" * 50)
    assert main(["train", "--data", str(f), "--out", str(tmp_path / "run")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(f) in line


def test_wrong_layout_and_size_refusal(tmp_path, monkeypatch):
    f = tmp_path / "other.h5"
    with h5py.File(f, "w") as h:
        h.create_dataset("velocity", data=np.zeros((2, 3, 4, 4, 2), np.float32))
    with pytest.raises(DataFileError, match="no tensor or density dataset; the file has \\['velocity'\\]"):
        read_data(f)
    g = tmp_path / "burgers.h5"
    write_pdebench_1d(g)
    with pytest.raises(ValueError, match="must divide the x grid size 64"):
        read_data(g, resolution=48)
    import iclr25.utils.memory as memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 1000)
    with pytest.raises(ValueError, match=r"needs about .* of memory, more than the 1000 B available"):
        read_data(g)
    assert read_data(g, force=True)[0].u.shape == (6, 11, 64)
    with pytest.raises(ValueError, match="already observed"):
        read_data(tmp_path / "x.npz", resolution=16)
