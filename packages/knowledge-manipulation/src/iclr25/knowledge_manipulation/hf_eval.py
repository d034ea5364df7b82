"""The same tasks on any local Hugging Face causal LM (a folder with ``config.json``, weights and a tokenizer),
greedy decoding, exact match: so a user can test their own model.

A prompt is ``shots`` solved examples of the task (train people) and then the question, each as
``Q: <question>\\nA: <answer>``; the first line of the greedy continuation is the answer. With
``context=True`` the person's biography (and the other person's, for comparison) precedes the question: the
open-book control that separates *manipulating* knowledge from *recalling* it.

Needs the ``hf`` extra (``transformers``); loads with ``local_files_only=True`` and never downloads.

:func:`parity_check` is the paper's R5 test on a real model: the parity of an attribute the model has
*stored* (it retrieves the attribute itself), asked without and with CoT, scored on every person and on the
people whose attribute the model retrieves correctly.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §7 (the same tests on
GPT-4 and Llama: parity of a birth year without CoT, inverse search).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import numpy as np

from .biography import Population, render_bio
from .tasks import QA, answer_label, build_task, parse_task
from .training import EvalResult, chance_level

__all__ = ["HFCausalLM", "ParityCheck", "build_prompt", "check_causal_lm_folder", "evaluate_hf", "parity_check"]


@dataclasses.dataclass
class HFCausalLM:
    """A local Hugging Face causal LM folder, greedy decoding on ``device``.

    ``device``: ``auto`` (the GPU when torch sees one), ``cpu``, ``cuda``, ``cuda:N``, ``mps`` (``None``:
    ``$ICLR25_DEVICE``, else ``auto``); the prompt's tokens go where the model is and the answer is decoded on the
    CPU. ``dtype``: ``float32``, ``bfloat16`` or ``float16`` weights, given to ``from_pretrained`` (``None``: as the
    folder loads, float32 for most; half precision is refused on the CPU), so a 7B model loads in 14 GB.
    ``device_map="auto"``: ``from_pretrained`` places the layers over the visible GPUs (and the CPU) itself; it
    needs ``accelerate`` (``pip install accelerate``; a one-line ImportError without it) and overrides ``device``.
    """

    path: str | os.PathLike[str]
    max_new_tokens: int = 24
    device: str | None = None
    dtype: str | None = None
    device_map: str | None = None

    def __post_init__(self) -> None:
        from iclr25.utils.device import torch_device, torch_dtype
        from iclr25.utils.hf import load_local_model

        check_causal_lm_folder(self.path)
        dev = torch_device(self.device)
        dtype = None if self.dtype is None else torch_dtype(self.dtype, None if self.device_map else dev)
        self.tokenizer, self.model = load_local_model(self.path, "AutoModelForCausalLM", flag="--hf-path",
                                                      extra="iclr25-knowledge-manipulation[hf]", what="causal LM", dtype=dtype,
                                                      device_map=self.device_map, device=dev)

    @property
    def input_device(self):
        """Where the prompt's tokens go: the model's (first) device."""
        return getattr(self.model, "device", None) or next(self.model.parameters()).device

    def complete(self, prompt: str) -> str:
        import torch

        enc = self.tokenizer(prompt, return_tensors="pt")
        enc = {k: v.to(self.input_device) for k, v in enc.items()}
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:].cpu(), skip_special_tokens=True)


def check_causal_lm_folder(path: str | os.PathLike[str], flag: str = "--hf-path") -> None:
    """Refuse, in one line and before any weights load, a folder that is missing, has no ``config.json``, or
    holds a model that is not a causal (decoder) language model, e.g. an encoder-decoder T5 or a classifier."""
    from pathlib import Path

    from iclr25.utils.hf import read_model_config

    p = Path(path)
    cfg = read_model_config(p, flag=flag, what="causal LM")
    model_type = cfg.get("model_type")
    try:
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    except ImportError as exc:
        raise ImportError(f"{flag} needs transformers: pip install 'iclr25-knowledge-manipulation[hf]'") from exc
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ValueError(f"{flag} {p}: not a causal language model (config.json model_type {model_type!r} has no "
                         "AutoModelForCausalLM class; expected a decoder such as gpt2 or llama)")


def build_prompt(qa: QA, shots: Sequence[QA], *, population: Population | None = None,
                 context: bool = False, seed: int = 0) -> str:
    """``Q: ...\\nA: ...`` for each shot, then ``Q: <question>\\nA:``; with ``context`` each question is
    preceded by the biographies of the people it names."""
    rng = np.random.default_rng(seed)

    def block(q: QA) -> str:
        if not context:
            return ""
        if population is None:
            raise ValueError("context=True needs the population (the biographies)")
        people = [q.person] + ([q.other] if q.other is not None else [])
        return " ".join(render_bio(population.people[i], rng, permute=False) for i in people) + "\n"

    lines = [f"{block(s)}Q: {s.prompt}\nA: {s.answer}\n" for s in shots]
    lines.append(f"{block(qa)}Q: {qa.prompt}\nA:")
    return "".join(lines)


def _hits(lm: HFCausalLM, population: Population, spec, *, people: str, shots: int, limit: int | None,
          context: bool, seed: int) -> tuple[list[QA], list[bool], list[str]]:
    """Greedy answers of ``lm`` to the task's questions (``limit`` at most): the questions, hits and answers."""
    qas = build_task(population, spec, people=people, seed=seed + 1)[:limit]
    shot_qas = build_task(population, spec, people="train", seed=seed)[:shots]
    hits, answers = [], []
    for q in qas:
        text = lm.complete(build_prompt(q, shot_qas, population=population, context=context, seed=seed))
        first = text.strip().split("\n")[0]
        want = q.label.lower() if spec.kind in ("classification", "comparison") else q.label
        hits.append(answer_label(spec, first) == want)
        answers.append(first)
    return qas, hits, answers


def _check_counts(shots: int, limit: int | None) -> None:
    if isinstance(shots, bool) or not isinstance(shots, int) or shots < 0:
        raise ValueError(f"shots must be an integer >= 0, got {shots!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")


def evaluate_hf(model: HFCausalLM | str | os.PathLike[str], population: Population, tasks: Sequence[str], *,
                people: str = "test", shots: int = 3, limit: int | None = None, context: bool = False,
                seed: int = 0) -> list[EvalResult]:
    """Few-shot greedy exact-match accuracy of a local HF model on each task (``limit`` questions at most)."""
    _check_counts(shots, limit)
    specs = [parse_task(t) for t in tasks]
    lm = model if isinstance(model, HFCausalLM) else HFCausalLM(model)
    out = []
    for spec in specs:
        qas, hits, answers = _hits(lm, population, spec, people=people, shots=shots, limit=limit, context=context,
                                   seed=seed)
        ex = tuple((q.prompt, q.answer, a) for q, a in list(zip(qas, answers, strict=True))[:3])
        out.append(EvalResult(str(spec), people, float(np.mean(hits)) if hits else float("nan"), len(qas),
                              chance_level(qas), ex))
    return out


@dataclasses.dataclass(frozen=True)
class ParityCheck:
    """The paper's R5 on one model: retrieval of the attribute, and its parity (residue mod ``modulus``) without
    and with CoT, on all ``n`` people asked and on the ``n_stored`` whose attribute the model retrieves."""

    attribute: str
    modulus: int
    n: int
    retrieval: float
    no_cot: float
    cot: float
    n_stored: int
    no_cot_stored: float
    cot_stored: float
    chance: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parity_check(model: HFCausalLM | str | os.PathLike[str], population: Population, *,
                 attribute: str = "birth_month", modulus: int = 2, people: str = "test", shots: int = 3,
                 limit: int | None = None, context: bool = False, seed: int = 0) -> ParityCheck:
    """Parity of a stored attribute with and without CoT (the paper's R5, §7: a model that knows a person's
    birth year cannot tell its parity without writing the year down first).

    The same people are asked three questions, each few-shot (``shots`` solved examples of train people):
    the attribute itself (``partial:<attribute>``, e.g. the birth month), its residue mod ``modulus`` without
    CoT, and with CoT (the answer states the attribute, then the residue). The paper's comparison is on people
    whose attribute the model has stored, so both parity accuracies are also given on the people whose
    attribute it retrieved correctly (``nan`` when there are none). ``chance`` is the majority label's share.
    """
    _check_counts(shots, limit)
    base = parse_task(f"classification:{attribute}:mod{modulus}")
    if base.attribute not in ("birth_month", "birth_day", "birth_year"):
        raise ValueError(f"attribute must be birth_month, birth_day or birth_year, got {attribute!r}")
    lm = model if isinstance(model, HFCausalLM) else HFCausalLM(model)
    kw = {"people": people, "shots": shots, "limit": limit, "context": context, "seed": seed}
    qas, retr, _ = _hits(lm, population, parse_task(f"partial:{base.attribute}"), **kw)
    _, no_cot, _ = _hits(lm, population, base, **kw)
    _, cot, _ = _hits(lm, population, dataclasses.replace(base, cot=True), **kw)
    stored = [i for i, ok in enumerate(retr) if ok]

    def mean(xs: list[bool]) -> float:
        return float(np.mean(xs)) if xs else float("nan")

    return ParityCheck(base.attribute, modulus, len(qas), mean(retr), mean(no_cot), mean(cot), len(stored),
                       mean([no_cot[i] for i in stored]), mean([cot[i] for i in stored]),
                       chance_level(build_task(population, base, people=people, seed=seed + 1)[:limit]))
