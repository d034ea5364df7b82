"""PEP 562 lazy exports for a package ``__init__``: public names are imported from their modules on first use,
so that ``import iclr25.<module>`` and ``iclr25 <slug> --help`` do not pay for torch or jax.

In ``__init__.py``, the public names are written once, as the imports a type checker reads::

    from typing import TYPE_CHECKING

    from iclr25.utils.lazy import lazy_exports, type_checking_exports

    if TYPE_CHECKING:
        from .diffusion import Sampler as Sampler
        from .objectives import train as train

    _EXPORTS = type_checking_exports(__file__)      # {"Sampler": "diffusion", "train": "objectives"}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
    __all__ = [*_EXPORTS, "__version__"]
"""

from __future__ import annotations

import ast
import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["lazy_exports", "type_checking_exports"]


def type_checking_exports(init_file: str | os.PathLike[str]) -> dict[str, str]:
    """``{public name: submodule}`` read from the relative imports under ``if TYPE_CHECKING:`` in a package's
    ``__init__.py`` (``init_file``, its ``__file__``): the one list of the package's lazily imported names,
    for type checkers and for :func:`lazy_exports` alike, so the two cannot disagree.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> init = pathlib.Path(tempfile.mkdtemp()) / "__init__.py"
    >>> _ = init.write_text("if TYPE_CHECKING:\\n    from .diffusion import Sampler as Sampler\\n")
    >>> type_checking_exports(init)
    {'Sampler': 'diffusion'}
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    exports: dict[str, str] = {}
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
                or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                exports.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    if not exports:
        raise ImportError(f"{init_file}: no relative imports under 'if TYPE_CHECKING:' to export")
    return exports


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps each public name to its submodule (relative,
    without the dot); a name is imported once, then cached in ``namespace`` (the package's ``globals()``).

    Examples
    --------
    >>> ns = {}
    >>> getattr_, dir_ = lazy_exports("json", {"JSONEncoder": "encoder"}, ns)
    >>> getattr_("JSONEncoder").__name__, "JSONEncoder" in ns
    ('JSONEncoder', True)
    >>> sorted(dir_())
    ['JSONEncoder']
    """
    exports = dict(exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
