"""The same tasks on any local Hugging Face causal LM (a folder with ``config.json``, weights and a tokenizer),
greedy decoding, exact match: so a user can test their own model.

A prompt is ``shots`` solved examples of the task (train people) and then the question, each as
``Q: <question>\\nA: <answer>``; the first line of the greedy continuation is the answer. With
``context=True`` the person's biography (and the other person's, for comparison) precedes the question: the
open-book control that separates *manipulating* knowledge from *recalling* it.

Needs the ``hf`` extra (``transformers``); loads with ``local_files_only=True`` and never downloads.

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

__all__ = ["HFCausalLM", "evaluate_hf", "build_prompt"]


@dataclasses.dataclass
class HFCausalLM:
    """A local Hugging Face causal LM folder, greedy decoding on the CPU."""

    path: str | os.PathLike[str]
    max_new_tokens: int = 24

    def __post_init__(self) -> None:
        from iclr25.utils.hf import load_local_model

        self.tokenizer, self.model = load_local_model(self.path, "AutoModelForCausalLM", flag="--hf-path",
                                                      extra="iclr25-knowledge-manipulation[hf]")

    def complete(self, prompt: str) -> str:
        import torch

        enc = self.tokenizer(prompt, return_tensors="pt")
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)


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


def evaluate_hf(model: HFCausalLM | str | os.PathLike[str], population: Population, tasks: Sequence[str], *,
                people: str = "test", shots: int = 3, limit: int | None = None, context: bool = False,
                seed: int = 0) -> list[EvalResult]:
    """Few-shot greedy exact-match accuracy of a local HF model on each task (``limit`` questions at most)."""
    if isinstance(shots, bool) or not isinstance(shots, int) or shots < 0:
        raise ValueError(f"shots must be an integer >= 0, got {shots!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")
    specs = [parse_task(t) for t in tasks]
    lm = model if isinstance(model, HFCausalLM) else HFCausalLM(model)
    out = []
    for spec in specs:
        qas = build_task(population, spec, people=people, seed=seed + 1)[:limit]
        pool = build_task(population, spec, people="train", seed=seed)
        shot_qas = pool[:shots]
        hits, ex = [], []
        for q in qas:
            text = lm.complete(build_prompt(q, shot_qas, population=population, context=context, seed=seed))
            first = text.strip().split("\n")[0]
            want = q.label.lower() if spec.kind in ("classification", "comparison") else q.label
            hits.append(answer_label(spec, first) == want)
            if len(ex) < 3:
                ex.append((q.prompt, q.answer, first))
        out.append(EvalResult(str(spec), people, float(np.mean(hits)) if hits else float("nan"), len(qas),
                              chance_level(qas), tuple(ex)))
    return out
