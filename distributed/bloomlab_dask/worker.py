"""What runs on a Dask worker: the checks before work, and one shard of a bloomlab run.

These functions are pickled by value (the workers need Dask, not this package). A shard runs
the worker's `bloomlab` as a child in its own process group that dies with its parent
(PR_SET_PDEATHSIG on Linux), registered (`_children`) so that `kill_children` (the driver's
Ctrl-C) can end it; its partial file's text is the task's result.
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



def _children():
    """The bloomlab processes this worker process runs now, by pid, their lock, and the
    checks this worker passed: held in sys.modules, since these functions arrive pickled by
    value, each task with its own globals."""
    registry = sys.modules.get("_bloomlab_dask_children")
    if registry is None:
        registry = types.ModuleType("_bloomlab_dask_children")
        registry.children, registry.lock, registry.checked = {}, threading.Lock(), set()
        registry = sys.modules.setdefault("_bloomlab_dask_children", registry)
    return registry


class Refused(Exception):
    """A worker that must not count: another build, or a file the command names missing."""


def _die_with_parent():
    """In the child, before exec: its own process group, killed when the worker dies."""
    os.setsid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass


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
        child = subprocess.Popen(
            args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=err, preexec_fn=_die_with_parent,
        )
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
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()


def kill_children():
    """Kills every bloomlab this worker process runs (the driver's Ctrl-C); how many."""
    registry = _children()
    with registry.lock:
        children = list(registry.children.values())
    for child in children:
        _kill(child)
    return len(children)
