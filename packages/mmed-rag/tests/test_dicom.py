"""DICOM images in a report folder (issue 61; the ``dicom`` extra): MIMIC-CXR's DICOM tree and a plain CSV whose
images are ``.dcm`` files, written here with pydicom itself; ``build-index`` + ``ask`` + ``evaluate`` read them."""

import csv
import json

import numpy as np
import pytest

pydicom = pytest.importorskip("pydicom")

from iclr25.mmed_rag.cli import main  # noqa: E402
from iclr25.mmed_rag.userdata import UserDataError, read_folder  # noqa: E402
from iclr25.utils.testing import stub_chat_server  # noqa: E402

REPORTS = ["Small left pleural effusion. No pneumothorax.", "No pleural effusion. Right pneumothorax.",
           "No acute abnormality. Lungs are clear."]
VOCAB = {"effusion": ["pleural effusion", "effusion"], "pneumothorax": ["pneumothorax"]}


def _dcm(path, pixels, *, photometric="MONOCHROME2", slope=None):
    """A minimal single-frame uint16 DICOM (explicit VR little endian) holding ``pixels`` (H, W)."""
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

    path.parent.mkdir(parents=True, exist_ok=True)
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = SecondaryCaptureImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
    ds.SOPClassUID, ds.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    ds.Modality, ds.PatientID = "CR", "0"
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, photometric
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 12, 11, 0
    if slope is not None:
        ds.RescaleSlope, ds.RescaleIntercept = slope, 0
    ds.PixelData = pixels.astype(np.uint16).tobytes()
    ds.save_as(path, enforce_file_format=True)


def _gradient(h=20, w=24):
    return np.tile(np.linspace(0, 4000, w), (h, 1))


def test_dicom_pixels_are_read_scaled_and_inverted(tmp_path):
    root = tmp_path / "plain"
    _dcm(root / "a.dcm", _gradient())
    _dcm(root / "b.dcm", _gradient(), photometric="MONOCHROME1")
    with open(root / "reports.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["image", "report", "split"])
        w.writerow(["a.dcm", REPORTS[0], "train"])
        w.writerow(["b.dcm", REPORTS[1], "train"])
    ds = read_folder(root, "train", size=8)
    a, b = ds.images
    assert a.shape == (3, 8, 8) and a.min() >= 0 and a.max() <= 1
    assert a[0, :, -1].mean() > 0.9 and a[0, :, 0].mean() < 0.1  # left dark, right bright, scaled to [0, 1]
    assert np.allclose(a[0] + b[0], 1.0, atol=0.02)  # MONOCHROME1: bright means low values
    (root / "c.dcm").write_bytes(b"not a dicom file")
    with open(root / "reports.csv", "a", newline="") as f:
        csv.writer(f).writerow(["c.dcm", REPORTS[2], "train"])
    with pytest.raises(UserDataError, match="c.dcm"):
        read_folder(root, "train", size=8)


def test_build_index_ask_evaluate_on_a_mimic_cxr_dicom_tree(tmp_path, capsys):
    mi = tmp_path / "mimic"  # MIMIC-CXR (DICOM): split csv, files/pXX/p<subject>/s<study>/<dicom>.dcm + s<study>.txt
    mi.mkdir()
    rng = np.random.default_rng(0)
    with open(mi / "mimic-cxr-2.0.0-split.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dicom_id", "study_id", "subject_id", "split"])
        for i, split in enumerate(["train"] * 9 + ["test"] * 3):
            subj, study, dicom = f"1000{i:04d}", f"5000{i:04d}", f"{i:08x}-bbbbbbbb"
            w.writerow([dicom, study, subj, split])
            folder = mi / "files" / f"p{subj[:2]}" / f"p{subj}"
            _dcm(folder / f"s{study}" / f"{dicom}.dcm", rng.integers(0, 4000, (20, 24)), slope=1.0)
            (folder / f"s{study}.txt").write_text(f"FINAL REPORT\n FINDINGS: {REPORTS[i % 3]}\n")
    vocab = tmp_path / "findings.json"
    vocab.write_text(json.dumps(VOCAB))
    flags = ["--findings", str(vocab), "--image-size", "16"]
    index = tmp_path / "index"
    assert main(["build-index", str(mi), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy", *flags]) == 0
    with stub_chat_server("No.") as stub:
        assert main(["ask", str(mi), "--index", str(index), "--out", str(tmp_path / "ask"), "--endpoint", stub.url,
                     "--model", "m", *flags]) == 0
        texts = [r["body"]["messages"][0]["content"][1]["text"] for r in stub.requests]
    assert any("is there pneumothorax ?" in t for t in texts)
    assert main(["evaluate", str(mi), "--index", str(index), "--out", str(tmp_path / "ev"), *flags]) == 0
    m = {x["name"]: x["value"] for x in json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]}
    assert m["router_accuracy"] == 1.0
    capsys.readouterr()
