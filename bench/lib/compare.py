"""bench/compare A.json B.json: two runs side by side, typically two Strata
builds (before and after a change), each measured by bench/run.

For every cell and system present in both runs it prints throughput A and B
with the ratio B/A, mean and p99 latency with the change, and work per
server CPU-second with its ratio, coloured as in report.md (🔵 better by more
than 5%, 🟢 within ±5%, then 🟡 🟠 🔴 for 15%, 30% and worse). Cells found in
only one run are listed at the end. It warns when the two runs differ in
machine, duration or data size, since their ratios then mix two effects.
"""

import argparse
import json
import sys

from . import report

SETTINGS = ("machine", "cores", "duration_s", "scale", "reps", "sysbench_table_size", "ycsb_records")


def load(path):
    with open(path) as f:
        data = json.load(f)
    if "cells" not in data or "meta" not in data:
        sys.exit(f"{path}: not a results.json written by this bench/run (no 'cells')")
    return data


def index(data):
    return {tuple(c[k] for k in report.KEY): c["systems"] for c in data["cells"]}


def row(key, system, a, b):
    cells = "| " + " | ".join(map(str, key)) + f" | {report.SYSTEM_LABEL.get(system, system)} |"
    if a["status"] != "ok" or b["status"] != "ok":
        return cells + f" {a['status']} | {b['status']} | | | | | | | | |"
    ta, tb = a["throughput"]["median"], b["throughput"]["median"]
    la, lb = report.main_latency(a), report.main_latency(b)
    out = cells + f" {report.fmt_num(ta)} | {report.fmt_num(tb)} | {report.fmt_ratio(tb, ta, True)} |"
    for stat in ("mean", "p99"):
        va, vb = la.get(stat), lb.get(stat)
        out += f" {report.fmt_num(va)} → {report.fmt_num(vb)} | {report.fmt_ratio(vb, va, False)} |"
    out += f" {report.fmt_num(a.get('per_cpu_s'))} → {report.fmt_num(b.get('per_cpu_s'))} |" \
           f" {report.fmt_ratio(b.get('per_cpu_s'), a.get('per_cpu_s'), True)} |"
    return out


def order(system):
    """Report order: PostgreSQL, Strata (1 process), Strata split, PgBouncer+PG; unknown names last."""
    known = list(report.SYSTEM_LABEL)
    return (known.index(system) if system in known else len(known), system)


def compare(a, b, systems=None):
    ia, ib = index(a), index(b)
    lines = ["# bench/compare\n", f"A: {a['meta']['started']} `{a['meta']['command']}`  ",
             f"B: {b['meta']['started']} `{b['meta']['command']}`\n"]
    diffs = [f"{k}: {a['meta'].get(k)} vs {b['meta'].get(k)}" for k in SETTINGS if a["meta"].get(k) != b["meta"].get(k)]
    if diffs:
        lines.append("**Warning: the runs differ in** " + "; ".join(diffs) + "\n")
    lines += ["Ratios are B/A; latency is the transaction's (YCSB: READ).\n",
              "| workload | mode | transport | clients | system | A | B | B/A | mean ms A → B | Δ | p99 ms A → B | Δ |"
              " work per CPU-s A → B | B/A |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(set(ia) & set(ib)):
        for system in sorted(set(ia[key]) & set(ib[key]), key=order):
            if systems and system not in systems:
                continue
            lines.append(row(key, system, ia[key][system], ib[key][system]))
    only = sorted(set(ia) ^ set(ib))
    if only:
        lines.append("\nCells in only one run: " + ", ".join(
            f"{' '.join(map(str, k))} ({'A' if k in ia else 'B'})" for k in only))
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(prog="bench/compare", description="compare two bench/run results.json files")
    ap.add_argument("a", help="results.json of the baseline run")
    ap.add_argument("b", help="results.json of the new run")
    ap.add_argument("--systems", help="comma list to show: postgresql, strata, strata-split, pgbouncer "
                    "(default: all in both runs)")
    ap.add_argument("-o", "--output", help="also write the markdown to this file")
    args = ap.parse_args(argv)
    text = compare(load(args.a), load(args.b), args.systems.split(",") if args.systems else None)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    print(text)
    return 0
