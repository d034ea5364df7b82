"""xBD-format data (issue 60): a folder in exactly xBD's layout, written here (images/<id>_pre_disaster.png,
images/<id>_post_disaster.png, labels/<id>_{pre,post}_disaster.json with WKT polygons in features.xy and damage
subtypes), read back as the package's samples, and `train --xbd` / `evaluate --xbd` end to end on it."""

import json

import numpy as np
import pytest

from iclr25.teochat.cli import main
from iclr25.teochat.synth import generate_sequences
from iclr25.teochat.xbd import parse_wkt_polygon, read_xbd, write_xbd_fixture


@pytest.fixture(scope="module")
def xbd_dir(tmp_path_factory):
    seqs = [s for s in generate_sequences(14, seed=3, scenes=("residential",))
            if any(b.damage not in (None, "no_damage") for b in s.buildings)][:5]
    root = write_xbd_fixture(tmp_path_factory.mktemp("xbd") / "tier1", seqs)
    # a feature that is not scored (xView2 scores no un-classified building): read past, never a sample
    lab = root / "labels" / "synthetic-disaster_00000000_post_disaster.json"
    data = json.loads(lab.read_text())
    data["features"]["xy"].append({"properties": {"feature_type": "building", "subtype": "un-classified",
                                                  "uid": "u"}, "wkt": "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))"})
    lab.write_text(json.dumps(data))
    return root, seqs


def test_the_fixture_is_in_xbd_layout_and_reads_back_as_the_samples(xbd_dir):
    root, seqs = xbd_dir
    names = sorted(p.name for p in (root / "images").iterdir())
    assert names[:2] == ["synthetic-disaster_00000000_post_disaster.png", "synthetic-disaster_00000000_pre_disaster.png"]
    post = json.loads((root / "labels" / "synthetic-disaster_00000000_post_disaster.json").read_text())
    feat = post["features"]["xy"][0]
    assert feat["wkt"].startswith("POLYGON ((") and feat["properties"]["subtype"] in (
        "no-damage", "minor-damage", "major-damage", "destroyed")
    pre = json.loads((root / "labels" / "synthetic-disaster_00000000_pre_disaster.json").read_text())
    assert "subtype" not in pre["features"]["xy"][0]["properties"]
    got = read_xbd(root.parent, size=32)  # the parent: a tier1/ folder one level down is found
    assert len(got) == len(seqs)
    for g, s in zip(got, seqs, strict=True):
        assert g.n_frames == 2 and g.scene == "residential" and g.dates[0] < g.dates[1]
        want = [(b.box, b.damage) for b in s.buildings if b.damage is not None]
        assert [(b.box, b.damage) for b in g.buildings] == want  # un-classified left out
        # 4x upscaled, read back at 32 px (anti-aliased): the post frame is the last frame, not the first
        diff = np.abs(g.frames.astype(int) - s.chronological()[[0, -1]].astype(int)).mean(axis=(1, 2, 3))
        assert diff.max() < 8
        assert [b.change == "damaged" for b in g.buildings] == [d != "no_damage" for _, d in want]


def test_wkt_polygons_and_bad_labels():
    ring = parse_wkt_polygon("POLYGON ((1.5 2, 10 2, 10 8.25, 1.5 8.25, 1.5 2), (3 3, 4 3, 4 4, 3 3))")
    assert ring.shape == (5, 2) and ring[2].tolist() == [10.0, 8.25]
    assert parse_wkt_polygon("MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))").shape == (4, 2)
    for bad in ("POINT (1 2)", "POLYGON ((1 2, 3 4))", ""):
        with pytest.raises(ValueError):
            parse_wkt_polygon(bad)


def test_train_and_evaluate_on_an_xbd_folder(xbd_dir, tmp_path, capsys):
    root, _ = xbd_dir
    model = tmp_path / "model"
    assert main(["train", "--xbd", str(root), "--out", str(model), "--steps", "2", "--batch-size", "4",
                 "--d-model", "32", "--test-fraction", "0.34"]) == 0
    res = json.loads((model / "results.json").read_text())
    assert res["config"]["xbd"] is True
    out = tmp_path / "eval"
    assert main(["evaluate", "--model", str(model / "model.pt"), "--xbd", str(root), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "change localisation pixel F1" in text and "damage inverse-prevalence F1" in text
    metrics = {m["name"]: m["value"] for m in json.loads((out / "results.json").read_text())["metrics"]}
    assert any(k.startswith("damage inverse-prevalence F1 (") for k in metrics)
    assert "change localisation pixel F1, trivial answer: every building" in metrics
    assert all(0.0 <= v <= 1.0 for v in metrics.values())


def test_xbd_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["train", "--xbd", str(tmp_path / "empty"), "--out", str(tmp_path / "m"), "--steps", "1"]) != 0
    err = capsys.readouterr().err.strip()
    assert "labels/" in err and len(err.splitlines()) == 1
    assert main(["train", "--out", str(tmp_path / "m"), "--steps", "1"]) != 0
    assert "--data" in capsys.readouterr().err
