//! The server's sessions as SQL sees them: pg_stat_activity lists them with
//! their state, statement and wait; pg_cancel_backend and
//! pg_terminate_backend reach them, busy or idle, within the rules on who
//! may signal whom; pg_sleep waits and can be cancelled. Every test here
//! also passes against PostgreSQL (`STRATA_TEST_TARGET=postgres`), whose
//! background processes the queries leave out.

use std::time::{Duration, Instant};

use testkit::{TestServer, SETTLE};

/// Client sessions other than the one asking: `state|wait_event|query`
/// per session, by query text.
fn others(s: &TestServer) -> String {
    s.query(
        "select state, coalesce(wait_event, ''), query from pg_stat_activity \
         where backend_type = 'client backend' and pid <> pg_backend_pid() order by query",
    )
}

/// Polls `sql` until it answers `want` (sessions end asynchronously).
fn eventually(s: &TestServer, sql: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = s.query(sql);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: still {got:?}, want {want:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn pg_stat_activity_shows_what_sessions_do() {
    let s = TestServer::start();
    let mut idle = s.run("select 'idle one'");
    let mut open = s.run("begin; select 'in a block'");
    let mut failed = s.send("begin; select 1/0");
    assert_eq!(failed.until_ready(), ["22012"]);
    let mut sleeper = s.send("select pg_sleep(60)");
    std::thread::sleep(SETTLE);
    assert_eq!(
        others(&s),
        "idle in transaction|ClientRead|begin; select 'in a block'\n\
         idle in transaction (aborted)|ClientRead|begin; select 1/0\n\
         idle|ClientRead|select 'idle one'\n\
         active|PgSleep|select pg_sleep(60)",
        "the query is the whole query string, as the client sent it"
    );
    let me = s.query(
        "select state, pid = pg_backend_pid(), usename, datname, backend_type, \
         xact_start is not null, backend_start <= query_start \
         from pg_stat_activity where query like '%backend_start <= query_start%'",
    );
    assert_eq!(me, "active|t|postgres|postgres|client backend|t|t");
    let pids = s.query(&format!(
        "select count(*) from pg_stat_activity where pid in ({}, {}, {}, {})",
        idle.pid(),
        open.pid(),
        failed.pid(),
        sleeper.pid()
    ));
    assert_eq!(pids, "4", "pg_stat_activity's pids are the BackendKeyData pids");
    sleeper.cancel(s.port);
    assert_eq!(sleeper.until_ready(), ["57014"]);
    for c in [&mut idle, &mut open, &mut failed] {
        c.query("rollback");
        c.until_ready();
    }
}

#[test]
fn lock_waits_show_their_wait_events() {
    let s = TestServer::start();
    s.query("create table jobs (id int primary key); insert into jobs values (1)");
    let mut holder = s.run("begin; select pg_advisory_lock(5); select * from jobs for update");
    let mut advisory = s.send("select pg_advisory_lock(5)");
    let mut row = s.send("select * from jobs where id = 1 for update");
    std::thread::sleep(SETTLE);
    let events = |pid: i32| {
        s.query(&format!(
            "select wait_event_type, wait_event from pg_stat_activity where pid = {pid}"
        ))
    };
    assert_eq!(events(advisory.pid()), "Lock|advisory");
    assert_eq!(events(row.pid()), "Lock|transactionid");
    holder.query("commit; select pg_advisory_unlock(5)");
    assert!(holder.until_ready().is_empty());
    assert!(row.until_ready().is_empty());
    assert!(advisory.until_ready().is_empty());
    assert_eq!(events(row.pid()), "Client|ClientRead", "idle again");
}

#[test]
fn a_transaction_sees_one_snapshot_of_activity() {
    let s = TestServer::start();
    let count = "select count(*) from pg_stat_activity where query = 'select ''marker'''";
    let mut a = s.run(&format!("begin; {count}"));
    let _marker = s.run("select 'marker'");
    a.query(&format!("select 1 / ({count})::int"));
    assert_eq!(a.until_ready(), ["22012"], "the block still sees no marker session");
    a.query("rollback");
    assert!(a.until_ready().is_empty());
    a.query(&format!("select 1 / ({count})::int"));
    assert!(a.until_ready().is_empty(), "a new transaction looks again");
}

#[test]
fn cancel_and_terminate_reach_busy_and_idle_sessions() {
    let s = TestServer::start();
    let mut busy = s.send("select pg_sleep(60)");
    std::thread::sleep(SETTLE);
    let sql = format!("select pg_cancel_backend({})", busy.pid());
    assert_eq!(s.query(&sql), "t");
    assert_eq!(busy.until_ready(), ["57014"], "the sleep is cancelled");
    busy.query("select 'still here'");
    assert!(busy.until_ready().is_empty(), "a cancel leaves the connection open");

    let mut idle = s.run("begin; select 1");
    let sql = format!("select pg_terminate_backend({})", idle.pid());
    assert_eq!(s.query(&sql), "t");
    assert_eq!(idle.until_closed(), ["57P01"], "an idle session is ended at once");

    let mut sleeper = s.send("select pg_sleep(60)");
    std::thread::sleep(SETTLE);
    let sql = format!(
        "select pg_terminate_backend(pid, 20000) from pg_stat_activity where pid = {}",
        sleeper.pid()
    );
    assert_eq!(s.query(&sql), "t", "it waits for the session to end, then says so");
    assert_eq!(sleeper.until_closed(), ["57P01"]);
    let gone = format!("select count(*) from pg_stat_activity where pid = {}", sleeper.pid());
    eventually(&s, &gone, "0");

    let out = s.psql_as("postgres", "select pg_cancel_backend(pg_backend_pid())");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("canceling statement due to user request")
    );
    let out = s.psql_as("postgres", "select pg_terminate_backend(pg_backend_pid())");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("terminating connection due to administrator command"), "{err}");
}

#[test]
fn missing_pids_and_bad_timeouts() {
    let s = TestServer::start();
    let out = s.psql_as("postgres", "select pg_cancel_backend(2), pg_terminate_backend(2, 10)");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "f|f");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("PID 2 is not a PostgreSQL backend process").count(), 2, "{err}");
    let out = s.psql_as("postgres", "select pg_terminate_backend(pg_backend_pid(), -1)");
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"timeout\" must not be negative"));
}

/// Starts `select pg_sleep(60)` in a psql session of `role`; returns the
/// thread (which yields psql's stderr) and the session's pid once
/// pg_stat_activity shows it.
fn sleep_as(s: &TestServer, role: &str) -> (std::thread::JoinHandle<String>, String) {
    let sleeps = std::thread::spawn({
        let (port, role) = (s.port, role.to_string());
        move || {
            let out = std::process::Command::new("psql")
                .args(["-X", "-h", "127.0.0.1", "-p", &port.to_string(), "-U", &role])
                .args(["-d", "postgres", "-Atc", "select pg_sleep(60)"])
                .env_remove("PGPASSWORD")
                .output()
                .expect("psql runs");
            String::from_utf8_lossy(&out.stderr).into_owned()
        }
    });
    let find = format!(
        "select pid from pg_stat_activity where usename = '{role}' and query like '%pg_sleep%'"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        let p = s.query(&find);
        if !p.is_empty() {
            break p;
        }
        assert!(Instant::now() < deadline, "{role}'s session never showed up");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(SETTLE);
    (sleeps, pid)
}

/// Membership passes the right to watch and signal a role's sessions on,
/// and so do pg_read_all_stats and pg_signal_backend.
#[test]
fn members_and_predefined_roles_may_watch_and_signal() {
    let s = TestServer::start();
    s.query("create role app_b login; create role app_a login; create role ops login");
    let (b_sleeps, pid) = sleep_as(&s, "app_b");
    let query = format!("select query from pg_stat_activity where pid = {pid}");
    let out = s.psql_as("ops", &query);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "<insufficient privilege>");
    s.query("grant pg_read_all_stats to ops");
    let out = s.psql_as("ops", &query);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "select pg_sleep(60)");
    let cancel = format!("select pg_cancel_backend({pid})");
    let out = s.psql_as("app_a", &cancel);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a member of the role whose query is being canceled"), "{err}");
    s.query("grant app_b to app_a");
    let out = s.psql_as("app_a", &cancel);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "t");
    let err = b_sleeps.join().expect("the psql thread");
    assert!(err.contains("canceling statement due to user request"), "{err}");

    let (b_sleeps, pid) = sleep_as(&s, "app_b");
    let cancel = format!("select pg_cancel_backend({pid})");
    let out = s.psql_as("ops", &cancel);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a member of the role whose query is being canceled"), "{err}");
    s.query("grant pg_signal_backend to ops");
    let out = s.psql_as("ops", &cancel);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "t");
    let err = b_sleeps.join().expect("the psql thread");
    assert!(err.contains("canceling statement due to user request"), "{err}");
}

#[test]
fn only_the_owner_or_a_superuser_may_signal() {
    let s = TestServer::start();
    s.query("create role app_a login; create role app_b login");
    let mut su = s.send("select pg_sleep(60)");
    std::thread::sleep(SETTLE);
    let pid = su.pid();
    let out = s.psql_as("app_a", &format!("select pg_cancel_backend({pid})"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a superuser to cancel superuser query"), "{err}");
    let out = s.psql_as("app_a", &format!("select pg_terminate_backend({pid})"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a superuser to terminate superuser process"), "{err}");
    let out = s.psql_as("app_a", &format!("select query from pg_stat_activity where pid = {pid}"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "<insufficient privilege>");
    su.cancel(s.port);
    assert_eq!(su.until_ready(), ["57014"]);

    // Another ordinary role's session: not without membership...
    let (b_sleeps, pid) = sleep_as(&s, "app_b");
    let out = s.psql_as("app_a", &format!("select pg_cancel_backend({pid})"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a member of the role whose query is being canceled"), "{err}");
    // ...but its own role may, and so may a superuser.
    let out = s.psql_as("app_b", &format!("select pg_cancel_backend({pid})"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "t");
    let err = b_sleeps.join().expect("the psql thread");
    assert!(err.contains("canceling statement due to user request"), "{err}");
}

#[test]
fn sleeps_wait_once_per_call() {
    let s = TestServer::start();
    let started = Instant::now();
    let got = s.query(
        "select n, pg_sleep(0.1) is null, pg_sleep_for('10 milliseconds') is null \
         from generate_series(1, 3) n",
    );
    assert_eq!(got, "1|f|f\n2|f|f\n3|f|f");
    assert!(started.elapsed() >= Duration::from_millis(330), "each call slept");
    assert_eq!(s.query("select pg_sleep(-1), pg_sleep_until(now() - interval '1 day')"), "|");
}
