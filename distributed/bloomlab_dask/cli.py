"""bloomlab-dask: runs `bloomlab COMMAND` cut into shards on a Dask distributed cluster,
then `bloomlab merge` here: stdout and exit status are the single run's.

    bloomlab-dask [--scheduler tcp://HOST:8786] [--shard-seconds S] [--resume DIR]
                  [--bloomlab PATH] [--task-timeout T] -- sweep-size ...

Without --scheduler, a local cluster of one worker per core. The shard count comes from
bloomlab's own estimate (`--estimate`: about S seconds a shard, at least one per worker)
and is recorded in the resume folder, so the same command run again skips the shards it
has. Each worker is checked before it counts (its bloomlab's build, the files the command
names), late joiners too (every task checks); progress goes to stderr.
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import worker

PLAN = "bloomlab-dask.plan"


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="bloomlab-dask",
        description="Run a bloomlab command sharded over a Dask cluster, merged exactly.",
        usage="bloomlab-dask [options] -- COMMAND [FLAGS...]",
    )
    parser.add_argument("--scheduler", help="tcp://HOST:8786 (default: a local cluster, one worker per core)")
    parser.add_argument("--shard-seconds", type=float, default=120.0, metavar="S",
                        help="about how long one task runs, from bloomlab's estimate (default 120)")
    parser.add_argument("--resume", metavar="DIR", help="keep the parts here; run again to skip the shards done")
    parser.add_argument("--bloomlab", default="bloomlab", metavar="PATH",
                        help="the bloomlab program, here and on every worker (default: bloomlab on PATH)")
    parser.add_argument("--task-timeout", type=float, default=0.0, metavar="T",
                        help="kill and retry a task running longer than T seconds (default: none)")
    parser.add_argument("--min-workers", type=int, default=1, metavar="K",
                        help="wait until K workers have joined before cutting the run (default 1)")
    parser.add_argument("--workers", type=int, default=0,
                        help="workers of the local cluster (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("give the bloomlab command after --, e.g. -- sweep-size --queries 1e10")
    if args.min_workers < 1 or args.workers < 0:
        parser.error("--min-workers and --workers: out of range (allowed: at least 1)")
    for flag, value in [("--shard-seconds", args.shard_seconds), ("--task-timeout", args.task_timeout)]:
        if not (value >= 0 and math.isfinite(value)) or (flag == "--shard-seconds" and value <= 0):
            parser.error(f"{flag} {value}: out of range (allowed: a positive number of seconds)")
    if any(a == "--shard" or a.startswith("--shard=") or a == "--partial" for a in args.command):
        parser.error("--shard and --partial are the driver's: give the command without them")
    return args


def say(text):
    print(f"bloomlab-dask: {text}", file=sys.stderr, flush=True)


def named_paths(command):
    """Files the command names that every worker needs: key files and exec programs."""
    paths = []
    for i, word in enumerate(command):
        flag, _, value = word.partition("=")
        if not value and i + 1 < len(command):
            value = command[i + 1]
        if flag in ("--keys", "--query-keys") and value.startswith("file:"):
            paths.append(value[len("file:"):])
        elif flag == "--filter" and value.startswith("exec:"):
            program = value[len("exec:"):].split()
            if program:
                paths.append(program[0])
    return paths


def local(bloomlab, args):
    """Runs bloomlab here; exits as it does when it fails (bad input: exit 2)."""
    try:
        out = subprocess.run([bloomlab, *args], capture_output=True, text=True)
    except OSError as error:
        say(f"--bloomlab {bloomlab}: {error}")
        sys.exit(2)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    return out.stdout


def shard_count(estimate, seconds, workers):
    """About `seconds` a shard, at least one shard per worker, at most one per unit."""
    units = max(1, estimate["units"])
    wanted = max(math.ceil(estimate["seconds"] / seconds), workers)
    wanted = math.ceil(wanted / workers) * workers
    return max(1, min(units, wanted))


def resume_plan(folder, command, build, count):
    """The shard count of the resume folder's run, recorded there if it is new; refuses a
    folder that holds another run."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, PLAN)
    plan = {"command": command, "build": build, "shards": count}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            held = json.load(f)
        if held["command"] != command or held["build"] != build:
            say(f"--resume {folder}: holds the parts of `{' '.join(held['command'])}` "
                f"({held['build']}), not of this command and build")
            sys.exit(2)
        return held["shards"]
    write_atomic(path, json.dumps(plan, indent=1) + "\n")
    return count


def write_atomic(path, text):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def client_for(args):
    from distributed import Client, LocalCluster

    if args.scheduler:
        return Client(args.scheduler), None
    cluster = LocalCluster(
        n_workers=args.workers or os.cpu_count() or 1, threads_per_worker=1,
        processes=True, dashboard_address=None,
    )
    return Client(cluster), cluster


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    bloomlab = shutil.which(args.bloomlab) or args.bloomlab
    estimate = json.loads(local(bloomlab, [*args.command, "--estimate"]))
    build = local(bloomlab, ["--version"]).strip()
    try:
        client, cluster = client_for(args)
    except OSError as error:  # no scheduler there
        say(f"--scheduler {args.scheduler}: {error}")
        return 2
    try:
        return drive(args, client, estimate, build)
    except KeyboardInterrupt:
        say("interrupted: cancelling the tasks and their bloomlab processes")
        return 130
    except Exception as error:  # a shard that failed on its worker: its message, exit 1
        say(f"error: {error}")
        return 1
    finally:
        try:
            client.run(worker.kill_children)
        except Exception:
            pass
        client.close()
        if cluster is not None:
            cluster.close()


def drive(args, client, estimate, build):
    import cloudpickle
    from distributed import as_completed

    cloudpickle.register_pickle_by_value(worker)
    paths = named_paths(args.command)
    program = args.bloomlab
    client.wait_for_workers(args.min_workers, timeout=600)
    workers = client.scheduler_info()["workers"]
    try:
        client.run(worker.check, program, build, paths)
    except Exception as error:  # the worker's Refused, unpickled as a class of its own
        if not refused(error):
            raise
        say(f"refused before work: {error}")
        return 2
    count = shard_count(estimate, args.shard_seconds, max(1, len(workers)))
    folder = args.resume or tempfile.mkdtemp(prefix="bloomlab-dask-")
    try:
        if args.resume:
            count = resume_plan(folder, args.command, build, count)
        done = {i for i in range(count) if os.path.exists(part_path(folder, i))}
        todo = [i for i in range(count) if i not in done]
        say(f"{estimate['units']} units in {count} shards on {len(workers)} workers"
            f"{f', {len(done)} shards already done' if done else ''}")
        futures = {
            client.submit(
                worker.run_shard, program, build, paths, args.command, i, count,
                args.task_timeout, key=f"bloomlab-shard-{i}-of-{count}-{os.getpid()}", pure=False,
            ): i
            for i in todo
        }
        progress = Progress(estimate["units"], count, len(done))
        try:
            for future in as_completed(futures):
                i = futures[future]
                try:
                    text = future.result()
                except Exception as error:
                    if not refused(error):
                        raise
                    say(f"refused: {error}")
                    client.cancel(list(futures))
                    return 2
                write_atomic(part_path(folder, i), text)
                progress.add(json.loads(text))
        except KeyboardInterrupt:
            say("interrupted: cancelling the tasks and their bloomlab processes")
            client.cancel(list(futures))
            client.run(worker.kill_children)
            return 130
        merged = subprocess.run([shutil.which(program) or program, "merge", folder])
        return merged.returncode
    finally:
        if not args.resume:
            shutil.rmtree(folder, ignore_errors=True)


def refused(error):
    """Whether a task's error is a worker's refusal (its class comes back by value)."""
    return type(error).__name__ == "Refused"


def part_path(folder, index):
    return os.path.join(folder, f"part-{index}.json")


class Progress:
    """Shards and units done, queries counted, time left, on stderr."""

    def __init__(self, units, shards, done):
        self.units, self.shards, self.done = units, shards, done
        self.units_done, self.queries, self.start = 0, 0, time.monotonic()

    def add(self, part):
        self.done += 1
        for row in part["counted"]:
            self.units_done += len(row["queries"])
            self.queries += sum(row["queries"])
        elapsed = time.monotonic() - self.start
        rate = self.units_done / elapsed if elapsed > 0 else 0
        left = self.units - self.units_done
        eta = f", {left / rate:.0f} s left" if rate > 0 and left > 0 else ""
        say(f"{self.done}/{self.shards} shards, {self.queries:.4g} queries counted{eta}")


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
