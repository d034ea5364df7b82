"""Every path a command writes, declared once and checked before any work.

A command declares each of its output options with :func:`add_output` instead of ``add_argument``: run folders
(``--out DIR``), single files (``--out D.npy``, ``--plan P.npy``, ``--json report.json``, ``--transcript t.jsonl``),
outputs whose default is derived from an input (``DATA.partition.csv``) and the sidecars written beside a file
(``D.names.txt``). :func:`iclr25.utils.cli.run_main` then calls :func:`check_outputs` after parsing and before the
command's handler runs, so a bad output fails in one line (exit 2) before a second of work:

- the output is not an input of the command (compared by resolved path *and* by inode, so a hard link or another
  spelling of the same file is caught), does not hold an input (a folder), and is not inside a folder the
  command reads (it would read its own output back next time);
- an existing file, or a folder that holds a previous run (one of its ``run_files``), is kept unless the user
  passes ``--overwrite``; a symbolic link is never replaced (the error names its target);
- its nearest existing parent folder is writable, so a read-only location fails now, not after the work;
- a file output has one of the declared suffixes.

Writing stays with the command, through :func:`iclr25.utils.io.atomic_write` / :func:`~iclr25.utils.io.atomic_path`
(a temporary file renamed into place), so an interrupted run leaves no half-written file and ``--overwrite``
replaces only the files the command writes: nothing is deleted or renamed.

Examples
--------
>>> import argparse, tempfile, pathlib
>>> parser = argparse.ArgumentParser(prog="toy")
>>> _ = parser.add_argument("data", type=pathlib.Path)
>>> _ = add_output(parser, "--out", kind="file", suffixes=(".npy",), required=True, help="output matrix")
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.npy").write_bytes(b"x")
>>> args = parser.parse_args([str(d / "a.npy"), "--out", str(d / "a.npy")])
>>> try:
...     check_outputs(args)
... except OutputError as exc:
...     print(str(exc).split(" ")[0], "is also an input" in str(exc))
--out True
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .guards import OutputError

__all__ = ["OutputSpec", "OutputError", "add_output", "check_outputs", "check_output_path", "declared_outputs",
           "input_paths", "same_path", "OUTPUT_FLAGS"]

#: Option names the contract check treats as outputs: each must be declared with :func:`add_output`.
OUTPUT_FLAGS = ("--out", "--output", "--plan", "--json", "--transcript", "--save", "--figure", "--checkpoint-out")

_SPECS = "_iclr25_outputs"


@dataclasses.dataclass(frozen=True)
class OutputSpec:
    """One output option of a command (made by :func:`add_output`; read by :func:`check_outputs`)."""

    flag: str
    dest: str
    kind: str
    suffixes: tuple[str, ...] | None = None
    run_files: tuple[str, ...] = ("results.json",)
    sidecars: Callable[[Path], Sequence[Path]] | None = None
    default: Callable[[argparse.Namespace], Any] | None = None
    inputs: tuple[str, ...] = ()
    resumes: bool = False
    folder_if: Callable[[argparse.Namespace], bool] | None = None

    def kind_for(self, args: argparse.Namespace) -> str:
        """The kind of this output for these arguments (``folder_if`` turns a file output into a folder)."""
        return "folder" if self.folder_if is not None and self.folder_if(args) else self.kind

    def __post_init__(self) -> None:
        if self.kind not in ("file", "folder"):
            raise ValueError(f"kind must be 'file' or 'folder', got {self.kind!r}")


def _overwrite_exists(parser: argparse.ArgumentParser) -> bool:
    return "--overwrite" in parser._option_string_actions  # noqa: SLF001 - argparse keeps no public index


def add_output(parser: argparse.ArgumentParser | Any, flag: str = "--out", *, kind: str, help: str,
               default: str | os.PathLike[str] | Callable[[argparse.Namespace], Any] | None = None,
               required: bool = False, suffixes: Iterable[str] | None = None,
               run_files: Iterable[str] = ("results.json",),
               sidecars: Callable[[Path], Sequence[Path]] | None = None, inputs: Iterable[str] = (),
               resumes: bool = False, folder_if: Callable[[argparse.Namespace], bool] | None = None,
               dest: str | None = None, metavar: str | None = None, group: Any = None) -> argparse.Action:
    """Add the output option ``flag`` to ``parser`` and declare it, so :func:`check_outputs` checks it.

    Parameters
    ----------
    kind:
        ``"folder"`` (a run folder: new, or existing without a previous run) or ``"file"``.
    help:
        What is written there; the policy (``--overwrite``, inputs) is appended.
    default:
        A path, ``None`` (the option is optional and nothing is written without it), or a function of the parsed
        arguments that returns the path (an output named after an input: ``lambda a: a.data.with_suffix(...)``).
    suffixes:
        For files: the accepted suffixes, lower case with the dot (``(".npy",)``); ``None`` accepts any.
    run_files:
        For folders: files whose presence marks a previous run of this command (kept unless ``--overwrite``).
        Name every file the command writes at the top of the folder.
    sidecars:
        For files: a function of the output path that returns the other files the command writes beside it
        (checked like the output itself).
    inputs:
        ``dest`` names of the command's input options that are not typed ``pathlib.Path`` (those are found by
        themselves); the output may not be, hold or sit inside any of them.
    resumes:
        The command reads a previous state back from this folder on purpose (a training run that resumes):
        a previous run there is not refused.
    folder_if:
        For a file output whose kind depends on another option: a function of the parsed arguments that says the
        output is a folder this time (``lambda a: a.format == "nwb"``); ``run_files`` then apply.
    group:
        Add the option to this argument group of ``parser`` instead of the parser itself.

    Returns
    -------
    argparse.Action
        The option's action. The parser also gets ``--overwrite`` when it does not have it yet.
    """
    if not flag.startswith("--"):
        raise ValueError(f"flag must be an option such as '--out', got {flag!r}")
    dest = dest or flag[2:].replace("-", "_")
    sfx = None if suffixes is None else tuple(s.lower() for s in suffixes)
    if kind == "file":
        policy = "an existing file is replaced only with --overwrite; never an input"
        if sfx:
            policy = f"{'/'.join(sfx)}; " + policy
    elif kind == "folder":
        policy = ("new, or an existing folder whose other files are kept; a previous run there is written over only "
                  "with --overwrite" if not resumes else "a previous run there is resumed")
    else:
        raise ValueError(f"kind must be 'file' or 'folder', got {kind!r}")
    spec = OutputSpec(flag=flag, dest=dest, kind=kind, suffixes=sfx, run_files=tuple(run_files),
                      sidecars=sidecars, default=default if callable(default) else None, inputs=tuple(inputs),
                      resumes=resumes, folder_if=folder_if)
    shown = default if default is not None and not callable(default) else None
    target = group if group is not None else parser
    if shown is not None:
        help_text = f"{help} (default: {shown}; {policy})"
    else:
        help_text = f"{help} ({policy})"
    kwargs: dict[str, Any] = {"type": Path, "dest": dest, "help": help_text.replace("%", "%%")}
    if metavar:
        kwargs["metavar"] = metavar
    if required:
        kwargs["required"] = True
    else:
        kwargs["default"] = Path(shown) if shown is not None else None
    action = target.add_argument(flag, **kwargs)
    action.iclr25_output = spec  # type: ignore[attr-defined]
    if not _overwrite_exists(parser):
        common = next((g for g in parser._action_groups if g.title == "common options"), parser)  # noqa: SLF001
        common.add_argument("--overwrite", action="store_true",
                            help="replace what a previous run of this command wrote (other files are kept)")
    parser.set_defaults(**{_SPECS: (*parser._defaults.get(_SPECS, ()), spec)})  # noqa: SLF001
    return action


def declared_outputs(parser: argparse.ArgumentParser) -> list[OutputSpec]:
    """The outputs declared on ``parser`` (one command's parser) with :func:`add_output`."""
    return list(parser._defaults.get(_SPECS, ()))  # noqa: SLF001


def _flatten(value: Any) -> list[Path]:
    if isinstance(value, (str, os.PathLike)) and str(value) not in ("", "-"):
        return [Path(value)]
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _flatten(v)]
    return []


def input_paths(args: argparse.Namespace, specs: Sequence[OutputSpec] = ()) -> list[Path]:
    """The command's inputs: every ``pathlib.Path`` argument that is not an output, and the ``inputs`` the
    outputs name (``str`` options that hold paths)."""
    outputs = {s.dest for s in specs}
    named = {name for s in specs for name in s.inputs}
    found: list[Path] = []
    for name, value in vars(args).items():
        if name in outputs or name.startswith("_"):
            continue
        if name in named:
            found += _flatten(value)
        elif isinstance(value, Path) or (isinstance(value, (list, tuple)) and value
                                         and all(isinstance(v, Path) for v in value)):
            found += _flatten(value)
    return [p for p in found if p.exists()]


def same_path(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file or folder: the same resolved path, or the same inode."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _inside(child: Path, folder: Path) -> bool:
    """``child`` lies strictly inside ``folder`` (after resolving links)."""
    c, f = child.resolve(), folder.resolve()
    return c != f and f in c.parents


def _writable_parent(path: Path, flag: str, kind: str) -> None:
    probe = path if path.is_dir() else path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"{flag} {path}: {probe} is a file, so the {kind} cannot be created")
    target = path if (kind == "folder" and path.is_dir()) else probe
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {path} cannot be written: {target} is not writable")


def _check_link(path: Path, flag: str) -> None:
    if path.is_symlink():
        raise OutputError(f"{flag} {path} is a symbolic link (to {os.readlink(path)}); it is never replaced: give "
                          "the target's own path or a new name")


def _check_inputs(path: Path, flag: str, kind: str, inputs: Sequence[Path]) -> None:
    for inp in inputs:
        if path.exists() and same_path(path, inp):
            raise OutputError(f"{flag} {path} is also an input of this command ({inp}); choose another {kind}")
        if not path.exists() and path.resolve() == inp.resolve():
            raise OutputError(f"{flag} {path} is also an input of this command; choose another {kind}")
        if inp.is_dir() and _inside(path, inp):
            raise OutputError(f"{flag} {path} is inside the input folder {inp}, which the command reads; choose a "
                              f"{kind} outside it")
        if kind == "folder" and _inside(inp, path):
            raise OutputError(f"{flag} {path} holds the input {inp}; choose a folder that holds none of the inputs")


def check_output_path(path: str | os.PathLike[str], *, flag: str = "--out", kind: str = "file",
                      overwrite: bool = False, inputs: Iterable[str | os.PathLike[str]] = (),
                      suffixes: Iterable[str] | None = None, run_files: Iterable[str] = ("results.json",),
                      resumes: bool = False) -> Path:
    """Check one output path before any work (the rules of this module); returns it as a ``Path``.

    For a Python caller, or a command that learns an output path only after parsing. Raises
    :class:`~iclr25.utils.guards.OutputError` (a ``ValueError``) naming ``flag``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "D.npy").write_bytes(b"mine")
    >>> try:
    ...     check_output_path(d / "D.npy", suffixes=(".npy",))
    ... except OutputError as exc:
    ...     print("exists; pass --overwrite" in str(exc))
    True
    >>> check_output_path(d / "D.npy", suffixes=(".npy",), overwrite=True).name
    'D.npy'
    """
    if kind not in ("file", "folder"):
        raise ValueError(f"kind must be 'file' or 'folder', got {kind!r}")
    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise OutputError(f"{flag} is empty; give a {kind}")
    p = Path(path)
    ins = [Path(i) for i in inputs if i is not None and Path(i).exists()]
    if kind == "file":
        sfx = None if suffixes is None else tuple(s.lower() for s in suffixes)
        if sfx and p.suffix.lower() not in sfx:
            raise OutputError(f"{flag} must name a {' or '.join(sfx)} file, got {str(p)!r}")
        _check_link(p, flag)
        if p.is_dir():
            raise OutputError(f"{flag} {p} is a folder; give a file name")
        _check_inputs(p, flag, kind, ins)
        if p.exists() and not overwrite:
            raise OutputError(f"{flag} {p} exists; pass --overwrite to replace it, or choose another name")
    else:
        if p.exists() and not p.is_dir():
            raise OutputError(f"{flag} {p} is an existing file, not a folder; choose a new or existing folder")
        _check_inputs(p, flag, kind, ins)
        if p.is_dir():
            names = tuple(run_files)
            for name in names:
                _check_link(p / name, flag)
            previous = [n for n in names if (p / n).exists()]
            if previous and not overwrite and not resumes:
                raise OutputError(f"{flag} {p} already holds a run ({', '.join(previous)}); pass --overwrite to "
                                  "write over it, or choose another folder")
    _writable_parent(p, flag, kind)
    return p


def check_outputs(args: argparse.Namespace) -> list[Path]:
    """Check every output the parsed command declared (:func:`add_output`), before its handler runs.

    Fills in defaults that are functions of the other arguments, then checks each output and its sidecars
    (:func:`check_output_path`) against the command's inputs (:func:`input_paths`) and ``args.overwrite``, and
    that no two outputs are the same path. Returns the checked paths. Called by
    :func:`iclr25.utils.cli.run_main`; a command needs no call of its own.
    """
    specs: tuple[OutputSpec, ...] = getattr(args, _SPECS, ()) or ()
    if not specs:
        return []
    overwrite = bool(getattr(args, "overwrite", False))
    for spec in specs:
        if getattr(args, spec.dest, None) is None and spec.default is not None:
            value = spec.default(args)
            setattr(args, spec.dest, None if value is None else Path(value))
    inputs = input_paths(args, specs)
    checked: list[tuple[str, Path]] = []
    for spec in specs:
        value = getattr(args, spec.dest, None)
        if value is None:
            continue
        path = check_output_path(value, flag=spec.flag, kind=spec.kind_for(args), overwrite=overwrite, inputs=inputs,
                                 suffixes=spec.suffixes, run_files=spec.run_files, resumes=spec.resumes)
        checked.append((spec.flag, path))
        for side in (spec.sidecars(path) if spec.sidecars else ()):
            check_output_path(side, flag=f"{spec.flag} (beside it, {Path(side).name})", kind="file",
                              overwrite=overwrite, inputs=inputs)
            checked.append((spec.flag, Path(side)))
    for i, (flag_a, a) in enumerate(checked):
        for flag_b, b in checked[i + 1:]:
            if a.resolve() == b.resolve():
                raise OutputError(f"{flag_a} and {flag_b} name the same path {a}; give each its own")
    return [p for _, p in checked]
