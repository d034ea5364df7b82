"""The synthesis MDP: states are molecules with their depth, actions are stop, a first block, a unimolecular
template, or a bimolecular (template, orientation) protocol together with a compatible block.

The action list follows the reference's "protocols" (Seo et al. 2025, Sec. 3.1): ``firstblock`` over every
block; ``unirxn_t``; ``birxn_t_p`` where the current molecule fills reactant position ``p`` of template ``t``
and the block fills the other position. Blocks compatible with each reactant position are found once by
substructure match (the reference's ``bb_mask``). Reaction outcomes, state features and matches are cached
by canonical SMILES, so revisiting a molecule costs a dictionary look-up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from rdkit import Chem

from .blocks import BlockLibrary
from .chem import mol_from_smiles, run_reaction, state_fingerprints
from .templates import ReactionTemplate

__all__ = ["Protocol", "SynthesisSpace", "compatibility"]


@dataclasses.dataclass(frozen=True)
class Protocol:
    """A bimolecular action family: template ``template`` (index), the state fills ``position``, the block
    the other one; ``pool`` holds the indices of compatible blocks."""

    template: int
    position: int
    pool: np.ndarray

    @property
    def key(self) -> tuple[int, int]:
        return (self.template, self.position)


def compatibility(blocks: BlockLibrary, templates: Sequence[ReactionTemplate]) -> list[list[np.ndarray]]:
    """``out[t][r]``: indices of the blocks that match reactant pattern ``r`` of template ``t``."""
    out = []
    for t in templates:
        row = []
        for patt in t.reactant_patterns:
            row.append(np.array([i for i, m in enumerate(blocks.mols) if m.HasSubstructMatch(patt)], dtype=np.int64))
        out.append(row)
    return out


class SynthesisSpace:
    """Blocks × templates with trajectory length limits ``min_len <= L <= max_len`` (reactions = L - 1).

    Raises ``ValueError`` for a template with no compatible block at any reactant position (a dead template),
    unless ``allow_dead=True``, which keeps it out of the action space instead.
    """

    def __init__(self, blocks: BlockLibrary, templates: Sequence[ReactionTemplate], *, max_len: int = 2,
                 min_len: int = 1, allow_dead: bool = False, compat: list[list[np.ndarray]] | None = None):
        if not isinstance(blocks, BlockLibrary):
            raise TypeError(f"blocks must be a BlockLibrary, got {type(blocks).__name__}")
        templates = list(templates)
        if not templates:
            raise ValueError("templates: the template list is empty")
        if not all(isinstance(t, ReactionTemplate) for t in templates):
            raise TypeError("templates must be ReactionTemplate objects (see read_templates)")
        for name, v in (("max_len", max_len), ("min_len", min_len)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if min_len > max_len:
            raise ValueError(f"min_len ({min_len}) must be <= max_len ({max_len})")
        self.blocks, self.templates, self.max_len, self.min_len = blocks, templates, max_len, min_len
        self.compat = compat if compat is not None else compatibility(blocks, templates)
        self.dead = [t.name for t, c in zip(templates, self.compat) if all(len(x) == 0 for x in c)]
        if self.dead and not allow_dead:
            src = {t.name: t.source for t in templates}
            raise ValueError("templates with no compatible building block: " +
                             ", ".join(f"{n} ({src[n]})" if src[n] else n for n in self.dead) +
                             "; check the SMARTS against the library (iclr25 rxnflow doctor) or pass allow_dead")
        self.uni = [i for i, t in enumerate(templates) if t.n_reactants == 1 and t.name not in self.dead]
        self.protocols: list[Protocol] = []
        for i, t in enumerate(templates):
            if t.n_reactants == 2:
                for p in (0, 1):
                    pool = self.compat[i][1 - p]
                    if len(pool):
                        self.protocols.append(Protocol(i, p, pool))
        self._mols: dict[str, Chem.Mol] = {}
        self._feat: dict[str, np.ndarray] = {}
        self._match: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._rxn: dict[tuple, str | None] = {}
        self._pool_sets = [set(p.pool.tolist()) for p in self.protocols]
        self._mirror = {}
        for j, pr in enumerate(self.protocols):
            for k, other in enumerate(self.protocols):
                if other.template == pr.template and other.position == 1 - pr.position:
                    self._mirror[j] = k
        #: exact in-degrees of 2-block products (canonical SMILES -> count), e.g. from enumeration
        self.parent_counts: dict[str, int] | None = None

    # ----------------------------------------------------------------------------------------- look-ups
    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    def with_blocks(self, blocks: BlockLibrary) -> SynthesisSpace:
        """The same templates and limits over another library (e.g. ``self.blocks.extend(new)``); old caches
        of reactions and states are kept (they do not depend on the library)."""
        new = SynthesisSpace(blocks, self.templates, max_len=self.max_len, min_len=self.min_len, allow_dead=True)
        new._mols, new._feat, new._match, new._rxn = self._mols, self._feat, self._match, self._rxn
        if new.protocols and [p.key for p in new.protocols] != [p.key for p in self.protocols]:
            raise ValueError("blocks: the new library changes which template orientations have compatible "
                             "blocks, so the trained protocol embeddings would not line up")
        return new

    def mol(self, smiles: str) -> Chem.Mol:
        m = self._mols.get(smiles)
        if m is None:
            i = self.blocks.index.get(smiles)
            m = self.blocks.mols[i] if i is not None else mol_from_smiles(smiles)
            self._mols[smiles] = m
        return m

    def features(self, smiles: Sequence[str]) -> np.ndarray:
        """State features (Morgan 2048 ‖ descriptors) of molecules, cached."""
        missing = [s for s in dict.fromkeys(smiles) if s not in self._feat]
        if missing:
            for s, f in zip(missing, state_fingerprints([self.mol(s) for s in missing])):
                self._feat[s] = f
        return np.stack([self._feat[s] for s in smiles])

    def matches(self, smiles: str) -> tuple[np.ndarray, np.ndarray]:
        """(uni mask over ``self.uni``, bi mask over ``self.protocols``) for a state molecule."""
        hit = self._match.get(smiles)
        if hit is None:
            mol = self.mol(smiles)
            uni = np.array([mol.HasSubstructMatch(self.templates[t].reactant_patterns[0]) for t in self.uni], bool)
            bi = np.array([mol.HasSubstructMatch(self.templates[pr.template].reactant_patterns[pr.position])
                           for pr in self.protocols], bool)
            hit = (uni, bi)
            self._match[smiles] = hit
        return hit

    def react_uni(self, smiles: str, template: int) -> str | None:
        key = (template, smiles)
        if key not in self._rxn:
            self._rxn[key] = run_reaction(self.templates[template].reaction, [self.mol(smiles)])
        return self._rxn[key]

    def react_bi(self, smiles: str, protocol: int, block: int) -> str | None:
        """Product of the state ``smiles`` and library block ``block`` under protocol ``protocol``."""
        pr = self.protocols[protocol]
        bsmi = self.blocks.smiles[block]
        pair = (smiles, bsmi) if pr.position == 0 else (bsmi, smiles)
        key = (pr.template, *pair)
        if key not in self._rxn:
            self._rxn[key] = run_reaction(self.templates[pr.template].reaction, [self.mol(s) for s in pair])
        return self._rxn[key]

    def n_parents(self, state: str, protocol: int, block: int, depth: int) -> int:
        """Incoming edges of the child made from ``state`` (at ``depth``) + ``block``, for the uniform P_B.

        At depth 1 the state is a block, so the mirrored edge (the block as the state, the state as the block,
        the other orientation) exists whenever the state is compatible with that orientation's pool: the count
        is 1 or 2. Deeper, the route's own edge is counted (a lower bound on the in-degree, documented in the
        README); an exact table from enumeration can replace this (``parent_counts`` in training).
        """
        if depth != 1:
            return 1
        if self.parent_counts is not None:
            prod = self.react_bi(state, protocol, block)
            if prod in self.parent_counts:
                return self.parent_counts[prod]
        si = self.blocks.index.get(state)
        k = self._mirror.get(protocol)
        if si is None or k is None:
            return 1
        _, bi = self.matches(self.blocks.smiles[block])
        return 2 if bi[k] and si in self._pool_sets[k] else 1
