"""A user's own dated sequences (PNG and GeoTIFF), chronological sorting, the data set on disk."""

import numpy as np
import pytest
from PIL import Image

from iclr25.teochat import generate_sequences, load_dataset, load_sequence, save_dataset
from iclr25.teochat.assistant import example_inputs
from iclr25.teochat.conversation import build_prompt, make_examples


def test_png_folder_is_sorted_by_date(tmp_path):
    for name, v in [("c.png", 30), ("a_20210105.png", 10), ("b.png", 20)]:
        Image.fromarray(np.full((6, 6, 3), v, dtype=np.uint8)).save(tmp_path / name)
    (tmp_path / "dates.csv").write_text("filename,date\nc.png,2023-07-01\nb.png,2022-02-02\n")
    seq = load_sequence(tmp_path)
    assert seq.dates == ("2021-01-05", "2022-02-02", "2023-07-01")
    assert [int(f[0, 0, 0]) for f in seq.frames] == [10, 20, 30]


def test_more_than_max_frames_keeps_a_seeded_ordered_subset(tmp_path):
    for d in range(1, 10):
        Image.fromarray(np.full((4, 4, 3), d, dtype=np.uint8)).save(tmp_path / f"2020-01-0{d}.png")
    with pytest.warns(UserWarning, match="9 frames, more than max_frames = 4; using an order-preserving"):
        a = load_sequence(tmp_path, max_frames=4, seed=3)
    with pytest.warns(UserWarning):
        b = load_sequence(tmp_path, max_frames=4, seed=3)
    assert a.dates == b.dates and len(a.dates) == 4 and list(a.dates) == sorted(a.dates)


def test_geotiff_sequence(tmp_path):
    rasterio = pytest.importorskip("rasterio")  # the geotiff extra; the isolated test env installs every extra
    for k, d in enumerate(["2020-05-01", "2019-05-01"]):
        arr = (np.arange(4 * 8 * 8).reshape(4, 8, 8) * (k + 1)).astype(np.uint16)
        with rasterio.open(tmp_path / f"site_{d.replace('-', '')}.tif", "w", driver="GTiff", height=8, width=8,
                           count=4, dtype="uint16") as dst:
            dst.write(arr)
    seq = load_sequence(tmp_path)
    assert seq.dates == ("2019-05-01", "2020-05-01")
    assert seq.frames.shape == (2, 8, 8, 3) and seq.frames.dtype == np.uint8


def test_generated_sequences_are_stored_shuffled_and_sorted_for_the_model(tmp_path):
    seqs = generate_sequences(40, seed=0)
    shuffled = [s for s in seqs if list(s.order) != list(range(s.n_frames))]
    assert len(shuffled) > 10  # stored out of order: the pipeline must sort
    s = shuffled[0]
    e = make_examples([s], tasks=["tsc"])[0]
    prompt, frames = example_inputs(e, s)
    assert np.array_equal(frames, s.frames[s.order])
    assert prompt.count("<image>") == s.n_frames and "image 1 : <image>" in prompt
    assert "chronological order" in prompt
    assert "image 1" not in build_prompt(3, "q ?", references=False)
    back = load_dataset(save_dataset(tmp_path / "d.npz", seqs))
    assert all(np.array_equal(a.frames, b.frames) and a.dates == b.dates and a.buildings == b.buildings
               for a, b in zip(seqs, back, strict=True))
