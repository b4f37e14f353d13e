#!/usr/bin/env python3
"""bench/run's entry point: Strata, as one process and split into KV server,
proxy and SQL processes, against a real PostgreSQL 15 (and PostgreSQL behind
PgBouncer) on this machine, on pgbench, sysbench, YCSB, a connection
storm and tenant cold starts, alternating systems within each repetition.

This file only parses options, resolves the Strata binary, and wires the
modules in bench/lib together: systems start, matrix loads and runs the
cells, report and charts write bench/results/<timestamp>/ (results.json,
report.md, *.png, server logs). See bench/README.md for the options and the
fairness rules. Exit status: 0, or 2 when a PostgreSQL or PgBouncer cell
failed (the instrument or the machine is broken; the failures of either
Strata are results, never a reason to fail), or 1 on a harness error.
"""

import argparse
import datetime
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import types

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from lib import charts, matrix, report, systems  # noqa: E402

# Presets: (clients, reps, duration s, warm-up s, scale). Full mode targets
# under 45 minutes on 2 cores, quick under 10, smoke about 5.
PRESETS = {
    "full": ("1,8,32", 3, 4, 1, 10),
    "quick": ("8", 3, 3, 1, 10),
    "smoke": ("1,4", 1, 3, 0, 1),
}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="8 clients, default modes, 3 s runs, 3 reps (< 10 min)")
    ap.add_argument("--smoke", action="store_true",
                    help="every family once at scale 1: clients 1,4, one mode, 3 s, 1 rep, no warm-up")
    ap.add_argument("--only", default="", help="comma list of cell families or prefixes: pgbench-select, "
                    "pgbench-tpcb, sysbench-oltp_point_select, ..., sysbench, ycsb-a, ycsb-b, ycsb-f, ycsb, connstorm, "
                    "cold-start")
    ap.add_argument("--clients", help="comma list of client counts (default 1,8,32)")
    ap.add_argument("--modes", help="comma list of protocol modes: simple, extended, prepared "
                    "(default per family: pgbench simple,prepared; sysbench simple; ycsb extended)")
    ap.add_argument("--transport", "--transports", dest="transport",
                    help="comma list: tcp, unix (default per family: pgbench and connstorm both; sysbench tcp; ycsb tcp only)")
    ap.add_argument("--reps", type=int, help="measured repetitions per cell (default 3)")
    ap.add_argument("--duration", type=int, help="seconds per measured run (default 4)")
    ap.add_argument("--warmup", type=int, help="seconds of warm-up per cell and system (default 1; 0 = none)")
    ap.add_argument("--scale", type=int, help="pgbench scale; sysbench and YCSB sizes follow it (default 10)")
    ap.add_argument("--systems", default="postgresql,strata,strata-split,pgbouncer",
                    help="comma list: postgresql, strata (strata start --single-process), "
                    "strata-split (strata start: KV server, proxy, SQL processes), pgbouncer")
    ap.add_argument("--strata-bin", help="Strata binary (default $STRATA_BIN, else $CARGO_TARGET_DIR/release/strata)")
    ap.add_argument("--build", action="store_true", help="cargo build --release -p strata if the binary is missing")
    ap.add_argument("--keep-data", action="store_true", help="keep the servers' data directories")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the time estimate, run nothing")
    a = ap.parse_args(argv)
    preset = PRESETS["smoke" if a.smoke else "quick" if a.quick else "full"]
    for name, value in zip(("clients", "reps", "duration", "warmup", "scale"), preset):
        if getattr(a, name) is None:
            setattr(a, name, value)
    a.preset = "smoke" if a.smoke else "quick" if a.quick else "full"
    if a.quick and a.transport is None:
        a.transport = "tcp"
    return a


def strata_binary(a, wanted):
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/strata-target")
    binary = a.strata_bin or os.environ.get("STRATA_BIN") or os.path.join(target, "release", "strata")
    if not wanted or os.access(binary, os.X_OK):
        return os.path.abspath(binary)
    if not a.build or a.strata_bin or os.environ.get("STRATA_BIN"):
        sys.exit(f"bench/run: no Strata binary at {binary}: pass --strata-bin PATH, set STRATA_BIN, "
                 "or add --build to run cargo build --release -p strata")
    print(f"building Strata (cargo build --release -p strata, CARGO_TARGET_DIR={target})", flush=True)
    subprocess.run(["cargo", "build", "--release", "-p", "strata"], check=True, cwd=os.path.dirname(BENCH),
                   env=dict(os.environ, CARGO_TARGET_DIR=target))
    return os.path.join(target, "release", "strata")


def config(a, work):
    small = a.smoke
    return types.SimpleNamespace(
        scale=a.scale, duration=a.duration, warmup=a.warmup, reps=a.reps,
        sysbench_tables=2 if small else 4, sysbench_table_size=10_000 * a.scale,
        ycsb_records=10_000 * a.scale,
        coldstart_tenants=10 if small else 100,
        client_threads=2,  # client threads per program: one per core
        load_timeout=1800, run_grace=60,
        tmp=os.path.join(work, "tmp"), bench_dir=BENCH, python=sys.executable)


def versions(servers):
    v = {s.name: s.version() for s in servers}
    v["pgbench"] = systems.version_of(["pgbench", "--version"])
    v["sysbench"] = systems.version_of(["sysbench", "--version"])
    v["ycsb"] = "site.ycsb:core 0.17.0 + strata.bench.JdbcDB, org.postgresql:postgresql 42.7.4, " + \
        systems.version_of(["java", "-version"])
    return v


def main(argv):
    a = parse_args(argv)
    if a.dry_run:
        # `bench/run --dry-run | head` ends quietly, like any Unix filter
        # (a real run keeps Python's handling, so it can stop its servers).
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    names = [s for s in a.systems.split(",") if s]
    bad = set(names) - set(systems.NAMES)
    if bad:
        sys.exit(f"--systems: unknown {', '.join(sorted(bad))}")
    split = lambda s: [x for x in s.split(",") if x] if s else None  # noqa: E731
    cells = matrix.plan(matrix.select_families(a.only), split(a.modes), split(a.transport),
                        [int(c) for c in a.clients.split(",")], first_mode_only=a.smoke and not a.modes)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join(BENCH, "results", stamp)
    work = os.path.join("/var/tmp/strata-bench", stamp)  # reachable by the postgres user
    cfg = config(a, work)
    with_strata = bool(set(names) & set(systems.STRATA))
    bin_path = strata_binary(a, with_strata and not a.dry_run)
    # Cold-start cells need their tenants asleep between runs: the split then
    # retires an idle tenant's SQL process after 2 s instead of 5 min.
    idle = "2s" if any(c.family == "cold-start" for c in cells) else None
    measured, servers = systems.make(names, work, os.path.join(outdir, "logs"), bin_path, idle)
    est = matrix.estimate_s(cells, measured, cfg)
    print(f"{len(cells)} cells x {', '.join(s.name for s in measured)}; {a.reps} reps of {a.duration} s; "
          f"estimated {est / 60:.0f} min", flush=True)
    if a.dry_run:
        print("\n".join(f"  {c}" for c in cells))
        return 0
    os.makedirs(os.path.join(outdir, "logs"), exist_ok=True)
    os.makedirs(cfg.tmp, exist_ok=True)
    os.chmod(os.path.dirname(work), 0o755)
    os.chmod(work, 0o755)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    runner = matrix.Runner(cfg, measured, servers)
    started, t0, interrupted = datetime.datetime.now().isoformat(timespec="seconds"), time.time(), False
    try:
        runner.start()
        meta_versions = versions(servers)
        runner.load(cells)
        runner.run_all(cells)
    except KeyboardInterrupt:
        interrupted = True
        print("interrupted: stopping the servers and writing what was measured", file=sys.stderr)
        meta_versions = locals().get("meta_versions", {})
    finally:
        for s in reversed(servers):
            try:
                s.stop()
            except Exception as e:  # keep stopping the others
                print(f"stopping {s.name}: {e}", file=sys.stderr)
        if not a.keep_data:
            shutil.rmtree(work, ignore_errors=True)
    meta = {
        "started": started, "elapsed_s": round(time.time() - t0), "interrupted": interrupted,
        "command": "bench/run " + " ".join(shlex.quote(x) for x in argv), "preset": a.preset,
        "machine": os.uname().nodename, "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
        "reps": a.reps, "duration_s": a.duration, "warmup_s": a.warmup, "scale": a.scale,
        "sysbench_tables": cfg.sysbench_tables, "sysbench_table_size": cfg.sysbench_table_size,
        "ycsb_records": cfg.ycsb_records, "coldstart_tenants": cfg.coldstart_tenants, "systems": [s.name for s in measured], "versions": meta_versions,
        "config": {s.name: s.config() for s in servers},
    }
    if with_strata and "/debug/" in bin_path:
        meta["warning"] = f"Strata is a debug build ({bin_path}): its numbers say nothing about its speed"
    return write_results(outdir, meta, runner, measured)


def write_results(outdir, meta, runner, measured):
    summary = report.summarize(runner.runs)
    names = [s.name for s in measured]
    units = {f.name: f.unit for f in matrix.FAMILIES if any(k[0] == f.name for k in summary)}
    cells = [dict(zip(report.KEY, k), systems=v) for k, v in sorted(summary.items())]
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "loads": runner.loads, "events": runner.events, "cells": cells, "runs": runner.runs},
                  f, indent=1)
    text = report.markdown(meta, summary, runner.loads, runner.events, names, units)
    try:
        pngs = charts.draw_all(summary, names, units, outdir)
        text += "\n## Charts\n\n" + "\n".join(f"![{os.path.basename(p)}]({os.path.basename(p)})" for p in pngs) + "\n"
    except Exception as e:  # a chart must never lose the numbers
        print(f"charts failed: {e!r}", file=sys.stderr)
        pngs = None
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(text)
    print(text)
    broken = [r for r in runner.runs if r["system"] not in systems.STRATA and r["status"] == "failed"]
    broken += [ld for ld in runner.loads if ld["system"] not in systems.STRATA and ld["error"]]
    for name in systems.STRATA:
        failed = sorted({r["family"] for r in runner.runs if r["system"] == name and r["status"] == "failed"})
        if failed:
            print(f"{report.SYSTEM_LABEL[name]} failed in: {', '.join(failed)} (see 'Failed cells' in report.md)")
    if broken:
        print(f"{len(broken)} PostgreSQL/PgBouncer runs or loads failed: the instrument or the machine is broken",
              file=sys.stderr)
    print(f"results: {outdir}")
    if pngs is None or meta["interrupted"]:
        return 1
    return 2 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
