"""Bad input: clear ValueError/TypeError naming the argument or file, and nothing half-written."""

import numpy as np
import pytest
from PIL import Image

from iclr25.teochat import (
    Assistant,
    ModelConfig,
    TrainConfig,
    damage_f1,
    generate_sequences,
    load_dataset,
    load_sequence,
    parse_boxes,
    pixel_f1,
)
from iclr25.teochat.cli import main
from iclr25.teochat.metrics import check_boxes, rasterize_polygons
from iclr25.teochat.specialist import train_specialist


def _png(path, size=(8, 8), value=100):
    Image.fromarray(np.full((size[1], size[0], 3), value, dtype=np.uint8)).save(path)


def test_sequence_with_a_missing_date(tmp_path):
    _png(tmp_path / "2020-01-05.png")
    _png(tmp_path / "later.png")
    with pytest.raises(ValueError, match="later.png: missing date"):
        load_sequence(tmp_path)


def test_sequence_with_frames_of_different_sizes(tmp_path):
    _png(tmp_path / "2020-01-05.png", (8, 8))
    _png(tmp_path / "2021-03-01.png", (8, 12))
    with pytest.raises(ValueError, match="frames of different sizes.*2021-03-01.png 8x12"):
        load_sequence(tmp_path)


def test_sequence_folder_problems(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such sequence folder"):
        load_sequence(tmp_path / "nope")
    (tmp_path / "a.png").write_bytes(b"")
    with pytest.raises(ValueError, match="must be a folder"):
        load_sequence(tmp_path / "a.png")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no images"):
        load_sequence(empty)
    with pytest.raises(ValueError, match="not a valid calendar date"):
        load_sequence(tmp_path, dates=["2020-13-40"])
    with pytest.raises(ValueError, match="dates must give one date per image"):
        load_sequence(tmp_path, dates=["2020-01-01", "2020-02-01"])
    (tmp_path / "2020-01-01.png").write_bytes(b"garbage")
    (tmp_path / "a.png").unlink()
    with pytest.raises(ValueError, match="2020-01-01.png: cannot read as an image"):
        load_sequence(tmp_path)


@pytest.mark.parametrize("box, what", [((10, 10, 5, 20), "malformed"), ((0, 0, 10, 101), "malformed"),
                                       ((1, 2, 3), "4 finite numbers"), ((1.5, 2, 3, 4), "integer"),
                                       ((np.nan, 2, 3, 4), "4 finite numbers")])
def test_malformed_ground_truth_boxes(box, what):
    with pytest.raises(ValueError, match=f"targets\\[0\\]\\[0\\].*{what}|targets\\[0\\]\\[0\\]"):
        pixel_f1(["none"], [[box]])
    with pytest.raises(ValueError, match=what):
        check_boxes([box])


def test_malformed_predicted_boxes_are_invalid_not_errors():
    for text in ["[10, 10, 5, 20]", "[1, 2, 3]", "[1, 2, 3, 4", "boxes", "[0, 0, 10, 101]", ""]:
        assert not parse_boxes(text).valid, text
    assert parse_boxes("none").valid and parse_boxes("[1, 2, 3, 4] [5, 6, 7, 8]").boxes == ((1, 2, 3, 4), (5, 6, 7, 8))
    with pytest.raises(TypeError, match="answer must be a str"):
        parse_boxes(None)


def test_metric_argument_errors():
    with pytest.raises(ValueError, match="same length"):
        pixel_f1(["none"], [])
    with pytest.raises(ValueError, match="size must be an integer >= 1"):
        pixel_f1(["none"], [[]], size=0)
    with pytest.raises(ValueError, match="truths\\[0\\] must be one of"):
        damage_f1(["no_damage"], ["flattened"], [(0, 0, 10, 10)])
    bowtie = np.array([[0, 0], [10, 10], [10, 0], [0, 10]])
    with pytest.raises(ValueError, match="polygons\\[0\\] is not a valid non-empty polygon"):
        rasterize_polygons([bowtie])
    with pytest.raises(ValueError, match="polygons\\[0\\] must be a polygon of at least 3"):
        rasterize_polygons([np.zeros((2, 2))])


def test_impossible_parameters():
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        generate_sequences(0)
    with pytest.raises(ValueError, match="size must be an integer >= 16"):
        generate_sequences(2, size=8)
    with pytest.raises(ValueError, match="scenes must be drawn from"):
        generate_sequences(2, scenes=("volcano",))
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        TrainConfig(steps=0)
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        TrainConfig(lr=float("nan"))
    with pytest.raises(ValueError, match="d_model must be a multiple"):
        ModelConfig(vocab_size=10, d_model=30, n_heads=4)
    seqs = generate_sequences(1, scenes=("residential",))
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "2"):
        with pytest.raises(ValueError, match="pos_weight must be a finite number > 0"):
            train_specialist(seqs, steps=1, pos_weight=bad)


def test_unreadable_files_name_the_file(tmp_path):
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="model.pt: not a teochat checkpoint"):
        Assistant.load(bad)
    data = tmp_path / "seqs.npz"
    np.savez(data, frames=np.zeros((2, 4, 4, 3), dtype=np.float32), offsets=np.array([0, 2]),
             meta=np.array("[]"))
    with pytest.raises(ValueError, match="seqs.npz: frames must be uint8"):
        load_dataset(data)


def test_cli_rejects_bad_flags_before_work(tmp_path, capsys):
    out = tmp_path / "out"
    for flag, value, msg in [("--steps", "0", "--steps must be an integer >= 1"),
                             ("--lr", "-1", "--lr must be a finite number > 0")]:
        with pytest.raises(SystemExit) as exc:
            main(["train", "--data", str(tmp_path / "x.npz"), "--out", str(out), flag, value])
        assert exc.value.code == 2
        assert msg in capsys.readouterr().err
    assert main(["chat", "--sequence", str(tmp_path), "--question", "hi"]) == 2
    assert "give exactly one of --model" in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------------ issue 40: said, refused, never lost
def test_chat_says_when_a_long_sequence_is_thinned(tmp_path, capsys):
    data, model = tmp_path / "data", tmp_path / "model"
    assert main(["generate", "--n", "6", "--out", str(data)]) == 0
    assert main(["train", "--data", str(data / "sequences.npz"), "--out", str(model), "--steps", "1",
                 "--batch-size", "2", "--d-model", "32"]) == 0
    seq = tmp_path / "site"
    seq.mkdir()
    for d in range(40):
        _png(seq / f"2020-{1 + d // 28:02d}-{1 + d % 28:02d}.png", size=(32, 32), value=3 * d)
    capsys.readouterr()
    assert main(["chat", "--model", str(model / "model.pt"), "--sequence", str(seq), "--question",
                 "what is the scene class of this location ?"]) == 0
    io = capsys.readouterr()
    assert "note:" in io.err and "40 frames, more than max_frames = 16" in io.err
    assert io.out.startswith("16 frames in chronological order")
    assert main(["chat", "--model", str(model / "model.pt"), "--sequence", str(seq), "--question",
                 "what is the scene class of this location ?", "--max-frames", "40"]) == 0
    io = capsys.readouterr()
    assert "note:" not in io.err and io.out.startswith("40 frames")


@pytest.mark.parametrize("argv, flag", [
    (["train", "--data", "{d}", "--out", "{o}", "--steps", "1000000000000"], "--steps"),
    (["repro", "--out", "{o}", "--steps", "1000000000000"], "--steps"),
    (["generate", "--out", "{o}", "--n", "1000000000000"], "--n"),
])
def test_huge_sizes_are_refused_in_one_line_before_work(tmp_path, capsys, argv, flag):
    import time

    d = tmp_path / "s.npz"
    d.write_bytes(b"x")
    argv = [a.format(d=d, o=tmp_path / "o") for a in argv]
    t0 = time.process_time()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and "--force" in err and len(err.splitlines()) == 1
    assert time.process_time() - t0 < 2 and not (tmp_path / "o").exists()


def test_generate_and_train_check_out_before_work(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "mine.txt").write_text("keep")
    assert main(["generate", "--n", "3", "--out", str(data)]) == 0
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    assert main(["generate", "--n", "3", "--out", str(data)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    npz = data / "sequences.npz"
    assert main(["train", "--data", str(npz), "--out", str(npz), "--steps", "1"]) == 2
    assert "--out" in capsys.readouterr().err  # a folder output naming the data file: refused
    assert main(["train", "--data", str(npz), "--out", str(data), "--steps", "1"]) == 2
    assert "holds the input" in capsys.readouterr().err
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["train", "--data", str(npz), "--out", str(f), "--steps", "1"]) == 2
    assert "--out" in capsys.readouterr().err and f.read_text() == "x"
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before
