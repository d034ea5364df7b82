"""Train/validation/test partitions: CCPart (the paper's connected-component partitioning), and the random
and Bemis–Murcko scaffold partitions it is compared with.

Every partition is returned as disjoint, sorted row ids of the input (never positions inside a subset:
the reference library's random partition mixes the two up, see the README).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from iclr25.utils.seeding import check_seed

from .similarity import _as_items, _check_threshold, _parse_molecules, check_thresholds

__all__ = [
    "BALANCES",
    "TIE_BREAKS",
    "TIE_RULES",
    "Partition",
    "ccpart",
    "ccpart_sweep",
    "random_partition",
    "scaffold_partition",
    "threshold_grid",
]

#: How components of equal size are ordered: seeded random, by smallest row id, or ``np.argsort``'s
#: default (introsort) order over components labelled by smallest row id, which is what the reference
#: implementation does (scipy labels components in that order) and is kept for parity.
TIE_BREAKS = ("random", "stable", "numpy")
#: When a pair with similarity exactly λ is an edge of the CCPart graph: ``">="`` (hestia-good 1.2.2 and
#: Hestia-GOOD since commit f9f35ca, 2025-06-09, ``sim_df2mtx``: ``metric >= threshold``) or ``">"``
#: (hestia-ood 0.0.36 and Hestia-GOOD before that commit: ``metric > threshold``).
TIE_RULES = (">=", ">")
#: Label balancing caps: each class's test share at most 1.3× its proportional share (``"proportional"``), or
#: 1.3× an equal share ``test_size·N / n_classes`` (``"equal"``, the reference's ``_balanced_labels``).
BALANCES = ("proportional", "equal")


@dataclasses.dataclass(frozen=True, eq=False)
class Partition:
    """Disjoint row ids of one train/validation/test partition.

    Attributes
    ----------
    train, valid, test : numpy.ndarray of int64
        Sorted, disjoint row ids whose union is ``range(n)``.
    n : int
        Number of rows partitioned.
    method : str
        ``"ccpart"``, ``"random"`` or ``"scaffold"``.
    threshold : float or None
        The similarity threshold λ (CCPart only).
    test_size, valid_size : float
        The requested fractions.
    viable : bool
        Whether the achieved test fraction reaches ``min_test_fraction × test_size``.
    n_components : int or None
        Number of connected components (CCPart) or scaffold groups.
    tie_rule : str or None
        ``">="`` or ``">"``: whether a pair at exactly λ was an edge (CCPart only).
    """

    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    n: int
    method: str
    threshold: float | None
    test_size: float
    valid_size: float
    viable: bool
    n_components: int | None = None
    tie_rule: str | None = None

    @property
    def test_fraction(self) -> float:
        return self.test.size / self.n

    @property
    def valid_fraction(self) -> float:
        return self.valid.size / self.n

    @property
    def train_fraction(self) -> float:
        return self.train.size / self.n


def threshold_grid(start: float = 0.30, stop: float = 0.95, step: float = 0.05) -> np.ndarray:
    """Thresholds ``start, start + step, ..., stop`` computed as exact hundredths.

    ``np.arange(0.3, 1, 0.05)`` gives ``0.35000000000000003``, and a similarity of exactly 0.35 would then
    fall on the wrong side of the threshold; rounding to 1e-10 keeps ties where a user expects them.

    Examples
    --------
    >>> threshold_grid(0.3, 0.45, 0.05).tolist()
    [0.3, 0.35, 0.4, 0.45]
    """
    for v, name in ((start, "start"), (stop, "stop")):
        if not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {v}")
    if not float(step) > 0:
        raise ValueError(f"step must be positive, got {step}")
    if stop < start:
        raise ValueError(f"stop must be >= start, got start={start}, stop={stop}")
    k = int(np.floor((stop - start) / step + 1e-9)) + 1
    return np.round(start + step * np.arange(k), 10)


def _check_fraction(value: Any, name: str, *, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    low_ok = value >= 0.0 if allow_zero else value > 0.0
    if not (low_ok and value < 1.0):
        raise ValueError(f"{name} must be in {'[0' if allow_zero else '(0'}, 1), got {value}")
    return value


def _check_sizes(test_size: Any, valid_size: Any) -> tuple[float, float]:
    test_size = _check_fraction(test_size, "test_size", allow_zero=False)
    valid_size = _check_fraction(valid_size, "valid_size", allow_zero=True)
    if test_size + valid_size >= 1.0:
        raise ValueError(f"test_size + valid_size must be < 1, got {test_size} + {valid_size}")
    return test_size, valid_size


def check_similarity(sim: Any, name: str = "sim") -> sp.csr_matrix:
    """Validate a square similarity matrix (sparse or dense) and return it as CSR."""
    if sp.issparse(sim):
        mat = sp.csr_matrix(sim)
    else:
        try:
            arr = np.asarray(sim)
        except Exception as exc:  # noqa: BLE001 - any conversion failure is a type error for the user
            raise TypeError(f"{name} must be a square similarity matrix, got {type(sim).__name__}") from exc
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"{name} must be a numeric similarity matrix, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D square similarity matrix, got shape {arr.shape}")
        mat = sp.csr_matrix(arr)
    if np.iscomplexobj(mat.data):  # never cast to its real part
        raise TypeError(f"{name} must hold real similarities, got complex dtype {mat.dtype}")
    if mat.shape[0] != mat.shape[1]:
        raise ValueError(f"{name} must be square (items × items), got shape {mat.shape}")
    if mat.shape[0] == 0:
        raise ValueError(f"{name} must not be empty; expected at least one item")
    if mat.data.size and not np.all(np.isfinite(mat.data)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return mat


def _group_labels(labels: Any, n: int, n_bins: int) -> np.ndarray | None:
    """Class ids for label balancing: categories as they are, continuous labels in quantile bins."""
    if labels is None:
        return None
    y = np.asarray(labels)
    if np.iscomplexobj(y):
        raise TypeError(f"labels must be real, got complex dtype {y.dtype}")
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be a 1-D array with one entry per item ({n}), got shape {y.shape}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("labels must be finite (no NaN or inf)")
    uniq, inv = np.unique(y, return_inverse=True)
    if y.dtype.kind == "f" and uniq.size > 0.5 * n:
        # continuous target: quantile bins, as the reference discretises regression labels
        edges = np.quantile(y, np.linspace(0, 1, n_bins + 1)[1:-1])
        return np.searchsorted(edges, y, side="right")
    return inv


def _check_choice(value: Any, choices: tuple[str, ...], name: str) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _component_order(sizes: np.ndarray, tie_break: str, rng: np.random.Generator) -> np.ndarray:
    """Components by ascending size; labels are canonical (ordered by smallest member), see
    :func:`_canonical`, so ``"stable"`` breaks ties by the smallest row id."""
    if tie_break == "random":
        return np.lexsort((rng.permutation(sizes.size), sizes))
    if tie_break == "stable":
        return np.argsort(sizes, kind="stable")
    return np.argsort(sizes)  # "numpy": the reference's np.argsort(counts) (introsort order)


def _class_caps(groups: np.ndarray, n_classes: int, fraction: float, balance: str) -> np.ndarray:
    class_n = np.bincount(groups, minlength=n_classes)
    share = fraction * class_n if balance == "proportional" else np.full(n_classes, fraction * groups.size / n_classes)
    return np.maximum(1.0, 1.3 * share)


def _fill(order: np.ndarray, sizes: np.ndarray, free: np.ndarray, n: int, fraction: float,
          comp_class: np.ndarray | None, class_cap: np.ndarray | None) -> np.ndarray:
    """Greedy CCPart assignment: whole components, smallest first, while the subset stays below ``fraction``.

    Returns a boolean mask over components. Without labels (``comp_class`` None) the greedy rule picks a
    prefix of the size-sorted free components (a component that does not fit means no larger one fits), so
    it is one ``cumsum``.
    """
    chosen = np.zeros(sizes.size, dtype=bool)
    cand = order[free[order]]
    if fraction <= 0 or cand.size == 0:
        return chosen
    if comp_class is None:
        fits = np.cumsum(sizes[cand]) / n < fraction
        chosen[cand[fits]] = True
        return chosen
    total = 0
    per_class = np.zeros(comp_class.shape[1], dtype=np.int64)
    for c in cand:  # one step per component; the per-class check makes the prefix rule inexact here
        if (total + sizes[c]) / n >= fraction:
            continue
        if np.any(per_class + comp_class[c] > class_cap):
            continue
        chosen[c] = True
        total += sizes[c]
        per_class += comp_class[c]
    return chosen


def _group_partition(comp: np.ndarray, n_comp: int, method: str, threshold: float | None, test_size: float,
                     valid_size: float, groups: np.ndarray | None, tie_break: str, rng: np.random.Generator,
                     min_test_fraction: float, balance: str = "proportional",
                     tie_rule: str | None = None) -> Partition:
    """Whole groups (component labels ``comp``), smallest first, to test, then validation; the rest trains."""
    n = comp.size
    sizes = np.bincount(comp, minlength=n_comp)
    order = _component_order(sizes, tie_break, rng)
    comp_class = test_cap = valid_cap = None
    if groups is not None:
        n_classes = int(groups.max()) + 1
        comp_class = np.zeros((n_comp, n_classes), dtype=np.int64)
        np.add.at(comp_class, (comp, groups), 1)
        test_cap = _class_caps(groups, n_classes, test_size, balance)
        valid_cap = _class_caps(groups, n_classes, valid_size, balance)
    test_c = _fill(order, sizes, np.ones(n_comp, dtype=bool), n, test_size, comp_class, test_cap)
    valid_c = _fill(order, sizes, ~test_c, n, valid_size, comp_class, valid_cap)
    part = np.zeros(n_comp, dtype=np.int8)
    part[valid_c] = 1
    part[test_c] = 2
    row_part = part[comp]
    test = np.flatnonzero(row_part == 2)
    viable = test.size / n >= min_test_fraction * test_size
    return Partition(np.flatnonzero(row_part == 0), np.flatnonzero(row_part == 1), test, n, method, threshold,
                     test_size, valid_size, bool(viable), int(n_comp), tie_rule)


def _check_min_fraction(min_test_fraction: Any) -> float:
    if isinstance(min_test_fraction, bool) or not isinstance(min_test_fraction, (int, float)):
        raise TypeError(f"min_test_fraction must be a number in (0, 1], got {type(min_test_fraction).__name__}")
    if not 0.0 < float(min_test_fraction) <= 1.0:
        raise ValueError(f"min_test_fraction must be in (0, 1], got {min_test_fraction}")
    return float(min_test_fraction)


def _canonical(labels: np.ndarray, n_comp: int) -> np.ndarray:
    """Relabel components in the order of their smallest member (the labels scipy gives the full graph)."""
    _, first = np.unique(labels, return_index=True)
    new = np.empty(n_comp, dtype=np.int32)
    new[np.argsort(first)] = np.arange(n_comp, dtype=np.int32)
    return new[labels]


def threshold_components(sim: sp.csr_matrix, thresholds: np.ndarray, tie_rule: str = ">=") -> list[np.ndarray]:
    """Connected-component labels of the graph ``sim >= λ`` (or ``sim > λ``) for every λ in ``thresholds``.

    Thresholds are processed from the highest down: the edges that appear between :math:`\\lambda_{k+1}` and
    :math:`\\lambda_k` join the components found at :math:`\\lambda_{k+1}`, so every stored entry is visited
    once for the whole grid instead of once per threshold. Ties are decided in the matrix's own precision
    (float32 from :func:`~iclr25.augood.similarity_matrix`: a Tanimoto of exactly 7/20 equals λ = 0.35).
    Labels are canonical: component ids in the order of their smallest member.
    """
    n = sim.shape[0]
    dtype = sim.data.dtype if sim.data.dtype.kind == "f" else np.dtype(np.float64)
    t = np.asarray(thresholds).astype(dtype)
    # number of thresholds an entry passes: the entry is an edge at λ_k iff passes > k
    side = "right" if tie_rule == ">=" else "left"
    passes = np.empty(sim.nnz, dtype=np.int16)  # in chunks: searchsorted's int64 result would be 8 B per entry
    for s in range(0, sim.nnz, 1 << 22):
        passes[s:s + (1 << 22)] = np.searchsorted(t, sim.data[s:s + (1 << 22)].astype(dtype, copy=False), side=side)
    rows = np.repeat(np.arange(n, dtype=np.int32), np.diff(sim.indptr))
    labels = np.arange(n, dtype=np.int32)
    n_comp = n
    out: list[np.ndarray] = [labels] * t.size
    for k in range(t.size - 1, -1, -1):
        new = np.flatnonzero(passes == k + 1)  # edges at λ_k that were not edges at λ_{k+1}
        er, ec = labels[rows[new]], labels[sim.indices[new]]
        link = er != ec  # edges inside a component found at a higher λ change nothing
        if link.any():
            g = sp.coo_matrix((np.ones(int(link.sum()), np.int8), (er[link], ec[link])), shape=(n_comp, n_comp))
            n_comp, lab = connected_components(g, directed=False)
            labels = _canonical(lab[labels], n_comp)
        out[k] = labels
    return out


def ccpart(sim: Any, threshold: float, *, test_size: float = 0.2, valid_size: float = 0.1, labels: Any = None,
           seed: int = 0, tie_break: str = "random", tie_rule: str = ">=", balance: str = "proportional",
           min_test_fraction: float = 0.9, n_bins: int = 10) -> Partition:
    """CCPart: connected components of the similarity graph, smallest components to the test set.

    1. Build the graph :math:`G_\\lambda = \\{(i, j) : \\mathrm{sim}(i, j) \\ge \\lambda\\}` (``tie_rule=">="``)
       or :math:`\\mathrm{sim}(i, j) > \\lambda` (``tie_rule=">"``) and its connected components.
    2. Sort the components by size, ascending (ties: ``tie_break``).
    3. Add whole components to the test set while :math:`(|\\mathrm{test}| + |C|) / N <` ``test_size``
       (and, with ``labels``, while every class stays within its cap, see ``balance``).
    4. The next components go to validation by the same rule with ``valid_size``; the rest is training.

    Because a component is never split, no training or validation item is linked to a test item: with
    ``">="`` every cross pair has similarity ``< threshold``, with ``">"`` every cross pair has similarity
    ``<= threshold``. At low λ a giant component can make the target test size unreachable: the
    partition is then returned with ``viable=False``.

    Parameters
    ----------
    sim : scipy.sparse matrix or 2-D array
        Square item × item similarity (e.g. from :func:`~iclr25.augood.similarity_matrix`). Pairs not
        stored count as 0, so a matrix stored at ``min_threshold <= threshold`` gives the same partition as
        the full one.
    threshold : float in [0, 1]
        λ.
    test_size, valid_size : float
        Target fractions; the achieved ones are at most these.
    labels : array-like, optional
        Class labels (or a continuous target, binned into ``n_bins`` quantile bins) to balance.
    seed : int
        Seed of the random tie order between equal-size components (``tie_break="random"``).
    tie_break : {"random", "stable", "numpy"}
        Order of equal-size components: seeded random, by smallest row id, or ``np.argsort``'s default order
        over components labelled by smallest row id (the reference's order, for parity).
    tie_rule : {">=", ">"}
        Whether a pair at exactly λ is an edge. ``">="`` is hestia-good 1.2.2 (and Hestia-GOOD's main
        branch since 2025-06); ``">"`` is hestia-ood 0.0.36.
    balance : {"proportional", "equal"}
        With ``labels``: a class may take at most 1.3× its proportional share of the subset
        (``1.3·test_size·N_c``), or 1.3× an equal share (``1.3·test_size·N / n_classes``, the reference's rule).
    min_test_fraction : float
        A partition is viable when ``|test| / N >= min_test_fraction × test_size``.
    n_bins : int
        Quantile bins for continuous labels.

    Returns
    -------
    Partition

    References
    ----------
    Paper Sec. 3.3 and Algorithm 1 (CCPart).

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0, .9, 0, 0, 0], [.9, 0, 0, 0, 0], [0, 0, 0, .8, 0], [0, 0, .8, 0, 0], [0] * 5])
    >>> p = ccpart(S, 0.5, test_size=0.7, valid_size=0.0, tie_break="stable")
    >>> p.test.tolist(), p.train.tolist()
    ([0, 1, 4], [2, 3])
    """
    threshold = _check_threshold(threshold, "threshold")
    return _sweep(sim, [threshold], test_size, valid_size, labels, seed, tie_break, tie_rule, balance,
                  min_test_fraction, n_bins, single=True)[0]


def ccpart_sweep(sim: Any, thresholds: Sequence[float], *, test_size: float = 0.2, valid_size: float = 0.1,
                 labels: Any = None, seed: int = 0, tie_break: str = "random", tie_rule: str = ">=",
                 balance: str = "proportional", min_test_fraction: float = 0.9,
                 n_bins: int = 10) -> list[Partition]:
    """:func:`ccpart` at every threshold, validating the inputs once and finding all components in one pass
    over the stored pairs (:func:`threshold_components`).

    References
    ----------
    Paper Sec. 3.4 (the GOOD curve is built from CCPart partitions over a grid of thresholds).
    """
    return _sweep(sim, thresholds, test_size, valid_size, labels, seed, tie_break, tie_rule, balance,
                  min_test_fraction, n_bins, single=False)


def _sweep(sim: Any, thresholds: Any, test_size: Any, valid_size: Any, labels: Any, seed: Any, tie_break: Any,
           tie_rule: Any, balance: Any, min_test_fraction: Any, n_bins: int, *, single: bool) -> list[Partition]:
    sim = check_similarity(sim)
    seed = check_seed(seed)
    test_size, valid_size = _check_sizes(test_size, valid_size)
    thresholds = check_thresholds(thresholds)
    min_test_fraction = _check_min_fraction(min_test_fraction)
    tie_break = _check_choice(tie_break, TIE_BREAKS, "tie_break")
    tie_rule = _check_choice(tie_rule, TIE_RULES, "tie_rule")
    balance = _check_choice(balance, BALANCES, "balance")
    groups = _group_labels(labels, sim.shape[0], n_bins)
    out = []
    for k, (t, comp) in enumerate(zip(thresholds, threshold_components(sim, thresholds, tie_rule), strict=True)):
        # one generator per threshold so that a threshold's partition does not depend on the others
        rng = np.random.default_rng(seed if single else [seed, k])
        out.append(_group_partition(comp, int(comp.max()) + 1, "ccpart", float(t), test_size, valid_size, groups,
                                    tie_break, rng, min_test_fraction, balance, tie_rule))
    return out


def _check_n(n_items: Any) -> int:
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)):
        raise TypeError(f"n_items must be a positive integer, got {type(n_items).__name__}")
    if n_items < 3:
        raise ValueError(f"n_items must be at least 3 (one item per subset), got {n_items}")
    return int(n_items)


def random_partition(n_items: int, *, test_size: float = 0.2, valid_size: float = 0.1, seed: int = 0) -> Partition:
    """Uniformly random partition of ``range(n_items)`` (the in-distribution baseline).

    ``round(test_size·n)`` rows go to test and ``round(valid_size·n)`` to validation, all as row ids of
    the full set.

    References
    ----------
    Paper Sec. 4 (random cross-validation split used as the in-distribution reference).

    Examples
    --------
    >>> p = random_partition(10, test_size=0.2, valid_size=0.1)
    >>> len(p.train), len(p.valid), len(p.test)
    (7, 1, 2)
    """
    n = _check_n(n_items)
    seed = check_seed(seed)
    test_size, valid_size = _check_sizes(test_size, valid_size)
    perm = np.random.default_rng(seed).permutation(n)
    n_test = max(1, int(round(test_size * n)))
    n_valid = int(round(valid_size * n))
    test = np.sort(perm[:n_test])
    valid = np.sort(perm[n_test:n_test + n_valid])
    train = np.sort(perm[n_test + n_valid:])
    return Partition(train, valid, test, n, "random", None, test_size, valid_size, True, None)


def scaffold_groups(smiles: Sequence[Any]) -> np.ndarray:
    """Group id of each molecule's Bemis–Murcko scaffold (acyclic molecules share the empty scaffold)."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    mols = _parse_molecules(_as_items(smiles, "smiles"), "smiles")
    keys = [MurckoScaffold.MurckoScaffoldSmiles(mol=m, includeChirality=False) for m in mols]
    _, inv = np.unique(np.asarray(keys, dtype=object).astype(str), return_inverse=True)
    return inv


def scaffold_partition(smiles: Sequence[Any], *, test_size: float = 0.2, valid_size: float = 0.1,
                       seed: int = 0, min_test_fraction: float = 0.9) -> Partition:
    """Bemis–Murcko scaffold partition: whole scaffold groups, smallest first, to test then validation.

    The same greedy rule as :func:`ccpart` with scaffold groups in place of connected components, so the
    two differ only in how items are grouped.

    References
    ----------
    Paper Sec. 2 (scaffold splits as a prior out-of-distribution criterion).

    Examples
    --------
    >>> p = scaffold_partition(["c1ccccc1C", "c1ccccc1CC", "C1CCCCC1", "CCO", "CCCO"], test_size=0.4,
    ...                        valid_size=0.0)
    >>> p.test.tolist()
    [2]
    """
    test_size, valid_size = _check_sizes(test_size, valid_size)
    seed = check_seed(seed)
    min_test_fraction = _check_min_fraction(min_test_fraction)
    comp = scaffold_groups(smiles)
    return _group_partition(comp, int(comp.max()) + 1, "scaffold", None, test_size, valid_size, None, "random",
                            np.random.default_rng(seed), min_test_fraction)
