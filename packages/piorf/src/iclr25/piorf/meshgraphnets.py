"""MeshGraphNets' data sets (CylinderFlow, Airfoil) read and written without TensorFlow.

DeepMind's layout (Pfaff et al. 2021): a folder with ``meta.json`` and ``train.tfrecord``, ``valid.tfrecord``,
``test.tfrecord``. ``meta.json`` has ``field_names``, ``trajectory_length`` and ``features``: per field its
``type`` (``static``: one copy for the whole trajectory, stored with a leading 1; ``dynamic``: one per frame),
``shape`` (one ``-1`` for the node or cell count) and ``dtype``. Every TFRecord record is one trajectory, a
``tf.train.Example`` whose features are bytes lists holding the raw little-endian arrays.

The TFRecord framing is ``uint64 length, uint32 masked_crc32c(length), data, uint32 masked_crc32c(data)`` (all
little-endian; ``masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8``); both checksums are verified. CRC-32C
(Castagnoli) runs in numpy: independent blocks at once, combined by the CRC's linearity, so no compiled
package is needed. ``tf.train.Example`` is decoded by the small protobuf reader here (wire types 0, 1, 2, 5;
``Example.features = 1``, ``Features.feature = 1`` (a map: key 1, value 2), ``Feature.bytes_list = 1``,
``float_list = 2``, ``int64_list = 3``, each list's ``value = 1``).

Fields used: ``mesh_pos`` (N, 2), ``cells`` (F, 3), ``node_type`` (N, 1), ``velocity`` (T, N, 2) and, when
present, ``pressure`` (T, N, 1) and ``density`` (T, N, 1) (Airfoil). Node types are MeshGraphNets' codes, the
same as :class:`~iclr25.piorf.mesh.NodeType`. Training reads velocity and pressure; density is kept on the
:class:`~iclr25.piorf.datasets.Trajectory` but not modelled.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.guards import check_size
from iclr25.utils.io import DataFileError, existing_file

from .datasets import FlowDataset, Trajectory, load_trajectory
from .graph import mesh_edges
from .mesh import NodeType

__all__ = ["crc32c", "iter_records", "scan_records", "write_records", "decode_example", "encode_example",
           "read_meta", "read_trajectory", "read_record", "load_meshgraphnets", "write_meshgraphnets", "load_flow_data",
           "SPLITS"]

SPLITS = ("train", "valid", "test")
_MASK_DELTA = 0xA282EAD8
_POLY = 0x82F63B78  # CRC-32C, reflected


def _make_table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> np.uint32(1)) ^ np.uint32(_POLY), t >> np.uint32(1)).astype(np.uint32)
    return t


_TABLE = _make_table()
_TABLE_LIST = [int(x) for x in _TABLE]
_BLOCK = 1024
_SHIFT: list[list[int]] | None = None  # 4 byte tables of "advance the register over _BLOCK zero bytes"


def _raw_py(crc: int, data: bytes | memoryview) -> int:
    t = _TABLE_LIST
    for b in bytes(data):
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _shift_tables() -> list[list[int]]:
    global _SHIFT
    if _SHIFT is None:
        zeros = bytes(_BLOCK)
        cols = [_raw_py(1 << j, zeros) for j in range(32)]  # the register update is linear over GF(2)
        tabs = []
        for k in range(4):
            tab = []
            for v in range(256):
                acc = 0
                for j in range(8):
                    if v >> j & 1:
                        acc ^= cols[8 * k + j]
                tab.append(acc)
            tabs.append(tab)
        _SHIFT = tabs
    return _SHIFT


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli) of ``data``, as TFRecord uses it (``crc32c(b"123456789") == 0xE3069283``)."""
    buf = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    n = buf.size
    crc = 0xFFFFFFFF
    nb = n // _BLOCK
    if nb >= 4:
        # every block's register from 0 at once; crc(a || b) = shift(crc(a), |b|) ^ raw(0, b)
        cols = np.ascontiguousarray(buf[:nb * _BLOCK].reshape(nb, _BLOCK).T)  # byte j of every block, contiguous
        r = np.zeros(nb, dtype=np.uint32)
        idx = np.empty(nb, dtype=np.uint32)
        low = np.uint32(0xFF)
        for j in range(_BLOCK):
            np.bitwise_xor(r, cols[j], out=idx)
            np.bitwise_and(idx, low, out=idx)
            np.right_shift(r, 8, out=r)
            np.bitwise_xor(r, _TABLE.take(idx), out=r)
        s0, s1, s2, s3 = _shift_tables()
        for v in r.tolist():
            crc = s0[crc & 0xFF] ^ s1[crc >> 8 & 0xFF] ^ s2[crc >> 16 & 0xFF] ^ s3[crc >> 24] ^ v
        buf = buf[nb * _BLOCK:]
    return _raw_py(crc, buf.tobytes()) ^ 0xFFFFFFFF


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _frame_error(path: Path, k: int, offset: int, problem: str) -> DataFileError:
    return DataFileError(path, f"record {k} at byte {offset}: {problem} (not a TFRecord file, or a damaged one)")


def scan_records(path: str | os.PathLike[str]) -> list[tuple[int, int]]:
    """``(offset of the data, length)`` of every record, from the headers only (length checksums verified)."""
    p = Path(path)
    size = p.stat().st_size
    out, off, k = [], 0, 0
    with open(p, "rb") as f:
        while off < size:
            f.seek(off)
            head = f.read(12)
            if len(head) < 12:
                raise _frame_error(p, k, off, f"truncated header ({len(head)} of 12 bytes)")
            length, lcrc = struct.unpack("<QI", head)
            if k == 0 and head[:2] == b"\x1f\x8b" and _masked(crc32c(head[:8])) != lcrc:
                raise DataFileError(p, "a gzip-compressed file; decompress it first (gunzip -c FILE > "
                                       "train.tfrecord): MeshGraphNets' files are uncompressed TFRecords")
            if _masked(crc32c(head[:8])) != lcrc:
                raise _frame_error(p, k, off, "bad crc of the length")
            if off + 12 + length + 4 > size:
                raise _frame_error(p, k, off, f"truncated data ({length} bytes announced, "
                                              f"{max(size - off - 16, 0)} left)")
            out.append((off + 12, int(length)))
            off += 12 + length + 4
            k += 1
    return out


def iter_records(path: str | os.PathLike[str], *, indices: Sequence[int] | None = None,
                 check_crc: bool = True) -> Iterator[bytes]:
    """The records of a TFRecord file (uncompressed), checksums verified; ``indices``: only those records."""
    p = Path(path)
    recs = scan_records(p)
    wanted = range(len(recs)) if indices is None else indices
    with open(p, "rb") as f:
        for k in wanted:
            if not 0 <= k < len(recs):
                raise ValueError(f"{p}: record {k} does not exist (the file has {len(recs)} records, 0 to "
                                 f"{len(recs) - 1})")
            off, length = recs[k]
            f.seek(off)
            data = f.read(length)
            (dcrc,) = struct.unpack("<I", f.read(4))
            if check_crc and _masked(crc32c(data)) != dcrc:
                raise _frame_error(p, k, off - 12, "bad crc of the data")
            yield data


def write_records(path: str | os.PathLike[str], records: Sequence[bytes]) -> Path:
    """Write ``records`` as a TFRecord file, atomically (a failed write leaves no file)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            for rec in records:
                head = struct.pack("<Q", len(rec))
                f.write(head + struct.pack("<I", _masked(crc32c(head))))
                f.write(rec)
                f.write(struct.pack("<I", _masked(crc32c(rec))))
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


# --- protobuf wire format, just enough for tf.train.Example ---------------------------------------------------

def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated or overlong varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(buf: memoryview) -> Iterator[tuple[int, int, object]]:
    """``(field number, wire type, value)``: an int for wire types 0, 1, 5; a memoryview for 2."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            if i + 8 > len(buf):
                raise ValueError("truncated fixed64")
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 5:
            if i + 4 > len(buf):
                raise ValueError("truncated fixed32")
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated length-delimited field")
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"unsupported wire type {wt}")
        yield num, wt, v


def _feature(buf: memoryview) -> tuple[str, object]:
    kind, values = "bytes", []
    for num, wt, v in _fields(buf):
        if wt != 2 or num not in (1, 2, 3):
            continue
        if num == 1:
            kind, values = "bytes", [bytes(x) for n, w, x in _fields(v) if n == 1 and w == 2]
        elif num == 2:
            parts = []
            for n, w, x in _fields(v):
                if n == 1 and w == 2:
                    parts.append(np.frombuffer(x, dtype="<f4"))
                elif n == 1 and w == 5:
                    parts.append(np.array([x], dtype="<u4").view("<f4"))
            kind, values = "float", np.concatenate(parts) if parts else np.zeros(0, np.float32)
        else:
            ints = []
            for n, w, x in _fields(v):
                if n == 1 and w == 2:
                    j = 0
                    while j < len(x):
                        u, j = _varint(x, j)
                        ints.append(u)
                elif n == 1 and w == 0:
                    ints.append(x)
            kind, values = "int64", np.array([u - (1 << 64) if u >> 63 else u for u in ints], dtype=np.int64)
    return kind, values


def decode_example(data: bytes | memoryview) -> dict[str, tuple[str, object]]:
    """A serialised ``tf.train.Example`` as ``{name: (kind, values)}``: kind ``"bytes"`` (a list of bytes),
    ``"float"`` (float32 array) or ``"int64"`` (int64 array). Raises ``ValueError`` on a malformed message."""
    out = {}
    for num, wt, feats in _fields(memoryview(data)):
        if num != 1 or wt != 2:
            continue
        for n, w, entry in _fields(feats):
            if n != 1 or w != 2:
                continue
            key, value = None, memoryview(b"")
            for m, w2, x in _fields(entry):
                if m == 1 and w2 == 2:
                    key = bytes(x).decode("utf-8")
                elif m == 2 and w2 == 2:
                    value = x
            if key is None:
                raise ValueError("a feature without a name")
            out[key] = _feature(value)
    return out


def _put_varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _ld(num: int, payload: bytes) -> bytes:
    return _put_varint(num << 3 | 2) + _put_varint(len(payload)) + payload


def encode_example(features: Mapping[str, object]) -> bytes:
    """Serialise a ``tf.train.Example``: each value is bytes (or a list of bytes), or a float / integer array
    (stored as a packed float or int64 list)."""
    entries = []
    for name, value in features.items():
        if isinstance(value, (bytes, bytearray)):
            value = [bytes(value)]
        if isinstance(value, list) and all(isinstance(x, (bytes, bytearray)) for x in value):
            feat = _ld(1, b"".join(_ld(1, bytes(x)) for x in value))
        else:
            a = np.asarray(value)
            if a.dtype.kind == "f":
                feat = _ld(2, _ld(1, a.astype("<f4").tobytes()))
            elif a.dtype.kind in "iub":
                feat = _ld(3, _ld(1, b"".join(_put_varint(int(x)) for x in a.ravel())))
            else:
                raise TypeError(f"feature {name!r}: bytes or a numeric array, got {a.dtype}")
        entries.append(_ld(1, _ld(1, name.encode("utf-8")) + _ld(2, feat)))
    return _ld(1, b"".join(entries))


# --- meta.json and trajectories -------------------------------------------------------------------------------

_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "bool")


def _dtype_name(raw: object) -> str | None:
    s = str(raw).strip()
    if s.startswith("<dtype:"):  # some published meta.json files hold TF's repr, "<dtype: 'float32'>"
        s = s[len("<dtype:"):].strip(" '\">")
    return s if s in _DTYPES else None


def read_meta(folder: str | os.PathLike[str]) -> dict:
    """``FOLDER/meta.json``, checked: ``field_names``, ``trajectory_length`` and, per feature, ``type``,
    ``shape`` and ``dtype``; a missing or malformed entry is a :class:`DataFileError` naming the file."""
    p = Path(folder) / "meta.json"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such file (a MeshGraphNets data folder has meta.json and "
                                f"{'/'.join(SPLITS)}.tfrecord)")
    try:
        meta = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(p, f"not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise DataFileError(p, "must hold a JSON object")
    for key in ("field_names", "features", "trajectory_length"):
        if key not in meta:
            raise DataFileError(p, f"missing field '{key}'")
    names, feats, T = meta["field_names"], meta["features"], meta["trajectory_length"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise DataFileError(p, "'field_names' must be a list of names")
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise DataFileError(p, f"'trajectory_length' must be a positive integer, got {T!r}")
    if not isinstance(feats, dict):
        raise DataFileError(p, "'features' must map names to {type, shape, dtype}")
    clean = {}
    for name, f in feats.items():
        if not isinstance(f, dict):
            raise DataFileError(p, f"feature '{name}' must be an object with type, shape and dtype")
        for key in ("type", "shape", "dtype"):
            if key not in f:
                raise DataFileError(p, f"feature '{name}': missing field '{key}'")
        if f["type"] not in ("static", "dynamic", "dynamic_varlen"):
            raise DataFileError(p, f"feature '{name}': type must be static, dynamic or dynamic_varlen, "
                                   f"got {f['type']!r}")
        shape = f["shape"]
        if (not isinstance(shape, list) or not shape
                or not all(isinstance(s, int) and not isinstance(s, bool) and (s >= 1 or s == -1) for s in shape)
                or shape.count(-1) > 1):
            raise DataFileError(p, f"feature '{name}': shape must be a list of positive sizes with at most one "
                                   f"-1, got {shape!r}")
        dt = _dtype_name(f["dtype"])
        if dt is None:
            raise DataFileError(p, f"feature '{name}': dtype must be one of {', '.join(_DTYPES)}, got "
                                   f"{f['dtype']!r}")
        if name not in names:
            raise DataFileError(p, f"feature '{name}' is not in 'field_names'")
        clean[name] = {"type": f["type"], "shape": list(shape), "dtype": dt}
    for need in ("mesh_pos", "cells", "node_type", "velocity"):
        if need not in clean:
            raise DataFileError(p, f"missing feature '{need}' (a CFD data set, CylinderFlow or Airfoil, has "
                                   "mesh_pos, cells, node_type, velocity, pressure)")
    for name in ("mesh_pos", "cells", "node_type", "velocity", "pressure", "density"):
        if name in clean and clean[name]["type"] == "dynamic_varlen":
            raise DataFileError(p, f"feature '{name}': dynamic_varlen (remeshing) data sets are not supported")
    return {**meta, "features": clean, "path": str(p)}


def _array(ex: dict, name: str, f: dict, path: Path, k: int) -> np.ndarray:
    if name not in ex:
        raise DataFileError(path, f"record {k}: no feature '{name}' (meta.json lists it)")
    kind, values = ex[name]
    if kind != "bytes":
        raise DataFileError(path, f"record {k}: feature '{name}' is a {kind} list, not raw bytes")
    raw = b"".join(values)
    dt = np.dtype(f["dtype"]).newbyteorder("<")
    if len(raw) % dt.itemsize:
        raise DataFileError(path, f"record {k}: feature '{name}' has {len(raw)} bytes, not a whole number of "
                                  f"{f['dtype']}")
    a = np.frombuffer(raw, dtype=dt)
    try:
        a = a.reshape(f["shape"])
    except ValueError:
        raise DataFileError(path, f"record {k}: feature '{name}' has {a.size} values, which do not fit shape "
                                  f"{f['shape']}") from None
    return a.astype(dt.newbyteorder("="))


def read_trajectory(data: bytes, meta: dict, *, path: str | os.PathLike[str] = "<record>", index: int = 0,
                    frames: int | None = None) -> Trajectory:
    """One serialised trajectory (a record) as a :class:`Trajectory` (``frames``: keep the first ``frames``)."""
    p = Path(path)
    try:
        ex = decode_example(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataFileError(p, f"record {index}: not a tf.train.Example ({exc})") from None
    feats = meta["features"]
    arr = {name: _array(ex, name, feats[name], p, index)
           for name in ("mesh_pos", "cells", "node_type", "velocity", "pressure", "density") if name in feats}

    def static(name: str, cols: int) -> np.ndarray:
        a = arr[name]
        a = a[0] if a.ndim == 3 else a  # static [1, N, k]; a dynamic mesh field: its first frame
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2 or a.shape[1] != cols:
            raise DataFileError(p, f"record {index}: '{name}' must be (N, {cols}) per frame, got {a.shape}")
        return a

    pos = static("mesh_pos", 2)
    cells = static("cells", 3).astype(np.int64)
    node_type = static("node_type", 1)[:, 0].astype(np.int64)
    n = len(pos)

    def dynamic(name: str, cols: int) -> np.ndarray:
        a = arr[name]
        if feats[name]["type"] == "static":
            a = np.broadcast_to(a, (meta["trajectory_length"], *a.shape[1:]))
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3 or a.shape[1] != n or a.shape[2] != cols:
            raise DataFileError(p, f"record {index}: '{name}' must be (T, {n}, {cols}), got {a.shape}")
        return np.ascontiguousarray(a[:frames], dtype=np.float32)

    vel = dynamic("velocity", 2)
    prs = dynamic("pressure", 1)[:, :, 0] if "pressure" in arr else np.zeros(vel.shape[:2], np.float32)
    den = dynamic("density", 1)[:, :, 0] if "density" in arr else None
    if len(vel) < 2:
        raise DataFileError(p, f"record {index}: {len(vel)} frame(s); training and rollouts need at least 2")
    if cells.size and (cells.min() < 0 or cells.max() >= n):
        raise DataFileError(p, f"record {index}: 'cells' index nodes outside [0, {n - 1}]")
    if node_type.size and (node_type.min() < 0 or node_type.max() >= NodeType.SIZE):
        raise DataFileError(p, f"record {index}: 'node_type' codes must be in [0, {NodeType.SIZE - 1}]")
    for name, a in (("mesh_pos", pos), ("velocity", vel), ("pressure", prs), ("density", den)):
        if a is not None and not np.all(np.isfinite(a)):
            raise DataFileError(p, f"record {index}: '{name}' holds NaN or infinity")
    return Trajectory(pos, cells, mesh_edges(cells, n), node_type, vel, prs, float("nan"), den)


def read_record(path: str | os.PathLike[str], index: int = 0) -> Trajectory:
    """Trajectory ``index`` of a MeshGraphNets ``.tfrecord`` file (``meta.json`` beside it)."""
    p, _ = existing_file(path, (".tfrecord",), "MeshGraphNets TFRecord file")
    try:
        meta = read_meta(p.parent)
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no meta.json beside it (MeshGraphNets' layout: meta.json and "
                                f"{'/'.join(SPLITS)}.tfrecord in one folder)") from None
    data = next(iter_records(p, indices=[index]))
    return read_trajectory(data, meta, path=p, index=index)


def _tfrecord_path(folder: Path, split: str) -> Path:
    p = folder / f"{split}.tfrecord"
    if not p.is_file():
        have = sorted(x.name for x in folder.glob("*.tfrecord"))
        raise FileNotFoundError(f"{p}: no such file (the folder has {', '.join(have) or 'no .tfrecord files'})")
    return p


def _check_count(value: int | None, flag: str, low: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low):
        raise ValueError(f"{flag} must be an integer >= {low}, got {value!r}")


def load_meshgraphnets(folder: str | os.PathLike[str], split: str = "train", *, max_trajectories: int | None = None,
                       frames: int | None = None, force: bool = False) -> FlowDataset:
    """The trajectories of ``FOLDER/SPLIT.tfrecord`` (MeshGraphNets layout, ``FOLDER/meta.json``).

    ``max_trajectories`` keeps the first records, ``frames`` the first frames of each. The memory the
    trajectories need is estimated from the record sizes before any is decoded and refused (a one-line
    ``SizeError`` with the estimate) when it exceeds what is available, unless ``force``. Records are read and
    decoded one at a time.
    """
    _check_count(max_trajectories, "max_trajectories (--max-trajectories)", 1)
    _check_count(frames, "frames (--frames)", 2)
    root = Path(folder)
    meta = read_meta(root)
    path = _tfrecord_path(root, split)
    recs = scan_records(path)
    if not recs:
        raise DataFileError(path, "holds no records")
    n = len(recs) if max_trajectories is None else min(len(recs), int(max_trajectories))
    T = meta["trajectory_length"]
    keep = 1.0 if frames is None else min(1.0, frames / T)
    need = sum(length for _, length in recs[:n]) * keep * 1.5 + max(length for _, length in recs[:n])
    check_size(f"{path} ({n} trajectories{'' if frames is None else f', {frames} frames each'})",
               bytes_needed=need, force=force)
    trajs = tuple(read_trajectory(data, meta, path=path, index=k, frames=frames)
                  for k, data in enumerate(iter_records(path, indices=range(n))))
    return FlowDataset(trajs, {"source": str(path), "format": "meshgraphnets-tfrecord", "split": split,
                               "n_trajectories": n, "records": len(recs), "frames": frames})


def load_flow_data(folder: str | os.PathLike[str], split: str = "train", *, max_trajectories: int | None = None,
                   frames: int | None = None, force: bool = False) -> FlowDataset:
    """A split of the user's data: MeshGraphNets' ``meta.json`` + ``SPLIT.tfrecord``, or ``SPLIT/*.npz`` (one
    trajectory per file, :func:`~iclr25.piorf.load_trajectory`), with the same options and size check."""
    _check_count(max_trajectories, "max_trajectories (--max-trajectories)", 1)
    _check_count(frames, "frames (--frames)", 2)
    root = Path(folder)
    if not root.is_dir():
        what = "not a folder" if root.exists() else "no such folder"
        raise FileNotFoundError(f"{root}: {what} (--data takes a folder: meta.json + {split}.tfrecord, or "
                                f"{split}/*.npz)")
    if (root / "meta.json").exists():
        return load_meshgraphnets(root, split, max_trajectories=max_trajectories, frames=frames, force=force)
    files = sorted((root / split).glob("*.npz"))
    if not files:
        raise FileNotFoundError(f"{root}: neither meta.json with {split}.tfrecord (MeshGraphNets) nor {split}/*.npz "
                                "trajectories")
    files = files[:max_trajectories]
    check_size(f"{root / split} ({len(files)} trajectories)", force=force,
               bytes_needed=sum(f.stat().st_size for f in files) * 1.5)
    trajs = []
    for f in files:
        t = load_trajectory(f)
        if frames is not None:
            t = Trajectory(t.pos, t.cells, t.edge_index, t.node_type, t.velocity[:frames], t.pressure[:frames],
                           t.reynolds, None if t.density is None else t.density[:frames])
        if t.n_steps < 2:
            raise DataFileError(f, f"{t.n_steps} frame(s); training and rollouts need at least 2")
        trajs.append(t)
    return FlowDataset(tuple(trajs), {"source": str(root / split), "format": "npz", "split": split,
                                      "n_trajectories": len(trajs), "frames": frames})


def write_meshgraphnets(folder: str | os.PathLike[str], splits: Mapping[str, Sequence[Trajectory]], *,
                        extra_meta: Mapping[str, object] | None = None) -> Path:
    """Write trajectories in MeshGraphNets' layout: ``FOLDER/meta.json`` and ``FOLDER/SPLIT.tfrecord`` per split
    (CylinderFlow's schema: cells, mesh_pos, node_type static; velocity, pressure dynamic; density too when
    every trajectory has it). All trajectories need the same number of frames (meta.json's
    ``trajectory_length``)."""
    root = Path(folder)
    trajs = [t for ts in splits.values() for t in ts]
    if not trajs:
        raise ValueError("no trajectories to write")
    T = trajs[0].n_steps
    if any(t.n_steps != T for t in trajs):
        raise ValueError(f"every trajectory needs the same number of frames, got {sorted({t.n_steps for t in trajs})}")
    density = all(t.density is not None for t in trajs)
    feats = {"cells": {"type": "static", "shape": [1, -1, 3], "dtype": "int32"},
             "mesh_pos": {"type": "static", "shape": [1, -1, 2], "dtype": "float32"},
             "node_type": {"type": "static", "shape": [1, -1, 1], "dtype": "int32"},
             "velocity": {"type": "dynamic", "shape": [T, -1, 2], "dtype": "float32"},
             "pressure": {"type": "dynamic", "shape": [T, -1, 1], "dtype": "float32"}}
    if density:
        feats["density"] = {"type": "dynamic", "shape": [T, -1, 1], "dtype": "float32"}
    root.mkdir(parents=True, exist_ok=True)
    for split, ts in splits.items():
        recs = []
        for t in ts:
            arrays = {"cells": t.cells, "mesh_pos": t.pos, "node_type": t.node_type, "velocity": t.velocity,
                      "pressure": t.pressure, **({"density": t.density} if density else {})}
            recs.append(encode_example({k: np.ascontiguousarray(v, dtype=np.dtype(feats[k]["dtype"]).newbyteorder("<"))
                                        .tobytes() for k, v in arrays.items()}))
        write_records(root / f"{split}.tfrecord", recs)
    meta = {**(extra_meta or {}), "field_names": list(feats), "features": feats, "trajectory_length": T}
    (root / "meta.json").write_text(json.dumps(meta, indent=1))
    return root
