"""The paper's image formats, written here in exactly their layout: PNG/JPEG/TIFF folders (8-bit RGB, 16-bit
grey, multi-page TIFF), Olshausen's IMAGES.mat (whitened) / IMAGES_RAW.mat (IMAGESr), van Hateren .iml (raw
big-endian uint16 1536 x 1024). Malformed files are one line naming them; sets that cannot fit are refused."""

import numpy as np
import pytest
from PIL import Image

from iclr25.utils.testing import one_error_line
from iclr25.v1_topology import read_images, whiten
from iclr25.v1_topology.cli import main
from iclr25.v1_topology.images import read_iml


def _scene(h=48, w=40, seed=0):
    rng = np.random.default_rng(seed)
    return np.cumsum(np.cumsum(rng.normal(size=(h, w)), 0), 1)  # smooth, 1/f-like


def _u8(a):
    a = (a - a.min()) / (np.ptp(a) or 1)
    return (a * 255).astype(np.uint8)


def test_folder_of_png_jpeg_tiff(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    rgb = np.stack([_u8(_scene(seed=s)) for s in (1, 2, 3)], axis=-1)
    Image.fromarray(rgb).save(d / "a.png")
    Image.fromarray(rgb).save(d / "b.jpg", quality=95)
    grey16 = (_u8(_scene(seed=4)).astype(np.uint16) * 257)
    Image.fromarray(grey16).save(d / "c.tif")  # 16-bit grey TIFF (mode I;16)
    pages = [Image.fromarray(_u8(_scene(seed=s))) for s in (5, 6)]
    pages[0].save(d / "d.tiff", save_all=True, append_images=pages[1:])  # multi-page TIFF
    (d / "notes.txt").write_text("ignored")
    imgs, used = read_images(d, f0=0.4)
    assert len(imgs) == 5 and "1 PNG, 1 JPEG, 3 TIFF" in used
    np.testing.assert_allclose(imgs[0], whiten(rgb.astype(float).mean(-1)), atol=1e-12)  # grey = RGB mean
    np.testing.assert_allclose(imgs[2], whiten(grey16.astype(float)), atol=1e-12)  # 16 bits kept
    assert all(abs(a.mean()) < 1e-9 and abs(a.std() - 1) < 1e-9 for a in imgs)
    single, used1 = read_images(d / "a.png")
    assert len(single) == 1 and "1 PNG" in used1


def test_olshausen_mat_and_van_hateren_iml(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    stack = np.stack([_scene(32, 32, seed=s) for s in range(3)], axis=-1)  # MATLAB layout (H, W, n)
    scipy_io.savemat(tmp_path / "IMAGES.mat", {"IMAGES": stack})
    scipy_io.savemat(tmp_path / "IMAGES_RAW.mat", {"IMAGESr": stack})
    done, used = read_images(tmp_path / "IMAGES.mat")
    assert len(done) == 3 and "already whitened" in used
    s0 = stack[..., 0]
    np.testing.assert_allclose(done[0], (s0 - s0.mean()) / s0.std(), atol=1e-12)  # not whitened twice
    raw, _ = read_images(tmp_path / "IMAGES_RAW.mat")
    np.testing.assert_allclose(raw[0], whiten(s0), atol=1e-12)
    img = (np.arange(1024 * 1536) % 4096).astype(np.uint16).reshape(1024, 1536)
    img.astype(">u2").tofile(tmp_path / "imk00001.iml")
    np.testing.assert_array_equal(read_iml(tmp_path / "imk00001.iml"), img)
    (tmp_path / "imk00001.iml").write_bytes(img.astype(">u2").tobytes())
    got, used = read_images(tmp_path / "imk00001.iml")
    assert got[0].shape == (1024, 1536) and "van Hateren .iml" in used


def test_train_images_folder_end_to_end(tmp_path, capsys):
    d = tmp_path / "imgs"
    d.mkdir()
    for s in range(3):
        Image.fromarray(_u8(_scene(40, 40, seed=s))).save(d / f"{s}.png")
    rc = main(["train", "--n-side", "8", "--samples", "40", "--images", str(d), "--out", str(tmp_path / "run")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "--images" in out and "3 images (3 PNG)" in out
    assert (tmp_path / "run" / "map.npz").is_file()


@pytest.mark.parametrize("name,content", [("short.iml", b"\x00" * 1000), ("broken.png", b"\x89PNG\r\n\x1a\nxx"),
                                          ("bad.mat", b"not a mat file" * 20)])
def test_malformed_files_are_one_line_naming_them(tmp_path, capsys, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    assert main(["train", "--n-side", "8", "--images", str(f), "--out", str(tmp_path / "run")]) == 2
    assert str(f) in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


def test_empty_folder_and_size_refusal(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no image files"):
        read_images(tmp_path / "empty")
    np.zeros((1024, 1536), ">u2").tofile(tmp_path / "a.iml")
    import iclr25.utils.memory as memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 10_000_000)
    with pytest.raises(ValueError, match=r"--images .*1572864 pixels\) needs about .* of memory"):
        read_images(tmp_path / "a.iml")
