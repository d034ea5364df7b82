"""Property-conditioned generation on QM9 (the paper's QM9-2014 conditional-generation experiment, reduced).

NExT-Mol conditions MoLlama on a QM9 property (a prompt with the value), predicts conformers with DMT and scores
the generated molecules with a property predictor trained on the *other* half of QM9's training set: the MAE
between the predictor's value and the target the molecule was asked for, beside the references of the EDM
protocol: "L-bound" (the predictor on real molecules of the generator's half, against their own labels),
"U-bound" (the same molecules against shuffled labels), "#Atoms" (the property predicted from the number of
atoms alone), and other generators.

Here (:func:`conditional_experiment`):

* the condition is one token in front of the SELFIES string, the property's quantile bin (``n_bins`` bins of
  the generator half; the target's bin centre error is reported as ``quantisation_mae``), or a null token for
  a ``cond_dropout`` share of the training molecules (classifier-free style), so that one LM is both the
  conditional generator and the unconditional baseline (null token in front);
* the predictor (:class:`PropertyPredictor`) is ridge regression on 2D features (Morgan count fingerprint,
  element and hydrogen counts, ring and aromatic counts) trained on half A. The paper's predictor is an EGNN on
  the generated 3D molecule; a QM9 property is a function of the molecule's DFT-relaxed geometry, which the
  graph determines here (QM9 holds one geometry per molecule), so DMT's conformers add no information to the
  score and are not drawn for it;
* the shortcut "nearest training molecule": for each target the generator half's molecule whose true property
  is closest to it, scored by the same predictor (copying the training set, no generation).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

__all__ = ["PROPERTIES", "PropertyPredictor", "fit_property_predictor", "property_features",
           "conditional_experiment", "COND_RECIPE"]

#: the paper's six QM9 properties: qm9pack column, factor to the paper's unit, the unit
PROPERTIES = {
    "alpha": ("Polarizability_bohr3", 1.0, "Bohr^3"),
    "gap": ("HOMO_LUMO_gap_au", 27211.386, "meV"),
    "homo": ("HOMO_au", 27211.386, "meV"),
    "lumo": ("LUMO_au", 27211.386, "meV"),
    "mu": ("Dipole_debye", 1.0, "D"),
    "Cv": ("Heatcapacity_Cv_cal_mol_K", 1.0, "cal/mol K"),
}

#: the qm9 rung's recipe: 20,000 molecules per half, LM d=64 x 2 layers, 1,500 steps, 1,000 targets
COND_RECIPE = {"property": "alpha", "n_predictor": 20000, "n_generator": 20000, "n_bins": 20, "cond_dropout": 0.2,
               "d_model": 64, "n_layers": 2, "n_heads": 4, "steps": 1500, "batch_size": 64, "lr": 2e-3,
               "n_generate": 1000, "l2": 10.0, "fp_bits": 1024}

_ELEMENTS = ("C", "N", "O", "F")


def property_features(smiles: Sequence[str], *, fp_bits: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``(X, ok)``: per SMILES a Morgan count fingerprint (radius 2, ``fp_bits`` bits) followed by the counts of
    C, N, O, F, other heavy atoms and hydrogens, rings, aromatic atoms, rotatable bonds and the heavy-atom count;
    rows of SMILES RDKit cannot parse are zero with ``ok`` False."""
    from rdkit import Chem, RDLogger  # noqa: PLC0415
    from rdkit.Chem import rdFingerprintGenerator, rdMolDescriptors  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    if isinstance(fp_bits, bool) or not isinstance(fp_bits, int) or fp_bits < 8:
        raise ValueError(f"fp_bits must be an integer >= 8, got {fp_bits!r}")
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=fp_bits)
    X = np.zeros((len(smiles), fp_bits + 10), dtype=np.float64)
    ok = np.zeros(len(smiles), dtype=bool)
    for i, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s) if isinstance(s, str) and s else None
        if mol is None or mol.GetNumAtoms() == 0:
            continue
        X[i, :fp_bits] = gen.GetCountFingerprintAsNumPy(mol)
        syms = [a.GetSymbol() for a in mol.GetAtoms()]
        counts = [syms.count(e) for e in _ELEMENTS]
        X[i, fp_bits:fp_bits + 10] = counts + [
            len(syms) - sum(counts), sum(a.GetTotalNumHs() for a in mol.GetAtoms()),
            rdMolDescriptors.CalcNumRings(mol), sum(a.GetIsAromatic() for a in mol.GetAtoms()),
            rdMolDescriptors.CalcNumRotatableBonds(mol), len(syms)]
        ok[i] = True
    return X, ok


@dataclasses.dataclass(frozen=True)
class PropertyPredictor:
    """Ridge regression on :func:`property_features` (standardised): ``y = (x - mu) / sd @ w + b``."""

    mu: np.ndarray
    sd: np.ndarray
    w: np.ndarray
    b: float
    fp_bits: int

    def predict(self, smiles: Sequence[str]) -> np.ndarray:
        """The predicted property of each SMILES (NaN where RDKit cannot parse it)."""
        X, ok = property_features(smiles, fp_bits=self.fp_bits)
        y = ((X - self.mu) / self.sd) @ self.w + self.b
        return np.where(ok, y, np.nan)


def fit_property_predictor(smiles: Sequence[str], y: Sequence[float], *, l2: float = 10.0,
                           fp_bits: int = 1024) -> PropertyPredictor:
    """Ridge regression (closed form, penalty ``l2`` on standardised features) of ``y`` on the molecules'
    :func:`property_features`; molecules RDKit cannot parse are left out."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or len(y) != len(smiles) or len(y) < 2:
        raise ValueError(f"y must be a 1-D array of one value per SMILES (>= 2), got shape {y.shape} for "
                         f"{len(smiles)} SMILES")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    if not (isinstance(l2, (int, float)) and l2 > 0):
        raise ValueError(f"l2 must be a positive number, got {l2!r}")
    X, ok = property_features(smiles, fp_bits=fp_bits)
    X, y = X[ok], y[ok]
    if len(y) < 2:
        raise ValueError("smiles holds fewer than 2 molecules RDKit can parse")
    mu, sd = X.mean(0), X.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    Z = (X - mu) / sd
    b = float(y.mean())
    w = np.linalg.solve(Z.T @ Z + l2 * np.eye(Z.shape[1]), Z.T @ (y - b))
    return PropertyPredictor(mu, sd, w, b, fp_bits)


def _selfies_or_none(smiles: Sequence[str]) -> list[str | None]:
    from .lm import to_selfies_corpus  # noqa: PLC0415

    out: list[str | None] = []
    for s in smiles:
        try:
            out.append(to_selfies_corpus([s])[0])
        except ValueError:
            out.append(None)
    return out


def _mae(pred: np.ndarray, target: np.ndarray) -> float:
    keep = np.isfinite(pred)
    return float(np.mean(np.abs(pred[keep] - target[keep]))) if keep.any() else float("nan")


def conditional_experiment(records: Sequence, *, seed: int = 0, recipe: dict | None = None,
                           ladder: Sequence[int] = (), device=None) -> dict:
    """One seed of the reduced QM9 conditional-generation experiment (see the module's docstring): the property
    MAE (in the paper's unit) of ``n_generate`` molecules generated for targets drawn from the generator half,
    for the conditional LM, the same LM with the null condition (unconditional), the nearest-training-molecule
    shortcut, and the protocol's L-bound, U-bound and #Atoms references; plus the predictor's own test error,
    validity, uniqueness and novelty of the conditional molecules and the quantisation error of the bins.
    ``ladder``: LM training steps at which the conditional and unconditional MAE are also measured (same run)."""
    import torch  # noqa: PLC0415

    from .lm import CausalLM, LMConfig, decode_to_smiles, sample_lm, train_lm  # noqa: PLC0415
    from .tokenizer import SelfiesTokenizer  # noqa: PLC0415

    r = {**COND_RECIPE, **(recipe or {})}
    if r["property"] not in PROPERTIES:
        raise ValueError(f"property must be one of {sorted(PROPERTIES)}, got {r['property']!r}")
    column, factor, unit = PROPERTIES[r["property"]]
    t0 = time.perf_counter()
    pool = [x for x in records if column in x.properties and np.isfinite(x.properties[column])]
    n_a, n_b = r["n_predictor"], r["n_generator"]
    if n_a + n_b > len(pool):
        raise ValueError(f"n_predictor + n_generator = {n_a + n_b} is more than the {len(pool)} QM9 molecules "
                         f"with {column}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pool))
    half_a = [pool[i] for i in order[:n_a]]
    half_b = [pool[i] for i in order[n_a:n_a + n_b]]
    y_a = np.array([x.properties[column] for x in half_a]) * factor
    predictor = fit_property_predictor([x.smiles for x in half_a], y_a, l2=r["l2"], fp_bits=r["fp_bits"])
    # the generator half: molecules that survive the SELFIES round trip (charged zwitterions may not)
    enc = _selfies_or_none([x.smiles for x in half_b])
    keep = [i for i, e in enumerate(enc) if e is not None]
    sf_b = [enc[i] for i in keep]
    smi_b = [half_b[i].smiles for i in keep]
    y_b = np.array([half_b[i].properties[column] for i in keep]) * factor
    edges = np.quantile(y_b, np.linspace(0, 1, r["n_bins"] + 1))
    centres = np.array([np.median(y_b[(y_b >= lo) & (y_b <= hi)]) for lo, hi in zip(edges[:-1], edges[1:],
                                                                                        strict=True)])

    def bin_of(v: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(edges, v, side="right") - 1, 0, r["n_bins"] - 1)

    cond_tokens = [f"[Cond{k:02d}]" for k in range(r["n_bins"])] + ["[CondNone]"]
    bins_b = bin_of(y_b)
    null = rng.random(len(sf_b)) < r["cond_dropout"]
    corpus = [cond_tokens[-1 if null[i] else bins_b[i]] + s for i, s in enumerate(sf_b)]
    tok = SelfiesTokenizer().fit(corpus + cond_tokens)
    cond_ids = [tok.vocab.index(t) for t in cond_tokens]
    max_len = int(tok.batch(corpus).shape[1]) + 2
    torch.manual_seed(seed)
    model = CausalLM(LMConfig(tok.size, d_model=r["d_model"], n_layers=r["n_layers"], n_heads=r["n_heads"],
                              max_len=max_len))
    n = r["n_generate"]
    targets = rng.choice(y_b, size=n, replace=True)
    t_bins = bin_of(targets)

    def generate(prefix_ids: np.ndarray, s: int) -> list[str | None]:
        strings = sample_lm(model, tok, n, seed=s, device=device, prefix=prefix_ids[:, None], banned=cond_ids)
        return decode_to_smiles(strings, "selfies")

    def predicted(smiles: list[str | None]) -> np.ndarray:
        ok = [s for s in smiles if s]
        p = np.full(len(smiles), np.nan)
        p[[i for i, s in enumerate(smiles) if s]] = predictor.predict(ok)
        return p

    def both() -> tuple[list, list]:
        return generate(np.array([cond_ids[b] for b in t_bins]), seed), generate(np.full(n, cond_ids[-1]), seed + 1)

    rungs: dict[str, dict[str, float]] = {}

    def at(step: int) -> None:
        c, u = both()
        rungs[str(step)] = {"conditional": _mae(predicted(c), targets), "unconditional": _mae(predicted(u), targets)}

    fit = train_lm(model, tok, corpus, steps=r["steps"], batch_size=r["batch_size"], lr=r["lr"], seed=seed,
                   desc="conditional LM", device=device, callback=at,
                   callback_steps=[k for k in ladder if k < r["steps"]])
    gen_cond, gen_null = both()
    p_cond, p_null = predicted(gen_cond), predicted(gen_null)
    # references of the EDM protocol, on the generator half's own molecules
    p_b = predictor.predict(smi_b)
    nearest = np.abs(y_b[None, :] - targets[:, None]).argmin(1)
    heavy_a = np.array([x.n_heavy for x in half_a])
    heavy_b = np.array([half_b[i].n_heavy for i in keep])
    by_atoms = {h: float(y_a[heavy_a == h].mean()) for h in np.unique(heavy_a)}
    p_atoms = np.array([by_atoms.get(h, float(y_a.mean())) for h in heavy_b])
    shuffled = rng.permutation(y_b)
    # the predictor's own error on held-out real molecules (the rest of the pool)
    rest = [pool[i] for i in order[n_a + n_b:n_a + n_b + 2000]]
    p_rest = predictor.predict([x.smiles for x in rest]) if rest else np.array([])
    y_rest = np.array([x.properties[column] for x in rest]) * factor
    canon_b = set(decode_to_smiles(sf_b, "selfies"))
    valid = [s for s in gen_cond if s]
    return {
        "seed": seed, "property": r["property"], "unit": unit, "recipe": r,
        "n_predictor": len(half_a), "n_generator": len(sf_b), "n_generator_dropped_selfies": len(half_b) - len(sf_b),
        "mae_conditional": _mae(p_cond, targets), "mae_unconditional": _mae(p_null, targets),
        "mae_nearest_training_molecule": _mae(p_b[nearest], targets),
        "mae_l_bound": _mae(p_b, y_b), "mae_u_bound": _mae(p_b, shuffled), "mae_n_atoms": _mae(p_atoms, y_b),
        "predictor_test_mae": _mae(p_rest, y_rest) if len(rest) else None,
        "quantisation_mae": float(np.mean(np.abs(centres[t_bins] - targets))),
        "corr_conditional": float(np.corrcoef(p_cond[np.isfinite(p_cond)], targets[np.isfinite(p_cond)])[0, 1]),
        "validity": len(valid) / n, "uniqueness": len(set(valid)) / max(1, len(valid)),
        "novelty": float(np.mean([s not in canon_b for s in set(valid)])) if valid else 0.0,
        "validity_unconditional": sum(1 for s in gen_null if s) / n,
        "ladder": {**rungs, str(r["steps"]): {"conditional": _mae(p_cond, targets),
                                                "unconditional": _mae(p_null, targets)}},
        "lm_final_loss": fit.final_loss, "lm_parameters": model.n_parameters(), "seconds": time.perf_counter() - t0,
    }
