"""The paper's data formats, written here in exactly their layout: an OGB node-property folder (raw/*.csv.gz,
split/<scheme>/*.csv.gz), an Amazon-style CSR .npz (with the pickled entries the real files carry, never read),
Planetoid raw pickles (refused). The converted folder is the unlearner's mapped CSR; memory stays flat."""

import gzip
import json
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.scalegun import MappedGraph, readers, write_mapped_graph
from iclr25.scalegun.cli import main
from iclr25.scalegun.datasets import _symmetric
from iclr25.utils.io import DataFileError
from iclr25.utils.testing import one_error_line


def _gz_csv(path, arr, fmt):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        np.savetxt(f, np.asarray(arr), fmt=fmt, delimiter=",")


def write_ogb(root, n=300, m=1200, f=5, n_classes=4, seed=0, scheme="time"):
    """ogbn-style folder: raw/edge.csv.gz (directed u,v; duplicates, reversed pairs and self loops included),
    num-node-list, num-edge-list, node-feat, node-label; split/<scheme>/{train,valid,test}.csv.gz."""
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, size=(m, 2))
    e[:5] = e[5:10][:, ::-1]  # reversed duplicates
    e[10] = (7, 7)  # a self loop
    X = rng.normal(size=(n, f))
    y = rng.integers(0, n_classes, size=n)
    raw = root / "raw"
    _gz_csv(raw / "edge.csv.gz", e, "%d")
    _gz_csv(raw / "num-node-list.csv.gz", [[n]], "%d")
    _gz_csv(raw / "num-edge-list.csv.gz", [[m]], "%d")
    _gz_csv(raw / "node-feat.csv.gz", X, "%.17g")
    _gz_csv(raw / "node-label.csv.gz", y[:, None], "%d")
    perm = rng.permutation(n)
    for name, ids in zip(("train", "valid", "test"), np.split(perm, [n // 2, 3 * n // 4]), strict=True):
        _gz_csv(root / "split" / scheme / f"{name}.csv.gz", ids[:, None], "%d")
    return e, X, y, perm[: n // 2]


def _expected(tmp_path, n, u, v):
    return MappedGraph(write_mapped_graph(_symmetric(n, u, v), tmp_path / "expected"))


def test_ogb_folder_is_the_unlearners_graph(tmp_path, monkeypatch):
    e, X, y, train = write_ogb(tmp_path / "ogbn_toy")
    monkeypatch.setattr(readers, "BUCKET_ENTRIES", 500)  # several buckets
    monkeypatch.setattr(readers, "LINE_BLOCK_BYTES", 2000)  # many parse blocks
    s = readers.convert(tmp_path / "ogbn_toy", tmp_path / "conv")
    g, ref = MappedGraph(tmp_path / "conv"), _expected(tmp_path, 300, e[:, 0], e[:, 1])
    assert np.array_equal(g.indptr, ref.indptr) and np.array_equal(g.indices, ref.indices)
    assert s["n_undirected_edges"] == ref.n_edges and s["split_scheme"] == "time"
    np.testing.assert_array_equal(np.load(tmp_path / "conv" / "features.npy"), X)
    np.testing.assert_array_equal(np.load(tmp_path / "conv" / "labels.npy"), y)
    np.testing.assert_array_equal(np.load(tmp_path / "conv" / "train.npy"), train)


def test_cli_convert_then_unlearn_matches_the_npy_route(tmp_path, capsys):
    e, X, y, train = write_ogb(tmp_path / "ogb", n=120, m=400, f=4)
    conv = tmp_path / "conv"
    assert main(["convert", str(tmp_path / "ogb"), "--out", str(conv)]) == 0
    assert "120 nodes" in capsys.readouterr().out
    req = tmp_path / "req.txt"
    g = MappedGraph(conv)
    u, v = g.edges()[3]
    req.write_text(f"edge {u} {v}\nfeature 1\n")
    assert main(["unlearn", "--data", str(conv), "--requests", str(req), "--out", str(tmp_path / "a.json")]) == 0
    for k, arr in (("X", X), ("y", y), ("train", train)):
        np.save(tmp_path / f"{k}.npy", arr)
    np.savetxt(tmp_path / "edges.txt", e[e[:, 0] != e[:, 1]], fmt="%d")
    assert main(["unlearn", "--graph", str(tmp_path / "edges.txt"), "--features", str(tmp_path / "X.npy"),
                 "--labels", str(tmp_path / "y.npy"), "--train", str(tmp_path / "train.npy"), "--requests", str(req),
                 "--out", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    untimed = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in a["records"]]
    assert untimed == [{k: v for k, v in r.items() if not k.endswith("_s")} for r in b["records"]]
    assert len(untimed) == 3  # the fit and the two requests: same bounds through either route


def test_amazon_npz_without_unpickling(tmp_path):
    rng = np.random.default_rng(1)
    n, f = 80, 6
    A = sp.random(n, n, density=0.05, format="csr", random_state=2)
    A.data[:] = 1.0
    attr = sp.random(n, f, density=0.3, format="csr", random_state=3)
    labels = rng.integers(0, 3, n)
    p = tmp_path / "amazon_electronics_photo.npz"
    np.savez(p, adj_data=A.data, adj_indices=A.indices, adj_indptr=A.indptr, adj_shape=np.array(A.shape),
             attr_data=attr.data, attr_indices=attr.indices, attr_indptr=attr.indptr, attr_shape=np.array(attr.shape),
             labels=labels, class_names=np.array(["a", "b", "c"], dtype=object),
             idx_to_node=np.array({0: "x"}, dtype=object))  # pickled entries, as in the real files
    s = readers.convert(p, tmp_path / "conv")
    coo = A.tocoo()
    ref = _expected(tmp_path, n, coo.row, coo.col)
    g = MappedGraph(tmp_path / "conv")
    assert np.array_equal(g.indices, ref.indices) and s["split"] == [] and s["n_features"] == f
    np.testing.assert_array_equal(np.load(tmp_path / "conv" / "features.npy"), attr.toarray())
    np.testing.assert_array_equal(np.load(tmp_path / "conv" / "labels.npy"), labels)


def test_planetoid_pickles_are_refused_in_one_line(tmp_path, capsys):
    d = tmp_path / "Cora" / "raw"
    d.mkdir(parents=True)
    for part in ("x", "graph"):
        (d / f"ind.cora.{part}").write_bytes(pickle.dumps([1, 2, 3]))
    for src in (tmp_path / "Cora", d / "ind.cora.graph"):
        assert main(["convert", str(src), "--out", str(tmp_path / "conv")]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert "Planetoid" in line and "pickle" in line and "numpy.savez" in line
    assert not (tmp_path / "conv").exists()


@pytest.mark.parametrize("bad", ["text", "gzip", "columns"])
def test_malformed_ogb_file_is_one_line_naming_it(tmp_path, capsys, bad):
    write_ogb(tmp_path / "ogb", n=50, m=100)
    edge = tmp_path / "ogb" / "raw" / "edge.csv.gz"
    if bad == "text":
        with gzip.open(edge, "wt") as fh:
            fh.write("1,2\nthree,4\n")
    elif bad == "gzip":
        edge.write_bytes(b"\x1f\x8b not gzip at all")
    else:
        _gz_csv(edge, [[1, 2, 3]], "%d")
    assert main(["convert", str(tmp_path / "ogb"), "--out", str(tmp_path / "conv")]) == 2
    assert str(edge) in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "conv").exists() and not list(tmp_path.glob(".convert-*"))


def test_sizes_that_cannot_fit_are_refused_with_an_estimate(tmp_path, monkeypatch):
    write_ogb(tmp_path / "ogb", n=50, m=100)
    import iclr25.utils.memory as memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 1000)
    with pytest.raises(ValueError, match=r"converting .* \(50 nodes, 100 edges, 5 features\) needs about .* memory"):
        readers.convert(tmp_path / "ogb", tmp_path / "conv")
    with pytest.raises(DataFileError, match="holds the split schemes|no split scheme 'x'"):
        readers.convert(tmp_path / "ogb", tmp_path / "conv", split="x", force=True)


def test_memory_stays_flat_as_the_edges_grow(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "BUCKET_ENTRIES", 1 << 14)
    monkeypatch.setattr(readers, "LINE_BLOCK_BYTES", 1 << 16)
    peaks = []
    for m in (20_000, 160_000):
        write_ogb(tmp_path / f"g{m}", n=4000, m=m, f=2)
        tracemalloc.start()
        readers.convert(tmp_path / f"g{m}", tmp_path / f"c{m}")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # 8x the edges (2.6 MB of int64 pairs at the larger size), about the same peak: no array grows with m
    assert peaks[1] < 1.5 * peaks[0], peaks
    assert peaks[1] < 160_000 * 2 * 8, peaks


def test_unlearn_needs_data_or_the_three_files(tmp_path, capsys):
    req = tmp_path / "req.txt"
    req.write_text("feature 1\n")
    assert main(["unlearn", "--requests", str(req), "--out", str(tmp_path / "l.json")]) == 2
    assert "--data DIR" in one_error_line(capsys.readouterr().err)
    (tmp_path / "empty").mkdir()
    assert main(["unlearn", "--data", str(tmp_path / "empty"), "--requests", str(req), "--out",
                 str(tmp_path / "l.json")]) == 2
    assert "missing indptr.npy" in one_error_line(capsys.readouterr().err)
