"""Resource use of a server while one measured run executes, from /proc.

A server is a process tree: Strata (1 process) is one process, Strata split
is its supervisor with the KV server, the proxy and the SQL processes the
proxy starts on a tenant's first connection, PostgreSQL is the postmaster
plus one backend per connection plus its background workers, and the
PgBouncer column is PgBouncer plus the PostgreSQL behind it. The roots come
from `systems`; this module finds every descendant by walking the parent
links in /proc/<pid>/stat, again at every sample, so processes started
during a run are counted too.

What it measures, per run:
  cpu_s        utime+stime of every process in the tree, plus cutime+cstime
               (the CPU of children already reaped: PostgreSQL backends that
               exited during the run), as a difference between the start and
               the end of the run;
  write_mb     write_bytes from /proc/<pid>/io over the tree (the kernel adds
               a reaped child's I/O to its parent, like CPU), as a difference;
  peak_rss_mb  the highest sum of VmRSS over the tree, sampled every
               SAMPLE_S; for PostgreSQL this counts shared_buffers once per
               backend that touched it, so
  peak_pss_mb  (the highest sum of Pss, shared pages divided among the
               processes that map them) is the fair memory figure.
"""

import os
import threading

SAMPLE_S = 0.5
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """(ppid, cpu ticks incl. reaped children) or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3 of stat); ppid is field 4, utime..cstime are 14..17.
    return int(fields[1]), sum(int(x) for x in fields[11:15])


def tree(roots):
    """Every process whose parent chain leads to one of roots, each once
    (roots may already hold descendants: Strata split's pids() does)."""
    roots = {r for r in roots if r}
    if not roots:
        return []
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st:
                children.setdefault(st[0], []).append(int(entry))
    out, seen, todo = [], set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        st = _stat(pid)
        if st:
            total += st[1]
    return total / TICK


def write_bytes(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io") as f:
                for line in f:
                    if line.startswith("write_bytes:"):
                        total += int(line.split()[1])
        except (OSError, ValueError):
            pass
    return total


def memory_kb(pids):
    """(sum of Rss, sum of Pss) in kB over pids."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except (OSError, ValueError):
            pass
    return rss, pss


class Monitor:
    """Measures one server during one run: `with Monitor(server.pids): ...`,
    then `.result()`. pids_fn and the tree walk are redone at the start, at
    every sample and at the end, so a server restarted under it is still
    followed, and a process that appeared during the run (a SQL process
    Strata split's proxy started) adds its memory to the samples and its
    whole CPU and I/O to the end figures."""

    def __init__(self, pids_fn):
        self.pids_fn = pids_fn
        self.stop = threading.Event()
        self.peak_rss = self.peak_pss = 0

    def __enter__(self):
        pids = tree(self.pids_fn())
        self.cpu0, self.wb0 = cpu_seconds(pids), write_bytes(pids)
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while True:
            rss, pss = memory_kb(tree(self.pids_fn()))
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            if self.stop.wait(SAMPLE_S):
                return

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        pids = tree(self.pids_fn())
        self.cpu1, self.wb1 = cpu_seconds(pids), write_bytes(pids)
        return False

    def result(self):
        return {
            "cpu_s": round(max(0.0, self.cpu1 - self.cpu0), 2),
            "write_mb": round(max(0, self.wb1 - self.wb0) / 1e6, 1),
            "peak_rss_mb": round(self.peak_rss / 1024, 1),
            "peak_pss_mb": round(self.peak_pss / 1024, 1),
        }
