"""Checkpoints that are whole or refused: a manifest with each part's content hash, written last.

A checkpoint made of several files (weights, a config, an energy table...) is saved as::

    start_save(folder)                      # drops the manifest of an earlier save (ours), so a save cut short
    ...write each part atomically...        # leaves no manifest behind
    write_manifest(folder, ["model.pt", "config.json"], meta={"format": 2})

and loaded after :func:`verify_manifest`, which refuses in one line (:class:`CheckpointError`, a ``ValueError``)
a folder without a manifest (a save cut short), a part that is missing, or a part whose bytes are not the bytes
the manifest names (parts from two different saves). Manifests are small JSON files; the hash is SHA-256.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> start_save(d)
>>> _ = (d / "a.txt").write_text("weights")
>>> _ = write_manifest(d, ["a.txt"], meta={"L": 3})
>>> verify_manifest(d)["meta"]
{'L': 3}
>>> _ = (d / "a.txt").write_text("other weights")
>>> try:
...     verify_manifest(d)
... except CheckpointError as exc:
...     print("a.txt is not the file this checkpoint was saved with" in str(exc))
True
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._atomic import atomic_write
from .io import DataFileError, path_inside

__all__ = ["CheckpointError", "MANIFEST", "start_save", "write_manifest", "verify_manifest", "file_sha256"]

#: The manifest's file name inside a checkpoint folder.
MANIFEST = "manifest.json"
_KIND = "iclr25-checkpoint-manifest"


class CheckpointError(ValueError):
    """A checkpoint folder is not whole: no manifest, a missing part, or parts from different saves."""


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read(folder: Path) -> dict[str, Any] | None:
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != _KIND or not isinstance(data.get("files"), dict):
        raise CheckpointError(f"{path}: not an iclr25 checkpoint manifest")
    return data


def start_save(folder: str | os.PathLike[str]) -> None:
    """Before writing a checkpoint's parts into ``folder``: remove the manifest an earlier save wrote there (only
    an iclr25 manifest; a user's file of that name is refused), so an interrupted save cannot pass as whole."""
    folder = Path(folder)
    path = folder / MANIFEST
    try:
        ours = path.is_file() and not path.is_symlink() and _read(folder) is not None
    except CheckpointError:
        ours = False
    if path.is_symlink() or (path.exists() and not ours):
        raise CheckpointError(f"{path} is not an iclr25 checkpoint manifest; it is never replaced: choose another "
                              "folder")
    if path.exists():
        path.unlink()


def write_manifest(folder: str | os.PathLike[str], files: Iterable[str], *,
                   meta: Mapping[str, Any] | None = None) -> Path:
    """Write ``folder/manifest.json`` naming each part (relative to ``folder``) with its size and SHA-256, after
    the parts are written. ``meta``: small JSON facts a loader checks (format version, sizes)."""
    folder = Path(folder)
    entries = {}
    for name in files:
        part = folder / name
        if not part.is_file():
            raise CheckpointError(f"{folder}: the part {name} was not written")
        entries[str(name)] = {"bytes": part.stat().st_size, "sha256": file_sha256(part)}
    doc = {"kind": _KIND, "files": entries, "meta": dict(meta or {})}
    path = folder / MANIFEST
    with atomic_write(path) as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    return path


def verify_manifest(folder: str | os.PathLike[str], files: Iterable[str] | None = None, *,
                    what: str = "checkpoint") -> dict[str, Any]:
    """Check that ``folder`` holds a whole checkpoint; returns the manifest (``files``, ``meta``).

    ``files``: parts the loader needs (each must be in the manifest). Raises :class:`CheckpointError` naming the
    folder and the part, or ``FileNotFoundError`` when ``folder`` does not exist.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such {what} folder")
    doc = _read(folder)
    if doc is None:
        raise CheckpointError(f"{folder}: no {MANIFEST}, so this {what} is not whole (a save that was cut short, or "
                              "one written by an older version): save it again")
    listed = doc["files"]
    for name in files or ():
        if name not in listed:
            raise CheckpointError(f"{folder}: {name} is not part of this {what} (its manifest lists "
                                  f"{', '.join(sorted(listed)) or 'nothing'})")
    for name, entry in listed.items():
        try:
            part = path_inside(folder, name, source=folder / MANIFEST, what="part")
        except DataFileError as exc:
            raise CheckpointError(str(exc)) from None
        if not isinstance(entry, dict):
            raise CheckpointError(f"{folder / MANIFEST}: the entry of {name} is not a record")
        if not part.is_file():
            raise CheckpointError(f"{folder}: {name} is missing; this {what} is not whole")
        if part.stat().st_size != entry.get("bytes") or file_sha256(part) != entry.get("sha256"):
            raise CheckpointError(f"{folder}: {name} is not the file this {what} was saved with (its parts come from "
                                  "different saves): save it again")
    return doc
