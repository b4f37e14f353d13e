"""The cold-start cell (family cold-start): how long a client waits for the
first row from a tenant that was asleep.

Strata split is loaded with `coldstart_tenants` tenants (cs001, cs002, ...),
each with a small table `coldstart` in its database postgres. Each run first
waits until every one of them is suspended (no SQL process: the split runs
with a short --idle-timeout when this family is planned), then wakes them
all: each of N client processes takes its share of the tenants and, for
each, opens a new connection to `csNNN.postgres`, runs `SELECT v FROM
coldstart WHERE k = 1`, reads the row and closes ("cold"), then at once does
the same again while the tenant's process still runs ("warm"). Latency is
from the start of the TCP connect to the first row, authentication (trust
here) included. PostgreSQL and Strata (1 process) have no tenants to wake:
they get one `coldstart` table in database postgres and the same pairs of
fresh connections, so their "cold" is a fresh PostgreSQL (or Strata)
connection, the figure to compare a wake-up with.

Throughput is tenants woken per second (each one cold and one warm
connection); the cell fails on any failed connection, since a client that
finds the warm pool empty must wait for a process, not be refused. Like
connstorm, this module is also the client (`python -m lib.coldstart`).
"""

import argparse
import json
import sys
import time

from . import clients
from .clients import CellError, Family

QUERY = "SELECT v FROM coldstart WHERE k = 1"
TABLE = ("CREATE TABLE coldstart (k int PRIMARY KEY, v text); "
         "INSERT INTO coldstart SELECT g, 'row ' || g FROM generate_series(1, 10) g")
SUSPEND_WAIT_S = 120


def tenant_names(cfg):
    return [f"cs{i:03d}" for i in range(1, cfg.coldstart_tenants + 1)]


def targets(ep, cfg):
    """The database names the client connects to, one per tenant to wake."""
    if ep.tenants:
        return [f"{name}.postgres" for name in tenant_names(cfg)]
    return [ep.dbname] * cfg.coldstart_tenants


def psql(ep, dbname, sql, cfg):
    clients.check(["psql", "-h", ep.host, "-p", str(ep.port), "-U", ep.user, "-d", dbname, "-v", "ON_ERROR_STOP=1",
                   "-qc", sql], cfg.load_timeout, f"psql -d {dbname}")


def load(ep, cfg):
    if not ep.tenants:
        psql(ep, ep.dbname, TABLE, cfg)
        return
    for name in tenant_names(cfg):
        clients.check(list(ep.tenants) + ["create", name], 60, f"strata tenant create {name}")
        psql(ep, f"{name}.postgres", TABLE, cfg)


def wait_suspended(ep, cfg):
    """Waits until none of the cold-start tenants has a SQL process."""
    names, deadline, awake = set(tenant_names(cfg)), time.monotonic() + SUSPEND_WAIT_S, None
    while time.monotonic() < deadline:
        out = clients.check(list(ep.tenants) + ["list", "--json"], 30, "strata tenant list")
        listed = {t["name"]: t for t in json.loads(out)}
        missing = names - set(listed)
        if missing:
            raise CellError(f"cold-start: tenants missing: {', '.join(sorted(missing))}")
        awake = sorted(n for n in names if listed[n]["state"] != "suspended" or listed[n]["sql_pids"])
        if not awake:
            return
        time.sleep(0.2)
    raise CellError(f"cold-start: {len(awake)} tenants still running after {SUSPEND_WAIT_S} s "
                    f"(e.g. {', '.join(awake[:3])})")


def one(args, dbname):
    """Milliseconds from connect to the query's first row."""
    import psycopg  # only the client processes need it
    t0 = time.perf_counter()
    with psycopg.connect(host=args.host, port=args.port, user=args.user, dbname=dbname, autocommit=True,
                         connect_timeout=60) as conn:
        if conn.execute(QUERY).fetchone() is None:
            raise RuntimeError(f"{dbname}: no row")
        return (time.perf_counter() - t0) * 1000


def worker(args, mine, ready, queue):
    import psycopg
    cold, warm, errors, first_error = [], [], 0, ""
    ready.wait()
    for dbname in mine:
        for lat in (cold, warm):
            try:
                lat.append(one(args, dbname))
            except (psycopg.Error, RuntimeError) as e:
                errors += 1
                first_error = first_error or f"{dbname}: {str(e).strip().splitlines()[0]}"
    queue.put((cold, warm, errors, first_error))


def client_main(argv):
    ap = argparse.ArgumentParser(description="cold-start client: per database name, connect + SELECT twice")
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="postgres")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--targets", required=True, help="comma list of database names, one per tenant")
    args = ap.parse_args(argv)
    names = args.targets.split(",")
    n = max(1, min(args.clients, len(names)))
    results, elapsed = clients.fan_out(worker, [(args, names[i::n]) for i in range(n)], 600)
    json.dump({"tenants": len(names), "seconds": round(elapsed, 3),
               "cold_ms": [x for r in results for x in r[0]], "warm_ms": [x for r in results for x in r[1]],
               "errors": sum(r[2] for r in results), "first_error": next((r[3] for r in results if r[3]), "")},
              sys.stdout)


def stats(values):
    return dict(clients.latency_stats(values), max=round(max(values), 3))


def run(ep, cell, seconds, cfg):
    # `seconds` does not apply: a run wakes every tenant once, however long that takes.
    if ep.tenants:
        wait_suspended(ep, cfg)
    cmd = [cfg.python, "-m", "lib.coldstart", "--host", ep.host, "--port", str(ep.port), "--user", ep.user,
           "--clients", str(cell.clients), "--targets", ",".join(targets(ep, cfg))]
    rc, out, res = clients.run_json(cmd, 600, "cold-start client", cwd=cfg.bench_dir)
    if rc != 0 or res["errors"] or not res["cold_ms"] or not res["warm_ms"]:
        why = res["first_error"] or "no connection completed"
        raise CellError(f"cold-start: {res['errors']} failed connections: {why}", clients.tail(out))
    return {"throughput": round(res["tenants"] / res["seconds"], 1), "work": res["tenants"],
            "latency_ms": {"cold": stats(res["cold_ms"]), "warm": stats(res["warm_ms"])}, "errors": 0}


FAMILIES = [Family("cold-start", "wakes/s", ("simple",), ("simple",), ("tcp",), ("tcp",), run, load=load,
                   load_key="coldstart", overhead_s=8.0)]

if __name__ == "__main__":
    client_main(sys.argv[1:])
