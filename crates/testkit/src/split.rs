//! Helpers for the multi-process cluster.
//!
//! `strata start` is a supervisor of child processes: `strata kv` (the shared
//! KV server), `strata proxy` (listens on the port and the unix socket and
//! routes each client to a tenant) and one `strata sql` per tenant, started
//! by the proxy on the tenant's first connection. The helpers here reach a
//! tenant (psql, tokio-postgres and raw protocol connections that name it in
//! the startup `options`), run the `strata tenant` command line against the
//! running cluster, read the children's pids from `<data>/run/*.pid`, kill
//! one child with SIGKILL, and wait (always bounded in time) until the
//! supervisor has brought the cluster back.
//!
//! They are Strata-only: PostgreSQL has no tenants, so the suites using them
//! skip the PostgreSQL target.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::{run_with_timeout, strata_bin, RawClient, TestServer, CLIENT_TIMEOUT};

/// How long a test waits for the supervisor to replace a killed child (KV
/// server, proxy, a tenant's SQL process) and for new connections to work
/// again: the spec promises about 30 s.
pub const RECOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one attempt (connect and one statement) of a polling wait may
/// take before it counts as failed and the next attempt starts.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to sleep between the attempts of a polling wait.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The startup `options` value that routes a connection to `tenant`.
pub fn cluster_option(tenant: &str) -> String {
    format!("--cluster={tenant}")
}

/// One row of `strata tenant list --json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantInfo {
    /// The tenant's name (`[a-z0-9-]{1,63}`).
    pub name: String,
    /// Its numeric id (the KV key prefix).
    pub id: u64,
    /// `running` while a SQL process of it runs, else `suspended`.
    pub state: String,
    /// The OS pids of its SQL processes (empty while suspended).
    pub sql_pids: Vec<i32>,
    /// How many SQL processes may serve it at once.
    pub max_sql_processes: u64,
    /// What its keyspace takes in the KV store.
    pub stored_bytes: u64,
    /// When it was created (a timestamp; only checked to be non-empty).
    pub created: String,
    /// When it last had a client session (now while it has one); None if
    /// it never had one.
    pub last_active: Option<String>,
}

impl TenantInfo {
    /// Whether the list reported it `running`.
    pub fn is_running(&self) -> bool {
        self.state == "running"
    }

    /// Its SQL process pids as a set, for comparisons that ignore order.
    pub fn pid_set(&self) -> BTreeSet<i32> {
        self.sql_pids.iter().copied().collect()
    }
}

/// Parses the output of `strata tenant list --json`: a JSON array of
/// objects with `name`, `id`, `state`, `sql_pids`, `max_sql_processes`,
/// `stored_bytes`, `created` and `last_active`. Returns `Err` with the reason (and the text) if the output
/// does not have exactly that shape, so that a wrong type fails loudly
/// instead of being read as a default.
pub fn parse_tenant_list(json: &str) -> Result<Vec<TenantInfo>, String> {
    use serde_json::Value;
    let bad = |why: String| format!("{why} in `tenant list --json` output:\n{json}");
    let value: Value = serde_json::from_str(json.trim()).map_err(|e| bad(format!("{e}")))?;
    let Value::Array(items) = value else { return Err(bad("not a JSON array".into())) };
    let mut tenants = Vec::new();
    for item in &items {
        let Value::Object(obj) = item else { return Err(bad(format!("{item} is not an object"))) };
        let get = |key: &str| obj.get(key).ok_or_else(|| bad(format!("no `{key}` in {item}")));
        let string = |key: &str| -> Result<String, String> {
            get(key)?
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad(format!("`{key}` of {item} is not a string")))
        };
        let unsigned = |key: &str| -> Result<u64, String> {
            get(key)?
                .as_u64()
                .ok_or_else(|| bad(format!("`{key}` of {item} is not a non-negative integer")))
        };
        let pids = match get("sql_pids")? {
            Value::Array(pids) => pids
                .iter()
                .map(|p| {
                    p.as_i64()
                        .and_then(|p| i32::try_from(p).ok())
                        .filter(|p| *p > 0)
                        .ok_or_else(|| bad(format!("`sql_pids` of {item} holds {p}, not a pid")))
                })
                .collect::<Result<Vec<i32>, String>>()?,
            _ => return Err(bad(format!("`sql_pids` of {item} is not an array"))),
        };
        tenants.push(TenantInfo {
            name: string("name")?,
            id: unsigned("id")?,
            state: string("state")?,
            sql_pids: pids,
            max_sql_processes: unsigned("max_sql_processes")?,
            stored_bytes: unsigned("stored_bytes")?,
            created: string("created")?,
            last_active: match get("last_active")? {
                Value::Null => None,
                Value::String(t) => Some(t.clone()),
                other => return Err(bad(format!("`last_active` of {item} is {other}"))),
            },
        });
    }
    Ok(tenants)
}

/// A `tokio_postgres::Config` for user and database `postgres` of `tenant`
/// (named in the startup `options` as `--cluster=NAME`) on
/// 127.0.0.1:`port`, with a 10 s connect timeout. Tests change the user,
/// database or options on it to try the other routing forms.
pub fn tenant_config(port: u16, tenant: &str) -> tokio_postgres::Config {
    let mut config = plain_config(port);
    config.options(cluster_option(tenant));
    config
}

/// A `tokio_postgres::Config` for user and database `postgres` on
/// 127.0.0.1:`port` that names no tenant (no `options`): the proxy routes
/// it by the database name, else to `default`.
pub fn plain_config(port: u16) -> tokio_postgres::Config {
    let mut config = tokio_postgres::Config::new();
    config
        .host("127.0.0.1")
        .port(port)
        .user("postgres")
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(10));
    config
}

/// Connects with `config` (no TLS) and drives the connection on a task of
/// the current tokio runtime, like [`crate::connect`].
pub async fn connect_config(
    config: &tokio_postgres::Config,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, conn) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(async move {
        // A killed SQL process or proxy ends the connection; the client
        // sees the error on its next call.
        let _ = conn.await;
    });
    Ok(client)
}

/// Opens a `tokio-postgres` connection to database `postgres` of `tenant`
/// as `postgres` (see [`tenant_config`]). A free function so that `'static`
/// load tasks can call it with just the port and the name.
pub async fn connect_tenant(
    port: u16,
    tenant: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    connect_config(&tenant_config(port, tenant)).await
}

/// Runs `sql` over the simple protocol and returns its rows the way
/// `psql -At` prints them: fields joined by `|`, rows by newlines, NULL as
/// the empty string.
pub async fn query_text(
    client: &tokio_postgres::Client,
    sql: &str,
) -> Result<String, tokio_postgres::Error> {
    let messages = client.simple_query(sql).await?;
    let mut rows = Vec::new();
    for m in &messages {
        if let tokio_postgres::SimpleQueryMessage::Row(row) = m {
            let fields: Vec<&str> = (0..row.len()).map(|i| row.get(i).unwrap_or("")).collect();
            rows.push(fields.join("|"));
        }
    }
    Ok(rows.join("\n"))
}

/// An error as `SQLSTATE severity: message` when the server sent one (so
/// failure messages show the code), else the client-side description.
pub fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.code().code(), db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// A multi-threaded tokio runtime (2 workers) for a synchronous test that
/// runs load tasks and holds async connections while it kills processes.
pub fn test_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Reads a pid file (decimal, maybe a trailing newline); `None` if it is
/// missing, being rewritten, or holds no positive number.
pub fn read_pid_file(path: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.trim().parse::<i32>().ok().filter(|p| *p > 0)
}

/// Whether process `pid` exists and has a thread that has not exited. A
/// killed child that its parent has not reaped yet is gone for our purposes;
/// but a killed multi-threaded process shows its main thread as a zombie
/// while its other threads are still exiting and still hold its files (the
/// KV server's RocksDB LOCK among them), so every thread is looked at.
pub fn pid_alive(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
            .is_some_and(|s| s.state != "Z" && s.state != "X")
    })
}

/// The fields of a `/proc/PID/stat` line that the test kit reads.
pub(crate) struct ProcStat {
    pub state: String,
    pub ppid: i32,
    pub pgrp: i32,
}

/// Process `pid`'s stat fields from /proc (None if gone).
pub(crate) fn proc_stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(stat: &str) -> Option<ProcStat> {
    // The fields after the parenthesised command name: state, ppid, pgrp, ...
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.to_string();
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcStat { state, ppid, pgrp })
}

/// The process ids in /proc.
pub(crate) fn all_pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
}

/// The live child processes of `parent` (see [`pid_alive`]).
pub fn children_of(parent: i32) -> BTreeSet<i32> {
    all_pids()
        .filter(|&pid| proc_stat(pid).is_some_and(|s| s.ppid == parent) && pid_alive(pid))
        .collect()
}

/// The fork servers proxy `proxy` runs: its children running `strata sql
/// --fork-server` (the processes they fork have the same command line but
/// are not the proxy's children).
pub fn fork_servers(proxy: i32) -> BTreeSet<i32> {
    children_of(proxy)
        .into_iter()
        .filter(|&p| process_args(p).iter().any(|a| a == "--fork-server"))
        .collect()
}

/// The SQL processes proxy `proxy` started: its own `strata sql --pool`
/// children and those its fork servers forked.
pub fn sql_processes_of(proxy: i32) -> BTreeSet<i32> {
    let execd =
        children_of(proxy).into_iter().filter(|&p| process_args(p).iter().any(|a| a == "--pool"));
    let forked = fork_servers(proxy).into_iter().flat_map(children_of);
    execd.chain(forked).collect()
}

/// The inodes of the sockets process `pid` has open (none if it is gone).
pub fn socket_inodes(pid: i32) -> BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The inodes of the far ends of the unix socket connections process
/// `pid` holds (from `ss -xp`): for a server, its clients' sockets.
pub fn unix_peers_of(pid: i32) -> BTreeSet<String> {
    let mut c = Command::new("ss");
    c.arg("-xpn");
    let out = run_with_timeout(&mut c, None, CLIENT_TIMEOUT);
    let mine = format!("pid={pid},");
    // Netid State Recv-Q Send-Q Local Inode Peer PeerInode Process
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&mine))
        .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
        .filter(|inode| inode != "0")
        .collect()
}

/// How many TCP connections to local port `port` process `pid` holds: the
/// client connections a SQL process serves, once the proxy handed their
/// sockets to it (its sockets matched by inode against /proc/net/tcp).
pub fn tcp_clients_of(pid: i32, port: u16) -> usize {
    let inodes = socket_inodes(pid);
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let suffix = format!(":{port:04X}");
    tcp.lines()
        .skip(1)
        .filter(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let f: Vec<&str> = line.split_whitespace().collect();
            f.len() > 9 && f[1].ends_with(&suffix) && f[3] == "01" && inodes.contains(f[9])
        })
        .count()
}

/// The command line of process `pid` (empty if it is gone), to check that
/// a pid really is e.g. a `strata sql` process before a test kills it.
pub fn process_args(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Sends SIGKILL to `pid`: the crash of one child process, with no
/// shutdown code run. Panics for pids that would mean a process group or
/// every process (0, 1, negative), and if the process does not exist.
pub fn kill9_pid(pid: i32) {
    assert!(pid > 1, "refusing to kill pid {pid}");
    // SAFETY: kill(2) on one positive pid read from the cluster's own files
    // or its tenant list; no memory is involved.
    let rc = unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(rc, 0, "kill -9 {pid}: {}", std::io::Error::last_os_error());
}

/// Waits up to `timeout` until process `pid` is gone; whether it went.
pub fn wait_pid_gone(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while pid_alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

impl TestServer {
    /// Starts Strata with `args` for a test of what PostgreSQL does not
    /// have (`why`), or returns None (after saying so) on the PostgreSQL
    /// target, where such a test skips.
    pub fn strata_only(args: &[&str], why: &str) -> Option<TestServer> {
        if crate::Target::from_env() == crate::Target::Postgres {
            eprintln!("skipped: {why}");
            return None;
        }
        Some(TestServer::start_with_args(args))
    }

    /// A libpq conninfo for this server over TCP, as `user` to database
    /// `dbname`, with the startup `options` if given (quoted, so it may
    /// hold `=` and spaces).
    pub fn conninfo_for(&self, user: &str, dbname: &str, options: Option<&str>) -> String {
        let mut c = format!(
            "host=127.0.0.1 port={} user={user} dbname={dbname} connect_timeout=10",
            self.port
        );
        if let Some(o) = options {
            c.push_str(&format!(" options='{o}'"));
        }
        c
    }

    /// The conninfo for database `postgres` of `tenant` as `postgres`,
    /// routed by `options=--cluster=NAME`.
    pub fn tenant_conninfo(&self, tenant: &str) -> String {
        self.conninfo_for("postgres", "postgres", Some(cluster_option(tenant).as_str()))
    }

    /// Runs `psql -X -v ON_ERROR_STOP=1 -d <conninfo> -Atc <sql>` with the
    /// extra environment `env` (e.g. `PGOPTIONS`); its output, whether or not
    /// it failed. `PGOPTIONS` and `PGPASSWORD` from the test's own
    /// environment are removed first, so only what a test names routes.
    pub fn psql_with(&self, conninfo: &str, env: &[(&str, &str)], sql: &str) -> Output {
        let mut c = Command::new("psql");
        c.args(["-X", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-Atc", sql])
            .env("PGCONNECT_TIMEOUT", "10")
            .env_remove("PGPASSWORD")
            .env_remove("PGOPTIONS");
        for (k, v) in env {
            c.env(k, v);
        }
        run_with_timeout(&mut c, None, CLIENT_TIMEOUT)
    }

    /// Runs `sql` with psql in database `postgres` of `tenant` (see
    /// [`TestServer::psql_with`]); its output, whether or not it failed.
    pub fn psql_tenant(&self, tenant: &str, sql: &str) -> Output {
        self.psql_with(&self.tenant_conninfo(tenant), &[], sql)
    }

    /// Runs `sql` in `tenant` like [`TestServer::query`] does in the default
    /// tenant: trimmed stdout, panicking with stderr if psql fails.
    pub fn query_tenant(&self, tenant: &str, sql: &str) -> String {
        let out = self.psql_tenant(tenant, sql);
        assert!(
            out.status.success(),
            "psql in tenant {tenant} failed for {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Opens a `tokio-postgres` connection to `tenant` (see [`connect_tenant`]).
    pub async fn connect_tenant(
        &self,
        tenant: &str,
    ) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
        connect_tenant(self.port, tenant).await
    }

    /// A raw protocol session in database `postgres` of `tenant`, logged in
    /// as `postgres` (for LISTEN and other tests reading exact messages).
    pub fn raw_tenant(&self, tenant: &str) -> RawClient {
        let options = cluster_option(tenant);
        RawClient::connect_with_params(
            self.port,
            &[("user", "postgres"), ("database", "postgres"), ("options", options.as_str())],
        )
    }

    /// Runs `strata tenant <args> --data-dir <data>` against this running
    /// cluster; its output, whether or not it failed.
    pub fn tenant_cmd(&self, args: &[&str]) -> Output {
        let mut c = Command::new(strata_bin());
        c.arg("tenant")
            .args(args)
            .arg("--data-dir")
            .arg(self.data_dir())
            .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()));
        run_with_timeout(&mut c, None, CLIENT_TIMEOUT)
    }

    /// `strata tenant create NAME`; panics (with its stderr and the server
    /// log) if it fails.
    pub fn create_tenant(&self, name: &str) {
        let out = self.tenant_cmd(&["create", name]);
        assert!(
            out.status.success(),
            "strata tenant create {name:?} failed ({}):\n{}{}\nserver log:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log_text()
        );
    }

    /// `strata tenant drop NAME` (with `--force` if asked); its output,
    /// whether or not it failed.
    pub fn drop_tenant(&self, name: &str, force: bool) -> Output {
        if force {
            self.tenant_cmd(&["drop", name, "--force"])
        } else {
            self.tenant_cmd(&["drop", name])
        }
    }

    /// `strata tenant list --json`, parsed; `Err` with the reason if the
    /// command fails or prints something else (for polling waits that ride
    /// out a restarting child).
    pub fn try_tenants(&self) -> Result<Vec<TenantInfo>, String> {
        let out = self.tenant_cmd(&["list", "--json"]);
        if !out.status.success() {
            return Err(format!(
                "strata tenant list --json failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        parse_tenant_list(&String::from_utf8_lossy(&out.stdout))
    }

    /// `strata tenant list --json`, parsed; panics if it fails.
    pub fn tenants(&self) -> Vec<TenantInfo> {
        self.try_tenants().unwrap_or_else(|e| panic!("{e}\nserver log:\n{}", self.log_text()))
    }

    /// The listed tenant `name`, if it is listed.
    pub fn find_tenant(&self, name: &str) -> Option<TenantInfo> {
        self.tenants().into_iter().find(|t| t.name == name)
    }

    /// The listed tenant `name`; panics if it is not listed.
    pub fn tenant_info(&self, name: &str) -> TenantInfo {
        let all = self.tenants();
        match all.iter().find(|t| t.name == name) {
            Some(t) => t.clone(),
            None => panic!("tenant {name:?} is not listed: {all:?}"),
        }
    }

    /// Polls `tenant list --json` (failures included, as while a child
    /// restarts) until tenant `name` is listed and satisfies `ok`, for at
    /// most `timeout`; returns it, or panics saying `what` was expected and
    /// what was seen last. The list may lag behind a process starting or
    /// dying, so tests wait for a state instead of reading it once.
    pub fn wait_for_tenant(
        &self,
        name: &str,
        what: &str,
        timeout: Duration,
        ok: impl Fn(&TenantInfo) -> bool,
    ) -> TenantInfo {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = match self.try_tenants() {
                Ok(all) => match all.into_iter().find(|t| t.name == name) {
                    Some(t) if ok(&t) => return t,
                    Some(t) => format!("{t:?}"),
                    None => format!("tenant {name:?} not listed"),
                },
                Err(e) => e,
            };
            if Instant::now() > deadline {
                panic!(
                    "tenant {name:?}: expected {what} within {timeout:?}; last seen: {seen}\n\
                     server log:\n{}",
                    self.log_text()
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// `<data>/run/<name>` (e.g. `kv.pid`, `proxy.pid`).
    fn run_file(&self, name: &str) -> std::path::PathBuf {
        self.data_dir().join("run").join(name)
    }

    /// The KV server's pid from `<data>/run/kv.pid`; panics if the file is
    /// missing or holds no pid.
    pub fn kv_pid(&self) -> i32 {
        self.pid_from("kv.pid")
    }

    /// The proxy's pid from `<data>/run/proxy.pid`; panics if the file is
    /// missing or holds no pid.
    pub fn proxy_pid(&self) -> i32 {
        self.pid_from("proxy.pid")
    }

    fn pid_from(&self, file: &str) -> i32 {
        let path = self.run_file(file);
        read_pid_file(&path).unwrap_or_else(|| {
            panic!(
                "no pid in {} ({:?}); server log:\n{}",
                path.display(),
                std::fs::read_to_string(&path),
                self.log_text()
            )
        })
    }

    /// Waits up to `timeout` until `<data>/run/<file>` names a live process
    /// other than `old` (the supervisor restarted that child and rewrote
    /// its pid file); returns the new pid, or panics.
    pub fn wait_for_new_pid(&self, file: &str, old: i32, timeout: Duration) -> i32 {
        let path = self.run_file(file);
        let deadline = Instant::now() + timeout;
        loop {
            match read_pid_file(&path) {
                Some(pid) if pid != old && pid_alive(pid) => return pid,
                seen => {
                    if Instant::now() > deadline {
                        panic!(
                            "{} still names {seen:?} (the killed pid was {old}) after \
                             {timeout:?}; server log:\n{}",
                            path.display(),
                            self.log_text()
                        );
                    }
                }
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Retries, for at most `timeout`, connecting to `tenant` and running
    /// `sql` on a new connection, until one attempt succeeds; returns its
    /// rows as `psql -At` prints them. Each attempt is bounded (10 s). For
    /// "new connections work again" after a child was killed: pass a
    /// statement that reaches storage (a count of a table), since `select 1`
    /// may succeed before the KV server is back.
    pub fn wait_for_query(&self, tenant: &str, sql: &str, timeout: Duration) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let port = self.port;
        let deadline = Instant::now() + timeout;
        loop {
            let attempt = rt.block_on(async {
                let work = async {
                    let client = connect_tenant(port, tenant).await?;
                    query_text(&client, sql).await
                };
                match tokio::time::timeout(ATTEMPT_TIMEOUT, work).await {
                    Ok(Ok(text)) => Ok(text),
                    Ok(Err(e)) => Err(error_text(&e)),
                    Err(_) => Err(format!("no answer within {ATTEMPT_TIMEOUT:?}")),
                }
            });
            match attempt {
                Ok(text) => return text,
                Err(e) if Instant::now() > deadline => panic!(
                    "tenant {tenant:?}: {sql:?} did not succeed within {timeout:?}; last error: \
                     {e}\nserver log:\n{}",
                    self.log_text()
                ),
                Err(_) => std::thread::sleep(POLL_INTERVAL),
            }
        }
    }

    /// Starts one more SQL process for `tenant`, by hand (the proxy knows
    /// nothing of it), on the cluster's KV server with the tenant's token,
    /// serving clients directly on its own TCP port. A second process of a
    /// tenant is how a test sees what one SQL process learns only through
    /// the KV server (another's DDL, say).
    pub fn start_sql_process(&self, tenant: &str) -> SqlProcess {
        self.start_sql_process_with(tenant, &[])
    }

    /// [`TestServer::start_sql_process`] with more arguments for `strata
    /// sql` (`--tls`, say; its environment has the tenant's proxy token
    /// too, for `--proxy-listen`).
    pub fn start_sql_process_with(&self, tenant: &str, args: &[&str]) -> SqlProcess {
        let id = self.tenant_info(tenant).id;
        let secret = self.secret();
        let port = crate::server::free_port();
        let kv = self.data_dir().join("run").join("kv.sock");
        let mut cmd = Command::new(strata_bin());
        cmd.args(["sql", "--tenant", tenant, "--listen", &format!("127.0.0.1:{port}"), "--kv"])
            .arg(format!("unix:{}", kv.display()))
            .args(args)
            .env("STRATA_KV_TOKEN", secret.tenant_token(id))
            .env("STRATA_PROXY_TOKEN", secret.proxy_token(id));
        SqlProcess { part: Part::start(cmd), port }
    }

    /// The proxy token of `tenant` (see kvrpc's `Secret::proxy_token`).
    pub fn proxy_token(&self, tenant: &str) -> String {
        self.secret().proxy_token(self.tenant_info(tenant).id)
    }

    fn secret(&self) -> kvrpc::Secret {
        kvrpc::Secret::load(&self.data_dir().join("secret")).expect("the cluster's KV secret")
    }
}

/// A part of the cluster a test started by hand (`strata kv`, `strata
/// proxy`, `strata sql`); killed when dropped.
pub struct Part(std::process::Child);

impl Part {
    /// Runs `cmd` (a `strata` part) and waits, for at most
    /// [`RECOVERY_TIMEOUT`], for the `ready` line it prints once it serves.
    pub fn start(mut cmd: Command) -> Part {
        let mut child = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(RECOVERY_TIMEOUT).unwrap_or_default();
        let part = Part(child);
        assert_eq!(line.trim(), "ready", "{cmd:?} did not get ready");
        part
    }

    /// Its OS pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A SQL process a test started (see [`TestServer::start_sql_process`]);
/// killed when dropped.
pub struct SqlProcess {
    part: Part,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
}

impl SqlProcess {
    /// Its OS pid.
    pub fn pid(&self) -> u32 {
        self.part.pid()
    }
}

/// Connects to a SQL process's socket for proxies on 127.0.0.1:`port`
/// (`strata sql --proxy-listen`, in clear) as a proxy does: the token line
/// with `token`, the PROXY `header` line, a StartupMessage as postgres.
/// The first message it answers with, or None if it closed the connection
/// unanswered.
pub fn as_proxy(port: u16, token: &str, header: &str) -> Option<(u8, Vec<u8>)> {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(crate::CLIENT_TIMEOUT)).expect("set read timeout");
    let mut first = format!("STRATA-PROXY {token}\r\n{header}\r\n").into_bytes();
    first.extend_from_slice(&crate::raw::startup_message());
    s.write_all(&first).expect("writing to the SQL process");
    crate::raw::read_message(&mut s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_list_json_is_parsed_field_by_field() {
        let json = r#"[
            {"name": "default", "id": 1, "state": "running", "sql_pids": [4242],
             "max_sql_processes": 1, "stored_bytes": 1234, "created": "2024-01-01T00:00:00Z",
             "last_active": "2024-01-03T00:00:00Z"},
            {"name": "acme", "id": 7, "state": "suspended", "sql_pids": [],
             "max_sql_processes": 3, "stored_bytes": 0, "created": "2024-01-02T00:00:00Z", "last_active": null}
        ]"#;
        let t = parse_tenant_list(json).expect("valid list");
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].name.as_str(), t[0].id, t[0].sql_pids.as_slice()),
            ("default", 1, &[4242][..])
        );
        assert!(t[0].is_running() && !t[1].is_running());
        assert_eq!((t[1].stored_bytes, t[1].max_sql_processes), (0, 3));
    }

    #[test]
    fn a_wrongly_typed_tenant_list_is_refused() {
        assert!(parse_tenant_list("{}").is_err());
        assert!(parse_tenant_list(r#"[{"name": "a"}]"#).is_err());
        let string_id = r#"[{"name": "a", "id": "1", "state": "running", "sql_pids": [],
            "max_sql_processes": 1, "stored_bytes": 0, "created": "x", "last_active": null}]"#;
        assert!(parse_tenant_list(string_id).is_err());
        assert_eq!(parse_tenant_list("[]\n"), Ok(vec![]));
    }

    #[test]
    fn pid_files_and_liveness() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("x.pid");
        assert_eq!(read_pid_file(&path), None);
        std::fs::write(&path, "123\n").expect("write pid file");
        assert_eq!(read_pid_file(&path), Some(123));
        std::fs::write(&path, "").expect("write pid file");
        assert_eq!(read_pid_file(&path), None);
        assert!(pid_alive(std::process::id() as i32));
        assert!(!process_args(std::process::id() as i32).is_empty());
    }
}
