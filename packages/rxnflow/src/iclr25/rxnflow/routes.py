"""Synthesis routes as JSON trees, and their replay.

A leaf is a building block ``{"smiles": S, "block": NAME}``; an inner node is a reaction
``{"smiles": PRODUCT, "template": NAME, "smarts": SMARTS, "reactants": [child, ...]}`` with the children in the
template's reactant order. A route carries its own SMARTS, so :func:`replay_route` needs no library: it re-runs
every reaction from the leaves up (with the same product rule as generation) and returns the product.
"""

from __future__ import annotations

import json
from typing import Any

from .chem import canonical, mol_from_smiles, run_reaction
from .templates import parse_template

__all__ = ["leaf", "reaction_node", "replay_route", "verify_route", "route_blocks", "route_depth"]


def leaf(smiles: str, name: str) -> dict[str, Any]:
    return {"smiles": smiles, "block": name}


def reaction_node(product: str, template_name: str, smarts: str, reactants: list[dict[str, Any]]) -> dict[str, Any]:
    return {"smiles": product, "template": template_name, "smarts": smarts, "reactants": reactants}


def replay_route(route: dict[str, Any] | str) -> str | None:
    """Re-run the route's reactions from its blocks; the canonical SMILES of the result (``None`` if a step
    gives no product). ``route`` may be the JSON text."""
    if isinstance(route, str):
        route = json.loads(route)
    if not isinstance(route, dict) or "smiles" not in route:
        raise ValueError("route must be a JSON object with a 'smiles' field")
    if "reactants" not in route:
        return canonical(route["smiles"])
    children = [replay_route(c) for c in route["reactants"]]
    if any(c is None for c in children):
        return None
    t = parse_template(route["smarts"], name=route.get("template"))
    if t.n_reactants != len(children):
        raise ValueError(f"route: template {t.name!r} takes {t.n_reactants} reactants, the node has {len(children)}")
    return run_reaction(t.reaction, [mol_from_smiles(c) for c in children])


def verify_route(route: dict[str, Any] | str) -> bool:
    """True when replaying the route gives its recorded product (canonical SMILES)."""
    if isinstance(route, str):
        route = json.loads(route)
    got = replay_route(route)
    return got is not None and got == canonical(route["smiles"])


def route_blocks(route: dict[str, Any]) -> list[str]:
    """The blocks (leaf SMILES) of a route, left to right."""
    if "reactants" not in route:
        return [route["smiles"]]
    return [b for c in route["reactants"] for b in route_blocks(c)]


def route_depth(route: dict[str, Any]) -> int:
    """Number of reactions on the longest path."""
    return 0 if "reactants" not in route else 1 + max(route_depth(c) for c in route["reactants"])
