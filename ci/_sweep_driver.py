"""What the input sweep and the size sweep run inside a package's environment to try one command line.

``RUN_CASE`` is Python source (the drivers are sent to the package's interpreter as text): it defines
``run_case(cli, argv, work, err, mem_gb, seconds)``, which runs ``cli.main(argv)`` in a forked child (working
folder ``work``, stderr to the file ``err``, stdout discarded, address space capped at ``mem_gb`` GiB) for at
most ``seconds``, and returns ``(status, elapsed)``: the child's wait status, or ``None`` when it was still
running at the limit (it is then killed).
"""

RUN_CASE = r'''
def run_case(cli, argv, work, err, mem_gb, seconds):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(work)
            fd = os.open(err, os.O_WRONLY | os.O_CREAT)
            os.dup2(fd, 2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            lim = int(mem_gb * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except BaseException:
            traceback.print_exc()
            rc = 99
        sys.stderr.flush()
        os._exit(rc if isinstance(rc, int) else 0)
    status = None
    while time.perf_counter() < t0 + seconds:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        time.sleep(0.05)
    elapsed = time.perf_counter() - t0
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return status, elapsed
'''
