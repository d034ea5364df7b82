"""The user's own data (issue 61): folders of PNG/JPEG images with their reports in the IU-Xray (Open-i CSV),
R2Gen (``annotation.json``, IU-Xray and MIMIC-CXR) and MIMIC-CXR-JPG layouts, written here in exactly those
layouts; findings from a vocabulary file; ``build-index`` + ``ask`` (and ``evaluate``) end to end."""

import csv
import json
import zlib

import numpy as np
import pytest

from iclr25.mmed_rag.cli import main
from iclr25.mmed_rag.userdata import FindingVocabulary, folder_layout, read_folder
from iclr25.utils.testing import stub_chat_server

VOCAB = {"effusion": ["pleural effusion", "effusion"], "pneumothorax": ["pneumothorax"],
         "cardiomegaly": ["cardiomegaly", "enlarged heart"]}
REPORTS = ["The heart is normal in size. Small left pleural effusion. No pneumothorax.",
           "Cardiomegaly. No pleural effusion or pneumothorax.",
           "Right pneumothorax is present. The heart size is normal.",
           "No acute cardiopulmonary abnormality. Lungs are clear."]


def _png(path, seed, fmt="PNG"):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (20, 24), dtype=np.uint8), mode="L").save(path, format=fmt)


def _iu_xray(root, n=20):
    """indiana_reports.csv + indiana_projections.csv + images/images_normalized/ (the Kaggle Open-i layout)."""
    root.mkdir(parents=True)
    with open(root / "indiana_reports.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["uid", "MeSH", "Problems", "image", "indication", "comparison", "findings", "impression"])
        for u in range(1, n + 1):
            r = REPORTS[u % len(REPORTS)]
            w.writerow([u, "normal", "normal", "Xray Chest PA and Lateral", "Chest pain", "None", r, ""])
    with open(root / "indiana_projections.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["uid", "filename", "projection"])
        for u in range(1, n + 1):
            for k, view in ((1, "Frontal"), (2, "Lateral")):
                name = f"{u}_IM-{u:04d}-{k:04d}.dcm.png"
                w.writerow([u, name, view])
                _png(root / "images" / "images_normalized" / name, 100 * u + k)
    return root


def test_vocabulary_reads_negations():
    v = FindingVocabulary.from_mapping(VOCAB)
    assert v.read(REPORTS[0]).tolist() == [1, 0, -1]
    assert v.read(REPORTS[1]).tolist() == [0, 0, 1]
    assert v.labels(REPORTS).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]]
    assert v.question(1) == "is there pneumothorax ?"
    assert v.read("No effusion but a small right pneumothorax.").tolist() == [0, 1, -1]


def test_the_three_layouts(tmp_path):
    vocab = FindingVocabulary.from_mapping(VOCAB)
    iu = _iu_xray(tmp_path / "iu")
    assert folder_layout(iu) == "iu-xray"
    test = read_folder(iu, "test", vocabulary=vocab, size=16)
    uids = [u for u in range(1, 21) if zlib.crc32(str(u).encode()) % 5 == 0]
    assert len(test) == 2 * len(uids) and test.images.shape[1:] == (3, 16, 16) and test.labels.shape[1] == 3
    assert test.reports[0] == REPORTS[uids[0] % 4]

    r2 = tmp_path / "r2gen"  # R2Gen's annotation.json (IU-Xray / MIMIC-CXR), images under images/
    ann = {s: [{"id": f"CXR{i}_IM-{i}", "report": REPORTS[i % 4], "image_path": [f"CXR{i}_IM-{i}/0.png",
                                                                                  f"CXR{i}_IM-{i}/1.png"],
                "split": s} for i in range(j, j + 3)] for j, s in ((0, "train"), (3, "val"), (6, "test"))}
    r2.mkdir()
    (r2 / "annotation.json").write_text(json.dumps(ann))
    for studies in ann.values():
        for st in studies:
            for p in st["image_path"]:
                _png(r2 / "images" / p, len(p))
    assert folder_layout(r2) == "r2gen"
    assert len(read_folder(r2, "train", vocabulary=vocab)) == 6 and len(read_folder(r2, "test")) == 6

    mi = tmp_path / "mimic"  # MIMIC-CXR-JPG: split csv, files/pXX/p<subject>/s<study>/<dicom>.jpg + s<study>.txt
    mi.mkdir()
    with open(mi / "mimic-cxr-2.0.0-split.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dicom_id", "study_id", "subject_id", "split"])
        for i, split in enumerate(["train"] * 4 + ["validate", "test"]):
            subj, study, dicom = f"1000{i:04d}", f"5000{i:04d}", f"{i:08x}-aaaaaaaa"
            w.writerow([dicom, study, subj, split])
            folder = mi / "files" / f"p{subj[:2]}" / f"p{subj}"
            _png(folder / f"s{study}" / f"{dicom}.jpg", i, fmt="JPEG")
            (folder / f"s{study}.txt").write_text(f"FINAL REPORT\n FINDINGS: {REPORTS[i % 4]}\n")
    assert folder_layout(mi) == "mimic-cxr"
    tr = read_folder(mi, "train", vocabulary=vocab)
    assert len(tr) == 4 and tr.labels[0].tolist() == [1, 0, 0]


def test_build_index_ask_evaluate_on_an_iu_xray_folder(tmp_path, capsys):
    data = _iu_xray(tmp_path / "iu_xray", n=24)
    vocab = tmp_path / "findings.json"
    vocab.write_text(json.dumps(VOCAB))
    index = tmp_path / "index"
    flags = ["--findings", str(vocab), "--image-size", "16"]
    assert main(["build-index", str(data), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy", *flags]) == 0
    with stub_chat_server("Yes.") as stub:
        assert main(["ask", str(data), "--index", str(index), "--out", str(tmp_path / "ask"), "--endpoint", stub.url,
                     "--model", "m", "--limit", "12", *flags]) == 0
        texts = [r["body"]["messages"][0]["content"][1]["text"] for r in stub.requests]
    assert any("is there pneumothorax ?" in t for t in texts)  # the vocabulary's questions
    assert any("reference report(s): 1. " in t and "effusion" in t.lower() for t in texts)  # the folder's reports
    m = {x["name"]: x["value"] for x in json.loads((tmp_path / "ask" / "results.json").read_text())["metrics"]}
    assert m["VQA accuracy with the retrieved reports"] == m["VQA accuracy, always 'yes'"]
    model = tmp_path / "model"  # the tiny VLM on the folder too (VQA pairs only: the findings are the user's)
    assert main(["train", str(data), "--index", str(index), "--out", str(model), "--sft-steps", "2",
                 "--dpo-steps", "1", *flags]) == 0
    assert main(["evaluate", str(data), "--index", str(index), "--model", str(model), "--out", str(tmp_path / "ev"),
                 *flags]) == 0
    m = {x["name"]: x["value"] for x in json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]}
    assert m["router_accuracy"] == 1.0 and "rag_pt_gap_accuracy" in m
    capsys.readouterr()
    # the index was built with 3 findings: the default four are refused in one line
    assert main(["evaluate", str(data), "--index", str(index), "--out", str(tmp_path / "ev2"),
                 "--image-size", "16"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--findings" in err


def test_bad_report_folders(tmp_path, capsys):
    data = _iu_xray(tmp_path / "iu", n=6)
    bad = tmp_path / "v.json"
    bad.write_text("[1, 2]")
    assert main(["build-index", str(data), "--out", str(tmp_path / "ix"), "--findings", str(bad)]) == 2
    assert "v.json" in capsys.readouterr().err
    (data / "images" / "images_normalized" / "1_IM-0001-0001.dcm.png").unlink()
    with pytest.raises(FileNotFoundError, match="1_IM-0001-0001"):
        read_folder(data, "train")
