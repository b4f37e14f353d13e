//! Faults in the multi-process cluster: `kill -9` of one child of the
//! supervisor under load, then recovery.
//!
//! - A tenant's SQL process: only that tenant's connections drop (another
//!   tenant's open connection keeps answering and keeps its process); the
//!   next connection gets a new SQL process (a new pid in `tenant list`).
//! - The KV server: clients get errors, not hangs; the supervisor restarts
//!   it (a new pid in `run/kv.pid`) and new connections work again.
//! - The proxy: sessions whose sockets it handed to their SQL process (the
//!   default) go on; with `--forward` its client connections drop. The
//!   supervisor restarts it (a new pid in `run/proxy.pid`), new connections
//!   work again, and the SQL processes survive (the same pids in `tenant
//!   list`).
//!
//! In each, every commit acknowledged before the kill is there afterwards
//! (a loop of autocommit inserts records the acknowledged ids, as in
//! `crash.rs`); for the KV server also multi-row transactions, all or
//! nothing. Every wait is bounded; no duration is asserted, only that a
//! call ended rather than hung. Strata-only: PostgreSQL has no such
//! processes, so every test skips the PostgreSQL target.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use testkit::{
    connect_tenant, error_text, kill9_pid, pid_alive, process_args, query_text, test_runtime,
    wait_pid_gone, Target, TenantInfo, TestServer, RECOVERY_TIMEOUT,
};

/// How long the load may run at most (the kill normally ends it after ~1 s).
const LOAD_LIMIT: Duration = Duration::from_secs(30);

/// How long one statement of the load may take before it counts as a hang.
const STATEMENT_LIMIT: Duration = Duration::from_secs(20);

/// How long a test waits for one call on an already-open connection (an
/// answer or an error, never a hang).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How a load task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// It could not connect at all.
    NoConnection,
    /// A statement failed (the kill, seen as an error).
    Failed,
    /// A statement got no answer within [`STATEMENT_LIMIT`]: a hang.
    Hung,
    /// It ran until [`LOAD_LIMIT`] without an error.
    RanOut,
    /// It went on without an error for a while after the process it was
    /// told to watch (the proxy) was gone.
    OutlivedProxy,
}

/// Starts Strata, or returns `None` (after saying so) on the PostgreSQL
/// target, which has no KV server, proxy or tenants.
fn start_strata() -> Option<TestServer> {
    TestServer::strata_only(&[], "Strata's multi-process cluster; PostgreSQL has none")
}

/// Single-row autocommit inserts of 1, 2, 3, ... into `acked` of `tenant`;
/// records each id whose commit was acknowledged, and stops at the first
/// error (the kill).
async fn numbered_commits(
    port: u16,
    tenant: String,
    acked: Arc<Mutex<Vec<i32>>>,
    outlive: Option<i32>,
) -> End {
    let Ok(client) = connect_tenant(port, &tenant).await else { return End::NoConnection };
    let deadline = Instant::now() + LOAD_LIMIT;
    let mut gone_at: Option<usize> = None;
    for id in 1.. {
        if let Some(pid) = outlive {
            // 50 more commits after `pid` died end the load.
            let done = acked.lock().expect("acked ids").len();
            match gone_at {
                Some(at) if done >= at + 50 => return End::OutlivedProxy,
                None if !pid_alive(pid) => gone_at = Some(done),
                _ => {}
            }
        }
        let payload = format!("row {id}");
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&id, &payload];
        let insert = client.execute("insert into acked values ($1, $2)", &params);
        match tokio::time::timeout(STATEMENT_LIMIT, insert).await {
            Ok(Ok(1)) => acked.lock().expect("acked ids").push(id),
            Ok(_) => return End::Failed,
            Err(_) => return End::Hung,
        }
        if Instant::now() > deadline {
            return End::RanOut;
        }
    }
    End::RanOut
}

/// Transactions of 10 rows into `batches` of `tenant`, tagged with the
/// transaction number; records each acknowledged COMMIT.
async fn batch_commits(port: u16, tenant: String, acked: Arc<Mutex<Vec<i32>>>) -> End {
    let Ok(mut client) = connect_tenant(port, &tenant).await else { return End::NoConnection };
    let deadline = Instant::now() + LOAD_LIMIT;
    for txn in 1.. {
        let batch = async {
            let t = client.transaction().await?;
            for k in 0..10i32 {
                t.execute("insert into batches values ($1, $2)", &[&txn, &k]).await?;
            }
            t.commit().await
        };
        match tokio::time::timeout(STATEMENT_LIMIT, batch).await {
            Ok(Ok(())) => acked.lock().expect("acked txns").push(txn),
            Ok(Err(_)) => return End::Failed,
            Err(_) => return End::Hung,
        }
        if Instant::now() > deadline {
            return End::RanOut;
        }
    }
    End::RanOut
}

/// Lets the load run about a second (longer if nothing was acknowledged
/// yet, up to [`LOAD_LIMIT`]) before the kill.
fn let_load_run(acked: &Arc<Mutex<Vec<i32>>>) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1)
        || (acked.lock().expect("acked").is_empty() && start.elapsed() < LOAD_LIMIT)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (bounded) for a load task and returns how it ended.
fn join_load(rt: &tokio::runtime::Runtime, task: tokio::task::JoinHandle<End>) -> End {
    let bound = LOAD_LIMIT + STATEMENT_LIMIT;
    match rt.block_on(async { tokio::time::timeout(bound, task).await }) {
        Ok(Ok(end)) => end,
        Ok(Err(e)) => panic!("load task failed: {e}"),
        Err(_) => panic!("load task still running after {bound:?}"),
    }
}

/// Kills `pid` with SIGKILL and waits until it is gone.
fn kill_and_wait(pid: i32, what: &str) {
    assert!(pid_alive(pid), "{what} (pid {pid}) is not running before the kill");
    kill9_pid(pid);
    assert!(wait_pid_gone(pid, RECOVERY_TIMEOUT), "{what} (pid {pid}) survived kill -9");
}

/// Checks the acknowledged single-row commits in `acked` of `tenant`, on a
/// cluster that accepts connections again: every acknowledged id is there,
/// and at most the one in flight beyond it.
fn check_acked_rows(s: &TestServer, tenant: &str, acked: &[i32]) {
    let last = *acked.last().expect("an acknowledged row before the kill");
    assert_eq!(acked.len(), last as usize, "acknowledged ids are 1..=n");
    let present: i64 = s
        .query_tenant(tenant, &format!("select count(*) from acked where id <= {last}"))
        .parse()
        .expect("count");
    assert_eq!(present, i64::from(last), "{tenant}: acknowledged rows lost after kill -9");
    let beyond: i64 = s
        .query_tenant(tenant, &format!("select count(*) from acked where id > {last}"))
        .parse()
        .expect("count");
    assert!(beyond <= 1, "{tenant}: {beyond} rows beyond the last acknowledged one");
}

/// A call on an already-open connection must end (an answer or an error)
/// within [`CALL_TIMEOUT`]; returns its result.
fn call(
    rt: &tokio::runtime::Runtime,
    client: &tokio_postgres::Client,
    sql: &str,
) -> Result<String, String> {
    rt.block_on(async {
        match tokio::time::timeout(CALL_TIMEOUT, query_text(client, sql)).await {
            Ok(r) => r.map_err(|e| error_text(&e)),
            Err(_) => panic!("{sql:?} on an open connection hung for {CALL_TIMEOUT:?}"),
        }
    })
}

/// A tenant-list condition: its SQL pids are exactly `before`.
fn has_pids(before: BTreeSet<i32>) -> impl Fn(&TenantInfo) -> bool {
    move |t: &TenantInfo| t.pid_set() == before
}

/// Opens a connection to `tenant` (panicking with the reason if it fails).
fn open(rt: &tokio::runtime::Runtime, s: &TestServer, tenant: &str) -> tokio_postgres::Client {
    rt.block_on(connect_tenant(s.port, tenant))
        .unwrap_or_else(|e| panic!("connect {tenant}: {}", error_text(&e)))
}

#[test]
fn killing_a_tenant_sql_process_affects_only_that_tenant() {
    let Some(s) = start_strata() else { return };
    s.create_tenant("a");
    s.create_tenant("b");
    s.query_tenant("a", "create table acked (id int primary key, payload text)");
    s.query_tenant("b", "create table t (v text); insert into t values ('in b')");
    let rt = test_runtime();
    let idle_a = open(&rt, &s, "a");
    let open_b = open(&rt, &s, "b");
    let a_before = s.wait_for_tenant("a", "running", RECOVERY_TIMEOUT, |t| !t.sql_pids.is_empty());
    let b_before = s.wait_for_tenant("b", "running", RECOVERY_TIMEOUT, |t| !t.sql_pids.is_empty());
    for &pid in &a_before.sql_pids {
        let args = process_args(pid);
        assert!(args.iter().any(|a| a == "sql"), "a's pid {pid} is not a `strata sql`: {args:?}");
    }

    let acked = Arc::new(Mutex::new(Vec::new()));
    let load = rt.spawn(numbered_commits(s.port, "a".into(), acked.clone(), None));
    let_load_run(&acked);
    for &pid in &a_before.sql_pids {
        kill_and_wait(pid, "a's SQL process");
    }
    assert_eq!(
        join_load(&rt, load),
        End::Failed,
        "the load on a kept going after its process died"
    );
    let acked = acked.lock().expect("acked").clone();

    // a's connections dropped; b's open connection and process are untouched.
    assert!(call(&rt, &idle_a, "select 1").is_err(), "a's idle connection survived its process");
    assert_eq!(call(&rt, &open_b, "select v from t"), Ok("in b".to_string()));
    assert_eq!(s.tenant_info("b").pid_set(), b_before.pid_set(), "b's SQL process changed");
    assert_eq!(s.query("select 1"), "1", "default stopped answering");

    // The next connection to a gets a new SQL process and every
    // acknowledged commit.
    s.wait_for_query("a", "select count(*) from acked", RECOVERY_TIMEOUT);
    let old = a_before.pid_set();
    let a_after = s.wait_for_tenant("a", "running on a new SQL process", RECOVERY_TIMEOUT, |t| {
        t.is_running() && !t.sql_pids.is_empty() && t.pid_set().is_disjoint(&old)
    });
    assert!(a_after.sql_pids.iter().all(|&p| pid_alive(p)), "{a_after:?}");
    check_acked_rows(&s, "a", &acked);
    s.query_tenant("a", &format!("insert into acked values ({}, 'after')", acked.len() + 2));

    // b's connection is still the same working session after a's recovery.
    assert_eq!(call(&rt, &open_b, "select count(*) from t"), Ok("1".to_string()));
    assert_eq!(s.tenant_info("b").pid_set(), b_before.pid_set(), "b's SQL process changed");
}

#[test]
fn killing_the_kv_server_loses_no_acknowledged_commit() {
    let Some(s) = start_strata() else { return };
    s.create_tenant("a");
    s.query_tenant("a", "create table acked (id int primary key, payload text)");
    s.query("create table batches (txn int, k int, primary key (txn, k))");
    let rt = test_runtime();
    let idle = open(&rt, &s, "a");
    let rows = Arc::new(Mutex::new(Vec::new()));
    let txns = Arc::new(Mutex::new(Vec::new()));
    let loads = [
        rt.spawn(numbered_commits(s.port, "a".into(), rows.clone(), None)),
        rt.spawn(batch_commits(s.port, "default".into(), txns.clone())),
    ];
    let_load_run(&rows);
    let kv = s.kv_pid();
    let args = process_args(kv);
    assert!(args.iter().any(|a| a == "kv"), "run/kv.pid {kv} is not a `strata kv`: {args:?}");
    kill_and_wait(kv, "the KV server");
    for load in loads {
        let end = join_load(&rt, load);
        assert_ne!(end, End::Hung, "a statement hung after the KV server died");
        assert_ne!(end, End::NoConnection);
    }
    // An idle connection's next statement ends too (an error, or an answer
    // once KV is back), instead of hanging.
    let _ = call(&rt, &idle, "select count(*) from acked");
    let rows = rows.lock().expect("rows").clone();
    let txns = txns.lock().expect("txns").clone();

    // The supervisor restarts KV; new connections work again.
    let new_kv = s.wait_for_new_pid("kv.pid", kv, RECOVERY_TIMEOUT);
    assert_ne!(new_kv, kv);
    s.wait_for_query("a", "select count(*) from acked", RECOVERY_TIMEOUT);
    s.wait_for_query("default", "select count(*) from batches", RECOVERY_TIMEOUT);

    check_acked_rows(&s, "a", &rows);
    let partial = s.query(
        "select count(*) from (select txn from batches group by txn having count(*) <> 10) p",
    );
    assert_eq!(partial, "0", "a partial transaction is visible after the KV server's kill");
    let complete: usize = s
        .query(&format!(
            "select count(distinct txn) from batches where txn <= {}",
            txns.last().copied().unwrap_or(0)
        ))
        .parse()
        .expect("count");
    assert_eq!(complete, txns.len(), "acknowledged transactions lost after the KV server's kill");

    // Both tenants take new writes on the restarted KV server.
    s.query_tenant("a", &format!("insert into acked values ({}, 'after')", rows.len() + 2));
    s.query("insert into batches values (-1, 0)");
    assert_eq!(s.kv_pid(), new_kv, "the KV server was restarted again");
}

#[test]
fn killing_the_proxy_keeps_the_sql_processes_and_handed_off_sessions() {
    let Some(s) = start_strata() else { return };
    kill_the_proxy(s, false);
}

#[test]
fn killing_a_forwarding_proxy_drops_its_sessions_only() {
    if start_strata().is_none() {
        return;
    }
    kill_the_proxy(TestServer::start_with_args(&["--forward"]), true);
}

/// Kills the proxy under load. A proxy that handed its clients' sockets to
/// the SQL processes is out of their data path, so their sessions go on; a
/// forwarding one takes its clients' connections down with it. Either way
/// the SQL processes survive, the supervisor starts a new proxy, and new
/// connections reach the same SQL processes.
fn kill_the_proxy(s: TestServer, forwarding: bool) {
    s.create_tenant("a");
    s.create_tenant("b");
    s.query_tenant("a", "create table acked (id int primary key, payload text)");
    s.query_tenant("b", "create table t (v text); insert into t values ('in b')");
    let rt = test_runtime();
    // Open connections keep both tenants' SQL processes running until the kill.
    let open_a = open(&rt, &s, "a");
    let open_b = open(&rt, &s, "b");
    let running = |t: &TenantInfo| t.is_running() && !t.sql_pids.is_empty();
    let a_before = s.wait_for_tenant("a", "running", RECOVERY_TIMEOUT, running).pid_set();
    let b_before = s.wait_for_tenant("b", "running", RECOVERY_TIMEOUT, running).pid_set();

    let acked = Arc::new(Mutex::new(Vec::new()));
    let load = rt.spawn(numbered_commits(s.port, "a".into(), acked.clone(), Some(s.proxy_pid())));
    let_load_run(&acked);
    let proxy = s.proxy_pid();
    let args = process_args(proxy);
    assert!(args.iter().any(|a| a == "proxy"), "run/proxy.pid {proxy} is not a proxy: {args:?}");
    kill_and_wait(proxy, "the proxy");
    if forwarding {
        assert_eq!(join_load(&rt, load), End::Failed, "the load kept going without its proxy");
        assert!(call(&rt, &open_a, "select 1").is_err(), "a's connection survived the proxy");
        assert!(call(&rt, &open_b, "select 1").is_err(), "b's connection survived the proxy");
    } else {
        assert_eq!(join_load(&rt, load), End::OutlivedProxy, "the load stopped with the proxy");
        assert!(call(&rt, &open_a, "select 1").is_ok(), "a's session died with the proxy");
        assert!(call(&rt, &open_b, "select v from t").is_ok(), "b's session died with the proxy");
    }
    let acked = acked.lock().expect("acked").clone();

    // The SQL processes outlive the proxy.
    for pid in a_before.iter().chain(&b_before) {
        assert!(pid_alive(*pid), "SQL process {pid} died with the proxy");
    }

    // The supervisor restarts the proxy; new connections work again and
    // reach the same SQL processes.
    let new_proxy = s.wait_for_new_pid("proxy.pid", proxy, RECOVERY_TIMEOUT);
    assert_ne!(new_proxy, proxy);
    s.wait_for_query("default", "select 1", RECOVERY_TIMEOUT);
    for (tenant, before) in [("a", &a_before), ("b", &b_before)] {
        let what = format!("the SQL pids {before:?} from before the kill");
        s.wait_for_tenant(tenant, &what, RECOVERY_TIMEOUT, has_pids(before.clone()));
    }

    s.wait_for_query("a", "select count(*) from acked", RECOVERY_TIMEOUT);
    check_acked_rows(&s, "a", &acked);
    assert_eq!(s.query_tenant("b", "select v from t"), "in b");
    s.query_tenant("a", &format!("insert into acked values ({}, 'after')", acked.len() + 2));
    assert_eq!(s.tenant_info("a").pid_set(), a_before, "a got a new SQL process");
    assert_eq!(s.tenant_info("b").pid_set(), b_before, "b got a new SQL process");
}

/// A SQL process that cannot reach the KV server says so and exits
/// non-zero (the supervisor or proxy would start it again) instead of
/// waiting forever.
#[test]
fn a_sql_process_without_a_kv_server_exits_non_zero() {
    if Target::from_env() == Target::Postgres {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut cmd = std::process::Command::new(testkit::strata_bin());
    cmd.args(["sql", "--tenant", "default", "--kv-timeout", "1s", "--kv"])
        .arg(dir.path().join("no-kv.sock"))
        .env("STRATA_KV_TOKEN", "00");
    let out = testkit::run_with_timeout(&mut cmd, None, CALL_TIMEOUT);
    assert!(!out.status.success(), "it exited successfully");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect to the KV server"), "{err}");
}

/// Waits up to [`RECOVERY_TIMEOUT`] for `what` to give Some.
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + RECOVERY_TIMEOUT;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Pooled SQL processes are forked by the proxy's fork server (its
/// children, not the proxy's). `kill -9` of the fork server loses nothing:
/// a process it forked goes on serving its tenant, tenants that wake next
/// get processes (the proxy starts another fork server, which forks them),
/// more of them than the pool held.
#[test]
fn killing_the_fork_server_keeps_tenants_waking() {
    let Some(s) = start_strata() else { return };
    let proxy = s.proxy_pid();
    let server = wait_for("a fork server", || testkit::fork_servers(proxy).into_iter().next());
    s.create_tenant("a");
    s.query_tenant("a", "create table t (v text); insert into t values ('in a')");
    let rt = test_runtime();
    let open_a = open(&rt, &s, "a");
    let a = s.wait_for_tenant("a", "running", RECOVERY_TIMEOUT, |t| !t.sql_pids.is_empty());
    let forked = testkit::children_of(server);
    assert!(a.sql_pids.iter().all(|p| forked.contains(p)), "a's {a:?} not forked by {server}");

    kill_and_wait(server, "the fork server");
    for t in ["b", "c", "d", "e"] {
        s.create_tenant(t);
        assert_eq!(s.query_tenant(t, "select 1"), "1", "tenant {t} did not wake");
    }
    assert_eq!(call(&rt, &open_a, "select v from t"), Ok("in a".to_string()));
    assert_eq!(s.tenant_info("a").pid_set(), a.pid_set(), "a's SQL process changed");
    let new = wait_for("a new fork server", || {
        testkit::fork_servers(proxy).into_iter().find(|&p| p != server)
    });
    let forked = testkit::children_of(new);
    let e = s.tenant_info("e");
    assert!(e.sql_pids.iter().all(|p| forked.contains(p)), "e's {e:?} not forked by {new}");
}

/// `--no-fork-server`: every SQL process is the proxy's own child, exec'd
/// as `strata sql --pool`, and tenants wake as with the fork server.
#[test]
fn without_a_fork_server_sql_processes_are_execd() {
    if start_strata().is_none() {
        return;
    }
    let s = TestServer::start_with_args(&["--no-fork-server"]);
    let proxy = s.proxy_pid();
    for t in ["a", "b", "c"] {
        s.create_tenant(t);
        assert_eq!(s.query_tenant(t, "select 1"), "1", "tenant {t} did not wake");
        let info = s.tenant_info(t);
        for &pid in &info.sql_pids {
            let args = process_args(pid);
            assert!(args.iter().any(|a| a == "--pool"), "{t}'s pid {pid}: {args:?}");
            assert!(testkit::children_of(proxy).contains(&pid), "{t}'s {pid} is not the proxy's");
        }
    }
    assert!(testkit::fork_servers(proxy).is_empty(), "a fork server runs with --no-fork-server");
}
