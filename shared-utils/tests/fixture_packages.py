"""Build tiny method packages registered through real entry points (a ``.dist-info`` folder on sys.path)."""

from __future__ import annotations

import textwrap
from pathlib import Path

CLI = '''
import argparse
import os
import time
from pathlib import Path

from iclr25.utils.cli import add_run_command, method_parser, run_main
from iclr25.utils.io import read_array, save_npz
from iclr25.utils.results import RunResult

if os.environ.get("FIXTURE_HEAVY_IMPORT"):
    import torch  # noqa: F401 - a fake module in the fixture site: what a careless cli.py does


def demo(args):
    time.sleep(float(os.environ.get("FIXTURE_SLEEP_BEFORE_START", "0")))
    value = 0.5 + args.seed
    if os.environ.get("FIXTURE_NONDETERMINISTIC"):
        value = float.fromhex(os.urandom(4).hex()[:6] + "p0")
    run = RunResult.start("iclr25-{slug}", "demo", seed=args.seed)
    peer = 10.0 if os.environ.get("FIXTURE_HEADLINE_LOSES") else 0.25
    run.add("score", value, peer=peer, peer_name="baseline", higher_is_better=True, headline=True,
            claim="score-beats-baseline")
    run.headline_note = os.environ.get("FIXTURE_HEADLINE_NOTE", "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "figure.png").write_bytes(b"\\x89PNG fake")
    run.add_figure("figure.png")
    run.finish().save(args.out / "results.json")
    print(run.to_markdown())


def fail(args):
    raise ValueError("--n must be positive, got -1")


def read(args):
    if os.environ.get("FIXTURE_SLOPPY_READ"):  # writes first, then fails with a traceback
        args.out.write_text("partial")
        import numpy as np
        x = np.load(args.path)
    else:
        x = read_array(args.path, what="--path file")
    save_npz(args.out, x=x)


def _direct_main(parser, argv):  # a command line that bypasses run_main (no command clock)
    args = parser.parse_args(argv)
    return args.func(args)


def main(argv=None):
    parser, sub = method_parser("{slug}", "A fixture method.")
    add_run_command(sub, "demo", demo, help="the demo", default_out="results/{slug}")
    add_run_command(sub, "repro", demo, help="the repro", default_out="results/{slug}-repro")
    add_run_command(sub, "fail", fail, help="always fails", default_out="x")
    r = sub.add_parser("read", help="read an array, write it to --out")
    r.add_argument("path", type=Path)
    r.add_argument("--out", type=Path, required=True)
    r.set_defaults(func=read)
    if os.environ.get("FIXTURE_NO_RUN_MAIN"):
        return _direct_main(parser, argv)
    return run_main(parser, argv)
'''


def make_method(site: Path, slug: str, *, version: str = "1.2.3", broken: bool = False,
                init_version: str | None = None) -> Path:
    """Create ``iclr25.<module>`` and its dist-info under ``site``; return the package's source root."""
    module = slug.replace("-", "_")
    pkg = site / "iclr25" / module
    pkg.mkdir(parents=True)
    if broken:
        (pkg / "__init__.py").write_text("")
        (pkg / "cli.py").write_text("raise ImportError('libfoo.so: cannot open shared object file')\n")
    else:
        version_expr = repr(init_version) if init_version else f'_v("iclr25-{slug}")'
        (pkg / "__init__.py").write_text(
            f"from importlib.metadata import version as _v\n__version__ = {version_expr}\n"
            "VALUE = 1\n__all__ = ['VALUE', '__version__']\n")
        (pkg / "cli.py").write_text(CLI.replace("{slug}", slug))
        (pkg / "__main__.py").write_text("import sys\nfrom .cli import main\nsys.exit(main())\n")
    dist = site / f"iclr25_{module}-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: iclr25-{slug}\nVersion: {version}\nSummary: The {slug} fixture method.\n")
    (dist / "entry_points.txt").write_text(f"[iclr25.cli]\n{slug} = iclr25.{module}.cli:main\n")
    root = site.parent / f"src-{slug}"
    (root / "examples").mkdir(parents=True)
    (root / "README.md").write_text(textwrap.dedent(f"""\
        # iclr25-{slug}

        ## Quickstart
        ```python
        from iclr25.{module} import VALUE
        assert VALUE == 1
        ```

        ## Command line
        """))
    (root / "examples" / "quickstart.py").write_text(
        f"# %% [markdown]\n# Fixture\n\n# %%\nfrom iclr25.{module} import VALUE\n\n# %%\nprint(VALUE)\n")
    return root
