"""Detaching a CI server from the shell that starts it (shared by the .ci/*-server.py scripts)."""

import os


def daemonize(pid_file, log_file):
    """Detaches (double fork, new session); returns in the server process only.

    The pid file is written (atomically, by rename) before the starting command exits, so the
    caller can read it as soon as the command returns. Standard input becomes /dev/null; standard
    output and error go to `log_file` (appended), or to /dev/null without one. The caller binds
    its sockets first, so the ports answer when the command returns. The working directory stays, so
    relative paths given on the command line still work.
    """
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the intermediate process exits once it has written the pid file
        os._exit(0)
    os.setsid()
    second = os.fork()
    if second:
        if pid_file:
            with open(pid_file + ".tmp", "w") as f:
                f.write(f"{second}\n")
            os.replace(pid_file + ".tmp", pid_file)
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    out = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if log_file else null
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)


def start(detach, pid_file, log_file):
    """Runs the server here or detached (`detach`), its pid in `pid_file` either way; returns the
    pid file's absolute path (or None), which the server's stop handler compares before removing it."""
    pid_file = pid_file and os.path.abspath(pid_file)
    if detach:
        daemonize(pid_file, log_file and os.path.abspath(log_file))
    elif pid_file:
        with open(pid_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    return pid_file
