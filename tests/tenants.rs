//! Tenants of the multi-process cluster, end to end through the proxy.
//!
//! - Routing: the startup `options` (`--cluster=NAME`, Neon's `endpoint=NAME`,
//!   from conninfo or `PGOPTIONS`) names the tenant, else a database name
//!   `NAME.DBNAME`, else the tenant is `default`; options win over the
//!   database name; an unknown tenant is a FATAL 3D000 `tenant "NAME" does
//!   not exist` (seen by psql and by tokio-postgres).
//! - Isolation at the SQL level: tables, sessions in pg_stat_activity,
//!   advisory locks, LISTEN/NOTIFY, sequences, database sizes and roles of
//!   one tenant are invisible to another.
//! - The `strata tenant` command line: `create` (and the names it refuses),
//!   `list --json` (its fields), `drop` (refused for unknown tenants, for
//!   `default`, and while clients are connected unless `--force`, which ends
//!   them; a re-created tenant starts empty).
//! - Two SQL processes of one tenant: DDL committed through one shows at
//!   once in the other, whose cached catalog only the KV server can tell
//!   is stale.
//!
//! PostgreSQL has no tenants, so every test here skips the PostgreSQL target.

use std::time::{Duration, Instant};

use testkit::{
    cluster_option, connect_config, error_text, pid_alive, plain_config, process_args, query_text,
    tenant_config, test_runtime, TenantInfo, TestServer, SETTLE,
};
use tokio_postgres::error::SqlState;

/// How long a test waits for the tenant list to show a process that
/// started or went (the list may lag a moment behind).
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a test waits for one client call that must finish (an answer
/// or an error, never a hang).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts Strata, or returns `None` (after saying so) on the PostgreSQL
/// target, which has no tenants.
fn start_strata() -> Option<TestServer> {
    TestServer::strata_only(&[], "tenants are Strata's own; PostgreSQL has none")
}

/// Starts Strata with tenants `a` and `b` besides `default`, each with a
/// table `t` holding one row naming its tenant (`in a`, `in b`, `in default`),
/// so that `select v from t` shows where a connection landed.
fn start_with_a_and_b() -> Option<TestServer> {
    let s = start_strata()?;
    s.create_tenant("a");
    s.create_tenant("b");
    for (tenant, row) in [("a", "in a"), ("b", "in b"), ("default", "in default")] {
        s.query_tenant(tenant, &format!("create table t (v text); insert into t values ('{row}')"));
    }
    Some(s)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `select v from t` through psql with `conninfo` and the extra
/// environment; its trimmed stdout, panicking with stderr on failure.
fn landed(s: &TestServer, conninfo: &str, env: &[(&str, &str)]) -> String {
    let out = s.psql_with(conninfo, env, "select v from t");
    assert!(out.status.success(), "{conninfo} {env:?}: {}", stderr(&out));
    stdout(&out)
}

/// Asserts that a failed command printed a message on stderr and did not
/// panic: a refusal must say why.
fn assert_refused(out: &std::process::Output, what: &str) {
    assert!(!out.status.success(), "{what} succeeded: {}", stdout(out));
    let err = stderr(out);
    assert!(!err.trim().is_empty(), "{what} failed without a message on stderr");
    assert!(!err.contains("panicked"), "{what} panicked: {err}");
}

#[test]
fn each_routing_form_reaches_its_tenant() {
    let Some(s) = start_with_a_and_b() else { return };
    // The startup options, from the conninfo or from PGOPTIONS.
    assert_eq!(landed(&s, &s.tenant_conninfo("a"), &[]), "in a");
    assert_eq!(landed(&s, &s.tenant_conninfo("b"), &[]), "in b");
    let plain = s.conninfo_for("postgres", "postgres", None);
    assert_eq!(landed(&s, &plain, &[("PGOPTIONS", "--cluster=a")]), "in a");
    // Neon's form.
    let endpoint = s.conninfo_for("postgres", "postgres", Some("endpoint=b"));
    assert_eq!(landed(&s, &endpoint, &[]), "in b");
    // The database name `NAME.DBNAME`.
    assert_eq!(landed(&s, &s.conninfo_for("postgres", "a.postgres", None), &[]), "in a");
    assert_eq!(landed(&s, &s.conninfo_for("postgres", "b.postgres", None), &[]), "in b");
    // Neither: the default tenant (also what TestServer::query reaches).
    assert_eq!(landed(&s, &plain, &[]), "in default");
    assert_eq!(s.query("select v from t"), "in default");
    // The unix socket routes the same way.
    let socket = format!(
        "host={} port={} user=postgres dbname=postgres options='--cluster=a'",
        s.socket_dir().display(),
        s.port
    );
    assert_eq!(landed(&s, &socket, &[]), "in a");

    // tokio-postgres: options, then the database name.
    let rt = test_runtime();
    rt.block_on(async {
        let via_options = connect_config(&tenant_config(s.port, "b")).await.expect("connect b");
        assert_eq!(query_text(&via_options, "select v from t").await.expect("query"), "in b");
        let mut by_name = plain_config(s.port);
        by_name.dbname("a.postgres");
        let via_dbname = connect_config(&by_name).await.expect("connect a.postgres");
        assert_eq!(query_text(&via_dbname, "select v from t").await.expect("query"), "in a");
        let via_default = connect_config(&plain_config(s.port)).await.expect("connect default");
        assert_eq!(query_text(&via_default, "select v from t").await.expect("query"), "in default");
    });
}

/// With both `options` and a `NAME.DBNAME` database name, the options
/// choose the tenant. What the database name then means inside that tenant
/// is not fixed by the spec (the name as is, which does not exist, or its
/// `DBNAME` part), so either outcome is accepted; reaching the tenant the
/// database name names is not.
#[test]
fn options_take_precedence_over_the_database_name() {
    let Some(s) = start_with_a_and_b() else { return };
    let forms = [
        (s.conninfo_for("postgres", "b.postgres", Some("--cluster=a")), vec![]),
        (s.conninfo_for("postgres", "b.postgres", Some("endpoint=a")), vec![]),
        (s.conninfo_for("postgres", "b.postgres", None), vec![("PGOPTIONS", "--cluster=a")]),
    ];
    for (conninfo, env) in &forms {
        let out = s.psql_with(conninfo, env, "select v from t");
        if out.status.success() {
            assert_eq!(stdout(&out), "in a", "{conninfo} {env:?}");
        } else {
            let err = stderr(&out);
            assert!(
                err.contains("database \"b.postgres\" does not exist"),
                "{conninfo} {env:?}: expected tenant a (maybe without database b.postgres): {err}"
            );
        }
    }
    // The options win over a database name naming an unknown tenant, too.
    let out = s.psql_with(
        &s.conninfo_for("postgres", "nosuch.postgres", Some("--cluster=a")),
        &[],
        "select 1",
    );
    assert!(
        !stderr(&out).contains("tenant \"nosuch\""),
        "the database name chose the tenant despite the options: {}",
        stderr(&out)
    );
}

#[test]
fn an_unknown_tenant_is_a_fatal_3d000() {
    let Some(s) = start_strata() else { return };
    let message = "tenant \"nosuch\" does not exist";
    let forms = [
        (s.tenant_conninfo("nosuch"), vec![]),
        (s.conninfo_for("postgres", "postgres", Some("endpoint=nosuch")), vec![]),
        (s.conninfo_for("postgres", "nosuch.postgres", None), vec![]),
        (s.conninfo_for("postgres", "postgres", None), vec![("PGOPTIONS", "--cluster=nosuch")]),
    ];
    for (conninfo, env) in &forms {
        let out = s.psql_with(conninfo, env, "select 1");
        assert!(!out.status.success(), "{conninfo} {env:?} connected");
        let err = stderr(&out);
        assert!(err.contains("FATAL") && err.contains(message), "{conninfo} {env:?}: {err}");
    }

    let rt = test_runtime();
    rt.block_on(async {
        let mut by_name = plain_config(s.port);
        by_name.dbname("nosuch.postgres");
        for config in [tenant_config(s.port, "nosuch"), by_name] {
            let e = match connect_config(&config).await {
                Ok(_) => panic!("{config:?} connected to an unknown tenant"),
                Err(e) => e,
            };
            assert_eq!(e.code(), Some(&SqlState::INVALID_CATALOG_NAME), "{}", error_text(&e));
            let db = e.as_db_error().expect("a server error");
            assert_eq!((db.severity(), db.message()), ("FATAL", message));
        }
    });
    // The proxy keeps serving after refusing.
    assert_eq!(s.query("select 1"), "1");
}

#[test]
fn tables_and_sessions_of_one_tenant_are_invisible_to_another() {
    let Some(s) = start_with_a_and_b() else { return };
    // The same table name holds each tenant's own rows; a table made in a
    // does not exist in b.
    s.query_tenant("a", "insert into t values ('a2'); create table only_a (x int)");
    assert_eq!(s.query_tenant("a", "select v from t order by v"), "a2\nin a");
    assert_eq!(s.query_tenant("b", "select v from t"), "in b");
    let out = s.psql_tenant("b", "select * from only_a");
    assert!(stderr(&out).contains("relation \"only_a\" does not exist"), "{}", stderr(&out));
    assert_eq!(s.query("select count(*) from t"), "1", "default untouched");

    // A session of each tenant, whose last query is a marker.
    let rt = test_runtime();
    let (in_a, in_b) = rt.block_on(async {
        let a = connect_config(&tenant_config(s.port, "a")).await.expect("connect a");
        let b = connect_config(&tenant_config(s.port, "b")).await.expect("connect b");
        query_text(&a, "select 'marker-a'").await.expect("marker a");
        query_text(&b, "select 'marker-b'").await.expect("marker b");
        (a, b)
    });
    let sessions = |marker: &str| {
        format!("select count(*) from pg_stat_activity where query = 'select ''{marker}'''")
    };
    assert_eq!(s.query_tenant("a", &sessions("marker-a")), "1", "a sees its own session");
    assert_eq!(s.query_tenant("b", &sessions("marker-b")), "1", "b sees its own session");
    assert_eq!(s.query_tenant("a", &sessions("marker-b")), "0", "a sees b's session");
    assert_eq!(s.query_tenant("b", &sessions("marker-a")), "0", "b sees a's session");
    assert_eq!(s.query(&sessions("marker-a")), "0", "default sees a's session");
    drop((in_a, in_b));
}

#[test]
fn advisory_locks_are_per_tenant() {
    let Some(s) = start_with_a_and_b() else { return };
    let rt = test_runtime();
    rt.block_on(async {
        let a = connect_config(&tenant_config(s.port, "a")).await.expect("connect a");
        let b = connect_config(&tenant_config(s.port, "b")).await.expect("connect b");
        let a2 = connect_config(&tenant_config(s.port, "a")).await.expect("connect a again");
        let try_lock = "select pg_try_advisory_lock(42)";
        assert_eq!(query_text(&a, try_lock).await.expect("lock in a"), "t");
        assert_eq!(query_text(&b, try_lock).await.expect("lock in b"), "t", "a's lock blocked b");
        // The lock is real within a tenant: a second session of a is refused.
        assert_eq!(query_text(&a2, try_lock).await.expect("lock in a again"), "f");
        // A waiting lock in b does not wait for a's holder either (bounded,
        // in case it does).
        query_text(&a, "select pg_advisory_lock(7)").await.expect("lock 7 in a");
        let in_b = query_text(&b, "select pg_advisory_lock(7)");
        let waited = tokio::time::timeout(CALL_TIMEOUT, in_b).await;
        assert!(matches!(waited, Ok(Ok(_))), "b waited for a's advisory lock: {waited:?}");
    });
}

#[test]
fn notifications_stay_in_their_tenant() {
    let Some(s) = start_with_a_and_b() else { return };
    let mut a_listener = s.raw_tenant("a");
    a_listener.query("listen ch");
    assert!(a_listener.until_ready().is_empty());
    let mut b_listener = s.raw_tenant("b");
    b_listener.query("listen ch");
    assert!(b_listener.until_ready().is_empty());

    s.query_tenant("b", "notify ch, 'from b'");
    assert_eq!(b_listener.next_notification().2, "from b", "b hears b");
    s.query_tenant("a", "notify ch, 'from a'");
    assert_eq!(a_listener.next_notification().2, "from a", "a's first notification is a's");
    // Nothing else arrives: neither b's notification in a nor a's in b.
    std::thread::sleep(SETTLE);
    for (who, listener) in [("a", &mut a_listener), ("b", &mut b_listener)] {
        listener.query("select 1");
        let (codes, notes) = listener.until_ready_notified();
        assert!(codes.is_empty(), "{who}: {codes:?}");
        assert!(notes.is_empty(), "{who} heard another tenant's notification: {notes:?}");
    }
}

#[test]
fn sequences_and_database_sizes_are_per_tenant() {
    let Some(s) = start_with_a_and_b() else { return };
    for tenant in ["a", "b"] {
        s.query_tenant(tenant, "create sequence seq");
    }
    for want in ["1", "2", "3"] {
        assert_eq!(s.query_tenant("a", "select nextval('seq')"), want);
    }
    assert_eq!(s.query_tenant("b", "select nextval('seq')"), "1", "b's sequence moved with a's");
    assert_eq!(s.query_tenant("a", "select nextval('seq')"), "4");

    // A size is what the tenant's keyspace takes in KV: a's grows with a
    // megabyte of rows, b's does not grow.
    let size = "select pg_database_size('postgres')";
    let b_before: i64 = s.query_tenant("b", size).parse().expect("b's size");
    s.query_tenant("a", "insert into t select repeat('x', 200) from generate_series(1, 5000)");
    let a_size: i64 = s.query_tenant("a", size).parse().expect("a's size");
    let b_after: i64 = s.query_tenant("b", size).parse().expect("b's size");
    assert!(b_after <= b_before, "b grew from {b_before} to {b_after} with a's rows");
    assert!(a_size > b_after + 500_000, "a is {a_size} bytes, b {b_after}");
}

#[test]
fn roles_are_per_tenant() {
    let Some(s) = start_with_a_and_b() else { return };
    s.query_tenant("a", "create role alice login");
    s.query_tenant("b", "create role bob login");
    let has = |role: &str| format!("select count(*) from pg_roles where rolname = '{role}'");
    assert_eq!(s.query_tenant("a", &has("alice")), "1");
    assert_eq!(s.query_tenant("b", &has("alice")), "0", "a's role exists in b");
    assert_eq!(s.query_tenant("a", &has("bob")), "0", "b's role exists in a");
    assert_eq!(s.query(&has("alice")), "0", "a's role exists in default");
    // Each tenant has its own superuser postgres.
    for tenant in ["a", "b", "default"] {
        let sql = "select rolsuper from pg_roles where rolname = 'postgres'";
        assert_eq!(s.query_tenant(tenant, sql), "t", "{tenant}");
    }
    // Logging in as alice works in a only.
    let as_alice = |tenant: &str| {
        s.psql_with(
            &s.conninfo_for("alice", "postgres", Some(cluster_option(tenant).as_str())),
            &[],
            "select current_user",
        )
    };
    let in_a = as_alice("a");
    assert!(in_a.status.success(), "{}", stderr(&in_a));
    assert_eq!(stdout(&in_a), "alice");
    let in_b = as_alice("b");
    assert!(
        !in_b.status.success() && stderr(&in_b).contains("role \"alice\" does not exist"),
        "alice logged into b: {}",
        stderr(&in_b)
    );
}

#[test]
fn tenant_list_reports_each_tenant_as_json() {
    let Some(s) = start_strata() else { return };
    let first = s.tenants();
    let default =
        first.iter().find(|t| t.name == "default").expect("default exists from the start");
    assert!(!default.created.is_empty(), "{default:?}");
    assert!(["running", "suspended"].contains(&default.state.as_str()), "{default:?}");

    s.create_tenant("fresh");
    let all = s.tenants();
    assert_eq!(all.len(), first.len() + 1, "{all:?}");
    let fresh = s.tenant_info("fresh");
    assert_eq!(fresh.state, "suspended", "no connection yet: {fresh:?}");
    assert!(fresh.sql_pids.is_empty(), "{fresh:?}");
    assert!(!fresh.created.is_empty(), "{fresh:?}");
    let mut ids: Vec<u64> = all.iter().map(|t| t.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "tenant ids are unique: {all:?}");

    // A connection starts the tenant's SQL process: a `strata sql` process,
    // neither the KV server nor the proxy, and not another tenant's.
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(s.port, "fresh")))
        .unwrap_or_else(|e| panic!("connect fresh: {}", error_text(&e)));
    let running = s.wait_for_tenant("fresh", "running with a SQL process", LIST_TIMEOUT, |t| {
        t.is_running() && !t.sql_pids.is_empty()
    });
    for &pid in &running.sql_pids {
        assert!(pid_alive(pid), "listed pid {pid} is not running");
        let args = process_args(pid);
        assert!(args.iter().any(|a| a == "sql"), "pid {pid} is not a `strata sql`: {args:?}");
        assert_ne!(pid, s.kv_pid());
        assert_ne!(pid, s.proxy_pid());
    }
    let default = s.tenant_info("default");
    assert!(running.pid_set().is_disjoint(&default.pid_set()), "{running:?} {default:?}");
    assert_eq!(running.id, fresh.id, "the id does not change");
    drop(client);

    // Without --json the list is for people; it names the tenants.
    let out = s.tenant_cmd(&["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("default") && text.contains("fresh"), "{text}");
}

#[test]
fn bad_tenant_names_are_refused() {
    let Some(s) = start_strata() else { return };
    let longest = "a".repeat(63);
    let too_long = "a".repeat(64);
    let bad = [
        "",
        too_long.as_str(),
        "Acme",
        "a_b",
        "a.b",
        "a b",
        "a/b",
        "tenant!",
        "caf\u{e9}",
        "system",
    ];
    for name in bad {
        let out = s.tenant_cmd(&["create", name]);
        assert_refused(&out, &format!("tenant create {name:?}"));
    }
    // Nothing was created by the refusals.
    let names: Vec<String> = s.tenants().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["default"], "after refused names");

    // The edges of the rules are allowed: 63 bytes, digits, hyphens.
    for name in [longest.as_str(), "7eleven", "a-1-b"] {
        s.create_tenant(name);
        assert_eq!(s.query_tenant(name, "select 1"), "1", "{name}");
    }
    // An existing name, including default, is refused as such.
    for name in ["a-1-b", "default"] {
        let out = s.tenant_cmd(&["create", name]);
        assert_refused(&out, &format!("tenant create {name:?} again"));
        assert!(stderr(&out).contains("already exists"), "{name}: {}", stderr(&out));
    }
    assert_eq!(s.tenants().len(), 4);
}

/// Polls a client with `select 1` until it fails (for at most
/// [`CALL_TIMEOUT`]); whether it did. A connection ended by the server
/// fails on its next call.
fn ends_soon(rt: &tokio::runtime::Runtime, client: &tokio_postgres::Client) -> bool {
    let deadline = Instant::now() + CALL_TIMEOUT;
    rt.block_on(async {
        while Instant::now() < deadline {
            match tokio::time::timeout(CALL_TIMEOUT, client.simple_query("select 1")).await {
                Ok(Ok(_)) => tokio::time::sleep(Duration::from_millis(100)).await,
                Ok(Err(_)) => return true,
                Err(_) => return false,
            }
        }
        false
    })
}

#[test]
fn drop_refuses_while_connected_unless_forced() {
    let Some(s) = start_strata() else { return };
    s.create_tenant("x");
    s.query_tenant("x", "create table t (v text); insert into t values ('old x')");
    let rt = test_runtime();
    let client = rt
        .block_on(connect_config(&tenant_config(s.port, "x")))
        .unwrap_or_else(|e| panic!("connect x: {}", error_text(&e)));

    let out = s.drop_tenant("x", false);
    assert_refused(&out, "tenant drop x with a client connected");
    assert!(stderr(&out).to_lowercase().contains("connection"), "{}", stderr(&out));
    assert!(s.find_tenant("x").is_some(), "x went despite the refusal");
    let still =
        rt.block_on(query_text(&client, "select v from t")).expect("x's client still works");
    assert_eq!(still, "old x");

    let out = s.drop_tenant("x", true);
    assert!(out.status.success(), "tenant drop x --force: {}", stderr(&out));
    assert!(ends_soon(&rt, &client), "x's connection kept working after drop --force");
    assert!(s.find_tenant("x").is_none(), "x still listed after drop");
    let gone = s.psql_tenant("x", "select 1");
    assert!(stderr(&gone).contains("tenant \"x\" does not exist"), "{}", stderr(&gone));
    let e = match rt.block_on(connect_config(&tenant_config(s.port, "x"))) {
        Ok(_) => panic!("connected to dropped tenant x"),
        Err(e) => e,
    };
    assert_eq!(e.code(), Some(&SqlState::INVALID_CATALOG_NAME), "{}", error_text(&e));

    // The same name again is a new, empty tenant.
    s.create_tenant("x");
    let out = s.psql_tenant("x", "select v from t");
    assert!(
        stderr(&out).contains("relation \"t\" does not exist"),
        "old table back: {}",
        stdout(&out)
    );
    s.query_tenant("x", "create table t (v text); insert into t values ('new x')");
    assert_eq!(s.query_tenant("x", "select v from t"), "new x");
}

#[test]
fn drop_refuses_unknown_tenants_and_default() {
    let Some(s) = start_strata() else { return };
    assert_refused(&s.drop_tenant("nosuch", false), "tenant drop nosuch");
    assert_refused(&s.drop_tenant("nosuch", true), "tenant drop nosuch --force");
    s.query("create table keep (v int); insert into keep values (1)");
    assert_refused(&s.drop_tenant("default", false), "tenant drop default");
    assert_refused(&s.drop_tenant("default", true), "tenant drop default --force");
    assert_eq!(s.query("select v from keep"), "1", "default lost its data");

    // Once its last client has gone, a tenant drops without --force (the
    // proxy may notice the disconnect a moment later, so refusals that
    // name connections are retried for a while).
    s.create_tenant("y");
    assert_eq!(s.query_tenant("y", "select 1"), "1");
    let deadline = Instant::now() + LIST_TIMEOUT;
    loop {
        let out = s.drop_tenant("y", false);
        if out.status.success() {
            break;
        }
        let err = stderr(&out);
        assert!(err.to_lowercase().contains("connection"), "tenant drop y: {err}");
        assert!(Instant::now() < deadline, "y still counted as connected: {err}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let names: Vec<String> = s.tenants().into_iter().map(|t: TenantInfo| t.name).collect();
    assert_eq!(names, ["default"]);
}

/// A SQL process keeps its catalog and assumes it current: the KV server
/// checks that with each statement's first request and refuses it if the
/// catalog version moved, and the statement runs again on the new catalog.
/// With the DDL committed through another SQL process of the tenant,
/// every statement of this one must see it at once: reads and writes,
/// simple and prepared, inside a PL/pgSQL function whose exception handler
/// catches everything (the refusal must not reach it as a caught error),
/// and in a READ COMMITTED block.
#[test]
fn ddl_through_one_sql_process_shows_at_once_in_another() {
    let Some(s) = start_strata() else { return };
    s.query("create table t (id int, v text); insert into t values (1, 'one')");
    let other = s.start_sql_process("default");
    let rt = test_runtime();
    rt.block_on(async {
        let b = testkit::connect(other.port).await.expect("connect to the second process");
        let ddl = |sql: &str| {
            s.query(sql);
        };
        testkit::each_statement_sees_ddl(&b, ddl, testkit::DdlSteps::RenameThenCreate).await;
    });
    assert_eq!(s.query("select count(*) from u4"), "2", "the other process's insert landed");
}
