"""YCSB cells: workloads A (50% read, 50% update), B (95% read, 5% update)
and F (50% read, 50% read-modify-write), families ycsb-a, ycsb-b, ycsb-f,
with YCSB's standard zipfian request distribution.

The driver is the official YCSB core (site.ycsb:core:0.17.0 from Maven
Central) with our JDBC binding, bench/ycsb (strata.bench.JdbcDB), over the
PostgreSQL JDBC driver; bench/setup builds it with Maven. This module owns
creating usertable(YCSB_KEY varchar primary key, FIELD0..FIELD9 text),
loading it (YCSB -load, batched inserts), one measured run (YCSB -t bounded
by maxexecutiontime) and parsing YCSB's report: overall throughput in
operations per second, and mean/p50/p95/p99 latency per operation type
(READ, UPDATE, READ-MODIFY-WRITE).

Protocol modes map to JDBC URL settings: 'simple' is preferQueryMode=simple,
'extended' is prepareThreshold=0 (extended protocol with unnamed statements,
what works through PgBouncer's transaction pooling; the default here), and
'prepared' is prepareThreshold=1 (named server-side statements from the
first use). JDBC has no unix-socket transport, so YCSB runs over TCP only.
"""

import os
import re

from . import clients
from .clients import CellError, Family

URL_MODE = {"simple": "preferQueryMode=simple", "extended": "prepareThreshold=0", "prepared": "prepareThreshold=1"}
# Above this share of failed operations a run counts as failed, not as slow.
MAX_ERROR_SHARE = 0.01
DDL = ("CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, "
       + ", ".join(f"FIELD{i} TEXT" for i in range(10)) + ")")


def java_cmd(cfg, ep, phase, workload, url_opts, threads, extra):
    ycsb = os.path.join(cfg.bench_dir, "ycsb")
    cp = os.path.join(ycsb, "target", "classes") + ":" + os.path.join(ycsb, "target", "lib", "*")
    url = f"jdbc:postgresql://{ep.host}:{ep.port}/{ep.dbname}?sslmode=disable&{url_opts}"
    cmd = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-cp", cp, "site.ycsb.Client", phase,
           "-db", "strata.bench.JdbcDB", "-P", os.path.join(ycsb, "workloads", f"workload{workload}"),
           "-threads", str(threads), "-p", f"recordcount={cfg.ycsb_records}", "-p", f"db.url={url}",
           "-p", f"db.user={ep.user}", "-p", "measurementtype=hdrhistogram",
           "-p", "hdrhistogram.percentiles=50,95,99"]
    for k, v in extra.items():
        cmd += ["-p", f"{k}={v}"]
    return cmd


def psql(ep, sql, timeout=120):
    return clients.check(["psql", "-h", ep.host, "-p", str(ep.port), "-U", ep.user, "-d", ep.dbname,
                          "-v", "ON_ERROR_STOP=1", "-Atq", "-c", sql], timeout, "psql")


def load(ep, cfg):
    psql(ep, DDL)
    cmd = java_cmd(cfg, ep, "-load", "a", "reWriteBatchedInserts=true&prepareThreshold=0",
                   cfg.client_threads, {"db.batchsize": 100, "operationcount": cfg.ycsb_records})
    rc, out = clients.run(cmd, cfg.load_timeout)
    if rc != 0 or "JDBCDB-ERROR" in out:
        raise CellError(f"ycsb load: {clients.first_error_line(out, ('JDBCDB-ERROR', 'Exception'))}", clients.tail(out))
    count = psql(ep, "SELECT count(*) FROM usertable").strip()
    if count != str(cfg.ycsb_records):
        raise CellError(f"ycsb load: usertable has {count} rows, expected {cfg.ycsb_records}", clients.tail(out))


def run_workload(workload):
    def run(ep, cell, seconds, cfg):
        cmd = java_cmd(cfg, ep, "-t", workload, URL_MODE[cell.mode], cell.clients,
                       {"operationcount": 1_000_000_000, "maxexecutiontime": seconds})
        rc, out = clients.run(cmd, seconds + cfg.run_grace + 30)
        if rc != 0:
            raise CellError(f"ycsb: {clients.first_error_line(out, ('JDBCDB-ERROR', 'Exception'))}", clients.tail(out))
        return parse(out)
    return run


def parse(out):
    """YCSB's report lines look like '[READ], 99thPercentileLatency(us), 812'."""
    rows = re.findall(r"^\[([A-Z-]+)\], ([^,]+), ([0-9.]+)\s*$", out, re.M)
    thr = [float(v) for sec, k, v in rows if sec == "OVERALL" and k == "Throughput(ops/sec)"]
    if not thr:
        raise CellError(f"ycsb printed no throughput: {clients.first_error_line(out)}", clients.tail(out))
    ops, errors, total = {}, 0, 0
    names = {"AverageLatency(us)": "mean", "50thPercentileLatency(us)": "p50",
             "95thPercentileLatency(us)": "p95", "99thPercentileLatency(us)": "p99"}
    for sec, k, v in rows:
        if sec in ("OVERALL", "CLEANUP") or sec.endswith("-FAILED"):
            continue
        if k in names:
            ops.setdefault(sec, {})[names[k]] = round(float(v) / 1000, 3)
        elif k == "Operations":
            ops.setdefault(sec, {})["ops"] = int(float(v))
        elif k.startswith("Return="):
            # Every operation ends in one Return= count: OK, or why it failed.
            total += int(float(v))
            errors += 0 if k == "Return=OK" else int(float(v))
    if total and errors / total > MAX_ERROR_SHARE:
        why = clients.first_error_line(out, ("JDBCDB-ERROR",))
        raise CellError(f"ycsb: {errors} of {total} operations failed: {why}", clients.tail(out))
    return {"throughput": thr[0], "latency_ms": ops, "errors": errors}


FAMILIES = [
    Family(f"ycsb-{w}", "ops/s", ("simple", "extended", "prepared"), ("extended",), ("tcp",), ("tcp",),
           run_workload(w), load, "ycsb", overhead_s=2.0)
    for w in ("a", "b", "f")
]
