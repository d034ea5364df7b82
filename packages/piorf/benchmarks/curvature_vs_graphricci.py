"""Ollivier-Ricci curvature: iclr25.piorf vs GraphRicciCurvature (parity and speed).

GraphRicciCurvature pins ``scipy<=1.13.1``, so it lives in a throwaway venv made here with uv
(``--venv``, default ``$XDG_CACHE_HOME/iclr25/piorf-grc-venv``, i.e. ``~/.cache/iclr25/...``); it is never a dependency of the package.

    python benchmarks/curvature_vs_graphricci.py --out results/piorf-bench
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import networkx as nx
import numpy as np

from iclr25.piorf import as_edge_index, channel_mesh, ollivier_ricci
from iclr25.utils.bench import (
    Comparison,
    Measurement,
    benchmark_parser,
    cache_dir,
    format_table,
    measure,
    peer_env,
    to_run_result,
)
from iclr25.utils.io import save_npz

HERE = Path(__file__).parent


def graphs() -> dict[str, np.ndarray]:
    out = {}
    for s in range(3):
        m = channel_mesh(22.0, 4.2, (4.0 + 0.3 * s, 2.0 + 0.1 * s), 0.5, h_min=0.12, h_max=0.45, grade=3.0, seed=s)
        out[f"cylinder mesh {s} ({m.n_nodes} nodes)"] = m.edge_index
    out["karate"] = as_edge_index(nx.karate_club_graph())[0]
    out["grid 30x30"] = as_edge_index(nx.convert_node_labels_to_integers(nx.grid_2d_graph(30, 30)))[0]
    out["random 3-regular (500)"] = as_edge_index(nx.random_regular_graph(3, 500, seed=0))[0]
    return out


def main() -> None:
    ap = benchmark_parser(__doc__, out="results/piorf-bench", raw=True)
    ap.add_argument("--venv", type=Path, default=cache_dir("piorf-grc-venv"),
                    help="GraphRicciCurvature's throwaway venv (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    py = peer_env(args.venv, ["GraphRicciCurvature==0.6.1", "scipy==1.13.1"])  # raises if uv is missing
    gs = graphs()
    rows, parity = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graphs.npz"
        save_npz(path, **{f"g{k}": ei for k, ei in enumerate(gs.values())})
        res_path = Path(tmp) / "grc.json"
        subprocess.run([str(py), str(HERE / "_grc_worker.py"), str(path), str(res_path), str(args.repeats)],
                       check=True)
        grc = json.loads(res_path.read_text())
    ollivier_ricci(gs["karate"])  # import POT outside the timings
    for k, (name, ei) in enumerate(gs.items()):
        ref = grc[f"g{k}"]
        ours = ollivier_ricci(ei)
        err_e = max(abs(c - ref["edges"][f"{i},{j}"]) for (i, j), c in zip(ours.edges.tolist(), ours.edge))
        err_n = float(np.max(np.abs(ours.node - np.array(ref["nodes"]))))
        parity[name] = max(err_e, err_n)
        m = measure(lambda ei=ei: ollivier_ricci(ei), name=name, warmup=0, repeats=args.repeats)
        rows.append(Comparison(m, Measurement("GraphRicciCurvature 0.6.1 (OTD)", tuple(ref["times"]))))
    print(format_table(rows))
    print("| graph | max abs curvature difference (edges and nodes) |\n|---|---|")
    for name, err in parity.items():
        print(f"| {name} | {err:.2e} |")
    run = to_run_result("iclr25-piorf", rows, command="bench curvature_vs_graphricci", config={"repeats": args.repeats})
    for name, err in parity.items():
        run.add(f"max |kappa - GRC| {name}", err, higher_is_better=False)
    args.out.mkdir(parents=True, exist_ok=True)
    run.save(args.out / "curvature_vs_graphricci.json")
    if max(parity.values()) > 1e-6:
        sys.exit(f"parity failed: {parity}")


if __name__ == "__main__":
    main()
