"""pgbench cells: pgbench-select (the built-in select-only script, -S: one
primary-key lookup on pgbench_accounts per transaction) and pgbench-tpcb (the
built-in TPC-B-like script: three UPDATEs, a SELECT and an INSERT in one
transaction).

This module owns loading the pgbench tables (`pgbench -i -s SCALE`), one
measured pgbench run, and parsing it: throughput is pgbench's tps without
initial connection time; latency percentiles come from pgbench's per-
transaction log (-l), sampled at SAMPLE_RATE to keep it small. Protocol modes
are pgbench's -M: simple, extended, prepared.
"""

import glob
import os
import re
import shutil
import tempfile

from . import clients
from .clients import CellError, Family

SAMPLE_RATE = 0.1


def base_cmd(ep):
    return ["pgbench", "-h", ep.host, "-p", str(ep.port), "-U", ep.user]


def load(ep, cfg):
    clients.check(base_cmd(ep) + ["-i", "-q", "-s", str(cfg.scale), ep.dbname], cfg.load_timeout, "pgbench -i")


def run_script(script_args):
    def run(ep, cell, seconds, cfg):
        c = cell.clients
        logdir = tempfile.mkdtemp(prefix="pgbench-log-", dir=cfg.tmp)
        try:
            args = script_args + ["-n", "-M", cell.mode, "-c", str(c), "-j", str(min(c, cfg.client_threads)),
                                  "-T", str(seconds), "-l", "--sampling-rate", str(SAMPLE_RATE),
                                  "--log-prefix", os.path.join(logdir, "tx")]
            rc, out = clients.run(base_cmd(ep) + args + [ep.dbname], seconds + cfg.run_grace)
            if rc != 0:
                raise CellError(f"pgbench: {clients.first_error_line(out)}", clients.tail(out))
            return parse(out, read_latencies(logdir))
        finally:
            shutil.rmtree(logdir, ignore_errors=True)
    return run


def read_latencies(logdir):
    """Transaction latencies in ms from pgbench -l files (time is field 3, in us)."""
    lat = []
    for path in glob.glob(os.path.join(logdir, "tx*")):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    lat.append(int(parts[2]) / 1000)
    return lat


def parse(out, latencies):
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    if not m:
        raise CellError(f"pgbench printed no tps: {clients.first_error_line(out)}", clients.tail(out))
    mean = re.search(r"latency average = ([0-9.]+) ms", out)
    failed = re.search(r"number of failed transactions: (\d+)", out)
    lat = {"mean": float(mean.group(1)) if mean else None}
    lat.update({k: round(v, 3) for k, v in clients.percentiles(latencies).items()})
    return {"throughput": float(m.group(1)), "latency_ms": {"txn": lat},
            "errors": int(failed.group(1)) if failed else 0}


MODES = ("simple", "extended", "prepared")
TRANSPORTS = ("tcp", "unix")

FAMILIES = [
    Family("pgbench-select", "tps", MODES, ("simple", "prepared"), TRANSPORTS, TRANSPORTS,
           run_script(["-S"]), load, "pgbench"),
    Family("pgbench-tpcb", "tps", MODES, ("simple", "prepared"), TRANSPORTS, TRANSPORTS,
           run_script([]), load, "pgbench"),
]
