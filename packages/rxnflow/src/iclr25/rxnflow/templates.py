"""Reaction templates: mapped reaction SMARTS with one or two reactants, read from text or JSON files.

A template is applied with RDKit's ``RunReactants``; the reactant patterns decide which building blocks are
compatible with each reactant position (the reference's ``bb_mask``).

References: Seo et al., "Generative Flows on Synthetic Pathway for Drug Design", ICLR 2025, Sec. 3.1.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.resources
import json
import os
from collections.abc import Sequence
from pathlib import Path

from rdkit import Chem
from rdkit.Chem import rdChemReactions

from iclr25.utils.io import DataFileError

from .chem import quiet_rdkit

__all__ = ["ReactionTemplate", "parse_template", "read_templates", "load_templates", "builtin_templates",
           "datamol_templates", "TOY_TEMPLATES"]

#: The bimolecular templates of the toy experiment (amine couplings whose products are enumerable).
TOY_TEMPLATES = ("amide_coupling", "sulfonamide", "reductive_amination", "urea")


@dataclasses.dataclass(frozen=True)
class ReactionTemplate:
    """One reaction template.

    Attributes: ``name``; ``smarts`` (the forward reaction SMARTS); ``n_reactants`` (1 or 2); ``source``
    (``file:line`` it was read from, for messages).
    """

    name: str
    smarts: str
    n_reactants: int
    source: str = ""

    @property
    def reaction(self) -> rdChemReactions.ChemicalReaction:
        rxn = _RXN_CACHE.get(self.smarts)
        if rxn is None:
            rxn = _compile(self.smarts)
            _RXN_CACHE[self.smarts] = rxn
        return rxn

    @property
    def reactant_patterns(self) -> tuple[Chem.Mol, ...]:
        rxn = self.reaction
        return tuple(rxn.GetReactantTemplate(i) for i in range(rxn.GetNumReactantTemplates()))

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "smarts": self.smarts, "n_reactants": self.n_reactants}


_RXN_CACHE: dict[str, rdChemReactions.ChemicalReaction] = {}


def _compile(smarts: str) -> rdChemReactions.ChemicalReaction:
    with quiet_rdkit():
        try:
            rxn = rdChemReactions.ReactionFromSmarts(smarts)
        except (ValueError, RuntimeError) as exc:
            raise ValueError(f"invalid reaction SMARTS {smarts!r}: {exc}") from None
    if rxn is None:
        raise ValueError(f"invalid reaction SMARTS {smarts!r}")
    rxn.Initialize()
    return rxn


def parse_template(smarts: str, *, name: str | None = None, source: str = "") -> ReactionTemplate:
    """Check and wrap one reaction SMARTS ``reactants>>product`` with 1 or 2 reactants and 1 product."""
    if not isinstance(smarts, str) or ">>" not in smarts:
        raise ValueError(f"{source or 'template'}: expected a reaction SMARTS 'reactants>>product', got {smarts!r}")
    try:
        rxn = _compile(smarts)
    except ValueError as exc:
        raise ValueError(f"{source + ': ' if source else ''}{exc}") from None
    n_r, n_p = rxn.GetNumReactantTemplates(), rxn.GetNumProductTemplates()
    if n_r not in (1, 2) or n_p != 1:
        raise ValueError(f"{source or 'template'}: a template needs 1 or 2 reactants and 1 product, "
                         f"got {n_r} reactants and {n_p} products in {smarts!r}")
    _RXN_CACHE[smarts] = rxn
    return ReactionTemplate(name or smarts, smarts, n_r, source)


def read_templates(path: str | os.PathLike[str]) -> list[ReactionTemplate]:
    """Read templates from a text file (``NAME SMARTS`` or ``SMARTS`` per line, ``#`` comments) or from a
    datamol-style ``.json`` (``{name: {"syn_smarts": ...}}``). Errors name the file and the line."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such template file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(p, f"not UTF-8 text ({exc})") from None
    if p.suffix.lower() == ".json":
        return _templates_from_json(text, p)
    out: list[ReactionTemplate] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if not body:
            continue
        fields = body.split()
        if len(fields) == 1:
            name, smarts = f"t{len(out)}", fields[0]
        elif len(fields) == 2:
            name, smarts = fields
        else:
            raise DataFileError(p, f"line {lineno}: expected 'NAME SMARTS' or 'SMARTS', got {len(fields)} fields")
        try:
            out.append(parse_template(smarts, name=name, source=f"{p.name}:{lineno}"))
        except ValueError as exc:
            raise DataFileError(p, f"line {lineno}: {str(exc).split(': ', 1)[-1]}") from None
    if not out:
        raise DataFileError(p, "no templates")
    names = [t.name for t in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataFileError(p, f"duplicate template names {dup}")
    return out


def _templates_from_json(text: str, p: Path) -> list[ReactionTemplate]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(p, f"not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise DataFileError(p, "expected a non-empty JSON object {name: {'syn_smarts': ...}}")
    out = []
    for name, entry in data.items():
        smarts = entry.get("syn_smarts") if isinstance(entry, dict) else entry
        if not isinstance(smarts, str):
            raise DataFileError(p, f"entry {name!r}: no 'syn_smarts' string")
        try:
            out.append(parse_template(smarts, name=name, source=f"{p.name}:{name}"))
        except ValueError as exc:
            raise DataFileError(p, f"entry {name!r}: {str(exc).split(': ', 1)[-1]}") from None
    return out


def builtin_templates(names: Sequence[str] | None = None) -> list[ReactionTemplate]:
    """The package's own 11 templates (8 bimolecular, 3 unimolecular), optionally only ``names``."""
    ref = importlib.resources.files("iclr25.rxnflow") / "data" / "templates.txt"
    with importlib.resources.as_file(ref) as path:
        templates = read_templates(path)
    if names is None:
        return templates
    by_name = {t.name: t for t in templates}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"names: unknown built-in templates {unknown}; have {sorted(by_name)}")
    return [by_name[n] for n in names]


def datamol_templates(*, max_reactants: int = 2) -> list[ReactionTemplate]:
    """The named reactions of datamol's ``reactions.json`` (``syn_smarts``), read from the installed datamol
    distribution's files without importing datamol (its import pulls a heavy tree). Templates RDKit
    cannot use with 1-2 reactants and one product are left out."""
    try:
        dist = importlib.metadata.distribution("datamol")
    except importlib.metadata.PackageNotFoundError:
        raise ImportError("datamol_templates needs the datamol package installed (pip install datamol)") from None
    path = Path(str(dist.locate_file("datamol/data/reactions.json")))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: datamol is installed but ships no reactions.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for name, entry in data.items():
        smarts = entry.get("syn_smarts") if isinstance(entry, dict) else None
        if not isinstance(smarts, str):
            continue
        try:
            t = parse_template(smarts, name=name, source=f"datamol:{name}")
        except ValueError:
            continue
        if t.n_reactants <= max_reactants:
            out.append(t)
    return out


def load_templates(spec: str | os.PathLike[str] | Sequence[ReactionTemplate] = "builtin") -> list[ReactionTemplate]:
    """Templates from ``"builtin"``, ``"toy"`` (the 4 amine couplings), ``"datamol"``, a file path, or a list."""
    if isinstance(spec, (list, tuple)):
        if not spec or not all(isinstance(t, ReactionTemplate) for t in spec):
            raise TypeError("templates must be a non-empty list of ReactionTemplate")
        return list(spec)
    if spec == "builtin":
        return builtin_templates()
    if spec == "toy":
        return builtin_templates(TOY_TEMPLATES)
    if spec == "datamol":
        return datamol_templates()
    if isinstance(spec, (str, os.PathLike)):
        return read_templates(spec)
    raise TypeError(f"templates must be 'builtin', 'toy', 'datamol', a path or a list, got {type(spec).__name__}")
