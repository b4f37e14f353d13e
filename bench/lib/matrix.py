"""Which cells run and in what order, and running them.

A cell is one workload family at one protocol mode, transport and client
count. The plan is every family selected by --only, crossed with the modes
and transports it supports (each family's defaults unless --modes or
--transport say otherwise) and the --clients list.

Fairness rules that live here: data is loaded into every server before the
first cell; each family, mode and transport gets a warm-up run per system
(before its first client count), each cell --reps measured repetitions, and
within each repetition the systems alternate in a fixed order (PostgreSQL,
Strata (1 process), Strata split, PgBouncer+PG), so drift over time (page cache,
checkpoints, thermal) falls on all of them alike. A failed run is recorded
with its reason and the matrix goes on; a cell that fails its warm-up on a
system is not measured there (the error is recorded for each repetition); a
server that died is restarted on its data before its next run.
"""

import dataclasses
import time

from . import coldstart, connstorm, pgbench, resources, sysbench, ycsb
from .clients import CellError
from .systems import STRATA, ServerDown

FAMILIES = pgbench.FAMILIES + sysbench.FAMILIES + ycsb.FAMILIES + connstorm.FAMILIES + coldstart.FAMILIES
BY_NAME = {f.name: f for f in FAMILIES}
LOAD_ORDER = ("pgbench", "sysbench", "ycsb", "coldstart")


@dataclasses.dataclass(frozen=True)
class Cell:
    family: str
    mode: str
    transport: str
    clients: int

    def key(self):
        return (self.family, self.mode, self.transport, self.clients)

    def __str__(self):
        return f"{self.family} {self.mode} {self.transport} c{self.clients}"


def select_families(only):
    """Families named in --only: exact names, or prefixes such as 'sysbench'."""
    if not only:
        return list(FAMILIES)
    out = []
    for word in only.split(","):
        match = [f for f in FAMILIES if f.name == word or f.name.startswith(word + "-")]
        if not match:
            raise SystemExit(f"--only: unknown cell family {word!r}; known: {', '.join(BY_NAME)}")
        out += [f for f in match if f not in out]
    return out


def choose(asked, supported, default):
    if len(supported) == 1:
        return list(supported)  # nothing to vary (connstorm's mode, YCSB's transport)
    if asked:
        return [x for x in asked if x in supported]
    return list(default)


def plan(families, modes, transports, clients, first_mode_only=False):
    cells = []
    for fam in families:
        fmodes = choose(modes, fam.modes, fam.default_modes)
        if first_mode_only:
            fmodes = fmodes[:1]
        for mode in fmodes:
            for transport in choose(transports, fam.transports, fam.default_transports):
                cells += [Cell(fam.name, mode, transport, c) for c in clients]
    return cells


def estimate_s(cells, systems, cfg):
    """Rough wall time of the matrix: measured runs, warm-ups and per-run
    client overhead, plus loading and server start-up."""
    total, groups = 0.0, set()
    for cell in cells:
        fam = BY_NAME[cell.family]
        n = sum(1 for s in systems if s.supports(cell.mode))
        total += n * cfg.reps * (cfg.duration + fam.overhead_s)
        if cfg.warmup and cell.key()[:3] not in groups:
            groups.add(cell.key()[:3])
            total += n * (cfg.warmup + fam.overhead_s)
    loads = {BY_NAME[c.family].load_key for c in cells} - {""}
    loaders = {"postgresql" if s.name == "pgbouncer" else s.name for s in systems}  # PgBouncer uses PG's data
    return total + len(loads) * cfg.scale * 2 * len(loaders) + 20


class Runner:
    """Loads data, then runs every cell against every system, collecting one
    record per measured run (or per skipped/failed system) in self.runs."""

    def __init__(self, cfg, measured, servers):
        self.cfg, self.measured, self.servers = cfg, measured, servers
        self.runs, self.loads = [], []
        self.events = []  # servers found dead and restarted
        self.load_errors = {}  # (server name, load key) -> reason
        self.skip = {}  # (cell key, system name) -> reason, from a failed warm-up
        self.down = {}  # system name -> reason, when it cannot be restarted
        self.warmed = set()  # (family, mode, transport, system) already warmed up

    def start(self):
        """Starts every server. A Strata (either) that does not start is a
        result (all its cells fail with the reason); a PostgreSQL or PgBouncer
        that does not start is a broken instrument and raises."""
        for server in self.servers:
            try:
                server.start()
            except ServerDown as e:
                if server.name not in STRATA:
                    raise
                self.down[server.name] = f"{server.name} did not start: {e}"
                print(self.down[server.name], flush=True)

    def load(self, cells):
        keys = [k for k in LOAD_ORDER if any(BY_NAME[c.family].load_key == k for c in cells)]
        for server in self.servers:
            if not server.loads_data or server.name in self.down:
                continue
            for key in keys:
                fam = next(f for f in FAMILIES if f.load_key == key)
                t0 = time.time()
                err, detail = None, ""
                try:
                    fam.load(server.endpoint("tcp"), self.cfg)
                except CellError as e:
                    err, detail = str(e), e.detail
                    self.load_errors[(server.name, key)] = err
                rec = {"system": server.name, "data": key, "seconds": round(time.time() - t0, 1), "error": err}
                if detail:
                    rec["detail"] = detail
                self.loads.append(rec)
                print(f"load {key} into {server.name}: " + (f"FAILED: {err}" if err else f"{rec['seconds']} s"), flush=True)
            server.settle()

    def load_error(self, system, cell):
        key = BY_NAME[cell.family].load_key
        owner = "postgresql" if system.name == "pgbouncer" else system.name
        return self.load_errors.get((owner, key))

    def run_all(self, cells):
        for i, cell in enumerate(cells, 1):
            print(f"== [{i}/{len(cells)}] {cell}", flush=True)
            active = self.prepare_cell(cell)
            for rep in range(self.cfg.reps):
                for system in active:
                    self.measure(cell, system, rep)

    def prepare_cell(self, cell):
        """Records n/a and load failures; warms up the rest; returns the systems to measure."""
        active = []
        for system in self.measured:
            if not system.supports(cell.mode):
                self.record(cell, system, None, status="n/a",
                            error="PgBouncer 1.18 in transaction mode cannot carry protocol-level prepared statements")
                continue
            err = self.load_error(system, cell)
            if err:
                for rep in range(self.cfg.reps):
                    self.record(cell, system, rep, status="failed", error=f"load failed: {err}")
                continue
            active.append(system)
        for system in list(active) if self.cfg.warmup else []:
            # One warm-up per system for each family, mode and transport (at
            # its first client count): caches, JIT and pools are warm after it.
            group = (cell.family, cell.mode, cell.transport, system.name)
            if group in self.warmed:
                continue
            self.warmed.add(group)
            try:
                self.ensure_up(system, f"{cell} warm-up")
                BY_NAME[cell.family].run(system.endpoint(cell.transport), cell, self.cfg.warmup, self.cfg)
            except (CellError, ServerDown) as e:
                self.skip[(cell.key(), system.name)] = f"warm-up failed: {e}"
        return active

    def ensure_up(self, system, where):
        if system.name in self.down:
            raise ServerDown(self.down[system.name])
        servers = [system] + ([system.pg] if system.name == "pgbouncer" else [])
        for s in servers:
            if not s.alive():
                code = s.proc.returncode if s.proc else None
                event = {"system": s.name, "before": where, "exit_code": code, "log_tail": s.log_tail()}
                self.events.append(event)
                print(f"   {s.name} had exited (code {code}); restarting it on its data before {where}", flush=True)
                try:
                    s.restart()
                except ServerDown as e:
                    self.down[system.name] = f"{s.name} could not be restarted: {e}"
                    raise ServerDown(self.down[system.name]) from None

    def measure(self, cell, system, rep):
        skip = self.skip.get((cell.key(), system.name))
        if skip:
            self.record(cell, system, rep, status="failed", error=skip)
            return
        fam = BY_NAME[cell.family]
        metrics, err, detail = None, None, ""
        try:
            self.ensure_up(system, f"{cell} rep {rep}")
            with resources.Monitor(system.pids) as mon:
                try:
                    metrics = fam.run(system.endpoint(cell.transport), cell, self.cfg.duration, self.cfg)
                finally:
                    time.sleep(0.3)  # let PostgreSQL reap the backends, so their CPU is counted
        except CellError as e:
            err, detail = str(e), e.detail
        except ServerDown as e:
            err = f"server down: {e}"
        if not system.alive():
            err = f"{system.name} exited during the run: " + (err or "") + f"\n{system.log_tail()}"
        res = mon.result() if metrics else None
        self.record(cell, system, rep, status="failed" if err else "ok", error=err, detail=detail,
                    metrics=metrics, resources=res)

    def record(self, cell, system, rep, status, error=None, detail="", metrics=None, resources=None):
        rec = {"family": cell.family, "mode": cell.mode, "transport": cell.transport, "clients": cell.clients,
               "system": system.name, "rep": rep, "status": status, "error": error}
        if detail:
            rec["detail"] = detail
        if metrics:
            rec["metrics"] = metrics
        if resources:
            # A family whose run is not timed (cold-start) says how much it did.
            work = metrics.get("work", metrics["throughput"] * self.cfg.duration)
            resources["per_cpu_s"] = round(work / resources["cpu_s"], 1) if resources["cpu_s"] > 0 else None
            rec["resources"] = resources
        self.runs.append(rec)
        if rep is not None or status != "ok":
            print("   " + describe(rec), flush=True)


def describe(rec):
    who = f"{rec['system']:<12} rep {rec['rep']}" if rec["rep"] is not None else f"{rec['system']:<12}      "
    if rec["status"] != "ok":
        return f"{who}  {rec['status'].upper()}: {' '.join((rec['error'] or '').split())[:200]}"
    m, r = rec["metrics"], rec["resources"]
    unit = BY_NAME[rec["family"]].unit
    return f"{who}  {m['throughput']:10.1f} {unit:<6} server cpu {r['cpu_s']:6.2f} s  pss {r['peak_pss_mb']:7.1f} MB"
