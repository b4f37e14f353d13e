"""The systems under test: a real PostgreSQL 15, Strata twice (the all-in-one
server, `strata start --single-process`, and the multi-process one, `strata
start`: a supervisor with a KV server, a proxy and per-tenant SQL
processes), and PgBouncer in transaction mode in front of that same
PostgreSQL.

This module owns starting and stopping them (each in its own directory under
the work directory, on a free 127.0.0.1 port and a private unix-socket
directory), their configuration, how a client reaches them over each
transport (`Endpoint`), which process ids make up each server (for
`resources`), and noticing and recovering from a server that died. Both
Strata systems run the same binary, each on its own data directory, port
and socket directory.

Fairness rules that live here: both databases are durable (PostgreSQL with
fsync and synchronous_commit on; Strata syncs its WAL before acknowledging
every commit), both listen on loopback TCP and a unix socket, and both start
from an empty data directory. PgBouncer shares PostgreSQL's data, so it never
loads data of its own.
"""

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import time

from . import resources

PG_BIN = "/usr/lib/postgresql/15/bin"

# PostgreSQL's configuration for this machine (2 cores, 24 GiB), durable.
PG_CONF = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "shared_buffers": "1GB",
    "effective_cache_size": "8GB",
    "work_mem": "16MB",
    "maintenance_work_mem": "256MB",
    "max_connections": "200",
    "wal_buffers": "16MB",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "15min",
    "logging_collector": "off",
}

# PgBouncer 1.18 (Debian 12): transaction pooling. It has no
# max_prepared_statements (that arrived in 1.21), so protocol-level prepared
# statements cannot go through it: the harness skips 'prepared' cells for it.
PGBOUNCER_POOL_SIZE = 20

# The systems bench/run knows, in alternation order, and those whose
# failures are results (Strata's) rather than a broken instrument.
NAMES = ("postgresql", "strata", "strata-split", "pgbouncer")
STRATA = ("strata", "strata-split")


@dataclasses.dataclass
class Endpoint:
    """How a client reaches a server: host is 127.0.0.1 or a socket directory."""
    host: str
    port: int
    user: str = "postgres"
    dbname: str = "postgres"
    # The `strata tenant` command of a server that has tenants (Strata
    # split), with its data directory: (binary, "tenant", "--data-dir", DIR).
    tenants: tuple = ()


class ServerDown(Exception):
    """A server exited or could not be (re)started; carries its log tail."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, log, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise ServerDown(f"exited with code {proc.returncode} while starting:\n{log_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise ServerDown(f"nothing listening on 127.0.0.1:{port} after {timeout}s:\n{log_tail(log)}")


def log_tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:]).rstrip()
    except OSError:
        return "(no log)"


def as_postgres():
    """PostgreSQL and PgBouncer refuse to run as root: as root, run them as
    the 'postgres' user (subprocess arguments for Popen/run)."""
    if os.geteuid() == 0:
        return {"user": "postgres", "group": "postgres", "extra_groups": []}
    return {}


def fresh_dir(path, owned_by_postgres=False):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    if owned_by_postgres and os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


def version_of(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


class Server:
    """Common shape: name (results key), label (report heading), loads_data,
    start()/stop()/alive()/restart(), endpoint(transport), pids()."""
    name = ""
    label = ""
    loads_data = True
    proc = None

    def supports(self, mode):
        return True

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self):
        return log_tail(self.log)

    def settle(self):
        """Called once after loading, before the first measured run."""

    def restart(self):
        """Starts a server that died again on its existing data."""
        self.stop()
        self._launch()

    def stop(self):
        """Stops a server this harness launched as `self.proc` (SIGTERM, then
        SIGKILL after 30 s)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None


class Postgres(Server):
    name = "postgresql"
    label = "PostgreSQL"

    def __init__(self, work, logdir):
        self.dir = os.path.join(work, "pg")
        self.sock = os.path.join(work, "pgsock")
        self.log = os.path.join(logdir, "postgresql.log")
        self.port = free_port()

    def start(self):
        fresh_dir(self.dir, owned_by_postgres=True)
        fresh_dir(self.sock, owned_by_postgres=True)
        subprocess.run([f"{PG_BIN}/initdb", "-D", self.dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, **as_postgres())
        conf = dict(PG_CONF, port=str(self.port), unix_socket_directories=f"'{self.sock}'")
        with open(os.path.join(self.dir, "postgresql.auto.conf"), "a") as f:
            for k, v in conf.items():
                f.write(f"{k} = {v}\n")
        self._launch()

    def _launch(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([f"{PG_BIN}/postgres", "-D", self.dir], stdout=log, stderr=log,
                                         start_new_session=True, **as_postgres())
        wait_port(self.port, self.proc, self.log)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self.proc = None

    def endpoint(self, transport):
        return Endpoint("127.0.0.1" if transport == "tcp" else self.sock, self.port)

    def settle(self):
        """Statistics for the planner and a checkpoint, so that the bulk load's
        dirty pages are not written during the first measured runs (what any
        operator does after a bulk load)."""
        for sql in ("VACUUM ANALYZE", "CHECKPOINT"):
            subprocess.run(["psql", "-h", self.sock, "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                            "-qc", sql], check=True, stdout=subprocess.DEVNULL, timeout=1800)

    def pids(self):
        # The postmaster; resources.py adds every descendant (the backends).
        return [self.proc.pid] if self.proc else []

    def version(self):
        return version_of([f"{PG_BIN}/postgres", "--version"])

    def config(self):
        return dict(PG_CONF)


def start_flags(binary):
    """The text of `strata start --help` (empty if it cannot run), to tell
    what this build has: --single-process (the split) and --no-tls."""
    try:
        out = subprocess.run([binary, "start", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout + out.stderr


class Strata(Server):
    """The all-in-one server: KV and SQL in one process."""
    name = "strata"
    label = "Strata (1 process)"
    dirname = "strata"
    needs_split = False  # a binary from before the split is the same all-in-one server

    def __init__(self, work, logdir, binary):
        self.dir = os.path.join(work, self.dirname)
        self.sock = os.path.join(work, self.dirname + "-sock")
        self.log = os.path.join(logdir, self.dirname + ".log")
        self.bin = binary
        self.port = free_port()
        # What `strata start --help` lists, asked at start(): --single-process
        # (a build with the split; older ones only have the all-in-one
        # server) and --no-tls.
        self.flags = ""

    @property
    def split(self):
        return "--single-process" in self.flags

    def start(self):
        self.flags = start_flags(self.bin)
        if self.needs_split and not self.split:
            raise ServerDown(f"{self.bin} has no multi-process mode (`strata start --help` lists no "
                             "--single-process): this build predates the split")
        fresh_dir(self.dir)
        fresh_dir(self.sock)
        self._launch()

    def command(self):
        # A binary from before the split has no such flag: its plain start is the all-in-one server.
        flags = ["--single-process"] if self.split else []
        return [self.bin, "start", *flags, "--listen", f"127.0.0.1:{self.port}",
                "--socket-dir", self.sock, "--data-dir", self.dir]

    def _launch(self):
        env = dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "warn"))
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=log, env=env, start_new_session=True)
        wait_port(self.port, self.proc, self.log)

    def endpoint(self, transport):
        return Endpoint("127.0.0.1" if transport == "tcp" else self.sock, self.port)

    def pids(self):
        return [self.proc.pid] if self.proc else []

    def version(self):
        return f"{version_of([self.bin, '--version'])} ({self.bin})"

    def config(self):
        return {"binary": self.bin, "command": " ".join(self.command()), "processes": "one",
                "durability": "WAL synced before every commit is acknowledged"}


class StrataSplit(Strata):
    """The multi-process server: `strata start` is a supervisor that runs
    `strata kv` and `strata proxy`; the proxy starts one `strata sql` per
    tenant on the tenant's first connection. All of them are the server."""
    name = "strata-split"
    label = "Strata split"
    dirname = "strata-split"
    needs_split = True
    # The supervisor stops the proxy, the KV server, then any adopted SQL
    # process, allowing each 30 s.
    stop_timeout = 100

    def __init__(self, work, logdir, binary, idle_timeout=None):
        super().__init__(work, logdir, binary)
        # A short --idle-timeout lets the cold-start cells find their tenants
        # asleep; None keeps Strata's default (5 min).
        self.idle_timeout = idle_timeout

    def command(self):
        idle = ["--idle-timeout", self.idle_timeout] if self.idle_timeout else []
        # The PostgreSQL here runs without ssl, so libpq clients (sslmode=prefer)
        # reach it in clear: the split's proxy refuses TLS too, for the same path.
        no_tls = ["--no-tls"] if "--no-tls" in self.flags else []
        return [self.bin, "start", "--listen", f"127.0.0.1:{self.port}", "--socket-dir", self.sock,
                "--data-dir", self.dir, *idle, *no_tls]

    def endpoint(self, transport):
        return dataclasses.replace(super().endpoint(transport), tenants=(self.bin, "tenant", "--data-dir", self.dir))

    def pids(self):
        # The supervisor and every descendant now (KV server, proxy, SQL
        # processes), read from /proc at each call: a SQL process that the
        # proxy started since the last call is included.
        return resources.tree([self.proc.pid]) if self.proc else []

    def stop(self):
        """SIGTERM to the supervisor, which stops its children; SIGKILL to its
        whole process group after stop_timeout, and to anything of that group
        still left (a SQL process outliving a supervisor that died)."""
        if self.proc is None:
            return
        group = self.proc.pid  # start_new_session: the group id is the supervisor's pid
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                kill_group(group)
                self.proc.wait(timeout=30)
        kill_group(group)
        self.proc = None

    def config(self):
        return dict(super().config(), processes="supervisor + strata kv + strata proxy + one strata sql per tenant",
                    idle_timeout=self.idle_timeout or "default (5min)")


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left in it


class PgBouncer(Server):
    name = "pgbouncer"
    label = "PgBouncer+PG"
    loads_data = False

    def __init__(self, work, logdir, postgres):
        self.pg = postgres
        self.dir = os.path.join(work, "pgbouncer")
        self.log = os.path.join(logdir, "pgbouncer.log")
        self.port = free_port()

    def supports(self, mode):
        return mode != "prepared"

    def start(self):
        fresh_dir(self.dir, owned_by_postgres=True)
        ini = os.path.join(self.dir, "pgbouncer.ini")
        with open(os.path.join(self.dir, "userlist.txt"), "w") as f:
            f.write('"postgres" ""\n')
        with open(ini, "w") as f:
            f.write(self._ini())
        self._launch()

    def _ini(self):
        conf = self.config()
        lines = ["[databases]", f"postgres = host={self.pg.sock} port={self.pg.port} dbname=postgres user=postgres", "",
                 "[pgbouncer]"] + [f"{k} = {v}" for k, v in conf.items()]
        return "\n".join(lines) + "\n"

    def config(self):
        return {
            "listen_addr": "127.0.0.1",
            "listen_port": str(self.port),
            "unix_socket_dir": self.dir,
            "auth_type": "trust",
            "auth_file": os.path.join(self.dir, "userlist.txt"),
            "pool_mode": "transaction",
            "default_pool_size": str(PGBOUNCER_POOL_SIZE),
            "max_client_conn": "1000",
            # JDBC and psql send these at startup; PgBouncer would refuse them.
            "ignore_startup_parameters": "extra_float_digits,options",
            "pidfile": os.path.join(self.dir, "pgbouncer.pid"),
        }

    def _launch(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(["pgbouncer", os.path.join(self.dir, "pgbouncer.ini")], stdout=log, stderr=log,
                                         start_new_session=True, **as_postgres())
        wait_port(self.port, self.proc, self.log)

    def endpoint(self, transport):
        return Endpoint("127.0.0.1" if transport == "tcp" else self.dir, self.port)

    def pids(self):
        # PgBouncer itself plus the PostgreSQL it pools for: both serve the load.
        return ([self.proc.pid] if self.proc else []) + self.pg.pids()

    def version(self):
        return version_of(["pgbouncer", "--version"])


def make(names, work, logdir, strata_bin, split_idle_timeout=None):
    """Builds the measured systems in alternation order (PostgreSQL, Strata,
    Strata split, PgBouncer) and the servers to start and load, which include PostgreSQL
    whenever PgBouncer is measured, even if PostgreSQL itself is not.
    split_idle_timeout is Strata split's --idle-timeout (None: its default)."""
    measured, pg = [], None
    if "postgresql" in names or "pgbouncer" in names:
        pg = Postgres(work, logdir)
    if "postgresql" in names:
        measured.append(pg)
    if "strata" in names:
        measured.append(Strata(work, logdir, strata_bin))
    if "strata-split" in names:
        measured.append(StrataSplit(work, logdir, strata_bin, split_idle_timeout))
    if "pgbouncer" in names:
        measured.append(PgBouncer(work, logdir, pg))
    servers = ([pg] if pg else []) + [s for s in measured if s is not pg]
    return measured, servers
