"""Issue 61's readable regime (rung ``readable`` of the claims registry): the ladder, the cause ablation and the
tables of ``docs/readable``.

    python benchmarks/readable.py --ladder 200,1500 --seed 0       # SFT-budget ladder + cause ablation
    python benchmarks/readable.py --run dpo300 --seed 0            # one whole pipeline with one knob changed
    python benchmarks/readable.py                                  # rebuild the tables only

The rung itself (seeds 0-2, every reference beside MMed-RAG, the two RAG claims) is decided by
``iclr25 claims mmed-rag --rung readable --out packages/mmed-rag/docs/readable`` (``docs/readable/claims.json``) and
calibrated at seeds 100-102 by ``--calibrate --rung readable --seeds 100-102``
(``claims-calibration-readable.json``). ``--run`` trains the whole pipeline of
:data:`iclr25.mmed_rag.claims.READABLE` with one knob changed and writes ``docs/readable/runs/<name>-seed<S>.json``:

- ``sft<N>``: N SFT steps (the rung trains 600): the ladder over the SFT budget on retrieved contexts;
- ``no-context``: SFT without any retrieved report (``sft_no_context=1``): can the VLM's own image tower read the
  findings when it has no report to copy (its ``image_reading_sft`` beside the image-only CNN's accuracy);
- ``dpo<N>``: N DPO steps (the rung trains 100): the budget of RAG-PT on the mined pairs.

``--ladder B1,B2,...`` trains the retrieval stage once and then, from the same starting weights, the SFT model at
each SFT budget and at the rung's budget without contexts (``no-context``), each followed by mining, DPO and the
evaluation of the rung (the rung's own budget reproduces its seed's numbers): ``docs/readable/runs/ladder-seed<S>.json``.

The tables (``references.md``: every reference vs MMed-RAG per seed; ``ladder.md``: ladder + ablation) are built
from those files only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
OUT = HERE / "docs" / "readable"
ROWS = ("acc_answer_prior", "acc_image_only", "acc_no_rag", "acc_pixel_nn", "acc_retrieval_vote_fixed_k",
        "acc_retrieval_vote_gap", "acc_sft_fixed_k", "acc_sft_gap", "acc_mmed_rag")
SHORT = {"acc_answer_prior": "answer prior", "acc_image_only": "image-only supervised CNN (no reports)",
         "acc_no_rag": "SFT, no retrieval", "acc_pixel_nn": "raw-pixel NN vote",
         "acc_retrieval_vote_fixed_k": "retrieval vote, fixed k (no VLM)",
         "acc_retrieval_vote_gap": "retrieval vote, gap rule (no VLM)", "acc_sft_fixed_k": "SFT + fixed k",
         "acc_sft_gap": "SFT + gap rule", "acc_mmed_rag": "**MMed-RAG** (router + gap rule + RAG-PT)",
         "image_reading_sft": "SFT model's own eyes (conflict images, no reports)",
         "image_reading_mmed_rag": "MMed-RAG's own eyes (conflict images, no reports)",
         "mean_colour_domain_accuracy": "mean-colour domain classifier (chance 0.333)",
         "router_accuracy": "router accuracy", "precision_fixed_k": "retrieved reports right on the asked finding",
         "copy_rate_mmed_rag": "copy rate, MMed-RAG (0.5: constant answer)"}
KNOBS = {"sft": "sft_steps", "dpo": "dpo_steps"}


def _knob(name: str) -> dict:
    if name == "no-context":
        return {"sft_no_context": 1.0}
    m = re.fullmatch(r"(sft|dpo)(\d+)", name)
    if not m:
        raise SystemExit(f"--run: unknown run {name!r}; expected sft<N>, dpo<N> or no-context")
    return {KNOBS[m[1]]: int(m[2])}


def run(name: str, seed: int) -> dict:
    from importlib.metadata import version

    from iclr25.mmed_rag.claims import READABLE
    from iclr25.mmed_rag.experiments import run_pipeline
    from iclr25.utils.io import atomic_write
    from iclr25.utils.seeding import seed_everything

    cfg = dataclasses.replace(READABLE, **_knob(name))
    seed_everything(seed)
    load = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    m = run_pipeline(cfg, seed=seed).metrics
    rec = {"name": name, "seed": seed, "change": _knob(name), "version": version("iclr25-mmed-rag"),
           "command": f"python benchmarks/readable.py --run {name} --seed {seed}", "load_at_start": list(load),
           "seconds": {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0},
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "metrics": {k: float(v) for k, v in m.items()}}
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    with atomic_write(OUT / "runs" / f"{name}-seed{seed}.json") as f:
        json.dump(rec, f, indent=1)
    return rec


def ladder(budgets: list[int], seed: int) -> dict:
    """The SFT-budget ladder and the no-context ablation at ``seed``, sharing one retrieval stage (module doc)."""
    from importlib.metadata import version

    import torch

    from iclr25.mmed_rag import experiments as E
    from iclr25.mmed_rag.claims import READABLE
    from iclr25.utils.io import atomic_write
    from iclr25.utils.seeding import seed_everything

    cfg = READABLE
    seed_everything(seed)
    load = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(seed)  # as run_pipeline: same data, retrieval and SFT starting weights
    sp = E._splits(cfg, seed)
    base: dict[str, float] = {}
    rs, ctx_fixed, ctx_gap = E._retrieval_step(cfg, sp, base, seed=seed, minilm_model=None)
    state = torch.get_rng_state()
    sft_set, mine_set = E._split_for_mining(cfg, sp.train)
    mc = rs.retrieve(mine_set.images, k_max=cfg.k, rule="gap", gamma=cfg.gamma)
    majority = E._majority_answer(sp.train)
    variants = [(f"sft{b}", dataclasses.replace(cfg, sft_steps=b)) for b in budgets]
    variants.append(("no-context", dataclasses.replace(cfg, sft_no_context=1.0)))
    img = E.image_references(cfg, sp, seed=seed)  # first (its own seeding; the SFT starting state is restored)
    rec = {"seed": seed, "budgets": budgets, "version": version("iclr25-mmed-rag"),
           "command": f"python benchmarks/readable.py --ladder {','.join(map(str, budgets))} --seed {seed}",
           "load_at_start": list(load), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": {}}
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    for name, c in variants:
        torch.set_rng_state(state)
        M = dict(base)
        sft = E._sft_step(c, sft_set, sp.db, rs, seed=seed)
        pairs, _, _ = E._mining_step(c, sft, mine_set, mc, M, seed=seed)
        rag_pt, _ = E._dpo_from(c, sft, pairs.only(c.dpo_kinds, c.dpo_tasks), seed=seed)
        E._vqa_step(sp.test, majority, sft, rag_pt, ctx_fixed, ctx_gap, M, seed=seed, db=sp.db)
        M.update(img)
        rec["runs"][name] = {"change": _knob(name), "metrics": {k: float(v) for k, v in M.items()}}
        rec["seconds"] = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}
        with atomic_write(OUT / "runs" / f"ladder-seed{seed}.json") as f:  # after every variant (a cut run keeps them)
            json.dump(rec, f, indent=1)
        print(f"{name}: " + ", ".join(f"{k} {M[k]:.3f}" for k in (*ROWS, "image_reading_sft") if k in M), flush=True)
    return rec


def _f(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def _side(path: Path | None = None) -> tuple[list[int], list[dict], dict]:
    rep = json.loads((path or OUT / "claims.json").read_text())
    c = {x["id"]: x for x in rep["claims"]}
    first = next(iter(c.values()))
    return first["seeds"], first["extra"], c


TABLE_ROWS = (*ROWS, "image_reading_sft", "image_reading_mmed_rag", "copy_rate_mmed_rag", "precision_fixed_k",
              "router_accuracy", "mean_colour_domain_accuracy")


def _table(seeds: list[int], extra: list[dict]) -> list[str]:
    lines = ["| method | " + " | ".join(f"seed {s}" for s in seeds) + " | mean |", "|---|" + "---|" * (len(seeds) + 1)]
    for k in TABLE_ROWS:
        vals = [e.get(k) for e in extra]
        ok = [v for v in vals if v is not None]
        lines.append(f"| {SHORT[k]} | " + " | ".join(_f(v) for v in vals) + f" | {_f(sum(ok) / len(ok)) if ok else '–'} |")
    return lines


def _verdicts(claims: dict, seeds: list[int]) -> list[str]:
    return [f"- `{cid}` ({c['statement']}): MMed-RAG {', '.join(_f(v) for v in c['values'])} vs the strongest such "
            f"reference {', '.join(_f(v) for v in c['references'])}; holds at {sum(c['holds_per_seed'])} of "
            f"{len(seeds)} seeds: **{c['verdict']}** (expected {c['expect']})." for cid, c in claims.items()]


def references_md() -> str:
    seeds, extra, claims = _side()
    lines = ["# MMed-RAG beside every reference in the readable regime (issue 61)", "",
             "Generated by `python benchmarks/readable.py` from `claims.json` here (written by `iclr25 claims "
             "mmed-rag --rung readable`; do not edit). Rung `readable` (`iclr25.mmed_rag.claims.READABLE`): grey, "
             "histogram-equalised images (every image the same grey-level histogram), findings of contrast 0.7-1, "
             "database reports wrong on 15 % of findings, balanced answers; 300 training, 150 database and 60 test "
             "images per domain (720 yes/no questions), 600 SFT and 100 DPO steps. VQA accuracy per seed:", "",
             *_table(seeds, extra), "", *_verdicts(claims, seeds)]
    cal = HERE / "claims-calibration-readable.json"
    if cal.is_file():
        cd = json.loads(cal.read_text())
        lines += ["", f"## Calibration seeds {', '.join(map(str, cd['seeds']))}", "",
                  f"From `claims-calibration-readable.json` (`{cd.get('command', '')}`), measured before the fresh "
                  "seeds below; the margins (0: any gain) and the rule (every seed) stay as declared. `max margin`: "
                  "the largest margin with which the claim would pass at 3 decision seeds with probability >= 95 % "
                  "(negative: it cannot pass at any margin >= 0).", "",
                  "| claim | MMed-RAG per seed | strongest reference per seed | mean gain | max margin |",
                  "|---|---|---|---|---|"]
        for c in cd["claims"]:
            lines.append(f"| `{c['id']}` | {', '.join(_f(v) for v in c['values'])} | "
                         f"{', '.join(_f(v) for v in c['references'])} | {_f(c.get('mean'))} | "
                         f"{_f(c.get('max_margin'))} |")
    fresh = OUT / "claims-fresh.json"
    if fresh.is_file():
        fseeds, fextra, fclaims = _side(fresh)
        cmd = json.loads(fresh.read_text()).get("command", "")
        lines += ["", f"## Fresh seeds {', '.join(map(str, fseeds))}", "",
                  f"Seeds the package never used before (decision 0-2, calibration above, demo test splits 1000+), "
                  f"decided after the calibration with the same rules: `claims-fresh.json` (`{cmd}`).", "",
                  *_table(fseeds, fextra), "", *_verdicts(fclaims, fseeds)]
    return "\n".join(lines) + "\n"


def ladder_md() -> str:
    seeds, extra, _ = _side()
    cols = []  # (label, metrics)
    files = sorted((OUT / "runs").glob("*.json")) if (OUT / "runs").is_dir() else []
    for p in files:
        rec = json.loads(p.read_text())
        if "runs" in rec:  # a ladder file
            for name, r in rec["runs"].items():
                cols.append((f"{name} (seed {rec['seed']})", r["metrics"]))
        else:
            cols.append((f"{rec['name']} (seed {rec['seed']})", rec["metrics"]))
    if 0 in seeds:  # the rung's own budget at seed 0 (a ladder run at that budget reproduces it)
        from iclr25.mmed_rag.claims import READABLE

        cols.append((f"sft{READABLE.sft_steps} (rung readable, seed 0)", extra[seeds.index(0)]))
    keys = (*ROWS, "image_reading_sft", "image_reading_mmed_rag", "copy_rate_mmed_rag")
    lines = ["# Rung readable: ladder and cause ablation (issue 61)", "",
             "Generated by `python benchmarks/readable.py` from `runs/*.json` and `claims.json` here (do not edit). "
             "Each column trains the pipeline of rung `readable` at seed 0 with one knob changed (the ladder shares "
             "one retrieval stage and the SFT starting weights): `sft<N>` N SFT steps on retrieved contexts (the "
             "rung: 600), `dpo<N>` N DPO steps (the rung: 100), `no-context` SFT at the rung's budget without any "
             "retrieved report (can the VLM's image tower read the findings when there is nothing to copy?). \"Own eyes\": the model's answers without reports on images that contradict the retrieved "
             "reports (1 = always reads the image right).", "",
             "| metric | " + " | ".join(c[0] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for k in keys:
        lines.append(f"| {SHORT[k]} | " + " | ".join(_f(c[1].get(k)) for c in cols) + " |")
    lines += ["", *_causes(cols)]
    return "\n".join(lines) + "\n"


def _causes(cols: list) -> list[str]:
    """The causes the ladder's numbers point at, in words computed from them."""
    by = {label.split(" ")[0]: m for label, m in cols}
    ladder = sorted(((int(k[3:]), m) for k, m in by.items() if re.fullmatch(r"sft\d+", k)), key=lambda t: t[0])
    out = []
    if "no-context" in by:
        m = by["no-context"]
        gap = m["acc_image_only"] - m["acc_no_rag"]
        out.append(f"- **The image tower** (no-context SFT, no report ever given): the VLM answers {_f(m['acc_no_rag'])} "
                   f"from the image alone vs {_f(m['acc_image_only'])} for the image-only CNN on the same images; "
                   + ("it does not learn to read the findings from next-token SFT at this budget, so the VLM's "
                      "weakness is not only copying the reports." if gap > 0.1 else
                      "it reads the findings about as well as the CNN."))
    if ladder:
        vote = ladder[0][1]["acc_retrieval_vote_gap"]
        seq = ", ".join(f"{b}: {_f(m['acc_sft_gap'])}" for b, m in ladder)
        below = all(m["acc_sft_gap"] < vote for _, m in ladder)
        out.append(f"- **Using the reports** (SFT + gap rule by SFT steps, {seq}) vs the majority of the same reports "
                   f"with no VLM, {_f(vote)}: " + ("below it at every budget" if below else "not below it at every budget")
                   + "; the gap by SFT steps: " + ", ".join(f"{b}: {_f(vote - m['acc_sft_gap'])}" for b, m in ladder)
                   + ".")
        pt = ", ".join(f"{b}: {m['acc_mmed_rag'] - m['acc_sft_gap']:+.3f}" for b, m in ladder)
        out.append(f"- **RAG-PT** (MMed-RAG minus SFT + gap rule, same contexts, by SFT steps): {pt}; the own-eyes rows "
                   "say whether DPO on the mined pairs moved the model towards the image.")
    return out


def main() -> None:
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="", help="comma-separated runs: sft<N>, dpo<N>, no-context (default: none)")
    ap.add_argument("--ladder", default="", help="comma-separated SFT budgets of the ladder (default: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT, help="folder of claims.json, runs/ and the tables "
                    "(default docs/readable)")
    args = ap.parse_args()
    from iclr25.utils.cli import set_torch_threads
    from iclr25.utils.io import atomic_write

    set_torch_threads(args.threads)
    OUT = args.out
    OUT.mkdir(parents=True, exist_ok=True)
    if args.ladder:
        ladder([int(b) for b in args.ladder.split(",")], args.seed)
    for name in filter(None, args.run.split(",")):
        rec = run(name, args.seed)
        m = rec["metrics"]
        print(f"{name}: " + ", ".join(f"{k} {m[k]:.3f}" for k in ROWS if k in m), flush=True)
    if (OUT / "claims.json").is_file():
        for fname, text in (("references.md", references_md()), ("ladder.md", ladder_md())):
            with atomic_write(OUT / fname) as f:
                f.write(text)
            print(text)


if __name__ == "__main__":
    main()
