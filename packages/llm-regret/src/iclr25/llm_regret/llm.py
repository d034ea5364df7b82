"""LLM agents: the paper's protocol (every past loss vector in the prompt, a probability vector asked back),
a robust answer parser with counted failures, JSONL transcripts that replay, and two real back ends — an
OpenAI-compatible chat endpoint (vLLM, llama.cpp, Ollama, ...) and a local Hugging Face causal LM folder.

Nothing here downloads anything: the endpoint is whatever URL the user gives, the HF model is loaded with
``local_files_only=True``.

References: Park et al., ICLR 2025, Sec. 3.1 and App. (prompts: the history of loss vectors, one per round,
no summary statistics; the model is never told to minimise regret). The prompt text below is ours.
"""

from __future__ import annotations

import dataclasses
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["build_prompt", "parse_policy", "ParsedPolicy", "LLMAgent", "OpenAIChat", "HFCausalLM",
           "replay_transcript", "read_transcript"]

SYSTEM = ("You are choosing among actions repeatedly. Each round every action gets a loss between 0 and 1; "
          "you pay the expected loss of the probability distribution you choose.")


def build_prompt(history: np.ndarray, n_actions: int, *, round_index: int | None = None) -> str:
    """The round's prompt: all past loss vectors, one line per round, and the request for a distribution."""
    t = len(history) + 1 if round_index is None else round_index
    lines = [SYSTEM, f"There are {n_actions} actions, numbered 1 to {n_actions}."]
    if len(history) == 0:
        lines.append("No round has been played yet.")
    else:
        lines.append("Losses of every action in the previous rounds:")
        for s, row in enumerate(history, 1):
            lines.append(f"Round {s}: " + ", ".join(f"action {a + 1} = {v:.3f}" for a, v in enumerate(row)))
    lines.append(f"This is round {t}. Reply with the probabilities of the {n_actions} actions as a JSON list of "
                 f"{n_actions} numbers that sum to 1, for example {json.dumps([round(1 / n_actions, 3)] * n_actions)}.")
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class ParsedPolicy:
    """The parsed distribution, whether parsing succeeded, and why not (the fallback is uniform)."""

    policy: np.ndarray
    ok: bool
    reason: str = ""


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?"


def _numbers(text: str) -> list[float]:
    return [float(x.rstrip("%")) / (100.0 if x.endswith("%") else 1.0) for x in re.findall(_NUM, text)]


def parse_policy(text: str, n_actions: int) -> ParsedPolicy:
    """Find a distribution over ``n_actions`` in a free-form answer.

    Tries, in order: the last bracketed list of exactly ``n_actions`` numbers; ``action i: p`` pairs; the last
    ``n_actions`` numbers of the answer. Percentages are read as fractions; a vector summing to within 5% of
    1 (or to 100) is renormalised; anything else falls back to the uniform policy with ``ok=False``.
    """
    uniform = np.full(n_actions, 1.0 / n_actions)
    if not isinstance(text, str) or not text.strip():
        return ParsedPolicy(uniform, False, "empty answer")
    brackets = [_numbers(m.group(1)) for m in re.finditer(r"\[([^\[\]]*)\]", text)]
    candidates = [b for b in reversed(brackets) if len(b) == n_actions]
    pairs = re.findall(r"action\s*(\d+)\s*[:=]\s*(" + _NUM + ")", text, flags=re.I)
    got = {int(a): float(p.rstrip("%")) / (100.0 if p.endswith("%") else 1.0) for a, p in pairs}
    if sorted(got) == list(range(1, n_actions + 1)):
        candidates.append([got[a] for a in range(1, n_actions + 1)])
    nums = _numbers(text)
    if len(nums) >= n_actions:
        candidates.append(nums[-n_actions:])
    for cand in candidates:
        p = np.array(cand, dtype=np.float64)
        if np.any(p < 0) or not np.all(np.isfinite(p)):
            continue
        total = p.sum()
        if abs(total - 100.0) < 5.0 and total > 1.5:
            p, total = p / 100.0, total / 100.0
        if abs(total - 1.0) <= 0.05 and total > 0:
            return ParsedPolicy(p / total, True)
    return ParsedPolicy(uniform, False, f"no distribution over {n_actions} actions in {text[:80]!r}")


@dataclasses.dataclass
class LLMAgent:
    """An LLM as an online agent. ``generate(prompt) -> answer``; every round's prompt, answer and parsed
    policy go to ``transcript`` (a JSONL file) when given; ``parse_failures`` counts unusable answers (played
    as uniform). One call per seed and round."""

    generate: Callable[[str], str]
    transcript: str | Path | None = None
    name: str = "llm"
    feedback: str = "full"
    parse_failures: int = 0
    calls: int = 0

    def reset(self, n_actions, horizon, n_seeds, rng):
        if not callable(self.generate):
            raise TypeError(f"generate must be callable, got {type(self.generate).__name__}")
        self.d = n_actions
        self.history = [np.zeros((0, n_actions)) for _ in range(n_seeds)]
        self.parse_failures = self.calls = 0
        self._records: list[dict] = []

    def policy(self):
        rows = []
        for s, h in enumerate(self.history):
            prompt = build_prompt(h, self.d)
            answer = self.generate(prompt)
            parsed = parse_policy(answer, self.d)
            self.calls += 1
            self.parse_failures += not parsed.ok
            self._records.append({"seed": s, "round": len(h) + 1, "prompt": prompt, "answer": answer,
                                  "policy": parsed.policy.tolist(), "parsed": parsed.ok, "reason": parsed.reason})
            rows.append(parsed.policy)
        return np.stack(rows)

    def update(self, loss, actions=None):
        self.history = [np.vstack([h, row[None]]) for h, row in zip(self.history, loss, strict=True)]
        if self.transcript is not None and len(self.history[0]) > 0:
            self.save_transcript(self.transcript)

    def save_transcript(self, path: str | Path) -> Path:
        """Write every call so far as JSON lines (atomically)."""
        from iclr25.utils.io import atomic_write

        with atomic_write(Path(path)) as f:
            for rec in self._records:
                f.write(json.dumps(rec) + "\n")
        return Path(path)


def read_transcript(path: str | Path) -> list[dict]:
    """The records of a transcript written by :class:`LLMAgent` (errors name the file and line)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such transcript")
    records = []
    for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: line {i} is not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not {"prompt", "answer"} <= set(rec):
            raise ValueError(f"{p}: line {i} has no 'prompt' and 'answer'")
        records.append(rec)
    if not records:
        raise ValueError(f"{p}: transcript is empty")
    return records


def replay_transcript(path: str | Path) -> Callable[[str], str]:
    """A ``generate`` function that answers with a transcript's recorded answers, in order, and checks that
    each prompt is the recorded one (so a replayed run is identical to the original)."""
    records = iter(read_transcript(path))

    def generate(prompt: str) -> str:
        try:
            rec = next(records)
        except StopIteration:
            raise ValueError(f"{path}: transcript has fewer calls than the replayed run") from None
        if rec["prompt"] != prompt:
            raise ValueError(f"{path}: round {rec.get('round')}: the prompt differs from the recorded one")
        return rec["answer"]

    return generate


@dataclasses.dataclass
class OpenAIChat:
    """An OpenAI-compatible ``/chat/completions`` endpoint (``endpoint`` like ``http://127.0.0.1:8000/v1``).

    Temperature 0 by default; ``api_key`` is sent as a bearer token when given. Only the standard library is
    used (no ``openai`` package)."""

    endpoint: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 64
    timeout: float = 60.0

    def __post_init__(self):
        if not isinstance(self.endpoint, str) or not re.match(r"^https?://", self.endpoint):
            raise ValueError(f"--endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1, got {self.endpoint!r}")
        if not self.model:
            raise ValueError("--model must name the served model")

    def __call__(self, prompt: str) -> str:
        body = json.dumps({"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.endpoint.rstrip("/") + "/chat/completions", data=body, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read().decode("utf-8"))
        except (urllib.error.URLError, TimeoutError) as exc:
            raise OSError(f"--endpoint {self.endpoint}: request failed ({exc})") from None
        except json.JSONDecodeError:
            raise ValueError(f"--endpoint {self.endpoint}: the answer is not JSON") from None
        try:
            return str(data["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"--endpoint {self.endpoint}: no choices[0].message.content in the answer") from None


@dataclasses.dataclass
class HFCausalLM:
    """A local Hugging Face causal LM folder (``config.json``, weights, tokenizer), greedy decoding on the CPU.
    Needs the ``hf`` extra (``transformers``); loads with ``local_files_only=True``."""

    path: str | Path
    max_new_tokens: int = 32

    def __post_init__(self):
        from iclr25.utils.hf import load_local_model

        self.tokenizer, self.model = load_local_model(self.path, "AutoModelForCausalLM", flag="--hf-path",
                                                      extra="iclr25-llm-regret[hf]")

    def __call__(self, prompt: str) -> str:
        import torch

        enc = self.tokenizer(prompt, return_tensors="pt")
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False, pad_token_id=pad)
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
