//! Live session migration through the proxy, end to end with real clients
//! and real processes (`strata tenant drain`):
//!
//! - A drained tenant's idle session moves to a fresh SQL process and the
//!   old one exits; the client does not notice: its settings (search_path,
//!   a timeout, a custom setting, application_name), its SQL PREPAREd and
//!   protocol-level prepared statements, LISTEN channels, currval, its
//!   backend pid and cancel key all work as before.
//! - A session inside a transaction moves once it commits; one with a
//!   temporary table stays in the old process, which takes no new client
//!   and exits once that session ends.
//! - Lowering a tenant's `--max-sql-processes` below the number running
//!   scales it down: the least loaded process's sessions move to the
//!   others, and it exits; `drain --all` then restarts every running
//!   tenant's processes with their sessions.
//! - A rolling restart onto a new binary: after the file `strata start`
//!   ran is replaced (as an upgrade does), `drain --all` moves the
//!   sessions onto processes of the new binary (the fork server and the
//!   pooled processes of the old one are replaced, not reused), and a
//!   tenant that wakes afterwards runs the new one too.
//! - pgbench -M prepared keeps running while the tenant's SQL processes
//!   are drained and replaced again and again: no failed transaction, and
//!   the TPC-B invariants hold.
//!
//! PostgreSQL has no tenants, so every test here skips the PostgreSQL target.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use testkit::{
    connect_config, error_text, pid_alive, query_text, tenant_config, test_runtime, wait_pid_gone,
    TestServer,
};

/// How long a test waits for a state it expects.
const WAIT: Duration = Duration::from_secs(60);

/// Starts Strata with `args` (None on the PostgreSQL target).
fn start(args: &[&str]) -> Option<TestServer> {
    TestServer::strata_only(args, "tenants are Strata's own; PostgreSQL has none")
}

/// `strata tenant drain ARGS`: (processes, moved, stayed) from its report.
fn drain(s: &TestServer, args: &[&str]) -> (u64, u64, u64) {
    let mut all = vec!["drain"];
    all.extend_from_slice(args);
    let out = s.tenant_cmd(&all);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "tenant drain {args:?}: {text}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        s.log_text()
    );
    // tenant "x": drained P SQL process(es), M session(s) moved, S stayed
    let n: Vec<u64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(n.len() >= 3, "unexpected drain report {text:?}");
    let k = n.len();
    (n[k - 3], n[k - 2], n[k - 1])
}

/// The tenant's one running SQL process.
fn only_pid(s: &TestServer, tenant: &str) -> i32 {
    let t = s.wait_for_tenant(tenant, "one process", WAIT, |t| t.sql_pids.len() == 1);
    t.sql_pids[0]
}

#[test]
fn a_drained_session_keeps_its_state_in_the_new_process() {
    let Some(s) = start(&["--warm-pool", "1"]) else { return };
    s.create_tenant("mv");
    s.query_tenant(
        "mv",
        "create table t (k int primary key, v text); insert into t values (1, 'one'), (2, 'two'); \
         create schema hid; create table hid.only_here (x int); insert into hid.only_here values (7); \
         create sequence sq",
    );
    let rt = test_runtime();
    let c = rt
        .block_on(connect_config(&tenant_config(s.port, "mv")))
        .unwrap_or_else(|e| panic!("connect: {}", error_text(&e)));
    let q = |sql: &str| {
        rt.block_on(query_text(&c, sql)).unwrap_or_else(|e| panic!("{sql}: {}", error_text(&e)))
    };
    q("set search_path = hid, public");
    q("set statement_timeout = '12s'");
    q("set application_name = 'mover'");
    q("set myapp.flag = 'on'");
    q("prepare byk(int) as select v from t where k = $1");
    assert_eq!(q("select nextval('sq')"), "1");
    let protocol = rt.block_on(c.prepare("select v from t where k = $1")).expect("prepare");
    let backend_pid = q("select pg_backend_pid()");

    // A raw client listens and keeps its cancel key.
    let mut raw = s.raw_tenant("mv");
    raw.query("listen ch");
    assert!(raw.until_ready().is_empty());

    let old = only_pid(&s, "mv");
    assert_eq!(drain(&s, &["mv"]), (1, 2, 0));
    let new = only_pid(&s, "mv");
    assert_ne!(new, old, "the tenant is still served by the drained process");
    assert!(wait_pid_gone(old, WAIT), "the drained SQL process {old} did not exit");

    // Everything the session had, it still has.
    assert_eq!(q("show search_path"), "hid, public");
    assert_eq!(q("select x from only_here"), "7");
    assert_eq!(q("show statement_timeout"), "12s");
    assert_eq!(q("select current_setting('application_name')"), "mover");
    assert_eq!(q("select current_setting('myapp.flag')"), "on");
    assert_eq!(q("execute byk(2)"), "two");
    assert_eq!(q("select currval('sq')"), "1");
    assert_eq!(q("select lastval()"), "1");
    assert_eq!(q("select pg_backend_pid()"), backend_pid);
    let rows =
        rt.block_on(c.query(&protocol, &[&1i32])).expect("protocol statement after the move");
    assert_eq!(rows[0].get::<_, String>(0), "one");
    let app: Vec<String> = s
        .query_tenant("mv", "select application_name from pg_stat_activity order by 1")
        .lines()
        .map(str::to_string)
        .collect();
    assert!(app.contains(&"mover".to_string()), "pg_stat_activity in the new process: {app:?}");

    // LISTEN moved: a NOTIFY from another session reaches the raw client.
    s.query_tenant("mv", "notify ch, 'after the move'");
    let (_, channel, payload) = raw.next_notification();
    assert_eq!((channel.as_str(), payload.as_str()), ("ch", "after the move"));
    raw.query("select pg_listening_channels()");
    assert!(raw.until_ready().is_empty());

    // The cancel key moved: a CancelRequest stops the raw client's statement.
    let started = Instant::now();
    raw.query("select pg_sleep(30)");
    std::thread::sleep(Duration::from_millis(300));
    raw.cancel(s.port);
    assert_eq!(raw.until_ready(), vec!["57014".to_string()]);
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the cancel did not reach the moved session"
    );
}

#[test]
fn a_transaction_moves_when_it_ends_and_a_temp_table_keeps_its_session() {
    let Some(s) = start(&["--warm-pool", "1", "--idle-timeout", "1s"]) else { return };
    s.create_tenant("tx");
    s.query_tenant("tx", "create table t (k int primary key)");
    let rt = test_runtime();
    let connect = || {
        rt.block_on(connect_config(&tenant_config(s.port, "tx")))
            .unwrap_or_else(|e| panic!("connect: {}", error_text(&e)))
    };
    let (in_txn, with_temp, idle) = (connect(), connect(), connect());
    let q = |c: &tokio_postgres::Client, sql: &str| {
        rt.block_on(query_text(c, sql)).unwrap_or_else(|e| panic!("{sql}: {}", error_text(&e)))
    };
    q(&in_txn, "begin");
    q(&in_txn, "insert into t values (1)");
    q(&with_temp, "create temp table scratch (x int); insert into scratch values (42)");
    q(&idle, "select 1");
    let old = only_pid(&s, "tx");

    std::thread::scope(|scope| {
        let drained = scope.spawn(|| drain(&s, &["tx", "--wait", "6s"]));
        std::thread::sleep(Duration::from_secs(2));
        // Still inside its transaction: not moved yet, and it goes on.
        q(&in_txn, "insert into t values (2)");
        q(&in_txn, "commit");
        let (processes, moved, stayed) = drained.join().expect("drain thread");
        assert_eq!((processes, moved, stayed), (1, 2, 1));
    });
    // The old process keeps the temp-table session, and only it.
    assert!(pid_alive(old));
    assert_eq!(q(&with_temp, "select x from scratch"), "42");
    let t = s.tenant_info("tx");
    assert_eq!(t.sql_pids.len(), 2, "{t:?}");
    assert_eq!(q(&in_txn, "select count(*) from t"), "2");
    assert_eq!(q(&idle, "select 2"), "2");
    // New clients go to the new process, never the draining one.
    let fresh = connect();
    assert_eq!(q(&fresh, "select count(*) from t"), "2");
    assert_eq!(q(&with_temp, "select count(*) from pg_stat_activity"), "1");
    drop(fresh);
    // When that session ends, the old process retires.
    drop(with_temp);
    assert!(wait_pid_gone(old, WAIT), "the drained process {old} stayed after its last session");
}

#[test]
fn lowering_max_sql_processes_moves_sessions_off_the_extra_process() {
    let Some(s) = start(&["--warm-pool", "2"]) else { return };
    s.create_tenant("k");
    let out = s.tenant_cmd(&["set", "k", "--max-sql-processes", "2"]);
    assert!(out.status.success());
    let rt = test_runtime();
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let c = rt
                .block_on(connect_config(&tenant_config(s.port, "k")))
                .unwrap_or_else(|e| panic!("client {i}: {}", error_text(&e)));
            let set = format!("set application_name = 'c{i}'");
            rt.block_on(query_text(&c, &set)).expect("set");
            c
        })
        .collect();
    let two = s.wait_for_tenant("k", "two processes", WAIT, |t| t.sql_pids.len() == 2);
    let out = s.tenant_cmd(&["set", "k", "--max-sql-processes", "1"]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("drained 1 SQL process(es): 2 session(s) moved, 0 stayed"), "{said}");
    let one = only_pid(&s, "k");
    assert!(two.sql_pids.contains(&one), "{one} is not one of {:?}", two.sql_pids);
    for p in two.sql_pids.iter().filter(|p| **p != one) {
        assert!(wait_pid_gone(*p, WAIT), "the extra process {p} did not exit");
    }
    for (i, c) in clients.iter().enumerate() {
        let app = rt.block_on(query_text(c, "show application_name")).expect("after the move");
        assert_eq!(app, format!("c{i}"));
    }
    let n = rt.block_on(query_text(&clients[0], "select count(*) from pg_stat_activity"));
    assert_eq!(n.expect("count"), "4", "all four sessions are in one process now");
    // A rolling restart drains every running tenant in turn.
    let out = s.tenant_cmd(&["drain", "--all"]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let line = "tenant \"k\": drained 1 SQL process(es), 4 session(s) moved, 0 stayed";
    assert!(said.contains(line), "{said}");
    assert!(wait_pid_gone(one, WAIT), "the restarted process {one} did not exit");
    for c in &clients {
        assert_eq!(rt.block_on(query_text(c, "select 1")).expect("after the restart"), "1");
    }
}

#[test]
fn pgbench_prepared_runs_through_repeated_drains() {
    let Some(s) = start(&["--warm-pool", "1"]) else { return };
    let init = s.pgbench(&["-i", "-s", "1", "-q"]);
    assert!(init.status.success(), "pgbench -i: {}", String::from_utf8_lossy(&init.stderr));
    let mut seen = BTreeSet::new();
    let mut moved_total = 0;
    let out = std::thread::scope(|scope| {
        let bench = scope.spawn(|| s.pgbench(&["-M", "prepared", "-c", "4", "-T", "16", "-n"]));
        std::thread::sleep(Duration::from_secs(2));
        for _ in 0..4 {
            seen.insert(only_pid(&s, "default"));
            let began = Instant::now();
            let (processes, moved, stayed) = drain(&s, &["default", "--wait", "20s"]);
            eprintln!("drain: {moved} sessions moved in {:?} (the command's run)", began.elapsed());
            assert_eq!((processes, stayed), (1, 0), "a pgbench session stayed behind");
            moved_total += moved;
            std::thread::sleep(Duration::from_secs(2));
        }
        bench.join().expect("pgbench thread")
    });
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("{moved_total} sessions moved in 4 drains over {seen:?}\n{report}");
    assert!(
        out.status.success(),
        "pgbench failed: {report}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        s.log_text()
    );
    assert!(report.contains("number of failed transactions: 0 "), "{report}");
    assert!(moved_total >= 16, "only {moved_total} sessions moved in 4 drains");
    assert!(seen.len() >= 4, "the drains did not replace the process: {seen:?}");
    let sums = s.query(
        "select (select sum(abalance) from pgbench_accounts), \
                (select sum(tbalance) from pgbench_tellers), \
                (select sum(bbalance) from pgbench_branches), \
                (select sum(delta) from pgbench_history)",
    );
    let v: Vec<&str> = sums.split('|').collect();
    assert!(v.len() == 4 && v.iter().all(|x| *x == v[0]), "TPC-B sums differ: {sums}");
    let tx: u64 = s.query("select count(*) from pgbench_history").parse().expect("count");
    assert!(
        tx > 0 && report.contains(&format!("number of transactions actually processed: {tx}")),
        "{report}"
    );
}

/// The file process `pid` runs, as /proc says (" (deleted)" once replaced).
fn exe_of(pid: i32) -> String {
    let link = std::fs::read_link(format!("/proc/{pid}/exe"));
    link.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

#[test]
fn a_rolling_restart_moves_sessions_onto_a_new_binary() {
    if start(&[]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = dir.path().join("strata");
    std::fs::copy(testkit::strata_bin(), &bin).expect("copying the binary");
    let s = TestServer::start_binary(&bin, &["--warm-pool", "2"]);
    s.create_tenant("u");
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(s.port, "u")))
        .unwrap_or_else(|e| panic!("connect: {}", error_text(&e)));
    rt.block_on(query_text(&client, "set application_name = 'upgraded'")).expect("set");
    let old = only_pid(&s, "u");
    let path = bin.to_string_lossy().into_owned();
    assert_eq!(exe_of(old), path);

    // The upgrade: a new file renamed over the old one.
    let new_bin = dir.path().join("strata.new");
    std::fs::copy(testkit::strata_bin(), &new_bin).expect("copying the binary");
    std::fs::rename(&new_bin, &bin).expect("replacing the binary");
    assert_eq!(exe_of(old), format!("{path} (deleted)"));

    assert_eq!(drain(&s, &["--all"]), (1, 1, 0));
    let new = only_pid(&s, "u");
    assert_ne!(new, old);
    assert_eq!(exe_of(new), path, "the moved session's process runs the old binary");
    assert!(wait_pid_gone(old, WAIT), "the old process {old} did not exit");
    let app = rt.block_on(query_text(&client, "show application_name")).expect("after the move");
    assert_eq!(app, "upgraded");

    s.create_tenant("v");
    assert_eq!(s.query_tenant("v", "select 1"), "1");
    let v = only_pid(&s, "v");
    assert_eq!(exe_of(v), path, "a tenant woken after the upgrade runs the old binary");
}
