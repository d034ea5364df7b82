"""Bad input gives ValueError/TypeError (or FileNotFoundError) whose message names the argument or line."""

import numpy as np
import pytest

from iclr25.rxnflow import (
    BlockLibrary,
    RxnFlow,
    SynthesisSpace,
    TrainConfig,
    doctor,
    draw_subsets,
    parse_reward,
    parse_template,
    read_blocks,
    read_templates,
    subset_size,
)


def test_invalid_smiles_names_the_line(tmp_path):
    p = tmp_path / "b.smi"
    p.write_text("CCO ethanol\n# a comment\nC1CC(\nNCC\n")
    with pytest.raises(ValueError, match=r"b\.smi: line 3: invalid SMILES 'C1CC\('"):
        read_blocks(p)


def test_invalid_smiles_in_csv_names_the_line(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("name,smiles\na,CCO\nb,xyz\n")
    with pytest.raises(ValueError, match="line 3"):
        read_blocks(p)


def test_invalid_smarts_names_the_line(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("# templates\nok [C:1](=O)O.[N:2]>>[C:1](=O)[N:2]\nbad [C:1(=O>>C\n")
    with pytest.raises(ValueError, match=r"t\.txt: line 3"):
        read_templates(p)


def test_template_without_product_or_with_three_reactants():
    with pytest.raises(ValueError, match="reactants>>product"):
        parse_template("CCO")
    with pytest.raises(ValueError, match="1 or 2 reactants"):
        parse_template("[C:1].[N:2].[O:3]>>[C:1][N:2][O:3]")


def test_empty_libraries(tmp_path):
    for name in ("empty.smi", "empty.txt"):
        (tmp_path / name).write_text("\n# only a comment\n")
    with pytest.raises(ValueError, match="empty"):
        read_blocks(tmp_path / "empty.smi")
    with pytest.raises(ValueError, match="no templates"):
        read_templates(tmp_path / "empty.txt")
    with pytest.raises(ValueError, match="empty"):
        BlockLibrary.from_smiles([])
    with pytest.raises(ValueError, match="templates"):
        SynthesisSpace(BlockLibrary.from_smiles(["CCO"]), [])
    with pytest.raises(FileNotFoundError, match="no such building-block file"):
        read_blocks(tmp_path / "missing.smi")


def test_template_with_no_compatible_blocks_is_an_error():
    lib = BlockLibrary.from_smiles(["CCO", "c1ccccc1"])
    t = parse_template("[C:1](=O)O.[N:2]>>[C:1](=O)[N:2]", name="amide", source="t.txt:4")
    with pytest.raises(ValueError, match=r"no compatible building block: amide \(t\.txt:4\)"):
        SynthesisSpace(lib, [t])
    space = SynthesisSpace(lib, [t], allow_dead=True)
    assert space.dead == ["amide"] and space.protocols == []


def test_bad_parameters_name_themselves():
    with pytest.raises(ValueError, match="rho"):
        TrainConfig(rho=0.0)
    with pytest.raises(ValueError, match="rho"):
        subset_size(100, 1.5)
    with pytest.raises(ValueError, match="min_sampling"):
        draw_subsets([10], 0.5, np.random.default_rng(0), min_sampling=0)
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)
    with pytest.raises(ValueError, match="beta"):
        TrainConfig(beta=float("nan"))
    with pytest.raises(ValueError, match="pb"):
        TrainConfig(pb="learned")
    with pytest.raises(ValueError, match="max_len"):
        SynthesisSpace(BlockLibrary.from_smiles(["CCO"]), [parse_template("[C:1]O>>[C:1]Cl")], max_len=0)
    with pytest.raises(ValueError, match="reward"):
        parse_reward("docking_score")
    with pytest.raises(ValueError, match="window"):
        parse_reward("logp[3,1]")
    with pytest.raises(TypeError, match="BlockLibrary"):
        SynthesisSpace(["CCO"], [parse_template("[C:1]O>>[C:1]Cl")])


def test_sample_count_and_block_list_types():
    from iclr25.rxnflow import toy_space

    model = RxnFlow(toy_space(5, 5, n_other=0, seed=0), "qed")
    with pytest.raises(ValueError, match="n must be"):
        model.sample(0)
    with pytest.raises(TypeError, match="single string"):
        BlockLibrary.from_smiles("CCO")
    with pytest.raises(ValueError, match="entry 2"):
        BlockLibrary.from_smiles(["CCO", "not a smiles"])


def test_doctor_reports_invalid_lines_duplicates_and_dead_templates(tmp_path):
    p = tmp_path / "lib.smi"
    p.write_text("OC(=O)c1ccccc1\nNCC1CCCCC1\nC1CC(\nOC(=O)c1ccccc1 again\nO=C(O)c1ccccc1\n")
    t = tmp_path / "t.txt"
    t.write_text("amide [C:1](=[O:2])[OH].[N;H2:3]>>[C:1](=[O:2])[N:3]\nsuzuki [c:1]Br.[c:2]B(O)O>>[c:1][c:2]\n")
    rep = doctor(p, t)
    assert rep.invalid == ((3, "C1CC("),)
    assert [(ln, first) for ln, _, first in rep.duplicates] == [(4, 1), (5, 1)]
    assert rep.dead_templates == ["suzuki"]
    assert [tr.compatible for tr in rep.templates] == [(1, 1), (0, 0)]
    assert not rep.ok
    assert "line 3" in rep.to_text() and "DEAD" in rep.to_text()
    p.write_text("garbage(((\nxx\n")
    with pytest.raises(ValueError, match=r"lib\.smi: no valid building block; line 1"):
        doctor(p, t)


# ------------------------------------------------------------------ command line (issue 40): fast, named, guarded
def _cli(argv, capsys):
    from iclr25.rxnflow.cli import main

    capsys.readouterr()
    rc = main(argv)
    return rc, capsys.readouterr().err.strip().splitlines()


def test_missing_input_is_reported_before_heavy_imports(tmp_path):
    import json
    import subprocess
    import sys

    code = ("import sys, json; from iclr25.rxnflow.cli import main; rc = main(sys.argv[1:]); "
            "print(json.dumps([rc, 'torch' in sys.modules, 'rdkit' in sys.modules]))")
    for argv in (["train", "--blocks", str(tmp_path / "missing.smi"), "--out", str(tmp_path / "o")],
                 ["train", "--templates", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "o")]):
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
        rc, torch_loaded, rdkit_loaded = json.loads(proc.stdout.strip().splitlines()[-1])
        assert rc == 2 and "missing" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert not torch_loaded and not rdkit_loaded
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv,flag", [
    (["train", "--beta=-inf"], "--beta"), (["train", "--beta", "nan"], "--beta"),
    (["train", "--time-budget", "0"], "--time-budget"), (["train", "--rho", "1.5"], "--rho"),
    (["train", "--steps", "0"], "--steps"), (["train", "--beta-range", "0", "inf"], "--beta-range"),
    (["sample", "--model", "m", "--beta=-inf"], "--beta"), (["sample", "--model", "m", "--n", "-1"], "--n"),
])
def test_impossible_flags_are_refused_naming_the_flag(tmp_path, capsys, argv, flag):
    from iclr25.rxnflow.cli import main

    with pytest.raises(SystemExit) as exc:
        main([*argv, "--out", str(tmp_path / "o.sdf" if argv[0] == "sample" else tmp_path / "o")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and flag in err and "time_budget_s" not in err


def test_endless_runs_are_refused_before_work(tmp_path, capsys):
    import time

    t0 = time.perf_counter()
    rc, err = _cli(["train", "--steps", "1000000000000", "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and len(err) == 1 and "--steps 1000000000000" in err[0] and "--force" in err[0]
    rc, err = _cli(["sample", "--model", str(tmp_path / "m"), "--n", "1000000000000", "--out", str(tmp_path / "x.smi")],
                   capsys)
    assert rc == 2 and len(err) == 1 and "--n 1000000000000" in err[0]
    assert time.perf_counter() - t0 < 10 and not (tmp_path / "o").exists()


def test_dead_template_message_names_the_flag_not_the_parameter(tmp_path, capsys):
    (tmp_path / "b.smi").write_text("CCO\nc1ccccc1\n")
    (tmp_path / "t.txt").write_text("amide [C:1](=O)[OH].[N;H2:2]>>[C:1](=O)[N:2]\n")
    rc, err = _cli(["train", "--blocks", str(tmp_path / "b.smi"), "--templates", str(tmp_path / "t.txt"),
                    "--steps", "2", "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and len(err) == 1 and "--allow-dead-templates" in err[0] and "allow_dead " not in err[0]
    assert not (tmp_path / "o").exists()


def test_existing_outputs_are_not_overwritten(tmp_path, capsys):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "model.pt").write_text("previous")
    rc, err = _cli(["train", "--steps", "2", "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and "--out" in err[0] and "--overwrite" in err[0]
    (tmp_path / "x.smi").write_text("CCO\n")
    rc, err = _cli(["sample", "--model", str(tmp_path / "o"), "--out", str(tmp_path / "x.smi")], capsys)
    assert rc == 2 and "--out" in err[0]
    assert (tmp_path / "o" / "model.pt").read_text() == "previous" and (tmp_path / "x.smi").read_text() == "CCO\n"
