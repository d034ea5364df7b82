"""The library doctor: what a block file and a template set give before any training.

Reports invalid SMILES by line, duplicate blocks (canonical SMILES) with the line of their first occurrence,
per template the number of compatible blocks at each reactant position, dead templates (no compatible block
anywhere) and one-sided ones (a bimolecular template with one empty position: it can only fire on products),
and the size of the first-step action space. Answers the reference's issue #6 (users stuck on a library).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.utils.io import DataFileError

from .blocks import BlockLibrary, _read_rows
from .chem import canonical
from .space import compatibility
from .templates import ReactionTemplate, load_templates

__all__ = ["TemplateReport", "DoctorReport", "doctor"]


@dataclasses.dataclass(frozen=True)
class TemplateReport:
    name: str
    n_reactants: int
    compatible: tuple[int, ...]
    source: str = ""

    @property
    def dead(self) -> bool:
        return all(c == 0 for c in self.compatible)

    @property
    def one_sided(self) -> bool:
        return self.n_reactants == 2 and not self.dead and min(self.compatible) == 0


@dataclasses.dataclass(frozen=True)
class DoctorReport:
    """What :func:`doctor` found; ``ok`` is False when there are invalid lines or dead templates."""

    n_entries: int
    n_unique: int
    invalid: tuple[tuple[int, str], ...]
    duplicates: tuple[tuple[int, str, int], ...]
    templates: tuple[TemplateReport, ...]
    n_block_actions: int

    @property
    def dead_templates(self) -> list[str]:
        return [t.name for t in self.templates if t.dead]

    @property
    def ok(self) -> bool:
        return not self.invalid and not self.dead_templates

    def to_dict(self) -> dict[str, Any]:
        return {"n_entries": self.n_entries, "n_unique": self.n_unique,
                "invalid": [{"line": ln, "smiles": s} for ln, s in self.invalid],
                "duplicates": [{"line": ln, "smiles": s, "first_line": f} for ln, s, f in self.duplicates],
                "templates": [{"name": t.name, "n_reactants": t.n_reactants, "compatible": list(t.compatible),
                               "dead": t.dead, "one_sided": t.one_sided} for t in self.templates],
                "dead_templates": self.dead_templates, "n_block_actions": self.n_block_actions, "ok": self.ok}

    def to_text(self) -> str:
        lines = [f"blocks: {self.n_entries} entries, {self.n_unique} unique valid, {len(self.invalid)} invalid, "
                 f"{len(self.duplicates)} duplicates"]
        for ln, s in self.invalid[:20]:
            lines.append(f"  invalid SMILES at line {ln}: {s[:60]}")
        if len(self.invalid) > 20:
            lines.append(f"  ... and {len(self.invalid) - 20} more invalid lines")
        for ln, s, f in self.duplicates[:10]:
            lines.append(f"  duplicate at line {ln} of line {f}: {s[:60]}")
        if len(self.duplicates) > 10:
            lines.append(f"  ... and {len(self.duplicates) - 10} more duplicates")
        w = max([len(t.name) for t in self.templates] + [8])
        lines.append(f"{'template':<{w}}  reactants  compatible blocks per position  status")
        for t in self.templates:
            status = "DEAD (no compatible block)" if t.dead else ("one-sided (fires on products only)"
                                                                  if t.one_sided else "ok")
            lines.append(f"{t.name:<{w}}  {t.n_reactants:<9}  {' / '.join(map(str, t.compatible)):<30}  {status}")
        lines.append(f"block actions from one state, summed over template orientations: {self.n_block_actions}")
        lines.append("verdict: " + ("ok" if self.ok else "problems found"))
        return "\n".join(lines)


def doctor(blocks: str | os.PathLike[str] | Sequence[str] | BlockLibrary,
           templates: str | os.PathLike[str] | Sequence[ReactionTemplate] = "builtin") -> DoctorReport:
    """Check a block library against templates (see the module docstring). Unlike :func:`read_blocks`, invalid
    lines are collected, not raised; a file with no valid block at all still raises ``DataFileError``."""
    if isinstance(blocks, BlockLibrary):
        rows = [(i + 1, s, "") for i, s in enumerate(blocks.smiles)]
        where: Path | None = None
    elif isinstance(blocks, (str, os.PathLike)):
        where = Path(blocks)
        if not where.is_file():
            raise FileNotFoundError(f"{where}: no such building-block file")
        rows = _read_rows(where)
        if not rows:
            raise DataFileError(where, "no building blocks (the file is empty)")
    else:
        rows = [(i + 1, s, "") for i, s in enumerate(blocks)]
        where = None
    temps = load_templates(templates)
    invalid, dups, first, smiles = [], [], {}, []
    for ln, s, _ in rows:
        c = canonical(s)
        if c is None or "." in c:
            invalid.append((ln, s))
            continue
        if c in first:
            dups.append((ln, c, first[c]))
            continue
        first[c] = ln
        smiles.append(c)
    if not smiles:
        msg = f"no valid building block; line {invalid[0][0]}: invalid SMILES {invalid[0][1][:60]!r}"
        if where is not None:
            raise DataFileError(where, msg)
        raise ValueError(f"blocks: {msg}")
    lib = BlockLibrary(tuple(smiles))
    comp = compatibility(lib, temps)
    reports = tuple(TemplateReport(t.name, t.n_reactants, tuple(len(x) for x in c), t.source)
                    for t, c in zip(temps, comp))
    n_actions = sum(len(c[1 - p]) for t, c in zip(temps, comp) if t.n_reactants == 2 for p in (0, 1))
    return DoctorReport(len(rows), len(smiles), tuple(invalid), tuple(dups), reports, n_actions)
