"""Runs inside the throwaway GraphRicciCurvature venv: curvature and timing of each graph of a .npz."""

import json
import sys
import time

import networkx as nx
import numpy as np
from GraphRicciCurvature.OllivierRicci import OllivierRicci


def main(path: str, out: str, repeats: int) -> None:
    data = np.load(path)
    res = {}
    for name in data.files:
        ei = data[name]
        G = nx.Graph()
        G.add_nodes_from(range(int(ei.max()) + 1))
        G.add_edges_from(ei.T.tolist())
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            orc = OllivierRicci(G, alpha=0.5, base=1, exp_power=2, proc=1, method="OTD", verbose="ERROR")
            orc.compute_ricci_curvature()
            times.append(time.perf_counter() - t0)
        edges = {f"{min(u, v)},{max(u, v)}": d["ricciCurvature"] for u, v, d in orc.G.edges(data=True)}
        nodes = [orc.G.nodes[v].get("ricciCurvature", 0.0) for v in range(G.number_of_nodes())]
        res[name] = {"times": times, "edges": edges, "nodes": nodes}
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
