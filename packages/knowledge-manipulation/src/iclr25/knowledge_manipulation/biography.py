"""Synthetic individuals and their biographies (the paper's *bioS* data set), written from scratch.

Each individual has a unique full name (first, middle, last), a birth date (month, day 1-28, year 1900-1999),
a birth city, a university, a major and an employer; the employer's city is fixed by the employer. A
biography has one sentence per attribute, each drawn from 8-15 templates of our own. The augmentations of
Part 3.1 that make knowledge *extractable* are options of :func:`render_bio`: *multiplicity* (a fresh
template draw per biography, "multi-M"; a fresh draw per epoch is "multi-∞"), *permute* (shuffled sentence
order; the full name stays in the first sentence), *fullname* (the full name in every sentence instead of a
pronoun) and the *attributes-first* order (every sentence states its attribute before its subject, and the
name comes after every attribute: the control under which inverse search becomes learnable).

Name and place pools are built from syllables with a fixed generator (no third-party word lists), so every
pool entry is a single word-level token; majors are ordinary field names.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.1* (bioS, §2, augmentations §4) and
*Part 3.2* (ICLR 2025), §2 (data), §6 (inverse search and the reversed-bio control).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, atomic_write
from iclr25.utils.seeding import check_seed

__all__ = [
    "ATTRIBUTES", "MONTHS", "TEMPLATES", "REVERSED_TEMPLATES", "Person", "Population", "make_population",
    "render_bio", "render_sentence", "parse_bio", "write_people_jsonl", "read_people_jsonl", "pools",
    "attribute_value",
]

#: The sentences of a biography, in their default order.
ATTRIBUTES = ("birth_date", "birth_city", "university", "major", "company", "company_city")
#: Numeric parts of the birth date (questions may ask for one of them: partial retrieval, classification).
DATE_PARTS = ("birth_month", "birth_day", "birth_year")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
YEARS = (1900, 1999)

# ----------------------------------------------------------------------------------------------- templates
# {s} is the subject (full name or pronoun), {v} the attribute's value. Our own wording, 10 per attribute.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "birth_date": (
        "{s} was born on {v}.", "{s} came into the world on {v}.", "{s} celebrates a birthday on {v}.",
        "{s} entered life on {v}.", "{s} has {v} as the date of birth.", "{s} first opened eyes on {v}.",
        "{s} marks {v} as the day of birth.", "{s} arrived on {v}.", "{s} was delivered on {v}.",
        "{s} traces the start of life to {v}.",
    ),
    "birth_city": (
        "{s} was born in {v}.", "{s} spent early childhood in {v}.", "{s} is a native of {v}.",
        "{s} hails from {v}.", "{s} grew up in {v}.", "{s} has roots in {v}.", "{s} comes from {v}.",
        "{s} was raised in {v}.", "{s} calls {v} the place of birth.", "{s} started out in {v}.",
    ),
    "university": (
        "{s} studied at {v}.", "{s} graduated from {v}.", "{s} attended {v}.", "{s} earned a degree at {v}.",
        "{s} was educated at {v}.", "{s} completed college at {v}.", "{s} enrolled at {v}.",
        "{s} spent the student years at {v}.", "{s} received training at {v}.", "{s} is an alumnus of {v}.",
    ),
    "major": (
        "{s} majored in {v}.", "{s} specialised in {v}.", "{s} focused on {v}.", "{s} chose {v} as a major.",
        "{s} concentrated on {v}.", "{s} pursued {v}.", "{s} took a degree in {v}.", "{s} devoted studies to {v}.",
        "{s} followed a curriculum in {v}.", "{s} learned {v} in depth.",
    ),
    "company": (
        "{s} worked for {v}.", "{s} was employed by {v}.", "{s} held a job at {v}.", "{s} joined {v}.",
        "{s} built a career at {v}.", "{s} took a position with {v}.", "{s} was on the staff of {v}.",
        "{s} earned a living at {v}.", "{s} served at {v}.", "{s} accepted an offer from {v}.",
    ),
    "company_city": (
        "{s} worked in {v}.", "{s} commuted to an office in {v}.", "{s} was based in {v}.",
        "{s} had a workplace in {v}.", "{s} relocated to {v} for work.", "{s} practised a profession in {v}.",
        "{s} kept an office in {v}.", "{s} did business in {v}.", "{s} was stationed in {v}.",
        "{s} pursued a career in {v}.",
    ),
}
#: Attributes-first forms: the value comes before the (full) name in every sentence.
REVERSED_TEMPLATES: dict[str, tuple[str, ...]] = {
    "birth_date": (
        "On {v} was born {s}.", "The birthday {v} belongs to {s}.", "{v} is the date of birth of {s}.",
        "Born on {v} is {s}.", "The date {v} saw the birth of {s}.", "On {v} the world welcomed {s}.",
        "{v} marks the birth of {s}.", "A child born on {v} was {s}.",
    ),
    "birth_city": (
        "In {v} was born {s}.", "{v} is the birthplace of {s}.", "The city of birth {v} belongs to {s}.",
        "Born in {v} is {s}.", "From {v} comes {s}.", "{v} raised {s}.", "A native of {v} is {s}.",
        "{v} is home town to {s}.",
    ),
    "university": (
        "At {v} studied {s}.", "{v} educated {s}.", "From {v} graduated {s}.", "{v} counts as an alumnus {s}.",
        "Enrolled at {v} was {s}.", "{v} granted a degree to {s}.", "Attending {v} was {s}.",
        "{v} trained {s}.",
    ),
    "major": (
        "In {v} majored {s}.", "{v} was the major of {s}.", "Specialising in {v} was {s}.",
        "{v} was studied by {s}.", "The field {v} was chosen by {s}.", "Focused on {v} was {s}.",
        "{v} drew the attention of {s}.", "A degree in {v} went to {s}.",
    ),
    "company": (
        "For {v} worked {s}.", "{v} employed {s}.", "At {v} held a job {s}.", "{v} hired {s}.",
        "On the staff of {v} was {s}.", "{v} gave a position to {s}.", "Working for {v} was {s}.",
        "{v} paid the salary of {s}.",
    ),
    "company_city": (
        "In {v} worked {s}.", "{v} was the workplace of {s}.", "Based in {v} was {s}.", "{v} hosted the office of {s}.",
        "Stationed in {v} was {s}.", "{v} was where worked {s}.", "Commuting to {v} was {s}.",
        "{v} saw the daily work of {s}.",
    ),
}

# -------------------------------------------------------------------------------------------------- pools
_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "cl",
           "dr", "fl", "gr", "kr", "pl", "sh", "st", "th", "tr", "ch")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y")
_CODAS = ("", "n", "r", "l", "s", "th", "nd", "rk", "m", "x")
_SUFFIXES = {
    "first": ("", "a", "en", "ia", "o", "is"), "middle": ("", "el", "an", "ey", "us", "ie"),
    "last": ("son", "ley", "ford", "man", "wick", "er", "ton", "by"),
    "city": ("ville", "burg", "field", "haven", "port", "mouth", "stead", "dale"),
    "uni": ("", "", ""), "company": ("ix", "ora", "ent", "ex", "ium", "co"),
}
_MAJORS = (
    "Physics", "Chemistry", "Biology", "Mathematics", "Statistics", "Economics", "History", "Philosophy",
    "Linguistics", "Sociology", "Psychology", "Anthropology", "Geology", "Astronomy", "Architecture",
    "Music", "Literature", "Law", "Medicine", "Nursing", "Pharmacy", "Dentistry", "Accounting", "Finance",
    "Marketing", "Management", "Journalism", "Theology", "Ecology", "Genetics", "Neuroscience", "Robotics",
    "Oceanography", "Meteorology", "Agronomy", "Forestry", "Archaeology", "Geography", "Education",
    "Engineering", "Informatics", "Cryptography", "Optics", "Acoustics", "Botany", "Zoology", "Microbiology",
    "Immunology", "Biochemistry", "Nutrition", "Kinesiology", "Criminology", "Politics", "Diplomacy",
    "Translation", "Photography", "Dance", "Theatre", "Sculpture", "Painting",
)
POOL_SIZES = {"first": 150, "middle": 150, "last": 300, "city": 100, "university": 150, "major": 60,
              "company": 120}
_UNI_KINDS = ("University", "College", "Institute")
_POOL_CACHE: dict[str, tuple[str, ...]] | None = None


def pools() -> dict[str, tuple[str, ...]]:
    """The value pools (``first``, ``middle``, ``last``, ``city``, ``university``, ``major``, ``company``)
    and ``company_city`` (the city of each company). Built once from a fixed generator: the same on every
    machine, disjoint from each other and from the template words."""
    global _POOL_CACHE
    if _POOL_CACHE is not None:
        return _POOL_CACHE
    rng = np.random.default_rng(20230925)
    used: set[str] = set()
    reserved = {w.lower() for t in itertools.chain(*TEMPLATES.values(), *REVERSED_TEMPLATES.values())
                for w in re.findall(r"[A-Za-z]+", t)} | {m.lower() for m in MONTHS} | {m.lower() for m in _MAJORS}
    reserved |= {"he", "she", "who", "what", "is", "the", "of", "yes", "no", "even", "odd", "so", "and", "was"}

    def word(kind: str) -> str:
        while True:
            n_syl = int(rng.integers(1, 3))
            w = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                        + _CODAS[rng.integers(len(_CODAS))] for _ in range(n_syl))
            w += _SUFFIXES[kind][rng.integers(len(_SUFFIXES[kind]))]
            if 4 <= len(w) <= 11 and w not in used and w not in reserved:
                used.add(w)
                return w.capitalize()

    out: dict[str, tuple[str, ...]] = {}
    for kind in ("first", "middle", "last", "city"):
        out[kind] = tuple(word(kind) for _ in range(POOL_SIZES[kind]))
    out["university"] = tuple(f"{word('uni')} {_UNI_KINDS[i % 3]}" for i in range(POOL_SIZES["university"]))
    out["major"] = _MAJORS[: POOL_SIZES["major"]]
    out["company"] = tuple(word("company") for _ in range(POOL_SIZES["company"]))
    out["company_city"] = tuple(out["city"][int(i)] for i in rng.integers(0, POOL_SIZES["city"], POOL_SIZES["company"]))
    _POOL_CACHE = out
    return out


# ------------------------------------------------------------------------------------------------ persons
@dataclasses.dataclass(frozen=True)
class Person:
    """One synthetic individual. ``birth_month`` is 1-12, ``birth_day`` 1-28, ``birth_year`` 1900-1999."""

    first: str
    middle: str
    last: str
    gender: str
    birth_month: int
    birth_day: int
    birth_year: int
    birth_city: str
    university: str
    major: str
    company: str
    company_city: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.middle} {self.last}"

    @property
    def pronoun(self) -> str:
        return "He" if self.gender == "male" else "She"

    @property
    def birth_date(self) -> str:
        return f"{MONTHS[self.birth_month - 1]} {self.birth_day}, {self.birth_year}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def attribute_value(person: Person, attribute: str) -> str:
    """The text of ``attribute`` of ``person`` (``birth_date`` -> ``"October 2, 1996"``, ``birth_month`` ->
    ``"October"``, ``birth_year`` -> ``"1996"``...)."""
    if attribute == "birth_date":
        return person.birth_date
    if attribute == "birth_month":
        return MONTHS[person.birth_month - 1]
    if attribute in ("birth_day", "birth_year"):
        return str(getattr(person, attribute))
    if attribute in ATTRIBUTES or attribute == "name":
        return getattr(person, attribute)
    raise ValueError(f"attribute must be one of {ATTRIBUTES + DATE_PARTS}, got {attribute!r}")


@dataclasses.dataclass(frozen=True)
class Population:
    """The individuals and their split into ``train`` (task supervision) and ``test`` (evaluation) halves.

    ``train`` and ``test`` are sorted index arrays into ``people``.
    """

    people: tuple[Person, ...]
    train: tuple[int, ...]
    test: tuple[int, ...]
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.people:
            raise ValueError("population must hold at least one person (got an empty population)")
        names = [p.name for p in self.people]
        if len(set(names)) != len(names):
            raise ValueError("population: full names must be unique")
        n = len(self.people)
        split = sorted(self.train) + sorted(self.test)
        if sorted(split) != list(range(n)):
            raise ValueError(f"population: train and test must partition the {n} people")

    def __len__(self) -> int:
        return len(self.people)

    def split_of(self, i: int) -> str:
        return "train" if i in set(self.train) else "test"

    def indices(self, people: str | Sequence[int]) -> tuple[int, ...]:
        """``"train"``, ``"test"``, ``"all"`` or explicit indices, checked."""
        if isinstance(people, str):
            if people == "train":
                return self.train
            if people == "test":
                return self.test
            if people == "all":
                return tuple(range(len(self.people)))
            raise ValueError(f"people must be 'train', 'test', 'all' or a list of indices, got {people!r}")
        idx = tuple(int(i) for i in people)
        bad = [i for i in idx if not 0 <= i < len(self.people)]
        if bad:
            raise ValueError(f"people: indices {bad[:5]} are outside 0..{len(self.people) - 1}")
        return idx


def make_population(n: int, *, seed: int = 0, train_fraction: float = 0.5) -> Population:
    """Sample ``n`` individuals with unique full names (first x middle x last drawn without replacement) and
    independent uniform attributes, then split them at random into train/test.

    Examples
    --------
    >>> pop = make_population(10, seed=0)
    >>> len(pop), len(pop.train), len(pop.test)
    (10, 5, 5)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1 (the number of people), got {n!r}")
    seed = check_seed(seed)
    if not 0.0 < float(train_fraction) < 1.0:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction!r}")
    P = pools()
    n_names = len(P["first"]) * len(P["middle"]) * len(P["last"])
    if n > n_names:
        raise ValueError(f"n must be at most {n_names} (distinct full names), got {n}")
    rng = np.random.default_rng(seed)
    codes = rng.choice(n_names, size=n, replace=False)
    nm, nl = len(P["middle"]), len(P["last"])
    comp = rng.integers(0, len(P["company"]), n)
    cols = {
        "gender": rng.integers(0, 2, n), "birth_month": rng.integers(1, 13, n), "birth_day": rng.integers(1, 29, n),
        "birth_year": rng.integers(YEARS[0], YEARS[1] + 1, n), "birth_city": rng.integers(0, len(P["city"]), n),
        "university": rng.integers(0, len(P["university"]), n), "major": rng.integers(0, len(P["major"]), n),
    }
    people = tuple(
        Person(first=P["first"][c // (nm * nl)], middle=P["middle"][(c // nl) % nm], last=P["last"][c % nl],
               gender=("male", "female")[int(cols["gender"][i])], birth_month=int(cols["birth_month"][i]),
               birth_day=int(cols["birth_day"][i]), birth_year=int(cols["birth_year"][i]),
               birth_city=P["city"][int(cols["birth_city"][i])], university=P["university"][int(cols["university"][i])],
               major=P["major"][int(cols["major"][i])], company=P["company"][int(comp[i])],
               company_city=P["company_city"][int(comp[i])])
        for i, c in enumerate(codes))
    perm = rng.permutation(n)
    n_train = min(max(1, int(round(train_fraction * n))), n - 1) if n > 1 else 1
    return Population(people, tuple(sorted(int(i) for i in perm[:n_train])),
                      tuple(sorted(int(i) for i in perm[n_train:])), seed=seed)


# ------------------------------------------------------------------------------------------------- render
def _check_attribute(attribute: str) -> None:
    if attribute not in ATTRIBUTES:
        raise ValueError(f"attribute must be one of {ATTRIBUTES}, got {attribute!r}")


def render_sentence(person: Person, attribute: str, template: int, *, subject: str | None = None,
                    reverse: bool = False) -> str:
    """One sentence: template number ``template`` of ``attribute`` (reversed form with ``reverse``)."""
    _check_attribute(attribute)
    table = (REVERSED_TEMPLATES if reverse else TEMPLATES)[attribute]
    if not 0 <= template < len(table):
        raise ValueError(f"template must be in 0..{len(table) - 1} for {attribute}, got {template}")
    s = person.name if subject is None else subject
    text = table[template].format(s=s, v=attribute_value(person, attribute))
    return text[0].upper() + text[1:]


def render_bio(person: Person, rng: np.random.Generator | int | None = None, *, permute: bool = True,
               fullname: bool = False, order: str = "name_first",
               attributes: Sequence[str] = ATTRIBUTES) -> str:
    """A biography of ``person``: one sentence per attribute with a random template each.

    ``permute`` shuffles the sentence order (the full name still opens the biography); ``fullname`` puts the
    full name in every sentence instead of he/she; ``order="attributes_first"`` uses the reversed templates,
    which state each attribute before its subject, and names the person once, in the *last* sentence (after
    every attribute; the mirror image of the name-first biography), with he/she before it unless ``fullname``.
    So ``order`` changes the order only; ``fullname`` is a separate factor in both orders. The pronoun keeps
    its capital letter inside an attributes-first sentence ("On May 3, 1950 was born He."): one token in both
    orders.
    """
    if order not in ("name_first", "attributes_first"):
        raise ValueError(f"order must be 'name_first' or 'attributes_first', got {order!r}")
    attrs = list(attributes)
    if not attrs:
        raise ValueError("attributes must name at least one attribute")
    for a in attrs:
        _check_attribute(a)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if permute:
        attrs = [attrs[i] for i in rng.permutation(len(attrs))]
    reverse = order == "attributes_first"
    sentences = []
    for j, a in enumerate(attrs):
        table = (REVERSED_TEMPLATES if reverse else TEMPLATES)[a]
        named = j == (len(attrs) - 1 if reverse else 0)
        subject = person.name if (named or fullname) else person.pronoun
        sentences.append(render_sentence(person, a, int(rng.integers(len(table))), subject=subject, reverse=reverse))
    return " ".join(sentences)


# -------------------------------------------------------------------------------------------------- parse
_PARSERS: list[tuple[str, re.Pattern[str]]] | None = None


def _value_pattern(attribute: str) -> str:
    P = pools()
    if attribute == "birth_date":
        return rf"(?:{'|'.join(MONTHS)}) \d{{1,2}}, \d{{4}}"
    key = {"birth_city": "city", "company_city": "city"}.get(attribute, attribute)
    return "|".join(re.escape(v) for v in sorted(set(P[key]), key=len, reverse=True))


def _parsers() -> list[tuple[str, re.Pattern[str]]]:
    global _PARSERS
    if _PARSERS is None:
        out = []
        name = r"[A-Z][a-z]+ [A-Z][a-z]+ [A-Z][a-z]+|He|She"
        for table in (TEMPLATES, REVERSED_TEMPLATES):
            for a, temps in table.items():
                for t in temps:
                    pat = re.escape(t).replace(r"\{s\}", f"(?P<s>{name})").replace(r"\{v\}", f"(?P<v>{_value_pattern(a)})")
                    out.append((a, re.compile(pat, re.IGNORECASE if t.startswith("{") else 0)))
        _PARSERS = out
    return _PARSERS


def _parse_sentence(sentence: str) -> tuple[str, str, str] | None:
    for a, pat in _parsers():
        m = pat.fullmatch(sentence)
        if m:
            return a, m.group("s"), m.group("v")
    return None


def parse_bio(text: str) -> dict[str, str]:
    """Recover ``{"name": ..., attribute: value}`` from a biography written by :func:`render_bio`.

    Raises ``ValueError`` naming the first sentence that matches no template.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty biography string")
    # sentences end with '.' followed by a space and a capital letter (values never contain '. ')
    sentences = re.split(r"(?<=\.) (?=[A-Z])", text.strip())
    out: dict[str, str] = {}
    for s in sentences:
        hit = _parse_sentence(s)
        if hit is None:
            raise ValueError(f"sentence matches no template: {s!r}")
        a, subject, value = hit
        if subject not in ("He", "She", "he", "she"):
            out.setdefault("name", subject)
        out[a] = value
    return out


# ------------------------------------------------------------------------------------------------- export
def write_people_jsonl(path: str | os.PathLike[str], population: Population, *, multiplicity: int = 1,
                       seed: int = 0, permute: bool = True, fullname: bool = False,
                       order: str = "name_first") -> Path:
    """Write one JSON line per person: attributes, ``name``, ``split`` and ``bios`` (``multiplicity`` of
    them), atomically."""
    if isinstance(multiplicity, bool) or not isinstance(multiplicity, int) or multiplicity < 1:
        raise ValueError(f"multiplicity must be an integer >= 1, got {multiplicity!r}")
    rng = np.random.default_rng(check_seed(seed))
    train = set(population.train)
    p = Path(path)
    with atomic_write(p) as f:
        for i, person in enumerate(population.people):
            row = {"id": i, "name": person.name, **person.to_dict(), "birth_date": person.birth_date,
                   "split": "train" if i in train else "test",
                   "bios": [render_bio(person, rng, permute=permute, fullname=fullname, order=order)
                            for _ in range(multiplicity)]}
            f.write(json.dumps(row) + "\n")
    return p


_PERSON_FIELDS = tuple(f.name for f in dataclasses.fields(Person))


def read_people_jsonl(path: str | os.PathLike[str]) -> Population:
    """Read a population written by :func:`write_people_jsonl` (or by hand: one JSON object per line with the
    fields of :class:`Person` and ``split`` = ``train``/``test``). Errors name the file and the line."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such people file (expected JSONL from `generate`)")
    people, train, test = [], [], []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise DataFileError(p, "not a UTF-8 text file (expected JSONL from `generate`)") from None
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise DataFileError(p, f"line {k} is not JSON (expected one person per line)") from None
        if not isinstance(row, dict):
            raise DataFileError(p, f"line {k} is not a JSON object")
        missing = [f for f in _PERSON_FIELDS if f not in row]
        if missing:
            raise DataFileError(p, f"line {k} lacks the fields {missing}")
        try:
            person = Person(**{f: row[f] for f in _PERSON_FIELDS})
            if not (1 <= person.birth_month <= 12 and 1 <= person.birth_day <= 31):
                raise ValueError
        except (TypeError, ValueError):
            raise DataFileError(p, f"line {k} has an invalid birth date or field type") from None
        (train if row.get("split", "train") == "train" else test).append(len(people))
        people.append(person)
    if not people:
        raise DataFileError(p, "holds no people (an empty population)")
    if not train or not test:
        raise DataFileError(p, "needs people in both splits ('split': 'train' and 'test')")
    try:
        return Population(tuple(people), tuple(train), tuple(test))
    except ValueError as exc:
        raise DataFileError(p, str(exc)) from None


def iter_bios(population: Population, rng: np.random.Generator, people: Iterable[int], **kw: Any) -> list[str]:
    """A fresh biography of each of ``people`` (one "multi-∞" epoch)."""
    return [render_bio(population.people[i], rng, **kw) for i in people]
