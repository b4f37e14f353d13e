"""sysbench cells, Debian's sysbench 1.0 with its PostgreSQL driver
(--db-driver=pgsql): oltp_point_select, oltp_read_only, oltp_read_write and
oltp_write_only, each a family named sysbench-<test>.

This module owns loading sysbench's tables (`sysbench oltp_common prepare`:
CREATE TABLE sbtestN with a SERIAL key, multi-row INSERTs, CREATE INDEX),
shared by all four tests, one measured run, and parsing it: throughput is
sysbench's transactions per second (queries per second is kept too); the
latency percentiles come from sysbench's histogram (--histogram).

Protocol modes map to sysbench's --db-ps-mode: 'simple' is disable (plain
query strings, which is what works through PgBouncer's transaction pooling)
and 'prepared' is auto (server-side prepared statements). sysbench restarts
a transaction on a deadlock or a unique violation and counts it as an
ignored error; any other SQL error ends the run.
"""

import re

from . import clients
from .clients import CellError, Family

PS_MODE = {"simple": "disable", "prepared": "auto"}


def base_cmd(test, ep, cfg):
    return ["sysbench", test, "--db-driver=pgsql", f"--pgsql-host={ep.host}", f"--pgsql-port={ep.port}",
            f"--pgsql-user={ep.user}", f"--pgsql-db={ep.dbname}",
            f"--tables={cfg.sysbench_tables}", f"--table-size={cfg.sysbench_table_size}"]


def load(ep, cfg):
    cmd = base_cmd("oltp_common", ep, cfg) + [f"--threads={min(cfg.sysbench_tables, cfg.client_threads)}", "prepare"]
    clients.check(cmd, cfg.load_timeout, "sysbench prepare")


def run_test(test):
    def run(ep, cell, seconds, cfg):
        cmd = base_cmd(test, ep, cfg) + [f"--threads={cell.clients}", f"--time={seconds}",
                                         f"--db-ps-mode={PS_MODE[cell.mode]}", "--histogram=on",
                                         "--percentile=99", "--report-interval=0", "run"]
        rc, out = clients.run(cmd, seconds + cfg.run_grace)
        if rc != 0:
            raise CellError(f"sysbench {test}: {clients.first_error_line(out)}", clients.tail(out))
        return parse(out)
    return run


def parse(out):
    tps = re.search(r"transactions:\s+\d+\s+\(([0-9.]+) per sec", out)
    if not tps:
        raise CellError(f"sysbench printed no transactions: {clients.first_error_line(out)}", clients.tail(out))
    qps = re.search(r"queries:\s+\d+\s+\(([0-9.]+) per sec", out)
    ignored = re.search(r"ignored errors:\s+(\d+)", out)
    avg = re.search(r"avg:\s+([0-9.]+)", out)
    lat = {"mean": float(avg.group(1)) if avg else None}
    lat.update(histogram_percentiles(out))
    return {"throughput": float(tps.group(1)), "qps": float(qps.group(1)) if qps else None,
            "latency_ms": {"txn": lat}, "errors": int(ignored.group(1)) if ignored else 0}


def histogram_percentiles(out, points=(50, 95, 99)):
    """Percentiles from sysbench's latency histogram: lines 'value |*** count'."""
    buckets = [(float(v), int(n)) for v, n in re.findall(r"^\s*([0-9.]+)\s+\|\**\s+(\d+)\s*$", out, re.M)]
    total = sum(n for _, n in buckets)
    res = {}
    for p in points:
        need, seen = p / 100 * total, 0
        for value, n in buckets:
            seen += n
            if seen >= need:
                res[f"p{p}"] = value
                break
    return res


TESTS = ("oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only")

FAMILIES = [
    Family(f"sysbench-{t}", "tps", ("simple", "prepared"), ("simple",), ("tcp", "unix"), ("tcp",),
           run_test(t), load, "sysbench")
    for t in TESTS
]
