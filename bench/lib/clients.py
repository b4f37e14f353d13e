"""Running benchmark client programs (pgbench, sysbench, psql, java, the
connection-storm client) bounded in time, and the error a failed cell raises.

Every client runs in its own process group, so a timeout kills it and
anything it started. A client that fails raises `CellError` with the part of
its output that says why; the runner records that as a failed cell and goes
on with the next one. `Family` is the contract each workload module
(pgbench, sysbench, ycsb, connstorm) fulfils for the runner.
"""

import dataclasses
import json
import math
import multiprocessing
import os
import signal
import subprocess
import time


class CellError(Exception):
    """A client run failed: str(e) is a short reason, .detail the output tail."""

    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.detail = detail


def run(cmd, timeout, env=None, cwd=None):
    """Runs cmd to completion within timeout seconds; returns (returncode,
    stdout+stderr). On timeout the whole process group is killed and
    CellError raised."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                         env=env, cwd=cwd, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise CellError(f"{os.path.basename(cmd[0])} timed out after {timeout:.0f}s", tail(out))
    return p.returncode, out


def tail(text, lines=20):
    return "\n".join(text.rstrip().splitlines()[-lines:])


def first_error_line(text, markers=("ERROR", "FATAL", "error", "failed", "Exception")):
    """The most telling line of a client's output: the first one that names an
    error, else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if any(m in line for m in markers):
            return line[:300]
    return lines[-1][:300] if lines else "(no output)"


def check(cmd, timeout, what, env=None, cwd=None):
    """Like run, but raises CellError(what: first error line) on a non-zero exit."""
    rc, out = run(cmd, timeout, env=env, cwd=cwd)
    if rc != 0:
        raise CellError(f"{what}: {first_error_line(out)}", tail(out))
    return out


def run_json(cmd, timeout, what, cwd=None):
    """Runs a client that prints one JSON object last (connstorm,
    cold-start); returns (returncode, output, the object). CellError if
    there is none."""
    rc, out = run(cmd, timeout, cwd=cwd)
    try:
        return rc, out, json.loads(out[out.index("{"):])
    except ValueError:
        raise CellError(f"{what}: {first_error_line(out)}", tail(out)) from None


def fan_out(target, worker_args, timeout):
    """Runs target(*args, ready, queue) in one process per tuple of
    worker_args, released together once all are up (so the clock is fair);
    each puts one result on the queue. Returns (results, seconds from the
    release to the last result)."""
    queue, ready = multiprocessing.Queue(), multiprocessing.Barrier(len(worker_args) + 1)
    procs = [multiprocessing.Process(target=target, args=(*a, ready, queue)) for a in worker_args]
    for p in procs:
        p.start()
    ready.wait(timeout=60)
    start = time.monotonic()
    results = [queue.get(timeout=timeout) for _ in procs]
    elapsed = time.monotonic() - start
    for p in procs:
        p.join(timeout=10)
    return results, elapsed


def latency_stats(values):
    """Mean and nearest-rank p50/p95/p99 of milliseconds, rounded."""
    out = {"mean": round(sum(values) / len(values), 3)}
    out.update({k: round(v, 3) for k, v in percentiles(values).items()})
    return out


def percentiles(values, points=(50, 95, 99)):
    """Nearest-rank percentiles of a list of numbers, {"p50": ...}."""
    if not values:
        return {}
    v = sorted(values)
    return {f"p{p}": v[min(len(v), max(1, math.ceil(p / 100 * len(v)))) - 1] for p in points}


@dataclasses.dataclass
class Family:
    """What a workload module declares for each cell family it owns.

    run(endpoint, cell, seconds, cfg) returns the metrics of one run:
    {"throughput": per second, "latency_ms": {label: {"mean", "p50", "p95",
    "p99"}}, ...}, or raises CellError. load(endpoint, cfg), if any, puts the
    family's data into a server once before the first cell; families that
    share data share the same load_key so it is loaded once."""
    name: str
    unit: str
    modes: tuple
    default_modes: tuple
    transports: tuple
    default_transports: tuple
    run: object
    load: object = None
    load_key: str = ""
    # Seconds a run costs beyond its measured duration (JVM start, connects).
    overhead_s: float = 0.5

