"""NWB input: one file per day, read into the same Recordings the analysis takes (the ``nwb`` extra)."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

pynwb = pytest.importorskip("pynwb", reason="the nwb extra (pynwb) is not installed")

from iclr25.overtraining import analyze_recordings, load_nwb, save_nwb  # noqa: E402
from iclr25.overtraining.cli import main  # noqa: E402
from iclr25.overtraining.recordings import Recordings  # noqa: E402

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def _small_recordings(seed=0, D=5, T=24, N=6):
    rng = np.random.default_rng(seed)
    stim = np.tile(np.arange(T) % 8, (D, 1)).astype(np.int64)
    labels = np.where(stim % 2 == 0, -1, 1).astype(np.int8)
    R = rng.normal(size=(D, T, N)) + 0.3 * np.arange(1, D + 1)[:, None, None] * labels[:, :, None]
    return Recordings(responses=R, labels=labels, days=np.array([0, 1, 3, 7, 14]), stimulus=stim,
                      probe=stim >= 6, behaviour=(rng.random((D, T)) < 0.9).astype(np.int8))


def _write_units_file(path, spikes_per_unit, trials, start=T0, label_values=None):
    nwb = pynwb.NWBFile(session_description="test", identifier=str(path), session_start_time=start)
    nwb.add_trial_column("label", "class")
    for i, (a, b) in enumerate(trials):
        nwb.add_trial(start_time=a, stop_time=b, label=(label_values[i] if label_values else (-1) ** i))
    for st in spikes_per_unit:
        nwb.add_unit(spike_times=st)
    with pynwb.NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    return path


def test_save_then_load_round_trips_exactly(tmp_path):
    rec = _small_recordings()
    files = save_nwb(tmp_path / "nwb", rec, start=T0)
    assert [f.name for f in files] == [f"day_{d:03d}.nwb" for d in range(5)]
    back = load_nwb(files, responses="responses", stimulus_column="stimulus", probe_column="probe",
                    behaviour_column="behaviour")
    np.testing.assert_array_equal(back.responses, rec.responses)
    np.testing.assert_array_equal(back.labels, rec.labels)
    np.testing.assert_array_equal(back.stimulus, rec.stimulus)
    np.testing.assert_array_equal(back.probe, rec.probe)
    np.testing.assert_array_equal(back.behaviour, rec.behaviour)
    np.testing.assert_allclose(back.days, rec.days.astype(float))  # from the session start times
    a = analyze_recordings(rec, cv=3, reference_day=1, n_permutations=200, seed=0)
    b = analyze_recordings(back, cv=3, reference_day=1, n_permutations=200, seed=0)
    np.testing.assert_allclose(b.margin, a.margin, rtol=0, atol=0)
    np.testing.assert_allclose(b.decoding_accuracy, a.decoding_accuracy)
    assert b.margin_trend == a.margin_trend


def test_units_are_spike_counts_in_each_trial_window(tmp_path):
    trials = [(0.0, 1.0), (2.0, 3.0), (4.0, 5.0), (6.0, 7.0)]
    f = _write_units_file(tmp_path / "d0.nwb", [[0.1, 0.5, 0.99, 1.0, 2.5, 6.0], [4.2, 4.3, 9.0]], trials)
    rec = load_nwb(f)
    np.testing.assert_array_equal(rec.responses[0], [[3, 0], [1, 0], [0, 2], [1, 0]])
    np.testing.assert_array_equal(rec.labels[0], [1, -1, 1, -1])
    assert rec.days.tolist() == [0.0]


def test_zero_one_and_boolean_labels_become_pm1(tmp_path):
    trials = [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]
    f = _write_units_file(tmp_path / "d.nwb", [[0.5]], trials, label_values=[0, 1, 1])
    assert load_nwb(f).labels[0].tolist() == [-1, 1, 1]


def test_days_out_of_order_are_refused(tmp_path):
    trials = [(0.0, 1.0), (1.0, 2.0)]
    a = _write_units_file(tmp_path / "a.nwb", [[0.5]], trials, start=T0 + timedelta(days=2))
    b = _write_units_file(tmp_path / "b.nwb", [[0.5]], trials, start=T0)
    with pytest.raises(ValueError, match="days must be strictly increasing"):
        load_nwb([a, b])
    assert load_nwb([b, a]).days.tolist() == [0.0, 2.0]
    with pytest.raises(ValueError, match="days must be strictly increasing"):
        load_nwb([b, a], days=[3, 1])


def test_bad_files_name_the_file_and_what_was_expected(tmp_path):
    trials = [(0.0, 1.0), (1.0, 2.0)]
    a = _write_units_file(tmp_path / "a.nwb", [[0.5], [1.5]], trials)
    b = _write_units_file(tmp_path / "b.nwb", [[0.5]], trials, start=T0 + timedelta(days=1))
    with pytest.raises(ValueError, match=r"b\.nwb: has 1 neurons but .*a\.nwb has 2"):
        load_nwb([a, b])
    c = _write_units_file(tmp_path / "c.nwb", [[0.5], [0.7]], trials + [(2.0, 3.0)], start=T0 + timedelta(days=1))
    with pytest.raises(ValueError, match=r"c\.nwb: has 3 trials .* pass n_trials"):
        load_nwb([a, c])
    assert load_nwb([a, c], n_trials=2).responses.shape == (2, 2, 2)
    with pytest.raises(ValueError, match=r"a\.nwb: the trials table has no column 'odour'"):
        load_nwb(a, label_column="odour")
    with pytest.raises(ValueError, match=r"a\.nwb: no time series 'dff'"):
        load_nwb(a, responses="dff")
    (tmp_path / "e.nwb").write_bytes(b"")
    with pytest.raises(ValueError, match=r"e\.nwb: file is empty"):
        load_nwb(tmp_path / "e.nwb")
    (tmp_path / "g.nwb").write_text("not hdf5")
    with pytest.raises(ValueError, match=r"g\.nwb: not an NWB \(HDF5\) file"):
        load_nwb(tmp_path / "g.nwb")
    with pytest.raises(FileNotFoundError, match="missing.nwb"):
        load_nwb(tmp_path / "missing.nwb")
    with pytest.raises(ValueError, match="n_trials"):
        load_nwb(a, n_trials=1)


def test_a_trial_window_without_samples_is_named(tmp_path):
    nwb = pynwb.NWBFile(session_description="test", identifier="x", session_start_time=T0)
    nwb.add_trial_column("label", "class")
    for i, (a, b) in enumerate([(0.0, 1.0), (1.0, 2.0), (5.0, 6.0)]):
        nwb.add_trial(start_time=a, stop_time=b, label=(-1) ** i)
    nwb.add_acquisition(pynwb.TimeSeries(name="dff", data=np.ones((3, 2)), unit="a.u.",
                                         timestamps=[0.5, 1.5, 3.0]))
    with pynwb.NWBHDF5IO(str(tmp_path / "d.nwb"), "w") as io:
        io.write(nwb)
    with pytest.raises(ValueError, match=r"d\.nwb: trial 2 \[5, 6\) has no samples of time series 'dff'"):
        load_nwb(tmp_path / "d.nwb", responses="dff")


def test_cli_simulate_nwb_then_analyze(tmp_path, capsys):
    folder = tmp_path / "nwb"
    assert main(["simulate", "--format", "nwb", "--out", str(folder), "--days", "4", "--neurons", "8",
                 "--trials", "2"]) == 0
    files = sorted(folder.glob("*.nwb"))
    assert len(files) == 4
    out = tmp_path / "analysis"
    assert main(["analyze", *map(str, files), "--nwb-responses", "responses", "--nwb-stimulus-column", "stimulus",
                 "--nwb-probe-column", "probe", "--nwb-behaviour-column", "behaviour", "--cv", "3",
                 "--permutations", "100", "--out", str(out)]) == 0
    assert (out / "analysis.json").is_file() and (out / "results.json").is_file()
    capsys.readouterr()
    assert main(["analyze", str(files[0]), str(tmp_path / "x.npz"), "--out", str(tmp_path / "mix")]) == 2
    assert "do not mix" in capsys.readouterr().err
    assert not (tmp_path / "mix").exists()
