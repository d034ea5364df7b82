"""iclr25.{{module}}: {{title}}."""

from importlib.metadata import version as _version

from .method import example as example

__version__ = _version("iclr25-{{slug}}")

__all__ = ["example", "__version__"]
