"""Claim 3: bad input gives clear errors that name the argument."""

import json

import numpy as np
import pytest

from iclr25.v1_topology import maps
from iclr25.v1_topology.network import SESNN, NetworkConfig
from iclr25.v1_topology.presets import load_preset, preset_config


def test_map_with_nan_is_refused():
    m = np.zeros((16, 16))
    m[3, 4] = np.nan
    with pytest.raises(ValueError, match="map must be finite"):
        maps.pinwheels(m)
    with pytest.raises(ValueError, match="finite"):
        maps.summarize_map(m)


def test_non_square_map_is_refused_where_periodicity_is_required():
    m = np.zeros((16, 20))
    with pytest.raises(ValueError, match="square for periodic=True"):
        maps.pinwheels(m, periodic=True)
    with pytest.raises(ValueError, match="square"):
        maps.column_spacing(m)
    maps.pinwheels(m, periodic=False)  # fine without periodicity


@pytest.mark.parametrize("bad", [np.zeros(16), np.zeros((2, 2)), "theta", np.array([["a"] * 5] * 5)])
def test_wrong_shapes_and_types(bad):
    with pytest.raises((ValueError, TypeError), match="map must"):
        maps.pinwheels(bad, periodic=False)


def test_preset_with_unknown_keys_is_refused(tmp_path):
    p = tmp_path / "ferret.json"
    p.write_text(json.dumps({"species": "ferret", "network": {"stride": 2, "radius": 3}}))
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['radius'\]"):
        load_preset(p)
    p.write_text(json.dumps({"species": "ferret", "colour": "red", "network": {"stride": 2}}))
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['colour'\]"):
        load_preset(p)
    with pytest.raises(ValueError, match="species must be one of"):
        load_preset("dog")
    with pytest.raises(ValueError, match="unknown key"):
        preset_config("cat", overlap=0.5)


@pytest.mark.parametrize("kw, match", [({"stride": 0}, "stride must be"), ({"n_side": 30, "i_stride": 4}, "multiple"),
                                       ({"learning": "stdp"}, "learning must be"), ({"r_ei": 40.0}, "radii"),
                                       ({"p_e": float("nan")}, "p_e must be")])
def test_impossible_network_constants(kw, match):
    with pytest.raises(ValueError, match=match):
        NetworkConfig(**kw)


def test_bad_patches_and_checkpoint(tmp_path):
    net = SESNN(NetworkConfig(n_side=8, patch=4, stride=1, r_ee=1.0, r_ei=2.0, r_ii=2.0))
    with pytest.raises(ValueError, match="patches must have shape"):
        net.simulate(np.zeros((2, 10, 16)))
    bad = tmp_path / "ck.npz"
    np.savez(bad, Q=np.zeros(3))
    with pytest.raises(ValueError, match="missing array"):
        SESNN.load(bad)


# ----------------------------------------------------------------------------- command line (issue 40)
def _cli(argv, capsys):
    from iclr25.v1_topology.cli import main

    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    return rc, err


@pytest.mark.parametrize("argv, flag", [(["--n-side", "100000"], "--n-side 100000"),
                                        (["--samples", str(10 ** 12)], "--samples 1000000000000")])
def test_train_refuses_sizes_it_cannot_finish_before_any_work(tmp_path, capsys, argv, flag):
    out = tmp_path / "run"
    rc, err = _cli(["train", "--species", "cat", "--out", out, *argv], capsys)
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and flag in err and "--force" in err, err
    assert "Traceback" not in err
    assert not out.exists()  # no empty --out left behind


def test_train_refuses_to_resume_a_checkpoint_of_another_seed(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    SESNN(preset_config("cat", n_side=16), seed=0).save(out / "checkpoint.npz")
    rc, err = _cli(["train", "--species", "cat", "--n-side", "16", "--out", out, "--seed", "1"], capsys)
    assert rc == 2 and "--seed 0" in err and "--seed 1" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.npz"]


def test_train_out_that_is_a_file_or_the_input_is_refused(tmp_path, capsys):
    f = tmp_path / "images.npy"
    np.save(f, np.zeros((32, 32)))
    rc, err = _cli(["train", "--species", "cat", "--images", f, "--out", f], capsys)
    assert rc == 2 and "--out" in err, err


def test_analyze_refuses_degrees_given_as_radians(tmp_path, capsys):
    rng = np.random.default_rng(0)
    deg = tmp_path / "deg.npy"
    np.save(deg, rng.uniform(0, 180, size=(16, 16)))
    rc, err = _cli(["analyze", deg], capsys)
    assert rc == 2 and "outside [0, π]" in err and "--degrees" in err, err
    rc, _ = _cli(["analyze", deg, "--degrees"], capsys)
    assert rc == 0


def test_analyze_refuses_radians_given_with_degrees_and_wrong_ranges(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rad = tmp_path / "rad.npy"
    np.save(rad, rng.uniform(0, np.pi, size=(16, 16)))
    rc, err = _cli(["analyze", rad, "--degrees"], capsys)
    assert rc == 2 and "look like radians" in err, err
    neg = tmp_path / "neg.npy"
    np.save(neg, rng.uniform(-np.pi / 2, np.pi / 2, size=(16, 16)))
    rc, err = _cli(["analyze", neg], capsys)
    assert rc == 2 and "np.mod" in err, err
    rc, _ = _cli(["analyze", rad], capsys)
    assert rc == 0


def test_analyze_out_is_not_overwritten_without_overwrite(tmp_path, capsys):
    rad = tmp_path / "rad.npy"
    np.save(rad, np.random.default_rng(0).uniform(0, np.pi, size=(16, 16)))
    out = tmp_path / "m.json"
    out.write_text("mine")
    rc, err = _cli(["analyze", rad, "--out", out], capsys)
    assert rc == 2 and "--overwrite" in err and out.read_text() == "mine", err
    rc, err = _cli(["analyze", rad, "--out", out, "--overwrite"], capsys)
    assert rc == 0 and json.loads(out.read_text())["n_pinwheels"] >= 0
