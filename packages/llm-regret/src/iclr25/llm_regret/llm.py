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
import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["build_prompt", "build_bandit_prompt", "repair_prompt", "parse_policy", "ParsedPolicy", "LLMAgent",
           "ParseFailureError", "OpenAIChat", "HFCausalLM", "replay_transcript", "read_transcript",
           "ON_PARSE_FAILURE", "MAX_PARSE_FAILURE_RATE"]

SYSTEM = ("You are choosing among actions repeatedly. Each round every action gets a loss between 0 and 1; "
          "you pay the expected loss of the probability distribution you choose.")
SYSTEM_BANDIT = ("You are choosing among actions repeatedly. Each round every action gets a loss between 0 and 1; "
                 "one action is drawn from the probability distribution you choose, you pay its loss, and you see "
                 "only the loss of the action that was drawn.")

#: what :class:`LLMAgent` does with an answer it cannot read: ask again with the parse error in the prompt,
#: play the uniform policy for the round (counted), or stop the run with an error
ON_PARSE_FAILURE = ("retry", "uniform", "stop")
#: above this fraction of unreadable rounds a run's regret says nothing about the model (see
#: :func:`iclr25.llm_regret.no_regret_verdict`): uniform play is itself no-regret on the alternating sequence
MAX_PARSE_FAILURE_RATE = 0.10


def _request(n_actions: int, t: int) -> str:
    return (f"This is round {t}. Reply with the probabilities of the {n_actions} actions as a JSON list of "
            f"{n_actions} numbers that sum to 1, for example {json.dumps([round(1 / n_actions, 3)] * n_actions)}.")


def build_prompt(history: np.ndarray, n_actions: int, *, round_index: int | None = None) -> str:
    """The round's prompt with full information: all past loss vectors, one line per round, and the request
    for a distribution."""
    t = len(history) + 1 if round_index is None else round_index
    lines = [SYSTEM, f"There are {n_actions} actions, numbered 1 to {n_actions}."]
    if len(history) == 0:
        lines.append("No round has been played yet.")
    else:
        lines.append("Losses of every action in the previous rounds:")
        for s, row in enumerate(history, 1):
            lines.append(f"Round {s}: " + ", ".join(f"action {a + 1} = {v:.3f}" for a, v in enumerate(row)))
    lines.append(_request(n_actions, t))
    return "\n".join(lines)


def build_bandit_prompt(played: list[tuple[int, float]], n_actions: int) -> str:
    """The round's prompt with bandit feedback (paper Sec. 3.3): for every past round, only the action that was
    drawn and its loss."""
    lines = [SYSTEM_BANDIT, f"There are {n_actions} actions, numbered 1 to {n_actions}."]
    if not played:
        lines.append("No round has been played yet.")
    else:
        lines.append("The action drawn in each previous round and its loss:")
        for s, (a, v) in enumerate(played, 1):
            lines.append(f"Round {s}: action {int(a) + 1} was drawn, its loss was {float(v):.3f}")
    lines.append(_request(n_actions, len(played) + 1))
    return "\n".join(lines)


def repair_prompt(prompt: str, answer: str, reason: str, n_actions: int) -> str:
    """The prompt of a retry: the original prompt, the unreadable answer (cut to 300 characters) and why it
    could not be read."""
    shown = answer if isinstance(answer, str) else repr(answer)
    shown = shown if len(shown) <= 300 else shown[:300] + " ..."
    return (f"{prompt}\n\nYour previous answer was:\n{shown}\nIt could not be read ({reason}). Reply with only a "
            f"JSON list of {n_actions} non-negative numbers that sum to 1.")


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

    Reasoning inside ``<think>...</think>`` is dropped first (an answer that ends inside it ran out of tokens).
    Then tries, in order: the last bracketed list of exactly ``n_actions`` numbers; ``action i: p`` pairs; the
    last ``n_actions`` numbers of the answer. Percentages are read as fractions; a vector summing to within 5%
    of 1 (or to 100) is renormalised; anything else falls back to the uniform policy with ``ok=False``.
    """
    uniform = np.full(n_actions, 1.0 / n_actions)
    if not isinstance(text, str) or not text.strip():
        return ParsedPolicy(uniform, False, "empty answer")
    text = re.sub(r"<think>.*?</think>", " ", text, flags=re.S | re.I)
    if re.search(r"<think>", text, flags=re.I):
        return ParsedPolicy(uniform, False, "the answer ends inside <think> (it ran out of tokens: raise the "
                                            "token limit)")
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
    return ParsedPolicy(uniform, False, f"no distribution over {n_actions} actions in {text.strip()[:80]!r}")


class ParseFailureError(ValueError):
    """Raised by :class:`LLMAgent` with ``on_parse_failure="stop"`` at the first answer it cannot read."""


@dataclasses.dataclass
class LLMAgent:
    """An LLM as an online agent: ``generate(prompt) -> answer``, one call per seed and round (more on retries).

    ``feedback="full"`` shows every past loss vector (:func:`build_prompt`); ``"bandit"`` shows only the drawn
    action and its loss (:func:`build_bandit_prompt`). An answer that :func:`parse_policy` cannot read is,
    by ``on_parse_failure``: ``"retry"`` — asked again up to ``parse_retries`` times with the parse error in
    the prompt (:func:`repair_prompt`), then played as uniform; ``"uniform"`` — played as uniform at once;
    ``"stop"`` — :class:`ParseFailureError`. Rounds played as uniform are counted in ``parse_failures`` (their
    rate in :attr:`parse_failure_rate`, the first few in ``failure_examples``): a run with more than
    :data:`MAX_PARSE_FAILURE_RATE` of them measures the fallback, not the model, and
    :func:`~iclr25.llm_regret.no_regret_verdict` calls it undecided. Every call (prompt, answer, parsed policy,
    attempt) goes to ``transcript`` (JSONL) when given.
    """

    generate: Callable[[str], str]
    transcript: str | Path | None = None
    name: str = "llm"
    feedback: str = "full"
    on_parse_failure: str = "retry"
    parse_retries: int = 1
    parse_failures: int = 0
    calls: int = 0
    rounds: int = 0
    retried: int = 0
    failure_examples: list = dataclasses.field(default_factory=list)

    def reset(self, n_actions, horizon, n_seeds, rng):
        if not callable(self.generate):
            raise TypeError(f"generate must be callable, got {type(self.generate).__name__}")
        if self.feedback not in ("full", "bandit"):
            raise ValueError(f"feedback must be 'full' or 'bandit', got {self.feedback!r}")
        if self.on_parse_failure not in ON_PARSE_FAILURE:
            raise ValueError(f"on_parse_failure must be one of {', '.join(ON_PARSE_FAILURE)}, got "
                             f"{self.on_parse_failure!r}")
        if isinstance(self.parse_retries, bool) or not isinstance(self.parse_retries, int) or self.parse_retries < 0:
            raise ValueError(f"parse_retries must be an integer >= 0, got {self.parse_retries!r}")
        self.d = n_actions
        self.history = [np.zeros((0, n_actions)) for _ in range(n_seeds)]
        self.played: list[list[tuple[int, float]]] = [[] for _ in range(n_seeds)]
        self.parse_failures = self.calls = self.rounds = self.retried = 0
        self.failure_examples = []
        self._records: list[dict] = []

    @property
    def parse_failure_rate(self) -> float:
        """Fraction of rounds whose answer could not be read (after retries) and was played as uniform."""
        return self.parse_failures / self.rounds if self.rounds else 0.0

    def _ask(self, s: int, t: int, prompt: str, attempt: int) -> ParsedPolicy:
        answer = self.generate(prompt)
        parsed = parse_policy(answer, self.d)
        self.calls += 1
        self._records.append({"seed": s, "round": t, "attempt": attempt, "prompt": prompt, "answer": answer,
                              "policy": parsed.policy.tolist(), "parsed": parsed.ok, "reason": parsed.reason})
        return parsed

    def policy(self):
        rows = []
        for s in range(len(self.history)):
            t = len(self.history[s]) + 1
            prompt = (build_prompt(self.history[s], self.d) if self.feedback == "full"
                      else build_bandit_prompt(self.played[s], self.d))
            parsed = self._ask(s, t, prompt, 0)
            attempt = 0
            while not parsed.ok and self.on_parse_failure == "retry" and attempt < self.parse_retries:
                attempt += 1
                self.retried += 1
                parsed = self._ask(s, t, repair_prompt(prompt, self._records[-1]["answer"], parsed.reason, self.d),
                                   attempt)
            self.rounds += 1
            if not parsed.ok:
                self.parse_failures += 1
                if len(self.failure_examples) < 3:
                    ans = self._records[-1]["answer"]
                    self.failure_examples.append({"seed": s, "round": t, "answer": str(ans)[:200],
                                                  "reason": parsed.reason})
                if self.on_parse_failure == "stop":
                    if self.transcript is not None:
                        self.save_transcript(self.transcript)
                    raise ParseFailureError(f"the model's answer in round {t} could not be read ({parsed.reason}); "
                                            "on_parse_failure='stop' ends the run (use 'retry' or 'uniform' to "
                                            "go on)")
            rows.append(parsed.policy)
        return np.stack(rows)

    def update(self, loss, actions=None):
        if actions is None:
            self.history = [np.vstack([h, row[None]]) for h, row in zip(self.history, loss, strict=True)]
        else:  # bandit feedback: the drawn action and its loss only
            for p, a, v in zip(self.played, actions, loss, strict=True):
                p.append((int(a), float(v)))
            self.history = [np.vstack([h, np.full((1, self.d), np.nan)]) for h in self.history]
        if self.transcript is not None and self._records:
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


def _check_generation(max_tokens, temperature, timeout=None) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"--max-tokens must be an integer >= 1, got {max_tokens!r}")
    if not isinstance(temperature, (int, float)) or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"--temperature must be a finite number >= 0, got {temperature!r}")
    if timeout is not None and (not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0):
        raise ValueError(f"--timeout must be a number of seconds > 0, got {timeout!r}")


@dataclasses.dataclass
class OpenAIChat:
    """An OpenAI-compatible ``/chat/completions`` endpoint (``endpoint`` like ``http://127.0.0.1:8000/v1``).

    Temperature 0 by default; ``max_tokens`` (512) leaves room for models that reason before they answer.
    ``api_key`` is sent as a bearer token when given (the command line reads it from an environment variable,
    never from its arguments). ``timeout`` bounds the wait for each answer and is final: an endpoint that
    accepts and never answers fails after it. A refused connection, HTTP 429 or a 5xx answer is retried
    ``retries`` times, waiting ``backoff``, ``2·backoff``, ... seconds. The client is the federation's
    :class:`iclr25.utils.endpoint.ChatEndpoint` (standard library only); errors are one ``OSError`` line naming
    ``--endpoint``.
    """

    endpoint: str
    model: str
    api_key: str | None = dataclasses.field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 1.0

    def __post_init__(self):
        from iclr25.utils.endpoint import ChatEndpoint  # noqa: PLC0415

        self._client = ChatEndpoint(self.endpoint, self.model, api_key=self.api_key, timeout=self.timeout,
                                    retries=self.retries, backoff=self.backoff, temperature=self.temperature,
                                    max_tokens=self.max_tokens)

    def __call__(self, prompt: str) -> str:
        return self._client.complete([{"role": "user", "content": prompt}])


@dataclasses.dataclass
class HFCausalLM:
    """A local Hugging Face causal LM folder (``config.json``, weights, tokenizer), on ``device``.

    When the tokenizer has a chat template (instruction-tuned models), the prompt is sent as one user message
    through it, with the generation prompt added; otherwise as plain text. Greedy decoding at temperature 0,
    sampling (seeded by ``seed``) above. Needs the ``hf`` extra (``transformers``); loads with
    ``local_files_only=True``.

    ``device``: ``auto`` (the GPU when torch sees one), ``cpu``, ``cuda``, ``cuda:N`` (``None``: ``$ICLR25_DEVICE``,
    else ``auto``); the prompt's tokens are put where the model is and the answer decoded on the CPU. ``dtype``:
    ``float32``, ``bfloat16`` or ``float16`` weights, given to ``from_pretrained`` (``None``: as the folder's
    loader gives them, float32 for most; half precision is refused on the CPU), so a 7B model loads in 14 GB.
    ``device_map="auto"``: ``from_pretrained`` places the layers over the visible GPUs (and the CPU) itself; it
    needs ``accelerate`` (``pip install accelerate``; a one-line ImportError without it) and overrides ``device``.
    """

    path: str | Path
    max_new_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    device: str | None = None
    dtype: str | None = None
    device_map: str | None = None

    def __post_init__(self):
        from iclr25.utils.device import torch_device, torch_dtype
        from iclr25.utils.hf import load_local_model

        _check_generation(self.max_new_tokens, self.temperature)
        dev = torch_device(self.device)
        dtype = None if self.dtype is None else torch_dtype(self.dtype, None if self.device_map else dev)
        self.tokenizer, self.model = load_local_model(self.path, "AutoModelForCausalLM", flag="--hf-path",
                                                      extra="iclr25-llm-regret[hf]", dtype=dtype,
                                                      device_map=self.device_map, device=dev)

    @property
    def input_device(self):
        """Where the prompt's tokens go: the model's (first) device."""
        return getattr(self.model, "device", None) or next(self.model.parameters()).device

    @property
    def uses_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def format_prompt(self, prompt: str) -> str:
        """The text the model reads: the chat template applied to ``prompt`` as a user message, when the
        tokenizer has one; else ``prompt`` itself."""
        if not self.uses_chat_template:
            return prompt
        return self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                  add_generation_prompt=True)

    def __call__(self, prompt: str) -> str:
        import torch

        text = self.format_prompt(prompt)
        # a chat template writes its own special tokens: do not add a second BOS
        enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=not self.uses_chat_template)
        enc = {k: v.to(self.input_device) for k, v in enc.items()}
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        sample = {"do_sample": True, "temperature": float(self.temperature)} if self.temperature > 0 else {"do_sample": False}
        if self.temperature > 0:
            torch.manual_seed(self.seed)
            self.seed += 1
        with torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, pad_token_id=pad, **sample)
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:].cpu(), skip_special_tokens=True)
