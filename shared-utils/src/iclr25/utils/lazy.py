"""PEP 562 lazy exports for a package ``__init__``: public names are imported from their modules on first use,
so that ``import iclr25.<module>`` and ``iclr25 <slug> --help`` do not pay for torch or jax.

In ``__init__.py``::

    from iclr25.utils.lazy import lazy_exports

    _EXPORTS = {"Sampler": "diffusion", "train": "objectives"}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
    __all__ = [*_EXPORTS, "__version__"]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


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
