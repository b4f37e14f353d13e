"""From measured runs to the per-cell summary and report.md.

`summarize` reduces the repetitions of each (cell, system) to medians, min
and max; `markdown` writes the tables, and, when both Strata systems ran, a
section comparing Strata split with Strata (1 process) against the split's
goal (SPLIT_GOAL on the SPLIT_GOAL_CELLS). Relative differences against
PostgreSQL are coloured as in the classic PostgreSQL configuration-comparison
reports. For latency (lower is better): blue below -5%, green within +-5%,
yellow up to +15%, orange up to +30%, red above. Throughput is mirrored:
blue above +5%, ..., red below -30%. `colour` and `fmt_*` are shared with
`compare`.
"""

import statistics

SYSTEM_LABEL = {"postgresql": "PostgreSQL", "strata": "Strata (1 process)", "strata-split": "Strata split",
                "pgbouncer": "PgBouncer+PG"}
COLOURS = [("blue", "🔵"), ("green", "🟢"), ("yellow", "🟡"), ("orange", "🟠"), ("red", "🔴")]
KEY = ("family", "mode", "transport", "clients")

# The split into processes should keep Strata split at SPLIT_GOAL of Strata
# (1 process)'s throughput or more on these cells: (family, mode or None for
# any, clients), any transport.
SPLIT_GOAL = 0.85
SPLIT_GOAL_CELLS = (("pgbench-select", "prepared", 8), ("pgbench-tpcb", None, 8),
                    ("sysbench-oltp_point_select", None, 8))


def colour(delta, higher_is_better):
    """Colour word and emoji for a relative difference (0.12 is +12%)."""
    worse = -delta if higher_is_better else delta
    for limit, c in zip((-0.05, 0.05, 0.15, 0.30), COLOURS):
        if worse < limit or (limit > 0 and worse <= limit):
            return c
    return COLOURS[-1]


def fmt_ratio(new, base, higher_is_better=True):
    """'1.22x 🔵' for throughput-like values, '+12% 🟡' for latency-like ones."""
    if not new or not base:
        return ""
    delta = new / base - 1
    emoji = colour(delta, higher_is_better)[1]
    return f"{new / base:.2f}x {emoji}" if higher_is_better else f"{delta:+.0%} {emoji}"


def fmt_num(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def median_of(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def summarize(runs):
    """{cell key: {system: summary}} with medians, min and max over repetitions."""
    groups = {}
    for r in runs:
        groups.setdefault(tuple(r[k] for k in KEY), {}).setdefault(r["system"], []).append(r)
    out = {}
    for key, by_system in groups.items():
        out[key] = {name: summarize_system(rs) for name, rs in by_system.items()}
    return out


def summarize_system(rs):
    ok = [r for r in rs if r["status"] == "ok"]
    if not ok:
        status = rs[0]["status"]
        return {"status": status, "error": next((r["error"] for r in rs if r["error"]), "")}
    thr = [r["metrics"]["throughput"] for r in ok]
    labels = {label for r in ok for label in r["metrics"]["latency_ms"]}
    lat = {}
    for label in sorted(labels):
        stats = {}
        for stat in ("ops", "mean", "p50", "p95", "p99", "max"):
            values = [r["metrics"]["latency_ms"].get(label, {}).get(stat) for r in ok]
            # The worst case over all repetitions, not a typical one.
            stats[stat] = max((v for v in values if v is not None), default=None) if stat == "max" else median_of(values)
        lat[label] = stats
    res = [r["resources"] for r in ok]
    failed = [r for r in rs if r["status"] != "ok"]
    return {
        "status": "ok", "reps": len(ok), "failed_reps": len(failed),
        "error": failed[0]["error"] if failed else "",
        "throughput": {"median": statistics.median(thr), "min": min(thr), "max": max(thr)},
        "latency_ms": lat,
        "errors": sum(r["metrics"].get("errors", 0) for r in ok),
        "cpu_s": median_of([x["cpu_s"] for x in res]),
        "per_cpu_s": median_of([x["per_cpu_s"] for x in res]),
        "peak_rss_mb": max(x["peak_rss_mb"] for x in res),
        "peak_pss_mb": max(x["peak_pss_mb"] for x in res),
        "write_mb": median_of([x["write_mb"] for x in res]),
    }


def main_latency(s):
    """The latency of a cell's summary that stands for it: its only label
    (txn, connect), or for YCSB the operation every workload has (READ)."""
    lat = s.get("latency_ms", {})
    if len(lat) == 1:
        return next(iter(lat.values()))
    return lat.get("READ") or {}


def cell_label(key):
    family, mode, transport, clients = key
    return f"| {family} | {mode} | {transport} | {clients} |"


def thr_text(s):
    if s is None:
        return "-"
    if s["status"] != "ok":
        return "n/a" if s["status"] == "n/a" else "**failed**"
    t = s["throughput"]
    return f"{fmt_num(t['median'])} ({fmt_num(t['min'])}-{fmt_num(t['max'])})"


def throughput_table(summary, systems, units):
    base = systems[0]
    head = "| workload | mode | transport | clients |"
    for s in systems:
        head += f" {SYSTEM_LABEL[s]} |" + ("" if s == base else f" {SYSTEM_LABEL[s]}/{SYSTEM_LABEL[base]} |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for key in sorted(summary):
        row = cell_label(key)
        b = summary[key].get(base)
        for s in systems:
            cur = summary[key].get(s)
            row += f" {thr_text(cur)} |"
            if s != base:
                row += f" {ratio_of(cur, b, lambda x: x['throughput']['median'], True)} |"
        lines.append(row)
    return "\n".join(lines) + "\n\nUnits: " + ", ".join(f"{f}: {u}" for f, u in sorted(units.items())) + "\n"


def ratio_of(cur, base, get, higher_is_better):
    if not cur or not base or cur["status"] != "ok" or base["status"] != "ok":
        return ""
    try:
        return fmt_ratio(get(cur), get(base), higher_is_better)
    except (KeyError, TypeError):
        return ""


def latency_table(summary, systems, only_label=None):
    """Mean and p99 per system with the difference against the first system.
    only_label selects YCSB operations ('READ', ...) or the single 'txn' label."""
    base = systems[0]
    head = "| workload | mode | transport | clients | op |"
    for s in systems:
        head += f" {SYSTEM_LABEL[s]} mean | p99 |" + ("" if s == base else " Δ mean | Δ p99 |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for key in sorted(summary):
        labels = sorted({lb for s in summary[key].values() if s["status"] == "ok" for lb in s["latency_ms"]})
        for label in labels:
            if only_label and not only_label(label):
                continue
            row = cell_label(key) + f" {label} |"
            b = summary[key].get(base)
            for s in systems:
                cur = summary[key].get(s)
                get = lambda x, stat: x["latency_ms"][label][stat]  # noqa: E731
                if not cur or cur["status"] != "ok" or label not in cur["latency_ms"]:
                    row += " - | - |" + ("" if s == base else " | |")
                    continue
                row += f" {fmt_num(get(cur, 'mean'))} | {fmt_num(get(cur, 'p99'))} |"
                if s != base:
                    row += (f" {ratio_of(cur, b, lambda x: get(x, 'mean'), False)} |"
                            f" {ratio_of(cur, b, lambda x: get(x, 'p99'), False)} |")
            lines.append(row)
    return "\n".join(lines) + "\n"


def resources_table(summary, systems):
    base = systems[0]
    lines = ["| workload | mode | transport | clients | system | server CPU s | work per CPU-s | vs "
             f"{SYSTEM_LABEL[base]} | peak PSS MB | peak RSS MB | written MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(summary):
        b = summary[key].get(base)
        for s in systems:
            cur = summary[key].get(s)
            if not cur or cur["status"] != "ok":
                continue
            vs = "" if s == base else ratio_of(cur, b, lambda x: x["per_cpu_s"], True)
            lines.append(cell_label(key) + f" {SYSTEM_LABEL[s]} | {fmt_num(cur['cpu_s'])} | {fmt_num(cur['per_cpu_s'])} |"
                         f" {vs} | {fmt_num(cur['peak_pss_mb'])} | {fmt_num(cur['peak_rss_mb'])} | {fmt_num(cur['write_mb'])} |")
    return "\n".join(lines) + "\n"


def is_goal_cell(key):
    family, mode, _, clients = key
    return any(family == f and m in (None, mode) and clients == c for f, m, c in SPLIT_GOAL_CELLS)


def split_table(summary):
    """Strata split against Strata (1 process), cell by cell: throughput with
    the ratio and whether a goal cell reaches SPLIT_GOAL, the main latency's
    differences, work per CPU-second and peak PSS of both."""
    one, split = SYSTEM_LABEL["strata"], SYSTEM_LABEL["strata-split"]
    lines = [f"| workload | mode | transport | clients | {one} | {split} | split/1 process | goal ≥{SPLIT_GOAL}x |"
             " Δ mean | Δ p99 | work per CPU-s split/1 process | peak PSS MB 1 process | split |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    met = goals = 0
    for key in sorted(summary):
        a, b = summary[key].get("strata"), summary[key].get("strata-split")
        if not a and not b:
            continue
        ok = bool(a and b and a["status"] == "ok" and b["status"] == "ok")
        goal = ""
        if is_goal_cell(key):
            goals += 1
            reached = ok and b["throughput"]["median"] >= SPLIT_GOAL * a["throughput"]["median"]
            met += reached
            goal = "yes" if reached else "**no**"
        row = cell_label(key) + f" {thr_text(a)} | {thr_text(b)} |"
        row += f" {ratio_of(b, a, lambda x: x['throughput']['median'], True)} | {goal} |"
        for stat in ("mean", "p99"):
            row += f" {ratio_of(b, a, lambda x: main_latency(x)[stat], False)} |"
        row += f" {ratio_of(b, a, lambda x: x['per_cpu_s'], True)} |"
        row += "".join(f" {fmt_num(x['peak_pss_mb']) if x and x['status'] == 'ok' else '-'} |" for x in (a, b))
        lines.append(row)
    where = ", ".join(f"{f} {m or 'any mode'} c{c}" for f, m, c in SPLIT_GOAL_CELLS)
    verdict = (f"Goal: {split} at {SPLIT_GOAL}x of {one}'s throughput or more on {where} (any transport): "
               + (f"{met} of {goals} goal cells reach it." if goals else "no goal cell in this run."))
    return verdict + "\n\n" + "\n".join(lines) + "\n"


# Cold starts: Strata split's p99 from connect to the first row of a
# suspended tenant should be below this many milliseconds.
COLD_GOAL_MS = 50


def coldstart_table(summary, systems):
    """Per cold-start cell and system: p50, p99 and max of the first
    connection to a sleeping tenant (cold) and of the next one (warm), and
    for Strata split whether its cold p99 meets COLD_GOAL_MS."""
    lines = ["| clients | system | cold p50 | cold p99 | cold max | warm p50 | warm p99 | warm max | "
             f"goal cold p99 < {COLD_GOAL_MS} ms |", "|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(k for k in summary if k[0] == "cold-start"):
        for s in systems:
            cur = summary[key].get(s)
            if not cur or cur["status"] != "ok":
                if cur:
                    lines.append(f"| {key[3]} | {SYSTEM_LABEL[s]} | {cur['status']} | | | | | | |")
                continue
            lat = cur["latency_ms"]
            row = f"| {key[3]} | {SYSTEM_LABEL[s]} |"
            for label in ("cold", "warm"):
                row += "".join(f" {fmt_num(lat.get(label, {}).get(stat))} |" for stat in ("p50", "p99", "max"))
            goal = ""
            if s == "strata-split":
                goal = "yes" if (lat.get("cold", {}).get("p99") or 1e9) < COLD_GOAL_MS else "**no**"
            lines.append(row + f" {goal} |")
    return "\n".join(lines) + "\n"


def failures_table(summary, loads):
    lines = []
    for ld in loads:
        if ld["error"]:
            lines.append(f"| load {ld['data']} | {SYSTEM_LABEL[ld['system']]} | {one_line(ld['error'])} |")
    for key in sorted(summary):
        for s, cur in summary[key].items():
            if cur["status"] == "failed" or (cur["status"] == "ok" and cur["failed_reps"]):
                note = "" if cur["status"] == "failed" else f" ({cur['failed_reps']} of {cur['reps'] + cur['failed_reps']} reps)"
                lines.append(f"| {' '.join(map(str, key))} | {SYSTEM_LABEL[s]} | {one_line(cur['error'])}{note} |")
    if not lines:
        return "None.\n"
    return "| cell | system | error |\n|---|---|---|\n" + "\n".join(lines) + "\n"


def one_line(text):
    return " ".join((text or "").split()).replace("|", "\\|")[:300]


def restarts_text(events):
    if not events:
        return "None.\n"
    return "\n".join(f"- {SYSTEM_LABEL.get(e['system'], e['system'])} had exited (code {e['exit_code']}) and was "
                     f"restarted on its data before {e['before']}; log tail in results.json" for e in events) + "\n"


def markdown(meta, summary, loads, events, systems, units):
    ycsb = {k: v for k, v in summary.items() if k[0].startswith("ycsb-")}
    other = {k: v for k, v in summary.items() if not k[0].startswith("ycsb-")}
    legend = ("Colours: throughput ratios 🔵 > +5% (better), 🟢 within ±5%, 🟡 to -15%, 🟠 to -30%, 🔴 below; "
              "latency differences 🔵 < -5% (better), 🟢 within ±5%, 🟡 to +15%, 🟠 to +30%, 🔴 above. "
              f"Differences are against {SYSTEM_LABEL[systems[0]]}.")
    parts = [
        f"# Strata vs PostgreSQL: {meta['started']}\n",
        f"Command: `{meta['command']}`  \n"
        f"Machine: {meta['machine']}, {meta['cores']} cores, {meta['memory_gb']} GiB; "
        f"{meta['reps']} measured reps of {meta['duration_s']} s per cell after a {meta['warmup_s']} s warm-up, "
        f"systems alternating in the order {', '.join(SYSTEM_LABEL[s] for s in systems)}; medians with (min-max).  \n"
        f"Data: pgbench scale {meta['scale']}; sysbench {meta['sysbench_tables']} tables x {meta['sysbench_table_size']} rows; "
        f"YCSB {meta['ycsb_records']} records; cold-start {meta.get('coldstart_tenants', '-')} tenants.  \n"
        "Versions: " + "; ".join(f"{k}: {v}" for k, v in meta["versions"].items()) + "\n",
        legend + "\n",
        *([f"**Warning: {meta['warning']}**\n"] if meta.get("warning") else []),
        "## Throughput\n", throughput_table(summary, systems, units),
        *(["## Strata split vs Strata (1 process)\n", split_table(summary)]
          if {"strata", "strata-split"} <= set(systems) else []),
        "## Latency (ms, mean and p99 of the medians over reps)\n",
        latency_table(other, systems) if other else "No cells.\n",
        "## YCSB latency per operation type (ms)\n",
        latency_table(ycsb, systems) if ycsb else "No YCSB cells.\n",
        *(["## Cold starts (ms from connect to the first row; p50 and p99 are medians over reps, max the worst)\n",
           coldstart_table(summary, systems)] if any(k[0] == "cold-start" for k in summary) else []),
        "## Server resources (median per run; work per CPU-s = transactions, operations or connections per server CPU-second)\n",
        resources_table(summary, systems),
        "## Failed cells\n", failures_table(summary, loads),
        "## Server restarts\n", restarts_text(events),
        "## Notes\n", NOTES,
    ]
    return "\n".join(parts)


NOTES = """- All clients (pgbench, sysbench, the YCSB JVM, the connection-storm
  client) run on the same 2 cores as the servers, so absolute numbers are lower
  than on a dedicated client machine; quote ratios from one run.
- PgBouncer is Debian's 1.18 in transaction mode (pool size 20, PostgreSQL
  reached over its unix socket). It has no `max_prepared_statements`, so it is
  measured with the simple and extended protocols only; its 'prepared' cells
  are n/a. Its CPU and memory figures include the PostgreSQL behind it.
- Strata (1 process) is `strata start --single-process`, the all-in-one
  server; Strata split is `strata start`: a supervisor, the KV server, the
  proxy and the SQL process it starts on the first connection. Same binary,
  each on its own data, loaded the same way.
- Server CPU is utime+stime of every process of the server (PostgreSQL: the
  postmaster, its backends, reaped ones included, and background workers;
  Strata split: the supervisor and all its descendants).
  Peak PSS divides shared memory (PostgreSQL's shared_buffers) among the
  processes mapping it; peak RSS counts it once per process.
- cold-start: Strata split holds `coldstart_tenants` tenants (100; 10 in
  --smoke), each with a 10-row table, and runs with `--idle-timeout 2s`
  whenever cold-start cells are planned (so in a run with other families
  too, its default tenant's process may retire between runs; pgbench and
  sysbench exclude connection time). Each run waits until every tenant is
  suspended, then N clients wake them all: per tenant one fresh connection +
  `SELECT` while it sleeps (cold) and one right after (warm). PostgreSQL and
  Strata (1 process) have no tenants: both of their connections are fresh
  connections to database postgres. Throughput is tenants woken per second.
- A failed cell is a client error (unsupported statement, error reply, timeout)
  recorded with the first error line; the full output tail is in results.json.
"""
