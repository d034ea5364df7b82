"""iclr25.utils.outputs: every output a command declares is checked by run_main before the handler runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iclr25.utils import cli as ucli
from iclr25.utils.io import atomic_write
from iclr25.utils.outputs import OutputError, add_output, check_output_path, declared_outputs


def _toy(calls: list, **spec):
    """``toy fit DATA --out OUT`` whose handler records that it ran and writes OUT atomically."""
    parser, sub = ucli.method_parser("toy", "a toy")

    def fit(args):
        calls.append(args)
        if args.out is not None and spec.get("kind", "file") == "file":
            with atomic_write(args.out) as f:
                f.write("result")
        return 0

    p = ucli.add_command(sub, "fit", fit, help="fit")
    p.add_argument("data", type=Path)
    p.add_argument("--names", default=None)
    add_output(p, "--out", **{"kind": "file", "help": "output", "suffixes": (".txt",), **spec})
    return parser


def _run(parser, argv, capsys):
    rc = ucli.run_main(parser, argv)
    return rc, capsys.readouterr().err.strip()


@pytest.fixture
def data(tmp_path):
    f = tmp_path / "data.txt"
    f.write_text("the user's data")
    return f


def test_an_input_named_as_output_is_refused_before_work(data, capsys):
    calls: list = []
    rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(data), "--overwrite"], capsys)
    assert rc == 2 and calls == [] and err.startswith("iclr25 toy: error: --out") and "input" in err
    assert data.read_text() == "the user's data"
    # another spelling of the same file, and a hard link to it (same inode) are the same input
    link = data.parent / "hard.txt"
    os.link(data, link)
    for other in (data.parent / "." / data.name, link):
        rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(other), "--overwrite"], capsys)
        assert rc == 2 and calls == [] and "input" in err
    assert data.read_text() == "the user's data"


def test_a_str_input_named_in_inputs_counts(data, capsys):
    calls: list = []
    other = data.parent / "names.txt"
    other.write_text("mine")
    parser = _toy(calls, required=True, inputs=("names",))
    rc, err = _run(parser, ["fit", str(data), "--names", str(other), "--out", str(other), "--overwrite"], capsys)
    assert rc == 2 and calls == [] and "input" in err and other.read_text() == "mine"


def test_an_existing_file_is_kept_without_overwrite_and_replaced_with_it(data, capsys):
    calls: list = []
    out = data.parent / "out.txt"
    out.write_text("previous")
    rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(out)], capsys)
    assert rc == 2 and calls == [] and "--out" in err and "--overwrite" in err and out.read_text() == "previous"
    rc, _ = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(out), "--overwrite"], capsys)
    assert rc == 0 and len(calls) == 1 and out.read_text() == "result"


def test_a_symlink_is_never_replaced(data, capsys):
    calls: list = []
    target = data.parent / "target.txt"
    target.write_text("keep")
    link = data.parent / "link.txt"
    link.symlink_to(target)
    rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(link), "--overwrite"], capsys)
    assert rc == 2 and calls == [] and "symbolic link" in err
    assert link.is_symlink() and target.read_text() == "keep"


def test_output_inside_an_input_folder_and_folder_holding_an_input(tmp_path, capsys):
    folder = tmp_path / "clouds"
    folder.mkdir()
    (folder / "a.txt").write_text("1")
    calls: list = []
    rc, err = _run(_toy(calls, required=True), ["fit", str(folder), "--out", str(folder / "D.txt")], capsys)
    assert rc == 2 and calls == [] and "inside the input folder" in err
    rc, err = _run(_toy(calls, kind="folder", suffixes=None, required=True),
                   ["fit", str(folder / "a.txt"), "--out", str(folder)], capsys)
    assert rc == 2 and calls == [] and "holds the input" in err


def test_suffix_parent_file_and_previous_run(tmp_path, data, capsys):
    calls: list = []
    rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(tmp_path / "x.csv")], capsys)
    assert rc == 2 and "--out must name a .txt file" in err
    rc, err = _run(_toy(calls, required=True), ["fit", str(data), "--out", str(data / "below.txt")], capsys)
    assert rc == 2 and "is a file" in err
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.pt").write_text("weights")
    parser = _toy(calls, kind="folder", suffixes=None, required=True, run_files=("results.json", "model.pt"))
    rc, err = _run(parser, ["fit", str(data), "--out", str(run)], capsys)
    assert rc == 2 and "already holds a run (model.pt)" in err and calls == []
    assert (run / "model.pt").read_text() == "weights"


def test_derived_default_and_sidecars(data, capsys):
    calls: list = []
    side = data.with_suffix(".names.txt")
    side.write_text("user's sidecar")
    parser = _toy(calls, default=lambda a: a.data.with_suffix(".out.txt"),
                  sidecars=lambda p: [p.with_suffix(".names.txt")])
    rc, err = _run(parser, ["fit", str(data), "--out", str(data.with_suffix(".npy.txt"))], capsys)
    assert rc == 0 and len(calls) == 1  # data.npy.txt's sidecar is data.npy.names.txt: free
    rc, err = _run(parser, ["fit", str(data), "--out", str(data)], capsys)
    assert rc == 2 and "input" in err
    rc, err = _run(parser, ["fit", str(data)], capsys)  # default data.out.txt, sidecar data.out.names.txt: free
    assert rc == 0 and calls[-1].out == data.with_suffix(".out.txt")
    parser = _toy(calls, sidecars=lambda p: [side])
    rc, err = _run(parser, ["fit", str(data), "--out", str(data.parent / "new.txt")], capsys)
    assert rc == 2 and "beside it, data.names.txt" in err and side.read_text() == "user's sidecar"


def test_declared_outputs_and_two_outputs_at_one_path(tmp_path, data, capsys):
    parser, sub = ucli.method_parser("toy", "a toy")
    p = ucli.add_command(sub, "fit", lambda a: 0, help="fit")
    add_output(p, "--out", kind="file", help="matrix")
    add_output(p, "--plan", kind="file", help="plan")
    assert [s.flag for s in declared_outputs(p)] == ["--out", "--plan"]
    assert sum(1 for a in p._actions if "--overwrite" in a.option_strings) == 1
    rc, err = _run(parser, ["fit", "--out", str(tmp_path / "a"), "--plan", str(tmp_path / "a")], capsys)
    assert rc == 2 and "name the same path" in err


def test_demo_and_repro_declare_their_out(tmp_path, capsys):
    parser, sub, demo, repro = ucli.method_commands("toy", "t", demo=lambda a: 0, demo_help="d",
                                                    repro=lambda a: 0, repro_help="r")
    assert [s.kind for s in declared_outputs(demo)] == ["folder"]
    (tmp_path / "results.json").write_text("{}")
    rc, err = _run(parser, ["demo", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "already holds a run" in err


def test_check_output_path_for_python_callers(tmp_path):
    f = tmp_path / "x.npy"
    assert check_output_path(f, suffixes=(".npy",)) == f
    f.write_bytes(b"1")
    with pytest.raises(OutputError, match="exists; pass --overwrite"):
        check_output_path(f)
    with pytest.raises(OutputError, match="is empty"):
        check_output_path("")


def test_umbrella_demo_keeps_a_users_readme_and_claims_keeps_claims_json(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# my notes\n")
    rc = ucli.main(["demo", "--all", "--out", str(tmp_path), "--overwrite"])
    err = capsys.readouterr().err
    assert rc == 2 and "not an iclr25 demo index" in err
    assert (tmp_path / "README.md").read_text() == "# my notes\n"
    (tmp_path / "claims.json").write_text("{}")
    rc = ucli.main(["claims", "nothing", "--out", str(tmp_path)])
    assert rc == 2 and "already holds a run (claims.json)" in capsys.readouterr().err
    assert (tmp_path / "claims.json").read_text() == "{}"


def test_demo_and_repro_files_mark_a_previous_run(tmp_path, capsys):
    calls: list = []
    parser, *_ = ucli.method_commands("toy", "t", demo=lambda a: calls.append(a), demo_help="d",
                                      repro=lambda a: calls.append(a), repro_help="r",
                                      demo_files=("figure.png",), repro_files=("claims.json",))
    (tmp_path / "figure.png").write_bytes(b"mine")
    rc, err = _run(parser, ["demo", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "already holds a run (figure.png)" in err and calls == []
    rc, err = _run(parser, ["repro", "--out", str(tmp_path)], capsys)
    assert rc == 0 and len(calls) == 1


def test_a_file_output_that_is_a_folder_for_one_format(tmp_path, capsys):
    calls: list = []
    parser, sub = ucli.method_parser("toy", "a toy")
    p = ucli.add_command(sub, "sim", lambda a: calls.append(a), help="sim")
    p.add_argument("--format", choices=("npz", "nwb"), default="npz")
    add_output(p, "--out", kind="file", suffixes=(".npz",), run_files=("day_000.nwb",), required=True,
               folder_if=lambda a: a.format == "nwb", help="data")
    (tmp_path / "day_000.nwb").write_bytes(b"mine")
    rc, err = _run(parser, ["sim", "--out", str(tmp_path), "--format", "nwb"], capsys)
    assert rc == 2 and "already holds a run (day_000.nwb)" in err
    rc, err = _run(parser, ["sim", "--out", str(tmp_path / "new"), "--format", "nwb"], capsys)
    assert rc == 0
    rc, err = _run(parser, ["sim", "--out", str(tmp_path / "x.nwb")], capsys)
    assert rc == 2 and "must name a .npz file" in err
