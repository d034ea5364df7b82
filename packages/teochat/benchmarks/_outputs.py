"""The benchmark scripts' output folder: declared with ``iclr25.utils.outputs.add_output`` and checked before the
work (a previous run's files are replaced only with ``--overwrite``; never a symbolic link)."""

from __future__ import annotations

import argparse

from iclr25.utils.outputs import OutputError, add_output, check_outputs


def add_out(ap: argparse.ArgumentParser, flag: str, default: str, run_files: tuple[str, ...]) -> None:
    """``flag`` (``--out``) DIR, default ``default``, for the files ``run_files``; and ``--overwrite``."""
    add_output(ap, flag, kind="folder", default=default, run_files=run_files,
               help=f"folder for {', '.join(run_files)}")


def parse_checked(ap: argparse.ArgumentParser, *, check: bool = True) -> argparse.Namespace:
    """Parse the command line and check the outputs before any work (one line, exit 2, when refused)."""
    args = ap.parse_args()
    if check:
        try:
            check_outputs(args)
        except OutputError as exc:
            ap.error(str(exc))
    return args
