"""The four knowledge-manipulation tasks as question/answer pairs, with and without chain of thought (CoT).

A task is named by a spec string ``KIND:ATTRIBUTE[:OPTION][:cot]``:

- ``retrieval:ATTR`` (ATTR one of the biography attributes): "What is the birth city of A?" -> "Laxburg".
- ``partial:PART`` (``birth_month``, ``birth_day``, ``birth_year``), partial retrieval of the date:
  "What is the birth year of A?" -> "1996"; with ``cot`` the full date is stated first.
- ``classification:PART:modM`` (month, day or year modulo M >= 2): "What is the birth month of A modulo 2?"
  -> "even" / "odd" for M = 2, the residue ``r`` otherwise; CoT: "October, so even."
- ``comparison:PART`` (month or year): "Was A born in an earlier month than B?" -> "yes"/"no"; CoT:
  "October and March, so no." Pairs never tie.
- ``inverse:ATTR+ATTR...`` (inverse search): "Who was born on October 2, 1996 in Laxburg?" -> the full name.
  There is no CoT form (the paper finds none that helps).

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.2* (ICLR 2025), §3 (retrieval, partial
retrieval), §4 (classification, comparison, CoT), §5 (inverse search).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr25.utils.io import atomic_write
from iclr25.utils.seeding import check_seed

from .biography import ATTRIBUTES, DATE_PARTS, MONTHS, Person, Population, attribute_value

__all__ = ["TaskSpec", "QA", "parse_task", "build_task", "write_qa_jsonl", "answer_label", "TASK_KINDS",
           "retrieval_qas", "task_labels", "cot_prefix"]

TASK_KINDS = ("retrieval", "partial", "classification", "comparison", "inverse")
_PHRASE = {"birth_date": "birth date", "birth_city": "birth city", "university": "university",
           "major": "major", "company": "employer", "company_city": "work city", "birth_month": "birth month",
           "birth_day": "birth day", "birth_year": "birth year"}
_COMPARE_WORD = {"birth_month": "month", "birth_year": "year"}


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """A parsed task spec (see the module docstring); ``str(spec)`` gives the spec string back."""

    kind: str
    attributes: tuple[str, ...]
    cot: bool = False
    modulus: int | None = None

    def __str__(self) -> str:
        parts = [self.kind, "+".join(self.attributes)]
        if self.modulus is not None:
            parts.append(f"mod{self.modulus}")
        if self.cot:
            parts.append("cot")
        return ":".join(parts)

    @property
    def attribute(self) -> str:
        return self.attributes[0]


def parse_task(spec: str | TaskSpec) -> TaskSpec:
    """Parse ``"classification:birth_month:mod2:cot"`` and the like; a malformed spec raises ``ValueError``
    naming the spec and what was expected.

    Examples
    --------
    >>> parse_task("classification:birth_month:mod2:cot")
    TaskSpec(kind='classification', attributes=('birth_month',), cot=True, modulus=2)
    """
    if isinstance(spec, TaskSpec):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"task spec must be a string like 'retrieval:birth_city', got {type(spec).__name__}")
    parts = spec.strip().split(":")
    if len(parts) < 2 or parts[0] not in TASK_KINDS:
        raise ValueError(f"task spec {spec!r}: expected KIND:ATTRIBUTE[:modM][:cot] with KIND one of {TASK_KINDS}")
    kind, attrs, rest = parts[0], tuple(a for a in parts[1].split("+") if a), parts[2:]
    cot = "cot" in rest
    rest = [r for r in rest if r != "cot"]
    modulus = None
    if kind == "classification":
        if len(rest) != 1 or not rest[0].startswith("mod") or not rest[0][3:].isdigit() or int(rest[0][3:]) < 2:
            raise ValueError(f"task spec {spec!r}: classification needs a modulus option modM with M >= 2 "
                             "(e.g. classification:birth_month:mod2)")
        modulus = int(rest[0][3:])
    elif rest:
        raise ValueError(f"task spec {spec!r}: unknown options {rest} (only classification takes modM; 'cot' "
                         "turns chain of thought on)")
    allowed = {"retrieval": ATTRIBUTES, "partial": DATE_PARTS, "classification": DATE_PARTS,
               "comparison": tuple(_COMPARE_WORD), "inverse": ATTRIBUTES}[kind]
    if not attrs or (kind != "inverse" and len(attrs) != 1) or any(a not in allowed for a in attrs):
        raise ValueError(f"task spec {spec!r}: unknown attribute {parts[1]!r} for {kind}; expected "
                         + ("one or more of " if kind == "inverse" else "one of ") + f"{allowed}"
                         + (" joined by '+'" if kind == "inverse" else ""))
    if kind == "inverse" and len(set(attrs)) != len(attrs):
        raise ValueError(f"task spec {spec!r}: an attribute is repeated")
    if kind in ("retrieval", "inverse") and cot:
        raise ValueError(f"task spec {spec!r}: {kind} has no chain-of-thought form")
    return TaskSpec(kind, attrs, cot, modulus)


@dataclasses.dataclass(frozen=True)
class QA:
    """One question/answer pair. ``label`` is what exact match scores: the whole answer for retrieval and
    inverse search, the final class (``even``, ``yes``, ``3``...) for classification and comparison."""

    task: str
    prompt: str
    answer: str
    label: str
    person: int
    other: int | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _number(person: Person, part: str) -> int:
    return int(getattr(person, part))


def _residue_word(value: int, m: int) -> str:
    r = value % m
    return ("even", "odd")[r] if m == 2 else str(r)


def answer_label(spec: str | TaskSpec, answer: str) -> str:
    """The scored label of a generated ``answer``: for classification, comparison and partial retrieval what
    follows the last ``so`` (the whole answer without CoT); otherwise the answer itself, whitespace-normalised.

    Examples
    --------
    >>> answer_label("classification:birth_month:mod2:cot", "October, so even.")
    'even'
    """
    spec = parse_task(spec)
    text = " ".join(str(answer).replace(" ,", ",").replace(" .", ".").split()).strip()
    if spec.kind in ("classification", "comparison", "partial"):
        tail = text.rsplit(" so ", 1)[-1] if " so " in f" {text}" else text
        tail = tail.strip().rstrip(".").strip()
        return tail if spec.kind == "partial" else tail.lower()
    return text.rstrip(".").strip()


def task_labels(spec: str | TaskSpec) -> tuple[str, ...]:
    """Every label a classification or comparison task can have (``even``/``odd``, the residues ``0..M-1``,
    ``yes``/``no``).

    >>> task_labels("classification:birth_month:mod3")
    ('0', '1', '2')
    """
    spec = parse_task(spec)
    if spec.kind == "classification":
        return tuple(_residue_word(r, spec.modulus) for r in range(spec.modulus))
    if spec.kind == "comparison":
        return ("yes", "no")
    raise ValueError(f"task spec {str(spec)!r}: only classification and comparison have a fixed set of labels")


def cot_prefix(qa: QA) -> str:
    """The chain of thought of a CoT answer up to its label: ``"October, so even."`` -> ``"October, so"``."""
    if " so " not in qa.answer:
        raise ValueError(f"answer {qa.answer!r} of task {qa.task!r} has no chain of thought (expected '..., so LABEL.')")
    return qa.answer.rsplit(" so ", 1)[0] + " so"


def _qa(spec: TaskSpec, pop: Population, i: int, j: int | None = None) -> QA:
    p = pop.people[i]
    a = spec.attribute
    if spec.kind == "retrieval":
        v = attribute_value(p, a)
        return QA(str(spec), f"What is the {_PHRASE[a]} of {p.name}?", f"{v}.", v, i)
    if spec.kind == "partial":
        v = attribute_value(p, a)
        ans = f"{p.birth_date}, so {v}." if spec.cot else f"{v}."
        return QA(str(spec), f"What is the {_PHRASE[a]} of {p.name}?", ans, v, i)
    if spec.kind == "classification":
        lab = _residue_word(_number(p, a), spec.modulus)
        ans = f"{attribute_value(p, a)}, so {lab}." if spec.cot else f"{lab}."
        return QA(str(spec), f"What is the {_PHRASE[a]} of {p.name} modulo {spec.modulus}?", ans, lab, i)
    if spec.kind == "comparison":
        q = pop.people[j]
        lab = "yes" if _number(p, a) < _number(q, a) else "no"
        ans = (f"{attribute_value(p, a)} and {attribute_value(q, a)}, so {lab}." if spec.cot else f"{lab}.")
        return QA(str(spec), f"Was {p.name} born in an earlier {_COMPARE_WORD[a]} than {q.name}?", ans, lab, i, j)
    # inverse search
    if spec.attributes == ("birth_date", "birth_city"):
        prompt = f"Who was born on {p.birth_date} in {p.birth_city}?"
    else:
        prompt = "Who has " + " and ".join(f"{_PHRASE[x]} {attribute_value(p, x)}" for x in spec.attributes) + "?"
    return QA(str(spec), prompt, f"{p.name}.", p.name, i)


def build_task(population: Population, spec: str | TaskSpec, *, people: str | Sequence[int] = "train",
               n_pairs: int | None = None, seed: int = 0) -> list[QA]:
    """The QAs of task ``spec`` for ``people`` (``"train"``, ``"test"``, ``"all"`` or indices).

    Comparison draws ``n_pairs`` ordered pairs within ``people`` (default: one pair per person) with
    different values (no ties) and balanced yes/no labels. Inverse search keeps only people whose queried
    attributes identify them uniquely in the whole population (a question with two right answers has no
    exact match).
    """
    spec = parse_task(spec)
    seed = check_seed(seed)
    idx = population.indices(people)
    if not idx:
        raise ValueError(f"people: no one selected from a population of {len(population)}")
    if spec.kind != "comparison":
        if n_pairs is not None:
            raise ValueError("n_pairs applies only to comparison tasks")
        if spec.kind == "inverse":
            keys = [tuple(attribute_value(p, a) for a in spec.attributes) for p in population.people]
            counts: dict[tuple, int] = {}
            for k in keys:
                counts[k] = counts.get(k, 0) + 1
            idx = tuple(i for i in idx if counts[keys[i]] == 1)
        return [_qa(spec, population, i) for i in idx]
    if len(idx) < 2:
        raise ValueError("comparison needs at least two people")
    n_pairs = len(idx) if n_pairs is None else n_pairs
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
        raise ValueError(f"n_pairs must be an integer >= 1, got {n_pairs!r}")
    rng = np.random.default_rng(seed)
    a = spec.attribute
    vals = np.array([_number(population.people[i], a) for i in idx])
    if len(set(vals.tolist())) < 2:
        raise ValueError(f"comparison: every selected person has the same {a}")
    out: list[QA] = []
    while len(out) < n_pairs:
        u, v = rng.integers(len(idx), size=2)
        if vals[u] == vals[v]:
            continue
        want_yes = len(out) % 2 == 0  # alternate labels: a balanced task
        if (vals[u] < vals[v]) != want_yes:
            u, v = v, u
        out.append(_qa(spec, population, idx[u], idx[v]))
    return out


def retrieval_qas(population: Population, people: str | Sequence[int] = "all",
                  attributes: Sequence[str] = ATTRIBUTES) -> list[QA]:
    """Retrieval QAs of every attribute in ``attributes`` for ``people``."""
    return [qa for a in attributes for qa in build_task(population, f"retrieval:{a}", people=people)]


def write_qa_jsonl(path: str | os.PathLike[str], qas: Sequence[QA]) -> Path:
    """Write QAs as JSON lines (``task``, ``prompt``, ``answer``, ``label``, ``person``, ``other``),
    atomically."""
    p = Path(path)
    with atomic_write(p) as f:
        for qa in qas:
            f.write(json.dumps(qa.to_dict()) + "\n")
    return p


def month_name(m: int) -> str:
    return MONTHS[m - 1]
