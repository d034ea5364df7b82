import os

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.utils import io


@pytest.fixture
def cloud():
    return np.random.default_rng(0).normal(size=(17, 3))


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".xyz", ".txt", ".csv", ".ply"])
def test_points_roundtrip(tmp_path, cloud, suffix):
    p = io.write_points(tmp_path / f"c{suffix}", cloud)
    np.testing.assert_allclose(io.read_points(p), cloud, rtol=0, atol=1e-15)


def test_ply_ascii_and_big_endian_with_extra_properties(tmp_path, cloud):
    p = io.write_points(tmp_path / "a.ply", cloud, binary=False)
    np.testing.assert_allclose(io.read_points(p), cloud)
    header = ("ply\nformat binary_big_endian 1.0\ncomment made by hand\nelement vertex 17\nproperty float x\n"
              "property float y\nproperty float z\nproperty uchar red\nelement face 0\n"
              "property list uchar int vertex_indices\nend_header\n")
    rec = np.zeros(17, dtype=[("x", ">f4"), ("y", ">f4"), ("z", ">f4"), ("red", "u1")])
    rec["x"], rec["y"], rec["z"] = cloud.T
    (tmp_path / "b.ply").write_bytes(header.encode() + rec.tobytes())
    np.testing.assert_allclose(io.read_points(tmp_path / "b.ply"), cloud.astype(np.float32), rtol=1e-6)


def test_csv_header_and_comments(tmp_path):
    (tmp_path / "h.csv").write_text("x,y\n# a comment\n1,2\n3,4\n")
    np.testing.assert_array_equal(io.read_points(tmp_path / "h.csv"), [[1, 2], [3, 4]])


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("e.npy", b"", "file is empty"),
        ("c.npz", b"PK\x03\x04garbage", "cannot parse"),
        ("c.npy", b"\x93NUMPY garbage", "cannot parse"),
        ("t.xyz", b"1 2 3\n4 five 6\n", "line 2: non-numeric"),
        ("r.xyz", b"1 2 3\n4 5\n", "different numbers of columns"),
        ("n.xyz", b"1 2 nan\n", "NaN or inf"),
        ("x.ply", b"plx\nend_header\n", "not a PLY file"),
        ("y.ply", b"ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nend_header\n1\n2\n",
         "declares 5 vertices"),
        ("z.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 5\nproperty float x\nend_header\n\x00",
         "truncated"),
        ("c.obj", b"v 1 2 3\n", "unsupported point cloud format"),
    ],
)
def test_points_bad_files(tmp_path, name, content, message):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(io.DataFileError, match=message) as exc:
        io.read_points(p)
    assert str(p) in str(exc.value)


def test_missing_file_names_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.npy"):
        io.read_points(tmp_path / "nope.npy")
    with pytest.raises(TypeError, match="path must be"):
        io.read_points(3)


def test_write_points_validates_and_leaves_nothing(tmp_path):
    with pytest.raises(ValueError, match="3 columns"):
        io.write_points(tmp_path / "a.ply", np.zeros((4, 2)))
    with pytest.raises(ValueError, match="n_points"):
        io.write_points(tmp_path / "a.npy", np.zeros((0, 3)))
    assert os.listdir(tmp_path) == []


def test_graph_edge_list_and_npz_roundtrip(tmp_path):
    g = io.Graph(np.array([[0, 1], [1, 2], [3, 0]]), 5, np.array([1.0, 2.5, 0.5]))
    for name in ("g.txt", "g.csv", "g.npz"):
        back = io.read_graph(io.write_graph(tmp_path / name, g), n_nodes=5 if name != "g.npz" else None)
        assert back.n_nodes == 5
        np.testing.assert_array_equal(back.to_scipy().toarray(), g.to_scipy().toarray())
    # .npz files are scipy's own CSR format, both ways
    A = sp.load_npz(tmp_path / "g.npz")
    np.testing.assert_array_equal(A.toarray(), g.to_scipy().toarray())
    sp.save_npz(tmp_path / "s.npz", sp.csr_matrix(A))
    np.testing.assert_array_equal(io.read_graph(tmp_path / "s.npz").to_scipy().toarray(), A.toarray())


def test_graph_symmetric_and_from_scipy():
    g = io.Graph(np.array([[0, 1], [1, 1]]), 2)
    A = g.to_scipy(symmetric=True).toarray()
    np.testing.assert_array_equal(A, [[0, 1], [1, 1]])
    assert io.Graph.from_scipy(sp.csr_array(A)).n_edges == 3


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("g.txt", b"0 1\n1 x\n", "non-numeric"),
        ("g.txt", b"0 1 2 3\n", "'u v' or 'u v w'"),
        ("g.txt", b"0 1.5\n", "non-negative integers"),
        ("g.npz", b"junk", "not a NumPy .npz"),
        ("g.txt", b"", "empty"),
    ],
)
def test_graph_bad_files(tmp_path, name, content, message):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(io.DataFileError, match=message):
        io.read_graph(p)


def test_graph_npz_missing_arrays(tmp_path):
    np.savez(tmp_path / "g.npz", data=np.ones(2))
    with pytest.raises(io.DataFileError, match="missing arrays"):
        io.read_graph(tmp_path / "g.npz")


def test_graph_validation():
    with pytest.raises(ValueError, match=r"edges must have shape \(m, 2\)"):
        io.Graph(np.zeros((3, 3), dtype=int), 3)
    with pytest.raises(ValueError, match=r"node ids in \[0, 2\)"):
        io.Graph(np.array([[0, 2]]), 2)
    with pytest.raises(TypeError, match="integers"):
        io.Graph(np.array([[0.0, 1.0]]), 2)


def test_smiles_roundtrip(tmp_path):
    smiles = ["CCO", "c1ccccc1", "C(=O)O"]
    for name in ("m.smi", "m.csv"):
        assert io.read_smiles(io.write_smiles(tmp_path / name, smiles, names=["a", "b", "c"])) == smiles
    (tmp_path / "x.csv").write_text("id,Smiles,y\n1,CCO,0.5\n2,CCN,0.1\n")
    assert io.read_smiles(tmp_path / "x.csv") == ["CCO", "CCN"]
    assert io.read_smiles(tmp_path / "x.csv", column="id") == ["1", "2"]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("m.csv", "id,y\n1,2\n", "no SMILES column"),
        ("m.csv", "smiles,y\nCCO,1\n,2\n", "line 3: empty SMILES"),
        ("m.smi", "# only a comment\n", "no molecules"),
    ],
)
def test_smiles_bad_files(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(io.DataFileError, match=message):
        io.read_smiles(tmp_path / name)


def test_write_smiles_rejects_bad_input(tmp_path):
    with pytest.raises(TypeError, match="smiles must be"):
        io.write_smiles(tmp_path / "m.smi", "CCO")
    with pytest.raises(TypeError, match="smiles must be"):
        io.write_smiles(tmp_path / "m.smi", ["C C"])
    assert os.listdir(tmp_path) == []


def test_save_npz_atomic(tmp_path):
    p = io.save_npz(tmp_path / "cache.npz", a=np.arange(3))
    with np.load(p) as z:
        np.testing.assert_array_equal(z["a"], [0, 1, 2])
    assert os.listdir(tmp_path) == ["cache.npz"]


def test_read_json_names_the_path_and_the_problem(tmp_path):
    good = tmp_path / "cfg.json"
    good.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert io.read_json(good) == {"a": [1, 2]}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(io.DataFileError, match="not valid JSON") as exc:
        io.read_json(bad)
    assert exc.value.path == bad
    with pytest.raises(FileNotFoundError, match="missing.json: no such config file"):
        io.read_json(tmp_path / "missing.json", what="config file")


def test_unwritable_target_is_named_not_the_temp_file(tmp_path):
    from iclr25.utils.io import atomic_write

    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(OSError) as info, atomic_write(blocker / "results.json") as f:
        f.write("{}")
    assert "results.json" in str(info.value) and "/.results." not in str(info.value)


def test_text_file_named_npy_is_not_called_pickled(tmp_path):
    from iclr25.utils.io import DataFileError, read_array, read_npz

    f = tmp_path / "a.npy"
    f.write_text("1 2 3\n")
    with pytest.raises(DataFileError, match="not a NumPy .npy file") as info:
        read_array(f)
    assert "pickle" not in str(info.value)
    g = tmp_path / "b.npz"
    np.savez(g, u=np.zeros(2))
    with pytest.raises(DataFileError, match=r"missing array\(s\) \['v'\]"):
        read_npz(g, required=("v",))
    assert read_array(g).shape == (2,)


def test_object_array_inside_a_valid_npz_is_one_line_without_numpys_allow_pickle_advice(tmp_path):
    from iclr25.utils.io import DataFileError, read_array, read_npz

    f = tmp_path / "objects.npz"
    np.savez(f, x=np.array([{"a": 1}, None], dtype=object))
    for read in (read_npz, read_array):
        with pytest.raises(DataFileError, match="Python objects") as info:
            read(f)
        assert "allow_pickle" not in str(info.value) and str(f) in str(info.value)


def test_dataclass_from_mapping_names_unknown_keys():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Config:
        width: int = 8
        depth: int = 2

    assert io.dataclass_from_mapping(Config, {"width": 4}) == Config(width=4)
    with pytest.raises(ValueError, match=r"net.json: unknown key\(s\) \['widht'\]; known keys are \['depth', 'width'\]"):
        io.dataclass_from_mapping(Config, {"widht": 4}, what="net.json")
    with pytest.raises(TypeError, match="net.json must be a mapping"):
        io.dataclass_from_mapping(Config, [1, 2], what="net.json")
