"""PNG charts of one run, drawn with matplotlib (headless, Agg backend):

  throughput-<family>.png  throughput against clients, one panel per
                           protocol mode and transport, one line per system
                           (the median, with min-max as error bars);
  latency-<family>.png     p50/p95/p99 latency per system, one panel per
                           mode, transport and client count (for YCSB, per
                           operation type at the largest client count).

Charts are a view of the summary from `report`; they never change results.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .report import SYSTEM_LABEL  # noqa: E402

COLOR = {"postgresql": "#336791", "strata": "#e8710a", "strata-split": "#b5338a", "pgbouncer": "#7b9e3e"}
PCTS = ("p50", "p95", "p99")


def draw_all(summary, systems, units, outdir):
    written = []
    for family in sorted({k[0] for k in summary}):
        cells = {k: v for k, v in summary.items() if k[0] == family}
        written.append(throughput(family, cells, systems, units.get(family, ""), outdir))
        written.append(latency(family, cells, systems, outdir))
    return [w for w in written if w]


def panels(cells):
    return sorted({(k[1], k[2]) for k in cells})


def throughput(family, cells, systems, unit, outdir):
    combos = panels(cells)
    fig, axes = plt.subplots(1, len(combos), figsize=(4.2 * len(combos), 3.4), squeeze=False)
    for ax, (mode, transport) in zip(axes[0], combos):
        for s in systems:
            pts = sorted((k[3], v[s]["throughput"]) for k, v in cells.items()
                         if k[1:3] == (mode, transport) and v.get(s, {}).get("status") == "ok")
            if not pts:
                continue
            xs = [c for c, _ in pts]
            med = [t["median"] for _, t in pts]
            err = [[t["median"] - t["min"] for _, t in pts], [t["max"] - t["median"] for _, t in pts]]
            ax.errorbar(xs, med, yerr=err, marker="o", capsize=3, label=SYSTEM_LABEL[s], color=COLOR[s])
        ax.set_title(f"{mode}, {transport}", fontsize=10)
        ax.set_xlabel("clients")
        ax.set_ylabel(unit)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({k[3] for k in cells}))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.suptitle(f"{family}: throughput vs clients (median, min-max)", fontsize=11)
    return save(fig, outdir, f"throughput-{family}.png")


def latency(family, cells, systems, outdir):
    if family.startswith("ycsb-"):
        top = max(k[3] for k in cells)
        combos = [(k, label) for k in sorted(cells) if k[3] == top
                  for label in sorted({lb for v in cells[k].values() if v["status"] == "ok" for lb in v["latency_ms"]})]
    else:
        combos = [(k, None) for k in sorted(cells)]
    combos = [(k, lb) for k, lb in combos if any(v["status"] == "ok" for v in cells[k].values())]
    if not combos:
        return None
    cols = min(4, len(combos))
    rows = (len(combos) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False)
    for ax in axes.flat[len(combos):]:
        ax.axis("off")
    for ax, (key, label) in zip(axes.flat, combos):
        draw_percentiles(ax, cells[key], systems, label)
        ax.set_title(f"{key[1]}, {key[2]}, c{key[3]}" + (f", {label}" if label else ""), fontsize=9)
    fig.suptitle(f"{family}: latency percentiles (ms, median over reps)", fontsize=11)
    return save(fig, outdir, f"latency-{family}.png")


def draw_percentiles(ax, cell, systems, label):
    width = 0.8 / max(1, len(systems))
    for i, s in enumerate(systems):
        v = cell.get(s)
        if not v or v["status"] != "ok":
            continue
        lat = v["latency_ms"].get(label) if label else next(iter(v["latency_ms"].values()), None)
        if not lat:
            continue
        ys = [lat.get(p) or 0 for p in PCTS]
        ax.bar([x + i * width for x in range(len(PCTS))], ys, width, label=SYSTEM_LABEL[s], color=COLOR[s])
    ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(PCTS))])
    ax.set_xticklabels(PCTS)
    ax.set_ylabel("ms")
    ax.grid(axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)


def save(fig, outdir, name):
    fig.tight_layout()
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
