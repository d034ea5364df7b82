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
    text = rst_math_to_arithmatex(text, role=lambda r: to_mathml(r.group(1), display=False))

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


def rst_roles_to_code(text: str) -> str:
    """Sphinx cross-reference roles become inline code (``:func:`~a.b.f``` -> ```f```; ``:class:`X``` -> ```X```;
    ``:ref:`label <target>``` -> ```label```), so no raw role reaches a page.

    >>> rst_roles_to_code("see :func:`~iclr25.pgw.solver.pgw` and :class:`Claim`")
    'see `pgw` and `Claim`'
    """
    def repl(m: re.Match[str]) -> str:
        tilde, name, _target = m.groups()
        name = name.strip()
        return f"`{name.rsplit('.', 1)[-1] if tilde else name}`"
    return _XREF.sub(repl, text)


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
        if ":`" in value:
            value = rst_roles_to_code(value)
        obj.docstring.value = value
