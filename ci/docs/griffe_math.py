"""A griffe extension for the API reference: docstrings write equations as reStructuredText
(``.. math::`` blocks, ``:math:`x``` roles). When griffe loads a docstring, each equation is converted to
MathML (``latex2mathml``) at build time, which browsers render natively: the site needs no MathJax, no web
fonts and no network.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":math:`([^`]+)`")


def rst_math_to_arithmatex(text: str, role: Any = None) -> str:
    """``.. math::`` + an indented block -> a ``$$`` block (at the directive's indentation);
    ``:math:`x``` -> ``$x$``. Other text is unchanged.

    >>> rst_math_to_arithmatex("a\\n\\n.. math::\\n\\n    x = 1\\n\\nb :math:`y`")
    'a\\n\\n$$\\nx = 1\\n$$\\n\\nb $y$'
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. math::\s*(.*)$", lines[i])
        if not m:
            out.append(_ROLE.sub(role or (lambda r: f"${r.group(1).strip()}$"), lines[i]))
            i += 1
            continue
        indent, first = m.group(1), m.group(2).strip()
        body: list[str] = [first] if first else []
        i += 1
        block_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                body.append("")
                i += 1
                continue
            width = len(line) - len(line.lstrip())
            if width <= len(indent):
                break
            block_indent = width if block_indent is None else min(block_indent, width)
            body.append(line)
            i += 1
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        cut = block_indent or 0
        eq = [b[cut:] if b.strip() else "" for b in body]
        # MathJax reads one display block; blank lines inside would end the Markdown paragraph
        eq = [e for e in eq if e.strip()]
        out += [f"{indent}$$"] + [f"{indent}{e}" for e in eq] + [f"{indent}$$", ""]
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + ("\n" if text.endswith("\n") else "")


_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\$\$\n(?P<body>.*?)\n(?P=indent)\$\$$", re.S | re.M)


def to_mathml(tex: str, *, display: bool) -> str:
    """LaTeX -> one line of MathML (``<math display="block">`` for display equations)."""
    import latex2mathml.converter  # noqa: PLC0415 - the docs dependency group

    html = latex2mathml.converter.convert(tex.strip(), display="block" if display else "inline")
    return html.replace("\n", " ")


def rst_math_to_mathml(text: str) -> str:
    """reStructuredText math -> MathML: display blocks become a ``<div class="math-display">`` paragraph,
    roles inline ``<math>`` elements."""
    # inline math sits in a <span>: Python-Markdown counts <math> among the block-level tags, so an equation that
    # starts a wrapped line of a parameter description would end the paragraph and split the description
    text = rst_math_to_arithmatex(
        text, role=lambda r: f'<span class="math-inline">{to_mathml(r.group(1), display=False)}</span>')

    def block(m: re.Match[str]) -> str:
        body = " ".join(line.strip() for line in m.group("body").split("\n"))
        return f'{m.group("indent")}<div class="math-display">{to_mathml(body, display=True)}</div>'

    return _BLOCK.sub(block, text)


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Attributes|Examples?|Notes?|Other Parameters)"
                      r":?\s*$")


def hoist_references(text: str) -> str:
    r"""Move a ``References: ...`` paragraph that follows a section (``Args:``, ``Returns``/``-------``, ...)
    up to just after the summary paragraph.

    The packages end docstrings with a ``References:`` line; after a section, Google and NumPy parsers read it
    as one more parameter ("References"). Where it stands before the first section it is plain prose.

    >>> hoist_references("Sum.\n\nArgs:\n    x: a\n\nReferences: Paper, Sec. 2.")
    'Sum.\n\nReferences: Paper, Sec. 2.\n\nArgs:\n    x: a'
    """
    paras = re.split(r"\n[ \t]*\n", text.strip("\n"))
    first_section = next((i for i, p in enumerate(paras) if _SECTION.match(p.lstrip().split("\n")[0].strip())),
                         None)
    if first_section is None:
        return text
    refs = [i for i, p in enumerate(paras) if i > first_section and p.lstrip().startswith("References:")]
    if not refs:
        return text
    moved = [paras[i] for i in refs]
    rest = [p for i, p in enumerate(paras) if i not in refs]
    at = max(1, min(first_section, len(rest)))
    return "\n\n".join(rest[:at] + moved + rest[at:])


_XREF = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|obj|exc|const|ref|term|doc):`(~?)([^`<]+?)(?:\s*<([^>`]+)>)?`")
#: Modules the site does not document (command-line glue and reproduction scripts); build_site uses it too.
NOT_API = {"cli", "commands", "__main__", "reproduction", "repro"}


def rst_roles_to_code(text: str, resolve: Any = None) -> str:
    """Sphinx cross-reference roles become links to the API pages where ``resolve(name)`` gives the documented
    object's path (mkdocstrings' ``[`f`][iclr25.pkg.mod.f]``), and inline code elsewhere (``:func:`~a.b.f```
    -> ```f```; ``:class:`X``` -> ```X```; ``:ref:`label <target>``` -> ```label```), so no raw role reaches a page
    and no link points at an object that is not on the site.

    >>> rst_roles_to_code("see :func:`~iclr25.pgw.solver.pgw` and :class:`Claim`")
    'see `pgw` and `Claim`'
    >>> rst_roles_to_code("see :func:`~iclr25.pgw.solver.pgw`", {"iclr25.pgw.solver.pgw": "iclr25.pgw.solver.pgw"}.get)
    'see [`pgw`][iclr25.pgw.solver.pgw]'
    """
    def repl(m: re.Match[str]) -> str:
        tilde, name, target = m.groups()
        name = name.strip()
        shown = f"`{name.rsplit('.', 1)[-1] if tilde else name}`"
        path = resolve((target or name).strip()) if resolve is not None else None
        return f"[{shown}][{path}]" if path else shown
    return _XREF.sub(repl, text)


def _final(obj: Any) -> Any:
    try:
        return obj.final_target if obj.is_alias else obj
    except Exception:  # noqa: BLE001 - griffe's alias errors: an unresolvable alias is simply not linked
        return None


def _lookup(scope: Any, dotted: str) -> Any:
    try:
        return _final(scope[dotted]) if dotted else _final(scope)
    except Exception:  # noqa: BLE001 - KeyError, or an alias that cannot be followed
        return None


def _on_site(obj: Any) -> bool:
    """Whether mkdocstrings renders ``obj`` on an API page (``build_site``: public modules, root packages with
    ``members: false``, members filtered by ``!^_``, ``__all__`` respected, objects without a docstring hidden)."""
    parts = obj.path.split(".")
    if parts[0] != "iclr25" or len(parts) < 2 or any(p.startswith("_") for p in parts[1:]):
        return False
    module = obj if obj.is_module else obj.module
    if module.name in NOT_API:
        return False
    if obj.is_module:
        return True
    if obj.docstring is None:
        return False
    parent = obj.parent
    if parent.is_module:
        if len(parent.path.split(".")) <= 2:  # the package's root module is rendered with members: false
            return False
        return parent.exports is None or obj.name in parent.exports
    return _on_site(parent)


def resolver(obj: Any) -> Any:
    """A ``resolve(name)`` for the roles in ``obj``'s docstring: the name is looked up as a full path, relative
    to the package (``.mod.f``), then in the scopes around ``obj`` (class, module, package); the documented
    object's path, or ``None``."""
    def resolve(name: str) -> str | None:
        name = name.lstrip("~")
        root = obj.package
        if name.startswith("."):
            pkg = obj.module
            while pkg.parent is not None and len(pkg.path.split(".")) > 2:
                pkg = pkg.parent
            candidates = [_lookup(pkg, name.lstrip("."))]
        elif name.split(".")[0] == root.name:
            candidates = [_lookup(root, name.split(".", 1)[1] if "." in name else "")]
        else:
            candidates, scope = [], obj
            while scope is not None:
                candidates.append(_lookup(scope, name))
                scope = scope.parent
        target = next((c for c in candidates if c is not None), None)
        return target.path if target is not None and _on_site(target) else None
    return resolve


def _walk(obj: Any):
    yield obj
    for member in list(obj.members.values()):
        if not member.is_alias:
            yield from _walk(member)


class RstMath(griffe.Extension):
    """Prepare every docstring griffe loads for the site: a trailing ``References:`` paragraph moves above the
    sections (see :func:`hoist_references`) and reStructuredText math becomes MathML."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:  # griffe calls it for every object
        if obj.docstring is None:
            return
        value = obj.docstring.value
        if "References:" in value:
            value = hoist_references(value)
        if "math::" in value or ":math:`" in value:
            value = rst_math_to_mathml(value)
        obj.docstring.value = value

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:  # griffe calls it once the package is loaded
        """Cross-reference roles become links (or inline code) once every object they may name is loaded."""
        for obj in _walk(pkg):
            if obj.docstring is not None and ":`" in obj.docstring.value:
                obj.docstring.value = rst_roles_to_code(obj.docstring.value, resolver(obj))
