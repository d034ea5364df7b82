#!/usr/bin/env python3
"""Scaffold ``packages/<slug>/`` from ``templates/package/`` (``make new PKG=<slug>``).

The scaffold passes ``ci/check_contract.py`` and its own tests before any method code is written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def scaffold(slug: str, *, root: Path = ROOT, title: str | None = None, summary: str | None = None) -> Path:
    if not SLUG_RE.match(slug):
        raise ValueError(f"PKG must be a lower-case slug like 'weighted-lowrank', got {slug!r}")
    dest = root / "packages" / slug
    if dest.exists():
        raise FileExistsError(f"{dest} already exists")
    module = slug.replace("-", "_")
    values = {
        "slug": slug,
        "module": module,
        "title": title or f"the {slug} method",
        "summary": summary or f"The {slug} method of the iclr25 federation.",
        "authors": "Authors",
        "code": "none",
        "date": dt.date.today().isoformat(),
    }
    template = root / "templates" / "package"
    files = sorted(p for p in template.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    rendered = []
    for src in files:
        rel = src.relative_to(template).as_posix().replace("__module__", module)
        text = src.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        rendered.append((dest / rel, text))
    leftover = [str(p) for p, t in rendered if "{{" in t]
    if leftover:
        raise RuntimeError(f"unfilled template placeholders in {leftover}")
    for path, text in rendered:  # render everything first, so that a failure leaves no half package
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("slug")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--title")
    ap.add_argument("--summary")
    args = ap.parse_args(argv)
    try:
        dest = scaffold(args.slug, root=args.root, title=args.title, summary=args.summary)
    except (ValueError, FileExistsError) as exc:
        print(f"new_package: error: {exc}", file=sys.stderr)
        return 2
    print(f"created {dest.relative_to(args.root)}; next: uv lock && make test PKG={args.slug}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
