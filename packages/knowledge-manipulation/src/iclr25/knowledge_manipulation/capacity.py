"""Knowledge-capacity accounting: how many bits a population holds and how large a model must be to store them.

The knowledge of a person is the information of their attribute values: with value pools of sizes
``|V_a|`` drawn uniformly and independently,

    bits per person = Σ_a log2 |V_a|      (birth date: log2(12 · 28 · 100), city, university, major, company;
                                            the work city is fixed by the company and adds nothing),

and a population of N people holds ``N · bits per person``. Part 3.3 measures that GPT-style models store
about 2 bits per parameter after 1000 exposures of each fact and about 1 bit per parameter after 100; we
interpolate ``rate(E) = clip(1 + log10(E / 100), 0.1, 2)`` bits/param between those two points (a rough
guide, not a law) and call a model *large enough* when ``rate(E) · params >= bits``.

References: Allen-Zhu & Li, *Physics of Language Models: Part 3.3, Knowledge Capacity Scaling Laws* (ICLR
2025), §3 (bit complexity of bioS), Result 1-2 (2 bits/param at 1000 exposures, ~1 at 100).
"""

from __future__ import annotations

import dataclasses
import math

from .biography import POOL_SIZES, YEARS, Population
from .model import GPTConfig

__all__ = ["CapacityReport", "bits_per_person", "capacity_report", "bits_per_param_rate", "suggest_model"]


def bits_per_person(*, attributes: tuple[str, ...] | None = None) -> float:
    """``Σ_a log2 |V_a|`` over the stored attributes (default: all five independent ones + the date)."""
    sizes = {"birth_date": 12 * 28 * (YEARS[1] - YEARS[0] + 1), "birth_city": POOL_SIZES["city"],
             "university": POOL_SIZES["university"], "major": POOL_SIZES["major"], "company": POOL_SIZES["company"],
             "company_city": 1}
    keys = tuple(sizes) if attributes is None else attributes
    bad = [a for a in keys if a not in sizes]
    if bad:
        raise ValueError(f"attributes: unknown {bad}; expected a subset of {tuple(sizes)}")
    return float(sum(math.log2(sizes[a]) for a in keys))


def bits_per_param_rate(exposures: float) -> float:
    """Bits a parameter stores after ``exposures`` passes over each fact (Part 3.3, interpolated)."""
    if not (isinstance(exposures, (int, float)) and math.isfinite(exposures) and exposures > 0):
        raise ValueError(f"exposures must be a finite number > 0, got {exposures!r}")
    return float(min(2.0, max(0.1, 1.0 + math.log10(exposures / 100.0))))


@dataclasses.dataclass(frozen=True)
class CapacityReport:
    """Bits to store against what the model can store (``headroom > 1``: large enough)."""

    n_people: int
    bits_per_person: float
    total_bits: float
    params: int
    non_embedding_params: int
    exposures: float
    rate_bits_per_param: float
    headroom: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def capacity_report(population: Population | int, model: GPTConfig, *, exposures: float,
                    attributes: tuple[str, ...] | None = None) -> CapacityReport:
    """The bits of ``population`` (or of that many people) against ``model`` trained for ``exposures``."""
    n = population if isinstance(population, int) else len(population)
    if n < 1:
        raise ValueError(f"population must hold at least one person, got {n}")
    bpp = bits_per_person(attributes=attributes)
    rate = bits_per_param_rate(exposures)
    total = n * bpp
    return CapacityReport(n, bpp, total, model.n_params, model.non_embedding_params, float(exposures), rate,
                          rate * model.n_params / total)


def suggest_model(n_people: int, *, exposures: float, vocab_size: int = 1500, safety: float = 2.0,
                  shapes: tuple[tuple[int, int, int], ...] = ((2, 64, 4), (3, 96, 4), (4, 128, 4), (6, 192, 6),
                                                              (8, 256, 8), (12, 384, 6))) -> GPTConfig:
    """The smallest of ``shapes`` (layers, d_model, heads) whose capacity is ``safety`` times the bits of
    ``n_people``.

    Examples
    --------
    >>> suggest_model(1000, exposures=30).d_model
    96
    """
    if isinstance(n_people, bool) or not isinstance(n_people, int) or n_people < 1:
        raise ValueError(f"n_people must be an integer >= 1, got {n_people!r}")
    if not safety > 0:
        raise ValueError(f"safety must be > 0, got {safety!r}")
    need = safety * n_people * bits_per_person()
    rate = bits_per_param_rate(exposures)
    cfg = None
    for L, d, h in shapes:
        cfg = GPTConfig(vocab_size=vocab_size, n_layers=L, d_model=d, n_heads=h)
        if rate * cfg.n_params >= need:
            return cfg
    assert cfg is not None
    return cfg
