"""Why does the 1D-to-3D transfer not help at this scale? Its likely causes, one at a time, on the LM and DMT that
``repro`` trained (``repro`` writes them to OUT/models):

    python benchmarks/transfer_ablation.py --repro results/next-mol-repro [--out DIR]

Each row trains from the same 800-step DMT and is compared with the same number of extra steps of DMT alone
(same seed, same batches): (a) the repro's stage 2 (projector + new input columns, 100 steps); (b) budget: stage 2
for 300 steps; (c) stage 3: the projector and all of DMT trained jointly for 100 steps; (d) a negative control:
stage 2 with the LM features of other molecules (shuffled), which tells whether the features carry anything the
model uses. MAT-R with 50 ancestral sampler steps, validation RMSD at fixed noise draws.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from iclr25.next_mol import EnsembleSettings, load_dmt, load_lm, train_dmt, validation_rmsd
from iclr25.next_mol.diffusion import Graph
from iclr25.next_mol.experiments import evaluate_conformers, three_d_data
from iclr25.next_mol.repro import REPRO
from iclr25.next_mol.transfer import LMFeaturizer
from iclr25.utils.io import atomic_write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repro", type=Path, required=True, help="the out folder of `iclr25 next-mol repro`")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg, seed = REPRO, 0
    out = args.out or args.repro
    data = three_d_data(cfg["dmt_train"], cfg["dmt_test"], max_heavy_atoms=cfg["max_heavy_atoms"],
                        train_settings=EnsembleSettings(n_embed=cfg["n_embed_train"], max_confs=cfg["max_confs"]),
                        test_settings=EnsembleSettings(n_embed=cfg["n_embed_test"], max_confs=cfg["max_confs"]),
                        seed=seed, n_jobs=1)
    lm, tok = load_lm(args.repro / "models" / "lm.pt")
    mol_tr = [e.molecule for e in data.train]
    mol_te = [e.molecule for e in data.test]
    rows = []
    steps = cfg["sample_steps"]

    def control(n: int) -> dict:
        dmt = load_dmt(args.repro / "models" / "dmt.pt")
        for p in dmt.parameters():
            p.requires_grad_(True)
        train_dmt(dmt, data.train_graphs, steps=n, batch_size=cfg["dmt_batch"], lr=cfg["dmt_lr"], seed=seed + 99,
                  warmup=10, desc="control")
        s, _ = evaluate_conformers(dmt, data, steps=steps, seed=seed)
        return {"MAT-R": s.mean.mat_r, "val RMSD": validation_rmsd(dmt, data.test_graphs)}

    def transfer(n: int, *, joint: bool = False, shuffle: bool = False) -> dict:
        base = load_dmt(args.repro / "models" / "dmt.pt")
        feat_tr = LMFeaturizer(lm, tok, mol_tr, seed=seed)
        feat_te = LMFeaturizer(lm, tok, mol_te, seed=seed)
        feat_te.projector = feat_tr.projector
        model = base.extend_lm_input(feat_tr.d_out)
        for p in model.parameters():
            p.requires_grad_(joint)
        model.node_in.weight.requires_grad_(True)
        params = [p for p in model.parameters() if p.requires_grad] + list(feat_tr.projector.parameters())
        perm = np.random.default_rng(seed).permutation(len(mol_tr)) if shuffle else np.arange(len(mol_tr))

        def feats(idx):
            # with shuffle, molecule i gets the token features of molecule perm[i], cut or padded to its atoms
            out = []
            for i, f in zip(idx, feat_tr([int(perm[i]) for i in idx]), strict=True):
                n_at = data.train_graphs[i].n_atoms
                g = f[:n_at] if len(f) >= n_at else torch.cat([f, f.new_zeros(n_at - len(f), f.shape[1])])
                out.append(g)
            return out

        train_dmt(model, data.train_graphs, steps=n, batch_size=cfg["dmt_batch"], lr=cfg["dmt_lr"], seed=seed + 99,
                  parameters=params, lm_features=feats, warmup=10, desc="transfer")
        te = [Graph(g.atom_feats, g.pair_feats, g.coords, f) for g, f in
              zip(data.test_graphs, feat_te.numpy(range(len(mol_te))), strict=True)]
        s, _ = evaluate_conformers(model, data, steps=steps, seed=seed, graphs=te)
        return {"MAT-R": s.mean.mat_r, "val RMSD": validation_rmsd(model, te)}

    t0 = time.perf_counter()
    c100 = control(100)
    for name, n, kw, ctl in (("(a) stage 2, 100 steps (repro)", 100, {}, c100),
                             ("(b) stage 2, 300 steps (budget)", 300, {}, None),
                             ("(c) stage 3: joint, 100 steps", 100, {"joint": True}, c100),
                             ("(d) stage 2, shuffled LM features", 100, {"shuffle": True}, c100)):
        r = transfer(n, **kw)
        ctl = ctl or control(n)
        rows.append({"run": name, "MAT-R with LM": r["MAT-R"], "MAT-R without": ctl["MAT-R"],
                     "val RMSD with LM": r["val RMSD"], "val RMSD without": ctl["val RMSD"]})
        print(rows[-1], f"{time.perf_counter() - t0:.0f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "transfer_ablation.json") as f:
        json.dump({"rows": rows, "seconds": time.perf_counter() - t0}, f, indent=1)
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
