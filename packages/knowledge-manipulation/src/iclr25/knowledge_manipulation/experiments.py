"""The paper's protocol end to end: pretrain on biographies (Stage A), then one fine-tune per manipulation
task from that checkpoint (Stage B), evaluated on train and test people, with retrieval re-measured after
every fine-tune so that a failure cannot be blamed on forgetting.

Modes (Stage A data):

- ``extractable``: biographies of everyone + retrieval QAs of **everyone**: test people's knowledge is
  extractable by construction (the stricter test of "even when knowledge is perfectly extractable").
- ``paper``: biographies of everyone + retrieval QAs of the **train** half only (the paper's mixed training);
  test-people retrieval then measures extraction generalisation.

Stage B mixes the task's train-people QAs with a ``replay`` fraction of Stage A documents.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §2 (protocol, p_train /
p_test), §3-§5 (tasks), Fig. 1-5.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from iclr25.utils.device import torch_device
from iclr25.utils.seeding import check_seed

from .biography import ATTRIBUTES, Population, make_population, render_bio
from .capacity import CapacityReport, capacity_report
from .model import GPTConfig, RotaryGPT
from .tasks import QA, TaskSpec, build_task, parse_task, retrieval_qas
from .training import (
    Docs,
    EvalResult,
    TrainConfig,
    TrainStats,
    encode_docs,
    evaluate,
    evaluate_cot_prompt,
    pack,
    train_steps,
)
from .vocabulary import WordTokenizer

__all__ = ["ExperimentConfig", "PretrainedModel", "FinetuneResult", "ExperimentResult", "pretrain", "finetune",
           "run_experiment", "build_tokenizer", "DEFAULT_TASKS", "save_pretrained", "load_pretrained",
           "claim_config", "test_config"]

DEFAULT_TASKS = ("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
                 "comparison:birth_month", "comparison:birth_month:cot", "inverse:birth_date+birth_city")
#: the parts of a model folder (``train --out DIR``), listed with their hashes in its ``manifest.json``
MODEL_PARTS = ("model.pt", "tokenizer.json", "people.jsonl")


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines one run (population, data mode, model shape, both training stages)."""

    n_people: int = 1000
    mode: str = "extractable"
    order: str = "name_first"
    fullname: bool = False
    permute: bool = True
    bio_attributes: tuple[str, ...] = ATTRIBUTES
    qa_attributes: tuple[str, ...] = ATTRIBUTES
    n_layers: int = 2
    d_model: int = 64
    n_heads: int = 4
    pretrain: TrainConfig = TrainConfig(epochs=40, lr=3e-3, batch_size=4, seq_len=128)
    finetune: TrainConfig = TrainConfig(epochs=30, lr=1e-3, batch_size=4, seq_len=128)
    replay: float = 0.3
    tasks: tuple[str, ...] = DEFAULT_TASKS

    def __post_init__(self) -> None:
        if isinstance(self.n_people, bool) or not isinstance(self.n_people, int) or self.n_people < 2:
            raise ValueError(f"n_people must be an integer >= 2, got {self.n_people!r}")
        if self.mode not in ("extractable", "paper"):
            raise ValueError(f"mode must be 'extractable' or 'paper', got {self.mode!r}")
        if self.order not in ("name_first", "attributes_first"):
            raise ValueError(f"order must be 'name_first' or 'attributes_first', got {self.order!r}")
        for field, vals in (("bio_attributes", self.bio_attributes), ("qa_attributes", self.qa_attributes)):
            bad = [a for a in vals if a not in ATTRIBUTES]
            if bad or (field == "bio_attributes" and not vals):
                raise ValueError(f"{field} must be a non-empty subset of {ATTRIBUTES}, got {vals!r}")
        if not 0.0 <= self.replay < 1.0:
            raise ValueError(f"replay must be in [0, 1), got {self.replay!r}")
        for t in self.tasks:
            parse_task(t)
        GPTConfig(vocab_size=8, n_layers=self.n_layers, d_model=self.d_model, n_heads=self.n_heads)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return d


@dataclasses.dataclass
class PretrainedModel:
    """A Stage A model with its tokenizer, population and the settings that made it."""

    model: RotaryGPT
    tokenizer: WordTokenizer
    population: Population
    config: ExperimentConfig
    stats: TrainStats | None = None
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class FinetuneResult:
    """One Stage B fine-tune: the task's accuracy on train and test people and retrieval after it. For a
    classification or comparison task fine-tuned without CoT, ``cot_prompt`` holds the same model evaluated
    with a CoT prompt (train, test people): the paper's "CoT at inference only" condition
    (:func:`.training.evaluate_cot_prompt`)."""

    task: str
    train: EvalResult
    test: EvalResult
    retrieval_test_after: float
    stats: TrainStats
    cot_prompt: tuple[EvalResult, EvalResult] | None = None


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """Stage A retrieval (per attribute, train and test people), the Stage B fine-tunes, capacity."""

    config: ExperimentConfig
    retrieval: dict[str, tuple[float, float]]
    finetunes: tuple[FinetuneResult, ...]
    pretrain_stats: TrainStats | None
    capacity: CapacityReport
    seed: int = 0

    def finetune_of(self, task: str) -> FinetuneResult:
        for f in self.finetunes:
            if f.task == str(parse_task(task)):
                return f
        raise KeyError(f"no fine-tune of {task!r}; have {[f.task for f in self.finetunes]}")

    def table(self) -> list[dict]:
        """One row per fine-tune (task, train/test accuracy, chance, retrieval after), and one more for a no-CoT
        fine-tune evaluated with a CoT prompt (task ``"<spec> + CoT prompt"``)."""
        rows = []
        for f in self.finetunes:
            rows.append({"task": f.task, "train": f.train.accuracy, "test": f.test.accuracy, "chance": f.test.chance,
                         "retrieval_test_after": f.retrieval_test_after})
            if f.cot_prompt is not None:
                rows.append({"task": f"{f.task} + CoT prompt", "train": f.cot_prompt[0].accuracy,
                             "test": f.cot_prompt[1].accuracy, "chance": f.cot_prompt[1].chance,
                             "retrieval_test_after": f.retrieval_test_after})
        return rows

    def add_to(self, run, prefix: str = "") -> None:
        """Add every number of this experiment to an :class:`iclr25.utils.results.RunResult`: Stage A retrieval,
        each fine-tune's train / test accuracy (test beside its majority label), retrieval after it, the CoT-prompt
        scores of a no-CoT fine-tune, and the pretraining throughput."""
        for a, (tr, te) in self.retrieval.items():
            run.add(f"{prefix}retrieval {a} train (after Stage A)", tr, higher_is_better=True)
            run.add(f"{prefix}retrieval {a} test (after Stage A)", te, higher_is_better=True)
        for f in self.finetunes:
            run.add(f"{prefix}{f.task} train", f.train.accuracy, higher_is_better=True)
            run.add(f"{prefix}{f.task} test", f.test.accuracy, peer=f.test.chance, peer_name="chance")
            run.add(f"{prefix}{f.task}: birth_date retrieval test after", f.retrieval_test_after,
                    higher_is_better=True)
            if f.cot_prompt is not None:
                run.add(f"{prefix}{f.task} train, CoT prompt (CoT at inference only)", f.cot_prompt[0].accuracy)
                run.add(f"{prefix}{f.task} test, CoT prompt (CoT at inference only)", f.cot_prompt[1].accuracy,
                        peer=f.cot_prompt[1].chance, peer_name="chance")
        if self.pretrain_stats is not None:  # None for a model loaded from a folder
            run.add(f"{prefix}pretrain throughput", self.pretrain_stats.tokens_per_s, unit="tok/s", timing=True)


def build_tokenizer(population: Population, *, seed: int = 0) -> WordTokenizer:
    """Train the word-level vocabulary on a corpus that uses every template and task once per person."""
    from .biography import REVERSED_TEMPLATES, TEMPLATES, render_sentence

    texts: list[str] = []
    for i, p in enumerate(population.people):
        for a in ATTRIBUTES:
            k = i % len(TEMPLATES[a])
            texts.append(render_sentence(p, a, k, subject=p.pronoun))
            texts.append(render_sentence(p, a, i % len(REVERSED_TEMPLATES[a]), reverse=True))
    for t in TEMPLATES.values():
        texts.extend(x.format(s="He She", v="") for x in t)
    for t in REVERSED_TEMPLATES.values():
        texts.extend(x.format(s="", v="") for x in t)
    specs = [f"retrieval:{a}" for a in ATTRIBUTES] + ["partial:birth_year:cot", "partial:birth_day",
                                                      "partial:birth_month", "classification:birth_month:mod2:cot",
                                                      "classification:birth_year:mod3:cot",
                                                      "comparison:birth_month:cot", "comparison:birth_year:cot",
                                                      "inverse:birth_date+birth_city", "inverse:university+major"]
    for s in specs:
        qas = build_task(population, s, people="all", n_pairs=min(50, len(population))
                         if s.startswith("comparison") else None, seed=seed)
        texts.extend(q.prompt + " " + q.answer for q in qas)
    texts.extend(str(r) for r in range(12))
    return WordTokenizer.train(texts)


def _stage_a_docs(pop: Population, tok: WordTokenizer, cfg: ExperimentConfig, rng: np.random.Generator,
                  epochs: int, people_bios: Sequence[int] | None = None) -> Docs:
    qa_people = "all" if cfg.mode == "extractable" else "train"
    qas = retrieval_qas(pop, qa_people, cfg.qa_attributes) if cfg.qa_attributes else []
    everyone = range(len(pop)) if people_bios is None else people_bios
    bios = [render_bio(pop.people[i], rng, permute=cfg.permute, fullname=cfg.fullname, order=cfg.order,
                       attributes=cfg.bio_attributes) for _ in range(epochs) for i in everyone]
    return encode_docs(tok, bios, qas * epochs)


def pretrain(config: ExperimentConfig = ExperimentConfig(), *, population: Population | None = None,
             seed: int = 0, device=None) -> PretrainedModel:
    """Stage A: a fresh biography of every person each epoch ("multi-∞" + permute) plus the mode's retrieval
    QAs, ``config.pretrain.epochs`` times, packed and shuffled. Trained on ``device`` (``None``: ``$ICLR25_DEVICE``,
    else ``auto``: the GPU when torch sees one), in float32; the model stays there (:func:`save_pretrained` writes
    CPU weights). Documents and batches are drawn on the CPU (numpy), so every device trains on the same rows."""
    seed = check_seed(seed)
    pop = population if population is not None else make_population(config.n_people, seed=seed)
    tok = build_tokenizer(pop, seed=seed)
    rng = np.random.default_rng(seed + 1)
    docs = _stage_a_docs(pop, tok, config, rng, config.pretrain.epochs)
    cfg = GPTConfig(vocab_size=tok.vocab_size, n_layers=config.n_layers, d_model=config.d_model,
                    n_heads=config.n_heads, max_len=max(config.pretrain.seq_len, config.finetune.seq_len))
    dev = torch_device(device)
    torch.manual_seed(seed)
    model = RotaryGPT(cfg, seed=seed, device=dev)
    stats = train_steps(model, pack(docs, config.pretrain.seq_len, rng=rng, device=dev), config.pretrain,
                        desc="pretrain", device=dev)
    return PretrainedModel(model, tok, pop, config, stats, seed)


def finetune(pre: PretrainedModel, task: str | TaskSpec, *, config: TrainConfig | None = None,
             replay: float | None = None, n_train: int | None = None, n_pairs: int | None = None,
             seed: int = 0, device=None) -> tuple[RotaryGPT, TrainStats]:
    """Stage B: a copy of the Stage A model fine-tuned on the task's train-people QAs (the first ``n_train``
    train people when given; ``n_pairs`` pairs of them for a comparison task, default one per person), mixed
    with ``replay`` (fraction of documents) of fresh Stage A documents. The copy trains on ``device`` (``None``:
    ``$ICLR25_DEVICE``, else ``auto``) and is returned there."""
    cfg = config or pre.config.finetune
    replay = pre.config.replay if replay is None else replay
    spec = parse_task(task)
    rng = np.random.default_rng(check_seed(seed) + 7)
    dev = torch_device(device)
    model = copy.deepcopy(pre.model).to(dev)
    people = pre.population.train
    if n_train is not None:
        if isinstance(n_train, bool) or not isinstance(n_train, int) or not 2 <= n_train <= len(people):
            raise ValueError(f"n_train must be an integer in 2..{len(people)}, got {n_train!r}")
        people = people[:n_train]
    qas = build_task(pre.population, spec, people=people, seed=seed,
                     **({"n_pairs": n_pairs} if n_pairs is not None else {}))
    docs = encode_docs(pre.tokenizer, qas=qas * cfg.epochs)
    if replay > 0:
        stage_a = _stage_a_docs(pre.population, pre.tokenizer, pre.config, rng, max(1, cfg.epochs // 4 + 1))
        n_rep = min(len(stage_a), int(round(replay / (1 - replay) * len(docs))))
        pick = rng.choice(len(stage_a), size=n_rep, replace=False)
        docs = docs + Docs([stage_a.ids[k] for k in pick], [stage_a.mask[k] for k in pick])
    stats = train_steps(model, pack(docs, cfg.seq_len, rng=rng, device=dev), cfg, desc=f"finetune {spec}",
                        device=dev)
    return model, stats


def retrieval_accuracy(model: RotaryGPT, pre: PretrainedModel, attribute: str, people: str) -> EvalResult:
    qas = build_task(pre.population, f"retrieval:{attribute}", people=people)
    return evaluate(model, pre.tokenizer, qas, people=people)


def eval_task(model: RotaryGPT, pre: PretrainedModel, task: str, people: str, *, seed: int = 0) -> EvalResult:
    qas: list[QA] = build_task(pre.population, task, people=people, seed=seed + (0 if people == "train" else 1))
    return evaluate(model, pre.tokenizer, qas, people=people)


def eval_cot_prompt(model: RotaryGPT, pre: PretrainedModel, task: str, people: str, *, seed: int = 0) -> EvalResult:
    """A no-CoT classification/comparison model scored with the CoT prompt of the same questions (the same people
    and pairs as :func:`eval_task`): CoT at inference only."""
    spec = dataclasses.replace(parse_task(task), cot=True)
    qas: list[QA] = build_task(pre.population, spec, people=people, seed=seed + (0 if people == "train" else 1))
    return evaluate_cot_prompt(model, pre.tokenizer, qas, people=people)


def run_experiment(config: ExperimentConfig = ExperimentConfig(), *, seed: int = 0,
                   pre: PretrainedModel | None = None, task_epochs: dict[str, int] | None = None,
                   retrieval_after: bool = True, device=None) -> ExperimentResult:
    """Stage A (unless ``pre`` is given), then every task of ``config.tasks`` as its own Stage B fine-tune
    (``config.finetune``; ``task_epochs`` overrides the epochs of the tasks it names); a classification or
    comparison fine-tune without CoT is also scored with a CoT prompt (``FinetuneResult.cot_prompt``). ``retrieval_after=False``
    skips re-measuring birth-date retrieval after each fine-tune (``retrieval_test_after`` is then nan).

    Everything trains and is evaluated on ``device`` (``None``: ``$ICLR25_DEVICE``, else ``auto``); a given ``pre``
    is moved there. The result holds Python numbers only."""
    task_epochs = {str(parse_task(t)): e for t, e in (task_epochs or {}).items()}
    dev = torch_device(device)
    pre = pre or pretrain(config, seed=seed, device=dev)
    pre.model.to(dev)
    retr = {a: (retrieval_accuracy(pre.model, pre, a, "train").accuracy,
                retrieval_accuracy(pre.model, pre, a, "test").accuracy) for a in config.qa_attributes or ("birth_date",)}
    fts = []
    for task in config.tasks:
        ft = config.finetune
        if str(parse_task(task)) in task_epochs:
            ft = dataclasses.replace(ft, epochs=task_epochs[str(parse_task(task))])
        model, stats = finetune(pre, task, config=ft, seed=seed, device=dev)
        tr = eval_task(model, pre, task, "train", seed=seed)
        te = eval_task(model, pre, task, "test", seed=seed)
        after = retrieval_accuracy(model, pre, "birth_date", "test").accuracy if retrieval_after else float("nan")
        spec = parse_task(task)
        cot_prompt = None
        if spec.kind in ("classification", "comparison") and not spec.cot:
            cot_prompt = (eval_cot_prompt(model, pre, task, "train", seed=seed),
                          eval_cot_prompt(model, pre, task, "test", seed=seed))
        fts.append(FinetuneResult(str(spec), tr, te, after, stats, cot_prompt))
    cap = capacity_report(pre.population, GPTConfig(vocab_size=pre.tokenizer.vocab_size, n_layers=config.n_layers,
                                                    d_model=config.d_model, n_heads=config.n_heads),
                          exposures=config.pretrain.epochs)
    return ExperimentResult(config, retr, tuple(fts), pre.stats, cap, seed)


# --------------------------------------------------------------------------------------- named configs
def claim_config() -> ExperimentConfig:
    """The small run of the claim tests (N = 200, a 2-layer d = 64 GPT, biographies of birth date and city)."""
    return ExperimentConfig(
        n_people=200, n_layers=2, d_model=64, n_heads=4,
        bio_attributes=("birth_date", "birth_city"), qa_attributes=("birth_date",),
        pretrain=TrainConfig(epochs=40, lr=3e-3, batch_size=8, seq_len=64),
        finetune=TrainConfig(epochs=30, lr=1e-3, batch_size=4, seq_len=64), replay=0.3,
        tasks=("classification:birth_month:mod2", "classification:birth_month:mod2:cot",
               "inverse:birth_date+birth_city"))


#: the claims' test rung and the demo: N = 100 people, Stage A 50 epochs (shipped, see .checkpoints), fine-tunes
#: of 30 epochs at peak learning rate 2e-3 (at 1e-3 the CoT fine-tune under-fitted its 50 train people at one
#: seed in five: train 0.52, no gap; at 2e-3 every fine-tune reaches train 1.00 at seeds 0-4)
TEST_N, TEST_PRE_EPOCHS, TEST_FT_EPOCHS, TEST_FT_LR = 100, 50, 30, 2e-3


def test_config() -> ExperimentConfig:
    """The test rung of the claims and the demo's run: the claim run at N = 100 people and 50 Stage A epochs,
    whose Stage A models for seeds 0-4 ship with the package (:mod:`.checkpoints`), so that five seeds of
    Stage B fit the 90 s test budget."""
    cfg = claim_config()
    return dataclasses.replace(cfg, n_people=TEST_N, pretrain=dataclasses.replace(cfg.pretrain, epochs=TEST_PRE_EPOCHS),
                               finetune=dataclasses.replace(cfg.finetune, epochs=TEST_FT_EPOCHS, lr=TEST_FT_LR))


# ------------------------------------------------------------------------------------------ save / load
def save_pretrained(pre: PretrainedModel, folder: str | os.PathLike[str]) -> Path:
    """Write ``model.pt`` (weights + model config), ``tokenizer.json`` and ``people.jsonl`` into ``folder``, each
    atomically, then ``manifest.json`` (each part's SHA-256) last: a save cut short leaves no manifest, and
    :func:`load_pretrained` refuses it."""
    from iclr25.utils.checkpoints import start_save, write_manifest
    from iclr25.utils.io import atomic_path

    from .biography import write_people_jsonl

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    start_save(out)
    with atomic_path(out / "model.pt") as tmp:
        torch.save({"config": pre.model.cfg.to_dict(),
                    "state_dict": {k: v.cpu() for k, v in pre.model.state_dict().items()},  # CPU weights
                    "experiment": pre.config.to_dict(), "seed": pre.seed}, tmp)
    pre.tokenizer.save(out / "tokenizer.json")
    write_people_jsonl(out / "people.jsonl", pre.population, seed=pre.seed)
    write_manifest(out, MODEL_PARTS, meta={"format": "knowledge-manipulation model", "seed": int(pre.seed)})
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0][:120] if text else type(exc).__name__)


def load_pretrained(folder: str | os.PathLike[str], *, device=None) -> PretrainedModel:
    """Read a folder written by :func:`save_pretrained` (``train --out DIR``); errors name the folder. The model
    goes to ``device`` (``None``: it stays on the CPU, where the weights load)."""
    import pickle

    from iclr25.utils.checkpoints import CheckpointError, verify_manifest
    from iclr25.utils.io import DataFileError

    from .biography import read_people_jsonl

    p = Path(folder)
    if not p.is_dir():
        raise FileNotFoundError(f"--model {p}: no such model folder (expected the --out folder of `train`)")
    for name in MODEL_PARTS:
        if not (p / name).is_file():
            raise FileNotFoundError(f"--model {p}: no {name} (expected the --out folder of `train`)")
    try:
        verify_manifest(p, MODEL_PARTS, what="model folder")
    except CheckpointError as exc:
        raise CheckpointError(f"--model {exc}") from None
    try:
        blob = torch.load(p / "model.pt", map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, OSError, AttributeError) as exc:
        # a file holding a pickle payload is refused by torch's weights-only loader: one line naming the file
        raise DataFileError(p / "model.pt", "not a model written by `train`: torch's weights-only loader refused it "
                            f"({_first_line(exc)})") from None
    try:
        cfg = GPTConfig(**blob["config"])
        exp = dict(blob["experiment"])
        exp["pretrain"] = TrainConfig(**{**exp["pretrain"], "betas": tuple(exp["pretrain"]["betas"])})
        exp["finetune"] = TrainConfig(**{**exp["finetune"], "betas": tuple(exp["finetune"]["betas"])})
        for k in ("bio_attributes", "qa_attributes", "tasks"):
            exp[k] = tuple(exp[k])
        config = ExperimentConfig(**exp)
        model = RotaryGPT(cfg)
        model.load_state_dict(blob["state_dict"])
    except (KeyError, TypeError, RuntimeError, EOFError, ValueError, OSError) as exc:
        raise DataFileError(p / "model.pt", f"not a model written by `train` ({_first_line(exc)})") from None
    model.eval()
    if device is not None:
        model.to(torch_device(device))
    return PretrainedModel(model, WordTokenizer.load(p / "tokenizer.json"), read_people_jsonl(p / "people.jsonl"),
                           config, None, int(blob.get("seed", 0)))
