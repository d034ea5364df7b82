"""What the input sweep and the size sweep run inside a package's environment to try one command line.

``RUN_CASE`` is Python source (the drivers are sent to the package's interpreter as text): it defines
``run_case(cli, argv, work, mem_gb, seconds, fsize=None, uid=None, env=None)``, which runs ``cli.main(argv)`` in a
forked child (its own process group; working folder ``work``; stdout discarded; stderr read back through a pipe;
address space capped at ``mem_gb`` GiB; with ``fsize`` the largest file it may write, ``RLIMIT_FSIZE``, as a full
disk; with ``uid`` run as that user, so a read-only folder is read-only even when the sweep runs as root; ``env``
entries set in the child) for at most ``seconds``, and returns ``(status, elapsed, stderr, t_end)``: the child's
wait status, or ``None`` when it was still running at the limit (its whole process group is then killed), the
seconds it ran, its stderr text and the wall-clock time (``time.time()``) it ended.

``describe_rc(status)`` turns the status into an exit code, ``"started"`` or ``"signal N"``.
"""

RUN_CASE = r'''
import fcntl as _fcntl, select as _select


def run_case(cli, argv, work, mem_gb, seconds, fsize=None, uid=None, env=None):
    t0 = time.perf_counter()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        rc = 99
        try:
            os.setpgid(0, 0)
            os.close(r)
            os.dup2(w, 2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.environ.update(env or {})
            lim = int(mem_gb * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            os.chdir(work)
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except BaseException:
            traceback.print_exc()
            rc = 99
        try:
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(rc if isinstance(rc, int) else 0)
    os.close(w)
    _fcntl.fcntl(r, _fcntl.F_SETFL, _fcntl.fcntl(r, _fcntl.F_GETFL) | os.O_NONBLOCK)
    chunks, status, eof = [], None, False

    def drain(wait):
        nonlocal eof
        if eof:
            return
        ready, _, _ = _select.select([r], [], [], wait)
        if ready:
            try:
                data = os.read(r, 65536)
            except BlockingIOError:
                return
            if data:
                if sum(map(len, chunks)) < 200000:
                    chunks.append(data)
            else:
                eof = True

    while time.perf_counter() < t0 + seconds:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        drain(0.05)
    elapsed = time.perf_counter() - t0
    t_end = time.time()
    if status is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
    else:
        try:
            os.killpg(pid, signal.SIGKILL)  # workers the command left behind
        except OSError:
            pass
    stop = time.perf_counter() + 1.0
    while not eof and time.perf_counter() < stop:
        drain(0.05)
    os.close(r)
    return status, elapsed, b"".join(chunks).decode("utf-8", "replace"), t_end


def describe_rc(status):
    if status is None:
        return "started"
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return os.WEXITSTATUS(status)
'''
