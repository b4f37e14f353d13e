"""The connection-storm cell (family connstorm): each of N client processes
opens a new connection, runs `SELECT 1`, closes it, and starts again, for the
cell's duration. Throughput is completed connections per second; latency is
the time of one connect + query + close, so it includes authentication
(trust here) and the server's per-connection setup: a PostgreSQL backend
fork, a Strata session, a PgBouncer client slot.

This module is both the family (run() starts the client as a subprocess so
its CPU is not the harness's) and the client itself (`python -m
lib.connstorm`, run from bench/ with the bench venv's psycopg, which speaks
through libpq). The protocol is the simple one; there is no mode to vary.
"""

import argparse
import json
import sys
import time

from . import clients
from .clients import CellError, Family


def worker(args, ready, queue):
    import psycopg  # only the client processes need it
    lat, errors, first_error = [], 0, ""
    ready.wait()  # every worker is up: start together, so the clock is fair
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        try:
            with psycopg.connect(host=args.host, port=args.port, user=args.user, dbname=args.dbname,
                                 autocommit=True, connect_timeout=10) as conn:
                conn.execute("SELECT 1").fetchone()
            lat.append((time.perf_counter() - t0) * 1000)
        except psycopg.Error as e:
            errors += 1
            first_error = first_error or str(e).strip().splitlines()[0]
            time.sleep(0.01)  # do not spin on a refusing server
    queue.put((lat, errors, first_error))


def client_main(argv):
    ap = argparse.ArgumentParser(description="connection storm client: connect + SELECT 1 + close, in a loop")
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="postgres")
    ap.add_argument("--dbname", default="postgres")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3)
    args = ap.parse_args(argv)
    results, elapsed = clients.fan_out(worker, [(args,)] * args.clients, args.seconds + 60)
    lat = [x for r in results for x in r[0]]
    json.dump({"connections": len(lat), "seconds": round(elapsed, 3), "errors": sum(r[1] for r in results),
               "first_error": next((r[2] for r in results if r[2]), ""), "latencies_ms": lat}, sys.stdout)


def run(ep, cell, seconds, cfg):
    cmd = [cfg.python, "-m", "lib.connstorm", "--host", ep.host, "--port", str(ep.port), "--user", ep.user,
           "--dbname", ep.dbname, "--clients", str(cell.clients), "--seconds", str(seconds)]
    rc, out, res = clients.run_json(cmd, seconds + cfg.run_grace, "connstorm client", cwd=cfg.bench_dir)
    if rc != 0 or not res["connections"]:
        why = res["first_error"] or f"no connection completed in {seconds} s"
        raise CellError(f"connstorm: {res['errors']} failed connections: {why}", clients.tail(out))
    lat = clients.latency_stats(res["latencies_ms"])
    if res["errors"] > 0.01 * (res["errors"] + res["connections"]):
        raise CellError(f"connstorm: {res['errors']} failed connections: {res['first_error']}")
    return {"throughput": round(res["connections"] / res["seconds"], 1), "latency_ms": {"connect": lat},
            "errors": res["errors"]}


FAMILIES = [Family("connstorm", "conn/s", ("simple",), ("simple",), ("tcp", "unix"), ("tcp", "unix"), run,
                   overhead_s=1.0)]

if __name__ == "__main__":
    client_main(sys.argv[1:])
