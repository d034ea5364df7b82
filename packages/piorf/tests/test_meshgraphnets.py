"""MeshGraphNets' TFRecord + meta.json data sets without TensorFlow (issue 64): framing, tf.train.Example, the
reader against the LBM path, the commands on a fixture in exactly that format, malformed files, sizes."""

import json
import struct

import numpy as np
import pytest

from iclr25.piorf import Trajectory, cylinder_flow, load_meshgraphnets, save_trajectory, write_meshgraphnets
from iclr25.piorf.cli import main
from iclr25.piorf.meshgraphnets import (
    _raw_py,
    crc32c,
    decode_example,
    encode_example,
    iter_records,
    read_meta,
    write_records,
)
from iclr25.utils.io import DataFileError

FIELDS = ("pos", "cells", "edge_index", "node_type", "velocity", "pressure")


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ICLR25_PIORF_CACHE", str(tmp_path_factory.mktemp("cache")))
    ds = cylinder_flow(3, 6, spinup=100, lattice=(110, 24), radius=3.0, mesh_size=(1.0, 3.0))
    mp.undo()
    return ds


@pytest.fixture(scope="module")
def folders(flow, tmp_path_factory):
    """The same LBM trajectories as a MeshGraphNets folder (meta.json, train/test.tfrecord) and as .npz files."""
    root = tmp_path_factory.mktemp("data")
    write_meshgraphnets(root / "tf", {"train": flow.trajectories[:2], "test": flow.trajectories[2:]})
    for split, ts in (("train", flow.trajectories[:2]), ("test", flow.trajectories[2:])):
        for k, t in enumerate(ts):
            save_trajectory(root / "npz" / split / f"{k}.npz", t)
    return root / "tf", root / "npz"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_crc32c_matches_the_published_check_values():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC catalogue's check value of CRC-32C
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720, B.4
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    data = np.random.default_rng(0).integers(0, 256, 9 * 1024 + 77, dtype=np.uint8).tobytes()
    assert crc32c(data) == _raw_py(0xFFFFFFFF, data) ^ 0xFFFFFFFF  # the block-parallel path = byte by byte


def test_example_protobuf_decodes_hand_built_bytes_and_round_trips():
    # Example{features: Features{feature: {"a": Feature{bytes_list: BytesList{value: ["xy"]}}}}}, byte by byte
    feature = bytes([0x0A, 0x04, 0x0A, 0x02]) + b"xy"
    entry = bytes([0x0A, 0x01]) + b"a" + bytes([0x12, len(feature)]) + feature
    example = bytes([0x0A, len(entry) + 2, 0x0A, len(entry)]) + entry
    assert decode_example(example) == {"a": ("bytes", [b"xy"])}
    assert encode_example({"a": b"xy"}) == example
    back = decode_example(encode_example({"b": [b"", b"\x00\x01"], "f": np.array([1.5, -2.0]),
                                          "i": np.array([-3, 0, 1 << 40])}))
    assert back["b"] == ("bytes", [b"", b"\x00\x01"])
    assert back["f"][0] == "float" and np.array_equal(back["f"][1], [1.5, -2.0])
    assert back["i"][0] == "int64" and np.array_equal(back["i"][1], [-3, 0, 1 << 40])
    with pytest.raises(ValueError, match="truncated"):
        decode_example(example[:-1])


def test_tfrecord_framing(tmp_path):
    p = write_records(tmp_path / "x.tfrecord", [b"", b"hello", bytes(3000)])
    raw = p.read_bytes()
    assert raw[:8] == struct.pack("<Q", 0) and len(raw) == 3 * 16 + 5 + 3000
    c = crc32c(raw[:8])
    assert struct.unpack("<I", raw[8:12])[0] == (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert list(iter_records(p)) == [b"", b"hello", bytes(3000)]


def test_lbm_trajectory_round_trips_through_tfrecord(flow, folders):
    tf, _ = folders
    meta = json.loads((tf / "meta.json").read_text())
    assert meta["field_names"] == ["cells", "mesh_pos", "node_type", "velocity", "pressure"]
    assert meta["trajectory_length"] == 6
    assert meta["features"]["mesh_pos"] == {"type": "static", "shape": [1, -1, 2], "dtype": "float32"}
    assert meta["features"]["pressure"] == {"type": "dynamic", "shape": [6, -1, 1], "dtype": "float32"}
    back = load_meshgraphnets(tf, "train")
    assert len(back) == 2 and back.config["format"] == "meshgraphnets-tfrecord"
    for a, b in zip(back.trajectories, flow.trajectories[:2], strict=True):
        for name in FIELDS:
            x, y = getattr(a, name), getattr(b, name)
            assert x.shape == y.shape and np.array_equal(x, y), name
    short = load_meshgraphnets(tf, "train", max_trajectories=1, frames=3)
    assert len(short) == 1 and np.array_equal(short[0].velocity, flow[0].velocity[:3])


def test_airfoil_density_round_trips(flow, tmp_path):
    t = flow[0]
    rho = (1.0 + 0.01 * t.pressure).astype(np.float32)
    air = Trajectory(t.pos, t.cells, t.edge_index, t.node_type, t.velocity, t.pressure, t.reynolds, rho)
    write_meshgraphnets(tmp_path, {"test": [air]})
    assert "density" in read_meta(tmp_path)["field_names"]
    back = load_meshgraphnets(tmp_path, "test")[0]
    assert np.array_equal(back.density, rho) and np.array_equal(back.velocity, t.velocity)
    save_trajectory(tmp_path / "a.npz", back)
    from iclr25.piorf import load_trajectory

    assert np.array_equal(load_trajectory(tmp_path / "a.npz").density, rho)


def test_evaluate_gives_the_same_metrics_on_tfrecord_and_npz(folders, tmp_path, capsys):
    metrics = {}
    for fmt, folder in zip(("tf", "npz"), folders, strict=True):
        out = tmp_path / fmt
        assert main(["evaluate", "--data", str(folder), "--methods", "none,piorf", "--train-steps", "6",
                     "--layers", "1", "--latent", "8", "--horizon", "3", "--out", str(out)]) == 0
        res = json.loads((out / "results.json").read_text())
        metrics[fmt] = {m["name"]: m["value"] for m in res["metrics"] if not m.get("timing")}
        assert res["config"]["n_train"] == 2 and res["config"]["n_test"] == 1
        assert (out / "table.md").read_text().count("\n") == 6  # header, rule, MGN, PIORF, 2 trivial
    assert metrics["tf"] == metrics["npz"] and "rmse_3 x1e3, MGN+PIORF" in metrics["tf"]
    assert all(np.isfinite(v) for v in metrics["tf"].values())
    out = tmp_path / "train"
    assert main(["train", "--data", str(folders[0]), "--rewiring", "sdrf", "--train-steps", "3", "--layers", "1",
                 "--latent", "8", "--horizon", "2", "--out", str(out)]) == 0
    assert json.loads((out / "results.json").read_text())["config"]["format"] == "meshgraphnets-tfrecord"
    capsys.readouterr()


def test_rewire_reads_a_tfrecord_trajectory(folders, tmp_path, capsys):
    tf, _ = folders
    out = tmp_path / "rw.npz"
    assert main(["rewire", str(tf / "train.tfrecord"), "--trajectory", "1", "--out", str(out)]) == 0
    with np.load(out) as d:
        assert d["added"].shape[0] > 0
    assert main(["rewire", str(tf / "train.tfrecord"), "--trajectory", "5", "--out", str(tmp_path / "x.npz")]) == 2
    assert "record 5 does not exist (the file has 2 records" in one_line(capsys.readouterr().err)


def _copy(src, dst):
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


@pytest.mark.parametrize("damage, message", [
    ("flip", "train.tfrecord: record 0 at byte 0: bad crc of the data"),
    ("length", "train.tfrecord: record 0 at byte 0: bad crc of the length"),
    ("truncate", "train.tfrecord: record 1 at byte"),
    ("meta", "meta.json: missing field 'trajectory_length'"),
    ("feature", "meta.json: missing feature 'velocity'"),
    ("shape", "train.tfrecord: record 0: "),
    ("gzip", "train.tfrecord: a gzip-compressed file; decompress it first"),
])
def test_malformed_files_are_one_line_naming_them(folders, tmp_path, capsys, damage, message):
    d = _copy(folders[0], tmp_path / "d")
    rec, meta = d / "train.tfrecord", json.loads((d / "meta.json").read_text())
    raw = bytearray(rec.read_bytes())
    if damage == "flip":
        raw[100] ^= 1
    elif damage == "length":
        raw[0] ^= 1
    elif damage == "truncate":
        raw = raw[:-10]
    elif damage == "gzip":
        import gzip

        raw = gzip.compress(bytes(raw))
    elif damage == "meta":
        del meta["trajectory_length"]
    elif damage == "feature":
        del meta["features"]["velocity"]
    elif damage == "shape":
        meta["features"]["velocity"]["shape"] = [5, -1, 2]
    rec.write_bytes(bytes(raw))
    (d / "meta.json").write_text(json.dumps(meta))
    with pytest.raises((DataFileError, FileNotFoundError)):
        load_meshgraphnets(d, "train")
    assert main(["train", "--data", str(d), "--train-steps", "2", "--out", str(tmp_path / "run")]) == 2
    assert message in one_line(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


def test_sizes_that_cannot_fit_are_refused_with_an_estimate(folders, tmp_path, capsys, monkeypatch):
    # 100 kB: more than a 1-block, width-1 model needs (93 kB), less than the trajectories (> 130 kB)
    monkeypatch.setattr("iclr25.utils.memory.available_memory_bytes", lambda: 100_000.0)
    for folder in folders:
        assert main(["evaluate", "--data", str(folder), "--layers", "1", "--latent", "1",
                     "--out", str(tmp_path / "run")]) == 2
        err = one_line(capsys.readouterr().err)
        assert "trajectories) needs about" in err and "of memory" in err and "--force" in err
    assert main(["train", "--data", str(folders[0]), "--horizon", "6", "--out", str(tmp_path / "run"),
                 "--force"]) == 2
    assert "--horizon must be an integer in [1, 5] (the shortest test trajectory has 6 frames), got 6" in \
        one_line(capsys.readouterr().err)
    assert main(["train", "--data", str(tmp_path / "nothing"), "--force", "--out", str(tmp_path / "run")]) == 2
    assert "nothing: no such folder" in one_line(capsys.readouterr().err)
    assert main(["evaluate", "--frames", "1000000000000", "--out", str(tmp_path / "run")]) == 2
    assert "--frames only apply to --data" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


def test_paper_rung_reads_the_meshgraphnets_folder(folders):
    from iclr25.piorf.claims import _paper_data_at

    tr, te = _paper_data_at(str(folders[0]))
    assert (len(tr), len(te)) == (2, 1) and tr.config["format"] == "meshgraphnets-tfrecord"
