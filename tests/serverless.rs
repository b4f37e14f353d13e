//! Serverless behaviour of the multi-process cluster, end to end through
//! the proxy with real clients and real processes:
//!
//! - Scale to zero: a tenant's SQL process with no client connection for
//!   `--idle-timeout` exits, `tenant list --json` shows the tenant
//!   `suspended` with no pids and a last activity, and the next connection
//!   wakes it with its data intact; an open connection, even an idle one,
//!   keeps the process.
//! - The warm pool: `--warm-pool N` keeps N tenant-less processes ready; a
//!   sleeping tenant's first connection is served by one of them (the very
//!   pid that was waiting in the pool, over the KV connection it opened
//!   while it waited), and the pool refills.
//! - Simultaneous first connections to one sleeping tenant share one
//!   process; with an empty pool (`--warm-pool 0`) first connections to
//!   several tenants at once are all served.
//! - The process limit: with `--max-sql-processes` reached, a first
//!   connection waits up to `--process-wait` for a place, then gets FATAL
//!   53300; one that waits while a process retires is served.
//! - Several processes per tenant (`strata tenant set NAME
//!   --max-sql-processes K`): new connections are spread over them by
//!   load, and idle ones retire.
//! - Failed-login throttling: after a wrong password the proxy refuses
//!   that address's next attempts to that tenant (08004) for 1 s, then
//!   2 s, ...; other tenants are not affected, and a recent login exempts
//!   the pair.
//! - 10,000 mostly idle connections to one tenant, each with its own
//!   setting and prepared statement, all served by one SQL process (the
//!   proxy hands their sockets over); RSS of proxy and SQL process per
//!   1,000 connections is printed.
//! - TLS on the proxy with the self-signed certificate of the data
//!   directory: psql `sslmode=verify-full` to `NAME.localhost` reaches
//!   tenant NAME (options first, then the host name, then the database
//!   prefix), SCRAM inside TLS, SCRAM-SHA-256-PLUS (channel binding to the
//!   proxy's certificate) when the client requires it, with psql and with
//!   psycopg; `--no-tls` refuses TLS.
//! - With `--password-routing`, a client that names no tenant is asked for
//!   its password by the proxy, and `endpoint=NAME;PASSWORD` there names
//!   the tenant (the proxy logs in to its SQL process with SCRAM).
//! - TLS between the parts for other machines: the KV RPC (`strata kv
//!   --tls`, `--kv tls:..`) and a SQL process's own listener (`strata sql
//!   --tls`).
//!
//! PostgreSQL has no tenants, so every test here skips the PostgreSQL target.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use testkit::{
    connect_config, error_text, pid_alive, query_text, socket_inodes, sql_processes_of,
    tcp_clients_of, tenant_config, test_runtime, unix_peers_of, wait_pid_gone, TestServer,
};

/// How long a test waits for a state it expects (a process starting,
/// retiring, the pool refilling); far above what any of them takes.
const WAIT: Duration = Duration::from_secs(60);

/// Starts Strata with `args` (None on the PostgreSQL target).
fn start(args: &[&str]) -> Option<TestServer> {
    TestServer::strata_only(args, "tenants are Strata's own; PostgreSQL has none")
}

/// The proxy's pooled SQL processes: those it started (forked or exec'd)
/// that no tenant lists as its own.
fn pooled(s: &TestServer) -> BTreeSet<i32> {
    let bound: BTreeSet<i32> = s.tenants().iter().flat_map(|t| t.sql_pids.clone()).collect();
    sql_processes_of(s.proxy_pid()).into_iter().filter(|p| !bound.contains(p)).collect()
}

/// Polls `pooled` until `ok` holds, for at most [`WAIT`].
fn wait_for_pool(s: &TestServer, what: &str, ok: impl Fn(&BTreeSet<i32>) -> bool) -> BTreeSet<i32> {
    let deadline = Instant::now() + WAIT;
    loop {
        let p = pooled(s);
        if ok(&p) {
            return p;
        }
        assert!(Instant::now() < deadline, "pool: expected {what}; have {p:?}\n{}", s.log_text());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_idle_tenant_is_suspended_and_wakes_on_connect() {
    let Some(s) = start(&["--idle-timeout", "1s"]) else { return };
    s.create_tenant("a");
    s.query_tenant("a", "create table t (v text); insert into t values ('kept')");
    let running = s.wait_for_tenant("a", "running", WAIT, |t| !t.sql_pids.is_empty());
    let pid = running.sql_pids[0];
    let suspended = s.wait_for_tenant("a", "suspended", WAIT, |t| {
        t.state == "suspended" && t.sql_pids.is_empty()
    });
    assert!(wait_pid_gone(pid, WAIT), "the idle SQL process {pid} did not exit");
    assert!(suspended.last_active.is_some(), "no last activity: {suspended:?}");
    // The next connection wakes it, with its data.
    assert_eq!(s.query_tenant("a", "select v from t"), "kept");
    let woken = s.wait_for_tenant("a", "running again", WAIT, |t| !t.sql_pids.is_empty());
    assert!(!woken.sql_pids.contains(&pid), "{woken:?} still lists the old pid {pid}");

    // An open connection keeps the process, however idle it is.
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(s.port, "a")))
        .unwrap_or_else(|e| panic!("connect a: {}", error_text(&e)));
    let held = s.wait_for_tenant("a", "running", WAIT, |t| !t.sql_pids.is_empty());
    std::thread::sleep(Duration::from_secs(3));
    let still = s.tenant_info("a");
    assert_eq!(still.sql_pids, held.sql_pids, "a process with a client was retired");
    assert!(held.sql_pids.iter().all(|p| pid_alive(*p)));
    let v = rt.block_on(query_text(&client, "select v from t")).expect("query after idling");
    assert_eq!(v, "kept");
    drop(client);
    s.wait_for_tenant("a", "suspended after the client left", WAIT, |t| t.sql_pids.is_empty());
}

#[test]
fn a_pooled_process_serves_a_sleeping_tenant_and_the_pool_refills() {
    let Some(s) = start(&["--warm-pool", "2"]) else { return };
    let before = wait_for_pool(&s, "2 ready processes", |p| p.len() == 2);
    // Each waits with its KV connection open (the pool token's).
    let peers = unix_peers_of(s.kv_pid());
    let waiting: Vec<(i32, BTreeSet<String>)> = before
        .iter()
        .map(|&pid| (pid, socket_inodes(pid).intersection(&peers).cloned().collect()))
        .collect();
    for (pid, kv) in &waiting {
        assert_eq!(kv.len(), 1, "pooled process {pid}'s KV connections: {kv:?}");
    }
    s.create_tenant("p");
    assert_eq!(s.query_tenant("p", "select 1"), "1");
    let t = s.wait_for_tenant("p", "running", WAIT, |t| !t.sql_pids.is_empty());
    assert_eq!(t.sql_pids.len(), 1, "{t:?}");
    assert!(
        before.contains(&t.sql_pids[0]),
        "tenant p is served by {:?}, not by a pooled process {before:?}",
        t.sql_pids
    );
    // Bound to p, it serves over the connection it had waited with.
    let (pid, kv) = waiting.iter().find(|(pid, _)| *pid == t.sql_pids[0]).expect("waited");
    let now = socket_inodes(*pid);
    assert!(kv.is_subset(&now), "process {pid} dropped its pooled KV connection: {kv:?} {now:?}");
    let after = wait_for_pool(&s, "refilled to 2", |p| p.len() == 2 && !p.contains(&t.sql_pids[0]));
    assert_ne!(after, before);
}

#[test]
fn simultaneous_first_connections_share_one_process() {
    let Some(s) = start(&["--warm-pool", "1"]) else { return };
    s.create_tenant("c");
    let rt = test_runtime();
    let clients = rt.block_on(async {
        let configs: Vec<_> = (0..6).map(|_| tenant_config(s.port, "c")).collect();
        futures::future::join_all(configs.iter().map(connect_config)).await
    });
    for c in &clients {
        let c = c.as_ref().unwrap_or_else(|e| panic!("connect c: {}", error_text(e)));
        assert_eq!(rt.block_on(query_text(c, "select 1")).expect("query"), "1");
    }
    let t = s.wait_for_tenant("c", "running", WAIT, |t| !t.sql_pids.is_empty());
    assert_eq!(t.sql_pids.len(), 1, "6 first connections started {:?}", t.sql_pids);
}

#[test]
fn first_connections_are_served_with_an_empty_pool() {
    let Some(s) = start(&["--warm-pool", "0"]) else { return };
    let names = ["e1", "e2", "e3"];
    for n in names {
        s.create_tenant(n);
    }
    let rt = test_runtime();
    let clients = rt.block_on(async {
        let configs: Vec<_> = names.iter().map(|n| tenant_config(s.port, n)).collect();
        futures::future::join_all(configs.iter().map(connect_config)).await
    });
    for (c, n) in clients.iter().zip(names) {
        let c = c.as_ref().unwrap_or_else(|e| panic!("connect {n}: {}", error_text(e)));
        assert_eq!(rt.block_on(query_text(c, "select current_user")).expect("query"), "postgres");
    }
    let pids: BTreeSet<i32> = names
        .iter()
        .map(|n| {
            let t = s.wait_for_tenant(n, "running", WAIT, |t| t.sql_pids.len() == 1);
            t.sql_pids[0]
        })
        .collect();
    assert_eq!(pids.len(), 3, "each tenant has its own process: {pids:?}");
    assert!(pooled(&s).is_empty(), "a pool of 0 holds {:?}", pooled(&s));
}

#[test]
fn a_client_waits_for_a_process_at_the_limit_then_gets_53300() {
    let args = [
        "--warm-pool",
        "0",
        "--max-sql-processes",
        "1",
        "--process-wait",
        "6s",
        "--idle-timeout",
        "1s",
    ];
    let Some(s) = start(&args) else { return };
    s.create_tenant("a");
    s.create_tenant("b");
    let rt = test_runtime();
    let connect = |n: &str| rt.block_on(connect_config(&tenant_config(s.port, n)));
    let a = connect("a").unwrap_or_else(|e| panic!("connect a: {}", error_text(&e)));
    // The one process serves a (its client holds it): b waits, then is told.
    let Err(e) = connect("b") else { panic!("b connected past the process limit") };
    let db = e.as_db_error().unwrap_or_else(|| panic!("no server error: {e}"));
    assert_eq!(db.code().code(), "53300", "{}", error_text(&e));
    assert!(
        db.message().contains("\"b\"") && db.message().contains("--max-sql-processes"),
        "{}",
        error_text(&e)
    );
    assert_eq!(rt.block_on(query_text(&a, "select 1")).expect("a still served"), "1");

    // A client that waits gets the place a's process leaves when it retires.
    let b = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            test_runtime().block_on(async {
                let c = connect_config(&tenant_config(s.port, "b")).await?;
                query_text(&c, "select current_user").await
            })
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(a);
        waiting.join().expect("client thread")
    });
    assert_eq!(b.unwrap_or_else(|e| panic!("b after a left: {}", error_text(&e))), "postgres");
    let t = s.tenant_info("a");
    assert!(t.sql_pids.is_empty(), "a still runs {:?} beside b's process", t.sql_pids);
}

#[test]
fn a_tenant_with_more_processes_spreads_connections_by_load() {
    let Some(s) = start(&["--warm-pool", "2", "--idle-timeout", "1s"]) else { return };
    s.create_tenant("m");
    let out = s.tenant_cmd(&["set", "m", "--max-sql-processes", "2"]);
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "tenant set: {said}");
    assert_eq!(s.tenant_info("m").max_sql_processes, 2);
    let unknown = s.tenant_cmd(&["set", "nosuch", "--max-sql-processes", "2"]);
    assert!(
        !unknown.status.success()
            && String::from_utf8_lossy(&unknown.stderr).contains("does not exist")
    );

    // Four clients, one after another: a second process joins while the
    // first is busy, then each new client goes to the less loaded one.
    let rt = test_runtime();
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let c = rt
                .block_on(connect_config(&tenant_config(s.port, "m")))
                .unwrap_or_else(|e| panic!("client {i}: {}", error_text(&e)));
            assert_eq!(rt.block_on(query_text(&c, "select 1")).expect("query"), "1");
            c
        })
        .collect();
    let t = s.wait_for_tenant("m", "two processes", WAIT, |t| t.sql_pids.len() == 2);
    let spread: Vec<usize> = t.sql_pids.iter().map(|p| tcp_clients_of(*p, s.port)).collect();
    assert_eq!(spread, vec![2, 2], "clients per process {:?}", t.sql_pids);

    // Idle processes retire one by one: with the clients gone, none is left.
    drop(clients);
    s.wait_for_tenant("m", "suspended", WAIT, |t| t.sql_pids.is_empty());
    for p in t.sql_pids {
        assert!(wait_pid_gone(p, WAIT), "SQL process {p} of m did not exit");
    }
}

/// The SQLSTATE of a failed connection attempt ("" if it connected or the
/// failure carried none).
fn login_code(r: &Result<tokio_postgres::Client, tokio_postgres::Error>) -> String {
    match r {
        Ok(_) => String::new(),
        Err(e) => {
            e.as_db_error().map(|d| d.code().code().to_string()).unwrap_or_else(|| e.to_string())
        }
    }
}

#[test]
fn failed_logins_are_throttled_per_address_and_tenant() {
    let Some(s) = start(&[]) else { return };
    for t in ["th", "tu"] {
        s.create_tenant(t);
        s.query_tenant(t, "create role alice login password 'right'");
    }
    let rt = test_runtime();
    let login = |tenant: &str, password: &str| {
        let mut c = tenant_config(s.port, tenant);
        c.user("alice").password(password);
        rt.block_on(connect_config(&c))
    };
    // A retry within a wait must be refused at once; on a machine so slow
    // that the wait is over before the retry arrives, that cannot be seen.
    let refused_within = |failed_at: Instant, wait: Duration, r: &Result<_, _>| {
        if failed_at.elapsed() >= wait - Duration::from_millis(100) {
            eprintln!("retry came after the wait; not checked");
            return;
        }
        assert_eq!(login_code(r), "08004", "a retry within the wait was not refused");
        let e = r.as_ref().err().and_then(|e| e.as_db_error()).expect("an error report");
        assert!(
            e.message().contains("\"th\"") && e.message().contains("try again in"),
            "{}",
            e.message()
        );
    };

    let failed_at = Instant::now();
    assert_eq!(login_code(&login("th", "wrong")), "28P01");
    // Even the right password waits out the back-off (1 s after one failure).
    let r = login("th", "right");
    refused_within(failed_at, Duration::from_secs(1), &r);
    // Another tenant from the same address is not throttled.
    assert_eq!(login_code(&login("tu", "right")), "");

    std::thread::sleep(Duration::from_millis(1200));
    let failed_at = Instant::now();
    assert_eq!(login_code(&login("th", "wrong")), "28P01", "the 1 s wait was over");
    let r = login("th", "wrong");
    refused_within(failed_at, Duration::from_secs(2), &r);

    std::thread::sleep(Duration::from_millis(2200));
    let ok =
        login("th", "right").unwrap_or_else(|e| panic!("after the 2 s wait: {}", error_text(&e)));
    assert_eq!(rt.block_on(query_text(&ok, "select current_user")).expect("query"), "alice");
    // A pair that just logged in is not throttled for a typo.
    assert_eq!(login_code(&login("th", "wrong")), "28P01");
    assert_eq!(login_code(&login("th", "wrong")), "28P01");
}

/// Resident memory of process `pid` in KiB (0 if it is gone).
fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn ten_thousand_idle_connections_to_one_tenant() {
    // STRATA_TEST_CONNECTIONS lowers it on a machine with fewer open files.
    let n: usize = std::env::var("STRATA_TEST_CONNECTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let Some(s) = start(&[]) else { return };
    s.create_tenant("many");
    let rt = test_runtime();
    let first = rt
        .block_on(connect_config(&tenant_config(s.port, "many")))
        .unwrap_or_else(|e| panic!("first client: {}", error_text(&e)));
    let sql_pid = s.wait_for_tenant("many", "running", WAIT, |t| t.sql_pids.len() == 1).sql_pids[0];
    let before = (rss_kib(s.proxy_pid()), rss_kib(sql_pid));
    let port = s.port;
    let started = Instant::now();
    let opened = rt.block_on(async {
        use futures::{StreamExt, TryStreamExt};
        let all = futures::stream::iter(0..n)
            .map(|i| async move {
                let c = connect_config(&tenant_config(port, "many"))
                    .await
                    .map_err(|e| format!("client {i}: {}", error_text(&e)))?;
                // Session state of its own: a setting and a prepared statement.
                let setup =
                    format!("SET application_name = 'c{i}'; PREPARE mine AS SELECT {i} + $1::int");
                c.batch_execute(&setup)
                    .await
                    .map_err(|e| format!("client {i}: {}", error_text(&e)))?;
                Ok::<_, String>((i, c))
            })
            .buffer_unordered(32)
            .try_collect::<Vec<_>>();
        tokio::time::timeout(Duration::from_secs(900), all).await
    });
    let clients = opened
        .expect("opening the connections took over 15 minutes")
        .unwrap_or_else(|e| panic!("{e}"));
    let took = started.elapsed();
    let after = (rss_kib(s.proxy_pid()), rss_kib(sql_pid));
    let per_1000 = |a: u64, b: u64| b.saturating_sub(a) as f64 * 1000.0 / n as f64 / 1024.0;
    eprintln!(
        "{n} connections in {took:.1?}; RSS proxy {} -> {} MiB ({:.1} MiB per 1,000), SQL process {} -> {} MiB ({:.1} MiB per 1,000)",
        before.0 / 1024,
        after.0 / 1024,
        per_1000(before.0, after.0),
        before.1 / 1024,
        after.1 / 1024,
        per_1000(before.1, after.1),
    );
    let t = s.tenant_info("many");
    assert_eq!(t.sql_pids, vec![sql_pid], "one SQL process serves them all");
    // Every connection is alive and still has its own state (a sample of
    // them, and the last opened).
    for (i, c) in clients.iter().filter(|(i, _)| i % 97 == 0 || *i == n - 1) {
        let got = rt
            .block_on(query_text(c, "select current_setting('application_name'); execute mine(1)"));
        assert_eq!(got.expect("query"), format!("c{i}\n{}", i + 1), "client {i}");
    }
    assert_eq!(rt.block_on(query_text(&first, "select 1")).expect("first client"), "1");
    // Bounded: well under a megabyte per idle session.
    assert!(
        per_1000(before.1, after.1) < 500.0,
        "the SQL process grew by {:.1} MiB per 1,000 idle connections",
        per_1000(before.1, after.1)
    );
    drop(clients);
}

/// Runs `psql` with connection string `conninfo` and `-Atc sql` (password
/// from `PGPASSWORD` if given): success, stdout, stderr.
fn psql_conninfo(conninfo: &str, sql: &str, password: Option<&str>) -> (bool, String, String) {
    let mut c = std::process::Command::new("psql");
    c.args([conninfo, "-X", "-w", "-v", "ON_ERROR_STOP=1", "-Atc", sql])
        .env("PGCONNECT_TIMEOUT", "10");
    match password {
        Some(p) => c.env("PGPASSWORD", p),
        None => c.env_remove("PGPASSWORD"),
    };
    let out = testkit::run_with_timeout(&mut c, None, testkit::CLIENT_TIMEOUT);
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn tls_with_the_tenant_named_by_the_host_name() {
    let Some(s) = start(&[]) else { return };
    s.create_tenant("tls1");
    let root = s.data_dir().join("tls/server.crt");
    assert!(root.exists(), "no certificate made in {}", root.display());
    let verified = |host: &str, extra: &str| {
        format!(
            "host={host} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={} {extra}",
            s.port,
            root.display()
        )
    };
    // SNI names the tenant: what is written there is in tenant tls1.
    let (ok, _, err) = psql_conninfo(
        &verified("tls1.localhost", ""),
        "create table t (v text); insert into t values ('sni')",
        None,
    );
    assert!(ok, "verify-full to tls1.localhost: {err}");
    assert_eq!(s.query_tenant("tls1", "select v from t"), "sni");
    // options come before the host name: this is the default tenant.
    let (ok, _, err) = psql_conninfo(
        &verified("tls1.localhost", "options=--cluster=default"),
        "select v from t",
        None,
    );
    assert!(!ok && err.contains("\"t\" does not exist"), "options did not win over SNI: {err}");
    // A bare host name names no tenant; the database prefix still does.
    let (ok, out, err) =
        psql_conninfo(&verified("localhost", ""), "select current_database()", None);
    assert!(ok && out == "postgres", "{err}");
    let plain = format!("host=127.0.0.1 port={} user=postgres sslmode=require", s.port);
    let (ok, out, err) =
        psql_conninfo(&format!("{plain} dbname=tls1.postgres"), "select v from t", None);
    assert!(ok && out == "sni", "sslmode=require with the database prefix: {err}");
    // The certificate names *.localhost, not other names.
    let (ok, _, err) = psql_conninfo(&verified("tls1.example.com", ""), "select 1", None);
    assert!(!ok && err.contains("does not match host name"), "{err}");
    // SCRAM inside TLS, through the proxy.
    s.query_tenant("tls1", "create role carol login password 'pw'");
    let carol = verified("tls1.localhost", "").replace("user=postgres", "user=carol");
    let (ok, out, err) = psql_conninfo(&carol, "select current_user", Some("pw"));
    assert!(ok && out == "carol", "SCRAM over TLS: {err}");
    // SCRAM-SHA-256-PLUS, bound to the proxy's certificate, when the client
    // insists; plain SCRAM when it declines, and in clear.
    for (extra, what) in [("channel_binding=require", "PLUS"), ("channel_binding=disable", "plain")]
    {
        let (ok, out, err) = psql_conninfo(&format!("{carol} {extra}"), "select 1", Some("pw"));
        assert!(ok && out == "1", "SCRAM ({what}) over TLS: {err}");
    }
    let clear = format!("{plain} dbname=tls1.postgres user=carol")
        .replace("sslmode=require", "sslmode=disable channel_binding=prefer");
    let (ok, out, err) = psql_conninfo(&clear, "select current_user", Some("pw"));
    assert!(ok && out == "carol", "SCRAM in clear: {err}");
    // A driver too: psycopg (its own libpq build), verify-full to the SNI
    // tenant with channel binding required.
    let home = std::env::var("HOME").unwrap_or_default();
    let python = format!("{home}/.cache/strata-venv/bin/python");
    assert!(std::path::Path::new(&python).exists(), "{python} missing: run scripts/setup");
    let script = "import sys, psycopg\n\
        c = psycopg.connect(sys.argv[1], password='pw')\n\
        print(c.execute('select current_user').fetchone()[0], c.pgconn.ssl_in_use)";
    let mut py = std::process::Command::new(&python);
    py.args(["-c", script, &format!("{carol} channel_binding=require")]);
    let out = testkit::run_with_timeout(&mut py, None, testkit::CLIENT_TIMEOUT);
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && said == "carol True",
        "psycopg over TLS: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ok, _, err) =
        psql_conninfo(&format!("{carol} channel_binding=require"), "select 1", Some("no"));
    assert!(!ok && err.contains("password authentication failed"), "{err}");

    // --no-tls refuses it.
    let Some(n) = start(&["--no-tls"]) else { return };
    let refused =
        format!("host=127.0.0.1 port={} user=postgres dbname=postgres sslmode=require", n.port);
    let (ok, _, err) = psql_conninfo(&refused, "select 1", None);
    assert!(!ok && err.contains("does not support SSL"), "{err}");
}

#[test]
fn with_password_routing_the_password_field_names_the_tenant() {
    let Some(s) = start(&["--password-routing"]) else { return };
    s.create_tenant("pwt");
    s.query_tenant("pwt", "create role dave login password 'pw'; create table only_pwt (v text); insert into only_pwt values ('here'); grant select on only_pwt to dave");
    let plain = format!("host=127.0.0.1 port={} dbname=postgres sslmode=disable", s.port);
    let as_user = |user: &str| format!("{plain} user={user}");
    // endpoint=NAME;PASSWORD: tenant pwt, role dave, password pw.
    let (ok, out, err) = psql_conninfo(
        &as_user("dave"),
        "select current_user, v from only_pwt",
        Some("endpoint=pwt;pw"),
    );
    assert!(ok && out == "dave|here", "password routing: {err}");
    let (ok, _, err) = psql_conninfo(&as_user("dave"), "select 1", Some("endpoint=pwt$pw"));
    assert!(ok, "the $ form: {err}");
    // A wrong password and an unknown tenant are told as such (after the
    // failure, this address's recent logins to pwt exempt it from waiting).
    let (ok, _, err) = psql_conninfo(&as_user("dave"), "select 1", Some("endpoint=pwt;nope"));
    assert!(!ok && err.contains("password authentication failed for user \"dave\""), "{err}");
    let (ok, _, err) = psql_conninfo(&as_user("dave"), "select 1", Some("endpoint=nosuch;pw"));
    assert!(!ok && err.contains("tenant \"nosuch\" does not exist"), "{err}");
    // No prefix: the default tenant, where postgres is trusted locally.
    let (ok, _, err) = psql_conninfo(&as_user("postgres"), "select 1", Some("anything"));
    assert!(ok, "default tenant by password: {err}");
    let (ok, _, err) = psql_conninfo(&as_user("postgres"), "select 1", None);
    assert!(!ok && err.contains("no password supplied"), "the proxy asks for one: {err}");
    // A client that names its tenant otherwise is not asked.
    let (ok, out, err) = psql_conninfo(
        &format!("{} options=--cluster=pwt", as_user("postgres")),
        "select v from only_pwt",
        None,
    );
    assert!(ok && out == "here", "options still route without a password: {err}");
    // Inside TLS with a host name that names no tenant.
    let root = s.data_dir().join("tls/server.crt");
    let tls = format!(
        "host=localhost hostaddr=127.0.0.1 port={} user=dave dbname=postgres sslmode=verify-full sslrootcert={}",
        s.port,
        root.display()
    );
    let (ok, out, err) = psql_conninfo(&tls, "select v from only_pwt", Some("endpoint=pwt;pw"));
    assert!(ok && out == "here", "password routing over TLS: {err}");
}

/// Starts `strata ARGS` and waits (bounded) for its `ready` line.
fn start_part(args: &[&str]) -> testkit::Part {
    let mut cmd = std::process::Command::new(testkit::strata_bin());
    cmd.args(args);
    testkit::Part::start(cmd)
}

/// The parts on separate machines, with TLS between them: `strata kv
/// --tls` serves TCP over TLS only (its self-signed certificate made in
/// DATA/tls); a proxy given `--kv tls:127.0.0.1:PORT@CERT` looks tenants up
/// and launches SQL processes that reach the KV server over TLS, and a
/// client's data goes through; a client of the KV RPC in clear, or one that
/// trusts another certificate, is refused.
#[test]
fn the_kv_rpc_runs_over_tls() {
    if testkit::Target::from_env() == testkit::Target::Postgres {
        eprintln!("skipped: Strata's KV RPC; PostgreSQL has none");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let data_s = data.to_string_lossy().into_owned();
    let kv_port = testkit::free_port();
    let kv_listen = format!("127.0.0.1:{kv_port}");
    let _kv = start_part(&["kv", "--data-dir", &data_s, "--listen", &kv_listen, "--tls"]);
    let cert = data.join("tls/server.crt");
    let kv = format!("tls:{kv_listen}@{}", cert.display());
    let tenant = |kv: &str, args: &[&str]| {
        let mut c = std::process::Command::new(testkit::strata_bin());
        c.arg("tenant").args(args).args(["--data-dir", &data_s, "--kv", kv]);
        testkit::run_with_timeout(&mut c, None, testkit::CLIENT_TIMEOUT)
    };
    let out = tenant(&kv, &["create", "far"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // In clear, or trusting another certificate: refused, not hung.
    let out = tenant(&kv_listen, &["list"]);
    assert!(!out.status.success(), "a plain client reached a TLS-only KV server");
    let other = dir.path().join("other");
    let made = tempfile::tempdir().expect("temp dir");
    let _ = start_part(&[
        "kv",
        "--data-dir",
        &made.path().to_string_lossy(),
        "--unix",
        &made.path().join("kv.sock").to_string_lossy(),
        "--tls",
    ]);
    std::fs::copy(made.path().join("tls/server.crt"), &other).expect("another certificate");
    let out = tenant(&format!("tls:{kv_listen}@{}", other.display()), &["list"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && said.contains("certificate"), "{said}");

    let port = testkit::free_port();
    let run = dir.path().join("run");
    let _proxy = start_part(&[
        "proxy",
        "--kv",
        &kv,
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--no-unix-socket",
        "--secret-file",
        &data.join("secret").to_string_lossy(),
        "--run-dir",
        &run.to_string_lossy(),
        "--no-tls",
        "--warm-pool",
        "1",
    ]);
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(port, "far")))
        .unwrap_or_else(|e| panic!("connect to far: {}", error_text(&e)));
    rt.block_on(client.batch_execute("create table t (v text); insert into t values ('far away')"))
        .expect("write");
    let v = rt.block_on(query_text(&client, "select v from t")).expect("read");
    assert_eq!(v, "far away");
    let out = tenant(&kv, &["list", "--json"]);
    let list = testkit::parse_tenant_list(&String::from_utf8_lossy(&out.stdout)).expect("list");
    let far = list.iter().find(|t| t.name == "far").expect("tenant far");
    assert_eq!(far.sql_pids.len(), 1, "{far:?}");
    let args = testkit::process_args(far.sql_pids[0]);
    assert!(args.iter().any(|a| a.starts_with("tls:")), "far's SQL process: {args:?}");
}

/// `strata sql --tls`: a SQL process's own listener (for a proxy or the
/// clients on another machine) offers TLS. With the certificate given, psql
/// `sslmode=verify-full` verifies it and reaches the tenant's data, SCRAM
/// binds to it (SCRAM-SHA-256-PLUS), a client that does not ask for TLS is
/// served in clear, and a wrong host name is refused; with `--tls` alone
/// the certificate is made in memory, so a client can encrypt
/// (`sslmode=require`) but not verify it.
#[test]
fn a_sql_process_offers_tls_on_its_own_listener() {
    let Some(s) = start(&[]) else { return };
    s.create_tenant("direct");
    s.query_tenant(
        "direct",
        "create table t (v text); insert into t values ('direct'); \
         create role erin login password 'pw'",
    );
    let (cert, key) = (s.data_dir().join("tls/server.crt"), s.data_dir().join("tls/server.key"));
    let (cert_s, key_s) = (cert.to_string_lossy(), key.to_string_lossy());
    let given =
        s.start_sql_process_with("direct", &["--tls", "--tls-cert", &cert_s, "--tls-key", &key_s]);
    let at = |port: u16, host: &str, extra: &str| {
        format!("host={host} hostaddr=127.0.0.1 port={port} user=postgres dbname=postgres {extra}")
    };
    let verified =
        |host: &str| at(given.port, host, &format!("sslmode=verify-full sslrootcert={cert_s}"));
    let (ok, out, err) = psql_conninfo(&verified("localhost"), "select v from t", None);
    assert!(ok && out == "direct", "verify-full to the SQL process: {err}");
    let (ok, out, err) = psql_conninfo(&verified("localhost"), "\\conninfo", None);
    assert!(ok && out.contains("SSL connection"), "not encrypted: {out} {err}");
    let erin = verified("localhost").replace("user=postgres", "user=erin");
    let (ok, out, err) = psql_conninfo(
        &format!("{erin} channel_binding=require"),
        "select current_user",
        Some("pw"),
    );
    assert!(ok && out == "erin", "SCRAM-SHA-256-PLUS to the SQL process: {err}");
    let (ok, _, err) = psql_conninfo(&verified("direct.example.com"), "select 1", None);
    assert!(!ok && err.contains("does not match host name"), "{err}");
    let (ok, out, err) =
        psql_conninfo(&at(given.port, "localhost", "sslmode=disable"), "\\conninfo", None);
    assert!(ok && !out.contains("SSL"), "a client in clear: {out} {err}");

    let made = s.start_sql_process_with("direct", &["--tls"]);
    let (ok, out, err) =
        psql_conninfo(&at(made.port, "localhost", "sslmode=require"), "select v from t", None);
    assert!(ok && out == "direct", "sslmode=require to a made-up certificate: {err}");
    let unverifiable =
        at(made.port, "localhost", &format!("sslmode=verify-full sslrootcert={cert_s}"));
    let (ok, _, err) = psql_conninfo(&unverifiable, "select 1", None);
    assert!(!ok && err.contains("certificate verify failed"), "{err}");
}

/// A tenant served by a SQL process on another machine: `strata sql
/// --proxy-listen ADDR --tls` and `strata proxy --remote-sql
/// NAME=tls:ADDR@CA`. The proxy starts nothing for the tenant; it forwards
/// each client over TLS, verifying the process's certificate, after the
/// tenant's proxy token and the client's PROXY header. Trust and
/// SCRAM-SHA-256-PLUS (bound to the proxy's own certificate) work through
/// it, and a CancelRequest reaches the process. A proxy that does not
/// trust the process's certificate gets no session; on the socket for
/// proxies, a wrong token is closed unanswered and the PROXY header of a
/// right one decides trust.
#[test]
fn a_proxy_reaches_a_sql_process_on_another_machine_over_tls() {
    let Some(s) = start(&[]) else { return };
    s.create_tenant("far");
    s.create_tenant("astray");
    s.query_tenant(
        "far",
        "create table t (v text); insert into t values ('far away'); \
         create role frank login password 'pw'",
    );
    let (cert, key) = (s.data_dir().join("tls/server.crt"), s.data_dir().join("tls/server.key"));
    let (cert_s, key_s) = (cert.to_string_lossy(), key.to_string_lossy());
    let sql_at = format!("127.0.0.1:{}", testkit::free_port());
    let tls = ["--tls", "--tls-cert", &cert_s, "--tls-key", &key_s];
    let sql = s.start_sql_process_with("far", &[&["--proxy-listen", &sql_at][..], &tls].concat());
    let dir = tempfile::tempdir().expect("temp dir");
    // The proxy's own certificate, made when it starts: it presents it to
    // its clients; the SQL process does not present it.
    let proxy_cert = dir.path().join("tls/server.crt");
    let port = testkit::free_port();
    let proxy = start_part(&[
        "proxy",
        "--kv",
        &format!("unix:{}", s.data_dir().join("run/kv.sock").display()),
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--no-unix-socket",
        "--secret-file",
        &s.data_dir().join("secret").to_string_lossy(),
        "--run-dir",
        &dir.path().join("run").to_string_lossy(),
        "--tls-dir",
        &dir.path().join("tls").to_string_lossy(),
        "--warm-pool",
        "0",
        "--remote-sql",
        &format!("far=tls:{sql_at}@{cert_s}"),
        "--remote-sql",
        &format!("astray=tls:{sql_at}@{}", proxy_cert.display()),
    ]);
    let at = |tenant: &str, user: &str, extra: &str| {
        format!(
            "host=localhost hostaddr=127.0.0.1 port={port} dbname={tenant}.postgres user={user} {extra}"
        )
    };
    let (ok, out, err) =
        psql_conninfo(&at("far", "postgres", "sslmode=disable"), "select v from t", None);
    assert!(ok && out == "far away", "through the proxy to the remote process: {err}");
    let verified = format!("sslmode=verify-full sslrootcert={}", proxy_cert.display());
    let (ok, out, err) = psql_conninfo(
        &at("far", "frank", &format!("{verified} channel_binding=require")),
        "select current_user",
        Some("pw"),
    );
    assert!(ok && out == "frank", "SCRAM-SHA-256-PLUS through the proxy: {err}");
    assert!(
        testkit::children_of(proxy.pid() as i32).is_empty(),
        "the proxy started a SQL process of its own"
    );
    let pids = s.tenant_info("far").sql_pids;
    assert!(pids.contains(&(sql.pid() as i32)), "the remote process is not far's: {pids:?}");

    // A CancelRequest through the proxy reaches the remote process.
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(port, "far")))
        .unwrap_or_else(|e| panic!("connect to far: {}", error_text(&e)));
    let cancel = client.cancel_token();
    let sleeper = rt.spawn(async move { client.simple_query("select pg_sleep(60)").await });
    let deadline = Instant::now() + WAIT;
    while !sleeper.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        let _ = rt.block_on(cancel.cancel_query(tokio_postgres::NoTls));
    }
    let e = rt.block_on(sleeper).expect("join").expect_err("the query was not cancelled");
    assert_eq!(e.code().map(|c| c.code()), Some("57014"), "{}", error_text(&e));

    // A certificate the proxy does not trust: a clear error, no session.
    let (ok, _, err) =
        psql_conninfo(&at("astray", "postgres", "sslmode=disable"), "select 1", None);
    assert!(!ok && err.contains("could not reach") && err.contains("certificate"), "{err}");

    // The socket for proxies in clear: the token decides whether the
    // process answers at all, then the PROXY header whether it trusts.
    let plain_at = testkit::free_port();
    let plain_listen = format!("127.0.0.1:{plain_at}");
    let _plain = s.start_sql_process_with("far", &["--proxy-listen", &plain_listen]);
    let token = s.proxy_token("far");
    let printed = s.tenant_cmd(&["token", "far"]);
    let printed = String::from_utf8_lossy(&printed.stdout).to_string();
    assert!(printed.contains(&format!("STRATA_PROXY_TOKEN={token}\n")), "{printed}");
    assert!(printed.starts_with("STRATA_KV_TOKEN="), "{printed}");
    assert!(!s.tenant_cmd(&["token", "nowhere"]).status.success());
    let loopback = "PROXY TCP4 127.0.0.1 127.0.0.1 40000 5433";
    assert_eq!(testkit::as_proxy(plain_at, &s.proxy_token("astray"), loopback), None);
    assert_eq!(testkit::as_proxy(plain_at, "", loopback), None);
    let trusted = testkit::as_proxy(plain_at, &token, loopback).expect("an answer");
    assert_eq!(trusted, (b'R', vec![0, 0, 0, 0]), "a loopback client is trusted");
    let remote = "PROXY TCP4 192.0.2.7 127.0.0.1 40000 5433";
    let (tag, body) = testkit::as_proxy(plain_at, &token, remote).expect("an answer");
    assert!(
        tag == b'E' || (tag == b'R' && body != [0, 0, 0, 0]),
        "a client from 192.0.2.7 logged in without a password: {}",
        String::from_utf8_lossy(&body)
    );
}
