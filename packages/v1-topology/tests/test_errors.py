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
