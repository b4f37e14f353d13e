#!/usr/bin/env python3
"""Runs pgbench against PostgreSQL and Strata on this machine, alternating
systems within each repetition, and reports medians, min/max and the ratio
Strata/PostgreSQL per cell. Both systems are durable (fsync on, synchronous
commit on; Strata always syncs its WAL before acknowledging a commit).

Results go to bench/results/<timestamp>/results.json and report.md."""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

PG_BIN = "/usr/lib/postgresql/15/bin"

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def wait_port(port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listening on {port}")

def as_postgres(cmd):
    """PostgreSQL refuses to run as root: run its programs as 'postgres'."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd

class Postgres:
    name = "postgresql"

    def __init__(self, work):
        self.dir = os.path.join(work, "pg")
        self.port = free_port()
        self.sock = os.path.join(work, "pgsock")

    def start(self):
        for d in (self.dir, self.sock):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            if os.geteuid() == 0:
                shutil.chown(d, "postgres", "postgres")
        subprocess.run(as_postgres([f"{PG_BIN}/initdb", "-D", self.dir, "-U", "postgres", "-A", "trust"]), check=True, stdout=subprocess.DEVNULL)
        conf = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.sock}'",
            "fsync": "on",
            "synchronous_commit": "on",
            "shared_buffers": "1GB",
            "max_connections": "200",
            "wal_buffers": "16MB",
            "max_wal_size": "4GB",
            "checkpoint_timeout": "15min",
        }
        with open(os.path.join(self.dir, "postgresql.auto.conf"), "a") as f:
            for k, v in conf.items():
                f.write(f"{k} = {v}\n")
        self.proc = subprocess.Popen(as_postgres([f"{PG_BIN}/postgres", "-D", self.dir]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self):
        if getattr(self, "proc", None):
            subprocess.run(as_postgres([f"{PG_BIN}/pg_ctl", "stop", "-D", self.dir, "-m", "fast", "-w"]), stdout=subprocess.DEVNULL)
            self.proc.wait(timeout=60)

    def pids(self):
        # The postmaster: its reaped backends' CPU shows up in cutime/cstime.
        with open(os.path.join(self.dir, "postmaster.pid")) as f:
            return [int(f.readline())]

class Strata:
    name = "strata"

    def __init__(self, work, binary):
        self.dir = os.path.join(work, "strata")
        self.bin = binary
        self.port = free_port()

    def start(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        self.proc = subprocess.Popen([self.bin, "start", "--listen", f"127.0.0.1:{self.port}", "--no-unix-socket", "--data-dir", self.dir],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self):
        if not getattr(self, "proc", None):
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def pids(self):
        return [self.proc.pid]

def cpu_seconds(pids):
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # utime, stime, and the CPU of reaped children (PostgreSQL backends).
            total += sum(int(x) for x in fields[11:15]) / tick
        except OSError:
            pass
    return total

def pgbench(port, args):
    cmd = ["pgbench", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"] + args + ["postgres"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        raise RuntimeError(f"pgbench {' '.join(args)} failed:\n{text}")
    return text

def tps(text):
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", text)
    return float(m.group(1)) if m else None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata-bin", required=True)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--only", default="", help="comma list of cells: pgbench-select, pgbench-tpcb")
    ap.add_argument("--modes", default="simple,prepared")
    ap.add_argument("--quick", action="store_true", help="3 s runs, 8 clients, 2 reps")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.reps, a.clients = 3, 2, "8"
    workloads = {"pgbench-select": ["-S"], "pgbench-tpcb": []}
    if a.only:
        workloads = {k: v for k, v in workloads.items() if k in a.only.split(",")}
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join("bench", "results", stamp)
    # PostgreSQL runs as the postgres user, so the work directory must be
    # reachable by it (not under root's home).
    work = "/var/tmp/strata-bench"
    os.makedirs(outdir, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    systems = [Postgres(work), Strata(work, a.strata_bin)]
    results = []
    try:
        for s in systems:
            s.start()
            pgbench(s.port, ["-i", "-q", "-s", str(a.scale)])
        for wl, wargs in workloads.items():
            for mode in a.modes.split(","):
                for c in [int(x) for x in a.clients.split(",")]:
                    args = wargs + ["-M", mode, "-c", str(c), "-j", str(min(c, 2)), "-T", str(a.duration), "-n"]
                    pgbench(systems[0].port, wargs + ["-M", mode, "-c", str(c), "-j", str(min(c, 2)), "-T", "1", "-n"])  # warm-up
                    pgbench(systems[1].port, wargs + ["-M", mode, "-c", str(c), "-j", str(min(c, 2)), "-T", "1", "-n"])
                    for rep in range(a.reps):
                        for s in systems:
                            cpu0 = cpu_seconds(s.pids())
                            text = pgbench(s.port, args)
                            time.sleep(0.5)  # let PostgreSQL reap its backends (their CPU)
                            cpu = cpu_seconds(s.pids()) - cpu0
                            r = {"workload": wl, "mode": mode, "clients": c, "system": s.name, "rep": rep, "tps": tps(text), "server_cpu_s": round(cpu, 2)}
                            results.append(r)
                            print(json.dumps(r), flush=True)
    finally:
        for s in systems:
            try:
                s.stop()
            except Exception as e:  # keep stopping the others
                print(f"stopping {s.name}: {e}", file=sys.stderr)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"machine": os.uname().nodename, "cores": os.cpu_count(), "scale": a.scale, "duration_s": a.duration, "results": results}, f, indent=1)
    lines = ["| workload | mode | clients | PostgreSQL tps (median, min-max) | Strata tps (median, min-max) | Strata/PG |", "|---|---|---|---|---|---|"]
    cells = sorted({(r["workload"], r["mode"], r["clients"]) for r in results})
    for wl, mode, c in cells:
        def stats(name):
            v = [r["tps"] for r in results if (r["workload"], r["mode"], r["clients"], r["system"]) == (wl, mode, c, name) and r["tps"]]
            return (statistics.median(v), min(v), max(v)) if v else (0, 0, 0)
        pg, st = stats("postgresql"), stats("strata")
        ratio = st[0] / pg[0] if pg[0] else 0
        lines.append(f"| {wl} | {mode} | {c} | {pg[0]:.0f} ({pg[1]:.0f}-{pg[2]:.0f}) | {st[0]:.0f} ({st[1]:.0f}-{st[2]:.0f}) | {ratio:.2f}x |")
    report = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(report)
    print(report)

if __name__ == "__main__":
    main()
