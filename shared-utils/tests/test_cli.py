import os
import subprocess
import sys
from pathlib import Path

import pytest

from iclr25.utils import cli
from iclr25.utils.results import RunResult

from fixture_packages import make_method


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_method(site, "fixture-ok")
    make_method(site, "fixture-broken", broken=True)
    return site


def iclr25(*args, site=None, cwd=None):
    env = {**os.environ, "ICLR25_QUIET": "1"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "iclr25.utils", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120, check=False)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "iclr25"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "list" in proc.stdout and "demo" in proc.stdout


def test_list_shows_methods_and_import_errors(site):
    proc = iclr25("list", site=site)
    assert proc.returncode == 0, proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines()}
    assert "1.2.3" in lines["fixture-ok"] and "The fixture-ok fixture method." in lines["fixture-ok"]
    assert "[failed to import] ImportError: libfoo.so" in lines["fixture-broken"]


def test_demo_writes_results_and_index(site, tmp_path):
    out = tmp_path / "out"
    proc = iclr25("demo", "fixture-ok", "--out", str(out), "--seed", "2", site=site)
    assert proc.returncode == 0, proc.stderr
    run = RunResult.load(out / "fixture-ok" / "results.json")
    assert run.seed == 2 and run.metric("score").value == 2.5 and run.version == "1.2.3"
    index = (out / "README.md").read_text()
    assert "| fixture-ok | 1.2.3 | score ↑ | 2.5 | baseline: 0.25 | holds |" in index
    assert "[figure.png](fixture-ok/figure.png)" in index


def test_demo_all_reports_the_broken_method_and_still_indexes(site, tmp_path):
    out = tmp_path / "out"
    proc = iclr25("demo", "--all", "--out", str(out), site=site)
    assert proc.returncode == 1
    assert "demo failed for: fixture-broken" in proc.stderr
    index = (out / "README.md").read_text()
    assert "| fixture-broken | | | | | demo exited with status 1 |" in index
    assert "| fixture-ok | 1.2.3 | score ↑ | 0.5 | baseline: 0.25 | holds |" in index


def test_forwarding_and_errors(site):
    proc = iclr25("fixture-ok", "--help", site=site)
    assert proc.returncode == 0 and "demo" in proc.stdout and "repro" in proc.stdout
    proc = iclr25("fixture-ok", "fail", site=site)
    assert proc.returncode == 2 and "iclr25 fixture-ok: error: --n must be positive" in proc.stderr
    proc = iclr25("fixture-broken", "demo", site=site)
    assert proc.returncode == 1 and "failed to import" in proc.stderr
    proc = iclr25("nope", site=site)
    assert proc.returncode == 2 and "unknown method or command 'nope'" in proc.stderr
    proc = iclr25("demo", site=site)
    assert proc.returncode == 2 and "name at least one method" in proc.stderr
    proc = iclr25("demo", "nope", site=site)
    assert proc.returncode == 2 and "unknown method(s) ['nope']" in proc.stderr


def test_no_methods_installed_says_so(tmp_path):
    proc = iclr25("demo", "--all", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0 and "No iclr25 method packages are installed" in proc.stdout
    proc = iclr25("list")
    assert proc.returncode == 0 and "No iclr25 method packages are installed" in proc.stdout


def test_set_torch_threads_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="--threads must be an integer >= 1"):
            cli.set_torch_threads(bad)
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    try:
        cli.set_torch_threads(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(old)


def test_forwarding_imports_only_the_named_method(site):
    # the broken package is never imported when another method is asked for
    code = ("import sys; from iclr25.utils.cli import main\ntry:\n    main(['fixture-ok', '--help'])\n"
            "except SystemExit:\n    pass\nprint('broken imported:', 'iclr25.fixture_broken.cli' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert "broken imported: False" in proc.stdout, proc.stdout + proc.stderr


def test_run_main_turns_a_closed_pipe_into_a_quiet_exit(site):
    # `iclr25 fixture-ok demo | head -c 1`: the reader goes away; no traceback, status 141
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = ("import sys\nfrom iclr25.utils.cli import method_parser, run_main\n"
            "def big(args):\n    for _ in range(100000):\n        print('x' * 100)\n"
            "p, sub = method_parser('fixture-ok', 'd')\nsub.add_parser('big').set_defaults(func=big)\n"
            "sys.exit(run_main(p, ['big']))")
    proc = subprocess.run(f"{sys.executable} -c \"{code}\" | head -c 10 >/dev/null; echo rc=${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", capture_output=True, text=True, env=env,
                          check=False)
    assert "rc=141" in proc.stdout and "Traceback" not in proc.stderr, proc.stdout + proc.stderr


def test_errors_are_one_line_and_os_errors_are_user_errors(tmp_path, capsys):
    parser, sub = cli.method_parser("fixture-ok", "d")

    def multi(args):
        raise ValueError("first line\nsecond line")

    def missing(args):
        open(tmp_path / "nope.txt")  # noqa: SIM115 - the error is the point

    sub.add_parser("multi").set_defaults(func=multi)
    sub.add_parser("missing").set_defaults(func=missing)
    assert cli.run_main(parser, ["multi"]) == 2
    assert capsys.readouterr().err == "iclr25 fixture-ok: error: first line; second line\n"
    assert cli.run_main(parser, ["missing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.txt" in err


def test_the_command_clock_ends_with_the_command():
    from iclr25.utils import results

    parser, sub = cli.method_parser("fixture-ok", "d")
    sub.add_parser("noop").set_defaults(func=lambda args: 0)
    assert cli.run_main(parser, ["noop"]) == 0
    assert results._COMMAND_T0 is None  # a RunResult made later in a notebook times itself


def test_enable_jax_compilation_cache_uses_env_without_importing_jax(monkeypatch, tmp_path):
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.delenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", raising=False)
    monkeypatch.setenv("ICLR25_X_CACHE", str(tmp_path))
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    assert cli.enable_jax_compilation_cache("x", "ICLR25_X_CACHE") == str(tmp_path)
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path)
    assert os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert "jax" not in sys.modules


def test_enable_jax_compilation_cache_off_and_explicit(monkeypatch, tmp_path):
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.setenv("ICLR25_X_CACHE", "")
    assert cli.enable_jax_compilation_cache("x", "ICLR25_X_CACHE") is None
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("ICLR25_X_CACHE", str(tmp_path))
    assert cli.enable_jax_compilation_cache("x", "ICLR25_X_CACHE") is None
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "mine")


def test_add_run_command_takes_a_handler_by_name_and_imports_it_only_when_it_runs(tmp_path, capsys):
    import sys

    from iclr25.utils.cli import add_run_command, load_handler, method_parser, run_main

    mod = tmp_path / "lazy_handler_mod.py"
    mod.write_text("import json, pathlib\n"
                   "def run(args):\n"
                   "    args.out.mkdir(parents=True, exist_ok=True)\n"
                   "    (args.out / 'results.json').write_text(json.dumps({'seed': args.seed}))\n"
                   "    return 0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        parser, sub = method_parser("fixture", "lazy handlers")
        add_run_command(sub, "repro", "lazy_handler_mod:run", help="by name", default_out="x")
        assert "lazy_handler_mod" not in sys.modules  # not imported by building the parser
        assert run_main(parser, ["repro", "--out", str(tmp_path / "o"), "--seed", "3"]) == 0
        assert (tmp_path / "o" / "results.json").read_text() == '{"seed": 3}'
        # --out is still checked before the handler: a previous run needs --overwrite
        assert run_main(parser, ["repro", "--out", str(tmp_path / "o")]) == 2
        assert "--out" in capsys.readouterr().err
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lazy_handler_mod", None)
    with pytest.raises(ValueError, match="package.module:function"):
        load_handler("no_colon_here")


def test_run_result_publish_saves_results_json_prints_the_table_and_returns_0(tmp_path, capsys):
    from iclr25.utils.results import RunResult

    run = RunResult.start("fixture", "demo", seed=0, config={})
    run.add("accuracy", 0.5)
    assert run.publish(tmp_path) == 0
    assert RunResult.load(tmp_path / "results.json").metric("accuracy").value == 0.5
    assert "accuracy" in capsys.readouterr().out and run.wall_time_s is not None


def test_add_command_declares_the_common_options_once(capsys):
    parser, sub = cli.method_parser("toy", "a toy method")
    seen = {}
    p = cli.add_command(sub, "fit", lambda a: seen.setdefault("args", a) and 0, help="fit it",
                        description="Fit it to your data.", seed=True, overwrite="write over a previous fit",
                        force=True)
    p.add_argument("--steps", type=cli.positive_int("--steps"), default=3)
    lazy = cli.add_command(sub, "name", "os.path:basename", help="lazy handler")
    assert cli.run_main(parser, ["fit", "--seed", "4", "--overwrite"]) == 0
    args = seen["args"]
    assert (args.seed, args.overwrite, args.force, args.steps) == (4, True, False, 3)
    assert not hasattr(lazy.parse_args([]), "seed")            # only what was asked for
    text = p.format_help()
    assert "common options:" in text and text.index("--steps") < text.index("common options:")
    assert "write over a previous fit" in text and "random seed (default 0)" in text
    assert p.description == "Fit it to your data."


def test_bounded_float_names_the_flag():
    parse = cli.bounded_float("--rho", lambda v: 0 < v <= 1, "a number in (0, 1]")
    assert parse("1") == 1.0
    for bad in ("0", "1.5", "nan", "inf", "x"):
        with pytest.raises(Exception, match=r"--rho must be a number in \(0, 1\]"):
            parse(bad)
