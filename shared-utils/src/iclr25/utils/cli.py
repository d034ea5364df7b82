"""The umbrella command ``iclr25`` and the helpers every package's own command line is built with.

Methods are discovered through the entry-point group ``iclr25.cli``: each package registers
``<slug> = "iclr25.<module>.cli:main"``, where ``main(argv: list[str] | None) -> int``.

::

    iclr25 list                                  # name, version, one-line summary of each installed method
    iclr25 demo NAME... | --all [--out DIR]      # run demos (one process each), then DIR/README.md of headlines
    iclr25 claims NAME [--rung test] [--out DIR] # decide the method's claims over seeds, write DIR/claims.json
    iclr25 NAME ARGS...                          # forward to that package's command line
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.metadata
import inspect
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ._atomic import atomic_write
from .guards import OutputError
from .outputs import add_output, check_output_path, check_outputs
from .results import ResultsError, RunResult, _fmt, cell, mark_command_start

__all__ = ["main", "discover", "MethodEntry", "method_parser", "add_run_command", "run_main", "error_line",
           "set_torch_threads", "enable_jax_compilation_cache", "write_demo_index", "positive_int", "positive_float",
           "nonnegative_float", "bounded_float", "add_force_argument", "load_handler", "add_command",
           "method_commands", "MethodCommands", "seed_list", "number_list",
           "package_parser"]

GROUP = "iclr25.cli"

#: the parsers :func:`run_main` is handed while :func:`package_parser` builds a package's command line
_CAPTURED: list[argparse.ArgumentParser] | None = None


# ------------------------------------------------------------------------------------ package CLI helpers
def method_parser(slug: str, description: str) -> tuple[argparse.ArgumentParser, Any]:
    """The top-level parser of ``iclr25 <slug>``, with ``--version`` and a required subcommand.

    Returns ``(parser, subparsers)``; add commands with :func:`add_run_command` or ``subparsers.add_parser``
    and give each a ``func`` default: ``sub.set_defaults(func=handler)`` where ``handler(args) -> int | None``.
    """
    try:
        version = importlib.metadata.version(f"iclr25-{slug}")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    parser = argparse.ArgumentParser(prog=f"iclr25 {slug}", description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"iclr25-{slug} {version}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    return parser, sub


class MethodCommands(NamedTuple):
    """What :func:`method_commands` returns: the top-level parser, its subparsers, and the ``demo`` and
    ``repro`` subcommand parsers (for arguments of their own)."""

    parser: argparse.ArgumentParser
    sub: Any
    demo: argparse.ArgumentParser
    repro: argparse.ArgumentParser


def method_commands(slug: str, description: str, *, demo: Callable[[argparse.Namespace], int | None] | str,
                    demo_help: str, repro: Callable[[argparse.Namespace], int | None] | str, repro_help: str,
                    train: str | None = None, quick: bool | str = False, jax_cache: str | None = None,
                    demo_files: Sequence[str] = (), repro_files: Sequence[str] = ()) -> MethodCommands:
    """The parser of ``iclr25 <slug>`` (:func:`method_parser`) with the two commands every package has.

    ``demo`` writes to ``results/<slug>`` and ``repro`` to ``results/<slug>-repro`` by default; both are
    :func:`add_run_command` commands (``--out``, ``--seed``, ``--overwrite``; ``--out`` checked before they run).
    Options the packages share, each added when given: ``train``, the help of ``demo --train`` (train here
    instead of loading the shipped checkpoint); ``quick``, ``repro --quick`` (a much smaller run, for smoke
    tests; a string for another help); ``jax_cache``, the environment variable of a JAX package's compilation
    cache (:func:`enable_jax_compilation_cache`, turned on here, before any command imports JAX);
    ``demo_files``/``repro_files``, the files besides ``results.json`` each writes into ``--out`` (a folder holding
    any of them is a previous run, kept unless ``--overwrite``).
    A package's ``main`` is then this call, one :func:`add_command` per other command, and
    ``return run_main(parser, argv)``.

    Examples
    --------
    >>> parser, sub, demo, repro = method_commands("toy", "a toy method", demo="os.path:basename",
    ...                                            demo_help="the demo", repro="os.path:dirname", repro_help="it")
    >>> args = parser.parse_args(["repro", "--seed", "2"])
    >>> args.out.as_posix(), args.seed, args.overwrite
    ('results/toy-repro', 2, False)
    >>> parser, *_ = method_commands("toy", "a toy", demo="os:getcwd", demo_help="d", repro="os:getcwd",
    ...                              repro_help="r", quick="a smaller run")
    >>> parser.parse_args(["repro", "--quick"]).quick
    True
    """
    if jax_cache is not None:
        enable_jax_compilation_cache(slug, jax_cache)
    parser, sub = method_parser(slug, description)
    d = add_run_command(sub, "demo", demo, help=demo_help, default_out=f"results/{slug}", run_files=demo_files)
    r = add_run_command(sub, "repro", _repro_on_backend(slug, repro), help=repro_help,
                        default_out=f"results/{slug}-repro", run_files=repro_files)
    from .parallel import add_backend_arguments  # noqa: PLC0415

    add_backend_arguments(r, own=False)
    if train is not None:
        d.add_argument("--train", action="store_true", help=train)
    if quick:
        r.add_argument("--quick", action="store_true",
                       help=quick if isinstance(quick, str) else "a much smaller run, for smoke tests")
    return MethodCommands(parser, sub, d, r)


def _repro_on_backend(slug: str, repro: Callable[[argparse.Namespace], int | None] | str
                      ) -> Callable[[argparse.Namespace], int | None]:
    """``repro``'s handler, which with ``--backend`` first measures the package's registered repro claims at
    their seeds on that backend (:meth:`~.claims.ClaimRegistry.prefetch`: local processes, a Dask or a Ray
    cluster), so that the reproduction then decides them from those measurements. Each seed is the same
    computation in a worker as in this process, so the results are those of a run without ``--backend``; the
    reproduction's other steps (figures, tables) run here as before. A package without a claims registry says
    so in one line."""

    def handler(args: argparse.Namespace) -> int | None:
        backend = None if getattr(args, "backend_own", True) else args.backend
        if backend in (None, "local") and not getattr(args, "backend_own", True):
            if args.address is not None:
                raise ValueError("--address names a cluster: give it with --backend dask or ray")
            if args.workers is not None and backend is None:
                raise ValueError("--workers is the number of parallel workers of --backend: give --backend too")
        if backend is not None:
            module = f"iclr25.{slug.replace('-', '_')}.claims"
            try:
                registry = importlib.import_module(module).REGISTRY
            except (ImportError, AttributeError):
                raise ValueError(f"--backend: iclr25 {slug} repro has no claims registry ({module}.REGISTRY) "
                                 "whose seeds could run in parallel") from None
            if not registry.claims_at("repro"):
                raise ValueError(f"--backend: iclr25 {slug} has no claims at the repro rung to run in parallel")
            _measure_on_backend(registry, "repro", registry.rung_seeds("repro"), backend=backend,
                                address=args.address, workers=args.workers, what="repro seed")
        return (load_handler(repro) if isinstance(repro, str) else repro)(args)

    return handler


def _measure_on_backend(registry: Any, rung: str, seeds: Sequence[int], *, backend: str, address: str | None,
                        workers: int | None, claim_ids: Sequence[str] | None = None, what: str = "seed") -> int:
    """Measure ``registry``'s claims at ``rung`` and ``seeds`` on ``backend`` (:class:`~.parallel.cluster`) into
    its cache, for ``iclr25 claims --backend`` and every ``repro --backend``; says how many tasks ran."""
    from .parallel import cluster  # noqa: PLC0415

    with cluster(backend, address=address, workers=workers) as (engine, n_jobs):
        n = registry.prefetch(rung, seeds, claim_ids=claim_ids, backend=engine, n_jobs=n_jobs)
    print(f"measured {n} {what} task(s) on --backend {backend}" + (f" at {address}" if address else ""), flush=True)
    return n


def load_handler(spec: str) -> Callable[[argparse.Namespace], int | None]:
    """The function named by ``"package.module:function"``, imported now (a handler whose imports are heavy
    is named this way, so that ``--help`` and the other commands do not pay for them).

    >>> load_handler("os.path:basename")("a/b")
    'b'
    """
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"handler {spec!r} is not of the form 'package.module:function'")
    return getattr(importlib.import_module(module), attr)


def add_run_command(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int | None] | str, *,
                    help: str, default_out: str, run_files: Sequence[str] = ()) -> argparse.ArgumentParser:
    """Add a ``demo``/``repro``-style command with ``--out DIR``, ``--seed N`` and ``--overwrite``.

    ``func`` is the handler, or its name ``"package.module:function"`` (:func:`load_handler`: imported only when
    the command runs). ``--out`` is declared with :func:`iclr25.utils.outputs.add_output`, so
    :func:`run_main` checks it before the handler runs: not an existing file, writable, and not a folder holding
    a previous run unless ``--overwrite`` is given. ``run_files``: the other files the command writes at the top
    of the folder (figures, tables, ``claims.json``), each of which also marks a previous run.
    """
    p = subparsers.add_parser(name, help=help, description=help)
    add_output(p, "--out", kind="folder", default=default_out, help="folder for results.json and figures",
               run_files=("results.json", *(f for f in run_files if f != "results.json")))
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    if isinstance(func, str):
        spec = func

        def handler(args: argparse.Namespace) -> int | None:
            return load_handler(spec)(args)
    else:
        handler = func
    p.set_defaults(func=handler)
    return p


def add_command(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int | None] | str, *,
                help: str, description: str | None = None, seed: bool | str = False,
                overwrite: bool | str = False, force: bool = False, **parser_kwargs: Any) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` run by ``func``, with the options every package spells the same way.

    Each package's ``cli.py`` is then a table of its commands: one call per command, followed only by the
    arguments that are the command's own. The shared options go to a ``common options`` group, listed after
    the command's own:

    - ``seed``: ``--seed N`` (default 0); ``True`` for the help "random seed (default 0)", a string for another;
    - ``overwrite``: ``--overwrite``; ``True`` for "replace an existing --out file", a string for another;
    - ``force``: ``--force`` (:func:`add_force_argument`).

    ``func`` is the handler, or its name ``"package.module:function"`` (:func:`load_handler`: imported only when
    the command runs). ``description`` (the text of ``<command> --help``) defaults to the handler's docstring,
    so a command is described once, where it is implemented (a handler named by a string has none until it is
    imported: pass ``description``); other keywords (``formatter_class``, ``epilog``) go to ``add_parser``.

    Examples
    --------
    >>> parser, sub = method_parser("toy", "a toy method")
    >>> p = add_command(sub, "fit", "os.path:basename", help="fit it", seed=True, overwrite=True, force=True)
    >>> args = parser.parse_args(["fit", "--seed", "3", "--force"])
    >>> args.seed, args.overwrite, args.force
    (3, False, True)
    >>> def cmd_greet(args):
    ...     '''Print a greeting; the docstring is the description of ``greet --help``.'''
    >>> add_command(sub, "greet", cmd_greet, help="greet").description
    'Print a greeting; the docstring is the description of ``greet --help``.'
    """
    if description is None and not isinstance(func, str) and func.__doc__:
        description = inspect.cleandoc(func.__doc__)
    p = subparsers.add_parser(name, help=help, description=description, **parser_kwargs)
    common = p.add_argument_group("common options")
    if seed:
        common.add_argument("--seed", type=int, default=0,
                            help=seed if isinstance(seed, str) else "random seed (default 0)")
    if overwrite:
        common.add_argument("--overwrite", action="store_true",
                            help=overwrite if isinstance(overwrite, str) else "replace an existing --out file")
    if force:
        add_force_argument(common)
    if isinstance(func, str):
        spec = func

        def func(args: argparse.Namespace) -> int | None:
            return load_handler(spec)(args)

    p.set_defaults(func=func)
    return p


def add_force_argument(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--force``: run a request the size guard (:func:`iclr25.utils.guards.check_size`) would refuse."""
    p.add_argument("--force", action="store_true",
                   help="run even when the estimated memory or time exceeds what this machine can give")


def run_main(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the chosen command; bad input becomes a one-line error and exit status 2.

    ``ValueError``, ``TypeError``, ``OSError`` (a missing, unreadable or unwritable file) and ``ImportError``
    (a missing extra) are user errors: one line ``<prog>: error: <message>`` on stderr, no traceback. A reader
    that goes away (``iclr25 pgw distance ... | head``) ends the command quietly with status 141, as Unix tools
    do. The command's clock (``RunResult.wall_time_s``) starts here.
    """
    if _CAPTURED is not None:  # package_parser: build, keep, do not run
        _CAPTURED.append(parser)
        return 0
    mark_command_start()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
        check_outputs(args)  # every output declared with add_output, before any work
        rc = args.func(args)
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except (ValueError, TypeError, OSError, ImportError) as exc:
        print(f"{parser.prog}: error: {error_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        detail = error_line(exc) if str(exc).strip() else "the request needs more memory than this machine has"
        print(f"{parser.prog}: error: out of memory ({detail}); choose smaller sizes", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    finally:
        mark_command_start(None, clear=True)  # a later RunResult outside a command times itself
    return 0 if rc is None else int(rc)


def package_parser(slug: str) -> argparse.ArgumentParser:
    """The parser of an installed package's ``iclr25 <slug>`` command line, built by its ``main`` but not run
    (for tools that walk every command's options: the CI input and size sweeps, documentation).

    >>> package_parser("no-such-method")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'iclr25.no_such_method'
    """
    module = importlib.import_module(f"iclr25.{slug.replace('-', '_')}.cli")
    # ``main`` ends in ``run_main(parser, argv)``: while ``_CAPTURED`` is a list, run_main keeps the parser there
    # and runs nothing
    global _CAPTURED
    _CAPTURED = []
    try:
        module.main([])
        captured = _CAPTURED
    finally:
        _CAPTURED = None
    if not captured:
        raise RuntimeError(f"iclr25.{slug.replace('-', '_')}.cli.main did not call iclr25.utils.cli.run_main")
    return captured[0]


def error_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (a multi-line message is joined with ``; ``).

    An ``OSError`` with a file name reads ``<file>: <reason>`` (not ``[Errno 17] File exists: 'x'``).
    """
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror}"
        if exc.filename2 is not None:
            text += f" (and {exc.filename2})"
        return text
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and text.startswith("[Errno "):  # "[Errno 28] No space left..." without a file
        text = text.split("] ", 1)[-1]
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot raise BrokenPipeError again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def positive_int(flag: str) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer >= 1 whose error names ``flag`` (``--steps must be an integer >= 1``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= 1, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= 1, got {value}")
        return value
    return parse


def bounded_float(flag: str, ok: Callable[[float], bool], what: str) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number with ``ok(value)`` true; the error names ``flag`` and ``what``.

    >>> bounded_float("--rho", lambda v: 0 < v <= 1, "a number in (0, 1]")("0.5")
    0.5
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {what}, got {text!r}") from None
        if not (value == value and abs(value) != float("inf") and ok(value)):
            raise argparse.ArgumentTypeError(f"{flag} must be {what}, got {text}")
        return value
    return parse


def positive_float(flag: str) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number > 0 whose error names ``flag``."""
    return bounded_float(flag, lambda v: v > 0, "a finite number > 0")


def nonnegative_float(flag: str) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number >= 0 whose error names ``flag``."""
    return bounded_float(flag, lambda v: v >= 0, "a finite number >= 0")


def seed_list(text: str, flag: str = "--seeds") -> list[int]:
    """Parse a comma list of distinct non-negative seeds (``0,1,2``, ranges ``100-109`` included); the error
    names ``flag``.

    >>> seed_list("0, 1,2")
    [0, 1, 2]
    >>> seed_list("0,100-102")
    [0, 100, 101, 102]
    >>> seed_list("1,1")
    Traceback (most recent call last):
    ...
    ValueError: --seeds must be a comma list of distinct non-negative integers (e.g. 0,1,2), got '1,1'
    """
    bad = ValueError(f"{flag} must be a comma list of distinct non-negative integers (e.g. 0,1,2), got {text!r}")
    seeds: list[int] = []
    try:
        for v in (v.strip() for v in str(text).split(",")):
            if not v:
                continue
            lo, sep, hi = v.partition("-")
            if sep and lo and hi:
                if int(hi) < int(lo) or int(hi) - int(lo) > 100_000:
                    raise ValueError(v)
                seeds.extend(range(int(lo), int(hi) + 1))
            else:
                seeds.append(int(v))
    except ValueError:
        raise bad from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise bad
    return seeds


def number_list(text: str, flag: str, *, lo: float = -math.inf, hi: float = math.inf) -> list[float]:
    """Parse a comma list of finite numbers in ``[lo, hi]`` (at least one); the error names ``flag``.

    >>> number_list("0.5,0,1", "--times", lo=0, hi=1)
    [0.5, 0.0, 1.0]
    >>> number_list("0.5,2", "--times", lo=0, hi=1)
    Traceback (most recent call last):
    ...
    ValueError: --times must be a comma list of numbers in [0, 1], got '0.5,2'
    """
    where = "finite numbers" if math.isinf(lo) and math.isinf(hi) else f"numbers in [{lo:g}, {hi:g}]"
    bad = ValueError(f"{flag} must be a comma list of {where}, got {text!r}")
    try:
        values = [float(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise bad from None
    if not values or any(not math.isfinite(v) or not lo <= v <= hi for v in values):
        raise bad
    return values


def set_torch_threads(n: Any) -> None:
    """Apply a command's ``--threads`` option: torch's intra-op CPU threads (an integer >= 1).

    Small models on a shared 2-core machine run fastest on one thread, hence the packages' default of 1.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"--threads must be an integer >= 1, got {n!r}")
    import torch  # noqa: PLC0415 - only the torch packages call this

    torch.set_num_threads(n)


def enable_jax_compilation_cache(slug: str, env_var: str) -> str | None:
    """Keep compiled XLA programs across runs (JAX's persistent cache), so a second run starts fast.

    The folder is ``$<env_var>`` or ``~/.cache/iclr25-<slug>/jax``; an empty ``$<env_var>`` turns the cache
    off, and an explicit ``JAX_COMPILATION_CACHE_DIR`` is left alone. JAX is not imported: if it is not loaded
    yet the settings go into the environment variables JAX reads at import (so ``--help`` stays light),
    otherwise (``main()`` called from a notebook) into ``jax.config``. Returns the folder used, or ``None``.
    """
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None
    folder = os.environ.get(env_var, str(Path.home() / ".cache" / f"iclr25-{slug}" / "jax"))
    if not folder:
        return None
    if "jax" in sys.modules:
        jax = sys.modules["jax"]
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    else:
        os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    return folder


# ----------------------------------------------------------------------------------------- discovery
@dataclasses.dataclass
class MethodEntry:
    """One installed method: its entry point, and either its ``main`` or the error that loading raised."""

    name: str
    distribution: str
    version: str
    summary: str
    main: Callable[[list[str]], int] | None
    error: str | None = None


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The entry points of the ``iclr25.cli`` group, one per name, sorted, not loaded."""
    out, seen = [], set()
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name not in seen:
            seen.add(ep.name)
            out.append(ep)
    return out


def discover(*, load: bool = True) -> list[MethodEntry]:
    """Every entry point in the ``iclr25.cli`` group; with ``load`` each is imported and a failing import is
    kept with its error (``load=False`` reads metadata only, which is fast: nothing of the packages runs)."""
    out = []
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        summary = (dist.metadata.get("Summary") or "") if dist is not None else ""
        fn, error = None, None
        if load:
            try:
                fn = ep.load()
            except Exception as exc:  # noqa: BLE001 - one broken package must not break the others
                error = f"{type(exc).__name__}: {exc}"
        out.append(MethodEntry(ep.name, dist_name, version, summary, fn, error))
    return out


# ----------------------------------------------------------------------------------------- commands
def _cmd_list(methods: list[MethodEntry]) -> int:
    if not methods:
        print("No iclr25 method packages are installed (entry-point group 'iclr25.cli' is empty).")
        print("Install one from a clone of the repository, e.g.: pip install ./shared-utils ./packages/pgw")
        return 0
    width = max(len(m.name) for m in methods)
    for m in methods:
        status = m.summary if m.error is None else f"[failed to import] {m.error}"
        print(f"{m.name:<{width}}  {m.version:<10}  {status}")
    return 0


def _cmd_demo(methods: list[MethodEntry], names: list[str], run_all: bool, out: Path, seed: int,
              overwrite: bool = False) -> int:
    """Run each chosen demo in its own process (one method's threads, forks or memory never reach the next)."""
    by_name = {m.name: m for m in methods}
    if run_all:
        chosen = list(by_name)
        if not chosen:
            print("No iclr25 method packages are installed, so there is no demo to run.")
            return 0
    else:
        if not names:
            print("iclr25 demo: error: name at least one method, or pass --all", file=sys.stderr)
            return 2
        unknown = [n for n in names if n not in by_name]
        if unknown:
            print(f"iclr25 demo: error: unknown method(s) {unknown}; installed: {sorted(by_name)}",
                  file=sys.stderr)
            return 2
        chosen = names
    try:
        for name in chosen:
            check_output_path(out / name, flag=f"--out (its {name} run)", kind="folder", overwrite=overwrite)
    except ValueError as exc:
        print(f"iclr25 demo: error: {exc}", file=sys.stderr)
        return 2
    failures = []
    runs: dict[str, RunResult | str] = {}
    for name in chosen:
        print(f"== {name} ==", flush=True)
        cmd = [sys.executable, "-m", "iclr25.utils.cli", name, "demo", "--out", str(out / name), "--seed",
               str(seed)] + (["--overwrite"] if overwrite else [])
        rc = subprocess.run(cmd, check=False).returncode
        if rc:
            failures.append(name)
            runs[name] = f"demo exited with status {rc}"
            continue
        try:
            runs[name] = RunResult.load(out / name / "results.json")
        except (FileNotFoundError, ResultsError) as exc:
            runs[name] = f"no valid results.json: {exc}"
            failures.append(name)
    index = write_demo_index(out, runs)
    print(f"wrote {index}")
    if failures:
        print(f"demo failed for: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


def _cmd_claims(methods: list[MethodEntry], name: str, rung: str, seeds: str | None, out: Path | None,
                threads: int | None = 1, *, mode: str = "decide", only: str | None = None,
                device: str | None = None, force: bool = False, backend: str | None = None,
                address: str | None = None, workers: int | None = None) -> int:
    """Decide a method's registered claims at ``rung`` and write ``claims.json``; with ``mode="fresh"`` at new
    seeds (``claims-fresh.json``); with ``mode="calibrate"`` measure them (or the ``only`` ones, comma-separated
    ids, merged into the rung's existing file) at the calibration seeds and write the margins they allow
    (``claims-calibration.json``, or ``claims-calibration-<rung>.json`` at a rung other than ``test``). Every
    error is one line. ``mode="estimate"`` prints what one seed of ``rung`` costs (:class:`~.claims.RungCost`);
    ``mode="smoke"`` runs the rung's code path once, at its first seed, shrunk to one step (writes nothing). A rung
    with a cost (the ``paper`` rung) is refused on a machine without an accelerator unless ``force``.
    ``device`` (``--device``) is where the measuring code computes (``$ICLR25_DEVICE``); ``backend``,
    ``address`` and ``workers`` measure the seeds in parallel (:class:`~.parallel.cluster`)."""
    import importlib  # noqa: PLC0415

    from .claims import FRESH_FILE, calibration_file, load_calibration  # noqa: PLC0415
    from .device import DEVICE_ENV, accelerator_present, parse_device  # noqa: PLC0415

    by_name = {m.name: m for m in methods}
    if name not in by_name:
        print(f"iclr25 claims: error: unknown method {name!r}; installed: {sorted(by_name)}", file=sys.stderr)
        return 2
    try:
        chosen = None if seeds is None else seed_list(seeds)
        if mode == "fresh" and chosen is not None:
            raise ValueError("--fresh draws its own seeds; give --seeds or --fresh, not both")
        only_ids = None if only is None else [x.strip() for x in only.split(",") if x.strip()]
        if only is not None and mode != "calibrate":
            raise ValueError("--only picks the claims to calibrate: it needs --calibrate (claims.json and "
                             "claims-fresh.json always hold every claim of the rung)")
        if only_ids == []:
            raise ValueError("--only: give claim ids, comma-separated")
        if mode in ("estimate", "smoke") and (chosen is not None or out is not None):
            raise ValueError(f"--{mode} measures nothing to keep: give it without --seeds and --out")
        if device is not None:
            os.environ[DEVICE_ENV] = parse_device(device)
        if mode == "smoke":
            os.environ["ICLR25_SMOKE"] = "1"
    except ValueError as exc:
        print(f"iclr25 claims: error: {exc}", file=sys.stderr)
        return 2
    if threads is not None:  # before the package imports torch or jax: their thread pools read these at import
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
        if threads == 1 and "intra_op_parallelism_threads" not in os.environ.get("XLA_FLAGS", ""):
            os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1").strip()
    try:
        registry = importlib.import_module(f"iclr25.{name.replace('-', '_')}.claims").REGISTRY
    except Exception as exc:  # noqa: BLE001 - one line, whatever the package raised on import
        print(f"iclr25 claims: error: {name} has no claims registry (iclr25.{name.replace('-', '_')}.claims."
              f"REGISTRY): {error_line(exc)}", file=sys.stderr)
        return 2
    try:
        registry.rung_seeds(rung)
    except ValueError as exc:
        print(f"iclr25 claims: error: --rung: {error_line(exc)}", file=sys.stderr)
        return 2
    cost = registry.costs.get(rung)
    if mode == "estimate":
        if cost is None:
            print(f"iclr25 claims: error: --estimate: {name} records no cost for rung {rung!r} (rungs with one: "
                  f"{sorted(registry.costs) or 'none'})", file=sys.stderr)
            return 2
        print(cost.explain(rung, len(registry.rung_seeds(rung))))
        return 0
    if cost is not None and mode != "smoke" and not force and not (cost.needs_accelerator and accelerator_present()):
        why = ("is meant for an accelerator and this machine has none" if cost.needs_accelerator else
               "runs at the paper's scale on CPU cores")
        print(f"iclr25 claims: error: --rung {rung} {why}: {cost.explain(rung, len(registry.rung_seeds(rung)))}; "
              "pass --force to run it here anyway, or --smoke for one step", file=sys.stderr)
        return 2
    if mode == "smoke":
        chosen = registry.rung_seeds(rung)[:1]
    command = f"iclr25 claims {name} --rung {rung}" + (f" --seeds {seeds}" if seeds else "") + \
        {"decide": "", "fresh": " --fresh", "calibrate": " --calibrate", "smoke": " --smoke"}[mode] + \
        (f" --only {','.join(only_ids)}" if only_ids else "")
    try:
        if backend is not None and mode in ("decide", "fresh", "calibrate"):
            at = (registry.fresh_seeds(rung) if mode == "fresh" else chosen if chosen is not None else
                  registry.calibration_seeds(rung) if mode == "calibrate" else registry.rung_seeds(rung))
            _measure_on_backend(registry, rung, at, backend=backend, address=address, workers=workers,
                                claim_ids=only_ids)
        if mode == "calibrate":
            cal = registry.calibrate(rung, chosen, only=only_ids, command=command)
        elif mode == "fresh":
            fresh = registry.fresh_seeds(rung)
            print(f"fresh seeds for {registry.package} {registry.version()} at rung {rung!r}: "
                  f"{', '.join(map(str, fresh))}")
            report = registry.run(rung, fresh, command=command, seeds_from="fresh")
        elif mode == "smoke":
            for cid in registry.claims_at(rung):
                registry.measure(cid, chosen[0], rung)
            print(f"smoke run of {name}'s rung {rung!r}: {len(registry.claims_at(rung))} claim(s) measured once "
                  f"at seed {chosen[0]}, one step each (nothing decided, nothing written)")
            return 0
        else:
            report = registry.run(rung, chosen, command=command)
    except (ValueError, ImportError) as exc:
        print(f"iclr25 claims: error: {error_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("iclr25 claims: error: out of memory while measuring the claims", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a claim's measuring code failed: one line, never a traceback
        print(f"iclr25 claims: error: measuring {name}'s claims failed: {type(exc).__name__}: {error_line(exc)}",
              file=sys.stderr)
        return 1
    if mode == "calibrate":
        if out is not None:
            path = out / calibration_file(rung)
            if path.is_file():  # keep the other claims' calibration, extend a claim's at new seeds
                try:
                    n_before = {e["id"]: len(e.get("seeds", [])) for e in cal.claims}
                    cal = cal.merged(load_calibration(path), registry.claims_at(rung))
                    for e in cal.claims:
                        if e["id"] in n_before and len(e.get("seeds", [])) > n_before[e["id"]]:
                            print(f"{e['id']}: joined with the seeds already in {path.name} ({len(e['seeds'])} "
                                  "seeds in all)")
                except ValueError as exc:
                    print(f"iclr25 claims: error: {error_line(exc)}", file=sys.stderr)
                    return 2
        print(cal.explain())
        if out is not None:
            print(f"wrote {cal.save(path)}")
        bad = cal.uncalibrated()
        if bad:
            print(f"margins not calibrated (not below the max margin): {', '.join(bad)}", file=sys.stderr)
            return 1
        return 0
    for r in report.results:
        print(r.explain())
    if out is not None:
        print(f"wrote {report.save(out, name=FRESH_FILE if mode == 'fresh' else 'claims.json')}")
    bad = report.unexpected()
    dead = [r.claim.id for r in report.results if r.claim.expect == "fails" and not r.alive]
    if bad:
        print(f"claims not as expected: {', '.join(r.claim.id for r in bad)}", file=sys.stderr)
    if dead:
        print(f"declared fails that are not alive: {', '.join(dead)}", file=sys.stderr)
    return 1 if bad or dead else 0


#: The first line of the index ``iclr25 demo`` writes: a README.md that starts otherwise is the user's, never replaced.
INDEX_TITLE = "# iclr25 demo results"


def _check_index(out: Path, overwrite: bool) -> None:
    """The index ``out/README.md`` may be written: absent, or an index this command wrote and ``--overwrite``."""
    index = Path(out) / "README.md"
    if index.is_symlink():
        raise OutputError(f"--out {out}: README.md is a symbolic link; it is never replaced: choose another folder")
    if not index.exists():
        return
    try:
        first = index.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].strip()
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot read README.md ({exc.strerror or exc})") from None
    if first != INDEX_TITLE:
        raise OutputError(f"--out {out} holds a README.md that is not an iclr25 demo index; it is never replaced: "
                          "choose another folder")
    if not overwrite:
        raise OutputError(f"--out {out} already holds a demo index (README.md); pass --overwrite to write over it, "
                          "or choose another folder")


def committed_claims(package: str) -> dict | None:
    """The committed ``claims.json`` of an installed package when it runs from a checkout (its folder holds one,
    as ``packages/<slug>/claims.json``), else ``None``."""
    import importlib.util  # noqa: PLC0415

    module = "iclr25." + package.removeprefix("iclr25-").replace("-", "_")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in [Path(p) for p in spec.submodule_search_locations]:
        path = folder.parents[2] / "claims.json" if len(folder.parents) > 2 else None
        if path is not None and path.is_file():
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
    return None


def _committed_cell(m, claims: dict | None) -> str:
    """What the committed claims.json says of the main claim a headline stands for."""
    if not m.claim:
        return "(names no main claim)"
    if claims is None:
        return f"`{m.claim}` (claims.json not found: an installed wheel)"
    c = {x.get("id"): x for x in claims.get("claims", [])}.get(m.claim)
    if c is None:
        return f"`{m.claim}`: **not in claims.json {claims.get('version', '')}**"
    kind = c.get("kind", "")
    verdict = "holds" if c.get("verdict") == "holds" else "**does not hold**"
    return (f"`{m.claim}` ({kind}): {verdict} at rung `{c.get('rung', '')}`, seeds "
            f"{', '.join(map(str, c.get('seeds', [])))} (claims.json {claims.get('version', '')})"
            + ("" if kind == "main" else "; **not a main claim**"))


def write_demo_index(out: Path, runs: dict[str, RunResult | str]) -> Path:
    """Write ``out/README.md``: per method its declared headline(s), ours vs the baseline with the direction
    and this run's verdict (or the one line saying why it does not hold), beside what the package's committed
    ``claims.json`` says of the main claim the headline stands for, then each run's details."""
    lines = [INDEX_TITLE, "",
             "| method | version | headline | ours | baseline | this run | main claim in claims.json | wall s | "
             "figures |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, run in runs.items():
        if isinstance(run, str):
            lines.append(f"| {name} | | | | | {cell(run)} | | | |")
            continue
        figs = " ".join(f"[{Path(f).name}]({name}/{f})" for f in run.figures)
        wall = "" if run.wall_time_s is None else f"{run.wall_time_s:.1f}"
        heads = run.headlines
        if not heads:
            lines.append(f"| {name} | {run.version} | (no headline declared) | | | | | {wall} | {figs} |")
            continue
        claims = committed_claims(run.package)
        for i, m in enumerate(heads):
            arrow = "↑" if m.higher_is_better else "↓"
            verdict = "holds" if m.holds else "**does not hold**"
            if not m.sane:
                verdict = "**failed its own sanity check**"
            if not m.holds and run.headline_note:
                verdict += f": {run.headline_note}"
            ours = _fmt(m.value) + (f" {m.unit}" if m.unit else "")
            base = f"{m.peer_name or 'baseline'}: {_fmt(m.peer)}"
            first = i == 0
            lines.append("| " + " | ".join(cell(c) for c in (
                name if first else "", run.version if first else "", f"{m.name} {arrow}", ours, base, verdict,
                _committed_cell(m, claims), wall if first else "", figs if first else "")) + " |")
    walls = [r.wall_time_s for r in runs.values() if isinstance(r, RunResult) and r.wall_time_s is not None]
    if walls:  # what `make demo` costs on this machine, measured (the root README points here, not to a guess)
        total = sum(walls)
        lines += ["", f"{len(walls)} demo(s) ran in {total:.0f} s together ({total / 60:.1f} min; the slowest "
                  f"{max(walls):.1f} s), one process each, on this machine."]
    for name, run in runs.items():
        if isinstance(run, RunResult):
            lines += ["", f"## {name}", "", run.to_markdown()]
    path = Path(out) / "README.md"
    with atomic_write(path) as f:
        f.write("\n".join(lines) + "\n")
    return path


def _umbrella_parser(methods: list[MethodEntry]) -> argparse.ArgumentParser:
    names = ", ".join(m.name for m in methods) or "(none installed)"
    parser = argparse.ArgumentParser(
        prog="iclr25",
        description="One command for the iclr25 methods. Installed methods: " + names,
        epilog="iclr25 NAME ARGS... forwards to that method's own command line (try iclr25 NAME --help).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list installed methods with version and summary")
    d = sub.add_parser("demo", help="run the demos of the named (or all) methods and index their results")
    d.add_argument("names", nargs="*", metavar="NAME")
    d.add_argument("--all", action="store_true", help="run every installed method's demo")
    d.add_argument("--overwrite", action="store_true",
                   help="write over previous demo runs and the index in --out (nothing else there is touched)")
    add_output(d, "--out", kind="folder", default="results", run_files=(),
               help="folder for one run folder per method and the index README.md")
    d.add_argument("--seed", type=int, default=0, help="seed passed to every demo (default: 0)")
    c = sub.add_parser("claims", help="decide a method's claims over seeds and write claims.json")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--rung", default="test", help="the scale rung the package defines (default: test)")
    c.add_argument("--seeds", default=None,
                   help="seeds, comma-separated, ranges allowed: 100-109 (default: the rung's own; with --calibrate "
                        "the registry's calibration seeds)")
    mode = c.add_mutually_exclusive_group()
    mode.add_argument("--fresh", action="store_true",
                      help="decide at new seeds (>= 1000, drawn from the date and the version) and write "
                           "claims-fresh.json: verdicts at seeds nobody tuned on")
    mode.add_argument("--estimate", action="store_true",
                      help="print what the rung costs where it is meant to run (GPU-hours, memory, data) and exit")
    mode.add_argument("--smoke", action="store_true",
                      help="run the rung's code once, at its first seed, shrunk to one step, on this machine "
                           "(a check that the paper rung runs; nothing is decided or written)")
    mode.add_argument("--calibrate", action="store_true",
                      help="measure the claims at the calibration seeds and write claims-calibration.json: per "
                           "claim the largest margin that passes at the rung's seeds with probability >= 95 %%")
    c.add_argument("--device", default=None, metavar="{auto,cpu,cuda,cuda:N,mps}",
                   help="where the measuring code computes (default: auto, the accelerator when one is present)")
    c.add_argument("--force", action="store_true",
                   help="run a rung meant for an accelerator (the paper rung) on a machine without one")
    from .parallel import add_backend_arguments  # noqa: PLC0415

    add_backend_arguments(c)
    c.add_argument("--only", default=None, metavar="ID,...",
                   help="with --calibrate: calibrate only these claims (comma-separated ids), keeping the others' "
                        "entries in the rung's calibration file; for claims too costly to measure all at once")
    add_output(c, "--out", kind="folder", run_files=("claims.json", "claims-fresh.json", "claims-calibration.json",
                                                     "claims-calibration-repro.json"),
               help="folder for claims.json / claims-fresh.json / claims-calibration.json (claims-calibration-"
                    "<rung>.json at a rung other than test) (default: print only)")
    c.add_argument("--threads", type=int, default=1,
                   help="CPU threads for torch/JAX (default 1: small models on a shared machine run fastest so; "
                        "0 leaves the libraries' defaults)")
    for m in methods:
        sub.add_parser(m.name, help=m.summary or "(failed to import)", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``iclr25`` command.

    ``iclr25 NAME ...`` imports only that method's command line, so one package's heavy imports never slow
    another's commands; ``list`` and ``demo`` import every installed method.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    eps = {ep.name: ep for ep in _entry_points()}
    if argv and argv[0] in eps and argv[0] not in ("list", "demo", "claims"):
        try:
            fn = eps[argv[0]].load()
        except Exception as exc:  # noqa: BLE001 - report the broken package, not a traceback
            print(f"iclr25: error: method {argv[0]!r} failed to import: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return 1
        return int(fn(argv[1:]) or 0)
    if argv and argv[0] not in ("list", "demo", "claims", "-h", "--help"):
        print(f"iclr25: error: unknown method or command {argv[0]!r}; installed methods: "
              f"{sorted(eps) or 'none'}", file=sys.stderr)
        return 2
    methods = discover(load=bool(argv) and argv[0] == "list")
    parser = _umbrella_parser(methods)
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        check_outputs(args)
        if args.command == "demo":
            _check_index(args.out, args.overwrite)
    except ValueError as exc:
        print(f"iclr25 {args.command}: error: {error_line(exc)}", file=sys.stderr)
        return 2
    if args.command == "list":
        return _cmd_list(methods)
    if args.command == "claims":
        return _cmd_claims(methods, args.name, args.rung, args.seeds, args.out, args.threads or None,
                           mode="fresh" if args.fresh else "calibrate" if args.calibrate else "estimate"
                           if args.estimate else "smoke" if args.smoke else "decide",
                           only=args.only, device=args.device, force=args.force, backend=args.backend,
                           address=args.address, workers=args.workers)
    try:
        return _cmd_demo(methods, args.names, args.all, args.out, args.seed, args.overwrite)
    except BrokenPipeError:
        _silence_stdout()
        return 141


def _entry() -> None:  # pragma: no cover - python -m iclr25.utils.cli
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    _entry()
