"""Bad input raises ValueError/TypeError naming the argument; a rejected request leaves the state unchanged."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.scalegun import CertifiedUnlearner, datasets, gpr_weights, noise_multiplier, residual_budget
from iclr25.scalegun.cli import main
from iclr25.utils.io import DataFileError
from iclr25.utils.testing import one_error_line


@pytest.fixture(scope="module")
def g():
    return datasets.csbm(120, 500, 6, 3, seed=2)


@pytest.fixture()
def fitted(g):
    return CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx).fit()


def _state(u):
    return (u.coef_.copy(), u.embeddings(), len(u.ledger), u._prop.Q[1].copy(), u._prop.R[0].copy(),
            u._prop.A.data.copy(), u._t.clone())


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, int):
            assert x == y
        else:
            assert (np.asarray(x) == np.asarray(y)).all()


@pytest.mark.parametrize("bad, exc, match", [
    ([[0, 10_000]], ValueError, "edges must be node ids in"),
    ([[-1, 3]], ValueError, "edges must be node ids in"),
    ([[0.5, 1.0]], TypeError, "edges must be integer"),
    ([], ValueError, "edges must not be empty"),
    ([[1, 2, 3]], ValueError, r"edges must have shape \(k, 2\)"),
    ([[4, 4]], ValueError, "self loops"),
    ("dup", ValueError, "duplicates"),
    ("missing", ValueError, "does not exist"),
])
def test_bad_edge_requests_are_rejected_without_side_effects(fitted, g, bad, exc, match):
    if bad == "dup":
        e = g.edges[0]
        bad = [e, e[::-1]]
    elif bad == "missing":
        A = g.adj.toarray()
        u, v = np.argwhere((A == 0) & ~np.eye(len(A), dtype=bool))[0]
        bad = [g.edges[0], [u, v]]  # a valid edge first: nothing may be applied
    before = _state(fitted)
    with pytest.raises(exc, match=match):
        fitted.unlearn_edges(np.array(bad))
    _same(before, _state(fitted))


@pytest.mark.parametrize("method", ["unlearn_nodes", "unlearn_features"])
@pytest.mark.parametrize("bad, exc, match", [
    ([500], ValueError, "nodes must be node ids in"),
    ([1, 1], ValueError, "duplicate"),
    ([], ValueError, "must not be empty"),
    ([1.5], TypeError, "integer node ids"),
])
def test_bad_node_requests(fitted, method, bad, exc, match):
    before = _state(fitted)
    with pytest.raises(exc, match=match):
        getattr(fitted, method)(np.array(bad))
    _same(before, _state(fitted))


def test_removed_twice(fitted, g):
    fitted.unlearn_nodes([int(g.train_idx[0])])
    with pytest.raises(ValueError, match="already been removed"):
        fitted.unlearn_nodes([int(g.train_idx[0])])
    with pytest.raises(ValueError, match="already been removed"):
        fitted.unlearn_features([int(g.train_idx[0])])
    a = int(g.train_idx[0])
    e = g.edges[(g.edges != a).all(axis=1)][0]
    fitted.unlearn_edges([e])
    with pytest.raises(ValueError, match="does not exist"):
        fitted.unlearn_edges([e])


def test_asymmetric_adjacency(g):
    A = g.adj.toarray()
    A[0, 5], A[5, 0] = 1, 0
    with pytest.raises(ValueError, match="adj must be symmetric"):
        CertifiedUnlearner(A, g.X, g.y, g.train_idx)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(X="nan"), ValueError, "X must be finite"),
    (dict(X="inf"), ValueError, "X must be finite"),
    (dict(X="1d"), ValueError, "X must be a non-empty 2-D"),
    (dict(X="str"), TypeError, "X must be a numeric"),
    (dict(X="empty"), ValueError, "X must be a non-empty 2-D"),
    (dict(adj="shape"), ValueError, "adj must have shape"),
    (dict(adj="nan"), ValueError, "adj must be finite"),
    (dict(y="float"), TypeError, "y must be integer"),
    (dict(y="short"), ValueError, "y must have shape"),
    (dict(y="negative"), ValueError, "y must hold class labels"),
    (dict(train_idx=[0, 0]), ValueError, "train_idx must not contain duplicate"),
    (dict(train_idx=[10_000]), ValueError, "train_idx must be node ids"),
    (dict(train_idx=[]), ValueError, "train_idx must not be empty"),
    (dict(hops=-1), ValueError, "hops must be"),
    (dict(weights="bogus"), ValueError, "weights must be one of"),
    (dict(weights=np.ones(5)), ValueError, "weights must be finite with shape"),
    (dict(r_max=0.0), ValueError, "r_max must be"),
    (dict(r_max=float("nan")), ValueError, "r_max must be"),
    (dict(epsilon=-1.0), ValueError, "epsilon must be"),
    (dict(delta=1.5), ValueError, "delta must be"),
    (dict(lam=0.0), ValueError, "lam must be"),
    (dict(sigma=-0.1), ValueError, "sigma must be"),
    (dict(sigma="big"), TypeError, "sigma must be a number"),
    (dict(mode="exact"), ValueError, "mode must be one of"),
    (dict(max_iter=0), ValueError, "max_iter must be"),
    (dict(seed=-1), ValueError, "seed must be"),
    (dict(seed=1.5), TypeError, "seed must be"),
    (dict(torch_threads=0), ValueError, "torch_threads must be"),
    (dict(standardize=False), ValueError, "X rows must have L2 norm <= 1"),
])
def test_bad_constructor_arguments(g, kwargs, exc, match):
    args = dict(adj=g.adj, X=g.X, y=g.y, train_idx=g.train_idx)
    special = {
        ("X", "nan"): lambda: np.where(np.arange(g.X.size).reshape(g.X.shape) == 3, np.nan, g.X),
        ("X", "inf"): lambda: np.where(np.arange(g.X.size).reshape(g.X.shape) == 3, np.inf, g.X),
        ("X", "1d"): lambda: g.X[:, 0],
        ("X", "str"): lambda: g.X.astype(str),
        ("X", "empty"): lambda: np.zeros((0, 3)),
        ("adj", "shape"): lambda: sp.eye(7),
        ("adj", "nan"): lambda: sp.csr_array(np.where(g.adj.toarray() > 0, np.nan, 0.0)),
        ("y", "float"): lambda: g.y.astype(float),
        ("y", "short"): lambda: g.y[:-1],
        ("y", "negative"): lambda: g.y - 1,
    }
    for key, value in list(kwargs.items()):
        if key in args:
            args[key] = special[(key, value)]() if isinstance(value, str) else value
            del kwargs[key]
    if "standardize" in kwargs:
        args["X"] = g.X * 10.0
    with pytest.raises(exc, match=match):
        CertifiedUnlearner(**args, **kwargs)


def test_use_before_fit(g):
    u = CertifiedUnlearner(g.adj, g.X, g.y, g.train_idx)
    with pytest.raises(RuntimeError, match="fit"):
        u.unlearn_edges(g.edges[:1])
    with pytest.raises(RuntimeError, match="fit"):
        u.predict()


def test_all_training_nodes_removed(g):
    small = np.array(g.train_idx[:2])
    u = CertifiedUnlearner(g.adj, g.X, g.y, small).fit()
    with pytest.raises(ValueError, match="training set empty"):
        u.unlearn_features(small)


@pytest.mark.parametrize("call, match", [
    (lambda: gpr_weights("ppr", 2, alpha=1.5), "alpha must be in"),
    (lambda: noise_multiplier(0.0), "delta must be in"),
    (lambda: residual_budget(0.1, 1.0, 2.0), "delta must be in"),
    (lambda: datasets.csbm(1, 10, 4, 2), "n must be an integer"),
    (lambda: datasets.csbm(100, 10, 4, 2, homophily=1.5), "homophily must be"),
    (lambda: datasets.powerlaw(100, 300, 4, 2, exponent=1.5), "exponent must be"),
    (lambda: datasets.adversarial_edges(datasets.csbm(50, 100, 2, 2), 0.0), "fraction must be"),
])
def test_bad_function_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_invalid_files(tmp_path):
    bad = tmp_path / "graph.txt"
    bad.write_text("0 1\n1 x\n")
    with pytest.raises(DataFileError):
        datasets.load_graph(bad)
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(DataFileError, match="empty"):
        datasets.load_graph(tmp_path / "empty.txt")
    (tmp_path / "x.npy").write_bytes(b"not numpy")
    with pytest.raises(DataFileError, match="features"):
        datasets.load_array(tmp_path / "x.npy", "features")
    req = tmp_path / "req.txt"
    req.write_text("edge 1\n")
    with pytest.raises(DataFileError, match="pairs"):
        datasets.read_requests(req)
    req.write_text("remove 1 2\n")
    with pytest.raises(DataFileError, match="request kind"):
        datasets.read_requests(req)


def test_cli_bad_request_is_a_one_line_error_and_writes_nothing(tmp_path, g, capsys):
    edges = tmp_path / "g.txt"
    edges.write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    np.save(tmp_path / "X.npy", g.X)
    np.save(tmp_path / "y.npy", g.y)
    (tmp_path / "req.txt").write_text("edge 0 119\n" if g.adj[0, 119] == 0 else "edge 0 0\n")
    out = tmp_path / "ledger.json"
    rc = main(["unlearn", "--graph", str(edges), "--features", str(tmp_path / "X.npy"), "--labels",
               str(tmp_path / "y.npy"), "--requests", str(tmp_path / "req.txt"), "--out", str(out)])
    assert rc == 2
    assert "error" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture()
def files(tmp_path, g):
    edges = tmp_path / "g.txt"
    edges.write_text("\n".join(f"{u} {v}" for u, v in g.edges) + "\n")
    np.save(tmp_path / "X.npy", g.X)
    np.save(tmp_path / "y.npy", g.y)
    return tmp_path


def _argv(d, **over):
    args = {"--graph": d / "g.txt", "--features": d / "X.npy", "--labels": d / "y.npy",
            "--requests": d / "req.txt", "--out": d / "ledger.json"} | over
    return ["unlearn", *[str(t) for kv in args.items() for t in kv]]


def test_cli_three_column_edge_line_is_blamed_on_the_graph_file(files, capsys):
    (files / "g.txt").write_text("0 1\n0 1 2\n")
    (files / "req.txt").write_text("edge 0 1\n")
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "g.txt: line 2: expected an edge 'u v' (two node ids), got 3 fields" in line, line
    assert "features" not in line
    assert not (files / "ledger.json").exists()


def test_cli_node_id_beyond_the_feature_rows_names_the_graph_file(files, g, capsys):
    (files / "g.txt").write_text(f"0 1\n3 {g.n_nodes}\n")
    (files / "req.txt").write_text("edge 0 1\n")
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"g.txt: line 2: node id {g.n_nodes} is out of range: the features have {g.n_nodes} rows" in line


def test_cli_non_finite_features_name_the_file_and_row(files, g, capsys):
    X = g.X.copy()
    X[7, 2] = np.nan
    np.save(files / "X.npy", X)
    (files / "req.txt").write_text("edge 0 1\n")
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "X.npy: features must be finite: row 7 has NaN or inf" in line, line


def test_cli_counts_the_requests_of_the_file(files, g, capsys):
    e = g.edges
    a, b = (int(v) for v in g.train_idx[:2])
    keep = e[(e != a).all(axis=1) & (e != b).all(axis=1)]
    lines = [f"edge {u} {v}" for u, v in keep[:4]] + [f"edge {keep[4][0]} {keep[4][1]} {keep[5][0]} {keep[5][1]}",
                                                      f"node {a}", "# a comment", f"feature {b}"]
    (files / "req.txt").write_text("\n".join(lines))  # 8 lines, no final newline (wc -l says 7), 7 requests
    assert main(_argv(files)) == 0
    out = capsys.readouterr().out
    assert "7 requests (6 edges, 1 node, 1 feature) from" in out, out
    import json

    assert json.loads((files / "ledger.json").read_text())["n_requests"] == 7


@pytest.mark.parametrize("text, match", [
    ("edge 0 0\n", "line 1: edge 0 0: (0, 0) is a self loop"),
    ("node 3\nnode 3\n", "line 2: node 3: node 3 has already been removed"),
    ("edge 0 99999\n", "line 1: edge 0 99999: node id 99999 is out of range"),
])
def test_cli_requests_are_replayed_before_any_work(files, capsys, text, match):
    (files / "req.txt").write_text(text)
    assert main(_argv(files)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "req.txt: " + match in line, line


def test_cli_missing_edge_request_names_its_line(files, g, capsys):
    A = g.adj.toarray()
    u, v = np.argwhere((A == 0) & ~np.eye(len(A), dtype=bool))[0]
    (files / "req.txt").write_text(f"edge {g.edges[0][0]} {g.edges[0][1]}\n\nedge {u} {v}\n")
    assert main(_argv(files)) == 2
    assert f"req.txt: line 3: edge {u} {v}: edge ({min(u, v)}, {max(u, v)}) is not in the graph" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("flag, value, match", [
    ("--r-max", "-1", "--r-max must be a finite number > 0"),
    ("--delta", "1.5", "--delta must be a finite number > 0 and < 1"),
    ("--epsilon", "0", "--epsilon must be a finite number > 0"),
    ("--sigma", "nan", "--sigma must be a finite number >= 0"),
    ("--hops", "0", "--hops must be an integer >= 1"),
    ("--seed", "-2", "--seed must be a non-negative integer"),
    ("--out", "ledger.txt", "--out must name a .json file"),
])
def test_cli_options_are_checked_before_reading_files(tmp_path, capsys, flag, value, match):
    argv = _argv(tmp_path / "nothing-here") + [flag, value]
    assert main(argv) == 2
    assert match in one_error_line(capsys.readouterr().err)


def test_bounds_figure_legend_outside_and_no_retrain_note_without_retrains(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    import iclr25.utils.plotting as plotting
    from iclr25.scalegun.figures import demo_figure

    figs = []
    real = plotting.savefig
    monkeypatch.setattr(plotting, "savefig", lambda fig, path, **kw: (figs.append(fig), real(fig, path, close=False)))

    class Rec:
        def __init__(self, retrained):
            self.worst_case_bound, self.data_bound, self.true_residual = 1.0, (1e-3,), (1e-5,)
            self.retrained = retrained

    for retrains in (0, 2):
        recs = [Rec(i in (3, 7)[:retrains]) for i in range(12)]
        demo_figure(tmp_path, recs, 1e-2, (8, 2, 2))
        fig = figs[-1]
        fig.canvas.draw()
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert ("retrain" in labels) == (retrains > 0), labels
        assert f"{retrains} retrain" in ax.get_xlabel()
        r = fig.canvas.get_renderer()
        assert ax.get_legend().get_window_extent(r).x0 >= ax.get_window_extent(r).x1  # beside, not on the lines
        assert plotting.figure_problems(fig) == []  # a title and axis labels (issue 66)
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert all(float(t).is_integer() for t in ticks), ticks
        plt.close(fig)


def test_sweep_cell_peak_rss_is_never_below_its_start(monkeypatch):
    """Issue 40: a cell that allocates nothing after its start has peak == start, and the kernel's high-water
    mark may lag a reading taken just after its reset; the recorded peak is never below the start reading."""
    from iclr25.scalegun import experiments

    monkeypatch.setattr(experiments, "peak_rss_bytes", lambda: 1)  # a lagging high-water mark
    cell = experiments.run_cell({"graph": {"n": 300, "m": 1500, "features": 4, "classes": 2}, "batches": [1],
                                 "requests": [1]})
    assert cell["rss_start_bytes"] > 1
    assert cell["peak_rss_bytes"] == cell["rss_start_bytes"]


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "1000000000000"], "--sizes 1000000000000 --requests 200 needs about"),
    (["--sizes", "1000", "--requests", "1000000000000"], "would take about"),
    (["--sizes", "10"], "--sizes must be numbers of edges >= 100, got 10"),
    (["--requests", "0"], "--requests must be an integer >= 1, got 0"),
])
def test_repro_refuses_sizes_before_any_work(tmp_path, capsys, argv, message):
    """Issue 40: a 10^12 size is refused in one line with its estimate (exit 2), before anything is written."""
    out = tmp_path / "run"
    assert main(["repro", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_names_moved_out_of_experiments_still_import_with_a_deprecation_warning():
    from iclr25.scalegun import demo, experiments, repro

    for name, module in (("run_demo", demo), ("run_repro", repro), ("repro_table", repro)):
        with pytest.warns(DeprecationWarning, match=f"moved to iclr25.scalegun.{module.__name__.rsplit('.', 1)[1]}"):
            assert getattr(experiments, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        experiments.nothing  # noqa: B018
