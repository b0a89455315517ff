"""What runs on a Dask worker: the checks before work, and one shard of a bloomlab run.

These functions are pickled by value (the workers need Dask, not this package). A shard runs
the worker's `bloomlab` as a child in its own session, sent SIGTERM when the worker dies
(PR_SET_PDEATHSIG on Linux), registered (`_children`) so that `kill_children` (the driver's
Ctrl-C) can end it; its partial file's text is the task's result. A bloomlab is ended by
SIGTERM first, whose handler kills the process groups of the programs it runs (`exec:`):
SIGKILL alone would leave them behind.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import types

# Seconds a bloomlab has to end on SIGTERM before its group gets SIGKILL.
GRACE = 5.0


def _children():
    """The bloomlab processes this worker process runs now, by pid, their lock, and the
    checks this worker passed: held in sys.modules, since these functions arrive pickled by
    value, each task with its own globals."""
    registry = sys.modules.get("_bloomlab_dask_children")
    if registry is None:
        registry = types.ModuleType("_bloomlab_dask_children")
        registry.children, registry.lock, registry.checked = {}, threading.Lock(), set()
        registry.setpriv = _setpriv()
        registry = sys.modules.setdefault("_bloomlab_dask_children", registry)
    return registry


class Refused(Exception):
    """A worker that must not count: another build, or a file the command names missing."""


def _setpriv():
    """setpriv, where it takes --pdeathsig (util-linux 2.33 and later), else None."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    try:
        probe = [setpriv, "--pdeathsig", "TERM", "--", sys.executable, "-c", ""]
        works = setpriv and subprocess.run(probe, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        works = False
    return setpriv if works else None


def _die_with_parent():
    """In the child, before exec, where there is no setpriv: SIGTERM when the worker dies."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


def _spawn(args, **options):
    """`args` in a session of its own that gets SIGTERM when this worker dies. Through
    `setpriv --pdeathsig` where there is one: a `preexec_fn` makes Python fork the whole
    worker instead of vfork, 50 ms a task on a loaded machine, and is unsafe in a threaded
    process."""
    setpriv = _children().setpriv
    if setpriv:
        args = [setpriv, "--pdeathsig", "TERM", "--", *args]
        return subprocess.Popen(args, start_new_session=True, **options)
    return subprocess.Popen(args, start_new_session=True, preexec_fn=_die_with_parent, **options)


def _where(dask_worker=None):
    if dask_worker is not None:
        return f"{dask_worker.name} ({dask_worker.address})"
    try:
        from distributed import get_worker

        worker = get_worker()
        return f"{worker.name} ({worker.address})"
    except (ImportError, ValueError):
        return socket.gethostname()


def resolve(bloomlab, where):
    """The bloomlab program: a path, or a name on the worker's PATH."""
    found = shutil.which(bloomlab) if os.sep not in bloomlab else bloomlab
    if not found or not os.access(found, os.X_OK):
        raise Refused(f"worker {where}: no bloomlab program {bloomlab!r} (PATH or --bloomlab)")
    return found


def check(bloomlab, build, paths, dask_worker=None):
    """Refuses this worker if its bloomlab is another build or a path the command names is
    missing; returns its name. (`Client.run` passes `dask_worker`.)"""
    where = _where(dask_worker)
    program = resolve(bloomlab, where)
    out = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=60)
    theirs = out.stdout.strip()
    if theirs != build:
        raise Refused(f"worker {where}: {program} is {theirs!r}, the driver's is {build!r}")
    for path in paths:
        if not (os.path.exists(path) or shutil.which(path)):
            raise Refused(f"worker {where}: {path} does not exist there")
    return where


def run_shard(bloomlab, build, paths, command, index, count, timeout, attempts=3):
    """Shard `index` of `count` of `command`: the partial file's text. A run past `timeout`
    seconds is killed and run again, `attempts` times in all."""
    registry, asked = _children(), (bloomlab, build, tuple(paths))
    if asked not in registry.checked:
        check(bloomlab, build, paths)
        registry.checked.add(asked)
    program = resolve(bloomlab, _where())
    env = dict(os.environ, RAYON_NUM_THREADS=os.environ.get("BLOOMLAB_DASK_THREADS", "1"))
    for attempt in range(attempts):
        with tempfile.TemporaryDirectory(prefix="bloomlab-dask-") as folder:
            partial = os.path.join(folder, "part.json")
            quiet = [] if {"-q", "--quiet"} & set(command) else ["-q"]
            args = [program, *command, *quiet, "--shard", f"{index}/{count}", "--partial", partial]
            code, stderr = _run(args, env, timeout)
            if code == "timeout":
                continue
            if code != 0:
                raise RuntimeError(f"worker {_where()}: shard {index}/{count} exit {code}: {stderr}")
            with open(partial, encoding="utf-8") as f:
                return f.read()
    raise TimeoutError(f"shard {index}/{count} passed --task-timeout {timeout}s {attempts} times")


def _run(args, env, timeout):
    """Runs bloomlab as a registered child; (exit code or "timeout", stderr)."""
    with tempfile.TemporaryFile() as err:
        child = _spawn(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        registry = _children()
        with registry.lock:
            registry.children[child.pid] = child
        try:
            child.wait(timeout=timeout or None)
        except subprocess.TimeoutExpired:
            _kill(child)
            return "timeout", ""
        finally:
            with registry.lock:
                registry.children.pop(child.pid, None)
            if child.poll() is None:
                _kill(child)
        err.seek(0)
        return child.returncode, err.read().decode(errors="replace")[-2000:]


def _kill(child):
    """SIGTERM to the child's group, SIGKILL after GRACE seconds if it still runs."""
    for sig, wait in [(signal.SIGTERM, GRACE), (signal.SIGKILL, None)]:
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            pass
        try:
            child.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass


def kill_children():
    """Kills every bloomlab this worker process runs (the driver's Ctrl-C); how many."""
    registry = _children()
    with registry.lock:
        children = list(registry.children.values())
    for child in children:
        _kill(child)
    return len(children)
